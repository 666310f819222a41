/* SPDX-License-Identifier: ISC */
/*
 * access.h - who a server answers, and how often (ntpreflect --allow,
 * --ratelimit).  Both are off by default: a measurement server must not
 * distort what it measures.
 *
 * Addresses come as a received datagram carries them (transport.h,
 * struct transport_host): binary, IPv4 as ::ffff:a.b.c.d, the same over
 * every transport that has IP addresses.
 */
#ifndef NTPX_ACCESS_H
#define NTPX_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

/* An IPv4 address is kept as ::ffff:a.b.c.d, so one form fits both. */
struct access_ip {
	uint8_t a[16];
};

struct access_net {
	struct access_ip ip;
	int prefix;		/* 0..128, in the IPv6 form */
};

/* "192.0.2.0/24", "2001:db8::/32", "192.0.2.7" (/32).  0 or -1 and @err. */
int access_net_parse(const char *s, struct access_net *n, char *err, size_t errlen);

/* The address in a transport's "HOST:PORT" or "[HOST]:PORT".  0 or -1. */
int access_ip_from_peer(const char *peer, struct access_ip *ip);

/* The sender's host of a received datagram.  0, or -1 when the path's
   peers have no IP address (ib://). */
int access_ip_from_host(const struct transport_host *h, struct access_ip *ip);

/* @ip is in one of @nets. */
int access_allowed(const struct access_net *nets, int n, const struct access_ip *ip);

/*
 * Per-address rate limiting: a token bucket per client address, RATE
 * tokens a second, BURST at most.  A request that finds a token is
 * answered; one that finds none is answered with a RATE kiss-o'-death
 * while the address's kiss bucket (same RATE, burst 1) has a token, and
 * ignored otherwise.  So a client over the limit gets at most RATE
 * answers and RATE kisses a second, each no larger than its request.
 *
 * The state is bounded: RATELIMIT_SLOTS addresses (4-way sets; a new
 * address takes the least recently seen of its set), about 160 KiB.  An
 * address pushed out starts afresh when it comes back.
 */
#define RATELIMIT_SLOTS	4096

enum ratelimit_verdict {
	RATELIMIT_PASS,
	RATELIMIT_KISS,
	RATELIMIT_DROP,
};

struct ratelimit;

/* "RATE[/BURST]": RATE requests a second (k suffix allowed, > 0), BURST
   (1..1000000, default 8, chrony's).  0, or -1 and @err. */
int ratelimit_parse(const char *s, double *rate, double *burst, char *err, size_t errlen);

struct ratelimit *ratelimit_create(double rate, double burst);
void ratelimit_free(struct ratelimit *rl);
/* @now: CLOCK_MONOTONIC-like ns, never decreasing much. */
enum ratelimit_verdict ratelimit_check(struct ratelimit *rl, const struct access_ip *ip,
				       int64_t now_ns);
/* Addresses forgotten to make room (for the counters). */
uint64_t ratelimit_evictions(const struct ratelimit *rl);
/* The poll exponent a kiss announces: log2 of 1/RATE s, rounded up. */
int8_t ratelimit_poll(const struct ratelimit *rl);

#endif
