/* SPDX-License-Identifier: ISC */
/*
 * loadproto.h - loadgen's wire protocol between a sender and a sink
 * (loadgen(1)).  All fields big-endian.
 *
 * Every datagram a sender sends starts with a 16-byte header:
 *
 *     0      4      8              16
 *     magic  run    seq (u64)      ... payload to --size
 *
 * magic LOAD_MAGIC_DATA for load (seq numbers them from 0), or
 * LOAD_MAGIC_FIN once at the end (seq is then how many were sent, so
 * that the sink counts the tail's losses too).  run is the sender's
 * random run number, which keeps senders apart at one sink.
 *
 * Every LOAD_REPORT_NS, and at a FIN, the sink sends each sender a
 * LOAD_REPORT_LEN-byte report of its cumulative counters for that run:
 *
 *     0      4      8            16          24            32          40..48
 *     magic  run    elapsed ns   bytes       packets       lost        zero
 *
 * Nothing here does I/O; tests/unit/loadproto.c checks both directions.
 */
#ifndef NTPX_LOADPROTO_H
#define NTPX_LOADPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "opt_units.h"

#define LOAD_HDR_LEN		16
#define LOAD_MAGIC_DATA		0x4e54584cu	/* "NTXL" */
#define LOAD_MAGIC_FIN		0x4e545846u	/* "NTXF": the sender is done */
#define LOAD_MAGIC_REPORT	0x4e545852u	/* "NTXR": sink -> sender */
#define LOAD_REPORT_LEN		48
#define LOAD_REPORT_NS		(50 * NTPX_NS_PER_MS)	/* the sink reports every 50 ms */

enum load_kind {
	LOAD_FOREIGN = 0,	/* not a load datagram */
	LOAD_DATA,
	LOAD_FIN,
};

struct load_hdr {
	enum load_kind kind;
	uint32_t run;
	uint64_t seq;		/* DATA: its number; FIN: how many were sent */
};

/* The sink's cumulative counters for one sender's run. */
struct load_report {
	uint32_t run;
	uint64_t elapsed;	/* ns since the run's first datagram, at the sink */
	uint64_t bytes;		/* payload bytes received */
	uint64_t packets;
	uint64_t lost;		/* sequence numbers never seen */
};

/* Writes the header at @p (LOAD_HDR_LEN bytes); @kind DATA or FIN. */
void load_hdr_put(void *p, enum load_kind kind, uint32_t run, uint64_t seq);
/* Reads the header of the @len-byte datagram at @p; LOAD_FOREIGN when it
   is too short or its magic is not ours. */
enum load_kind load_hdr_get(const void *p, size_t len, struct load_hdr *h);

/* Writes @r as a report at @p (LOAD_REPORT_LEN bytes). */
void load_report_put(void *p, const struct load_report *r);
/* Reads a report of @len bytes at @p: 0, or -1 when it is not one. */
int load_report_get(const void *p, size_t len, struct load_report *r);

#endif
