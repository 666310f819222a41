/* SPDX-License-Identifier: ISC */
/*
 * One NTP exchange of ntpprobe: a request out, the reply that answers it
 * in, and the stamps the layers below took of both.
 *
 * The request's transmit timestamp is a random nonce, not T1 (as chrony's
 * client does): T1 is kept here, so the server's reply is matched by its
 * origin timestamp and nothing on the wire tells an observer our clock.
 *
 *   T1  read immediately before the request is submitted (in the backend)
 *   T2  the server's receive timestamp, from the reply
 *   T3  the server's transmit timestamp, from the reply
 *   T4  read immediately after the reply's receive returned (in the backend)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "log.h"
#include "nts_client.h"
#include "ntp.h"
#include "opt.h"
#include "record.h"
#include "stamp.h"
#include "transport.h"
#include "xleave.h"
#include "ntpprobe.h"

#define RECV_CAP	2048
/* A request with NTS: the header, the ntpx field, an identifier, a
   cookie, seven placeholders and the authenticator, cookies of up to
   NTS_COOKIE_MAX bytes. */
#define SEND_CAP	(NTP_HEADER_LEN + XLEAVE_EF_LEN + 36 + 8 * (4 + NTS_COOKIE_MAX) + 40)

static uint64_t nonce(void)
{
	uint64_t v = 0;

	/* getrandom() of 8 bytes is never cut short (under 256 bytes);
	   zero is refused because RFC 5905 reads it as "no timestamp". */
	do
		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			ntpx_die(NTPX_EXIT_FAIL, "getrandom: %s", strerror(errno));
	while (v == 0);
	return v;
}

/*
 * What a reply that answers our request says about the server: ok, or why
 * its timestamps must not be used (RFC 5905 section 8, the client checks;
 * lib/ntp.h ntp_judge).  A kiss code is kept in p->kiss for the schedule.
 */
static enum record_status judge(struct probe *p, const struct ntp_packet *r)
{
	switch (ntp_judge(r)) {
	case NTP_VERDICT_KISS:
		ntp_kiss_code(r, p->kiss);
		p->kiss_poll = r->poll;
		return RECORD_KOD;
	case NTP_VERDICT_UNSYNCED:
		return RECORD_UNSYNCED;
	case NTP_VERDICT_BOGUS:
		return RECORD_BOGUS;
	default:
		return RECORD_OK;
	}
}

/*
 * A reply whose origin names one of the last PROBE_LATE_SLOTS requests
 * that timed out (its nonce): late, and counted once.  A slow reply can
 * come in the middle of a later exchange, many later at -i 1us; it is no
 * answer to that one, and no stranger either.  The newest first: a late
 * reply is most often the last request's.
 */
static int late_reply(struct probe *p, uint64_t org)
{
	unsigned i, k;

	for (i = 1; org && i <= PROBE_LATE_SLOTS; i++) {
		k = (p->timed_out_next - i) % PROBE_LATE_SLOTS;
		if (p->timed_out[k] == org) {
			p->timed_out[k] = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * The path answers slower than the interval (or the timeout) lets it:
 * said once, with what was seen, so that a flood at -i 1us does not pass
 * for one request every microsecond.  Once PROBE_PACE_SEEN times: three
 * exchanges in a row slower than the interval, or three late replies; a
 * single slow one is a hiccup of a loaded host, not the path.
 */
#define PROBE_PACE_SEEN	3

/* @ns as a person reads it: "1.000 us", "2.500 ms", "1.000 s". */
static const char *dur_str(char *buf, size_t len, int64_t ns)
{
	if (ns < NTPX_NS_PER_MS)
		snprintf(buf, len, "%.3f us", (double)ns / NTPX_NS_PER_US);
	else if (ns < NTPX_NS_PER_SEC)
		snprintf(buf, len, "%.3f ms", (double)ns / NTPX_NS_PER_MS);
	else
		snprintf(buf, len, "%.3f s", (double)ns / NTPX_NS_PER_SEC);
	return buf;
}

static void paced(struct probe *p, int64_t rtt)
{
	const struct probe_config *c = p->cfg;
	char a[32], b[32];

	if (p->paced || (rtt >= 0 ? ++p->slow_run : p->late) < PROBE_PACE_SEEN)
		return;
	p->paced = 1;
	if (rtt >= 0)
		ntpx_err("%s: an exchange took %s, longer than the interval (%s): requests go "
			 "out back to back, slower than -i asks", c->ep.url,
			 dur_str(a, sizeof(a), rtt), dur_str(b, sizeof(b), c->interval));
	else
		ntpx_err("%s: a reply came after its timeout (%s%s), which the path's round trip "
			 "exceeds: such replies are counted late, never used", c->ep.url,
			 dur_str(a, sizeof(a), c->timeout),
			 !c->timeout_given && c->timeout == c->interval ? ", the interval's" : "");
}

/* What the reply @r, received at @t4, said of its server. */
static void from_reply(struct probe_out *o, const struct ntp_packet *r, int64_t t4)
{
	struct record_exchange *x = &o->x;

	o->replied = 1;
	o->leap = r->leap;
	o->stratum = r->stratum;
	o->refid = r->refid;
	o->root_delay = r->root_delay;
	o->root_disp = r->root_disp;
	x->t[3] = t4;
	x->have |= 1u << 3;
}

/* The stamps the layers below took of the request and of @reply (NULL:
   none came). */
static void exchange_stamps(struct probe *p, uint32_t txid, const struct transport_dgram *reply,
			    struct probe_out *o)
{
	struct transport_stamps ts;
	int replied = reply != NULL;

	if (!p->stamping)
		return;
	if (replied) {
		o->s.v[STAMP_T4K] = reply->rx.at[TRANSPORT_LAYER_K];
		o->s.v[STAMP_T4H] = reply->rx.at[TRANSPORT_LAYER_H];
	}
	/* The request's send stamps came before the reply could: wait for
	   them only briefly. */
	transport_tx_stamps(p->t, txid, p->clk, &ts,
			    replied ? clock_monotonic_ns() + TRANSPORT_TX_WAIT_NS : 0);
	o->s.v[STAMP_T1Q] = ts.at[TRANSPORT_LAYER_Q];
	o->s.v[STAMP_T1K] = ts.at[TRANSPORT_LAYER_K];
	o->s.v[STAMP_T1H] = ts.at[TRANSPORT_LAYER_H];
}

/* The record of exchange @seq before anything happened. */
static void exchange_clear(struct probe *p, uint64_t seq, struct probe_out *o,
			   struct xleave_reply *xr)
{
	memset(o, 0, sizeof(*o));
	memset(xr, 0, sizeof(*xr));
	memset(p->kiss, 0, sizeof(p->kiss));
	stamp_row_clear(&o->s);
	o->nts_seal = o->nts_open = -1;
	o->x.seq = seq;
}

/*
 * Out of cookies, or told so by a NAK that no authentic reply followed:
 * NTS-KE first.  After a NAK the cookies are kept until NTS-KE succeeds
 * (RFC 8915 section 5.7): polling goes on with them while it fails.
 * 0, or -1 when there is no cookie to send.
 */
static int nts_ready(struct probe *p)
{
	if (p->nts && (p->nts_rekey || !nts_client_cookies(p->nts))) {
		if (probe_nts_ke(p) == 0)
			p->nts_rekey = 0;
		else if (!nts_client_cookies(p->nts))
			return -1;
	}
	return 0;
}

/*
 * The request @q into @out: a nonce for its transmit timestamp, the
 * interleaved fields and the ntpx field (--xleave), the NTS fields.
 * 0, or -1 when the NTS request could not be built.
 */
static int request_build(struct probe *p, struct ntp_packet *q, struct transport_dgram *out,
			 size_t cap, struct probe_out *o)
{
	unsigned char *req = out->buf;

	q->xmt = nonce();
	if (p->cfg->xleave) {
		/* RFC 9769: the origin names the server's last receive
		   stamp; the receive field is a nonce the server echoes in
		   an interleaved reply (our own clock stays off the wire). */
		q->org = p->srv_rec;
		do
			q->rec = nonce();
		while (q->rec == q->xmt);
	}
	ntp_encode(q, req);
	out->len = NTP_HEADER_LEN;
	if (p->cfg->xleave) {
		struct xleave_ef none = { .have = 0 };

		xleave_ef_put(req + NTP_HEADER_LEN, &none);
		out->len += XLEAVE_EF_LEN;
	}
	if (p->nts) {
		if (nts_client_request(p->nts, req, cap, &out->len) < 0) {
			ntpx_err("%s: cannot build an NTS request", p->cfg->ep.url);
			return -1;
		}
		o->nts_seal = nts_client_seal_ns(p->nts);
	}
	return 0;
}

/* Replies that arrived after their exchange timed out are late: drained
   now so that they cannot be taken for this one. */
static void late_drain(struct probe *p, struct transport_dgram *in)
{
	while (transport_recv(p->t, in, p->clk) >= 0) {
		p->late++;
		paced(p, -1);
	}
}

/* Sends the request: T1.  0, or -1 when no reply is to be waited for
   (the record says why). */
static int request_send(struct probe *p, struct transport_dgram *out, struct probe_out *o)
{
	struct record_exchange *x = &o->x;
	int rc = transport_send(p->t, out, p->clk, p->stamping ? TRANSPORT_STAMP_SEND : 0);

	x->t[0] = out->tx_at;
	x->have = 1;
	if (rc < 0) {
		x->status = rc == -ECONNREFUSED ? RECORD_REFUSED : RECORD_ERROR;
		p->device_gone |= rc == -ENODEV;
		return -1;
	}
	p->ref1 = clock_last_ref(p->clk);
	if (rc == TRANSPORT_DROPPED) {	/* lossinject: never submitted */
		x->status = RECORD_DROPPED;
		return -1;
	}
	p->sent++;
	return 0;
}

/* What the wait for the reply saw besides it. */
struct reply_seen {
	int other;			/* datagrams that answered nothing */
	int nak;			/* an NTS NAK came ... */
	struct ntp_packet nak_hdr;	/* ... with this header */
	int64_t nak_t4;			/* ... at this T4 */
};

/* The wait ended without a reply (@n: why); the record says so. */
static void reply_none(struct probe *p, const struct ntp_packet *q, uint32_t txid, ssize_t n,
		       const struct reply_seen *seen, struct probe_out *o)
{
	struct record_exchange *x = &o->x;

	if (n == -ETIMEDOUT && seen->nak) {
		/* A NAK and no authentic reply after it: a kiss whatever
		   its leap field says (ntp_judge would take NTSN under
		   leap 3 for an unsynchronised server). */
		p->nts_rekey = 1;
		x->status = RECORD_KOD;
		memcpy(p->kiss, "NTSN", 5);
		from_reply(o, &seen->nak_hdr, seen->nak_t4);
		exchange_stamps(p, txid, NULL, o);
	} else if (n == -ETIMEDOUT) {
		x->status = seen->other ? RECORD_BOGUS : RECORD_TIMEOUT;
		p->timed_out[p->timed_out_next++ % PROBE_LATE_SLOTS] = q->xmt;
		exchange_stamps(p, txid, NULL, o);
	} else if (n == -ECONNREFUSED) {
		x->status = RECORD_REFUSED;
	} else {
		x->status = RECORD_ERROR;
		p->device_gone |= n == -ENODEV;
	}
}

/*
 * Whether the datagram @in is the reply to @q, decoded into @r, and with
 * NTS authentic; *covered: the part of it that may be read.  1: it is;
 * 0: keep waiting (a late reply, a stranger, a bogus or NAK reply).
 */
static int reply_check(struct probe *p, const struct ntp_packet *q,
		       const struct transport_dgram *in, struct ntp_packet *r, size_t *covered,
		       struct reply_seen *seen, struct probe_out *o)
{
	const char *why;
	int decoded = in->len <= in->cap && ntp_decode(in->buf, in->len, r) == 0;

	if (!decoded || r->mode != NTP_MODE_SERVER ||
	    !(r->org == q->xmt || (p->cfg->xleave && q->org && r->org == q->rec))) {
		/* Not an answer to this request: keep waiting for one.
		   The answer to a request that timed out is late;
		   anything else, remember. */
		if (decoded && r->mode == NTP_MODE_SERVER && late_reply(p, r->org)) {
			p->late++;
			paced(p, -1);
		} else
			seen->other = 1;
		return 0;
	}
	*covered = in->len;
	if (!p->nts)
		return 1;
	switch (nts_client_reply(p->nts, in->buf, in->len, covered, &why)) {
	case NTS_REPLY_BOGUS:
		/* Never used: counted, and the wait goes on for the
		   authentic reply. */
		p->nts_bogus++;
		ntpx_err("%s: bogus reply: %s", p->cfg->ep.url, why);
		seen->other = 1;
		return 0;
	case NTS_REPLY_NAK:
		/* Unauthenticated (RFC 8915 section 5.7): the authentic
		   reply may still come.  Kept, in case none does. */
		p->nts_naks++;
		seen->nak = 1;
		seen->nak_hdr = *r;
		seen->nak_t4 = in->rx_at;
		return 0;
	default:
		/* The cookies work: a NAK before was not the server's, or
		   no longer matters. */
		p->nts_rekey = 0;
		o->nts_open = nts_client_open_ns(p->nts);
		return 1;
	}
}

/* The reply @r to @q, in @in (@covered bytes of it readable), into the
   record @o and, for --xleave, @xr. */
static void reply_use(struct probe *p, const struct ntp_packet *q, const struct ntp_packet *r,
		      const struct transport_dgram *in, size_t covered, uint32_t txid,
		      struct probe_out *o, struct xleave_reply *xr)
{
	struct record_exchange *x = &o->x;
	int64_t t4 = in->rx_at;

	x->status = judge(p, r);
	from_reply(o, r, t4);
	if (t4 - x->t[0] <= p->cfg->interval)
		p->slow_run = 0;
	else if (p->cfg->count > 1)
		paced(p, t4 - x->t[0]);
	exchange_stamps(p, txid, in, o);
	/* An unsynchronised server's timestamps are its own: kept, when it
	   sent them; a kiss carries none. */
	if (!(x->status == RECORD_OK ||
	      (x->status == RECORD_UNSYNCED && r->rec != 0 && r->xmt != 0)))
		return;
	/* Era: the server's time is near ours (RFC 5905 6). */
	xr->interleaved = p->cfg->xleave && r->org == q->rec;
	x->t[1] = ntp_ts_to_ns(r->rec, x->t[0]);
	x->have |= 1u << 1;
	xr->xmt = ntp_ts_to_ns(r->xmt, x->t[0]);
	if (!xr->interleaved) {
		x->t[2] = xr->xmt;
		x->have |= 1u << 2;
	}
	if (p->cfg->xleave) {
		xr->has_ef = ntp_check_trailer(in->buf, covered) == 0 &&
			     xleave_ef_find(in->buf, covered, &xr->ef);
		p->srv_rec = r->rec;
		/* A basic reply's field is this exchange's. */
		if (xr->has_ef && !xr->interleaved && xr->ef.have & 1u << XEF_T2K)
			o->s.v[STAMP_T2K] = xr->ef.at[XEF_T2K];
		if (xr->has_ef && !xr->interleaved && xr->ef.have & 1u << XEF_T2H)
			o->s.v[STAMP_T2H] = xr->ef.at[XEF_T2H];
	}
}

/* One exchange; fills @o, and @xr for --xleave (ntpprobe.h). */
void probe_exchange(struct probe *p, uint64_t seq, struct probe_out *o,
		    struct xleave_reply *xr)
{
	unsigned char req[SEND_CAP], buf[RECV_CAP];
	struct transport_dgram out = { .buf = req }, in = { .buf = buf, .cap = sizeof(buf) };
	struct ntp_packet q = {
		.leap = NTP_LEAP_ALARM,	/* a client is unsynchronised to its server */
		.version = 4,
		.mode = NTP_MODE_CLIENT,
		.poll = 0,
		.precision = -20,
	};
	struct reply_seen seen = { 0 };
	int64_t deadline;

	exchange_clear(p, seq, o, xr);
	if (nts_ready(p) || request_build(p, &q, &out, sizeof(req), o)) {
		o->x.status = RECORD_ERROR;
		return;
	}
	p->srv_rec = 0;
	late_drain(p, &in);
	if (request_send(p, &out, o))
		return;
	deadline = clock_monotonic_ns() + p->cfg->timeout;
	for (;;) {
		struct ntp_packet r;
		size_t covered;
		ssize_t n = transport_recv_wait(p->t, &in, p->clk, deadline, p->cfg->poll);

		if (n == -EINTR)	/* a signal: finish this exchange first */
			continue;
		if (n < 0) {
			reply_none(p, &q, out.tx_id, n, &seen, o);
			return;
		}
		if (reply_check(p, &q, &in, &r, &covered, &seen, o)) {
			reply_use(p, &q, &r, &in, covered, out.tx_id, o, xr);
			return;
		}
	}
}
