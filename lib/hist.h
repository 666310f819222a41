/* SPDX-License-Identifier: ISC */
/*
 * hist.h - a log-bucketed histogram of signed integers (ns), in the style
 * of HdrHistogram: constant memory however many values it counts, for
 * the summaries of tools that run as long as the user likes.
 *
 * Values below 2^HIST_BITS in magnitude have a bucket each (exact).
 * Above, each power of two is split into 2^(HIST_BITS - 1) buckets of
 * equal width; a value is reported as its bucket's midpoint, so a
 * quantile is off by at most 2^-HIST_BITS of its magnitude: 0.39% (a
 * median delay of 50 us within 0.2 us).  About 60 KiB per sign.
 */
#ifndef NTPX_HIST_H
#define NTPX_HIST_H

#include <stdint.h>

#define HIST_BITS	8
#define HIST_HALF	(1 << (HIST_BITS - 1))
/* Exact buckets, then HIST_HALF per power of two up to 2^63. */
#define HIST_NBUCKETS	((64 - HIST_BITS + 1) * HIST_HALF + HIST_HALF)

struct hist {
	uint64_t n;
	uint64_t pos[HIST_NBUCKETS];	/* values >= 0 */
	uint64_t neg[HIST_NBUCKETS];	/* magnitudes of values < 0 */
};

void hist_init(struct hist *h);
void hist_add(struct hist *h, int64_t v);
/*
 * The value of rank @k (1 .. n, in ascending order), as its bucket's
 * midpoint: within 2^-HIST_BITS of the true value's magnitude, exact
 * below 2^HIST_BITS.  0 when k is out of range.
 */
int64_t hist_rank(const struct hist *h, uint64_t k);
/* The median (the mean of the two middle ranks when n is even), in ns. */
double hist_median(const struct hist *h);

#endif
