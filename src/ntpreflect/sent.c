/* SPDX-License-Identifier: ISC */
/*
 * The replies (and ignored datagrams) whose log lines wait for their send
 * stamps.  The server's stamps of a reply come after it went, so each
 * datagram's entry waits in a short queue (r->q) until they have come,
 * or until the queue is half full or the server stops; then the stamps go
 * into the client's slot for its next, interleaved, reply (reply.c) and
 * the line into the log (output.c).
 */
#include <string.h>

#include "clock.h"
#include "transport.h"
#include "xleave.h"
#include "ntpreflect.h"

/* The send stamps in @ts that came into @e: t3q t3k t3h. */
void reflect_sent_ef_tx(struct xleave_ef *e, const struct transport_stamps *ts)
{
	if (ts->at[TRANSPORT_LAYER_Q] != TRANSPORT_NO_STAMP) {
		e->at[XEF_T3Q] = ts->at[TRANSPORT_LAYER_Q];
		e->have |= 1u << XEF_T3Q;
	}
	if (ts->at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP) {
		e->at[XEF_T3K] = ts->at[TRANSPORT_LAYER_K];
		e->have |= 1u << XEF_T3K;
	}
	if (ts->at[TRANSPORT_LAYER_H] != TRANSPORT_NO_STAMP) {
		e->at[XEF_T3H] = ts->at[TRANSPORT_LAYER_H];
		e->have |= 1u << XEF_T3H;
	}
}

/*
 * Takes the head of the queue, whose send stamps (when it wants them)
 * are @ts: its stamps into the client's slot, its line into the log
 * (output.c).
 */
static void sent_finish(struct reflector *r, const struct transport_stamps *ts)
{
	struct reflect_sent *e = &r->q[r->head];

	if (e->want) {
		reflect_sent_ef_tx(&e->st, ts);
		/* The slot may have gone to another client meanwhile. */
		if (e->c && e->c->tx_wanted && e->c->tx_id == e->txid &&
		    e->c->addrlen == e->keylen && memcmp(e->c->addr, e->key, e->keylen) == 0) {
			e->c->last = e->st;
			e->c->tx_wanted = 0;
		}
	}
	reflect_log_line(r, e);
	r->head = (r->head + 1) % REFLECT_SENT_QUEUE;
	r->n--;
}

/*
 * The head's send stamps into @ts, waiting until @deadline (0: not at
 * all) where it wants them; 1 when all came or none is wanted.
 */
static int sent_stamps(struct reflector *r, struct transport_stamps *ts, int64_t deadline)
{
	const struct reflect_sent *e = &r->q[r->head];

	if (!e->want)
		return 1;
	return transport_tx_stamps(r->t, e->txid, r->clk, ts, deadline);
}

/* Finishes what is complete, or everything (@all, at exit). */
void reflect_sent_flush(struct reflector *r, int all)
{
	while (r->n) {
		struct transport_stamps ts;
		int done = sent_stamps(r, &ts, all ? clock_monotonic_ns() + TRANSPORT_TX_WAIT_NS : 0);

		/* Not yet: its stamps may still be on their way. */
		if (!all && !done && r->n < REFLECT_SENT_QUEUE / 2)
			return;
		sent_finish(r, &ts);
	}
}

struct reflect_sent *reflect_sent_push(struct reflector *r)
{
	struct reflect_sent *e;

	if (r->n == REFLECT_SENT_QUEUE) {
		struct transport_stamps ts;

		sent_stamps(r, &ts, 0);
		sent_finish(r, &ts);
	}
	e = &r->q[(r->head + r->n++) % REFLECT_SENT_QUEUE];
	memset(e, 0, sizeof(*e));
	e->nts_open = e->nts_seal = -1;
	return e;
}
