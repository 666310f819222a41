/* SPDX-License-Identifier: ISC */
/*
 * ib_wire_private.h - the sender of a datagram as the server's
 * address-handle cache keys it, read from the header in front of the
 * payload (ib_wire.c).  The bottom of the ib transport's files
 * (lib/ib_private.h has their map).
 */
#ifndef NTPX_IB_WIRE_PRIVATE_H
#define NTPX_IB_WIRE_PRIVATE_H

#include <stdint.h>

#include <infiniband/verbs.h>

/*
 * Where a datagram came from and went to, as far as an address handle
 * made from it cares: what ibv_init_ah_from_wc() derives the handle's
 * attributes from.
 */
struct ib_key {
	uint16_t slid;
	uint8_t sl;
	uint8_t path_bits;
	uint8_t global;		/* a GRH: the fields below are valid */
	uint8_t gid_type;	/* IBV_GID_TYPE_*: IB or RoCE v1 share a header */
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;	/* IPv6/GRH only */
	uint8_t sgid[16];	/* the sender's: the handle's destination */
	uint8_t dgid[16];	/* ours it was sent to: the handle's source GID */
	uint8_t port;		/* the HCA port it came in on */
};

/*
 * The sender of @wc as a cache key, read from the IB_GRH_LEN bytes at
 * @grh without a system call.  0, or -1: a header no handle can be made
 * from.  Pure: reads @wc and the 40 bytes only.
 */
int ib_key_from_wc(const struct ibv_wc *wc, const unsigned char *grh, struct ib_key *k);

#endif
