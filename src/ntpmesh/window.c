/* SPDX-License-Identifier: ISC */
/*
 * window.c - one window of ntpmesh: its directed pairs made links, read
 * at one instant on the reference host's clock, and the mesh fitted
 * (lib/meshfit.h).
 *
 * A link joins two hosts a < b that probed each other in either
 * direction or both.  a's probes of b measure theta_b - theta_a (plus
 * half the asymmetry), and so, negated, do b's probes of a: the same
 * quantity, the same path, the roles swapped.  The link's value is the
 * plain mean of the two (or the one there is), and its variance a
 * quarter of the sum of theirs: unweighted, so that the stated variance
 * holds whatever the two are (a mean weighted by estimated variances
 * understates its own).  What they differ by is printed beside it.
 *
 * Each pair's line is read at the window's midpoint as the reference
 * host's clock tells it: the client's clock reads that instant as the
 * midpoint plus the client's offset from the reference, which a first
 * fit (the links read at the midpoint itself) gives to well under a
 * millisecond; read there, the links of a loop refer to one instant, and
 * the clocks' rates (tens of ppm times an offset of milliseconds: tens
 * of ns) leave nothing in its closure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"
#include "ntpmesh.h"

/* The ok records a direction needs in a window: ceil(frac n) >= PAIRFIT_MIN. */
static size_t needed(double frac)
{
	size_t n = PAIRFIT_MIN;

	while (pairfit_keep(n, frac) < PAIRFIT_MIN)
		n++;
	return n;
}

/* The links' values at w->mid, each client's clock shifted by @shift (ns). */
static void read_links(const struct dirfit *row, struct window *w, const double shift[],
		       double y[], double var[])
{
	int k;

	for (k = 0; k < w->g.nlinks; k++) {
		struct link_est *l = &w->link[k];
		int n = 0, truth = 1, d;
		double t = 0;

		l->y = l->var = l->q = 0;
		/* a's probes of b, then b's of a, negated */
		for (d = 0; d < 2; d++) {
			int file = d ? l->ba : l->ab, sign = d ? -1 : 1;
			int64_t at = w->mid + llround(shift[d ? l->b : l->a]);
			double *dy = d ? &l->ba_y : &l->ab_y, *dv = d ? &l->ba_var : &l->ab_var;
			const struct pairfit *f;

			if (file < 0)
				continue;
			f = &row[file].f;
			*dy = sign * pairfit_at(f, at, dv);
			l->y += *dy;
			l->var += *dv;
			l->q += *dv * *dv;
			truth &= f->truth;
			if (f->truth)
				t += sign * pairfit_truth_at(f, at);
			n++;
		}
		l->y /= n;
		l->var /= (double)n * n;
		l->q /= (double)n * n * n * n * PAIRFIT_DOF;
		l->truth = truth;
		l->true_y = t / n;
		y[k] = l->y;
		var[k] = l->var;
	}
}

/* One line on stderr for each pair left out of window @w, and for hosts ref does not reach. */
static void notes(const struct mesh_run *r, const struct dirfit *row, const struct window *w)
{
	char list[MESH_MAX_HOSTS * (NAME_MAX_LEN + 2)] = "";
	size_t len = 0, most = 0;
	int i, h;

	/* None there (a gap, the run's last moments): one line for them all. */
	if (!w->directions) {
		for (i = 0; i < r->nin; i++)
			most = row[i].n > most ? row[i].n : most;
		ntpx_err("window %ld: no pair has the %zu ok records a fit of the lowest-delay %g "
			 "needs (the most: %zu): no estimates", w->index, needed(r->frac), r->frac,
			 most);
		return;
	}
	for (i = 0; i < r->nin; i++) {
		const struct pair_input *in = &r->in[i];

		if (row[i].ok)
			continue;
		if (pairfit_keep(row[i].n, r->frac) < PAIRFIT_MIN)
			ntpx_err("window %ld: %s>%s: %zu ok records, fewer than the %zu a fit of the "
				 "lowest-delay %g needs: left out", w->index, in->client_name,
				 in->server_name, row[i].n, needed(r->frac), r->frac);
		else
			ntpx_err("window %ld: %s>%s: its %zu kept records all at one instant: left out",
				 w->index, in->client_name, in->server_name,
				 pairfit_keep(row[i].n, r->frac));
	}
	for (h = 0; h < r->nhosts; h++)
		if (!w->fit.reached[h])
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "",
						r->host[h]);
	if (len)
		ntpx_err("window %ld: %s not connected to %s: no offsets for %s", w->index, list,
			 r->host[r->ref], strchr(list, ',') ? "them" : "it");
}

void window_fit(const struct mesh_run *r, long index, struct window *w)
{
	const struct dirfit *row = &r->fit[(size_t)index * (size_t)r->nin];
	double y[MESH_MAX_LINKS], var[MESH_MAX_LINKS], shift[MESH_MAX_HOSTS] = { 0 };
	double theta[MESH_MAX_HOSTS], tv[MESH_MAX_LINKS];
	int by_pair[MESH_MAX_HOSTS][MESH_MAX_HOSTS], i, a, b, h, k;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;

	memset(w, 0, sizeof(*w));
	w->index = index;
	for (a = 0; a < MESH_MAX_HOSTS; a++)
		for (b = 0; b < MESH_MAX_HOSTS; b++)
			by_pair[a][b] = -1;
	for (i = 0; i < r->nin; i++) {
		if (!row[i].ok)
			continue;
		by_pair[r->in[i].client][r->in[i].server] = i;
		tmin = row[i].f.tmin < tmin ? row[i].f.tmin : tmin;
		tmax = row[i].f.tmax > tmax ? row[i].f.tmax : tmax;
		w->directions++;
	}
	if (r->window_ns) {
		w->start = r->start + index * r->window_ns;
		w->end = w->start + r->window_ns;
	} else {
		w->start = tmin;
		w->end = tmax;
	}
	w->mid = w->directions ? tmin + (tmax - tmin) / 2 : w->start + (w->end - w->start) / 2;
	mesh_graph_init(&w->g, r->nhosts);
	for (a = 0; a < r->nhosts; a++)
		for (b = a + 1; b < r->nhosts; b++) {
			struct link_est *l;

			if (by_pair[a][b] < 0 && by_pair[b][a] < 0)
				continue;
			l = &w->link[mesh_graph_link(&w->g, a, b)];
			l->a = a;
			l->b = b;
			l->ab = by_pair[a][b];
			l->ba = by_pair[b][a];
		}
	/* First at the midpoint on every clock, then on ref's (the file's comment). */
	read_links(row, w, shift, y, var);
	mesh_ls(&w->g, r->ref, y, var, NULL, theta, NULL);
	for (h = 0; h < r->nhosts; h++)
		shift[h] = isnan(theta[h]) ? 0 : theta[h];
	read_links(row, w, shift, y, var);
	mesh_fit_min(&w->g, r->ref, y, var, PAIRFIT_DOF, (double)r->blame_min_ns, &w->fit);
	/* The truth of every host, when every link of ref's component has it. */
	w->truth = 1;
	for (k = 0; k < w->g.nlinks; k++) {
		tv[k] = w->link[k].true_y;
		if (w->fit.reached[w->link[k].a] && !w->link[k].truth)
			w->truth = 0;
	}
	if (w->truth)
		mesh_ls(&w->g, r->ref, tv, var, NULL, w->true_theta, NULL);
	notes(r, row, w);
}
