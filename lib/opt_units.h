/* SPDX-License-Identifier: ISC */
/*
 * opt_units.h - the values every tool parses the same way: durations,
 * rates, ppm, counts (opt_units.c, a leaf that lib/ may use as well);
 * and the time units every file writes its constants and conversions in.
 *
 * Parsers take the whole string or nothing: trailing junk, an empty string,
 * a missing number or an overflow is an error (-1), and the output is left
 * untouched.
 */
#ifndef NTPX_OPT_UNITS_H
#define NTPX_OPT_UNITS_H

#include <stdint.h>

/*
 * Time in ntpx is int64_t nanoseconds (doc/ntpx-record.5).  A constant is
 * written in these units ("250 * NTPX_NS_PER_MS"), never as a count of
 * zeros, so that its unit is read, not counted.
 */
#define NTPX_NS_PER_SEC 1000000000LL
#define NTPX_NS_PER_MS	1000000LL
#define NTPX_NS_PER_US	1000LL
#define NTPX_US_PER_SEC	1000000LL	/* struct timeval's tv_usec */

/*
 * Nanoseconds as seconds, for what is computed or printed in seconds
 * (rates, fits, Prometheus' base units): a multiplication by 1e-9, the
 * form most of the tree wrote by hand, so that what it prints stayed the
 * same to the last digit when these took their place.  What was written
 * as a division ((double)ns / 1e9, / 1e6) divides by the constant
 * ((double)ns / NTPX_NS_PER_SEC), which rounds the same as before: the
 * two forms differ in the last bit, and a printed value may show it.
 */
static inline double ntpx_ns_to_sec(double ns)
{
	return ns * 1e-9;
}

/* Seconds as nanoseconds, unrounded: the caller rounds (llround) or truncates. */
static inline double ntpx_sec_to_ns(double sec)
{
	return sec * 1e9;
}

/*
 * A duration: a decimal number with an optional unit ns, us, ms, s, m, h;
 * a bare number is seconds ("250ms", "2s", "1.5m", "3").  Negative values
 * are refused unless @signed_ok, then "+" or "-" may lead.  In nanoseconds,
 * rounded to the nearest.
 */
int opt_duration(const char *s, int signed_ok, int64_t *ns);

/* A frequency in parts per million: "+50ppm", "-3.5ppm", "12" (ppm). */
int opt_ppm(const char *s, double *ppm);

/*
 * A rate in bit/s: "800M", "6G", "1.5k", "1000" (SI prefixes, decimal), or a
 * percentage "90%" of something the caller knows.  On success *bps is the
 * rate (or the fraction 0..1 when *is_fraction is set).
 */
int opt_rate(const char *s, double *bps, int *is_fraction);

/* An unsigned decimal count, 0 .. max. */
int opt_count(const char *s, uint64_t max, uint64_t *n);

#endif
