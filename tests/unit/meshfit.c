/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/meshfit.c on exact data, where every answer is
 * known: consistent offsets come back whole; one asymmetric link in K4 is
 * blamed alone and measured exactly, where least squares spreads it over
 * the hosts; in a triangle it is seen but not placed; a delay on every
 * path out of one host is not seen at all and moves that host's clock;
 * two links apart in K6 are both found.  The variances against effective
 * resistances worked by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "meshfit.h"

/* The hosts' true offsets, ns, host 0 the reference. */
static const double theta[] = { 0, 1000, -50000, 3000, 7000, -2500, 42, 9 };

static struct mesh_graph g;
static double y[MESH_MAX_LINKS], var[MESH_MAX_LINKS];
static struct mesh_fit f;

/* Link a-b of g. */
#define LK(a, b) mesh_link_of(&g, (a), (b))

/* K_n with exact measurements of theta, each of variance 1 ns^2. */
static void complete(int n)
{
	int a, b, e;

	mesh_graph_init(&g, n);
	for (a = 0; a < n; a++)
		for (b = a + 1; b < n; b++) {
			e = mesh_graph_link(&g, a, b);
			y[e] = theta[b] - theta[a];
			var[e] = 1;
		}
}

/* A one-way delay of @d ns from host @from to host @to: half of it in the offset. */
static void delay(int from, int to, double d)
{
	y[from < to ? LK(from, to) : LK(to, from)] += (from < to ? d : -d) / 2;
}

static void consistent(void **state)
{
	int h, e;

	(void)state;
	complete(4);
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_int_equal(f.nloops, 3);
	assert_int_equal(f.loops_ref, 3);
	for (e = 0; e < f.nloops; e++)
		assert_float_equal(f.loop[e].closure, 0, 1e-9);
	assert_true(f.robust);
	assert_float_equal(f.trees, 16, 0);
	assert_int_equal(f.nblamed, 0);
	assert_int_equal(f.blame, MESH_BLAME_NONE);
	for (h = 0; h < 4; h++) {
		assert_float_equal(f.ls[h], theta[h], 1e-6);
		assert_float_equal(f.rob[h], theta[h], 1e-6);
	}
	for (e = 0; e < g.nlinks; e++)
		assert_float_equal(f.asym[e], 0, 1e-6);
	/* K4, unit variances: var(theta_h) is the effective resistance to 0, 2/4 */
	assert_float_equal(f.ls_var[0], 0, 0);
	assert_float_equal(f.ls_var[1], 0.5, 1e-9);
	assert_float_equal(f.rob_var[3], 0.5, 1e-9);
	/* each loop's variance is that of its three links */
	assert_float_equal(f.loop[0].var, 3, 0);
}

/*
 * 1 ms from 1 to 2 and 200 ns from 0 to 3 in K4, every link known to
 * 1 ns: both are blamed, the small one rightly, as its loops close far
 * beyond their noise.  With a resolution of 1 us (mesh_fit_min) the small
 * one is left to least squares, which spreads it over the hosts, none
 * further off than its own 100 ns offset error; below 200 ns both are
 * blamed again.
 */
static void a_resolution_for_blame(void **state)
{
	int h;

	(void)state;
	complete(4);
	delay(1, 2, 1e6);
	delay(0, 3, 200);
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_int_equal(f.nblamed, 2);
	assert_true(f.blamed[LK(1, 2)] && f.blamed[LK(0, 3)]);
	mesh_fit_min(&g, 0, y, var, 8, 1000, &f);
	assert_int_equal(f.nblamed, 1);
	assert_true(f.blamed[LK(1, 2)]);
	assert_float_equal(f.asym[LK(1, 2)], 1e6, 100);
	for (h = 1; h < 4; h++)
		assert_true(fabs(f.rob[h] - theta[h]) <= 100 + 1e-6);
	mesh_fit_min(&g, 0, y, var, 8, 150, &f);
	assert_int_equal(f.nblamed, 2);
}

/*
 * 1 ms from 1 to 2 in K4.  Least squares puts a quarter of the 500 us
 * offset error on each end (K_n: 1/n); the robust fit blames 1-2 alone,
 * gives every host exactly and measures the asymmetry exactly.  Its
 * variance: 4 (var y_12 + var(theta_2 - theta_1) without 1-2), and the
 * resistance between 1 and 2 in K4 less 1-2 is two paths of 2 in parallel.
 */
static void one_link_in_k4(void **state)
{
	int h, e;

	(void)state;
	complete(4);
	delay(1, 2, 1e6);
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_float_equal(fabs(f.loop[0].closure), 5e5, 1e-6);
	assert_float_equal(f.ls[1] - theta[1], -125000, 1e-3);
	assert_float_equal(f.ls[2] - theta[2], 125000, 1e-3);
	assert_int_equal(f.nblamed, 1);
	assert_true(f.blamed[LK(1, 2)]);
	assert_int_equal(f.blame, MESH_BLAME_UNIQUE);
	for (h = 0; h < 4; h++)
		assert_float_equal(f.rob[h], theta[h], 1e-6);
	for (e = 0; e < g.nlinks; e++)
		assert_float_equal(f.asym[e], e == LK(1, 2) ? 1e6 : 0, 1e-6);
	assert_float_equal(f.asym_var[LK(1, 2)], 4 * (1 + 1), 1e-9);
	for (e = 0; e < g.nlinks; e++)
		assert_int_equal(f.obs[e], MESH_OBS_LOCATED);
}

/*
 * In a triangle the loop shows 1 ms, and some link is blamed, but the
 * blame is ambiguous; the other two are then on no loop of unblamed links.
 */
static void one_link_in_a_triangle(void **state)
{
	int e;

	(void)state;
	complete(3);
	delay(0, 1, 1e6);
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_int_equal(f.nloops, 1);
	assert_float_equal(fabs(f.loop[0].closure), 5e5, 1e-6);
	assert_int_equal(f.nblamed, 1);
	assert_int_equal(f.blame, MESH_BLAME_AMBIGUOUS);
	/* the two not blamed are on no loop without it: no estimate for them */
	for (e = 0; e < g.nlinks; e++) {
		assert_int_equal(f.obs[e], f.blamed[e] ? MESH_OBS_SEEN : MESH_OBS_NONE);
		assert_int_equal(isnan(f.asym[e]), !f.blamed[e]);
	}
}

/*
 * 1 ms on every path out of host 1: the measurements are exactly those
 * of host 1's clock 500 us behind.  No loop sees it, nothing is blamed,
 * and both fits put host 1 500 us off: what loops cannot see.
 */
static void a_hosts_own_delay_is_not_seen(void **state)
{
	int e, h;

	(void)state;
	complete(4);
	for (h = 0; h < 4; h++)
		if (h != 1)
			delay(1, h, 1e6);
	mesh_fit(&g, 0, y, var, 8, &f);
	for (e = 0; e < f.nloops; e++)
		assert_float_equal(f.loop[e].closure, 0, 1e-6);
	assert_int_equal(f.nblamed, 0);
	assert_int_equal(f.blame, MESH_BLAME_NONE);
	assert_float_equal(f.ls[1] - theta[1], -5e5, 1e-6);
	assert_float_equal(f.rob[1] - theta[1], -5e5, 1e-6);
	assert_float_equal(f.rob[2] - theta[2], 0, 1e-6);
}

/* Two links apart in K6, 1 ms and 100 us: both blamed, both measured, every host exact. */
static void two_links_in_k6(void **state)
{
	int e, h;

	(void)state;
	complete(6);
	delay(1, 2, 1e6);
	delay(4, 3, 1e5);
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_int_equal(f.nloops, 10);
	assert_int_equal(f.nblamed, 2);
	assert_true(f.blamed[LK(1, 2)] && f.blamed[LK(3, 4)]);
	assert_int_equal(f.blame, MESH_BLAME_UNIQUE);
	assert_float_equal(f.asym[LK(1, 2)], 1e6, 1e-6);
	assert_float_equal(f.asym[LK(3, 4)], -1e5, 1e-6);
	for (e = 0; e < g.nlinks; e++)
		if (!f.blamed[e])
			assert_float_equal(f.asym[e], 0, 1e-6);
	for (h = 0; h < 6; h++)
		assert_float_equal(f.rob[h], theta[h], 1e-6);
}

/*
 * 1 ms from 1 to 3 and from 3 to 2 in K4: the robust fit blames both,
 * which leaves 0-3 on no loop of the links not blamed (a bridge among
 * them).  That fit takes it as exact, so its asymmetry is not known: no
 * estimate, no interval (a u95 of 0 would claim exactness), and it is
 * flagged as unobservable.  The links on loops keep theirs.
 */
static void a_bridge_among_the_unblamed(void **state)
{
	int e;

	(void)state;
	complete(4);
	delay(1, 3, 1e6);
	delay(3, 2, 1e6);
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_int_equal(f.nblamed, 2);
	assert_true(f.blamed[LK(1, 3)] && f.blamed[LK(2, 3)]);
	assert_int_equal(f.obs[LK(0, 3)], MESH_OBS_NONE);
	assert_true(isnan(f.asym[LK(0, 3)]) && isnan(f.asym_var[LK(0, 3)]));
	assert_float_equal(f.asym[LK(1, 3)], 1e6, 1e-6);
	assert_float_equal(f.asym[LK(2, 3)], -1e6, 1e-6);
	for (e = 0; e < g.nlinks; e++) {
		if (e == LK(0, 3) || f.blamed[e])
			continue;
		assert_int_equal(f.obs[e], MESH_OBS_LOCATED);
		assert_float_equal(f.asym[e], 0, 1e-6);
		assert_true(f.asym_var[e] > 0.5);
	}
	assert_float_equal(f.rob[3], theta[3], 1e-6);
}

/* Host 4 and 5 apart from the rest: no offsets for them, their loop still counted. */
static void two_components(void **state)
{
	int e;

	(void)state;
	mesh_graph_init(&g, 7);
	mesh_graph_link(&g, 0, 1);
	mesh_graph_link(&g, 1, 2);
	mesh_graph_link(&g, 0, 2);
	mesh_graph_link(&g, 3, 4);
	mesh_graph_link(&g, 4, 5);
	mesh_graph_link(&g, 3, 5);
	for (e = 0; e < g.nlinks; e++) {
		y[e] = theta[g.b[e]] - theta[g.a[e]];
		var[e] = 1;
	}
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_int_equal(f.nloops, 2);
	assert_int_equal(f.loops_ref, 1);
	assert_true(f.reached[2] && !f.reached[3] && !f.reached[6]);
	assert_float_equal(f.ls[2], theta[2], 1e-6);
	assert_true(isnan(f.ls[4]) && isnan(f.rob[4]) && isnan(f.asym[LK(3, 4)]));
	assert_false(isnan(f.asym[LK(1, 2)]));
}

/* K9 has 9^7 spanning trees, more than are tried: least squares only. */
static void too_many_trees(void **state)
{
	(void)state;
	complete(8);
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_true(f.robust);
	mesh_graph_init(&g, 9);
	{
		int a, b, e;

		for (a = 0; a < 9; a++)
			for (b = a + 1; b < 9; b++) {
				e = mesh_graph_link(&g, a, b);
				y[e] = 0;
				var[e] = 1;
			}
	}
	mesh_fit(&g, 0, y, var, 8, &f);
	assert_float_equal(f.trees, 4782969, 0);
	assert_false(f.robust);
	assert_true(isnan(f.rob[1]));
	assert_float_equal(f.ls[1], 0, 1e-9);
}

/* mesh_ls refuses links that leave a host out. */
static void ls_refuses_a_cut_off_host(void **state)
{
	unsigned char skip[MESH_MAX_LINKS] = { 0 };
	double th[MESH_MAX_HOSTS];

	(void)state;
	complete(3);
	skip[LK(0, 2)] = skip[LK(1, 2)] = 1;
	assert_int_equal(mesh_ls(&g, 0, y, var, skip, th, NULL), -1);
	skip[LK(1, 2)] = 0;
	assert_int_equal(mesh_ls(&g, 0, y, var, skip, th, NULL), 0);
	assert_float_equal(th[2], theta[2], 1e-6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(consistent),
		cmocka_unit_test(one_link_in_k4),
		cmocka_unit_test(a_resolution_for_blame),
		cmocka_unit_test(one_link_in_a_triangle),
		cmocka_unit_test(a_hosts_own_delay_is_not_seen),
		cmocka_unit_test(two_links_in_k6),
		cmocka_unit_test(a_bridge_among_the_unblamed),
		cmocka_unit_test(two_components),
		cmocka_unit_test(too_many_trees),
		cmocka_unit_test(ls_refuses_a_cut_off_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
