/* SPDX-License-Identifier: ISC */
/*
 * tests/unit/discipline.c - the control loop on a sim: clock, fed with
 * exact measurements (off2 = -2 e, from the clock's own truth), so that
 * what the loop does can be held against what OpenNTPD's rules say it must
 * do: step once at start-up above the threshold, slew by the filter's best
 * offset with adjtime semantics, and correct the frequency by least
 * squares once the slews are finishing.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "discipline.h"
#include "opt_units.h"


static char dir[64], name[128];

static int setup(void **state)
{
	strcpy(dir, "/tmp/ntpx-discipline.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(name, sizeof(name), "sim:%s/clk", dir);
	return 0;
}

/* The clock file may not have been made (a test that refuses first); the
 * directory must go, which it does only when nothing else is left in it. */
static int teardown(void **state)
{
	if (unlink(name + 4) && errno != ENOENT) {
		print_error("unlink %s: %s\n", name + 4, strerror(errno));
		return -1;
	}
	if (rmdir(dir)) {
		print_error("rmdir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static struct clock *make(int64_t offset, double ppm)
{
	struct clock_sim_params p = { .offset_ns = offset, .freq_ppm = ppm };
	char err[256];
	struct clock *c;

	if (clock_sim_create(name + 4, &p, err, sizeof(err)))
		fail_msg("%s", err);
	c = clock_open(name, err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	return c;
}

/* The clock's error now (clock minus reference), ns. */
static int64_t error_now(struct clock *c)
{
	int64_t now = clock_now(c);

	return now - clock_last_ref(c);
}

/* One exact exchange: off2 = twice (reference - clock), a fixed delay. */
static void feed(struct discipline *d, struct clock *c, int64_t delay, struct discipline_out *o)
{
	char err[256];

	if (discipline_sample(d, RECORD_OK, -2 * error_now(c), delay, o, err, sizeof(err)))
		fail_msg("%s", err);
}

/* Lets @ns of time pass (the sim clock moves with real time). */
static void pass(int64_t ns)
{
	int64_t end = clock_monotonic_ns() + ns;

	while (clock_monotonic_ns() < end)
		;
}

static void test_startup_step(void **state)
{
	struct clock *c = make(-120 * NTPX_NS_PER_SEC, 0);
	struct discipline_params p;
	struct discipline_out o;
	struct discipline *d;
	char err[256];
	int i;

	discipline_defaults(&p);
	p.step_threshold = NTPX_NS_PER_SEC;
	d = discipline_create(c, &p, err, sizeof(err));
	assert_non_null(d);
	feed(d, c, 50000, &o);
	assert_int_equal(o.action, DISCIPLINE_STEP);
	assert_true(llabs(o.corr - 120 * NTPX_NS_PER_SEC) < NTPX_NS_PER_MS);
	assert_true(llabs(error_now(c)) < 100000);
	/* The window was moved with the step: the next updates are small slews. */
	for (i = 0; i < 7; i++)
		feed(d, c, 50000, &o);
	assert_int_equal(o.f.update, 1);
	assert_int_equal(o.action, DISCIPLINE_SLEW);
	assert_true(llabs(o.corr) < 100000);
	/* Only the first reply may step. */
	assert_int_equal(clock_step(c, -10 * NTPX_NS_PER_SEC, err, sizeof(err)), 0);
	feed(d, c, 50000, &o);
	assert_true(o.action != DISCIPLINE_STEP);
	discipline_free(d);
	clock_close(c);
}

/*
 * Below the threshold nothing steps; the first update (the eighth reply)
 * slews by the best sample's offset.  The delays make the fifth reply the
 * best, and its offset is the one used.
 */
static void test_slew_best_sample(void **state)
{
	struct clock *c = make(-500 * NTPX_NS_PER_MS, 0);
	static const int64_t delays[8] = { 90, 80, 70, 60, 10, 50, 40, 30 };
	struct discipline_params p;
	struct discipline_out o;
	struct discipline *d;
	char err[256];
	int64_t left;
	int i;

	discipline_defaults(&p);
	p.step_threshold = NTPX_NS_PER_SEC;
	d = discipline_create(c, &p, err, sizeof(err));
	assert_non_null(d);
	for (i = 0; i < 8; i++) {
		char err2[256];
		/* A distinct off2 per reply so that the one used shows. */
		int64_t off2 = 2 * 500 * NTPX_NS_PER_MS + i * 1000;

		assert_int_equal(discipline_sample(d, RECORD_OK, off2, delays[i] * 1000, &o,
						   err2, sizeof(err2)), 0);
		assert_int_equal(o.f.update, i == 7);
		if (i < 7)
			assert_int_equal(o.action, DISCIPLINE_NONE);
	}
	assert_int_equal(o.action, DISCIPLINE_SLEW);
	assert_int_equal(o.f.off2, 2 * 500 * NTPX_NS_PER_MS + 4 * 1000);
	assert_int_equal(o.corr, 500 * NTPX_NS_PER_MS + 2000);
	assert_int_equal(clock_slew_left(c, &left, err, sizeof(err)), 0);
	assert_true(left <= o.corr && left > o.corr - NTPX_NS_PER_MS);

	/*
	 * adjtime semantics: the next update's slew is its offset (which has
	 * the pending part taken out, as OpenNTPD does) plus what is pending,
	 * replacing the old slew.  Feed exact samples until then.
	 */
	for (i = 0; i < 8 && !o.f.update; i++)
		feed(d, c, 5000, &o);
	assert_int_equal(o.f.update, 1);
	assert_int_equal(clock_slew_left(c, &left, err, sizeof(err)), 0);
	/* what is left to slew is the clock's whole error, still ~500 ms */
	assert_true(llabs(left + error_now(c)) < 100000);
	discipline_free(d);
	clock_close(c);
}

/*
 * +50 ppm: once the slews finish between updates, every eight corrections
 * give a frequency estimate; with exact measurements the first one lands
 * within a fraction of a ppm.
 */
static void frequency_loop(double detune)
{
	struct clock *c = make(0, detune);
	struct discipline_params p;
	struct discipline_out o;
	struct discipline *d;
	char err[256];
	double ppm = detune;
	int i, adjusted = 0;

	discipline_defaults(&p);
	d = discipline_create(c, &p, err, sizeof(err));
	assert_non_null(d);
	for (i = 0; i < 2000 && !adjusted; i++) {
		pass(2000000);
		feed(d, c, 30000, &o);
		if (o.freq_adjusted) {
			adjusted = 1;
			assert_true(fabs(o.dfreq_ppm + detune) < 5);
		}
	}
	assert_true(adjusted);
	assert_int_equal(clock_freq_get(c, &ppm, err, sizeof(err)), 0);
	print_message("# %+g ppm: frequency after %d exchanges: %+.4f ppm\n", detune, i, ppm);
	assert_true(fabs(ppm) < 1);
	discipline_free(d);
	clock_close(c);
}

static void test_frequency_loop(void **state)
{
	frequency_loop(50);
	assert_int_equal(teardown(state), 0);
	assert_int_equal(setup(state), 0);
	frequency_loop(-50);
}

/* The clamp: a frequency error beyond max-freq is corrected in steps of it. */
static void test_frequency_clamp(void **state)
{
	struct clock *c = make(0, 50);
	struct discipline_params p;
	struct discipline_out o;
	struct discipline *d;
	char err[256];
	int i, adjusted = 0;

	discipline_defaults(&p);
	assert_int_equal(discipline_parse(&p, "max-freq=10ppm,freq-samples=4", err,
					  sizeof(err)), 0);
	d = discipline_create(c, &p, err, sizeof(err));
	assert_non_null(d);
	for (i = 0; i < 2000 && !adjusted; i++) {
		pass(2000000);
		feed(d, c, 30000, &o);
		adjusted = o.freq_adjusted;
	}
	assert_true(adjusted);
	assert_true(o.dfreq_ppm == -10);
	discipline_free(d);
	clock_close(c);
}

static void test_misses_and_parse(void **state)
{
	struct clock *c = make(0, 0);
	struct discipline_params p;
	struct discipline_out o;
	struct discipline *d;
	char err[256];

	discipline_defaults(&p);
	assert_int_equal(p.window, 8);
	assert_int_equal(p.freq_samples, 8);
	assert_true(p.max_freq_ppm == 1280);
	assert_int_equal(discipline_parse(&p, "window=4,step-threshold=250ms", err,
					  sizeof(err)), 0);
	assert_int_equal(p.window, 4);
	assert_int_equal(p.step_threshold, 250000000);
	assert_int_equal(discipline_parse(&p, "windows=4", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown discipline parameter 'windows'"));
	assert_int_equal(discipline_parse(&p, "window=0", err, sizeof(err)), -1);

	d = discipline_create(c, &p, err, sizeof(err));
	assert_non_null(d);
	feed(d, c, 1000, &o);
	assert_int_equal(o.f.trust, 3);
	discipline_sample(d, RECORD_TIMEOUT, 0, 0, &o, err, sizeof(err));
	assert_int_equal(o.f.n, 1);
	discipline_sample(d, RECORD_KOD, 0, 0, &o, err, sizeof(err));
	assert_int_equal(o.f.trust, 3);
	discipline_format(err, sizeof(err), &o);
	assert_string_equal(err, "0 1000 0 0 1 3 0 0 - - -");
	discipline_free(d);
	clock_close(c);
}

/* A window of 1 updates on every reply: the start-up step must not also slew. */
static void test_window1_step(void **state)
{
	struct clock *c = make(-5 * NTPX_NS_PER_SEC, 0);
	struct discipline_params p;
	struct discipline_out o;
	struct discipline *d;
	char err[256];
	int64_t left;

	discipline_defaults(&p);
	p.window = 1;
	p.step_threshold = NTPX_NS_PER_SEC;
	d = discipline_create(c, &p, err, sizeof(err));
	assert_non_null(d);
	feed(d, c, 1000, &o);
	assert_int_equal(o.action, DISCIPLINE_STEP);
	assert_int_equal(clock_slew_left(c, &left, err, sizeof(err)), 0);
	assert_int_equal(left, 0);
	assert_true(llabs(error_now(c)) < 1000);
	discipline_free(d);
	clock_close(c);
}

static void test_realtime_refused(void **state)
{
	struct discipline_params p;
	char err[256];
	struct clock *c = clock_open("realtime", err, sizeof(err));

	assert_non_null(c);
	discipline_defaults(&p);
	assert_null(discipline_create(c, &p, err, sizeof(err)));
	assert_non_null(strstr(err, "refusing"));
	clock_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_startup_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slew_best_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frequency_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frequency_clamp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_misses_and_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window1_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_realtime_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
