/* SPDX-License-Identifier: ISC */
/*
 * --xleave: interleaved mode (RFC 9769, lib/xleave.h) seen from the
 * client.  The reply to request n carries the server's better transmit
 * stamp of reply n-1, so the record of exchange n-1 waits in p->pending
 * and is written only when reply n has come, with t2k t3q t3k from the
 * server.
 */
#include <stdint.h>

#include "out.h"
#include "record.h"
#include "stamp.h"
#include "xleave.h"
#include "ntpprobe.h"

/*
 * Completes the record of the previous exchange from an interleaved
 * reply: the server's stamps from its field, else its transmit timestamp
 * as t3k (the better stamp RFC 9769 has the server send).
 */
static void xleave_complete(struct probe_out *prev, const struct xleave_reply *xr)
{
	struct record_exchange *x = &prev->x;

	if (xr->has_ef) {
		const struct xleave_ef *e = &xr->ef;

		if (e->have & 1u << XEF_T2) {
			x->t[1] = e->at[XEF_T2];
			x->have |= 1u << 1;
		}
		if (e->have & 1u << XEF_T3) {
			x->t[2] = e->at[XEF_T3];
			x->have |= 1u << 2;
		}
		if (e->have & 1u << XEF_T2K)
			prev->s.v[STAMP_T2K] = e->at[XEF_T2K];
		if (e->have & 1u << XEF_T3Q)
			prev->s.v[STAMP_T3Q] = e->at[XEF_T3Q];
		if (e->have & 1u << XEF_T2H)
			prev->s.v[STAMP_T2H] = e->at[XEF_T2H];
		if (e->have & 1u << XEF_T3H)
			prev->s.v[STAMP_T3H] = e->at[XEF_T3H];
		if (e->have & 1u << XEF_T3K)
			prev->s.v[STAMP_T3K] = e->at[XEF_T3K];
		return;
	}
	prev->s.v[STAMP_T3K] = xr->xmt;
	if (!(x->have & 1u << 2)) {
		x->t[2] = xr->xmt;
		x->have |= 1u << 2;
	}
}
/*
 * Writes what exchange @o and its reply @xr complete: the pending record,
 * then @o itself unless it must wait for the next reply.  Returns -1 when
 * the run must end (probe_record).
 */
int probe_xleave_record(struct probe *p, struct probe_out *o, const struct xleave_reply *xr)
{
	/* The previous exchange is complete now. */
	if (xr->interleaved) {
		p->interleaved++;
		if (p->pending.x.seq)
			xleave_complete(&p->pending, xr);
	}
	if (p->pending.x.seq && probe_record(p, &p->pending))
		return -1;
	p->pending.x.seq = 0;
	if ((o->x.status == RECORD_OK || o->x.status == RECORD_UNSYNCED) && !p->kissed_off)
		p->pending = *o;
	else if (probe_record(p, o))
		return -1;
	return 0;
}

/*
 * At the end of the run: the last interleaved record waits for a reply
 * that would carry its transmit stamp, so one more request (number @seq)
 * fetches it; then the record is written.
 */
void probe_xleave_finish(struct probe *p, uint64_t seq)
{
	if (p->pending.x.seq && !(p->pending.x.have & 1u << 2) && !probe_stopping &&
	    p->out == OUT_OK && !p->kissed_off && !p->failed) {
		struct probe_out o;
		struct xleave_reply xr;

		probe_exchange(p, seq, &o, &xr);
		if (xr.interleaved) {
			p->interleaved++;
			xleave_complete(&p->pending, &xr);
		}
	}
	if (p->pending.x.seq && p->out == OUT_OK && !p->failed)
		probe_record(p, &p->pending);
}
