/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/meshgraph.c on graphs small enough to check by
 * hand: the loops of a spanning tree and how they read, which links a
 * lone asymmetry shows on, Cayley's counts of spanning trees, and the
 * cut condition where it holds and where it fails.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "meshgraph.h"

/* Link a-b of the test's graph g. */
#define LK(a, b) mesh_link_of(&g, (a), (b))

/* The complete graph on @n hosts, links in order 0-1, 0-2, ..., 1-2, ... */
static void complete(struct mesh_graph *g, int n)
{
	int a, b;

	mesh_graph_init(g, n);
	for (a = 0; a < n; a++)
		for (b = a + 1; b < n; b++)
			mesh_graph_link(g, a, b);
}

/*
 * K4 from host 0: the tree is 0-1, 0-2, 0-3 (breadth first, links in
 * order), and each other link closes a triangle through 0, read from 0
 * towards its lower neighbour: 0 1 2 walks 0-1 and 1-2 forwards and 0-2
 * backwards.
 */
static void k4_loops(void **state)
{
	struct mesh_graph g;
	struct mesh_cycle c;
	unsigned char in_tree[MESH_MAX_LINKS];
	int up[MESH_MAX_HOSTS], depth[MESH_MAX_HOSTS];

	(void)state;
	complete(&g, 4);
	mesh_forest(&g, 0, up, depth, in_tree);
	assert_true(in_tree[LK(0, 1)] && in_tree[LK(0, 2)] && in_tree[LK(0, 3)]);
	assert_false(in_tree[LK(1, 2)] || in_tree[LK(1, 3)] || in_tree[LK(2, 3)]);
	mesh_cycle_of(&g, up, depth, LK(1, 2), &c);
	assert_int_equal(c.len, 3);
	assert_true(c.host[0] == 0 && c.host[1] == 1 && c.host[2] == 2);
	assert_true(c.link[0] == LK(0, 1) && c.link[1] == LK(1, 2) && c.link[2] == LK(0, 2));
	assert_true(c.sign[0] == 1 && c.sign[1] == 1 && c.sign[2] == -1);
	mesh_cycle_of(&g, up, depth, LK(2, 3), &c);
	assert_true(c.host[0] == 0 && c.host[1] == 2 && c.host[2] == 3);
}

/* A ring of five reads 0 1 2 3 4 from whichever host its tree grows. */
static void ring_reads_the_same_from_any_root(void **state)
{
	struct mesh_graph g;
	struct mesh_cycle c;
	unsigned char in_tree[MESH_MAX_LINKS];
	int up[MESH_MAX_HOSTS], depth[MESH_MAX_HOSTS], root, e, i, off;

	(void)state;
	mesh_graph_init(&g, 5);
	for (i = 0; i < 5; i++)
		mesh_graph_link(&g, i, (i + 1) % 5);
	for (root = 0; root < 5; root++) {
		mesh_forest(&g, root, up, depth, in_tree);
		for (e = off = 0; e < g.nlinks; e++)
			off += !in_tree[e];
		assert_int_equal(off, 1);
		for (e = 0; in_tree[e]; e++)
			;
		mesh_cycle_of(&g, up, depth, e, &c);
		assert_int_equal(c.len, 5);
		for (i = 0; i < 5; i++)
			assert_int_equal(c.host[i], i);
		assert_int_equal(c.sign[4], -1);	/* 4 back to 0 walks 0-4 backwards */
	}
}

/*
 * What a lone asymmetry shows on: a triangle 0 1 2 with 3 hanging off 2
 * and a separate link 4-5.  The triangle's links are on a loop, but the
 * loop is all there is (an asymmetry on either other link explains it as
 * well): seen.  2-3 and 4-5 are on no loop.  In K4 every link is located;
 * in K4 without 2-3, host 2 has two links, and each is seen only.
 */
static void observability(void **state)
{
	struct mesh_graph g;
	enum mesh_obs obs[MESH_MAX_LINKS];
	int comp[MESH_MAX_HOSTS];

	(void)state;
	mesh_graph_init(&g, 6);
	mesh_graph_link(&g, 0, 1);
	mesh_graph_link(&g, 1, 2);
	mesh_graph_link(&g, 0, 2);
	mesh_graph_link(&g, 3, 2);
	mesh_graph_link(&g, 4, 5);
	mesh_components(&g, comp);
	assert_true(comp[0] == 0 && comp[1] == 0 && comp[2] == 0 && comp[3] == 0);
	assert_true(comp[4] == 4 && comp[5] == 4);
	mesh_observable(&g, obs);
	assert_int_equal(obs[LK(0, 1)], MESH_OBS_SEEN);
	assert_int_equal(obs[LK(1, 2)], MESH_OBS_SEEN);
	assert_int_equal(obs[LK(0, 2)], MESH_OBS_SEEN);
	assert_int_equal(obs[LK(2, 3)], MESH_OBS_NONE);
	assert_int_equal(obs[LK(4, 5)], MESH_OBS_NONE);

	complete(&g, 4);
	mesh_observable(&g, obs);
	for (int e = 0; e < g.nlinks; e++)
		assert_int_equal(obs[e], MESH_OBS_LOCATED);
	g.used[LK(2, 3)] = 0;
	mesh_observable(&g, obs);
	assert_int_equal(obs[LK(0, 1)], MESH_OBS_LOCATED);
	assert_int_equal(obs[LK(0, 2)], MESH_OBS_SEEN);
	assert_int_equal(obs[LK(1, 2)], MESH_OBS_SEEN);
	assert_int_equal(obs[LK(2, 3)], MESH_OBS_NONE);	/* not used */
}

static int count_tree(const unsigned char *in_tree, void *arg)
{
	int *n = arg;

	(void)in_tree;
	(*n)++;
	return 0;
}

/* Cayley: K_n has n^(n - 2) spanning trees; a ring of n, n; a path, 1; the walk finds as many. */
static void tree_counts(void **state)
{
	static const int cayley[] = { 0, 0, 1, 3, 16, 125, 1296, 16807 };
	struct mesh_graph g;
	int n, walked;

	(void)state;
	for (n = 2; n <= 7; n++) {
		complete(&g, n);
		assert_float_equal(mesh_tree_count(&g, 0), cayley[n], 0);
		walked = 0;
		assert_int_equal(mesh_trees(&g, n - 1, count_tree, &walked), 0);
		assert_int_equal(walked, cayley[n]);
	}
	mesh_graph_init(&g, 7);
	for (n = 0; n < 5; n++)
		mesh_graph_link(&g, n, (n + 1) % 5);
	mesh_graph_link(&g, 5, 6);	/* another component: not counted */
	assert_float_equal(mesh_tree_count(&g, 2), 5, 0);
	assert_float_equal(mesh_tree_count(&g, 6), 1, 0);
	walked = 0;
	mesh_trees(&g, 2, count_tree, &walked);
	assert_int_equal(walked, 5);
}

/* set[] of the links named by pairs a, b, ..., -1. */
static const unsigned char *set_of(const struct mesh_graph *g, ...)
{
	static unsigned char set[MESH_MAX_LINKS];
	va_list ap;
	int a, b;

	memset(set, 0, sizeof(set));
	va_start(ap, g);
	while ((a = va_arg(ap, int)) >= 0) {
		b = va_arg(ap, int);
		set[mesh_link_of(g, a, b)] = 1;
	}
	va_end(ap);
	return set;
}

/*
 * The cut condition.  K4: one link passes (every cut through it has two
 * more); two links at one host fail (the host's cut is two of three:
 * the third link alone explains them as well); two apart fail too (the
 * cut between {0,2} and {1,3} is half theirs: a tie).  K5 holds two
 * links apart and K6 three (a matching); K6 holds two at a host (two of
 * five) but not three.  A triangle never holds one (each cut is one of
 * two).
 */
static void cut_condition(void **state)
{
	struct mesh_graph g;

	(void)state;
	complete(&g, 4);
	assert_true(mesh_cut_condition(&g, 0, set_of(&g, 0, 1, -1)));
	assert_false(mesh_cut_condition(&g, 0, set_of(&g, 0, 1, 0, 2, -1)));
	assert_false(mesh_cut_condition(&g, 0, set_of(&g, 0, 1, 2, 3, -1)));
	assert_true(mesh_cut_condition(&g, 3, set_of(&g, -1)));
	complete(&g, 5);
	assert_true(mesh_cut_condition(&g, 0, set_of(&g, 0, 1, 2, 3, -1)));
	assert_false(mesh_cut_condition(&g, 0, set_of(&g, 0, 1, 0, 2, -1)));
	complete(&g, 6);
	assert_true(mesh_cut_condition(&g, 0, set_of(&g, 0, 1, 0, 2, -1)));
	assert_true(mesh_cut_condition(&g, 5, set_of(&g, 0, 1, 2, 3, 4, 5, -1)));
	assert_false(mesh_cut_condition(&g, 0, set_of(&g, 0, 1, 0, 2, 0, 3, -1)));
	complete(&g, 3);
	assert_false(mesh_cut_condition(&g, 0, set_of(&g, 1, 2, -1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(k4_loops),
		cmocka_unit_test(ring_reads_the_same_from_any_root),
		cmocka_unit_test(observability),
		cmocka_unit_test(tree_counts),
		cmocka_unit_test(cut_condition),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
