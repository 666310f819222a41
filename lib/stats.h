/* SPDX-License-Identifier: ISC */
/*
 * stats.h - the statistics the tools report: least squares, percentiles,
 * RMS.  Functions that take a non-const array may reorder it (selection,
 * not sorting: O(n) each, which is what keeps offsetfit fast).
 */
#ifndef NTPX_STATS_H
#define NTPX_STATS_H

#include <stddef.h>
#include <stdint.h>

struct linfit {
	double a;	/* intercept: y at x = 0 */
	double b;	/* slope: dy/dx */
	double rms;	/* RMS of the residuals y - (a + b x) */
	double b_se;	/* standard error of b, in b's units; NAN when n < 3 */
	size_t n;
};

/* Contiguous batches behind linfit.b_se (see stats_linfit). */
#define STATS_SE_BATCHES 10

/*
 * The least-squares line through n >= 2 points, about their means: the
 * means, the slope b and Sxx, the sum of (x - mean x)^2.  Returns 0, or -1
 * when n < 2 or every x is the same.
 */
int stats_line(const double *x, const double *y, size_t n, double *mean_x, double *mean_y,
	       double *b, double *sxx);

/*
 * Least-squares fit of y = a + b x over n >= 2 points, computed about the
 * means (two passes) so that large x and y lose no precision.  Returns 0,
 * or -1 when n < 2 or every x is the same.
 *
 * b_se does not assume independent residuals: an offset series wanders,
 * and the textbook s / sqrt(Sxx) then understates the error of b several
 * times over.  The points are cut, in input order, into STATS_SE_BATCHES
 * contiguous batches; var(b) is the sum over batches of
 * (sum of (x - mean x) r)^2, over Sxx^2 (non-overlapping batch means, a
 * heteroskedasticity- and autocorrelation-consistent estimate), times
 * B / (B - 2) for the two fitted parameters.  Correlation within a batch
 * is counted; wander slower than a batch is not.
 */
int stats_linfit(const double *x, const double *y, size_t n, struct linfit *fit);

/*
 * The p-quantile (0 <= p <= 1) of v[0..n-1], interpolating linearly
 * between the two nearest ranks (Hyndman-Fan type 7, the default of R and
 * NumPy): rank h = (n - 1) p.  Reorders v.  n must be > 0.
 */
double stats_quantile(double *v, size_t n, double p);

/*
 * Several quantiles at once, ps[] ascending; may reorder v.  From 65536
 * values on, one pass copies the few values around each wanted rank
 * (brackets set by a sample) and the selection runs in those: the same
 * results as selection in v, bit for bit, several times faster.
 */
void stats_quantiles(double *v, size_t n, const double *ps, double *out, size_t k);

double stats_min(const double *v, size_t n);
double stats_rms(const double *v, size_t n);	/* sqrt(mean(v^2)) */

/* Sorts v ascending (for CDFs). */
void stats_sort(double *v, size_t n);

/*
 * The median of int64 values into *@median (v is left as it is); n must
 * be > 0.  0, or -ENOMEM when there is no memory for the copy it sorts.
 */
int stats_median_i64(const int64_t *v, size_t n, double *median);

/*
 * The k-th smallest of v[0..n-1] (k from 0), by selection in place: v is
 * reordered, the k smallest before it.  k must be < n.
 */
double stats_kth(double *v, size_t n, size_t k);

/*
 * The p-quantile (0 < p < 1) of Student's t distribution with @dof >= 1
 * degrees of freedom: 2.306 for p 0.975 and 8.  From the closed forms of
 * its distribution function for whole degrees of freedom (Abramowitz and
 * Stegun 26.7.3 and 26.7.4), inverted by bisection to 1e-12.
 */
double stats_t_quantile(double p, int dof);

#endif
