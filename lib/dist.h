/* SPDX-License-Identifier: ISC */
/*
 * dist.h - the distribution of a series of signed integers (ns) for a
 * tool's summary at exit: count, min, max and quantiles, for a run as
 * long as the user likes.
 *
 * The first DIST_EXACT_MAX values are all kept, so that a quantile of up
 * to that many is exact: the value the sorted data give (Hyndman-Fan
 * type 7, the default of R and NumPy, and offsetfit's).  That is 8 bytes
 * a value, 8 MiB at most, in chunks of DIST_CHUNK values taken as the
 * series grows (no copy of what is kept, so an add costs the same at any
 * count); a query sorts a copy once (as much again, at exit).  Past
 * DIST_EXACT_MAX the kept values are let go and the quantiles are the
 * log-bucketed histogram's (hist.h, about 116 KiB, kept from the start):
 * within 2^-HIST_BITS (0.39%) of the value's magnitude, and never
 * outside [min, max], which stay exact.
 */
#ifndef NTPX_DIST_H
#define NTPX_DIST_H

#include <stdint.h>

#define DIST_EXACT_MAX	(1u << 20)	/* values kept: exact quantiles */
#define DIST_CHUNK	8192u		/* values per allocation */

struct dist;

/* NULL when out of memory. */
struct dist *dist_new(void);
void dist_free(struct dist *d);

void dist_add(struct dist *d, int64_t v);

uint64_t dist_count(const struct dist *d);
int64_t dist_min(const struct dist *d);		/* 0 when empty */
int64_t dist_max(const struct dist *d);		/* 0 when empty */

/*
 * Whether every value is kept (count <= DIST_EXACT_MAX, and memory was
 * there for them): the quantiles are then exact.
 */
int dist_exact(const struct dist *d);

/*
 * The @p-quantile (0 <= p <= 1), in the values' unit; 0 when empty.
 * Exact while dist_exact(); else the histogram's value of rank
 * ceil(p n), clamped to [min, max].  *@err (may be NULL) is a bound on
 * the distance from the exact quantile: 0 when exact, else the
 * histogram's 2^-HIST_BITS of the value's magnitude.
 */
double dist_quantile(struct dist *d, double p, double *err);

/*
 * @ns written in microseconds into @buf with the digits it holds, "12.345
 * us": to the nanosecond when @err, its bound in ns, is below 1 ns (the
 * records' integers, a median's half); else rounded to the decade of
 * @err, with no digit below it (an error of 19.5 us: "+5000 us", never
 * "+4997.120 us").  @sign: "+" before a value >= 0.
 */
void dist_us_str(char *buf, size_t len, int sign, double ns, double err);

#endif
