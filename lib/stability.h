/* SPDX-License-Identifier: ISC */
/*
 * stability.h - frequency and time stability of a phase (offset) series
 * over averaging time: overlapping Allan deviation, modified Allan
 * deviation, time deviation, MTIE and TIE-RMS at tau = tau0 * 2^k (or
 * any multiple of tau0: stab_taus()), the definitions of NIST SP 1065
 * (Riley, Handbook of Frequency Stability Analysis) and ITU-T G.810.
 *
 * The series lives on a regular grid of slots tau0 apart; a slot without
 * a sample holds NAN and is a gap.  Gaps are never zeros: every ADEV,
 * TIE or MTIE term that would need a missing sample is left out (an MTIE
 * window takes the samples it holds), an MDEV term averages the samples
 * each of its three blocks holds and is left out when a block lacks half
 * of them, and each statistic is normalised by the number of terms it
 * kept, which is reported with it.
 */
#ifndef NTPX_STABILITY_H
#define NTPX_STABILITY_H

#include <stddef.h>
#include <stdint.h>

/* Octaves from tau0 up to 2^31 tau0: more than any run can hold. */
#define STAB_MAX_POINTS	32

/* A series brought onto its grid. */
struct stab_grid {
	double *x;		/* ns, one per slot, NAN in a gap */
	size_t slots;		/* slots from the first sample to the last */
	double tau0_s;		/* the slot width */
	size_t samples;		/* slots holding a sample */
	size_t gaps;		/* slots without one: slots - samples */
	size_t collisions;	/* samples dropped: their slot was taken */
};

/*
 * The nominal interval of samples taken at times t_s[0..n-1] (seconds,
 * ascending): the median of the positive differences between neighbours,
 * over at most 65536 of them spread through the run.  Gaps show up as
 * multiples and jitter as small departures, neither moves the median
 * while fewer than half the samples are missing.  Returns 0 when n < 2 or
 * no two samples differ in time.
 */
double stab_tau0(const double *t_s, size_t n);

/*
 * Brings samples (t_s[i], x_ns[i]) onto the grid of slots tau0_s apart
 * that starts at the earliest sample: sample i goes to slot
 * round((t_s[i] - t_min) / tau0_s), keeping its value (nearest-slot
 * assignment, no interpolation: a sample late by d carries the phase
 * error d times the frequency offset, 1e-4 d at 100 ppm, far below what
 * the statistics resolve).  A second sample in a slot already taken is
 * dropped and counted in collisions.  Empty slots are gaps.
 * Returns 0, or -1 with errno set: EINVAL for tau0 <= 0, n == 0, a value
 * that is not finite, or a span of more than 64 n + 64 slots (not one
 * run on one interval); ENOMEM.
 */
int stab_grid_build(struct stab_grid *g, const double *t_s, const double *x_ns,
		    size_t n, double tau0_s);
void stab_grid_free(struct stab_grid *g);

/* The statistics at tau = m tau0, and the terms behind each. */
struct stab_point {
	double tau_s;
	size_t m;
	uint64_t n_adev;	/* second differences x[j+2m] - 2 x[j+m] + x[j] */
	uint64_t n_mdev;	/* sums of m of them: windows of 3m slots */
	uint64_t n_tie;		/* differences x[j+m] - x[j] */
	uint64_t n_mtie;	/* windows of m + 1 slots with a sample */
	double adev;		/* overlapping Allan deviation (dimensionless) */
	double mdev;		/* modified Allan deviation (dimensionless) */
	double tdev_ns;		/* time deviation: tau / sqrt(3) mdev */
	double mtie_ns;		/* largest peak-to-peak phase in a window of tau */
	double tie_rms_ns;	/* RMS of the phase change over tau */
	/* With STAB_HADAMARD (stab_octaves_ext), else 0 and NAN: */
	uint64_t n_hdev;	/* third differences x[j+3m] - 3 x[j+2m] + 3 x[j+m] - x[j], j = 0, m, 2m.. */
	uint64_t n_ohdev;	/* the same at every j */
	double hdev;		/* Hadamard deviation, non-overlapping */
	double ohdev;		/* overlapping Hadamard deviation */
	/* Always: */
	uint64_t n_tot;		/* second differences of the doubly reflected series */
	double totdev;		/* total deviation (SP 1065 eq. (25)) */
};

/* What stab_octaves_ext() computes beyond ADEV, MDEV, TDEV, MTIE, TIE-RMS and TOTDEV. */
#define STAB_HADAMARD	1u
/*
 * And how: two lanes at a time even where the CPU has four (AVX2).  The
 * results are the same bits either way; the unit tests hold them to it.
 */
#define STAB_TWO_LANES	2u

/*
 * Every statistic at m = 1, 2, 4, ... while m <= (slots - 1) / 3 (tau up
 * to a third of the run) into out[0..max-1].  A statistic without a term
 * is NAN.  x[] is not changed.  Time O(slots log slots) with O(1) work
 * per term; memory two arrays of slots + 1 doubles (prefix sums and
 * prefix sample counts, whose memory then holds the window extremes of
 * the larger octaves) and 4 bytes a gap while gaps are under a 16th of
 * the slots.  Returns the number of points, or -1 with errno set
 * (ENOMEM).
 */
int stab_octaves(const double *x, size_t slots, double tau0_s,
		 struct stab_point *out, size_t max);

/*
 * The same with @what (STAB_HADAMARD: HDEV and OHDEV too, one more pass
 * per octave).  TOTDEV comes with every call: its terms are ADEV's but
 * for the 2 (m - 1) whose samples reach past an end, which the series
 * reflected about that end (x*[-k] = 2 x[0] - x[k], likewise at the last
 * slot) supplies, O(m) more per octave: O(slots) for all of them, not
 * the O(slots m) of building the reflected series for each tau.
 */
int stab_octaves_ext(const double *x, size_t slots, double tau0_s, unsigned what,
		     struct stab_point *out, size_t max);

/*
 * The same statistics at the averaging factors ms[0..n-1] (ascending,
 * each at least 1), up to the last at most (slots - 1) / 3, into out[]:
 * any tau grid (decades, every m, a list).  One pass per m for each
 * statistic, O(slots) a tau (MTIE's window extremes doubled once for
 * the whole list, O(slots log m)); memory as stab_octaves().  The
 * octaves' own values are the same as stab_octaves()' to rounding (it
 * sums in another order).  Returns the number of points, or -1 with
 * errno set (ENOMEM).
 */
int stab_taus(const double *x, size_t slots, double tau0_s, unsigned what, const size_t *ms,
	      size_t n, struct stab_point *out);

/*
 * The same statistics at one m by their definitions, O(slots m), HDEV,
 * OHDEV and TOTDEV included (TOTDEV from the reflected series built
 * out): the reference the unit tests hold stab_octaves() to.
 */
void stab_direct(const double *x, size_t slots, double tau0_s, size_t m,
		 struct stab_point *p);

/*
 * stability_ci.c: the dominant noise, equivalent degrees of freedom and
 * chi-squared intervals (NIST SP 1065 sec. 5.5, 5.4 and 5.3).
 */

/* The deviations an EDF is known for. */
enum stab_dev {
	STAB_DEV_ADEV,		/* overlapping Allan */
	STAB_DEV_MDEV,		/* modified Allan */
	STAB_DEV_HDEV,		/* Hadamard, non-overlapping */
	STAB_DEV_OHDEV,		/* Hadamard, overlapping */
	STAB_DEV_TOTDEV,	/* total */
	STAB_DEV_TDEV,		/* time deviation: MDEV's EDF */
	STAB_NDEV
};

#define STAB_NO_ALPHA	99	/* no noise identified */
#define STAB_LAG1_MIN	30	/* decimated samples the lag-1 method needs */
enum { STAB_ID_NONE, STAB_ID_LAG1, STAB_ID_B1 };

/*
 * The dominant power-law noise at tau = m tau0, as the alpha of S_y(f) ~
 * f^alpha: 2 white PM, 1 flicker PM, 0 white FM, -1 flicker FM, -2
 * random-walk FM (the method's -3 and beyond are -2, its 3 is 2).  With
 * at least STAB_LAG1_MIN samples x[k m] (gaps skipped), Riley and
 * Greenhall's lag-1 method: those samples less their least-squares
 * quadratic, differenced d = 0, 1, 2 times until delta = r1 / (1 + r1)
 * of their lag-1 autocorrelation r1 is below 0.25, alpha = 2 - 2 d -
 * round(2 delta).  With fewer, B1, the N-sample variance of the tau
 * averages over adev^2, against Barnes' B1(N, mu), and where it says PM
 * R(n) = (mdev / adev)^2 between white and flicker PM.  *how says which
 * (STAB_ID_*).  Returns STAB_NO_ALPHA when neither has data.
 * O(slots / m).
 */
int stab_noise_id(const double *x, size_t slots, double tau0_s, size_t m, double adev,
		  double mdev, int *how);

/*
 * Equivalent degrees of freedom of @dev at tau = m tau0 over @n slots
 * for the noise @alpha: Greenhall and Riley's algorithm (SP 1065 sec.
 * 5.4.1), for TOTDEV SP 1065 sec. 5.2.11's b n / m - c (for PM noise the
 * overlapping ADEV's plus 2).
 * NAN when the run is too short for one (n below the estimator's span)
 * or alpha is not one of the five.
 */
double stab_edf(enum stab_dev dev, int alpha, size_t m, double n);

/* The chi-squared distribution with @df degrees of freedom: P(X <= x), and its inverse. */
double stab_chi2_cdf(double x, double df);
double stab_chi2_quantile(double p, double df);

/*
 * The two-sided interval of confidence @conf (0.683: 1 sigma) of a
 * deviation with @edf degrees of freedom: dev sqrt(edf / chi2(1 - t))
 * to dev sqrt(edf / chi2(t)), t = (1 - conf) / 2 (SP 1065 eq. (45)).
 * NAN, NAN without an edf.
 */
void stab_interval(double dev, double edf, double conf, double *lo, double *hi);

/*
 * stability_table.c: what offsetfit --stability prints for one series,
 * the statistics at each tau with the noise and the intervals, computed
 * and returned as a table, not printed.
 */

/* The taus of a table, as multiples m of tau0. */
enum stab_taus {
	STAB_TAUS_OCTAVE,	/* 1, 2, 4, 8, ... (stab_octaves()) */
	STAB_TAUS_DECADE,	/* 1, 2, 4, 10, 20, 40, 100, ...: Stable32's and allantools' */
	STAB_TAUS_ALL,		/* every m */
	STAB_TAUS_LIST,		/* the list given */
};

/* What stab_table() computes. */
struct stab_spec {
	unsigned what;		/* STAB_HADAMARD for HDEV and OHDEV */
	int noise;		/* identify alpha at each tau */
	double conf;		/* > 0: intervals of this confidence (needs noise) */
	enum stab_taus taus;
	size_t max_m;		/* the largest m (0: none); never beyond (slots - 1) / 3 */
	const size_t *list;	/* STAB_TAUS_LIST: ascending, distinct, at least 1 */
	size_t nlist;
};

/*
 * One tau: the statistics, the noise (STAB_NO_ALPHA when not asked for
 * or not found; how: STAB_ID_*) and, with spec.conf, each deviation's
 * EDF and interval, indexed by enum stab_dev: NAN where there is none
 * (no value, no noise, or an EDF below STAB_EDF_MIN).
 */
struct stab_row {
	struct stab_point p;
	int alpha, how;
	double edf[STAB_NDEV], lo[STAB_NDEV], hi[STAB_NDEV];
};

struct stab_table {
	struct stab_row *row;
	size_t n;
};

/*
 * Fewer than two degrees of freedom: no interval ("too few samples").
 * Below two, even the 1-sigma interval spans more than a factor of 3
 * (chi-squared quantiles 0.35 and 3.7 at two), and the estimate rests on
 * less than two independent terms' worth.
 */
#define STAB_EDF_MIN	2.0

/* A deviation's value in @p (TDEV in ns, the others dimensionless). */
double stab_dev_value(const struct stab_point *p, enum stab_dev dev);

/*
 * How many taus @spec gives over @slots: the rows of its table, and the
 * passes over the grid it takes (stab_taus()).
 */
size_t stab_table_taus(const struct stab_spec *spec, size_t slots);

/*
 * The table of the grid @g as @spec asks, into @t (stab_table_free()).
 * Returns 0, or -1 with errno set (ENOMEM).
 */
int stab_table(const struct stab_grid *g, const struct stab_spec *spec, struct stab_table *t);
void stab_table_free(struct stab_table *t);

#endif
