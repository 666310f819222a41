/* SPDX-License-Identifier: ISC */
/*
 * hist.c - a log-bucketed histogram (see hist.h).
 *
 * Index of a magnitude m: m itself below 2^HIST_BITS; above, with e the
 * shift that brings m into [2^(HIST_BITS-1), 2^HIST_BITS), the bucket
 * (e * HIST_HALF) + (m >> e), which covers [(m >> e) << e, +2^e).  The
 * bucket's width over its lowest value is at most 2^e / 2^(HIST_BITS-1+e),
 * so its midpoint is within 2^-HIST_BITS of every value in it.
 */
#include <string.h>

#include "hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

static unsigned bucket_of(uint64_t m)
{
	unsigned e;

	if (m < (1u << HIST_BITS))
		return (unsigned)m;
	e = (unsigned)(63 - __builtin_clzll(m)) - (HIST_BITS - 1);
	return e * HIST_HALF + (unsigned)(m >> e);
}

/* The midpoint of bucket @b's magnitudes (exact for the exact ones). */
static uint64_t value_of(unsigned b)
{
	unsigned e;
	uint64_t lo;

	if (b < (1u << HIST_BITS))
		return b;
	e = b / HIST_HALF - 1;
	lo = (uint64_t)(b - e * HIST_HALF) << e;
	return lo + ((uint64_t)1 << e) / 2;
}

void hist_add(struct hist *h, int64_t v)
{
	if (v >= 0)
		h->pos[bucket_of((uint64_t)v)]++;
	else
		h->neg[bucket_of(v == INT64_MIN ? (uint64_t)INT64_MAX + 1 : (uint64_t)-v)]++;
	h->n++;
}

int64_t hist_rank(const struct hist *h, uint64_t k)
{
	uint64_t seen = 0;
	int b;

	if (k < 1 || k > h->n)
		return 0;
	/* Negative values first, the largest magnitude first. */
	for (b = HIST_NBUCKETS - 1; b >= 0; b--) {
		seen += h->neg[b];
		if (seen >= k) {
			uint64_t m = value_of((unsigned)b);

			return m > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)m;
		}
	}
	for (b = 0; b < HIST_NBUCKETS; b++) {
		seen += h->pos[b];
		if (seen >= k) {
			uint64_t m = value_of((unsigned)b);

			return m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
		}
	}
	return 0;
}

double hist_median(const struct hist *h)
{
	if (!h->n)
		return 0;
	if (h->n % 2)
		return (double)hist_rank(h, h->n / 2 + 1);
	return ((double)hist_rank(h, h->n / 2) + (double)hist_rank(h, h->n / 2 + 1)) / 2;
}
