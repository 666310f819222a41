/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/peer.c: miss runs, the backoff schedule, the epoch,
 * and the reset handed to the caller, driven through peer.h alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "opt_units.h"
#include "peer.h"
#include "util_private.h"


static struct peer_config cfg_small = {
	.miss_limit = 3, .backoff_min_ns = 100 * NTPX_NS_PER_MS, .backoff_max_ns = 1 * NTPX_NS_PER_SEC,
};

/* A peer resolved once at t = 0, as a transport leaves it after open. */
static void peer_up(struct peer *p, const struct peer_config *cfg)
{
	peer_init(p, cfg);
	assert_true(peer_resolve_due(p, 0));
	peer_resolve_ok(p, 0, PEER_EPOCH_NONE);
	assert_int_equal(p->state, PEER_RESOLVED);
	assert_false(peer_take_reset(p));	/* the first resolution is no reset */
}

static void test_defaults(void **state)
{
	struct peer p;
	struct peer_config zero = { 0 };

	peer_init(&p, NULL);
	assert_int_equal(p.cfg.miss_limit, PEER_MISS_LIMIT_DEFAULT);
	assert_int_equal(p.cfg.backoff_min_ns, PEER_BACKOFF_MIN_DEFAULT);
	assert_int_equal(p.cfg.backoff_max_ns, PEER_BACKOFF_MAX_DEFAULT);
	assert_int_equal(p.state, PEER_UNRESOLVED);
	peer_init(&p, &zero);
	assert_int_equal(p.cfg.miss_limit, 3);
	/* Due at once, whatever the monotonic clock reads. */
	assert_true(peer_resolve_due(&p, -5 * NTPX_NS_PER_SEC));
}

static void test_miss_run(void **state)
{
	struct peer p;

	peer_up(&p, &cfg_small);
	assert_int_equal(peer_miss(&p, 1 * NTPX_NS_PER_SEC), PEER_OK);
	assert_int_equal(peer_miss(&p, 2 * NTPX_NS_PER_SEC), PEER_OK);
	/* A reply breaks the run: two more misses are not yet a loss. */
	assert_int_equal(peer_reply(&p, 2 * NTPX_NS_PER_SEC + 1, PEER_EPOCH_NONE), PEER_OK);
	assert_int_equal(peer_miss(&p, 3 * NTPX_NS_PER_SEC), PEER_OK);
	assert_int_equal(peer_miss(&p, 4 * NTPX_NS_PER_SEC), PEER_OK);
	assert_int_equal(p.state, PEER_RESOLVED);
	assert_false(peer_resolve_due(&p, 4 * NTPX_NS_PER_SEC));
	/* The third in a row is. */
	assert_int_equal(peer_miss(&p, 5 * NTPX_NS_PER_SEC), PEER_LOST);
	assert_int_equal(p.state, PEER_UNRESOLVED);
	assert_true(peer_resolve_due(&p, 5 * NTPX_NS_PER_SEC));
	assert_int_equal(p.count.misses, 5);
	assert_int_equal(p.count.losses, 1);
	/* Misses while unresolved are counted, nothing more. */
	assert_int_equal(peer_miss(&p, 6 * NTPX_NS_PER_SEC), PEER_OK);
	assert_int_equal(peer_miss(&p, 7 * NTPX_NS_PER_SEC), PEER_OK);
	assert_int_equal(peer_miss(&p, 8 * NTPX_NS_PER_SEC), PEER_OK);
	assert_int_equal(p.count.losses, 1);
	assert_int_equal(p.count.misses, 8);
}

static void test_miss_limit_one(void **state)
{
	struct peer_config c = { .miss_limit = 1 };
	struct peer p;

	peer_up(&p, &c);
	assert_int_equal(peer_miss(&p, NTPX_NS_PER_SEC), PEER_LOST);
}

static void test_backoff_schedule(void **state)
{
	static const int64_t want[] = {
		0, 100 * NTPX_NS_PER_MS, 200 * NTPX_NS_PER_MS, 400 * NTPX_NS_PER_MS, 800 * NTPX_NS_PER_MS,
		1 * NTPX_NS_PER_SEC, 1 * NTPX_NS_PER_SEC, 1 * NTPX_NS_PER_SEC,
	};
	struct peer_config huge = { .miss_limit = 3, .backoff_min_ns = 3 * NTPX_NS_PER_SEC,
				    .backoff_max_ns = INT64_MAX };
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		assert_int_equal(peer_backoff_ns(&cfg_small, i), want[i]);
	/* Bounded without overflow, however many attempts. */
	assert_int_equal(peer_backoff_ns(&cfg_small, 1000), 1 * NTPX_NS_PER_SEC);
	assert_true(peer_backoff_ns(&huge, 200) > 0);
	assert_true(peer_backoff_ns(&huge, 200) >= peer_backoff_ns(&huge, 199));
}

static void test_backoff_drives_due(void **state)
{
	struct peer p;
	int64_t t;

	peer_up(&p, &cfg_small);
	peer_miss(&p, 1 * NTPX_NS_PER_SEC);
	peer_miss(&p, 2 * NTPX_NS_PER_SEC);
	assert_int_equal(peer_miss(&p, 3 * NTPX_NS_PER_SEC), PEER_LOST);
	/*
	 * The open's resolution was attempt 1, so the first retry after the
	 * loss waits backoff(1) from it, long past: due at once.
	 */
	t = 3 * NTPX_NS_PER_SEC;
	assert_true(peer_resolve_due(&p, t));
	peer_resolve_failed(&p, t);			/* attempt 2 */
	assert_false(peer_resolve_due(&p, t + 200 * NTPX_NS_PER_MS - 1));
	assert_true(peer_resolve_due(&p, t + 200 * NTPX_NS_PER_MS));
	t += 200 * NTPX_NS_PER_MS;
	peer_resolve_failed(&p, t);			/* attempt 3 */
	assert_int_equal(peer_next_attempt_ns(&p), t + 400 * NTPX_NS_PER_MS);
	t += 400 * NTPX_NS_PER_MS;
	peer_resolve_failed(&p, t);			/* attempt 4 */
	t += 800 * NTPX_NS_PER_MS;
	peer_resolve_failed(&p, t);			/* attempt 5: bounded */
	assert_int_equal(peer_next_attempt_ns(&p), t + 1 * NTPX_NS_PER_SEC);
	assert_int_equal(p.count.resolve_failures, 4);
	assert_int_equal(p.state, PEER_UNRESOLVED);
}

static void test_backoff_survives_resolution(void **state)
{
	struct peer p;

	/* Resolves fine, never answers: each loss waits longer to retry. */
	peer_up(&p, &cfg_small);			/* attempt 1 at 0 */
	peer_miss(&p, 1 * NTPX_NS_PER_SEC);
	peer_miss(&p, 1 * NTPX_NS_PER_SEC);
	peer_miss(&p, 1 * NTPX_NS_PER_SEC);
	assert_true(peer_resolve_due(&p, 1 * NTPX_NS_PER_SEC));
	peer_resolve_ok(&p, 1 * NTPX_NS_PER_SEC, PEER_EPOCH_NONE);	/* attempt 2 */
	peer_miss(&p, 1 * NTPX_NS_PER_SEC + 10 * NTPX_NS_PER_MS);
	peer_miss(&p, 1 * NTPX_NS_PER_SEC + 20 * NTPX_NS_PER_MS);
	assert_int_equal(peer_miss(&p, 1 * NTPX_NS_PER_SEC + 30 * NTPX_NS_PER_MS), PEER_LOST);
	assert_false(peer_resolve_due(&p, 1 * NTPX_NS_PER_SEC + 199 * NTPX_NS_PER_MS));
	assert_true(peer_resolve_due(&p, 1 * NTPX_NS_PER_SEC + 200 * NTPX_NS_PER_MS));
	/* A reply rewinds it: after the next loss, retry at once. */
	peer_resolve_ok(&p, 1 * NTPX_NS_PER_SEC + 200 * NTPX_NS_PER_MS, PEER_EPOCH_NONE);
	peer_reply(&p, 2 * NTPX_NS_PER_SEC, PEER_EPOCH_NONE);
	peer_miss(&p, 3 * NTPX_NS_PER_SEC);
	peer_miss(&p, 3 * NTPX_NS_PER_SEC);
	peer_miss(&p, 3 * NTPX_NS_PER_SEC);
	assert_true(peer_resolve_due(&p, 3 * NTPX_NS_PER_SEC));
}

static void test_epoch_change(void **state)
{
	struct peer p;

	peer_up(&p, &cfg_small);
	/* The first epoch seen is adopted. */
	assert_int_equal(peer_reply(&p, 1 * NTPX_NS_PER_SEC, 0x1234), PEER_OK);
	assert_int_equal(p.epoch, 0x1234);
	assert_int_equal(peer_reply(&p, 2 * NTPX_NS_PER_SEC, 0x1234), PEER_OK);
	/* Another epoch: the server restarted; drop, resolve at once. */
	assert_int_equal(peer_reply(&p, 3 * NTPX_NS_PER_SEC, 0xbeef), PEER_LOST);
	assert_int_equal(p.state, PEER_UNRESOLVED);
	assert_int_equal(p.count.epoch_changes, 1);
	assert_int_equal(p.count.replies, 2);
	assert_true(peer_resolve_due(&p, 3 * NTPX_NS_PER_SEC));
	assert_false(peer_take_reset(&p));	/* not until resolved again */
	peer_resolve_ok(&p, 3 * NTPX_NS_PER_SEC, 0xbeef);
	assert_true(peer_take_reset(&p));
	assert_int_equal(peer_reply(&p, 4 * NTPX_NS_PER_SEC, 0xbeef), PEER_OK);
	/* A transport without epochs never trips it. */
	assert_int_equal(peer_reply(&p, 5 * NTPX_NS_PER_SEC, PEER_EPOCH_NONE), PEER_OK);
	assert_int_equal(p.count.epoch_changes, 1);
}

static void test_epoch_from_resolution(void **state)
{
	struct peer p;

	peer_init(&p, &cfg_small);
	peer_resolve_ok(&p, 0, 77);
	assert_int_equal(peer_reply(&p, NTPX_NS_PER_SEC, 78), PEER_LOST);
	/* A late reply of the old server while unresolved: dropped again. */
	assert_int_equal(peer_reply(&p, NTPX_NS_PER_SEC + 1, 77), PEER_LOST);
	assert_int_equal(p.count.losses, 1);
	assert_int_equal(p.count.epoch_changes, 2);
}

static void test_reset_once_per_reresolution(void **state)
{
	struct peer p;
	int i;

	peer_up(&p, &cfg_small);
	for (i = 0; i < 3; i++)
		peer_miss(&p, NTPX_NS_PER_SEC);
	assert_false(peer_take_reset(&p));	/* lost, not yet found */
	peer_resolve_failed(&p, NTPX_NS_PER_SEC);
	assert_false(peer_take_reset(&p));
	peer_resolve_ok(&p, 2 * NTPX_NS_PER_SEC, PEER_EPOCH_NONE);
	assert_true(peer_take_reset(&p));
	assert_false(peer_take_reset(&p));	/* handed over once */
	peer_reply(&p, 3 * NTPX_NS_PER_SEC, PEER_EPOCH_NONE);
	assert_false(peer_take_reset(&p));
	assert_int_equal(p.count.resets, 1);
	assert_int_equal(p.count.resolutions, 2);
}

static void test_invalidate(void **state)
{
	struct peer p;

	peer_up(&p, &cfg_small);
	peer_miss(&p, NTPX_NS_PER_SEC);
	peer_miss(&p, NTPX_NS_PER_SEC);
	/* Port went down: stale at once, not after a third miss. */
	peer_invalidate(&p, 2 * NTPX_NS_PER_SEC);
	assert_int_equal(p.state, PEER_UNRESOLVED);
	assert_int_equal(p.count.losses, 1);
	peer_resolve_failed(&p, 2 * NTPX_NS_PER_SEC);
	peer_resolve_failed(&p, 2 * NTPX_NS_PER_SEC + 100 * NTPX_NS_PER_MS);
	assert_false(peer_resolve_due(&p, 2 * NTPX_NS_PER_SEC + 200 * NTPX_NS_PER_MS));
	/* Port came up: the backoff rewinds, an attempt is due now. */
	peer_invalidate(&p, 2 * NTPX_NS_PER_SEC + 250 * NTPX_NS_PER_MS);
	assert_true(peer_resolve_due(&p, 2 * NTPX_NS_PER_SEC + 250 * NTPX_NS_PER_MS));
	assert_int_equal(p.count.losses, 1);	/* lost once, not twice */
	peer_resolve_ok(&p, 2 * NTPX_NS_PER_SEC + 250 * NTPX_NS_PER_MS, PEER_EPOCH_NONE);
	assert_true(peer_take_reset(&p));
	/* The miss run started afresh: two misses are no loss. */
	assert_int_equal(peer_miss(&p, 3 * NTPX_NS_PER_SEC), PEER_OK);
	assert_int_equal(peer_miss(&p, 4 * NTPX_NS_PER_SEC), PEER_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_miss_run),
		cmocka_unit_test(test_miss_limit_one),
		cmocka_unit_test(test_backoff_schedule),
		cmocka_unit_test(test_backoff_drives_due),
		cmocka_unit_test(test_backoff_survives_resolution),
		cmocka_unit_test(test_epoch_change),
		cmocka_unit_test(test_epoch_from_resolution),
		cmocka_unit_test(test_reset_once_per_reresolution),
		cmocka_unit_test(test_invalidate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
