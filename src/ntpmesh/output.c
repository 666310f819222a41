/* SPDX-License-Identifier: ISC */
/*
 * output.c - ntpmesh's output: key-value lines, or one JSON object with
 * the same keys (doc/ntpmesh.1, OUTPUT).
 *
 * Both come from one walk over a window: each item (a pair, a loop, a
 * host, a link, the fit) is a kind, its names and its key-value pairs.
 * As lines, an item is one line, "KIND WINDOW NAME... KEY VALUE...", a
 * value that is not there "-"; in JSON, an object in its kind's array,
 * a value not there null.  Times are seconds since the Unix epoch,
 * offsets microseconds (to the nanosecond), each "_u95_us" the half-width
 * of the 95% interval: Student's t with PAIRFIT_DOF degrees of freedom,
 * the fewest of any fit behind it, times the standard deviation.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "opt.h"
#include "out.h"
#include "stats.h"
#include "ntpmesh.h"

static int json;
static int fields;	/* the current JSON object's members so far */
static int items;	/* the current JSON array's elements so far */
static int windows;	/* windows printed */
static double t95;	/* Student's t at 0.975, PAIRFIT_DOF degrees of freedom */
static double t95_dof[PAIRFIT_DOF * MESH_MAX_LINKS * 2 + 1];	/* at each: 0 until asked */

/*
 * Student's t at 0.975 for loop @l's closure: its variance is a sum of
 * the directions' batch-means estimates along it, each of PAIRFIT_DOF
 * degrees of freedom, so it has more, as many as Welch and Satterthwaite
 * give: (sum v)^2 / sum (v^2 / dof), rounded down.
 */
static double loop_t95(const struct window *w, const struct mesh_loop *l)
{
	double q = 0;
	long dof;
	int k;

	for (k = 0; k < l->c.len; k++)
		q += w->link[l->c.link[k]].q;
	dof = q > 0 ? (long)floor(l->var * l->var / q) : PAIRFIT_DOF;
	if (dof < PAIRFIT_DOF)
		dof = PAIRFIT_DOF;
	if (dof >= (long)(sizeof(t95_dof) / sizeof(t95_dof[0])))
		dof = (long)(sizeof(t95_dof) / sizeof(t95_dof[0])) - 1;
	if (!t95_dof[dof])
		t95_dof[dof] = stats_t_quantile(0.975, (int)dof);
	return t95_dof[dof];
}

static void item(const char *kind, long w)
{
	if (json) {
		printf("%s{", items++ ? "," : "");
		fields = 0;
	} else {
		printf("%s %ld", kind, w);
	}
}

static void item_end(void)
{
	printf(json ? "}" : "\n");
}

/* An array of items, as JSON: "KEY":[ ... ] */
static void array(const char *key)
{
	if (json) {
		printf(",\"%s\":[", key);
		items = 0;
	}
}

static void array_end(void)
{
	if (json)
		printf("]");
}

static void key(const char *k)
{
	if (json)
		printf("%s\"%s\":", fields++ ? "," : "", k);
	else
		printf(" %s ", k);
}

/* A name: a bare word among the line's first fields, a string member in JSON. */
static void name(const char *k, const char *v)
{
	if (json) {
		key(k);
		printf("\"%s\"", v);
	} else {
		printf(" %s", v);
	}
}

/* A word; NULL: not there. */
static void word(const char *k, const char *v)
{
	key(k);
	if (!v)
		printf(json ? "null" : "-");
	else
		printf(json ? "\"%s\"" : "%s", v);
}

static void count(const char *k, double v)
{
	key(k);
	printf("%.0f", v);
}

static void flag(const char *k, int v)
{
	key(k);
	printf(json ? (v ? "true" : "false") : (v ? "1" : "0"));
}

/* @ns as microseconds, to the nanosecond; "-" or null when NAN. */
static void us(const char *k, double ns)
{
	key(k);
	if (isnan(ns))
		printf(json ? "null" : "-");
	else
		printf("%.3f", ns / 1e3);
}

/* The 95% half-width of a variance (ns^2) at Student's @t, in microseconds. */
static void u95_t(const char *k, double var, double t)
{
	us(k, t * sqrt(var));
}

static void u95(const char *k, double var)
{
	u95_t(k, var, t95);
}

/* Whether the 95% interval of a variance (ns^2) at @t holds an error (ns): 0 or 1, "-" when NAN. */
static void held_t(const char *k, double err, double var, double t)
{
	if (isnan(err) || isnan(var))
		word(k, NULL);
	else
		flag(k, fabs(err) <= t * sqrt(var));
}

static void held(const char *k, double err, double var)
{
	held_t(k, err, var, t95);
}

/* A time, ns since the epoch, as seconds to the nanosecond. */
static void when(const char *k, int64_t ns)
{
	key(k);
	printf("%lld.%09lld", (long long)(ns / NTPX_NS_PER_SEC), (long long)(ns % NTPX_NS_PER_SEC));
}

/* A member of the top level: "KEY VALUE" a line, or ,"KEY":VALUE. */
static void top(const char *k)
{
	printf(json ? ",\"%s\":" : "%s ", k);
}

static void top_end(void)
{
	if (!json)
		printf("\n");
}

void output_begin(const struct mesh_run *r)
{
	int h;

	json = r->json;
	t95 = stats_t_quantile(0.975, PAIRFIT_DOF);
	printf(json ? "{\"hosts\":[" : "hosts");
	for (h = 0; h < r->nhosts; h++)
		printf(json ? "%s\"%s\"" : "%s%s", json && !h ? "" : json ? "," : " ", r->host[h]);
	printf(json ? "]" : "\n");
	top("ref");
	printf(json ? "\"%s\"" : "%s", r->host[r->ref]);
	top_end();
	top("files");
	printf("%d", r->nin);
	top_end();
	top("skipped");
	printf("%u", r->skipped);
	top_end();
	top("fraction");
	printf("%g", r->frac);
	top_end();
	top("stamps");
	printf(json ? "\"%s\"" : "%s", r->kernel ? "kernel" : "user");
	top_end();
	top("window_s");
	if (r->window_ns)
		printf("%.9f", ntpx_ns_to_sec((double)r->window_ns));
	else
		printf(json ? "null" : "-");
	top_end();
	top("n_windows");
	printf("%ld", r->nwin);
	top_end();
	/* Only when given: without it the output is as it always was. */
	if (r->blame_min_ns) {
		top("blame_min_us");
		printf("%.3f", (double)r->blame_min_ns / NTPX_NS_PER_US);
		top_end();
	}
	if (json)
		printf(",\"windows\":[");
}

static const char *const obs_names[] = {
	[MESH_OBS_NONE] = "none", [MESH_OBS_SEEN] = "seen", [MESH_OBS_LOCATED] = "located",
};

static const char *const blame_names[] = {
	[MESH_BLAME_NONE] = "none", [MESH_BLAME_UNIQUE] = "unique",
	[MESH_BLAME_AMBIGUOUS] = "ambiguous",
};

static void pairs(const struct mesh_run *r, const struct window *w)
{
	const struct dirfit *row = &r->fit[(size_t)w->index * (size_t)r->nin];
	int k;

	array("pairs");
	for (k = 0; k < w->g.nlinks; k++) {
		const struct link_est *l = &w->link[k];

		item("pair", w->index);
		name("a", r->host[l->a]);
		name("b", r->host[l->b]);
		us("offset_us", l->y);
		u95("u95_us", l->var);
		count("n_ab", l->ab >= 0 ? (double)row[l->ab].n : 0);
		count("used_ab", l->ab >= 0 ? (double)row[l->ab].f.used : 0);
		us("cut_ab_us", l->ab >= 0 ? (double)row[l->ab].f.delay_cut : NAN);
		us("ab_us", l->ab >= 0 ? l->ab_y : NAN);
		u95("ab_u95_us", l->ab >= 0 ? l->ab_var : NAN);
		count("n_ba", l->ba >= 0 ? (double)row[l->ba].n : 0);
		count("used_ba", l->ba >= 0 ? (double)row[l->ba].f.used : 0);
		us("cut_ba_us", l->ba >= 0 ? (double)row[l->ba].f.delay_cut : NAN);
		us("ba_us", l->ba >= 0 ? l->ba_y : NAN);
		u95("ba_u95_us", l->ba >= 0 ? l->ba_var : NAN);
		/* what the two directions differ by: both measure the same */
		us("diff_us", l->ab >= 0 && l->ba >= 0 ? l->ab_y - l->ba_y : NAN);
		u95("diff_u95_us", l->ab >= 0 && l->ba >= 0 ? l->ab_var + l->ba_var : NAN);
		if (l->truth) {
			us("true_us", l->true_y);
			us("err_us", l->y - l->true_y);
		}
		item_end();
	}
	array_end();
}

static void loops(const struct mesh_run *r, const struct window *w)
{
	int i, k;

	array("loops");
	for (i = 0; i < w->fit.nloops; i++) {
		const struct mesh_loop *l = &w->fit.loop[i];
		double truth = 0, t = loop_t95(w, l);
		int have = 1;

		item("loop", w->index);
		if (json) {
			key("hosts");
			printf("[");
		} else {
			printf(" ");
		}
		for (k = 0; k < l->c.len; k++)
			printf(json ? "%s\"%s\"" : "%s%s", k ? "," : "", r->host[l->c.host[k]]);
		if (json)
			printf("]");
		us("closure_us", l->closure);
		u95_t("u95_us", l->var, t);
		flag("nonzero", fabs(l->closure) > t * sqrt(l->var));
		for (k = 0; k < l->c.len; k++) {
			const struct link_est *e = &w->link[l->c.link[k]];

			have &= e->truth;
			truth += l->c.sign[k] * (e->y - e->true_y);
		}
		if (have) {
			us("true_us", truth);
			us("err_us", l->closure - truth);
			held_t("held", l->closure - truth, l->var, t);
		}
		item_end();
	}
	array_end();
}

static void hosts(const struct mesh_run *r, const struct window *w)
{
	const struct mesh_fit *f = &w->fit;
	int h, k;

	array("hosts");
	for (h = 0; h < r->nhosts; h++) {
		double direct = h == r->ref ? 0 : NAN;

		/* the plain two-host estimate: the link from ref, if there is one */
		for (k = 0; k < w->g.nlinks; k++) {
			const struct link_est *l = &w->link[k];

			if (l->a == r->ref && l->b == h)
				direct = l->y;
			if (l->b == r->ref && l->a == h)
				direct = -l->y;
		}
		item("host", w->index);
		name("host", r->host[h]);
		us("ls_us", f->ls[h]);
		u95("ls_u95_us", f->ls_var[h]);
		us("robust_us", f->rob[h]);
		u95("robust_u95_us", f->rob_var[h]);
		us("direct_us", direct);
		if (w->truth && f->reached[h]) {
			us("true_us", w->true_theta[h]);
			us("ls_err_us", f->ls[h] - w->true_theta[h]);
			us("robust_err_us", f->rob[h] - w->true_theta[h]);
			us("direct_err_us", direct - w->true_theta[h]);
			held("ls_held", f->ls[h] - w->true_theta[h], f->ls_var[h]);
			held("robust_held", f->rob[h] - w->true_theta[h], f->rob_var[h]);
		}
		item_end();
	}
	array_end();
}

static void links(const struct mesh_run *r, const struct window *w)
{
	const struct mesh_fit *f = &w->fit;
	int k;

	array("links");
	for (k = 0; k < w->g.nlinks; k++) {
		const struct link_est *l = &w->link[k];
		/* on no loop, the fit leaves it nothing: no estimate */
		double a = f->obs[k] == MESH_OBS_NONE ? NAN : f->asym[k];

		item("link", w->index);
		name("a", r->host[l->a]);
		name("b", r->host[l->b]);
		us("asym_us", a);
		u95("u95_us", f->obs[k] == MESH_OBS_NONE ? NAN : f->asym_var[k]);
		word("observable", obs_names[f->obs[k]]);
		flag("blamed", f->blamed[k]);
		if (l->truth) {
			/* what the records' truth says the link's exchanges had,
			   2 (y - true), whether or not a loop sees it */
			us("true_us", 2 * (l->y - l->true_y));
			us("err_us", a - 2 * (l->y - l->true_y));
			held("held", a - 2 * (l->y - l->true_y), f->asym_var[k]);
		}
		item_end();
	}
	array_end();
}

static void fit(const struct mesh_run *r, const struct window *w)
{
	const struct mesh_fit *f = &w->fit;
	int i, nonzero = 0, reached = 0;

	for (i = 0; i < f->nloops; i++)
		nonzero += fabs(f->loop[i].closure) > loop_t95(w, &f->loop[i]) * sqrt(f->loop[i].var);
	for (i = 0; i < r->nhosts; i++)
		reached += f->reached[i];
	if (json) {
		printf(",\"fit\":{");
		fields = 0;
	} else {
		printf("fit %ld", w->index);
	}
	count("loops", f->nloops);
	count("nonzero", nonzero);
	count("trees", f->trees);
	word("robust", f->robust ? "l1" : NULL);
	count("blamed", f->nblamed);
	word("blame", f->robust ? blame_names[f->blame] : NULL);
	count("unseen_dims", reached - 1);
	printf(json ? "}" : "\n");
}

int output_window(const struct mesh_run *r, const struct window *w)
{
	if (json) {
		printf("%s{", windows++ ? "," : "");
		fields = 0;
		count("window", (double)w->index);
	} else {
		printf("window %ld", w->index);
	}
	when("start_s", w->start);
	when("end_s", w->end);
	when("mid_s", w->mid);
	count("n_directions", w->directions);
	count("n_links", w->g.nlinks);
	if (!json)
		printf("\n");
	pairs(r, w);
	loops(r, w);
	hosts(r, w);
	links(r, w);
	fit(r, w);
	if (json)
		printf("}");
	return out_flush(stdout, STDOUT_NAME);
}

int output_end(const struct mesh_run *r)
{
	(void)r;
	if (json)
		printf("]}\n");
	return out_flush(stdout, STDOUT_NAME);
}
