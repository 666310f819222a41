/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/stability.c: the published NBS test values, the
 * textbook slopes of white and random-walk phase noise, the octave pass
 * against the definitions, gaps and the grid.
 *
 * Reference values: NIST SP 1065 (W. J. Riley, Handbook of Frequency
 * Stability Analysis, 2008), section 12.4, Table 30 (the NBS 10-point
 * set, computed with Stable32) and Table 31 (the 1000-point set made by
 * the prime-modulus generator n[i+1] = 16807 n[i] mod 2147483647 from
 * n[0] = 1234567890).  The handbook tabulates ADEV, overlapping ADEV,
 * MDEV, TDEV, HDEV and the total deviations; MTIE and TIE-RMS, which it
 * does not tabulate, are held to their definitions (stab_direct) and to
 * series whose values are known exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <cmocka.h>

#include "stability.h"
#include "stats.h"
#include "util_private.h"

static void assert_rel(double got, double want, double tol)
{
	double rel = fabs(got - want) / fabs(want);

	if (isnan(got) && isnan(want))	/* no term on either side */
		return;
	if (!(rel <= tol))
		fail_msg("got %.9g, want %.9g (relative error %.3g > %.3g)", got, want, rel, tol);
}

/* ADEV, MDEV, TIE-RMS and MTIE of an octave, with their counts, as the
   direct definitions give them (stab_direct). */
static void agrees_with_direct(const struct stab_point *o, const struct stab_point *p)
{
	assert_int_equal(o->n_adev, p->n_adev);
	assert_int_equal(o->n_mdev, p->n_mdev);
	assert_int_equal(o->n_tie, p->n_tie);
	assert_int_equal(o->n_mtie, p->n_mtie);
	assert_rel(o->adev, p->adev, 1e-9);
	assert_rel(o->mdev, p->mdev, 1e-6);
	assert_rel(o->tie_rms_ns, p->tie_rms_ns, 1e-9);
	assert_rel(o->mtie_ns, p->mtie_ns, 1e-12);
}

/* HDEV, OHDEV and TOTDEV, with their counts, as the definitions give them. */
static void hadamard_total_agree(const struct stab_point *o, const struct stab_point *p)
{
	assert_int_equal(o->n_hdev, p->n_hdev);
	assert_int_equal(o->n_ohdev, p->n_ohdev);
	assert_int_equal(o->n_tot, p->n_tot);
	assert_rel(o->hdev, p->hdev, 1e-9);
	assert_rel(o->ohdev, p->ohdev, 1e-9);
	assert_rel(o->totdev, p->totdev, 1e-9);
}

/*
 * The NBS 10-point set.  Table 29 gives it as frequency data (892, 809,
 * 823, 798, 671, 644, 883, 903, 677) and as the phase that is their running
 * sum less their mean, to five decimals; the frequencies are integrated
 * here so the phase carries no rounding.
 */
static const double nbs10_freq[9] = { 892, 809, 823, 798, 671, 644, 883, 903, 677 };

static void nbs10_phase(double x[10])
{
	int i;

	x[0] = 0;
	for (i = 0; i < 9; i++)
		x[i + 1] = x[i] + nbs10_freq[i];
}

static void nbs_10point(void **state)
{
	/* Table 30, tau = 1 and 2: overlapping ADEV, MDEV, TDEV. */
	static const double oadev[2] = { 91.22945, 85.95287 };
	static const double mdev[2] = { 91.22945, 74.78849 };
	static const double tdev[2] = { 52.67135, 86.35831 };
	/* The phase column exactly as Table 29 prints it, too. */
	static const double printed[10] = { 0.00000, 103.11111, 123.22222, 157.33333,
					    166.44444, 48.55555, -96.33333, -2.22222,
					    111.88889, 0.00000 };
	struct stab_point p[STAB_MAX_POINTS];
	double x[10];
	int k, n;

	(void)state;
	nbs10_phase(x);
	/* A run of 9 s: tau up to a third of it is 1 and 2 s. */
	n = stab_octaves(x, 10, 1.0, p, STAB_MAX_POINTS);
	assert_int_equal(n, 2);
	for (k = 0; k < 2; k++) {
		/* x is in "ns" here: adev and mdev come out scaled by 1e-9. */
		assert_rel(p[k].adev * 1e9, oadev[k], 1e-4);
		assert_rel(p[k].mdev * 1e9, mdev[k], 1e-4);
		assert_rel(p[k].tdev_ns, tdev[k], 1e-4);
	}
	assert_int_equal(p[0].n_adev, 8);
	assert_int_equal(p[1].n_adev, 6);
	assert_int_equal(p[1].n_mdev, 5);
	n = stab_octaves(printed, 10, 1.0, p, STAB_MAX_POINTS);
	assert_int_equal(n, 2);
	for (k = 0; k < 2; k++) {
		assert_rel(p[k].adev * 1e9, oadev[k], 1e-4);
		assert_rel(p[k].mdev * 1e9, mdev[k], 1e-4);
		assert_rel(p[k].tdev_ns, tdev[k], 1e-4);
	}
}

/*
 * Table 30 again: the Hadamard (non-overlapping and overlapping) and
 * total deviations, and the non-overlapping ADEV at tau = 2 (the
 * overlapping ADEV of every other sample, tau0 = 2).
 */
static void nbs_10point_more(void **state)
{
	static const double hdev[2] = { 70.80608, 116.7980 };
	static const double ohdev[2] = { 70.80608, 85.61487 };
	static const double totdev[2] = { 91.22945, 93.90379 };
	struct stab_point p[STAB_MAX_POINTS], d;
	double x[10], half[5];
	int k, n;

	(void)state;
	nbs10_phase(x);
	n = stab_octaves_ext(x, 10, 1.0, STAB_HADAMARD, p, STAB_MAX_POINTS);
	assert_int_equal(n, 2);
	for (k = 0; k < 2; k++) {
		assert_rel(p[k].hdev * 1e9, hdev[k], 1e-4);
		assert_rel(p[k].ohdev * 1e9, ohdev[k], 1e-4);
		assert_rel(p[k].totdev * 1e9, totdev[k], 1e-4);
		stab_direct(x, 10, 1.0, p[k].m, &d);
		assert_rel(d.hdev * 1e9, hdev[k], 1e-4);
		assert_rel(d.ohdev * 1e9, ohdev[k], 1e-4);
		assert_rel(d.totdev * 1e9, totdev[k], 1e-4);
	}
	assert_int_equal(p[1].n_hdev, 2);
	assert_int_equal(p[1].n_ohdev, 4);
	assert_int_equal(p[1].n_tot, 8);
	/* Without STAB_HADAMARD: none. */
	stab_octaves(x, 10, 1.0, p, STAB_MAX_POINTS);
	assert_true(isnan(p[0].hdev) && p[0].n_ohdev == 0);
	for (k = 0; k < 5; k++)
		half[k] = x[2 * k];
	stab_direct(half, 5, 2.0, 1, &d);
	assert_rel(d.adev * 1e9, 115.8082, 1e-4);
}

static void nbs_1000point(void **state)
{
	/*
	 * Table 31, tau = 1, 10, 100: overlapping ADEV, MDEV, TDEV; ADEV,
	 * HDEV, OHDEV and TOTDEV (the doubly reflected TOTVAR).
	 */
	static const size_t m[3] = { 1, 10, 100 };
	static const double oadev[3] = { 2.922319e-01, 9.159953e-02, 3.241343e-02 };
	static const double mdev[3] = { 2.922319e-01, 6.172376e-02, 2.170921e-02 };
	static const double tdev[3] = { 1.687202e-01, 3.563623e-01, 1.253382e+00 };
	static const double adev[3] = { 2.922319e-01, 9.965736e-02, 3.897804e-02 };
	static const double hdev[3] = { 2.943883e-01, 1.052754e-01, 3.910860e-02 };
	static const double ohdev[3] = { 2.943883e-01, 9.581083e-02, 3.237638e-02 };
	static const double totdev[3] = { 2.922319e-01, 9.134743e-02, 3.406530e-02 };
	struct stab_point p, oct[STAB_MAX_POINTS];
	double x[1001];
	uint64_t r = 1234567890;
	int i, n;

	(void)state;
	x[0] = 0;
	for (i = 0; i < 1000; i++) {
		if (i == 1)
			assert_int_equal(r, 395529916);	/* printed in SP 1065 */
		x[i + 1] = x[i] + (double)r / 2147483647.0;
		r = r * 16807 % 2147483647;
	}
	for (i = 0; i < 3; i++) {
		stab_direct(x, 1001, 1.0, m[i], &p);
		assert_rel(p.adev * 1e9, oadev[i], 1e-4);
		assert_rel(p.mdev * 1e9, mdev[i], 1e-4);
		assert_rel(p.tdev_ns, tdev[i], 1e-4);
	}
	n = stab_octaves(x, 1001, 1.0, oct, STAB_MAX_POINTS);
	assert_int_equal(n, 9);		/* m = 1 .. 256 <= 1000 / 3 */
	assert_rel(oct[0].adev * 1e9, oadev[0], 1e-4);
	assert_rel(oct[0].tdev_ns, tdev[0], 1e-4);
	/* Table 31's ADEV (non-overlapping: every m-th sample), HDEV, OHDEV, TOTDEV. */
	for (i = 0; i < 3; i++) {
		static double dec[1001];
		size_t j, k = 0;

		stab_direct(x, 1001, 1.0, m[i], &p);
		assert_rel(p.hdev * 1e9, hdev[i], 1e-4);
		assert_rel(p.ohdev * 1e9, ohdev[i], 1e-4);
		assert_rel(p.totdev * 1e9, totdev[i], 1e-4);
		for (j = 0; j < 1001; j += m[i])
			dec[k++] = x[j];
		stab_direct(dec, k, (double)m[i], 1, &p);
		assert_rel(p.adev * 1e9, adev[i], 1e-4);
	}
	/* The octave pass at tau = 1: the same HDEV, OHDEV and TOTDEV. */
	stab_octaves_ext(x, 1001, 1.0, STAB_HADAMARD, oct, STAB_MAX_POINTS);
	assert_rel(oct[0].hdev * 1e9, hdev[0], 1e-4);
	assert_rel(oct[0].ohdev * 1e9, ohdev[0], 1e-4);
	assert_rel(oct[0].totdev * 1e9, totdev[0], 1e-4);
}

static uint64_t rng = 88172645463325252ULL;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* Every octave against the definitions, with gaps and a drift. */
static void octaves_match_definitions(void **state)
{
	enum { N = 777 };
	struct stab_point oct[STAB_MAX_POINTS], p;
	static double x[N];
	int i, n;

	(void)state;
	for (i = 0; i < N; i++)
		x[i] = 1e6 + 250.0 * i + 40 * gauss();
	for (i = 0; i < N; i += 1 + (int)(uniform() * 60))
		x[i] = NAN;
	for (i = 300; i < 340; i++)	/* and one long outage */
		x[i] = NAN;
	n = stab_octaves_ext(x, N, 0.5, STAB_HADAMARD, oct, STAB_MAX_POINTS);
	assert_int_equal(n, 9);		/* m = 1 .. 256 <= 776 / 3 */
	for (i = 0; i < n; i++) {
		stab_direct(x, N, 0.5, oct[i].m, &p);
		assert_int_equal(oct[i].m, (size_t)1 << i);
		assert_float_equal(oct[i].tau_s, 0.5 * (double)oct[i].m, 1e-12);
		agrees_with_direct(&oct[i], &p);
		assert_rel(oct[i].tdev_ns, p.tdev_ns, 1e-6);
		hadamard_total_agree(&oct[i], &p);
	}
	assert_true(oct[0].n_mdev > 0 && oct[3].n_mdev > 0);	/* some MDEV compared */
}

/*
 * A run whose last chunk of 16384 slots starts past the last window of
 * the larger small octaves (N - 2048 < 16384): those octaves have no
 * terms there, and the pass must not read past the run (it did).
 */
static void last_chunk_past_windows(void **state)
{
	enum { N = 16384 + 100 };
	struct stab_point oct[STAB_MAX_POINTS], p;
	static double x[N];
	int i, n;

	(void)state;
	for (i = 0; i < N; i++)
		x[i] = 30 * gauss() + (i % 5000 == 7 ? NAN : 0);
	n = stab_octaves_ext(x, N, 1.0, STAB_HADAMARD, oct, STAB_MAX_POINTS);
	assert_int_equal(n, 13);	/* m = 1 .. 4096 <= 16483 / 3 */
	for (i = 9; i < n; i++) {	/* m = 512 .. 4096 */
		stab_direct(x, N, 1.0, oct[i].m, &p);
		assert_int_equal(oct[i].n_adev, p.n_adev);
		assert_int_equal(oct[i].n_mtie, p.n_mtie);
		assert_int_equal(oct[i].n_ohdev, p.n_ohdev);
		assert_rel(oct[i].adev, p.adev, 1e-9);
		assert_rel(oct[i].mtie_ns, p.mtie_ns, 1e-12);
		assert_rel(oct[i].ohdev, p.ohdev, 1e-9);
		assert_rel(oct[i].mdev, p.mdev, 1e-6);
	}
}

/*
 * Octaves 4096 and 8192 of x[0..N-1] against the definitions, with
 * STAB_TWO_LANES or not (@how); @dropped: some MDEV terms at 8192 left
 * out.
 */
static void large_octaves_of(const double *x, int N, unsigned how, int dropped)
{
	struct stab_point oct[STAB_MAX_POINTS], p;
	int i, n;

	n = stab_octaves_ext(x, (size_t)N, 1.0, how, oct, STAB_MAX_POINTS);
	assert_int_equal(n, 14);	/* m = 1 .. 8192 <= 25075 / 3 */
	for (i = 12; i < n; i++) {	/* m = 4096, 8192 */
		stab_direct(x, (size_t)N, 1.0, oct[i].m, &p);
		agrees_with_direct(&oct[i], &p);
	}
	assert_true(oct[13].n_mdev > 0);
	assert_true(!dropped == (oct[13].n_mdev == (uint64_t)(N - 3 * 8192 + 1)));
}

/*
 * Two octaves past SMALL_M (2048): the large octaves' path, whose MTIE
 * extremes double between them and whose MDEV block means are made
 * where they are used, against the definitions, two and four lanes at a
 * time.  Gaps every 200 slots on average and an outage longer than half
 * a block, which leaves out some MDEV terms at 8192: too many gaps to
 * list.  Then every 2000 and a shorter outage, few enough that the
 * block counts are looked at only around them.
 */
static void large_octaves(void **state)
{
	enum { N = 3 * 8192 + 500 };
	static double x[N];
	int i, few;

	(void)state;
	for (few = 0; few < 2; few++) {
		for (i = 0; i < N; i++)
			x[i] = 5e5 + 125.0 * i + 20 * gauss();
		for (i = 0; i < N; i += 1 + (int)(uniform() * (few ? 4000 : 400)))
			x[i] = NAN;
		for (i = 16000; i < (few ? 17200 : 20700); i++)
			x[i] = NAN;
		large_octaves_of(x, N, 0, !few);
		large_octaves_of(x, N, STAB_TWO_LANES, !few);
	}
}

/*
 * Four lanes (AVX2, where the CPU has it) and two give the same bits:
 * every statistic and count of every octave, small and large, on a run
 * with gaps, an outage and a chunk's end (STAB_TWO_LANES).
 */
static void two_and_four_lanes(void **state)
{
	enum { N = 3 * 8192 + 777 };
	struct stab_point four[STAB_MAX_POINTS], two[STAB_MAX_POINTS];
	static double x[N];
	double w = 0;
	int i, n;

	(void)state;
	for (i = 0; i < N; i++) {
		w += gauss();
		x[i] = 3e3 + 2500.5 * i + 300 * gauss() + 20 * w;
	}
	for (i = 0; i < N; i += 1 + (int)(uniform() * 300))
		x[i] = NAN;
	for (i = 5000; i < 7100; i++)
		x[i] = NAN;
	n = stab_octaves_ext(x, N, 0.1, STAB_HADAMARD, four, STAB_MAX_POINTS);
	assert_int_equal(stab_octaves_ext(x, N, 0.1, STAB_HADAMARD | STAB_TWO_LANES, two,
					  STAB_MAX_POINTS), n);
	assert_int_equal(n, 14);
	assert_memory_equal(four, two, (size_t)n * sizeof(four[0]));
}

/* A line: every deviation 0, MTIE and TIE-RMS the slope times tau. */
static void line_known_values(void **state)
{
	enum { N = 100 };
	struct stab_point oct[STAB_MAX_POINTS];
	double x[N];
	int i, n;

	(void)state;
	for (i = 0; i < N; i++)
		x[i] = -500 + 3.0 * i;
	n = stab_octaves(x, N, 1.0, oct, STAB_MAX_POINTS);
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++) {
		double m = (double)oct[i].m;

		assert_true(oct[i].adev < 1e-20);
		assert_true(oct[i].mdev < 1e-20);
		assert_float_equal(oct[i].mtie_ns, 3 * m, 1e-9);
		assert_float_equal(oct[i].tie_rms_ns, 3 * m, 1e-9);
		assert_int_equal(oct[i].n_adev, N - 2 * oct[i].m);
		assert_int_equal(oct[i].n_mdev, N - 3 * oct[i].m + 1);
		assert_int_equal(oct[i].n_mtie, N - oct[i].m);
	}
}

/* Least-squares slope of log10(dev) against log10(tau), octaves lo..hi. */
static double slope(const struct stab_point *p, int lo, int hi, int which)
{
	double lx[STAB_MAX_POINTS], ly[STAB_MAX_POINTS];
	struct linfit f;
	int i, k = 0;

	for (i = lo; i <= hi; i++, k++) {
		lx[k] = log10(p[i].tau_s);
		ly[k] = log10(which == 0 ? p[i].adev : which == 1 ? p[i].mdev : p[i].tdev_ns);
	}
	assert_int_equal(stats_linfit(lx, ly, (size_t)k, &f), 0);
	return f.b;
}

static void white_pm_slopes(void **state)
{
	enum { N = 1 << 18 };
	struct stab_point p[STAB_MAX_POINTS];
	double *x = malloc(N * sizeof(double));
	int i, n;

	(void)state;
	assert_non_null(x);
	for (i = 0; i < N; i++)
		x[i] = 100 * gauss();
	n = stab_octaves(x, N, 0.01, p, STAB_MAX_POINTS);
	assert_int_equal(n, 17);
	/* SP 1065 Table 8: ADEV tau^-1, MDEV tau^-3/2, TDEV tau^-1/2. */
	assert_float_equal(slope(p, 0, 11, 0), -1.0, 0.1);
	assert_float_equal(slope(p, 0, 11, 1), -1.5, 0.1);
	assert_float_equal(slope(p, 0, 11, 2), -0.5, 0.1);
	/* White PM at m = 1: ADEV = sqrt(3) sigma / tau. */
	assert_rel(p[0].adev, sqrt(3) * 100e-9 / 0.01, 0.01);
	free(x);
}

static void random_walk_pm_slopes(void **state)
{
	enum { N = 1 << 18 };
	struct stab_point p[STAB_MAX_POINTS];
	double *x = malloc(N * sizeof(double));
	int i, n;

	(void)state;
	assert_non_null(x);
	x[0] = 0;
	for (i = 1; i < N; i++)
		x[i] = x[i - 1] + 100 * gauss();
	n = stab_octaves(x, N, 1.0, p, STAB_MAX_POINTS);
	assert_int_equal(n, 17);
	/* Random-walk phase is white FM: ADEV and MDEV tau^-1/2, TDEV tau^1/2. */
	assert_float_equal(slope(p, 0, 11, 0), -0.5, 0.1);
	assert_float_equal(slope(p, 2, 11, 1), -0.5, 0.1);
	assert_float_equal(slope(p, 2, 11, 2), 0.5, 0.1);
	free(x);
}

/* A gap is left out, never taken as zero. */
static void gaps_are_not_zeros(void **state)
{
	enum { N = 4096 };
	struct stab_point p[STAB_MAX_POINTS], full[STAB_MAX_POINTS];
	static double x[N], y[N];
	size_t gaps = 0;
	int i, n;

	(void)state;
	/* A constant phase with holes: every deviation stays 0. */
	for (i = 0; i < N; i++)
		x[i] = i % 7 == 3 ? NAN : 12345;
	n = stab_octaves(x, N, 1.0, p, STAB_MAX_POINTS);
	assert_true(n > 8);
	for (i = 0; i < n; i++) {
		assert_true(p[i].adev == 0 && p[i].mtie_ns == 0);
		assert_true(p[i].mdev == 0 || (isnan(p[i].mdev) && !p[i].n_mdev));
		assert_true(p[i].tie_rms_ns == 0);
		assert_true(p[i].n_adev > 0 && p[i].n_adev < N - 2 * p[i].m);
		assert_true(p[i].n_mtie == N - p[i].m);
	}
	/*
	 * An MDEV term needs half of each of its three blocks of m slots.
	 * At m = 1 that is three slots without a gap: the gaps (3, 10, ...
	 * 4091) leave 584 runs of 6 with 4 windows each, a first run of 3
	 * (1 window) and a last of 4 (2).  From m = 2 on every block holds
	 * more than half, and every window counts.
	 */
	assert_int_equal(p[0].n_mdev, 584 * 4 + 1 + 2);
	for (i = 1; i < n; i++) {
		assert_int_equal(p[i].n_mdev, N - 3 * p[i].m + 1);
		assert_true(p[i].mdev == 0);
	}

	/* White PM with 5% of the samples missing: the same ADEV. */
	for (i = 0; i < N; i++) {
		x[i] = y[i] = 50 * gauss();
		if (uniform() < 0.05) {
			y[i] = NAN;
			gaps++;
		}
	}
	n = stab_octaves(x, N, 1.0, full, STAB_MAX_POINTS);
	assert_int_equal(stab_octaves(y, N, 1.0, p, STAB_MAX_POINTS), n);
	assert_true(gaps > 100);
	for (i = 0; i < 6; i++) {
		/* ~(1 - 0.05)^3 of the terms survive */
		assert_true(p[i].n_adev < full[i].n_adev * 0.9);
		assert_rel(p[i].adev, full[i].adev, 0.05);
	}
	/*
	 * MDEV keeps (nearly) every term and stays close while the terms
	 * are many (m <= N / 64; beyond, the few independent blocks make
	 * both estimates scatter).
	 */
	for (i = 0; (size_t)1 << i <= N / 64; i++) {
		assert_true(p[i].n_mdev > 0);
		assert_rel(p[i].mdev, full[i].mdev, 0.1);
	}
}

/*
 * The chi-squared quantiles of any table (3.247 and 20.483 bound the
 * central 95 % at 10 degrees of freedom), and the distribution function
 * they invert.
 */
static void chi2_quantiles(void **state)
{
	(void)state;
	assert_rel(stab_chi2_quantile(0.025, 10), 3.24697, 1e-5);
	assert_rel(stab_chi2_quantile(0.975, 10), 20.4832, 1e-5);
	assert_rel(stab_chi2_quantile(0.5, 1), 0.454936, 1e-5);
	assert_rel(stab_chi2_quantile(0.95, 2), 5.99146, 1e-5);
	assert_rel(stab_chi2_quantile(0.05, 100), 77.9295, 1e-5);
	assert_rel(stab_chi2_cdf(stab_chi2_quantile(0.1587, 2.5), 2.5), 0.1587, 1e-9);
	/* a million degrees of freedom: the median is df - 2/3 */
	assert_rel(stab_chi2_quantile(0.5, 1e6), 1e6 - 2.0 / 3, 1e-9);
	assert_true(isnan(stab_chi2_quantile(0, 10)) && isnan(stab_chi2_quantile(0.5, 0)));
}

/*
 * EDF and 1-sigma interval against Stable32 (Riley's implementation of
 * the same algorithm), which printed, for a 556990-point phase record,
 * each deviation's interval at each tau with the noise it found: the
 * ratios lo / dev and hi / dev depend only on N, m, alpha and the
 * estimator.  Stable32 prints five digits: agreement to 3e-4.  Cases:
 * Greenhall's tables (J > 100), the sum with F finite and infinite
 * (HDEV), white PM's closed form, and TOTDEV's b N / m - c.
 */
static void edf_stable32(void **state)
{
	static const struct {
		enum stab_dev dev;
		int alpha;
		size_t m;
		double lo, dev_, hi;
	} t[] = {
		{ STAB_DEV_ADEV, 0, 1000, 4.6228, 4.7341, 4.8538 },
		{ STAB_DEV_ADEV, 0, 200, 1.7757, 1.7949, 1.8148 },
		{ STAB_DEV_ADEV, 1, 100, 3.3913, 3.4040, 3.4168 },
		{ STAB_DEV_ADEV, 2, 10, 3.2076, 3.2118, 3.2160 },
		{ STAB_DEV_MDEV, 0, 1000, 2.3843, 2.4555, 2.5336 },
		{ STAB_DEV_MDEV, 1, 100, 8.6993, 8.7807, 8.8645 },
		{ STAB_DEV_OHDEV, 0, 1000, 4.7257, 4.8484, 4.9813 },
		{ STAB_DEV_OHDEV, 1, 100, 3.5493, 3.5636, 3.5781 },
		{ STAB_DEV_HDEV, 0, 1000, 5.6218, 5.8509, 6.1106 },
		{ STAB_DEV_HDEV, 1, 100, 3.7319, 3.7843, 3.8390 },
		{ STAB_DEV_HDEV, 2, 10, 3.3925, 3.4078, 3.4233 },
		{ STAB_DEV_TOTDEV, 0, 1000, 1.2558, 1.2860, 1.3184 },
	};
	double lo, hi, l1, h1, e;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		e = stab_edf(t[i].dev, t[i].alpha, t[i].m, 556990);
		stab_interval(t[i].dev_, e, erf(1 / sqrt(2)), &lo, &hi);
		assert_rel(lo, t[i].lo, 3e-4);
		assert_rel(hi, t[i].hi, 3e-4);
	}
	/* TOTDEV, white FM: SP 1065's 1.5 N / m */
	assert_rel(stab_edf(STAB_DEV_TOTDEV, 0, 10, 1000), 150, 1e-12);
	/* a run shorter than the estimator, or no such noise: none */
	assert_true(isnan(stab_edf(STAB_DEV_HDEV, 0, 4, 12)));
	assert_true(isnan(stab_edf(STAB_DEV_ADEV, STAB_NO_ALPHA, 1, 100)));
	stab_interval(1, NAN, 0.683, &lo, &hi);
	assert_true(isnan(lo) && isnan(hi));
	/* 95 % is wider than 1 sigma */
	e = stab_edf(STAB_DEV_ADEV, 0, 10, 1000);
	stab_interval(1, e, 0.95, &lo, &hi);
	stab_interval(1, e, 0.683, &l1, &h1);
	assert_true(lo < l1 && l1 < 1 && 1 < h1 && h1 < hi);
}

/* @got against a value printed to the place @unit: within half of it. */
static void assert_printed(double got, double printed, double unit)
{
	if (!(fabs(got - printed) <= unit / 2))
		fail_msg("got %.9g, printed %.9g (off by more than half of %g)", got, printed, unit);
}

/*
 * The worked example of the EDF algorithm that SP 1065 sec. 5.4.1 takes
 * from its reference [2] (Greenhall and Riley, PTTI 2003, sec. 4):
 * overlapping ADEV, white FM, 1025 phase samples, "new edf" at m = 1 ..
 * 512, printed to three figures.  Each is held to half a unit of its
 * last printed digit but m = 4's: the paper prints 314, and its own
 * algorithm (sec. 3.4 and 3.6.2, J = 12 <= Jmax, no table) gives 313.47,
 * here and evaluated from the paper's pseudocode at 40 digits apart from
 * this tree, with J up to 100 the same; that entry is held to one unit.
 */
static void edf_greenhall_riley_example(void **state)
{
	static const struct {
		size_t m;
		double edf, unit;
	} t[] = {
		{ 1, 801, 1 }, { 2, 554, 1 }, { 4, 314, 2 }, { 8, 170.0, 0.1 },
		{ 16, 88.5, 0.1 }, { 32, 44.4, 0.1 }, { 64, 21.8, 0.1 },
		{ 128, 9.83, 0.01 }, { 256, 4.00, 0.01 }, { 512, 1, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++)
		assert_printed(stab_edf(STAB_DEV_ADEV, 0, t[i].m, 1025), t[i].edf, t[i].unit);
}

/*
 * SP 1065 sec. 12.4, Table 32: error bars of the 1000-point set (1001
 * phase samples) at m = 10, white FM.  Its chi-squared column is that of
 * the whole degrees of freedom below each EDF (146.177 -> 146, 94.620 ->
 * 94): at 146.177 itself the quantiles are 119.23, 114.60 and 181.54, not
 * the printed 119.07, 114.45 and 181.34.  Exact quantiles (30 digits,
 * outside this tree) at 146 and 94 lie up to 0.0093 from the printed
 * ones, which Stable32's approximation of the inverse made: held to one
 * unit of the printed 0.01, not half.  The table's EDFs themselves are
 * the older approximations (its Table 5 for ADEV; MVAR through the HVAR
 * formula), which sec. 5.4.1 says Greenhall and Riley's algorithm
 * supersedes: that algorithm gives 135.07 and 94.63, the 11 % gap sec. 4
 * of their paper shows between old and new (186.3 and 170.0 at N = 1025,
 * m = 8), so the table's 146.177 is not held here.
 */
static void sp1065_table32(void **state)
{
	static const struct {
		double df, p, chi2;
	} t[] = {
		{ 146, 0.950, 119.07 }, { 146, 0.025, 114.45 }, { 146, 0.975, 181.34 },
		{ 94, 0.950, 72.64 }, { 94, 0.025, 69.06 }, { 94, 0.975, 122.71 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++)
		/* single-sided 95 %: the upper bound's p = 0.05 */
		assert_printed(stab_chi2_quantile(t[i].p == 0.950 ? 0.05 : t[i].p, t[i].df),
			       t[i].chi2, 0.02);
	/* the double-sided 95 % upper bound is the single-sided 97.5 % one */
	assert_rel(stab_chi2_quantile(0.025, 146.177), 114.5973765, 1e-9);
}

/*
 * TOTDEV's EDF as SP 1065 sec. 5.2.11 gives it: b T/tau - c with b =
 * 1.500, 1.168, 0.927 and c = 0, 0.222, 0.358 for white, flicker and
 * random-walk FM (Table 7 rounds them to 1.50, 1.17/0.22, 0.93/0.36), and
 * for white and flicker PM the overlapping ADEV's plus 2.  Against
 * Stable32's TOTDEV of an OCXO (19982 frequency samples, 19983 phase;
 * allantools' tests/ocxo/totdev_octave.txt), the flicker and random-walk
 * FM taus, printed to five figures.  Each bound is held to 6e-5: the
 * five figures of it and of the deviation, 1e-5 each, and Stable32's
 * inverse chi-squared, up to 8e-5 off in the quantile (Table 32, above),
 * 4e-5 in a deviation.  Table 7's rounded coefficients miss by 1e-4 to
 * 2.7e-4.
 * The file's m = 256 (flicker FM: 4.9302, 5.2818, 5.7211) is not held:
 * its bounds imply an EDF of 90.98 to 91.04, and neither set of
 * coefficients gives that (90.95 and 91.11).
 */
static void totdev_edf(void **state)
{
	static const struct {
		size_t m;
		int alpha;
		double lo, dev_, hi;
	} t[] = {
		{ 512, -2, 4.6681, 5.1857, 5.9255 },
		{ 1024, -1, 5.6419, 6.4162, 7.6321 },
	};
	double lo, hi, e;
	size_t i;
	int a;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		e = stab_edf(STAB_DEV_TOTDEV, t[i].alpha, t[i].m, 19983);
		stab_interval(t[i].dev_, e, erf(1 / sqrt(2)), &lo, &hi);
		assert_rel(lo, t[i].lo, 6e-5);
		assert_rel(hi, t[i].hi, 6e-5);
	}
	for (a = 1; a <= 2; a++)
		assert_rel(stab_edf(STAB_DEV_TOTDEV, a, 64, 10000),
			   stab_edf(STAB_DEV_ADEV, a, 64, 10000) + 2, 1e-15);
	assert_true(isnan(stab_edf(STAB_DEV_TOTDEV, 2, 6000, 10000)));
}

/*
 * n samples of phase whose frequency has the power law S_y(f) ~
 * f^alpha: white noise through Kasdin and Walter's filter for the
 * phase's f^(alpha - 2) ("Discrete simulation of power law noise",
 * 1992; allantools' noise_kasdin), h[0] = 1, h[k] = h[k-1] (k - 1 +
 * (2 - alpha) / 2) / k: white PM a delta, white FM a running sum,
 * random-walk FM a running sum of running sums, the flicker noises the
 * half-integer steps between.  Then an offset and a drift of 25 ns per
 * sample, which the identification must see through.
 */
static void kasdin(double *x, size_t n, int alpha)
{
	double *w = malloc(n * sizeof(double)), *h = malloc(n * sizeof(double));
	size_t i, k;

	assert_non_null(w);
	assert_non_null(h);
	h[0] = 1;
	for (k = 1; k < n; k++)
		h[k] = h[k - 1] * ((double)k - 1 + (2 - alpha) / 2.0) / (double)k;
	for (i = 0; i < n; i++)
		w[i] = gauss();
	for (i = 0; i < n; i++) {
		double s = 0;

		if (alpha == 2)		/* h a delta, or the running sums that h is */
			s = w[i];
		else if (alpha == 0)
			s = w[i] + (i ? x[i - 1] : 0);
		else if (alpha == -2)
			s = w[i] + (i ? 2 * x[i - 1] - (i > 1 ? x[i - 2] : 0) : 0);
		else
			for (k = 0; k <= i; k++)
				s += h[k] * w[i - k];
		x[i] = s;
	}
	for (i = 0; i < n; i++)
		x[i] = 1e3 * x[i] + 5e4 + 25.0 * (double)i;
	free(w);
	free(h);
}

#define NOISE_N		8192
#define NOISE_SEEDS	2
#define NOISE_SEED(s)	(20040601 + 7919 * (uint64_t)(s))

/*
 * alpha by allantools' autocorr_noise_id(x, m, "phase") (Riley and
 * Greenhall's method as allantools, commit 599dc9e, implements it) for
 * each series kasdin() makes here, seed NOISE_SEED(s) for s = 0, 1 and
 * alpha 2 .. -2 in turn, at m = 1, 2, 4 .. 256 (32 samples or more),
 * as allantools gives it: 3 and -3 past the five noises, which
 * offsetfit's EDFs know, are 2 and -2 here.
 * Computed once, with Debian's python3-numpy and python3-scipy and
 * allantools' source:
 *
 *   build/unit/stability.t --dump-noise >noise.txt
 *   python3 -c 'import sys, numpy as np; sys.path.insert(0, ALLANTOOLS)
 *   from allantools import ci
 *   for s in open("noise.txt").read().split("\n\n")[:-1]:
 *       x = np.array([float(v) for v in s.split()])
 *       print([ci.autocorr_noise_id(x, 2**k)[0] for k in range(9)])'
 */
static const int allantools_alpha[NOISE_SEEDS][5][9] = {
	{
		{ 2, 2, 2, 2, 2, 2, 2, 2, 3 },
		{ 1, 1, 1, 1, 1, 1, 2, 2, 2 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0 },
		{ -1, -1, -1, -1, -1, -2, -1, -1, -2 },
		{ -2, -2, -2, -2, -2, -3, -2, -2, -2 },
	},
	{
		{ 2, 2, 2, 2, 2, 2, 2, 2, 2 },
		{ 1, 1, 1, 1, 2, 1, 2, 2, 2 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0 },
		{ -1, -1, -1, -1, -1, -2, -1, -2, 0 },
		{ -2, -2, -2, -2, -2, -2, -2, -2, -2 },
	},
};

/* The series of the table above, one per paragraph, for allantools. */
static void dump_noise(void)
{
	static double x[NOISE_N];
	int s, alpha;
	size_t i;

	for (s = 0; s < NOISE_SEEDS; s++)
		for (alpha = 2; alpha >= -2; alpha--) {
			rng = NOISE_SEED(s);
			kasdin(x, NOISE_N, alpha);
			for (i = 0; i < NOISE_N; i++)
				printf("%.17g\n", x[i]);
			printf("\n");
		}
}

/*
 * Each of the five noises, made with fixed seeds: at every tau with 32
 * samples or more (the lag-1 method), alpha is allantools' for the same
 * series, as the table above holds it; and it is the noise made at
 * every such tau for white PM and random-walk FM, at 64 samples or more
 * for white FM, and at m = 1 and 2 for the flicker noises.  Decimated,
 * a flicker noise whose band reaches tau0's Nyquist frequency folds
 * into a white one: at m = 16 the method (Stable32's and allantools'
 * alike) finds flicker PM 9 times in 20 seeds, flicker FM 14 times (doc/
 * offsetfit.1 gives the rates).  Under 30 samples, B1 and R(n): one of
 * the five.
 */
static void noise_identification(void **state)
{
	static double x[NOISE_N];
	struct stab_point p[STAB_MAX_POINTS];
	int alpha, s, i, n, how, lag1 = 0, b1 = 0;

	(void)state;
	for (s = 0; s < NOISE_SEEDS; s++)
		for (alpha = 2; alpha >= -2; alpha--) {
			rng = NOISE_SEED(s);
			kasdin(x, NOISE_N, alpha);
			n = stab_octaves(x, NOISE_N, 1.0, p, STAB_MAX_POINTS);
			assert_int_equal(n, 12);	/* m = 1 .. 2048 */
			for (i = 0; i < n; i++) {
				int got = stab_noise_id(x, NOISE_N, 1.0, p[i].m, p[i].adev, p[i].mdev,
							&how), ref;
				size_t samples = (NOISE_N - 1) / p[i].m + 1;
				int sure = alpha == 2 || alpha == -2 ? 1 : alpha == 0 ? samples >= 64 :
					   p[i].m <= 2;

				if (samples < STAB_LAG1_MIN) {
					assert_int_equal(how, STAB_ID_B1);
					assert_true(got >= -2 && got <= 2);
					b1++;
					continue;
				}
				assert_int_equal(how, STAB_ID_LAG1);
				ref = allantools_alpha[s][2 - alpha][i];
				ref = ref > 2 ? 2 : ref < -2 ? -2 : ref;
				if (got != ref)
					fail_msg("seed %d alpha %d m %zu: got %d, allantools %d", s, alpha,
						 p[i].m, got, ref);
				if (sure && got != alpha)
					fail_msg("seed %d alpha %d m %zu: got %d", s, alpha, p[i].m, got);
				lag1++;
			}
		}
	assert_int_equal(lag1, NOISE_SEEDS * 5 * 9);	/* m = 1 .. 256 */
	assert_int_equal(b1, NOISE_SEEDS * 5 * 3);	/* m = 512 .. 2048 */
	/* Too few samples for either: none. */
	assert_int_equal(stab_noise_id(x, 3, 1.0, 1, 1e-9, 1e-9, &how), STAB_NO_ALPHA);
	assert_int_equal(how, STAB_ID_NONE);
}

/*
 * Two noises whose Allan variances cross at m_c = 64: white PM of 1 ns
 * and white FM of phase steps b ns (3 / m^2 = b^2 / m), and white FM of
 * 1 ns steps and random-walk FM of frequency steps b (1 / m = b^2 m /
 * 3).  At the first tau where the lower noise is identified, m lies
 * within one octave of m_c, and the upper noise holds at every tau up
 * to an octave before it (white PM yields to flicker PM's value first:
 * the differences of the mixture correlate as flicker PM's do from
 * about m_c / 9).  Over 20 seeds the crossover lay within the octave
 * 19 times for the first pair (once at 256) and 20 for the second.
 */
static void noise_crossover(void **state)
{
	enum { N = 1 << 16 };
	static double x[N];
	const double mc = 64;
	struct stab_point p[STAB_MAX_POINTS];
	int kind, s, k, n, how;
	size_t i;

	(void)state;
	for (kind = 0; kind < 2; kind++)
		for (s = 0; s < 3; s++) {
			double y = 0, ph = 0, b = kind == 0 ? sqrt(3 / mc) : sqrt(3) / mc;
			int upper = kind == 0 ? 2 : 0, lower = kind == 0 ? 0 : -2, cross = -1;

			rng = 777 + 101 * (uint64_t)s;
			for (i = 0; i < N; i++) {
				if (kind == 0) {
					ph += b * gauss();
					x[i] = gauss() + ph;
				} else {
					y += b * gauss();
					ph += gauss() + y;
					x[i] = ph;
				}
			}
			n = stab_octaves(x, N, 1.0, p, STAB_MAX_POINTS);
			for (k = 0; k < n && cross < 0; k++) {
				int a = stab_noise_id(x, N, 1.0, p[k].m, p[k].adev, p[k].mdev, &how);

				if (a == lower)
					cross = k;
			}
			if (cross < 0 || p[cross].m < mc / 2 || p[cross].m > 2 * mc)
				fail_msg("kind %d seed %d: the crossover at m %zu, not within an octave "
					 "of %g", kind, s, cross < 0 ? 0 : p[cross].m, mc);
			for (k = 0; kind == 1 && p[k].m * 2 < p[cross].m; k++)
				assert_int_equal(stab_noise_id(x, N, 1.0, p[k].m, p[k].adev, p[k].mdev,
							       &how), upper);
			assert_int_equal(stab_noise_id(x, N, 1.0, 1, p[0].adev, p[0].mdev, &how),
					 upper);
		}
}

/*
 * Any averaging factor, by stab_taus(): the definitions (stab_direct) at
 * m that are not octaves, with gaps and a drift, and the octaves' own
 * values (stab_octaves) where they meet.  MTIE's window of m + 1 slots
 * needs two extremes of a level w < m + 1: every m from 1 to 40 goes
 * through each offset m + 1 - w.
 */
static void taus_any_m(void **state)
{
	enum { N = 1001 };
	static double x[N];
	struct stab_point oct[STAB_MAX_POINTS], any[64], p;
	size_t ms[64], i, n = 0;
	int k, no;

	(void)state;
	for (i = 0; i < N; i++)
		x[i] = i % 37 == 5 || (i > 400 && i < 420) ? NAN : 3 * gauss() + 0.5 * (double)i;
	for (i = 1; i <= 40; i++)
		ms[n++] = i;
	ms[n++] = 64;
	ms[n++] = 100;
	ms[n++] = 333;
	ms[n++] = 334;	/* past a third of the run: not there */
	k = stab_taus(x, N, 0.5, STAB_HADAMARD, ms, n, any);
	assert_int_equal(k, (int)n - 1);
	for (i = 0; i < (size_t)k; i++) {
		stab_direct(x, N, 0.5, ms[i], &p);
		agrees_with_direct(&any[i], &p);
		assert_rel(any[i].tau_s, 0.5 * (double)ms[i], 1e-15);
		hadamard_total_agree(&any[i], &p);
	}
	no = stab_octaves_ext(x, N, 0.5, STAB_HADAMARD, oct, STAB_MAX_POINTS);
	for (k = 0; k < no && oct[k].m <= 64; k++) {
		size_t m = oct[k].m, j = m <= 40 ? m - 1 : 40;	/* 64 is ms[40] */

		assert_int_equal(any[j].m, m);
		agrees_with_direct(&any[j], &oct[k]);
		assert_rel(any[j].totdev, oct[k].totdev, 1e-12);
		assert_rel(any[j].ohdev, oct[k].ohdev, 1e-12);
	}
	/* a list that is not ascending stops where it turns */
	ms[0] = 5, ms[1] = 3;
	assert_int_equal(stab_taus(x, N, 0.5, 0, ms, 2, any), 1);
}

/* The grid: nearest slot, gaps counted, collisions dropped, tau0. */
static void grid_from_times(void **state)
{
	enum { N = 1000 };
	static double t[N], v[N];
	struct stab_grid g;
	size_t i, k = 0;
	double tau0;

	(void)state;
	for (i = 0; i < N; i++) {
		if (i % 10 == 9)	/* a lost exchange every tenth */
			continue;
		t[k] = 5 + 0.25 * (double)i + 0.01 * (uniform() - 0.5);
		v[k] = (double)i;
		k++;
	}
	tau0 = stab_tau0(t, k);
	assert_float_equal(tau0, 0.25, 0.005);
	assert_int_equal(stab_grid_build(&g, t, v, k, 0.25), 0);
	assert_int_equal(g.slots, N - 1);	/* the last slot is a gap: cut */
	assert_int_equal(g.samples, k);
	assert_int_equal(g.gaps, N - 1 - k);
	assert_int_equal(g.collisions, 0);
	for (i = 0; i < g.slots; i++) {
		if (i % 10 == 9)
			assert_true(isnan(g.x[i]));
		else
			assert_float_equal(g.x[i], (double)i, 0);
	}
	stab_grid_free(&g);

	/* Two samples in one slot: the first stays. */
	t[0] = 0, t[1] = 1, t[2] = 1.1, t[3] = 3;
	v[0] = 1, v[1] = 2, v[2] = 3, v[3] = 4;
	assert_int_equal(stab_grid_build(&g, t, v, 4, 1.0), 0);
	assert_int_equal(g.slots, 4);
	assert_int_equal(g.collisions, 1);
	assert_int_equal(g.gaps, 1);
	assert_float_equal(g.x[1], 2, 0);
	assert_true(isnan(g.x[2]));
	stab_grid_free(&g);

	/* Not one run on one interval: refused, like bad arguments. */
	t[1] = 1e9;
	assert_int_equal(stab_grid_build(&g, t, v, 4, 1.0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(stab_grid_build(&g, t, v, 4, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_true(stab_tau0(t, 1) == 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nbs_10point),
		cmocka_unit_test(nbs_10point_more),
		cmocka_unit_test(nbs_1000point),
		cmocka_unit_test(octaves_match_definitions),
		cmocka_unit_test(line_known_values),
		cmocka_unit_test(last_chunk_past_windows),
		cmocka_unit_test(large_octaves),
		cmocka_unit_test(two_and_four_lanes),
		cmocka_unit_test(white_pm_slopes),
		cmocka_unit_test(random_walk_pm_slopes),
		cmocka_unit_test(gaps_are_not_zeros),
		cmocka_unit_test(grid_from_times),
		cmocka_unit_test(chi2_quantiles),
		cmocka_unit_test(edf_stable32),
		cmocka_unit_test(edf_greenhall_riley_example),
		cmocka_unit_test(sp1065_table32),
		cmocka_unit_test(totdev_edf),
		cmocka_unit_test(noise_identification),
		cmocka_unit_test(noise_crossover),
		cmocka_unit_test(taus_any_m),
	};

	if (argc == 2 && !strcmp(argv[1], "--dump-noise")) {
		dump_noise();
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
