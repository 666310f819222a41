/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/dist.c: quantiles exact up to DIST_EXACT_MAX values
 * (type 7, as stats_quantile over the same data), the summaries that a
 * log-bucketed histogram got wrong (issue 33: a median below the minimum
 * at 5 ms, a median of three that was none of them, a p99 above the
 * maximum), and past DIST_EXACT_MAX, quantiles within the stated bound
 * and never outside [min, max].
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "dist.h"
#include "hist.h"
#include "stats.h"

/* 62 random bits from a fixed seed: the same data every run. */
static uint64_t rnd(void)
{
	static unsigned short seed[3] = { 33, 3, 2026 };

	return (uint64_t)nrand48(seed) << 31 ^ (uint64_t)nrand48(seed);
}

static void test_three(void **state)
{
	struct dist *d = dist_new();
	double err;

	(void)state;
	assert_non_null(d);
	assert_true(dist_quantile(d, 0.5, &err) == 0 && err == 0);
	dist_add(d, 11392);
	dist_add(d, 5168);
	dist_add(d, 8523);
	assert_true(dist_exact(d));
	assert_true(dist_quantile(d, 0.5, &err) == 8523 && err == 0);
	assert_true(dist_quantile(d, 0, NULL) == 5168);
	assert_true(dist_quantile(d, 1, NULL) == 11392);
	assert_true(dist_quantile(d, 0.25, NULL) == (5168 + 8523) / 2.0);
	assert_int_equal(dist_count(d), 3);
	assert_int_equal(dist_min(d), 5168);
	assert_int_equal(dist_max(d), 11392);
	dist_free(d);
}

/* Offsets near 5 ms, spread by a few microseconds: min <= median <= max
   and p99 <= max, each the sorted data's. */
static void test_five_ms(void **state)
{
	enum { N = 7 };
	static const int64_t v[N] = { 5009359, 5012479, 5010001, 5011234, 5009360, 5012000, 5010500 };
	struct dist *d = dist_new();
	int i;

	(void)state;
	for (i = 0; i < N; i++)
		dist_add(d, v[i]);
	assert_true(dist_quantile(d, 0.5, NULL) == 5010500);
	assert_true(dist_quantile(d, 0.99, NULL) <= 5012479);
	assert_true(dist_quantile(d, 0.99, NULL) > 5012000);
	dist_free(d);
}

/* Every quantile of many values is what stats_quantile gives, exactly. */
static void test_exact(void **state)
{
	enum { N = 100001 };
	static const double ps[] = { 0, 0.001, 0.01, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1 };
	static double x[N];
	struct dist *d = dist_new();
	size_t i;

	(void)state;
	for (i = 0; i < N; i++) {
		int64_t m = (int64_t)(rnd() >> (12 + rnd() % 40));

		x[i] = (double)(rnd() % 3 ? m : -m);
		dist_add(d, (int64_t)x[i]);
	}
	assert_true(dist_exact(d));
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double err, got = dist_quantile(d, ps[i], &err);

		assert_true(got == stats_quantile(x, N, ps[i]));
		assert_true(err == 0);
	}
	dist_free(d);
}

/* Past DIST_EXACT_MAX: the histogram, within its bound of the exact
   value of rank ceil(p n), never outside [min, max]; min and max exact. */
static void test_beyond(void **state)
{
	const uint64_t n = DIST_EXACT_MAX + 5000;
	static const double ps[] = { 0, 0.01, 0.5, 0.99, 1 };
	struct dist *d = dist_new(), *one = dist_new();
	double *x = malloc(n * sizeof(*x));
	uint64_t i;

	(void)state;
	assert_non_null(x);
	for (i = 0; i < n; i++) {
		x[i] = (double)(5009359 + (int64_t)(rnd() % 3121));
		dist_add(d, (int64_t)x[i]);
		dist_add(one, 5009359);
	}
	assert_false(dist_exact(d));
	assert_int_equal(dist_count(d), n);
	assert_int_equal(dist_min(d), 5009359);
	assert_int_equal(dist_max(d), 5009359 + 3120);
	stats_sort(x, n);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double err, got = dist_quantile(d, ps[i], &err);
		uint64_t k = (uint64_t)(ps[i] * (double)n + 0.999999);
		double want = x[k ? k - 1 : 0];

		assert_true(got >= 5009359 && got <= 5009359 + 3120);
		assert_true(err > 0 && err <= want / (1 << HIST_BITS) * 1.01);
		if (got - want > err || want - got > err)
			fail_msg("p %g: %.1f, exact %.1f, bound %.1f", ps[i], got, want, err);
		/* One value only: every quantile is it, not its bucket's
		   midpoint. */
		assert_true(dist_quantile(one, ps[i], NULL) == 5009359);
	}
	free(x);
	dist_free(d);
	dist_free(one);
}

/* Digits that never claim more than the value holds. */
static void test_digits(void **state)
{
	char b[32];

	(void)state;
	dist_us_str(b, sizeof(b), 1, 5009359, 0);
	assert_string_equal(b, "+5009.359 us");
	dist_us_str(b, sizeof(b), 0, 85137, 0.5);
	assert_string_equal(b, "85.137 us");
	dist_us_str(b, sizeof(b), 1, -1500, 0);
	assert_string_equal(b, "-1.500 us");
	/* The histogram's bound at 5 ms (0.39%): 100 us digits. */
	dist_us_str(b, sizeof(b), 1, 4997120, 4997120.0 / (1 << HIST_BITS));
	assert_string_equal(b, "+5000 us");
	dist_us_str(b, sizeof(b), 0, 12345678, 4.2);
	assert_string_equal(b, "12345.68 us");
	dist_us_str(b, sizeof(b), 0, 50123, 50123.0 / (1 << HIST_BITS));
	assert_string_equal(b, "50 us");	/* 196 ns: no 100 ns digit */
	dist_us_str(b, sizeof(b), 0, 999, 3);
	assert_string_equal(b, "1.00 us");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three),
		cmocka_unit_test(test_five_ms),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_beyond),
		cmocka_unit_test(test_digits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
