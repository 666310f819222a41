/* SPDX-License-Identifier: ISC */
/*
 * ntpx_xdp_meta.h - the receive stamp the XDP program (ntpx_xdp.bpf.c)
 * writes in the metadata area before a frame it redirects, and
 * lib/port_xdp.c reads: one layout and one magic number for both sides.
 */
#ifndef NTPX_XDP_META_H
#define NTPX_XDP_META_H

#include <linux/types.h>

struct ntpx_meta {
	__u64 magic;	/* NTPX_META_MAGIC when the stamp is there */
	__u64 mono_ns;	/* when the program saw the frame, CLOCK_MONOTONIC */
};

#define NTPX_META_MAGIC	0x4e54505853544d50ULL	/* "NTPXSTMP" */

#endif
