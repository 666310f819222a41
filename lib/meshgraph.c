/* SPDX-License-Identifier: ISC */
/*
 * meshgraph.c - a mesh's graph: components, a spanning forest and its
 * fundamental cycles, what loops can see of a lone asymmetry, spanning
 * trees counted and walked, the cut condition (meshgraph.h).
 *
 * Meshes are small (MESH_MAX_HOSTS hosts): every walk here is over the
 * link list, with no adjacency structure to build or keep in step.
 */
#include <math.h>
#include <string.h>

#include "meshgraph.h"

void mesh_graph_init(struct mesh_graph *g, int nhosts)
{
	memset(g, 0, sizeof(*g));
	g->nhosts = nhosts;
}

int mesh_graph_link(struct mesh_graph *g, int a, int b)
{
	int e = g->nlinks;

	if (e == MESH_MAX_LINKS)
		return -1;
	g->a[e] = a < b ? a : b;
	g->b[e] = a < b ? b : a;
	g->used[e] = 1;
	g->nlinks++;
	return e;
}

static int other(const struct mesh_graph *g, int e, int h)
{
	return g->a[e] == h ? g->b[e] : g->a[e];
}

int mesh_link_of(const struct mesh_graph *g, int x, int y)
{
	int e;

	for (e = 0; e < g->nlinks; e++)
		if ((g->a[e] == x && g->b[e] == y) || (g->a[e] == y && g->b[e] == x))
			return e;
	return -1;
}

/*
 * One step of a breadth-first walk: the hosts not yet seen[] that host @u
 * joins over used links other than @skip1 and @skip2, marked, their link
 * in via[], appended to queue[] at @tail; the new tail.
 */
static int step(const struct mesh_graph *g, int u, int skip1, int skip2, unsigned char seen[],
		int queue[], int tail, int via[])
{
	int e, v;

	for (e = 0; e < g->nlinks; e++) {
		if (!g->used[e] || e == skip1 || e == skip2 || (g->a[e] != u && g->b[e] != u))
			continue;
		v = other(g, e, u);
		if (seen[v])
			continue;
		seen[v] = 1;
		via[v] = e;
		queue[tail++] = v;
	}
	return tail;
}

/* Marks in seen[] the hosts @s reaches over used links other than @skip1 and @skip2. */
static void reach(const struct mesh_graph *g, int s, int skip1, int skip2, unsigned char seen[])
{
	int queue[MESH_MAX_HOSTS], via[MESH_MAX_HOSTS], head = 0, tail = 0;

	memset(seen, 0, MESH_MAX_HOSTS);
	seen[s] = 1;
	queue[tail++] = s;
	while (head < tail)
		tail = step(g, queue[head++], skip1, skip2, seen, queue, tail, via);
}

void mesh_components(const struct mesh_graph *g, int comp[])
{
	unsigned char seen[MESH_MAX_HOSTS];
	int h, k;

	for (h = 0; h < g->nhosts; h++)
		comp[h] = -1;
	for (h = 0; h < g->nhosts; h++) {
		if (comp[h] >= 0)
			continue;
		reach(g, h, -1, -1, seen);
		for (k = 0; k < g->nhosts; k++)
			if (seen[k])
				comp[k] = h;
	}
}

void mesh_forest(const struct mesh_graph *g, int root, int up[], int depth[],
		 unsigned char in_tree[])
{
	unsigned char seen[MESH_MAX_HOSTS] = { 0 };
	int queue[MESH_MAX_HOSTS], k, h;

	memset(in_tree, 0, (size_t)g->nlinks);
	for (h = 0; h < g->nhosts; h++) {
		up[h] = -1;
		depth[h] = 0;
	}
	for (k = -1; k < g->nhosts; k++) {
		int s = k < 0 ? root : k, head = 0, tail = 0, from;

		if (seen[s])
			continue;
		seen[s] = 1;
		queue[tail++] = s;
		while (head < tail) {
			int u = queue[head++];

			from = tail;
			tail = step(g, u, -1, -1, seen, queue, tail, up);
			for (; from < tail; from++) {
				depth[queue[from]] = depth[u] + 1;
				in_tree[up[queue[from]]] = 1;
			}
		}
	}
}

void mesh_cycle_of(const struct mesh_graph *g, const int up[], const int depth[], int e,
		   struct mesh_cycle *c)
{
	int pu[MESH_MAX_HOSTS], pv[MESH_MAX_HOSTS], seq[MESH_MAX_HOSTS];
	int nu = 0, nv = 0, n = 0, x = g->a[e], y = g->b[e], i, lo = 0, fwd;

	/* Up from both ends to their lowest common ancestor. */
	while (depth[x] > depth[y]) {
		pu[nu++] = x;
		x = other(g, up[x], x);
	}
	while (depth[y] > depth[x]) {
		pv[nv++] = y;
		y = other(g, up[y], y);
	}
	while (x != y) {
		pu[nu++] = x;
		x = other(g, up[x], x);
		pv[nv++] = y;
		y = other(g, up[y], y);
	}
	/* a[e] up to the ancestor, down to b[e]; e closes the loop. */
	for (i = 0; i < nu; i++)
		seq[n++] = pu[i];
	seq[n++] = x;
	for (i = nv - 1; i >= 0; i--)
		seq[n++] = pv[i];
	/* From the lowest host, towards its lower neighbour in the loop. */
	for (i = 1; i < n; i++)
		if (seq[i] < seq[lo])
			lo = i;
	fwd = seq[(lo + 1) % n] < seq[(lo + n - 1) % n];
	c->len = n;
	for (i = 0; i < n; i++)
		c->host[i] = seq[((fwd ? lo + i : lo - i) % n + n) % n];
	for (i = 0; i < n; i++) {
		int h = c->host[i], next = c->host[(i + 1) % n];

		c->link[i] = mesh_link_of(g, h, next);
		c->sign[i] = g->a[c->link[i]] == h ? 1 : -1;
	}
}

void mesh_observable(const struct mesh_graph *g, enum mesh_obs obs[])
{
	unsigned char seen[MESH_MAX_HOSTS];
	int e, f;

	for (e = 0; e < g->nlinks; e++) {
		obs[e] = MESH_OBS_NONE;
		if (!g->used[e])
			continue;
		/* on a loop: its ends still joined without it */
		reach(g, g->a[e], e, -1, seen);
		if (!seen[g->b[e]])
			continue;
		/*
		 * Located when no other single link f is all that joins its
		 * ends without it: then every cut through e holds two more
		 * links, and fewer than half of every cut's links are e
		 * (mesh_cut_condition for e alone).
		 */
		obs[e] = MESH_OBS_LOCATED;
		for (f = 0; f < g->nlinks; f++) {
			if (f == e || !g->used[f])
				continue;
			reach(g, g->a[e], e, f, seen);
			if (!seen[g->b[e]]) {
				obs[e] = MESH_OBS_SEEN;
				break;
			}
		}
	}
}

/* The hosts of @root's component, root first; their number. */
static int component(const struct mesh_graph *g, int root, int hosts[])
{
	unsigned char seen[MESH_MAX_HOSTS];
	int h, n = 0;

	reach(g, root, -1, -1, seen);
	hosts[n++] = root;
	for (h = 0; h < g->nhosts; h++)
		if (seen[h] && h != root)
			hosts[n++] = h;
	return n;
}

double mesh_tree_count(const struct mesh_graph *g, int root)
{
	double m[MESH_MAX_HOSTS][MESH_MAX_HOSTS] = { { 0 } }, det = 1;
	int hosts[MESH_MAX_HOSTS], idx[MESH_MAX_HOSTS], n, i, j, k, e;

	n = component(g, root, hosts);
	for (i = 0; i < g->nhosts; i++)
		idx[i] = -1;
	/* The Laplacian without the root's row and column: rows 0 .. n - 2. */
	for (i = 1; i < n; i++)
		idx[hosts[i]] = i - 1;
	for (e = 0; e < g->nlinks; e++) {
		int a = idx[g->a[e]], b = idx[g->b[e]];

		if (!g->used[e] || (a < 0 && g->a[e] != root) || (b < 0 && g->b[e] != root))
			continue;
		if (a >= 0)
			m[a][a] += 1;
		if (b >= 0)
			m[b][b] += 1;
		if (a >= 0 && b >= 0) {
			m[a][b] -= 1;
			m[b][a] -= 1;
		}
	}
	/* Its determinant, by elimination with partial pivoting. */
	for (k = 0; k < n - 1; k++) {
		int p = k;

		for (i = k + 1; i < n - 1; i++)
			if (fabs(m[i][k]) > fabs(m[p][k]))
				p = i;
		if (m[p][k] == 0)
			return 0;
		if (p != k) {
			for (j = 0; j < n - 1; j++) {
				double t = m[k][j];

				m[k][j] = m[p][j];
				m[p][j] = t;
			}
			det = -det;
		}
		det *= m[k][k];
		for (i = k + 1; i < n - 1; i++) {
			double f = m[i][k] / m[k][k];

			for (j = k; j < n - 1; j++)
				m[i][j] -= f * m[k][j];
		}
	}
	return round(det);
}

struct tree_walk {
	const struct mesh_graph *g;
	int links[MESH_MAX_LINKS], nl, need;
	unsigned char in[MESH_MAX_LINKS];
	int (*fn)(const unsigned char *in_tree, void *arg);
	void *arg;
};

static int find(const int *uf, int h)
{
	while (uf[h] != h)
		h = uf[h];
	return h;
}

/*
 * Every set of @need - @chosen more links from links[from..] that keeps
 * the chosen ones a forest (uf: its components): each spanning tree
 * once, its links in increasing order.
 */
static int walk(struct tree_walk *w, int from, int chosen, const int *uf)
{
	int i, rc;

	if (chosen == w->need)
		return w->fn(w->in, w->arg);
	for (i = from; i <= w->nl - (w->need - chosen); i++) {
		int e = w->links[i], ra = find(uf, w->g->a[e]), rb = find(uf, w->g->b[e]);
		int next[MESH_MAX_HOSTS];

		if (ra == rb)
			continue;
		memcpy(next, uf, sizeof(next));
		next[ra] = rb;
		w->in[e] = 1;
		rc = walk(w, i + 1, chosen + 1, next);
		w->in[e] = 0;
		if (rc)
			return rc;
	}
	return 0;
}

int mesh_trees(const struct mesh_graph *g, int root,
	       int (*fn)(const unsigned char *in_tree, void *arg), void *arg)
{
	struct tree_walk w;
	unsigned char seen[MESH_MAX_HOSTS];
	int uf[MESH_MAX_HOSTS], hosts[MESH_MAX_HOSTS], h, e;

	memset(&w, 0, sizeof(w));
	w.g = g;
	w.fn = fn;
	w.arg = arg;
	w.need = component(g, root, hosts) - 1;
	reach(g, root, -1, -1, seen);
	for (e = 0; e < g->nlinks; e++)
		if (g->used[e] && seen[g->a[e]])
			w.links[w.nl++] = e;
	for (h = 0; h < MESH_MAX_HOSTS; h++)
		uf[h] = h;
	return walk(&w, 0, 0, uf);
}

int mesh_cut_condition(const struct mesh_graph *g, int root, const unsigned char set[])
{
	int hosts[MESH_MAX_HOSTS], n = component(g, root, hosts), e, i;
	unsigned long sub, subs;

	/*
	 * Every cut is the links between some U and the rest, and U can be
	 * the side without the root: U from the other n - 1 hosts, not empty.
	 */
	subs = 1ul << (n - 1);
	for (sub = 1; sub < subs; sub++) {
		unsigned in_u = 0;
		int inside = 0, outside = 0;

		for (i = 1; i < n; i++)
			if (sub >> (i - 1) & 1)
				in_u |= 1u << hosts[i];
		for (e = 0; e < g->nlinks; e++) {
			if (!g->used[e] || ((in_u >> g->a[e] & 1) == (in_u >> g->b[e] & 1)))
				continue;
			if (set[e])
				inside++;
			else
				outside++;
		}
		if (inside && inside >= outside)
			return 0;
	}
	return 1;
}
