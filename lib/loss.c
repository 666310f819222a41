/* SPDX-License-Identifier: ISC */
/*
 * loss.c - the deliberate loss schedule (loss.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loss.h"

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

/* A whole unsigned decimal, nothing after it. */
static int parse_u64(const char *s, const char *end, uint64_t *v)
{
	uint64_t x = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

int loss_parse(const char *spec, struct loss *l, char *err, size_t errlen)
{
	const char *a, *b, *end;
	struct loss x = { .kind = LOSS_NONE };

	if (!spec || !*spec) {
		*l = x;
		return 0;
	}
	end = spec + strlen(spec);
	a = strchr(spec, ':');
	b = a ? strchr(a + 1, ':') : NULL;
	if (!a || !b || strchr(b + 1, ':'))
		FAIL("bad loss schedule '%s' (expected every:N:K or rate:P:SEED)", spec);
	if ((size_t)(a - spec) == 5 && strncmp(spec, "every", 5) == 0) {
		x.kind = LOSS_EVERY;
		if (parse_u64(a + 1, b, &x.every) || x.every == 0)
			FAIL("bad loss schedule '%s': N must be a whole number >= 1", spec);
		if (parse_u64(b + 1, end, &x.phase) || x.phase >= x.every)
			FAIL("bad loss schedule '%s': K must be a whole number below N", spec);
	} else if ((size_t)(a - spec) == 4 && strncmp(spec, "rate", 4) == 0) {
		char num[64], *e;

		x.kind = LOSS_RATE;
		if ((size_t)(b - a - 1) >= sizeof(num) || b == a + 1)
			FAIL("bad loss schedule '%s': bad probability", spec);
		memcpy(num, a + 1, (size_t)(b - a - 1));
		num[b - a - 1] = 0;
		errno = 0;
		x.rate = strtod(num, &e);
		if (*e || errno || !isfinite(x.rate) || x.rate <= 0 || x.rate > 1)
			FAIL("bad loss schedule '%s': P must be a probability, 0 < P <= 1", spec);
		if (parse_u64(b + 1, end, &x.seed))
			FAIL("bad loss schedule '%s': SEED must be a whole number", spec);
	} else {
		FAIL("bad loss schedule '%s' (expected every:N:K or rate:P:SEED)", spec);
	}
	*l = x;
	return 0;
}

int loss_format(const struct loss *l, char *buf, size_t len)
{
	switch (l->kind) {
	case LOSS_EVERY:
		return snprintf(buf, len, "every:%" PRIu64 ":%" PRIu64, l->every, l->phase);
	case LOSS_RATE:
		/* The shortest of %.15g and %.17g that reads back as the
		   same double: 0.05, not 0.050000000000000003. */
		snprintf(buf, len, "%.15g", l->rate);
		if (strtod(buf, NULL) == l->rate)
			return snprintf(buf, len, "rate:%.15g:%" PRIu64, l->rate, l->seed);
		return snprintf(buf, len, "rate:%.17g:%" PRIu64, l->rate, l->seed);
	default:
		return snprintf(buf, len, "%s", "");
	}
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int loss_drops(const struct loss *l, uint64_t s)
{
	uint64_t h;

	switch (l->kind) {
	case LOSS_EVERY:
		return s % l->every == l->phase;
	case LOSS_RATE:
		if (l->rate >= 1)
			return 1;
		h = mix64(mix64(l->seed) + s * 0x9e3779b97f4a7c15ULL);
		/* The top 53 bits as a uniform double in [0, 1). */
		return (double)(h >> 11) * 0x1p-53 < l->rate;
	default:
		return 0;
	}
}
