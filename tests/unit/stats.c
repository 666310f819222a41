/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/stats.c against hand-computed values. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stats.h"
#include "support/rng.h"
#include "util_private.h"

static void linfit_exact_line(void **state)
{
	/* y = 3 + 2x exactly: a = 3, b = 2, no residual. */
	double x[] = { 0, 1, 2, 3, 4 }, y[] = { 3, 5, 7, 9, 11 };
	struct linfit f;

	(void)state;
	assert_int_equal(stats_linfit(x, y, 5, &f), 0);
	assert_float_equal(f.a, 3, 1e-12);
	assert_float_equal(f.b, 2, 1e-12);
	assert_float_equal(f.rms, 0, 1e-12);
}

static void linfit_by_hand(void **state)
{
	/*
	 * x = 0 1 2 3, y = 1 3 2 4: mean x 1.5, mean y 2.5,
	 * Sxx = 5, Sxy = (-1.5)(-1.5) + (-0.5)(0.5) + (0.5)(-0.5) + (1.5)(1.5) = 4,
	 * b = 0.8, a = 2.5 - 1.2 = 1.3; residuals -0.3 0.9 -0.9 0.3,
	 * rms = sqrt((0.09 + 0.81 + 0.81 + 0.09) / 4) = sqrt(0.45).
	 */
	double x[] = { 0, 1, 2, 3 }, y[] = { 1, 3, 2, 4 };
	struct linfit f;

	(void)state;
	assert_int_equal(stats_linfit(x, y, 4, &f), 0);
	assert_float_equal(f.b, 0.8, 1e-12);
	assert_float_equal(f.a, 1.3, 1e-12);
	assert_float_equal(f.rms, 0.6708203932499369, 1e-12);
	/*
	 * Four points, four batches of one: z = dx r = 0.45 -0.45 -0.45 0.45,
	 * var(b) = 4 (0.45^2) * 4/2 / Sxx^2 = 1.62 / 25.
	 */
	assert_float_equal(f.b_se, sqrt(1.62) / 5, 1e-12);
}

static void linfit_large_values_keep_precision(void **state)
{
	/* Offsets of 1e9 ns with 1 ns steps: naive sums would lose them. */
	double x[1000], y[1000];
	struct linfit f;
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		x[i] = 1e6 + i * 0.05;
		y[i] = 1e9 + 25e3 * (x[i] - 1e6) + (i % 2 ? 1 : -1);
	}
	assert_int_equal(stats_linfit(x, y, 1000, &f), 0);
	assert_float_equal(f.b, 25e3, 1e-3);
	assert_float_equal(f.rms, 1, 1e-3);
}

static void linfit_se_holds_for_correlated_noise(void **state)
{
	/*
	 * The noise of an offset series is correlated: AR(1) with rho 0.9
	 * here.  Over many such series the error of b divided by b_se must
	 * have a spread near 1 (Student's t with B - 2 = 8 degrees of freedom:
	 * sd sqrt(8/6) = 1.15, a little more for what correlation crosses
	 * batch edges), where the textbook s / sqrt(Sxx) would give
	 * one of sqrt((1 + rho) / (1 - rho)) = 4.4.
	 */
	enum { N = 2000, RUNS = 400 };
	static double x[N], y[N];
	double zz = 0, zn = 0;
	int run, i;

	(void)state;
	for (run = 0; run < RUNS; run++) {
		struct linfit f;
		double e = rng_normal(), sxx = 0, naive;

		for (i = 0; i < N; i++) {
			e = 0.9 * e + sqrt(1 - 0.81) * rng_normal();
			x[i] = i * 0.05;
			y[i] = 7 + 25 * x[i] + e;
			sxx += (x[i] - (N - 1) * 0.025) * (x[i] - (N - 1) * 0.025);
		}
		assert_int_equal(stats_linfit(x, y, N, &f), 0);
		naive = f.rms * sqrt((double)N / (N - 2)) / sqrt(sxx);
		zz += (f.b - 25) * (f.b - 25) / (f.b_se * f.b_se);
		zn += (f.b - 25) * (f.b - 25) / (naive * naive);
	}
	zz = sqrt(zz / RUNS);
	zn = sqrt(zn / RUNS);
	print_message("# sd of (b - 25) / b_se %.3f, / naive se %.3f\n", zz, zn);
	assert_true(zz > 0.9 && zz < 1.6);
	assert_true(zn > 3);
}

static void linfit_se_for_heavy_tailed_noise(void **state)
{
	/*
	 * Loopback on a loaded machine: most exchanges within tens of us,
	 * a few percent delayed by a scheduler's time slice, in one
	 * direction (a late wake-up lengthens only the way back).  Here:
	 * 50 +- 10 us, and 3% of the time up to 8 ms more, 600 points as
	 * truth.t takes, 1000 runs (a coverage p is known to about
	 * sqrt(p (1 - p) / 1000), 0.7% near 95%).  A few huge outliers
	 * dominate both b's error and the batches that estimate it, so
	 * (b - truth) / b_se has longer tails than Student's t with 8
	 * degrees of freedom: b +- 2.306 b_se, a 95% interval for gentler
	 * noise, holds the truth about 91% of the time here, and b +- 3 b_se
	 * about 95%, as offsetfit(1) says.
	 */
	enum { N = 600, RUNS = 1000 };
	static double x[N], y[N];
	int run, i, in_t8 = 0, in_3 = 0;

	(void)state;
	for (run = 0; run < RUNS; run++) {
		struct linfit f;

		for (i = 0; i < N; i++) {
			double e = 50 + 10 * rng_normal();

			if (rng_uniform() < 0.03)
				e += 8000 * rng_uniform();
			x[i] = i * 0.05;
			y[i] = 7 + 25 * x[i] + e;
		}
		assert_int_equal(stats_linfit(x, y, N, &f), 0);
		in_t8 += fabs(f.b - 25) <= 2.306 * f.b_se;
		in_3 += fabs(f.b - 25) <= 3 * f.b_se;
	}
	print_message("# the truth within 2.306 b_se in %d of %d runs, within 3 b_se in %d\n",
		      in_t8, RUNS, in_3);
	assert_true(in_t8 >= 880 && in_t8 <= 940);
	assert_true(in_3 >= 930 && in_3 <= 980);
}

static void linfit_degenerate(void **state)
{
	double x[] = { 1, 1, 1 }, y[] = { 1, 2, 3 };
	struct linfit f;

	(void)state;
	assert_int_equal(stats_linfit(x, y, 1, &f), -1);
	assert_int_equal(stats_linfit(x, y, 3, &f), -1);
}

static void quantiles_by_hand(void **state)
{
	/* Sorted: 1 2 3 4 5 6 7 8 9 10.  Type 7: h = 9p. */
	double v[] = { 7, 3, 10, 1, 9, 2, 8, 5, 4, 6 };
	double ps[] = { 0, 0.25, 0.5, 0.99, 1 }, q[5];

	(void)state;
	stats_quantiles(v, 10, ps, q, 5);
	assert_float_equal(q[0], 1, 1e-12);
	assert_float_equal(q[1], 3.25, 1e-12);	/* h = 2.25 */
	assert_float_equal(q[2], 5.5, 1e-12);	/* h = 4.5 */
	assert_float_equal(q[3], 9.91, 1e-12);	/* h = 8.91 */
	assert_float_equal(q[4], 10, 1e-12);
}

static void quantile_single_and_ties(void **state)
{
	double one[] = { 42 }, ties[] = { 5, 5, 5, 5, 1, 5 };

	(void)state;
	assert_float_equal(stats_quantile(one, 1, 0.5), 42, 0);
	assert_float_equal(stats_quantile(one, 1, 0.999), 42, 0);
	assert_float_equal(stats_quantile(ties, 6, 0.5), 5, 0);
	assert_float_equal(stats_quantile(ties, 6, 0), 1, 0);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Selection agrees with sorting on random data, ties included (seed 1). */
static void quantiles_match_sort(void **state)
{
	enum { N = 10007 };
	static double v[N], s[N];
	double ps[] = { 0.001, 0.5, 0.9, 0.99, 0.999 }, q[5];
	int round, i, j;

	(void)state;
	srand(1);
	for (round = 0; round < 20; round++) {
		int n = 1 + rand() % N;

		for (i = 0; i < n; i++)
			v[i] = s[i] = (double)(rand() % (round % 2 ? 50 : 1000000));
		qsort(s, (size_t)n, sizeof(double), cmp);
		stats_quantiles(v, (size_t)n, ps, q, 5);
		for (j = 0; j < 5; j++) {
			double h = (n - 1) * ps[j];
			int lo = (int)h;
			double want = s[lo] + (lo + 1 < n ? (h - lo) * (s[lo + 1] - s[lo]) : 0);

			assert_float_equal(q[j], want, 1e-9);
		}
	}
}

/*
 * From 65536 values on, the quantiles come from brackets set by a sample
 * (lib/stats.c): the same values as sorting, bit for bit, on random data,
 * few distinct values, sorted, reversed and constant arrays, and data
 * whose sampled positions (every n / 16384th) hold zeros and the rest
 * larger values: the brackets miss their ranks and the selection in
 * place takes over.
 */
static void quantiles_large_match_sort(void **state)
{
	enum { N = 300007 };
	static double v[N], s[N];
	double ps[] = { 0, 0.001, 0.5, 0.99, 0.999, 1 }, q[6];
	int kind, i, j;

	(void)state;
	srand(2);
	for (kind = 0; kind < 6; kind++) {
		int n = kind == 5 ? N : N - 1000 * kind;

		for (i = 0; i < n; i++) {
			double x = (double)rand() / RAND_MAX * 1e5 - 3e4;

			v[i] = kind == 1 ? (double)(rand() % 7) : kind == 2 ? i * 0.5 :
			       kind == 3 ? -i * 0.25 : kind == 4 ? 42 : x;
			if (kind == 5)
				v[i] = i % (N / 16384) == N / 16384 / 2 ? 0 : x + 1e6;
			s[i] = v[i];
		}
		qsort(s, (size_t)n, sizeof(double), cmp);
		stats_quantiles(v, (size_t)n, ps, q, 6);
		for (j = 0; j < 6; j++) {
			double h = (n - 1) * ps[j];
			int lo = (int)h;
			double want = s[lo];

			if (lo + 1 < n && h > lo)
				want += (h - lo) * (s[lo + 1] - want);
			assert_memory_equal(&q[j], &want, sizeof(double));
		}
	}
}

/*
 * A NAN anywhere in a large array (in either lane of lib/stats.c's SSE2
 * test, or in the tail) sends the quantiles to the selection in place,
 * which reorders v; the brackets leave v as it was.
 */
static void quantiles_large_nan(void **state)
{
	enum { N = 100001 };
	static double v[N], w[N];
	double ps[] = { 0.5, 0.99, 0.999 }, q[3];
	int at[] = { 0, 12345, 12346, N - 1 }, c, i;

	(void)state;
	for (c = -1; c < (int)ARRAY_SIZE(at); c++) {
		srand(3);
		for (i = 0; i < N; i++)
			v[i] = (double)rand() / RAND_MAX;
		if (c >= 0)
			v[at[c]] = NAN;
		memcpy(w, v, sizeof(v));
		stats_quantiles(v, N, ps, q, 3);
		if (c < 0)
			assert_memory_equal(v, w, sizeof(v));
		else
			assert_true(memcmp(v, w, sizeof(v)) != 0);
	}
}

static void rms_min_median(void **state)
{
	double v[] = { 3, -4 };
	int64_t d[] = { 9, 1, 5, 7 };
	double m = -1;

	(void)state;
	assert_float_equal(stats_rms(v, 2), 3.5355339059327378, 1e-12);
	assert_float_equal(stats_min(v, 2), -4, 0);
	assert_int_equal(stats_median_i64(d, 4, &m), 0);
	assert_float_equal(m, 6, 0);
	assert_int_equal(d[0], 9);	/* left as it was */
	/* No memory for the copy: an error, and the median left alone. */
	assert_int_equal(stats_median_i64(d, SIZE_MAX / 4, &m), -ENOMEM);
	assert_float_equal(m, 6, 0);
}

/* Student's t against the printed table (NIST/SEMATECH e-Handbook, 1.3.6.7.2). */
static void t_quantile_table(void **state)
{
	static const struct { double p; int dof; double t; } tab[] = {
		{ 0.975, 1, 12.706 }, { 0.995, 3, 5.841 }, { 0.95, 8, 1.860 },
		{ 0.975, 8, 2.306 }, { 0.995, 8, 3.355 }, { 0.975, 29, 2.045 },
		{ 0.999, 10, 4.144 }, { 0.90, 2, 1.886 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(tab); i++)
		assert_float_equal(stats_t_quantile(tab[i].p, tab[i].dof), tab[i].t, 0.0006);
	assert_float_equal(stats_t_quantile(0.025, 8), -stats_t_quantile(0.975, 8), 1e-12);
	assert_float_equal(stats_t_quantile(0.5, 5), 0, 1e-9);
}

/* The k-th smallest agrees with sorting, ties included. */
static void kth_matches_sort(void **state)
{
	double v[101], s[101];
	size_t k;
	int i;

	(void)state;
	for (k = 0; k < 101; k += 7) {
		for (i = 0; i < 101; i++)
			v[i] = s[i] = (double)((i * 37 + 11) % 23);
		stats_sort(s, 101);
		assert_float_equal(stats_kth(v, 101, k), s[k], 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(linfit_exact_line),
		cmocka_unit_test(linfit_by_hand),
		cmocka_unit_test(linfit_large_values_keep_precision),
		cmocka_unit_test(linfit_se_holds_for_correlated_noise),
		cmocka_unit_test(linfit_se_for_heavy_tailed_noise),
		cmocka_unit_test(linfit_degenerate),
		cmocka_unit_test(quantiles_by_hand),
		cmocka_unit_test(quantile_single_and_ties),
		cmocka_unit_test(quantiles_match_sort),
		cmocka_unit_test(quantiles_large_match_sort),
		cmocka_unit_test(quantiles_large_nan),
		cmocka_unit_test(rms_min_median),
		cmocka_unit_test(t_quantile_table),
		cmocka_unit_test(kth_matches_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
