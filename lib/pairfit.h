/* SPDX-License-Identifier: ISC */
/*
 * pairfit.h - the offset one host measures to another over a window of
 * exchanges, with its uncertainty: the lowest-delay fraction of the
 * window's exchanges, fitted by a line in time, read at any instant.
 *
 * A client that probes a server measures off2 = (t2 - t1) + (t3 - t4)
 * each exchange: twice the server's clock minus the client's, plus the
 * one-way delay out minus the delay back.  Queueing adds to the delay
 * of one way or the other, so the exchanges with the least round-trip
 * delay carry the least of it: pairfit keeps the fraction F of the
 * window's ok exchanges with the lowest delay (the idea of NTP's clock
 * filter, RFC 5905 sec. 10, which takes the least-delay one of eight).  The clocks run at different rates,
 * so the offset moves through a window: a least-squares line of off2/2
 * against time through the kept exchanges, read at the instant the
 * caller asks for, makes the estimates of every pair of a mesh refer
 * to the same instant, which is what makes their sum around a loop
 * cancel the clocks.
 *
 * The uncertainty does not assume independent exchanges: the window's
 * exchanges, kept or not, are cut in the order given (time order, as a
 * probe writes them) into PAIRFIT_BATCHES contiguous batches, and the
 * variance of the line at time t is the sum over batches of the square
 * of the batch's sum of influences, times B / (B - 2) for the two fitted
 * parameters: the batch-means estimate lib/stats.c uses for offsetfit's
 * slope (stats_linfit), applied to the line's value.  A kept exchange's
 * influence is r_i (1/n + (x_t - mean x)(x_i - mean x) / Sxx); and as the
 * cut is itself a sample quantile, every exchange has one more, -g
 * (kept_i - F) / k (k the kept ones), g the residual the kept ones' line of residual
 * against delay gives at the cut: a batch that brings more exchanges
 * below the cut pushes out those at it (the quantile's term of the
 * influence function of a trimmed mean).  Where the offsets kept do not
 * move with the delay, g is near 0; in the lab they do, and without it
 * the intervals were too narrow (doc/ntpmesh.1).  Student's t with
 * PAIRFIT_DOF degrees of freedom turns it into an interval.
 */
#ifndef NTPX_PAIRFIT_H
#define NTPX_PAIRFIT_H

#include <stddef.h>
#include <stdint.h>

#define PAIRFIT_BATCHES	10
#define PAIRFIT_DOF	(PAIRFIT_BATCHES - 2)
/* the kept exchanges a fit needs: one a batch */
#define PAIRFIT_MIN	PAIRFIT_BATCHES

/* A sample without the truth. */
#define PAIRFIT_NO_TRUTH	INT64_MIN

/* One ok exchange of a client with a server. */
struct pair_sample {
	int64_t t;	/* ns: the exchange's midpoint, t1 + (t4 - t1) / 2, client's clock */
	int64_t off2;	/* ns: (t2 - t1) + (t3 - t4) */
	int64_t delay;	/* ns: (t4 - t1) - (t3 - t2) */
	int64_t true2;	/* ns: twice the true offset, server minus client; PAIRFIT_NO_TRUTH */
};

/* The fit of one window: what it takes to read the line at any instant. */
struct pairfit {
	size_t n;		/* ok exchanges in the window */
	size_t used;		/* of them, the lowest-delay ones fitted */
	int64_t tmin, tmax;	/* ns: the first and last of the n */
	int64_t delay_cut;	/* ns: the highest delay kept */
	int64_t origin;		/* ns: x = (t - origin) in s */
	double xbar, ybar;	/* s, ns: the kept ones' means (y = off2 / 2) */
	double b, sxx;		/* ns/s: the slope (the clocks' rate difference); s^2 */
	double rsum[PAIRFIT_BATCHES];	/* ns: each batch's sum of residuals */
	double zsum[PAIRFIT_BATCHES];	/* ns s: each batch's sum of (x - xbar) r */
	double csum[PAIRFIT_BATCHES];	/* each batch's kept less F times its all */
	double g;			/* ns: the residual the line expects at the cut */
	int truth;		/* every kept exchange had true2: */
	double true_ybar, true_b;	/* the true offset's line, fitted alike */
};

/*
 * The number of exchanges a fit of @n ok ones keeps at @frac (0 < frac
 * <= 1): ceil(frac n).  A fit needs PAIRFIT_MIN of them.
 */
size_t pairfit_keep(size_t n, double frac);

/*
 * Fits the @n samples at @s (in time order) at @frac; @scratch holds 3 n
 * doubles.  Returns 0, or -1 (the fit not set) when fewer than
 * PAIRFIT_MIN would be kept or every kept exchange has the same time.
 * Of the exchanges with the cut's own delay, the first in order are kept.
 */
int pairfit_fit(const struct pair_sample *s, size_t n, double frac, double *scratch,
		struct pairfit *f);

/* The offset (ns, server minus client) at @t (ns, client's clock); its variance (ns^2) in *var. */
double pairfit_at(const struct pairfit *f, int64_t t, double *var);

/* The true offset (ns) at @t as the same fit gives it (f->truth set). */
double pairfit_truth_at(const struct pairfit *f, int64_t t);

#endif
