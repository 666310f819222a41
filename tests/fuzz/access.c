/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: ntpreflect's --allow and --ratelimit parsers, the
 * peer addresses the transports print, and the rate limiter and the
 * histogram fed with whatever the input says (addresses, times, values).
 * Invariants: errors are one line; a parsed network matches its own
 * address; a verdict is one of three; a rank lies within the values added.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "ntp.h"
#include "hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hist h;
	char *s = malloc(size + 1), err[256];
	struct access_net n;
	struct access_ip ip;
	double rate, burst;
	size_t i;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (access_net_parse(s, &n, err, sizeof(err)) == 0) {
		if (!access_allowed(&n, 1, &n.ip))
			__builtin_trap();
	} else if (strchr(err, '\n')) {
		__builtin_trap();
	}
	(void)access_ip_from_peer(s, &ip);
	if (ratelimit_parse(s, &rate, &burst, err, sizeof(err)) == 0) {
		if (!(rate > 0) || burst < 1)
			__builtin_trap();
	} else if (strchr(err, '\n')) {
		__builtin_trap();
	}
	free(s);

	/* The bytes as requests: 16 of address, 8 of time each. */
	{
		struct ratelimit *rl = ratelimit_create(size ? 1 + data[0] : 1,
							size > 1 ? 1 + data[1] % 16 : 1);
		int64_t now = 0;

		if (!rl)
			return 0;
		for (i = 0; i + 24 <= size; i += 24) {
			int64_t dt;
			enum ratelimit_verdict v;

			memcpy(ip.a, data + i, 16);
			memcpy(&dt, data + i + 16, 8);
			now += dt & 0xffffffffff;
			v = ratelimit_check(rl, &ip, now);
			if (v != RATELIMIT_PASS && v != RATELIMIT_KISS && v != RATELIMIT_DROP)
				__builtin_trap();
		}
		(void)ntp_backoff_ns((int64_t)size * 1000000, (int8_t)(size ? data[size - 1] : 0));
		ratelimit_free(rl);
	}
	/* The bytes as values. */
	{
		int64_t lo = INT64_MAX, hi = INT64_MIN, v;

		hist_init(&h);
		for (i = 0; i + 8 <= size; i += 8) {
			memcpy(&v, data + i, 8);
			hist_add(&h, v);
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		if (h.n) {
			int64_t a = hist_rank(&h, 1), b = hist_rank(&h, h.n);

			/* Within 2^-8 of the extremes' magnitudes. */
			if ((double)a < (double)lo - (lo < 0 ? -(double)lo : (double)lo) / 128 ||
			    (double)b > (double)hi + (hi < 0 ? -(double)hi : (double)hi) / 128)
				__builtin_trap();
			(void)hist_median(&h);
		}
	}
	return 0;
}
