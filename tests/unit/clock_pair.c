/* SPDX-License-Identifier: ISC */
/*
 * clock_pair_offset() (lib/clock_read.c): the offset between two kernel
 * clocks, read so that a preemption between the reads cannot shift it.
 *
 * A preemption cannot be caused on demand, so most cases read a clock
 * of the test's own (clock_pair.read) that stalls between two chosen
 * reads, as a preempted reader would see the kernel's clocks: each read
 * takes STEP ns, a stall adds STALL before the read it precedes.  The
 * last case reads the kernel's real clocks, and holds CLOCK_TAI minus
 * CLOCK_REALTIME to the TAI offset adjtimex(2) reports (modes 0: a read).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <cmocka.h>

#include "clock_read.h"
#include "opt_units.h"

#define STEP	25				/* ns a read takes */
#define STALL	(5 * NTPX_NS_PER_MS)		/* a preemption */
#define OFF	(1796000000LL * NTPX_NS_PER_SEC + 123456789)	/* REALTIME - MONOTONIC */
#define TAI	(37 * NTPX_NS_PER_SEC)		/* TAI - REALTIME */

static int64_t now;		/* the fake's true time, ns */
static int nreads;		/* reads so far */
static unsigned char stall[64];	/* stall[n]: stall before read n (1-based) */

static int64_t fake_read(clockid_t id, void *arg)
{
	int n = ++nreads;

	if (n < (int)sizeof(stall) && stall[n])
		now += STALL;
	now += STEP;
	switch (id) {
	case CLOCK_REALTIME:
		return now + OFF;
	case CLOCK_TAI:
		return now + OFF + *(const int64_t *)arg;
	default:
		return now;
	}
}

static int64_t tai_off = TAI;

static struct clock_pair fake_pair(clockid_t a, clockid_t b)
{
	struct clock_pair p = { .a = a, .b = b, .read = fake_read, .arg = &tai_off };

	now = 1000;
	nreads = 0;
	memset(stall, 0, sizeof(stall));
	return p;
}

/* Two reads, one of each, as port_xdp.c read the offset before. */
static int64_t plain(clockid_t a, clockid_t b)
{
	int64_t ra = fake_read(a, &tai_off);

	return fake_read(b, &tai_off) - ra;
}

static void test_quiet(void **state)
{
	struct clock_pair p = fake_pair(CLOCK_MONOTONIC, CLOCK_REALTIME);

	assert_int_equal(clock_pair_offset(&p), OFF);
	assert_int_equal(p.width, 2 * STEP);
	assert_int_equal(p.width_min, 2 * STEP);
	/* Learnt, one sandwich does: three reads. */
	nreads = 0;
	assert_int_equal(clock_pair_offset(&p), OFF);
	assert_int_equal(nreads, 3);
}

/*
 * A stall between the reads shifts the plain difference by all of it;
 * the sandwich is seen stretched, read again, and the offset is exact.
 */
static void test_stall_between(void **state)
{
	struct clock_pair p = fake_pair(CLOCK_MONOTONIC, CLOCK_REALTIME);
	int at;

	clock_pair_offset(&p);
	memset(stall, 0, sizeof(stall));
	nreads = 0;
	stall[2] = 1;
	assert_int_equal(plain(CLOCK_MONOTONIC, CLOCK_REALTIME), OFF + STEP + STALL);
	for (at = 1; at <= 3; at++) {	/* before, inside the sandwich, twice */
		memset(stall, 0, sizeof(stall));
		nreads = 0;
		stall[at] = 1;
		assert_int_equal(clock_pair_offset(&p), OFF);
		assert_int_equal(p.width, 2 * STEP);
	}
}

/* The first call, which learns how narrow a sandwich is, stalled too. */
static void test_stall_first(void **state)
{
	struct clock_pair p = fake_pair(CLOCK_MONOTONIC, CLOCK_REALTIME);

	stall[2] = stall[6] = 1;
	assert_int_equal(clock_pair_offset(&p), OFF);
	assert_int_equal(p.width_min, 2 * STEP);
	assert_int_equal(nreads, 3 * CLOCK_PAIR_TRIES);
}

/* Stalled in every try: off by no more than half the width it reports. */
static void test_stall_every_try(void **state)
{
	struct clock_pair p = fake_pair(CLOCK_MONOTONIC, CLOCK_REALTIME);
	int64_t off, err;
	int i;

	clock_pair_offset(&p);
	memset(stall, 0, sizeof(stall));
	nreads = 0;
	for (i = 0; i < CLOCK_PAIR_TRIES; i++)
		stall[3 * i + 2 + i % 2] = 1;	/* either side of the middle read */
	off = clock_pair_offset(&p);
	assert_int_equal(nreads, 3 * CLOCK_PAIR_TRIES);
	assert_true(p.width >= STALL);
	err = off - OFF;
	assert_true(err <= p.width / 2 && -err <= p.width / 2);
}

/* TAI - REALTIME is whole seconds: exact, stalls or not, either sign. */
static void test_tai_whole_seconds(void **state)
{
	struct clock_pair p = fake_pair(CLOCK_REALTIME, CLOCK_TAI);
	int i;

	p.whole_s = 1;
	for (i = 0; i < CLOCK_PAIR_TRIES; i++)
		stall[3 * i + 2] = 1;	/* before each read of TAI */
	assert_int_equal(clock_pair_offset(&p), TAI);
	assert_true(p.width >= STALL);
	tai_off = -TAI;
	nreads = 0;
	assert_int_equal(clock_pair_offset(&p), -TAI);
	tai_off = 0;
	nreads = 0;
	assert_int_equal(clock_pair_offset(&p), 0);
	tai_off = TAI;
}

/* The kernel's clocks. */
static void test_real_clocks(void **state)
{
	struct clock_pair tr = { .a = CLOCK_REALTIME, .b = CLOCK_TAI, .whole_s = 1 };
	struct clock_pair rm = { .a = CLOCK_MONOTONIC, .b = CLOCK_REALTIME };
	struct timex tx = { .modes = 0 };	/* read only */
	struct timespec m1, r, m2;
	int64_t off, lo, hi;

	assert_true(adjtimex(&tx) >= 0);
	assert_int_equal(clock_pair_offset(&tr), (int64_t)tx.tai * NTPX_NS_PER_SEC);
	/* One sandwich read here: the offset lies within it, the pair's
	   estimate within half its own width of the offset. */
	off = clock_pair_offset(&rm);
	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m2);
	hi = (r.tv_sec - m1.tv_sec) * NTPX_NS_PER_SEC + r.tv_nsec - m1.tv_nsec;
	lo = (r.tv_sec - m2.tv_sec) * NTPX_NS_PER_SEC + r.tv_nsec - m2.tv_nsec;
	assert_true(off >= lo - rm.width / 2 - 1);
	assert_true(off <= hi + rm.width / 2 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_stall_between),
		cmocka_unit_test(test_stall_first),
		cmocka_unit_test(test_stall_every_try),
		cmocka_unit_test(test_tai_whole_seconds),
		cmocka_unit_test(test_real_clocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
