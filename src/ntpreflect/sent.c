/* SPDX-License-Identifier: ISC */
/*
 * The replies (and ignored datagrams) whose log lines wait for their send
 * stamps.  The server's stamps of a reply come after it went, so each
 * datagram's entry waits in a short queue (r->q) until they have come,
 * or until the queue is half full or the server stops; then the stamps go
 * into the client's slot for its next, interleaved, reply (reply.c) and
 * the line into the log (output.c).
 *
 * The kernel's send stamps are read from the socket's error queue, and
 * that read is what interleaved mode costs beyond basic: so it is done
 * for many replies at once.  After a burst the queue finishes only the
 * entries whose stamps an earlier read already kept (TRANSPORT_TX_PEEK);
 * once it is half full, one read (a recvmmsg of the error queue) takes
 * the stamps of all of them, each to its own entry by the send's id
 * (SOF_TIMESTAMPING_OPT_ID: transport_tx_stamps()).  A client that asks
 * again before then reads its own at once (reply.c's client_stamps), and
 * a server with nothing to do reads them after REFLECT_LINGER_NS idle
 * (serve.c), so that the log's lines do not wait for the next request.
 *
 * Interleaved replies go out a burst at a time (one sendmmsg, where the
 * backend batches: transport_send_flush()): their transmit field is an
 * earlier reply's t3k, which the send does not change, so nothing they
 * carry is late by the batch.  Their entries learn at the flush whether
 * they went and when (t3, read just before the batch was submitted).
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

/*
 * Finishes what is complete (REFLECT_FLUSH_KEPT: by the stamps already
 * read; REFLECT_FLUSH_READ: reading the error queue once when the head's
 * are not), or everything (REFLECT_FLUSH_ALL, at exit, waiting a little
 * for stamps due).  Whatever the mode, a queue half full reads the error
 * queue and finishes its entries, stamped or not.
 */
void reflect_sent_flush(struct reflector *r, enum reflect_flush how)
{
	while (r->n) {
		struct transport_stamps ts;
		int64_t deadline = how == REFLECT_FLUSH_ALL ?
				   clock_monotonic_ns() + TRANSPORT_TX_WAIT_NS :
				   how == REFLECT_FLUSH_READ ? 0 : TRANSPORT_TX_PEEK;
		int done = sent_stamps(r, &ts, deadline);

		if (!done && how == REFLECT_FLUSH_KEPT && r->n >= REFLECT_SENT_QUEUE / 2)
			done = sent_stamps(r, &ts, 0);
		/* Not yet: its stamps may still be on their way. */
		if (how != REFLECT_FLUSH_ALL && !done && r->n < REFLECT_SENT_QUEUE / 2)
			return;
		sent_finish(r, &ts);
	}
}

/*
 * The replies waiting in the backend's batch (transport_send_flush()):
 * sent now; each entry learns whether its reply went, and its t3.
 */
void reflect_send_flush(struct reflector *r)
{
	struct transport_sent res[REFLECT_AHEAD];
	int n, i;

	if (!r->nbatch)
		return;
	n = transport_send_flush(r->t, r->clk, res, r->nbatch);
	for (i = 0; i < (int)r->nbatch; i++) {
		struct reflect_sent *e = &r->q[r->batch[i]];
		struct xleave_client *c = e->c;
		/* The slot may have gone to another client meanwhile. */
		int mine = c && c->tx_id == e->txid && c->addrlen == e->keylen &&
			   memcmp(c->addr, e->key, e->keylen) == 0;

		if (i < n && res[i].rc == 0) {
			e->st.at[XEF_T3] = res[i].tx_at;
			e->st.have |= 1u << XEF_T3;
			if (mine) {
				c->last.at[XEF_T3] = res[i].tx_at;
				c->last.have |= 1u << XEF_T3;
			}
			continue;
		}
		/* Not sent: counted as reply.c counts a send that fails. */
		r->answered--;
		r->interleaved--;
		r->send_errors++;
		e->status = "error";
		e->want = 0;
		if (mine) {
			c->rec_sent = 0;
			c->tx_wanted = 0;
		}
		e->c = NULL;
	}
	r->nbatch = 0;
}

struct reflect_sent *reflect_sent_push(struct reflector *r)
{
	struct reflect_sent *e;

	if (r->n == REFLECT_SENT_QUEUE) {
		struct transport_stamps ts;

		reflect_send_flush(r);	/* never finish a reply not yet sent */

		sent_stamps(r, &ts, 0);
		sent_finish(r, &ts);
	}
	e = &r->q[(r->head + r->n++) % REFLECT_SENT_QUEUE];
	memset(e, 0, sizeof(*e));
	e->nts_open = e->nts_seal = -1;
	return e;
}
