/* SPDX-License-Identifier: ISC */
/*
 * Which datagrams ntpreflect answers.  Only what a server should: a
 * well-formed client-mode (3) request of version 1..4, from a network
 * --allow names (all when none), within --ratelimit.  Control (6) and
 * private (7) queries, other modes, short, truncated or malformed
 * datagrams are counted and never answered (lib/access.h holds the
 * networks and the rate limiter).
 */
#include <stdint.h>
#include <sys/types.h>

#include "access.h"
#include "clock.h"
#include "ntp.h"
#include "transport.h"
#include "ntpreflect.h"

const char *const reflect_verdict_names[V_NVERDICT] = {
	"ok", "short", "truncated", "malformed", "version", "control", "private", "mode",
	"denied", "rate", "kiss", "nts-bad", "nts-nak",
};

/* --allow: the sender is in one of the networks (all when none given). */
static enum verdict admit(const struct transport_dgram *d, const struct access_net *allow,
			  int nallow)
{
	struct access_ip ip;

	if (!nallow)
		return V_OK;
	if (access_ip_from_host(&d->host, &ip) || !access_allowed(allow, nallow, &ip))
		return V_DENIED;
	return V_OK;
}

/* --ratelimit: per sender address. */
static enum verdict limit(struct ratelimit *rl, const struct transport_dgram *d)
{
	struct access_ip ip;

	if (access_ip_from_host(&d->host, &ip))
		return V_OK;	/* no address to limit by */
	switch (ratelimit_check(rl, &ip, clock_monotonic_ns())) {
	case RATELIMIT_PASS:
		return V_OK;
	case RATELIMIT_KISS:
		return V_KISS;
	default:
		return V_RATE;
	}
}

static enum verdict check(const unsigned char *buf, ssize_t n, struct ntp_packet *q)
{
	if (n > RECV_CAP)
		return V_TRUNCATED;
	/* Control and private queries have headers of their own (12 and 8
	   bytes), so they are told by the mode bits before the length. */
	if (n >= 1 && (buf[0] & 7) == NTP_MODE_CONTROL)
		return V_CONTROL;
	if (n >= 1 && (buf[0] & 7) == NTP_MODE_PRIVATE)
		return V_PRIVATE;
	if (ntp_decode(buf, (size_t)n, q))
		return V_SHORT;
	if (q->mode != NTP_MODE_CLIENT)
		return V_MODE;
	if (q->version < 1 || q->version > 4)
		return V_VERSION;
	if (ntp_check_trailer(buf, (size_t)n))
		return V_MALFORMED;
	return V_OK;
}

enum verdict reflect_admit(struct reflector *r, const struct transport_dgram *d,
			   struct ntp_packet *q)
{
	const struct reflect_config *cfg = r->cfg;
	enum verdict v = cfg->nallow ? admit(d, cfg->allow, cfg->nallow) : V_OK;

	if (v == V_OK)
		v = check(d->buf, (ssize_t)d->len, q);
	if (v == V_OK && r->rl)
		v = limit(r->rl, d);
	r->nts_req = 0;
	if ((v == V_OK || v == V_MALFORMED) && r->nts)
		v = reflect_nts_check(r, d, v);
	return v;
}
