/* SPDX-License-Identifier: ISC */
/*
 * meshfit.h - every host's clock from the offsets measured over the
 * links of a mesh (lib/meshgraph.h), twice: by weighted least squares,
 * which takes every path as symmetric, and by a robust fit, which takes
 * the asymmetry to sit on few links and says which.
 *
 * A link e from host a to host b (a < b) measured y_e = theta_b -
 * theta_a + A_e / 2 + noise, with variance var_e; the hosts' offsets
 * theta are relative to a chosen host, ref (theta_ref = 0).
 *
 * Least squares: theta minimising the sum of (y_e - theta_b + theta_a)^2
 * / var_e, the clocks that best explain every link with A = 0.  Its
 * residuals, twice, are the asymmetry of least weighted L2 norm that the
 * loops allow (the "network effect" of Huygens, Geng et al., NSDI '18:
 * the loops' sums pull every pair towards consistency).  With one
 * asymmetric link, least squares spreads its error over every host.
 *
 * The robust fit minimises the plain sum of |y_e - theta_b + theta_a|
 * (L1: the sparsest asymmetry, counted in links, not weighted by noise).
 * That is a linear programme whose optimum is at a basic solution, n - 1
 * links fitted exactly, which in a graph are a spanning tree: so it
 * tries every spanning tree of ref's component (mesh_trees) and keeps
 * the one of least sum, exact where iteratively reweighted least squares
 * would only approach it.  A link off that tree is blamed when its
 * residual, the closure of its loop through the tree, differs from zero
 * at 95% for the whole fit (Bonferroni over the loops, Student's t with
 * the links' degrees of freedom); the hosts are then fitted again by
 * least squares over the links not blamed, and every link's asymmetry is
 * twice what that fit leaves of it, except on a link that is on no loop
 * of the links not blamed (a bridge among them): that fit takes it as
 * exact, so it has no estimate (NAN) and is flagged MESH_OBS_NONE.  Whether the blamed set is the only
 * explanation of its size is mesh_cut_condition's answer.
 */
#ifndef NTPX_MESHFIT_H
#define NTPX_MESHFIT_H

#include "meshgraph.h"

/* More spanning trees than this and the robust fit is not tried. */
#define MESH_TREES_MAX	1000000.0

struct mesh_loop {
	struct mesh_cycle c;
	double closure;		/* ns: the sum of sign y around it */
	double var;		/* ns^2 */
};

enum mesh_blame {
	MESH_BLAME_NONE,	/* no link blamed */
	MESH_BLAME_UNIQUE,	/* the blamed links pass the cut condition */
	MESH_BLAME_AMBIGUOUS,	/* they do not: another set explains the loops as well */
};

struct mesh_fit {
	unsigned char reached[MESH_MAX_HOSTS];	/* in ref's component */
	double ls[MESH_MAX_HOSTS], ls_var[MESH_MAX_HOSTS];	/* ns, ns^2; NAN: not reached */
	/* the fundamental cycles of the spanning forest from ref (mesh_forest) */
	int nloops;
	struct mesh_loop loop[MESH_MAX_LINKS];
	/* mesh_observable's, but NONE too for a link the robust fit leaves on
	   no loop of the links it does not blame (its asym NAN: unobservable) */
	enum mesh_obs obs[MESH_MAX_LINKS];
	int loops_ref;		/* of the loops, those in ref's component */
	/* the robust fit */
	int robust;		/* 1 when done; 0: more trees than MESH_TREES_MAX */
	double trees;		/* spanning trees of ref's component */
	double rob[MESH_MAX_HOSTS], rob_var[MESH_MAX_HOSTS];
	unsigned char blamed[MESH_MAX_LINKS];
	int nblamed;
	enum mesh_blame blame;
	double asym[MESH_MAX_LINKS], asym_var[MESH_MAX_LINKS];	/* ns, ns^2; NAN off ref's component */
};

/* A variance below this (ns^2) counts as this: an exact value weighs much, not infinitely. */
#define MESH_VAR_MIN	1e-6

/*
 * Weighted least squares of the offsets of ref's component from the
 * used links of it that @skip does not mark (NULL: none): theta[] (ns,
 * NAN off the component), and when @coef is given, the coefficients of
 * each theta in the y's (theta[h] = sum of coef[h][e] y[e]).  Returns 0,
 * or -1 when the links left do not join every host of the component.
 */
int mesh_ls(const struct mesh_graph *g, int ref, const double y[], const double var[],
	    const unsigned char *skip, double theta[], double coef[][MESH_MAX_LINKS]);

/* Both fits, the loops and the links' flags; @dof is the y's degrees of freedom. */
void mesh_fit(const struct mesh_graph *g, int ref, const double y[], const double var[], int dof,
	      struct mesh_fit *f);
/*
 * mesh_fit, where a link is blamed only when its loop's asymmetry is
 * also at least @blame_min ns in size: a resolution the user gives, so
 * that an asymmetry that is real but too small to matter (tens of ns on
 * a LAN whose loops close to a few ns) is left to least squares.
 */
void mesh_fit_min(const struct mesh_graph *g, int ref, const double y[], const double var[],
		  int dof, double blame_min, struct mesh_fit *f);

#endif
