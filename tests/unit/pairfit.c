/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/pairfit.c: the lowest-delay exchanges kept and
 * nothing else, the line through them read exactly, its variance by hand,
 * and its 95% interval's coverage on noise of known law.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "opt_units.h"
#include "pairfit.h"
#include "stats.h"
#include "support/rng.h"

#define T0	1764455329000000000LL

static double scratch[3 * 4096];

/*
 * A line, off2 = 2 (3000 + 25 t) ns with t in s (25 ppb), 1 s apart: the
 * even exchanges fast (delay 100 us), the odd ones slow (delay 300 us)
 * and 1 ms off.  At a half, only the fast ones are kept: the line comes
 * back exactly, anywhere, with no variance; the truth alike.
 */
static void keeps_the_fast_half_exactly(void **state)
{
	struct pair_sample s[40];
	struct pairfit f;
	double v;
	int i;

	(void)state;
	for (i = 0; i < 40; i++) {
		s[i].t = T0 + i * NTPX_NS_PER_SEC;
		s[i].off2 = 2 * (3000 + 25 * i) + (i % 2 ? 2000000 : 0);
		s[i].delay = i % 2 ? 300000 : 100000;
		s[i].true2 = 2 * (3000 + 25 * i);
	}
	assert_int_equal(pairfit_fit(s, 40, 0.5, scratch, &f), 0);
	assert_int_equal(f.n, 40);
	assert_int_equal(f.used, 20);
	assert_int_equal(f.delay_cut, 100000);
	assert_true(f.tmin == T0 && f.tmax == T0 + 39 * NTPX_NS_PER_SEC);
	assert_float_equal(pairfit_at(&f, T0, &v), 3000, 1e-6);
	assert_float_equal(v, 0, 1e-9);
	assert_float_equal(pairfit_at(&f, T0 + 100 * NTPX_NS_PER_SEC, &v), 3000 + 2500, 1e-6);
	assert_float_equal(f.b, 25, 1e-9);
	assert_true(f.truth);
	assert_float_equal(pairfit_truth_at(&f, T0 + 7 * NTPX_NS_PER_SEC + NTPX_NS_PER_SEC / 2),
			   3000 + 187.5, 1e-6);
	/* all of them: the slow ones pull the mean, at the mean time 19.5 s, up by half their 1 ms */
	assert_int_equal(pairfit_fit(s, 40, 1, scratch, &f), 0);
	assert_float_equal(pairfit_at(&f, T0 + 19 * NTPX_NS_PER_SEC + NTPX_NS_PER_SEC / 2, &v),
			   3000 + 487.5 + 500000, 1e-6);
}

/* At the cut's own delay the first in order are kept, and no truth if one lacks it. */
static void ties_at_the_cut_keep_the_first(void **state)
{
	struct pair_sample s[20];
	struct pairfit f;
	double v;
	int i;

	(void)state;
	for (i = 0; i < 20; i++) {
		s[i].t = T0 + i * NTPX_NS_PER_SEC;
		s[i].off2 = i < 10 ? 100 : 5000;
		s[i].delay = 50000;
		s[i].true2 = i == 3 ? PAIRFIT_NO_TRUTH : 0;
	}
	assert_int_equal(pairfit_fit(s, 20, 0.5, scratch, &f), 0);
	assert_int_equal(f.used, 10);
	assert_float_equal(pairfit_at(&f, T0 + 4 * NTPX_NS_PER_SEC, &v), 50, 1e-9);
	assert_false(f.truth);
}

/* A fit needs PAIRFIT_MIN kept exchanges, at more than one time. */
static void too_few_or_one_time(void **state)
{
	struct pair_sample s[40];
	struct pairfit f;
	int i;

	(void)state;
	for (i = 0; i < 40; i++)
		s[i] = (struct pair_sample){ T0 + i * NTPX_NS_PER_SEC, 0, 1000 + i, PAIRFIT_NO_TRUTH };
	assert_int_equal(pairfit_keep(40, 0.25), 10);
	assert_int_equal(pairfit_keep(37, 0.25), 10);
	assert_int_equal(pairfit_keep(36, 0.25), 9);
	assert_int_equal(pairfit_fit(s, 37, 0.25, scratch, &f), 0);
	assert_int_equal(pairfit_fit(s, 36, 0.25, scratch, &f), -1);
	for (i = 0; i < 40; i++)
		s[i].t = T0;
	assert_int_equal(pairfit_fit(s, 40, 1, scratch, &f), -1);
}

/*
 * By hand: y = +1, -1, +1, ... ns at x = 0..9 s.  Mean y 0, mean x 4.5,
 * Sxx 82.5, Sxy = (0+2+4+6+8 - 22.5) - (1+3+5+7+9 - 22.5) = -5, so b =
 * -5/82.5 and the sum of squared residuals is 10 - b Sxy = 10 - 10/33.
 * Ten batches of one: at x = 4.5 the variance is 10/8 of the sum of
 * (r_i / 10)^2 = 1.25 (10 - 10/33) / 100.
 */
static void variance_by_hand(void **state)
{
	struct pair_sample s[10];
	struct pairfit f;
	double v, w;
	int i;

	(void)state;
	for (i = 0; i < 10; i++)
		s[i] = (struct pair_sample){ T0 + i * NTPX_NS_PER_SEC, i % 2 ? -2 : 2, 1000,
					     PAIRFIT_NO_TRUTH };
	assert_int_equal(pairfit_fit(s, 10, 1, scratch, &f), 0);
	assert_float_equal(f.b, -5 / 82.5, 1e-12);
	assert_float_equal(pairfit_at(&f, T0 + 4 * NTPX_NS_PER_SEC + NTPX_NS_PER_SEC / 2, &v), 0, 1e-12);
	assert_float_equal(v, 1.25 * (10 - 10.0 / 33) / 100, 1e-12);
	/* read further out, the slope's own error adds */
	pairfit_at(&f, T0 + 20 * NTPX_NS_PER_SEC, &w);
	assert_true(w > v);
}

/*
 * The stated 95% interval, the value +- t(0.975, 8) sqrt(var), against
 * noise of known law, 2000 windows each (a coverage is known to about
 * 0.5% near 95%): white Gaussian noise on every exchange, all kept; and
 * one-way delays of 50 us plus exponential queueing (mean 20 us) plus 2
 * us of Gaussian jitter each way, the lowest-delay quarter kept, so that
 * the offsets kept are not Gaussian.  Both near 95%, neither below 93.5%.
 */
static double coverage(int queueing)
{
	enum { N = 400, RUNS = 2000 };
	static struct pair_sample s[N];
	double t95 = stats_t_quantile(0.975, PAIRFIT_DOF);
	int run, i, in = 0;

	for (run = 0; run < RUNS; run++) {
		struct pairfit f;
		double v, est, truth = 1000 + 25 * 200;

		for (i = 0; i < N; i++) {
			double th = 1000 + 25 * i, up, down;	/* ns, 25 ns/s, 1 s apart */

			if (queueing) {
				up = 50000 - 20000 * log(rng_uniform()) + 2000 * rng_normal();
				down = 50000 - 20000 * log(rng_uniform()) + 2000 * rng_normal();
			} else {
				up = 50000 + 3000 * rng_normal();
				down = 50000;
			}
			s[i].t = T0 + i * NTPX_NS_PER_SEC;
			s[i].off2 = llround(2 * th + up - down);
			s[i].delay = llround(up + down);
			s[i].true2 = PAIRFIT_NO_TRUTH;
		}
		assert_int_equal(pairfit_fit(s, N, queueing ? 0.25 : 1, scratch, &f), 0);
		est = pairfit_at(&f, T0 + 200 * NTPX_NS_PER_SEC, &v);
		in += fabs(est - truth) <= t95 * sqrt(v);
	}
	return (double)in / RUNS;
}

static void interval_coverage(void **state)
{
	double white = coverage(0), queued = coverage(1);

	(void)state;
	print_message("# 95%% interval holds the truth: white noise %.4f, lowest-delay quarter %.4f\n",
		      white, queued);
	assert_true(white >= 0.935 && white <= 0.975);
	assert_true(queued >= 0.935 && queued <= 0.975);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keeps_the_fast_half_exactly),
		cmocka_unit_test(ties_at_the_cut_keep_the_first),
		cmocka_unit_test(too_few_or_one_time),
		cmocka_unit_test(variance_by_hand),
		cmocka_unit_test(interval_coverage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
