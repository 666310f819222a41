/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/hist.c: every rank of random data of many scales,
 * signs included, within the stated bound of the exact sorted value;
 * small values exact; the median as the sorted data's; extremes; memory
 * that does not depend on how many values were added.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hist.h"

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* |got - want| <= |want| 2^-HIST_BITS, 0 below 2^HIST_BITS. */
static void within(int64_t got, int64_t want)
{
	double d = (double)got - (double)want, m = want < 0 ? -(double)want : (double)want;

	if (m < (1 << HIST_BITS))
		assert_true(got == want);
	else if (!(d <= m / (1 << HIST_BITS) && -d <= m / (1 << HIST_BITS)))
		fail_msg("rank value %lld, exact %lld", (long long)got, (long long)want);
}

static void test_ranks(void **state)
{
	enum { N = 20000 };
	static int64_t v[N];
	struct hist *h = calloc(1, sizeof(*h));
	uint64_t k;
	int i;

	(void)state;
	hist_init(h);
	for (i = 0; i < N; i++) {
		/* Magnitudes over 1 .. 2^50, both signs, skewed positive. */
		int64_t m = (int64_t)(rnd() >> (14 + rnd() % 50));

		v[i] = rnd() % 5 ? m : -m;
		hist_add(h, v[i]);
	}
	qsort(v, N, sizeof(v[0]), cmp);
	assert_int_equal(h->n, N);
	for (k = 1; k <= N; k++)
		within(hist_rank(h, k), v[k - 1]);
	assert_int_equal(hist_rank(h, 0), 0);
	assert_int_equal(hist_rank(h, N + 1), 0);
	free(h);
}

static void test_exact_small(void **state)
{
	struct hist h;
	int i;

	(void)state;
	hist_init(&h);
	for (i = -255; i <= 255; i++)
		hist_add(&h, i);
	for (i = 1; i <= 511; i++)
		assert_int_equal(hist_rank(&h, (uint64_t)i), i - 256);
	assert_true(hist_median(&h) == 0);
}

static void test_median(void **state)
{
	struct hist h;

	(void)state;
	hist_init(&h);
	assert_true(hist_median(&h) == 0);
	hist_add(&h, 100);
	hist_add(&h, 200);
	assert_true(hist_median(&h) == 150);	/* exact, even count */
	hist_add(&h, 40000);
	assert_true(hist_median(&h) == 200);
	hist_add(&h, INT64_MAX);
	hist_add(&h, INT64_MIN);
	assert_true(hist_median(&h) == 200);
	assert_true(hist_rank(&h, 1) < -(INT64_MAX / 2));
	assert_true(hist_rank(&h, 5) > INT64_MAX / 2);
}

static void test_bounded(void **state)
{
	struct hist *h = calloc(1, sizeof(*h));
	uint64_t i;

	(void)state;
	/* A day at 1 kHz fits in the same bytes as one value. */
	for (i = 0; i < 86400000; i += 997)
		hist_add(h, (int64_t)(40000 + i % 10000));
	assert_true(sizeof(*h) < 128 * 1024);
	within((int64_t)hist_median(h), 45000);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranks),
		cmocka_unit_test(test_exact_small),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
