/* SPDX-License-Identifier: ISC */
/*
 * lib/phc.c against a mock PHC (support/phc_mock.h; THIS IS A MOCK: no
 * PHC here): the offset is read the best way the driver has, as
 * linuxptp's sysoff probes it (precise, extended, basic), EBUSY is tried
 * again, and the conversion is right whichever way it went.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "opt_units.h"
#include "phc.h"
#include "support/phc_mock.h"

#define TAI	37000000000LL

static int64_t rt_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * NTPX_NS_PER_SEC + t.tv_nsec;
}

static int group_setup(void **state)
{
	char d[300];

	mock_phc_init();
	snprintf(d, sizeof(d), "%s/net/eth9", mock_phc_root());
	mock_phc_add(d, 4);
	return 0;
}

static int group_teardown(void **state)
{
	mock_phc_cleanup();
	return 0;
}

static int setup(void **state)
{
	memset(&mock_phc, 0, sizeof(mock_phc));
	mock_phc.off = TAI;
	return 0;
}

/*
 * A PHC stamp taken now, converted: within the time the conversion took
 * of the truth.  Returns the method used.
 */
static const char *convert_now(void)
{
	char err[128], d[300];
	struct phc *p;
	int64_t a, rt, b;
	static char method[16];

	snprintf(d, sizeof(d), "%s/net/eth9", mock_phc_root());
	assert_int_equal(phc_index_of(d), 4);
	p = phc_open(4, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	a = rt_now();
	assert_int_equal(phc_to_realtime(p, a + TAI, &rt), 0);
	b = rt_now();
	if (llabs(rt - a) > b - a)
		fail_msg("converted %lld ns from the truth in a call of %lld ns",
			 (long long)(rt - a), (long long)(b - a));
	snprintf(method, sizeof(method), "%s", phc_method(p));
	phc_close(p);
	return method;
}

static void test_precise(void **state)
{
	assert_string_equal(convert_now(), "precise");
}

static void test_extended(void **state)
{
	mock_phc.no_precise = 1;
	assert_string_equal(convert_now(), "extended");
}

/* stmmac: neither getcrosststamp nor gettimex64; the basic ioctl works. */
static void test_basic(void **state)
{
	mock_phc.no_precise = mock_phc.no_extended = 1;
	assert_string_equal(convert_now(), "basic");
	assert_true(mock_phc.calls_basic >= 1);
}

/* EBUSY is transient: tried again, not taken as the method missing. */
static void test_busy(void **state)
{
	mock_phc.busy = 2;
	assert_string_equal(convert_now(), "precise");
	assert_int_equal(mock_phc.busy, 0);
}

static void test_no_phc(void **state)
{
	char err[128];

	assert_int_equal(phc_index_of("/nonexistent"), -1);
	assert_null(phc_open(99, err, sizeof(err)));
	assert_non_null(strstr(err, "ptp99"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_precise, setup),
		cmocka_unit_test_setup(test_extended, setup),
		cmocka_unit_test_setup(test_basic, setup),
		cmocka_unit_test_setup(test_busy, setup),
		cmocka_unit_test_setup(test_no_phc, setup),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
