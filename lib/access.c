/* SPDX-License-Identifier: ISC */
/*
 * access.c - address filters and per-address rate limiting (access.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "opt_units.h"

#define WAYS	4

struct rl_slot {
	struct access_ip ip;
	int used;
	double tokens, kiss;
	int64_t last;		/* ns of the last refill */
	int64_t seen;		/* ns of the last request */
};

struct ratelimit {
	double rate, burst;	/* per second; tokens */
	uint64_t evictions;
	struct rl_slot slot[RATELIMIT_SLOTS];
};

/* @s for an error message: control bytes as '?', at most 64 bytes, so
   that the message stays one line. */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len && i < 64; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = 0;
	return buf;
}

static int ip_parse(const char *s, struct access_ip *ip)
{
	struct in_addr a4;

	memset(ip, 0, sizeof(*ip));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		ip->a[10] = ip->a[11] = 0xff;
		memcpy(ip->a + 12, &a4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, s, ip->a) == 1 ? 0 : -1;
}

static int is_v4(const struct access_ip *ip)
{
	static const uint8_t pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(ip->a, pre, sizeof(pre)) == 0;
}

int access_net_parse(const char *s, struct access_net *n, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s);
	long prefix;
	char *end;
	int i;

	if (hl == 0 || hl >= sizeof(host))
		goto bad;
	memcpy(host, s, hl);
	host[hl] = 0;
	if (ip_parse(host, &n->ip))
		goto bad;
	prefix = is_v4(&n->ip) ? 32 : 128;
	if (slash) {
		long max = prefix;

		errno = 0;
		prefix = strtol(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || prefix < 0 || prefix > max)
			goto bad;
	}
	n->prefix = (int)prefix + (is_v4(&n->ip) ? 96 : 0);
	/* Host bits set: refused, as a typo is more likely than intent. */
	for (i = n->prefix; i < 128; i++)
		if (n->ip.a[i / 8] & (0x80 >> (i % 8))) {
			snprintf(err, errlen, "bad network '%s' (host bits set)",
				 shown(s, host, sizeof(host)));
			return -1;
		}
	return 0;
bad:
	snprintf(err, errlen, "bad network '%s' (ADDRESS[/PREFIX])", shown(s, host, sizeof(host)));
	return -1;
}

int access_ip_from_host(const struct transport_host *h, struct access_ip *ip)
{
	if (!h->has)
		return -1;
	memcpy(ip->a, h->a, sizeof(ip->a));
	return 0;
}

int access_ip_from_peer(const char *peer, struct access_ip *ip)
{
	char host[INET6_ADDRSTRLEN];
	const char *end;
	size_t n;

	if (peer[0] == '[') {
		end = strchr(peer, ']');
		if (!end)
			return -1;
		peer++;
	} else {
		end = strrchr(peer, ':');
		/* A bare IPv6 address (an IB GID) has more than one colon. */
		if (end && strchr(peer, ':') != end)
			end = NULL;
		if (!end)
			end = peer + strlen(peer);
	}
	n = (size_t)(end - peer);
	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, peer, n);
	host[n] = 0;
	return ip_parse(host, ip);
}

static int in_net(const struct access_net *n, const struct access_ip *ip)
{
	int full = n->prefix / 8, rest = n->prefix % 8;

	if (memcmp(n->ip.a, ip->a, (size_t)full))
		return 0;
	return !rest || !((n->ip.a[full] ^ ip->a[full]) & (0xff00 >> rest));
}

int access_allowed(const struct access_net *nets, int n, const struct access_ip *ip)
{
	int i;

	for (i = 0; i < n; i++)
		if (in_net(&nets[i], ip))
			return 1;
	return 0;
}

int ratelimit_parse(const char *s, double *rate, double *burst, char *err, size_t errlen)
{
	char *end, buf[65];
	double r, b = 8;

	errno = 0;
	r = strtod(s, &end);
	if (end == s || errno)
		goto bad;
	if (*end == 'k') {
		r *= 1000;
		end++;
	}
	if (*end == '/') {
		char *e2;

		errno = 0;
		b = (double)strtoul(end + 1, &e2, 10);
		if (e2 == end + 1 || *e2 || errno || b < 1 || b > 1000000)
			goto bad;
	} else if (*end) {
		goto bad;
	}
	if (!(r > 0) || !isfinite(r) || r > 1e9)
		goto bad;
	*rate = r;
	*burst = b;
	return 0;
bad:
	snprintf(err, errlen, "bad rate limit '%s' (RATE[/BURST]: requests a second, "
		 "burst 1..1000000)", shown(s, buf, sizeof(buf)));
	return -1;
}

struct ratelimit *ratelimit_create(double rate, double burst)
{
	struct ratelimit *rl = calloc(1, sizeof(*rl));

	if (!rl)
		return NULL;
	rl->rate = rate;
	rl->burst = burst;
	return rl;
}

void ratelimit_free(struct ratelimit *rl)
{
	free(rl);
}

uint64_t ratelimit_evictions(const struct ratelimit *rl)
{
	return rl->evictions;
}

int8_t ratelimit_poll(const struct ratelimit *rl)
{
	double p = ceil(log2(1 / rl->rate));

	return (int8_t)(p < -30 ? -30 : p > 17 ? 17 : p);
}

/* FNV-1a over the address: the set. */
static size_t set_of(const struct access_ip *ip)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ ip->a[i]) * 16777619u;
	return (h % (RATELIMIT_SLOTS / WAYS)) * WAYS;
}

enum ratelimit_verdict ratelimit_check(struct ratelimit *rl, const struct access_ip *ip,
				       int64_t now_ns)
{
	struct rl_slot *set = &rl->slot[set_of(ip)], *s = NULL, *old = set;
	double dt;
	int i;

	for (i = 0; i < WAYS; i++) {
		if (set[i].used && memcmp(&set[i].ip, ip, sizeof(*ip)) == 0) {
			s = &set[i];
			break;
		}
		if (!set[i].used || (old->used && set[i].seen < old->seen))
			old = &set[i];
	}
	if (!s) {
		s = old;
		if (s->used)
			rl->evictions++;
		s->used = 1;
		s->ip = *ip;
		s->tokens = rl->burst;
		s->kiss = 1;
		s->last = now_ns;
	}
	s->seen = now_ns;
	dt = now_ns > s->last ? ntpx_ns_to_sec((double)(now_ns - s->last)) : 0;
	s->last = now_ns;
	s->tokens = fmin(rl->burst, s->tokens + dt * rl->rate);
	s->kiss = fmin(1, s->kiss + dt * rl->rate);
	if (s->tokens >= 1) {
		s->tokens -= 1;
		return RATELIMIT_PASS;
	}
	if (s->kiss >= 1) {
		s->kiss -= 1;
		return RATELIMIT_KISS;
	}
	return RATELIMIT_DROP;
}
