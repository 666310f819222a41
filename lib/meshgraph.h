/* SPDX-License-Identifier: ISC */
/*
 * meshgraph.h - the graph of a mesh of hosts that probe each other, and
 * what it lets loops see (doc/ntpmesh.1, WHAT LOOPS SEE).
 *
 * Hosts are 0 .. nhosts - 1; a link joins two of them (a < b) and is
 * used or not (a window may lack a link's records).  Every function
 * looks at the used links only.
 *
 * The measurement of link e, y_e = theta_b - theta_a + A_e / 2, has the
 * clocks theta in the cut space of the graph (the differences of
 * per-host values) and the asymmetries A in the whole link space.  The
 * sum of y around a loop cancels the clocks: the loops see exactly the
 * part of A outside the cut space (its cycle space part), and nothing of
 * an A that equals the differences of per-host values (a delay common
 * to every path out of one host).  What follows answers, for a given
 * graph: which loops form a basis (the fundamental cycles of a spanning
 * tree), whether a lone asymmetry on a link shows in a loop at all and
 * whether it can be told from an asymmetry elsewhere, and whether a set
 * of links is the only explanation of its L1 size.
 */
#ifndef NTPX_MESHGRAPH_H
#define NTPX_MESHGRAPH_H

#define MESH_MAX_HOSTS	16
#define MESH_MAX_LINKS	(MESH_MAX_HOSTS * (MESH_MAX_HOSTS - 1) / 2)

struct mesh_graph {
	int nhosts, nlinks;
	int a[MESH_MAX_LINKS], b[MESH_MAX_LINKS];	/* link e joins a[e] < b[e] */
	unsigned char used[MESH_MAX_LINKS];
};

/* A loop: hosts in order, and the link from each to the next (the last back to the first). */
struct mesh_cycle {
	int len;
	int host[MESH_MAX_HOSTS];
	int link[MESH_MAX_HOSTS];
	signed char sign[MESH_MAX_HOSTS];	/* +1: walked from a to b, -1: from b to a */
};

/* What a lone asymmetry on a link does to the loops. */
enum mesh_obs {
	MESH_OBS_NONE,		/* on no loop (a bridge): no loop sees it */
	MESH_OBS_SEEN,		/* loops see it, but an asymmetry on another link
				   explains them as well (a cut of two links holds it) */
	MESH_OBS_LOCATED,	/* loops see it and no other single link explains them */
};

/* Sets an empty graph of @nhosts hosts (at most MESH_MAX_HOSTS). */
void mesh_graph_init(struct mesh_graph *g, int nhosts);

/* Adds the used link a-b (a != b, in either order); returns its index, or -1 when full. */
int mesh_graph_link(struct mesh_graph *g, int a, int b);

/* The link between hosts x and y (in either order, used or not), or -1. */
int mesh_link_of(const struct mesh_graph *g, int x, int y);

/* The component of each host: comp[h] is the lowest host it reaches. */
void mesh_components(const struct mesh_graph *g, int comp[]);

/*
 * A spanning forest: breadth-first from @root, then from each host not
 * reached, in order; links taken in index order.  up[h] is the link to
 * h's parent (-1 at a root), depth[h] its distance; in_tree[e] marks the
 * forest's links.
 */
void mesh_forest(const struct mesh_graph *g, int root, int up[], int depth[],
		 unsigned char in_tree[]);

/*
 * The fundamental cycle of the used link @e not in the forest: its loop,
 * written from its lowest host towards the lower of that host's two
 * neighbours in it, so that the same loop reads the same whatever the
 * tree.
 */
void mesh_cycle_of(const struct mesh_graph *g, const int up[], const int depth[], int e,
		   struct mesh_cycle *c);

/* For every used link, what a lone asymmetry on it does (enum mesh_obs); unused: NONE. */
void mesh_observable(const struct mesh_graph *g, enum mesh_obs obs[]);

/* The number of spanning trees of @root's component (Kirchhoff's theorem), as a double. */
double mesh_tree_count(const struct mesh_graph *g, int root);

/*
 * Calls @fn with every spanning tree of @root's component (in_tree[e]
 * marks its links), in a fixed order; stops when @fn returns non-zero,
 * and returns that, else 0.
 */
int mesh_trees(const struct mesh_graph *g, int root,
	       int (*fn)(const unsigned char *in_tree, void *arg), void *arg);

/*
 * 1 when every cut of @root's component (the links between a set of its
 * hosts and the rest) has fewer of its links in @set than out of it: then
 * an asymmetry on the links of @set, whatever its values, is the only
 * one of least L1 norm among all that explain the same loops (the
 * null-space property, with cuts where Zhao et al. have cycles:
 * doc/ntpmesh.1).  0 otherwise.
 */
int mesh_cut_condition(const struct mesh_graph *g, int root, const unsigned char set[]);

#endif
