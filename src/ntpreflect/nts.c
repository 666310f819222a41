/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect --nts-cert/--nts-key: Network Time Security (RFC 8915) on
 * the NTP side; the NTS-KE server is ke.c.  Cookies are sealed under the
 * server key of lib/nts_server.c, which rotates every --nts-rotate
 * (default 1 h); cookies under the current key and the two before it are
 * accepted (so a cookie lives 2 to 3 periods), older ones get an NTS NAK.
 *
 * A request with any NTS field must pass every NTS check or it is not
 * answered as asked: dropped (nts-bad) when its fields are of no valid
 * shape, an NTS NAK when its cookie or authenticator does not open; one
 * without any is plain NTP and answered as ever.  Each refused request
 * or KE session is one line on stderr, at most NTS_LINES_PER_MIN a
 * minute, with a count of those held back when the next minute's first
 * comes (and at exit); the summary counts them all.  The server goes on
 * serving.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "nts_ef.h"
#include "nts_server.h"
#include "ntp.h"
#include "transport.h"
#include "ntpreflect.h"

static void suppressed(uint64_t held)
{
	if (held)
		ntpx_err("%llu lines suppressed (more than %d a minute)", (unsigned long long)held,
			 NTS_LINES_PER_MIN);
}

void reflect_nts_line(struct reflector *r, const char *peer, const char *what, const char *why)
{
	uint64_t held;
	int pass;

	pthread_mutex_lock(&r->line_lock);
	pass = log_limit_pass(&r->lines, clock_monotonic_ns(), &held);
	suppressed(held);
	if (pass)
		ntpx_err("%s: %s: %s", peer, what, why);
	pthread_mutex_unlock(&r->line_lock);
}

void reflect_nts_lines_end(struct reflector *r)
{
	pthread_mutex_lock(&r->line_lock);
	suppressed(log_limit_held(&r->lines));
	pthread_mutex_unlock(&r->line_lock);
}

/*
 * @v: what reflect_admit() said so far, V_OK or V_MALFORMED (fields or a
 * MAC of no valid shape).  A malformed request gets its line here, with
 * the field that is wrong; a well formed one without NTS fields (or with
 * a MAC, which NTS never has) is plain NTP; one with any field of NTS's
 * types is NTS, and answered only when it passes every check.
 */
enum verdict reflect_nts_check(struct reflector *r, const struct transport_dgram *d,
			       enum verdict v)
{
	const struct transport_addr *from = &d->peer;
	const unsigned char *buf = d->buf;
	size_t n = d->len;
	struct nts_ef_view ef;
	const char *why;
	char peer[128];
	enum nts_server_verdict sv;
	int parsed = nts_ef_parse(buf, n, &ef, &why) == 0;

	if (v == V_MALFORMED) {
		/* The peer as text for output only: this line. */
		transport_addr_str(r->t, from, peer, sizeof(peer));
		reflect_nts_line(r, peer, "malformed, dropped", parsed ? "no valid MAC or extension fields" : why);
		return V_MALFORMED;
	}
	/* Not NTS at all: plain NTP. */
	if (!ef.nts_fields)
		return V_OK;
	/* NTS fields of no valid shape (an identifier of 16 bytes): NTS that
	   fails, not plain NTP. */
	if (!parsed) {
		transport_addr_str(r->t, from, peer, sizeof(peer));
		reflect_nts_line(r, peer, "nts: dropped", why);
		return V_NTS_BAD;
	}
	sv = nts_server_check(r->nts, buf, n, &r->nreq, &why, &r->nts_open);
	if (sv == NTS_SERVER_OK) {
		r->nts_req = 1;
		return V_OK;
	}
	transport_addr_str(r->t, from, peer, sizeof(peer));
	reflect_nts_line(r, peer, sv == NTS_SERVER_NAK ? "nts: answered with a NAK" : "nts: dropped", why);
	return sv == NTS_SERVER_NAK ? V_NTS_NAK : V_NTS_BAD;
}

/* Section 5.7: stratum 0, kiss code NTSN, the identifier echoed, no
   authenticator. */
void reflect_nts_nak(struct reflector *r, const struct transport_dgram *d,
		     const struct ntp_packet *q)
{
	unsigned char buf[NTP_HEADER_LEN + 4 + NTS_SERVER_UID_MAX];
	/* Its own buffer: the NAK echoes the identifier, which r->nreq
	   finds in the request's. */
	struct transport_dgram nak = { .buf = buf, .peer = d->peer };
	struct ntp_packet k = r->reply;
	size_t len = NTP_HEADER_LEN;

	k.leap = NTP_LEAP_ALARM;
	k.stratum = NTP_STRATUM_KOD;
	ntp_refid_parse("NTSN", &k.refid);
	k.version = q->version;
	k.poll = q->poll;
	k.ref = 0;
	k.org = q->xmt;
	k.rec = ntp_ts_from_ns(d->rx_at);
	ntp_encode(&k, buf);
	if (nts_server_nak(&r->nreq, buf, sizeof(buf), &len) < 0)
		r->send_errors++;
	else if ((nak.len = len, transport_send(r->t, &nak, r->clk, TRANSPORT_STAMP_XMT)) < 0)
		r->send_errors++;
}
