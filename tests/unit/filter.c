/* SPDX-License-Identifier: ISC */
/*
 * tests/unit/filter.c - the OpenNTPD clock filter against windows worked
 * out by hand: best sample, both jitters, trust and validity, lost and
 * rejected replies, and when an update happens.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filter.h"

static void near(double got, double want)
{
	if (fabs(got - want) > 1e-9)
		fail_msg("got %.12f, want %.12f", got, want);
}

/*
 * Four replies (off2, delay): (200, 1000) (-100, 800) (50, 1200) (400, 900).
 * Best: the second (delay 800), offset -50.  The others' offsets 100, 25,
 * 200 differ from it by 150, 75, 250: squares 22500 + 5625 + 62500 =
 * 90625 over 3.  Their delays differ by 200, 400, 100: 40000 + 160000 +
 * 10000 = 210000 over 3.
 */
static void test_window_and_jitters(void **state)
{
	struct filter f;
	struct filter_out o;

	filter_init(&f, FILTER_WINDOW);
	filter_peek(&f, &o);
	assert_int_equal(o.n, 0);
	assert_int_equal(o.trust, 2);
	assert_int_equal(o.valid, 0);

	assert_int_equal(filter_add(&f, 200, 1000, &o), 0);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.off2, 200);
	near(o.jitter, 0);
	near(o.djitter, 0);
	filter_add(&f, -100, 800, &o);
	assert_int_equal(o.off2, -100);
	assert_int_equal(o.delay, 800);
	near(o.jitter, 150);		/* one other: |100 - (-50)| */
	near(o.djitter, 200);
	filter_add(&f, 50, 1200, &o);
	assert_int_equal(o.valid, 0);
	assert_int_equal(o.trust, 5);
	filter_add(&f, 400, 900, &o);
	assert_int_equal(o.n, 4);
	assert_int_equal(o.off2, -100);
	assert_int_equal(o.delay, 800);
	near(o.jitter, sqrt(90625.0 / 3));
	near(o.djitter, sqrt(210000.0 / 3));
	/* Valid from the fourth reply: trust 2 + 4 = 6. */
	assert_int_equal(o.trust, 6);
	assert_int_equal(o.valid, 1);
	assert_int_equal(o.update, 0);
}

/* Lost replies take no slot; they halve trust only from 6 up. */
static void test_lost_and_trust(void **state)
{
	struct filter f;
	struct filter_out o;
	int i;

	filter_init(&f, FILTER_WINDOW);
	filter_add(&f, 10, 100, &o);
	filter_miss(&f, &o);
	assert_int_equal(o.trust, 3);		/* below 6: unchanged */
	assert_int_equal(o.n, 1);
	for (i = 0; i < 3; i++)
		filter_add(&f, 10, 100, &o);
	assert_int_equal(o.trust, 6);
	assert_int_equal(o.valid, 1);
	filter_miss(&f, &o);
	assert_int_equal(o.trust, 3);		/* 6 / 2 */
	assert_int_equal(o.valid, 0);
	assert_int_equal(o.n, 4);
	for (i = 0; i < 10; i++)
		filter_add(&f, 10, 100, &o);
	assert_int_equal(o.trust, 10);		/* capped */
	filter_miss(&f, &o);
	assert_int_equal(o.trust, 5);
	filter_miss(&f, &o);
	assert_int_equal(o.trust, 5);
}

/* A negative delay is refused: no slot, no trust. */
static void test_negative_delay(void **state)
{
	struct filter f;
	struct filter_out o;

	filter_init(&f, FILTER_WINDOW);
	filter_add(&f, 10, 100, &o);
	assert_int_equal(filter_add(&f, 999, -1, &o), -1);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.trust, 3);
	assert_int_equal(o.off2, 10);
}

/*
 * Updates.  Delays (x100 ns) of replies 1..8: 5 3 7 9 4 8 6 10; off2 =
 * arrival number.  At reply 8 all eight are fresh: update with the best,
 * reply 2.  Replies 1 and 2 are then used; 3..8 stay fresh, so the next
 * update needs two more: replies 9 (11) and 10 (12) make it, with the best
 * of 3..10, reply 5 (delay 400).  Then 6..10 are fresh: three more, and
 * the update comes at reply 13.
 */
static void test_updates(void **state)
{
	static const int64_t d[] = { 5, 3, 7, 9, 4, 8, 6, 10, 11, 12, 13, 14, 15 };
	struct filter f;
	struct filter_out o;
	int i;

	filter_init(&f, FILTER_WINDOW);
	for (i = 0; i < 13; i++) {
		filter_add(&f, i + 1, d[i] * 100, &o);
		if (i + 1 == 8) {
			assert_int_equal(o.update, 1);
			assert_int_equal(o.off2, 2);
			assert_int_equal(o.delay, 300);
		} else if (i + 1 == 10) {
			assert_int_equal(o.update, 1);
			assert_int_equal(o.off2, 5);
		} else if (i + 1 == 13) {
			assert_int_equal(o.update, 1);
			/* fresh 6..13: delays 8 6 10 11 12 13 14 15 -> reply 7 */
			assert_int_equal(o.off2, 7);
		} else {
			assert_int_equal(o.update, 0);
		}
	}
}

/*
 * Eight fresh replies but an invalid peer: no update (priv_adjtime skips
 * peers below TRUSTLEVEL_BADPEER).  Seven replies (trust 9), a loss (4),
 * the eighth reply (5): no update; the ninth (6): update.
 */
/*
 * ntpctl's means (filter_means) over the replies of test_updates: each
 * update's correction (the best's offset as the daemon holds it) is
 * subtracted from every stored offset, as priv_adjtime does.
 *   after 8: off2 1..8 less 2 each: 20 / 8 = 2.5 -> 3; delays 5200 / 8
 *   after 9: 2..9 = 44, less 2 for 2..8: 30 / 8 = 3.75 -> 4; 5800 / 8
 *   after 10: 3..10 = 52, less 2 for 3..8, the update (reply 5: 5 - 2 = 3)
 *   less 3 for all: 16 / 8 = 2; delays 6700 / 8 = 837.5 -> 838
 * A correction applied to the clock (filter_correct) leaves them alone.
 */
static void test_means(void **state)
{
	static const int64_t d[] = { 5, 3, 7, 9, 4, 8, 6, 10, 11, 12 };
	static const int64_t want_off[] = { 3, 4, 2 }, want_delay[] = { 650, 725, 838 };
	struct filter f;
	struct filter_out o;
	int64_t mo, md, mo2, md2;
	int i;

	filter_init(&f, FILTER_WINDOW);
	assert_int_equal(filter_means(&f, &mo, &md), 0);
	for (i = 0; i < 10; i++) {
		filter_add(&f, i + 1, d[i] * 100, &o);
		assert_int_equal(filter_means(&f, &mo, &md), i + 1 < 8 ? i + 1 : 8);
		if (i + 1 >= 8) {
			assert_int_equal(mo, want_off[i - 7]);
			assert_int_equal(md, want_delay[i - 7]);
		}
	}
	filter_correct(&f, 7);
	assert_int_equal(filter_means(&f, &mo2, &md2), 8);
	assert_int_equal(mo2, mo);
	assert_int_equal(md2, md);
}

static void test_no_update_when_invalid(void **state)
{
	struct filter f;
	struct filter_out o;
	int i;

	filter_init(&f, FILTER_WINDOW);
	for (i = 0; i < 7; i++)
		filter_add(&f, i, 1000 - i, &o);
	filter_miss(&f, &o);
	assert_int_equal(o.trust, 4);
	filter_add(&f, 7, 993, &o);
	assert_int_equal(o.trust, 5);
	assert_int_equal(o.update, 0);
	filter_add(&f, 8, 992, &o);
	assert_int_equal(o.trust, 6);
	assert_int_equal(o.update, 1);
	assert_int_equal(o.off2, 8);
}

/* ntpctl's jitter counts delays > 0 only; ours counts every sample. */
static void test_zero_delay(void **state)
{
	struct filter f;
	struct filter_out o;

	filter_init(&f, FILTER_WINDOW);
	filter_add(&f, 100, 0, &o);
	filter_add(&f, 300, 500, &o);
	filter_add(&f, 500, 700, &o);
	assert_int_equal(o.off2, 100);		/* delay 0 is the best */
	near(o.jitter, sqrt((100.0 * 100 + 200.0 * 200) / 2));
	near(o.djitter, 200);			/* best 500, one other: 700 */
}

/*
 * A window of 3 slides: the oldest reply leaves.  Replies (off2, delay):
 * (1,100) (2,300) (3,200): best 1, no update (trust 5).  (4,400) replaces
 * reply 1: best 3, trust 6, all three fresh: update with 3, which uses 2
 * and 3.  (5,50) replaces 2: two fresh.  (6,60) replaces 3: update with 5.
 */
static void test_window_size(void **state)
{
	struct filter f;
	struct filter_out o;

	filter_init(&f, 3);
	filter_add(&f, 1, 100, &o);
	filter_add(&f, 2, 300, &o);
	filter_add(&f, 3, 200, &o);
	assert_int_equal(o.off2, 1);
	assert_int_equal(o.update, 0);
	filter_add(&f, 4, 400, &o);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.off2, 3);
	assert_int_equal(o.update, 1);
	filter_add(&f, 5, 50, &o);
	assert_int_equal(o.off2, 5);
	assert_int_equal(o.update, 0);
	filter_add(&f, 6, 60, &o);
	assert_int_equal(o.update, 1);
	assert_int_equal(o.off2, 5);
}

/* A correction moves every stored offset. */
static void test_correct(void **state)
{
	struct filter f;
	struct filter_out o;

	filter_init(&f, FILTER_WINDOW);
	filter_add(&f, 1000, 100, &o);
	filter_add(&f, 1200, 200, &o);
	filter_correct(&f, 1000);
	filter_peek(&f, &o);
	assert_int_equal(o.off2, 0);
	near(o.jitter, 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_and_jitters),
		cmocka_unit_test(test_lost_and_trust),
		cmocka_unit_test(test_negative_delay),
		cmocka_unit_test(test_updates),
		cmocka_unit_test(test_means),
		cmocka_unit_test(test_no_update_when_invalid),
		cmocka_unit_test(test_zero_delay),
		cmocka_unit_test(test_window_size),
		cmocka_unit_test(test_correct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
