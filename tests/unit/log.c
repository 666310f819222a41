/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/log.c: the limit on lines per window (log_limit),
   on times given, not read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"
#include "opt_units.h"


/* 3 lines a minute: the 4th and 5th held back, counted when the next
   window's first line comes; a quiet window reports nothing; at exit the
   count of the window still open. */
static void lines_per_window(void **state)
{
	struct log_limit l = { .window = 60 * NTPX_NS_PER_SEC, .max = 3 };
	uint64_t held;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_true(log_limit_pass(&l, 10 * NTPX_NS_PER_SEC + i, &held));
		assert_int_equal(held, 0);
	}
	assert_false(log_limit_pass(&l, 20 * NTPX_NS_PER_SEC, &held));
	assert_false(log_limit_pass(&l, 69 * NTPX_NS_PER_SEC, &held));
	assert_int_equal(held, 0);
	/* A minute after the window began: a new one, and the two held. */
	assert_true(log_limit_pass(&l, 70 * NTPX_NS_PER_SEC, &held));
	assert_int_equal(held, 2);
	assert_true(log_limit_pass(&l, 71 * NTPX_NS_PER_SEC, &held));
	assert_int_equal(held, 0);
	/* Much later: nothing was held in between. */
	assert_true(log_limit_pass(&l, 1000 * NTPX_NS_PER_SEC, &held));
	assert_int_equal(held, 0);
	assert_true(log_limit_pass(&l, 1000 * NTPX_NS_PER_SEC, &held));
	assert_true(log_limit_pass(&l, 1000 * NTPX_NS_PER_SEC, &held));
	assert_false(log_limit_pass(&l, 1001 * NTPX_NS_PER_SEC, &held));
	assert_int_equal(log_limit_held(&l), 1);
	assert_int_equal(log_limit_held(&l), 0);
	/* A clock that starts at 0 is no "no window yet". */
	l = (struct log_limit){ .window = NTPX_NS_PER_SEC, .max = 1 };
	assert_true(log_limit_pass(&l, 0, &held));
	assert_false(log_limit_pass(&l, 1, &held));
	assert_true(log_limit_pass(&l, NTPX_NS_PER_SEC + 1, &held));
	assert_int_equal(held, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_per_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
