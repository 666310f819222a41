/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect's replies.  A reply is never larger than its request (48
 * bytes: the header only, or the header and the ntpx stamp field when
 * the request carried one of the same size), so the server cannot be used
 * to amplify traffic.
 *
 *   T2  read immediately after the request's receive returned (backend)
 *   T3  read immediately before the reply is submitted (backend), and
 *       written into the reply's transmit timestamp
 *
 * A basic reply goes out alone, at once, so that nothing comes between
 * its T3 and its submission.  An interleaved reply's transmit field is
 * an earlier reply's stamp, so it waits for the others answered in the
 * same burst and goes with them (TRANSPORT_SEND_MORE, sent.c's
 * reflect_send_flush): its t3 is then read just before the batch goes.
 *
 * Interleaved mode (RFC 9769, lib/xleave.h): a client whose request names
 * our last reply to it gets the better transmit stamp of that reply (the
 * kernel's, where the path stamps) instead of T3.  The state behind it is
 * one slot per client address in a table of --clients slots; at the bound
 * the least recently seen client of a bucket of four loses its slot and
 * gets a basic reply next.
 *
 * NTS (nts.c): the authenticator covers the transmit timestamp, so in
 * basic mode T3 is read before the reply is sealed and goes out early by
 * the sealing time (the log's t3 is still the stamp just before the
 * submit, and nts_seal the time between); in interleaved mode the
 * transmit stamp is the previous reply's, taken after its sealing.  A
 * reply with NTS is no longer than its request either: it carries as
 * many new cookies as the request made room for.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "access.h"
#include "clock.h"
#include "ntp.h"
#include "opt.h"
#include "transport.h"
#include "xleave.h"
#include "ntpreflect.h"

/*
 * The precision we announce: log2 of the time one clock reading takes,
 * rounded up (RFC 5905: "the precision of the system clock").
 */
static int8_t measure_precision(struct clock *clk)
{
	int64_t best = INT64_MAX;
	int i;

	for (i = 0; i < 64; i++) {
		int64_t a = clock_now(clk), b = clock_now(clk);

		if (b > a && b - a < best)
			best = b - a;
	}
	if (best == INT64_MAX)
		best = 1;
	return (int8_t)ceil(log2(ntpx_ns_to_sec((double)best)));
}

/* What every reply says the same way (r->reply). */
void reflect_reply_init(struct reflector *r)
{
	int8_t precision = measure_precision(r->clk);

	/* A local reference (--stratum, --refid): no delay to it, the
	   dispersion of one clock reading; else what the kernel says
	   (reflect_sync). */
	r->disp_min = ntp_short_from_ns((int64_t)ldexp((double)NTPX_NS_PER_SEC, precision));
	r->reply = (struct ntp_packet){
		.leap = NTP_LEAP_NONE,
		.mode = NTP_MODE_SERVER,
		.stratum = (uint8_t)r->cfg->stratum,
		.precision = precision,
		.root_delay = 0,
		.root_disp = r->disp_min,
		.refid = r->cfg->refid,
	};
	reflect_sync(r, clock_realtime_ns());
}

/*
 * Without a local reference, the replies say what the kernel says of the
 * host's clock (adjtimex with modes 0: read only), read again once a
 * second of T2 has passed: while it is unsynchronised, leap 3 and stratum
 * 16, as chronyd and ntpd answer then, so that no client takes its time;
 * synchronised, the kernel's leap indicator, REFLECT_STRATUM_SYNCED, and
 * the kernel's maximum error as the root dispersion (a daemon sets it to
 * its root distance; the kernel grows it while nobody does).
 */
void reflect_sync(struct reflector *r, int64_t now)
{
	struct clock_sync s;

	if (r->cfg->local || (r->sync_at && now >= r->sync_at &&
			      now - r->sync_at < NTPX_NS_PER_SEC))
		return;
	r->sync_at = now ? now : 1;
	if (clock_sync_read(&s))	/* unreadable: say nothing of our time */
		s = (struct clock_sync){ .synced = 0, .maxerror_ns = 16 * NTPX_NS_PER_SEC };
	r->reply.leap = s.synced ? (uint8_t)s.leap : NTP_LEAP_ALARM;
	r->reply.stratum = s.synced ? REFLECT_STRATUM_SYNCED : NTP_STRATUM_UNSYNC;
	r->reply.root_disp = ntp_short_from_ns(s.maxerror_ns);
	if (r->reply.root_disp < r->disp_min)
		r->reply.root_disp = r->disp_min;
}

/* What the replies say of the clock, for a person: the startup line. */
const char *reflect_sync_str(const struct reflector *r, char *buf, size_t len)
{
	char refid[5] = "";
	int i;

	for (i = 0; i < 4; i++)
		refid[i] = (char)(r->cfg->refid >> (24 - 8 * i));
	if (r->cfg->local)
		snprintf(buf, len, "a local reference at stratum %u, refid %s, whatever the host's "
			 "clock", r->reply.stratum, refid);
	else if (r->reply.leap == NTP_LEAP_ALARM)
		snprintf(buf, len, "unsynchronised as the kernel says: leap 3, stratum 16; "
			 "--stratum N serves a local reference");
	else
		snprintf(buf, len, "synchronised as the kernel says: stratum %u, leap %u, root "
			 "dispersion %.3f ms", r->reply.stratum, r->reply.leap,
			 (double)r->reply.root_disp * 1e3 / 65536.0);
	return buf;
}

/* The receive stamps in @rx that came into @e: t2k t2h. */
static void ef_rx(struct xleave_ef *e, const struct transport_stamps *rx)
{
	if (rx->at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP) {
		e->at[XEF_T2K] = rx->at[TRANSPORT_LAYER_K];
		e->have |= 1u << XEF_T2K;
	}
	if (rx->at[TRANSPORT_LAYER_H] != TRANSPORT_NO_STAMP) {
		e->at[XEF_T2H] = rx->at[TRANSPORT_LAYER_H];
		e->have |= 1u << XEF_T2H;
	}
}

/*
 * The send stamps of the client's last reply: those that have come.  The
 * request naming that reply was sent after the reply arrived, so they
 * normally all have; one that never comes (a NIC that missed a hardware
 * stamp) must not keep the client in basic mode.
 */
static void client_stamps(struct transport *t, struct clock *clk, struct xleave_client *c)
{
	struct transport_stamps ts;

	transport_tx_stamps(t, c->tx_id, clk, &ts, 0);
	reflect_sent_ef_tx(&c->last, &ts);
	c->tx_wanted = 0;
}

/*
 * Over --ratelimit: RFC 5905 7.4, stratum 0, the code in refid; the poll
 * says how often this client may ask: 1/RATE.
 */
void reflect_kiss(struct reflector *r, struct transport_dgram *d, const struct ntp_packet *q)
{
	struct ntp_packet k = r->reply;

	k.leap = NTP_LEAP_ALARM;
	k.stratum = NTP_STRATUM_KOD;
	k.refid = NTP_KISS_RATE;
	k.version = q->version;
	k.poll = ratelimit_poll(r->rl);
	k.ref = 0;
	k.org = q->xmt;
	k.rec = ntp_ts_from_ns(d->rx_at);
	/* In the request's buffer: it is decoded into @q. */
	ntp_encode(&k, d->buf);
	d->len = NTP_HEADER_LEN;
	if (transport_send(r->t, d, r->clk, TRANSPORT_STAMP_XMT) < 0)
		r->send_errors++;
}

/*
 * A request that passed reflect_admit(): answered in @d's buffer, basic
 * or interleaved, and queued for the log (output.c).
 */
void reflect_answer(struct reflector *rf, struct transport_dgram *d, const struct ntp_packet *q)
{
	unsigned char *buf = d->buf;
	size_t n = d->len;
	const struct transport_stamps *rx = &d->rx;
	int64_t t2 = d->rx_at;
	struct xleave_client *cl = xleave_client_get(rf->xt, d->key, d->keylen);
	struct xleave_ef ef;
	int64_t t2best;
	int want_ef = xleave_ef_find(buf, n, &ef);
	int xl, want_tx, flags;
	unsigned layers;
	size_t len = NTP_HEADER_LEN;
	struct ntp_packet r;
	struct reflect_sent *e;
	int64_t seal = -1;
	int rc, queued, nts = rf->nts_req;

	/* Between T2 and T3: only what depends on the request. */
	t2best = rx->at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP ?
		 rx->at[TRANSPORT_LAYER_K] : t2;
	r = rf->reply;
	r.version = q->version;
	r.poll = q->poll;
	/* Updated "now": the last second boundary before T2. */
	r.ref = ntp_ts_from_ns(t2 - t2 % NTPX_NS_PER_SEC);
	/* Interleaved when the request names our last reply to this
	   address, the stamps of that reply are ours, and its receive
	   field is not its transmit field. */
	if (cl->tx_wanted && q->org == cl->rec_sent)
		client_stamps(rf->t, rf->clk, cl);
	xl = cl->rec_sent && q->org == cl->rec_sent && q->rec != q->xmt &&
	     !cl->tx_wanted && (cl->last.have & 1u << XEF_T3);
	if (xl) {
		const struct xleave_ef *l = &cl->last;

		r.org = q->rec;
		r.rec = ntp_ts_from_ns(t2best);
		r.xmt = ntp_ts_from_ns(l->have & 1u << XEF_T3K ? l->at[XEF_T3K] :
				       l->at[XEF_T3]);
		rf->interleaved++;
	} else {
		r.org = q->xmt;
		r.rec = ntp_ts_from_ns(t2);
		/* NTS: T3 now, before sealing; the backend cannot write it. */
		if (nts)
			r.xmt = ntp_ts_from_ns(clock_now(rf->clk));
	}
	ntp_encode(&r, buf);
	if (want_ef) {
		struct xleave_ef now = { .have = 1u << XEF_T2 };

		now.at[XEF_T2] = t2;
		ef_rx(&now, rx);
		xleave_ef_put(buf + NTP_HEADER_LEN, xl ? &cl->last : &now);
		len += XLEAVE_EF_LEN;
	}
	/* No longer than the request: the cookies it made room for. */
	if (nts && nts_server_reply(rf->nts, &rf->nreq, buf, n, &len, &seal) < 0) {
		rf->send_errors++;
		return;
	}
	/* The reply's own send stamps cost the kernel and us a little, a
	   message on the error queue for each layer: every layer for the
	   log and for a client that sends the ntpx field, which carry
	   them all; for any other client that looks interleaved (it names
	   a reply, or sends a receive field of its own) only the one its
	   next transmit field takes, t3k. */
	if (rf->log || want_ef)
		layers = rf->tx_layers;
	else if (q->org || (q->rec && q->rec != q->xmt))
		layers = rf->tx_layers & 1u << TRANSPORT_LAYER_K;
	else
		layers = 0;
	want_tx = layers != 0;
	flags = xl || nts ? 0 : TRANSPORT_STAMP_XMT;
	if (want_tx)
		flags |= TRANSPORT_STAMP_SEND | TRANSPORT_STAMP_ONLY(layers);
	if (xl) {
		/* Room in the batch, and in the queue for its entry
		   without finishing one whose reply waits. */
		if (rf->nbatch == REFLECT_AHEAD || rf->n == REFLECT_SENT_QUEUE)
			reflect_send_flush(rf);
		flags |= TRANSPORT_SEND_MORE;
	}
	d->len = len;
	rc = transport_send(rf->t, d, rf->clk, flags);
	e = reflect_sent_push(rf);
	queued = rc == TRANSPORT_QUEUED;
	if (queued) {
		rf->batch[rf->nbatch++] = (rf->head + rf->n - 1) % REFLECT_SENT_QUEUE;
		rc = 0;
	}
	e->seq = rf->seq;
	e->peer = d->peer;
	e->version = q->version;
	e->mode = xl ? "interleaved" : "basic";
	if (nts) {
		e->nts_open = rf->nts_open;
		e->nts_seal = seal;
	}
	e->st.at[XEF_T2] = t2;
	e->st.have = 1u << XEF_T2;
	ef_rx(&e->st, rx);
	if (rc < 0) {
		rf->send_errors++;
		e->status = "error";
		cl->rec_sent = 0;
	} else if (rc == TRANSPORT_DROPPED) {	/* lossinject */
		rf->dropped++;
		e->status = "dropped";
		cl->rec_sent = 0;
	} else {
		rf->answered++;
		e->status = "ok";
		e->st.at[XEF_T3] = d->tx_at;
		e->st.have |= 1u << XEF_T3;
		/* The client's state: this reply, its stamps to come. */
		cl->rec_sent = r.rec;
		cl->last = e->st;
		cl->tx_id = d->tx_id;
		cl->tx_wanted = want_tx;
		e->c = cl;
		e->keylen = cl->addrlen;
		memcpy(e->key, cl->addr, cl->addrlen);
		e->txid = cl->tx_id;
		e->want = want_tx;
		/* Not sent yet: no t3 until the batch goes. */
		if (queued) {
			e->st.have &= ~(1u << XEF_T3);
			cl->last.have &= ~(1u << XEF_T3);
		}
	}
}
