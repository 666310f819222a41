/* SPDX-License-Identifier: ISC */
/*
 * meshfit.c - least squares and the robust fit over a mesh's links, the
 * loops' closures and the asymmetries (meshfit.h says why each is so).
 */
#include <math.h>
#include <string.h>

#include "meshfit.h"
#include "stats.h"

static double weight(double var)
{
	return 1 / (var > MESH_VAR_MIN ? var : MESH_VAR_MIN);
}

/* Inverts the k x k matrix m in place (Gauss-Jordan, partial pivoting); -1 when singular. */
static int invert(double m[][MESH_MAX_HOSTS], int k)
{
	double inv[MESH_MAX_HOSTS][MESH_MAX_HOSTS] = { { 0 } }, scale = 0;
	int i, j, c;

	for (i = 0; i < k; i++) {
		inv[i][i] = 1;
		scale = fmax(scale, fabs(m[i][i]));
	}
	for (c = 0; c < k; c++) {
		int p = c;

		for (i = c + 1; i < k; i++)
			if (fabs(m[i][c]) > fabs(m[p][c]))
				p = i;
		/* a pivot lost in rounding: the links left do not join these hosts */
		if (fabs(m[p][c]) <= 1e-12 * scale)
			return -1;
		for (j = 0; j < k; j++) {
			double t = m[c][j], u = inv[c][j];

			m[c][j] = m[p][j];
			m[p][j] = t;
			inv[c][j] = inv[p][j];
			inv[p][j] = u;
		}
		for (i = 0; i < k; i++) {
			double f;

			if (i == c)
				continue;
			f = m[i][c] / m[c][c];
			for (j = 0; j < k; j++) {
				m[i][j] -= f * m[c][j];
				inv[i][j] -= f * inv[c][j];
			}
		}
	}
	for (i = 0; i < k; i++) {
		double d = m[i][i];

		for (j = 0; j < k; j++)
			m[i][j] = inv[i][j] / d;
	}
	return 0;
}

int mesh_ls(const struct mesh_graph *g, int ref, const double y[], const double var[],
	    const unsigned char *skip, double theta[], double coef[][MESH_MAX_LINKS])
{
	double n[MESH_MAX_HOSTS][MESH_MAX_HOSTS] = { { 0 } };
	double m[MESH_MAX_HOSTS][MESH_MAX_LINKS];
	int comp[MESH_MAX_HOSTS], idx[MESH_MAX_HOSTS], k = 0, h, e;

	mesh_components(g, comp);
	for (h = 0; h < g->nhosts; h++)
		idx[h] = comp[h] == comp[ref] && h != ref ? k++ : -1;
	/* The normal equations: the weighted Laplacian without ref's row and column. */
	for (e = 0; e < g->nlinks; e++) {
		int a = idx[g->a[e]], b = idx[g->b[e]];
		double w = weight(var[e]);

		if (!g->used[e] || comp[g->a[e]] != comp[ref] || (skip && skip[e]))
			continue;
		if (a >= 0)
			n[a][a] += w;
		if (b >= 0)
			n[b][b] += w;
		if (a >= 0 && b >= 0) {
			n[a][b] -= w;
			n[b][a] -= w;
		}
	}
	if (k && invert(n, k))
		return -1;
	/* theta = N^-1 B' W y: link e adds w (theta_b - theta_a) to the fit */
	for (h = 0; h < g->nhosts; h++) {
		double t = 0;

		memset(m[h], 0, sizeof(m[h]));
		if (idx[h] >= 0) {
			for (e = 0; e < g->nlinks; e++) {
				int a = idx[g->a[e]], b = idx[g->b[e]];

				if (!g->used[e] || comp[g->a[e]] != comp[ref] || (skip && skip[e]))
					continue;
				m[h][e] = weight(var[e]) * ((b >= 0 ? n[idx[h]][b] : 0) -
							    (a >= 0 ? n[idx[h]][a] : 0));
				t += m[h][e] * y[e];
			}
		}
		theta[h] = h == ref ? 0 : idx[h] >= 0 ? t : NAN;
		if (coef)
			memcpy(coef[h], m[h], sizeof(m[h]));
	}
	return 0;
}

/* The variance of sum of c[e] y[e] over the links. */
static double var_of(const struct mesh_graph *g, const double c[], const double var[])
{
	double v = 0;
	int e;

	for (e = 0; e < g->nlinks; e++)
		v += c[e] * c[e] * var[e];
	return v;
}

/* The best spanning tree so far, for mesh_trees(). */
struct l1_best {
	const struct mesh_graph *g;
	const double *y;
	int ref;
	double cost;
	unsigned char in_tree[MESH_MAX_LINKS];
	double theta[MESH_MAX_HOSTS];
};

/* The offsets that fit @in_tree's links exactly, from ref outwards. */
static void tree_theta(const struct mesh_graph *g, const unsigned char *in_tree, const double y[],
		       int ref, double theta[], unsigned char done[])
{
	int more = 1, e;

	memset(done, 0, MESH_MAX_HOSTS);
	done[ref] = 1;
	theta[ref] = 0;
	while (more) {
		more = 0;
		for (e = 0; e < g->nlinks; e++) {
			int a = g->a[e], b = g->b[e];

			if (!in_tree[e] || done[a] == done[b])
				continue;
			if (done[a])
				theta[b] = theta[a] + y[e];
			else
				theta[a] = theta[b] - y[e];
			done[a] = done[b] = 1;
			more = 1;
		}
	}
}

static int l1_try(const unsigned char *in_tree, void *arg)
{
	struct l1_best *best = arg;
	const struct mesh_graph *g = best->g;
	double theta[MESH_MAX_HOSTS], cost = 0;
	unsigned char done[MESH_MAX_HOSTS];
	int e;

	tree_theta(g, in_tree, best->y, best->ref, theta, done);
	for (e = 0; e < g->nlinks; e++)
		if (g->used[e] && done[g->a[e]])
			cost += fabs(best->y[e] - (theta[g->b[e]] - theta[g->a[e]]));
	if (cost < best->cost) {
		best->cost = cost;
		memcpy(best->in_tree, in_tree, sizeof(best->in_tree));
		memcpy(best->theta, theta, sizeof(best->theta));
	}
	return 0;
}

/*
 * The robust fit of meshfit.h: the least-L1 spanning tree, the links its
 * loops blame, least squares without them, and each link's asymmetry.
 */
static void robust(const struct mesh_graph *g, int ref, const double y[], const double var[],
		   int dof, double blame_min, struct mesh_fit *f)
{
	struct l1_best best;
	struct mesh_graph tree = *g;
	double coef[MESH_MAX_HOSTS][MESH_MAX_LINKS], c[MESH_MAX_LINKS], thr;
	int up[MESH_MAX_HOSTS], depth[MESH_MAX_HOSTS], e, k;
	unsigned char in_tree[MESH_MAX_LINKS];

	memset(&best, 0, sizeof(best));
	best.g = g;
	best.y = y;
	best.ref = ref;
	best.cost = INFINITY;
	mesh_trees(g, ref, l1_try, &best);
	/* The tree's own forest gives each loop's path through it. */
	for (e = 0; e < g->nlinks; e++)
		tree.used[e] = best.in_tree[e];
	mesh_forest(&tree, ref, up, depth, in_tree);
	thr = f->loops_ref ? stats_t_quantile(1 - 0.025 / f->loops_ref, dof) : 0;
	for (e = 0; e < g->nlinks; e++) {
		struct mesh_cycle cyc;
		double r, v = 0;

		if (!g->used[e] || !f->reached[g->a[e]] || best.in_tree[e])
			continue;
		/* its loop through the tree: e and the tree's path between its ends */
		tree.used[e] = 1;
		mesh_cycle_of(&tree, up, depth, e, &cyc);
		tree.used[e] = 0;
		for (k = 0; k < cyc.len; k++)
			v += var[cyc.link[k]];
		r = y[e] - (best.theta[g->b[e]] - best.theta[g->a[e]]);
		/* r is half the loop's asymmetry (y carries a/2) */
		if (fabs(r) > thr * sqrt(v) && 2 * fabs(r) >= blame_min) {
			f->blamed[e] = 1;
			f->nblamed++;
		}
	}
	/* The tree is never blamed, so the links left join every host. */
	mesh_ls(g, ref, y, var, f->blamed, f->rob, coef);
	for (e = 0; e < g->nlinks; e++) {
		int l;

		if (!g->used[e] || !f->reached[g->a[e]])
			continue;
		/* A_e = 2 (y_e - theta_b + theta_a), as a sum over the y's */
		for (l = 0; l < g->nlinks; l++)
			c[l] = 2 * ((l == e) - (coef[g->b[e]][l] - coef[g->a[e]][l]));
		f->asym[e] = 0;
		for (l = 0; l < g->nlinks; l++)
			f->asym[e] += c[l] * y[l];
		f->asym_var[e] = var_of(g, c, var);
	}
	for (k = 0; k < g->nhosts; k++)
		f->rob_var[k] = f->reached[k] ? var_of(g, coef[k], var) : NAN;
	/*
	 * A link on no loop of the links not blamed (a bridge among them)
	 * is fitted exactly by that fit: its asymmetry would be 0 with a
	 * variance of 0, the fit's assumption, not a measurement.  Whatever
	 * it has, the blamed links take up: no loop can see it.
	 */
	for (e = 0; f->nblamed && e < g->nlinks; e++) {
		unsigned char skip[MESH_MAX_LINKS];
		double t[MESH_MAX_HOSTS];

		if (!g->used[e] || !f->reached[g->a[e]] || f->blamed[e])
			continue;
		memcpy(skip, f->blamed, sizeof(skip));
		skip[e] = 1;
		if (mesh_ls(g, ref, y, var, skip, t, NULL)) {
			f->obs[e] = MESH_OBS_NONE;
			f->asym[e] = f->asym_var[e] = NAN;
		}
	}
	f->blame = !f->nblamed ? MESH_BLAME_NONE :
		   mesh_cut_condition(g, ref, f->blamed) ? MESH_BLAME_UNIQUE : MESH_BLAME_AMBIGUOUS;
	f->robust = 1;
}

void mesh_fit(const struct mesh_graph *g, int ref, const double y[], const double var[], int dof,
	      struct mesh_fit *f)
{
	mesh_fit_min(g, ref, y, var, dof, 0, f);
}

void mesh_fit_min(const struct mesh_graph *g, int ref, const double y[], const double var[],
		  int dof, double blame_min, struct mesh_fit *f)
{
	double coef[MESH_MAX_HOSTS][MESH_MAX_LINKS];
	int comp[MESH_MAX_HOSTS], up[MESH_MAX_HOSTS], depth[MESH_MAX_HOSTS], h, e, k;
	unsigned char in_tree[MESH_MAX_LINKS];

	memset(f, 0, sizeof(*f));
	mesh_components(g, comp);
	for (h = 0; h < g->nhosts; h++) {
		f->reached[h] = comp[h] == comp[ref];
		f->rob[h] = f->rob_var[h] = NAN;
	}
	for (e = 0; e < g->nlinks; e++)
		f->asym[e] = f->asym_var[e] = NAN;
	/* Least squares over ref's component: every link there joins it. */
	mesh_ls(g, ref, y, var, NULL, f->ls, coef);
	for (h = 0; h < g->nhosts; h++)
		f->ls_var[h] = f->reached[h] ? var_of(g, coef[h], var) : NAN;
	mesh_forest(g, ref, up, depth, in_tree);
	for (e = 0; e < g->nlinks; e++) {
		struct mesh_loop *l = &f->loop[f->nloops];

		if (!g->used[e] || in_tree[e])
			continue;
		mesh_cycle_of(g, up, depth, e, &l->c);
		for (k = 0; k < l->c.len; k++) {
			l->closure += l->c.sign[k] * y[l->c.link[k]];
			l->var += var[l->c.link[k]];
		}
		f->loops_ref += f->reached[g->a[e]];
		f->nloops++;
	}
	mesh_observable(g, f->obs);
	f->trees = mesh_tree_count(g, ref);
	if (f->trees <= MESH_TREES_MAX)
		robust(g, ref, y, var, dof, blame_min, f);
}
