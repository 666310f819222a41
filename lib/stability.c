/*
 * stability.c - ADEV, MDEV, TDEV, MTIE and TIE-RMS over octaves of tau.
 *
 * One pass over the grid per octave computes every statistic at once:
 *   - the overlapping Allan variance from the second differences
 *     d = x[j+2m] - 2 x[j+m] + x[j]: avar = sum d^2 / (2 tau^2 n);
 *     a gap makes d NAN, and a NAN term is left out;
 *   - the modified Allan variance from the sums of m neighbouring second
 *     differences, S = A[j+2m] - 2 A[j+m] + A[j] with A[b] the sum of
 *     the m slots from b, which prefix sums P of the phase give in O(1):
 *     S = P[j+3m] - 3 P[j+2m] + 3 P[j+m] - P[j], mvar = sum S^2 /
 *     (2 m^2 tau^2 n).  With gaps, a block's sum is m times the mean of
 *     the samples it holds (prefix counts C give how many), and a term
 *     is kept while each of its three blocks holds at least half its
 *     slots: one lost exchange would otherwise remove every term over
 *     it, and past a few octaves there would be none.  The phase is
 *     first less the line through its first and last samples: a line
 *     adds nothing to S without gaps, would leak into the block means
 *     through a gap's position with them, and would make the prefix sums
 *     of a drifting clock grow past what a double holds to the ns;
 *   - TIE-RMS from x[j+m] - x[j];
 *   - MTIE from the window extremes, doubled in place octave by octave
 *     (a sparse table kept one level at a time): after octave k, hi[j]
 *     is the largest sample in [j, j + 2^k), so the window of m + 1
 *     slots [j, j + m] has max(hi[j], hi[j+1]).
 * SP 1065 eqs. (10), (14), (15); G.810 for MTIE and TIE-RMS.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stability.h"
#include "stats.h"

#define TAU0_SAMPLES	65536

double stab_tau0(const double *t_s, size_t n)
{
	double d[TAU0_SAMPLES];
	size_t i, k = 0, step;

	if (n < 2)
		return 0;
	step = (n - 1 + TAU0_SAMPLES - 1) / TAU0_SAMPLES;
	for (i = 0; i + 1 < n && k < TAU0_SAMPLES; i += step) {
		double dt = t_s[i + 1] - t_s[i];

		if (dt > 0)
			d[k++] = dt;
	}
	return k ? stats_quantile(d, k, 0.5) : 0;
}

int stab_grid_build(struct stab_grid *g, const double *t_s, const double *x_ns,
		    size_t n, double tau0_s)
{
	double tmin, tmax, span;
	size_t i;

	memset(g, 0, sizeof(*g));
	if (!(tau0_s > 0) || !isfinite(tau0_s) || n == 0) {
		errno = EINVAL;
		return -1;
	}
	tmin = tmax = t_s[0];
	for (i = 0; i < n; i++) {
		if (!isfinite(t_s[i]) || !isfinite(x_ns[i])) {
			errno = EINVAL;
			return -1;
		}
		if (t_s[i] < tmin)
			tmin = t_s[i];
		if (t_s[i] > tmax)
			tmax = t_s[i];
	}
	span = round((tmax - tmin) / tau0_s);
	if (span >= 64.0 * (double)n + 64 || span >= (double)UINT32_MAX - 1) {
		errno = EINVAL;
		return -1;
	}
	g->slots = (size_t)span + 1;
	g->tau0_s = tau0_s;
	g->x = malloc(g->slots * sizeof(double));
	if (!g->x)
		return -1;
	for (i = 0; i < g->slots; i++)
		g->x[i] = NAN;
	for (i = 0; i < n; i++) {
		size_t k = (size_t)round((t_s[i] - tmin) / tau0_s);

		if (k >= g->slots)	/* rounding at the very end */
			k = g->slots - 1;
		if (isnan(g->x[k])) {
			g->x[k] = x_ns[i];
			g->samples++;
		} else {
			g->collisions++;
		}
	}
	g->gaps = g->slots - g->samples;
	return 0;
}

void stab_grid_free(struct stab_grid *g)
{
	free(g->x);
	g->x = NULL;
}

/* Deviations from sums of squares; NAN without a term. */
static void finish(struct stab_point *p, double sa, double sm, double st, double mtie)
{
	double tau = p->tau_s, m = (double)p->m;

	p->adev = p->n_adev ? sqrt(sa / (2 * tau * tau * (double)p->n_adev)) * 1e-9 : NAN;
	p->mdev = p->n_mdev ? sqrt(sm / (2 * m * m * tau * tau * (double)p->n_mdev)) * 1e-9 : NAN;
	p->tdev_ns = p->n_mdev ? tau / sqrt(3) * p->mdev * 1e9 : NAN;
	p->tie_rms_ns = p->n_tie ? sqrt(st / (double)p->n_tie) : NAN;
	p->mtie_ns = p->n_mtie ? mtie : NAN;
}

/*
 * The MDEV term at j from block means, when each block of m slots holds
 * at least half of them: adds S^2 to *sm and returns 1, or returns 0.
 */
static int mdev_gappy(const double *P, const uint32_t *C, size_t j, size_t m, double *sm)
{
	double s = 0;
	int b;

	for (b = 0; b < 3; b++) {
		size_t lo = j + (size_t)b * m, c = C[lo + m] - C[lo];

		if (2 * c < m || c == 0)
			return 0;
		s += (b == 1 ? -2.0 : 1.0) * (P[lo + m] - P[lo]) / (double)c;
	}
	s *= (double)m;
	*sm += s * s;
	return 1;
}

/* The line through the first and last samples: x[j] ~ base + slope (j - first). */
static size_t line_of(const double *x, size_t N, double *base, double *slope)
{
	size_t j, first = N, last = 0;

	*base = *slope = 0;
	for (j = 0; j < N; j++)
		if (!isnan(x[j])) {
			if (first == N)
				first = j;
			last = j;
		}
	if (first == N)
		return N;
	*base = x[first];
	if (last > first)
		*slope = (x[last] - x[first]) / (double)(last - first);
	return first;
}

int stab_octaves(const double *x, size_t slots, double tau0_s,
		 struct stab_point *out, size_t max)
{
	const size_t N = slots;
	double *P = NULL, *hi = NULL, *lo = NULL, base = 0, slope = 0;
	uint32_t *C = NULL;
	size_t j, m, first, k = 0;
	long double acc = 0;
	int rc = -1;

	if (N < 4 || N > UINT32_MAX - 1)
		return 0;
	P = malloc((N + 1) * sizeof(*P));
	C = malloc((N + 1) * sizeof(*C));
	hi = malloc(N * sizeof(*hi));
	lo = malloc(N * sizeof(*lo));
	if (!P || !C || !hi || !lo)
		goto out;
	first = line_of(x, N, &base, &slope);
	if (first == N) {
		rc = 0;
		goto out;
	}
	P[0] = 0;
	C[0] = 0;
	for (j = 0; j < N; j++) {
		int gap = isnan(x[j]);

		if (!gap)
			acc += x[j] - (base + slope * ((double)j - (double)first));
		P[j + 1] = (double)acc;
		C[j + 1] = C[j] + (uint32_t)!gap;
		hi[j] = gap ? -INFINITY : x[j];
		lo[j] = gap ? INFINITY : x[j];
	}

	for (m = 1; m <= (N - 1) / 3 && k < max; m *= 2, k++) {
		struct stab_point *p = &out[k];
		double sa = 0, sm = 0, st = 0, mtie = 0;
		uint64_t na = 0, nm = 0, nt = 0, nw = 0;

		memset(p, 0, sizeof(*p));
		p->m = m;
		p->tau_s = (double)m * tau0_s;
		/* j < N - 3m: every statistic has a term at j. */
		for (j = 0; j + 3 * m < N; j++) {
			double d = x[j + 2 * m] - 2 * x[j + m] + x[j];
			double e = x[j + m] - x[j];
			double h = hi[j] > hi[j + 1] ? hi[j] : hi[j + 1];
			double l = lo[j] < lo[j + 1] ? lo[j] : lo[j + 1];

			if (d == d) {
				sa += d * d;
				na++;
			}
			if (C[j + 3 * m] - C[j] == 3 * m) {
				double s = P[j + 3 * m] - 3 * P[j + 2 * m] + 3 * P[j + m] - P[j];

				sm += s * s;
				nm++;
			} else if (mdev_gappy(P, C, j, m, &sm)) {
				nm++;
			}
			if (e == e) {
				st += e * e;
				nt++;
			}
			if (h >= l) {
				if (h - l > mtie)
					mtie = h - l;
				nw++;
			}
			/* the next octave's extremes: [j, j + 2m) */
			if (hi[j + m] > hi[j])
				hi[j] = hi[j + m];
			if (lo[j + m] < lo[j])
				lo[j] = lo[j + m];
		}
		/* the MDEV window at j = N - 3m, the last one */
		if (mdev_gappy(P, C, j, m, &sm))
			nm++;
		for (; j + 2 * m < N; j++) {
			double d = x[j + 2 * m] - 2 * x[j + m] + x[j];

			if (d == d) {
				sa += d * d;
				na++;
			}
		}
		for (j = N - 3 * m; j + m < N; j++) {
			double e = x[j + m] - x[j];
			double h = hi[j] > hi[j + 1] ? hi[j] : hi[j + 1];
			double l = lo[j] < lo[j + 1] ? lo[j] : lo[j + 1];

			if (e == e) {
				st += e * e;
				nt++;
			}
			if (h >= l) {
				if (h - l > mtie)
					mtie = h - l;
				nw++;
			}
			if (j + 2 * m <= N) {
				if (hi[j + m] > hi[j])
					hi[j] = hi[j + m];
				if (lo[j + m] < lo[j])
					lo[j] = lo[j + m];
			}
		}
		p->n_adev = na;
		p->n_mdev = nm;
		p->n_tie = nt;
		p->n_mtie = nw;
		finish(p, sa, sm, st, mtie);
	}
	rc = (int)k;
out:
	if (rc < 0)
		errno = ENOMEM;
	free(P);
	free(C);
	free(hi);
	free(lo);
	return rc;
}

void stab_direct(const double *x, size_t slots, double tau0_s, size_t m,
		 struct stab_point *p)
{
	const size_t N = slots;
	double sa = 0, sm = 0, st = 0, mtie = 0, base, slope;
	size_t i, j, first = line_of(x, N, &base, &slope);

	memset(p, 0, sizeof(*p));
	p->m = m;
	p->tau_s = (double)m * tau0_s;
	for (j = 0; j + 2 * m < N; j++) {
		double d = x[j + 2 * m] - 2 * x[j + m] + x[j];

		if (!isnan(d)) {
			sa += d * d;
			p->n_adev++;
		}
	}
	for (j = 0; j + 3 * m <= N; j++) {
		double s = 0;
		int b, keep = 1;

		for (b = 0; b < 3; b++) {
			double a = 0;
			size_t c = 0;

			for (i = j + (size_t)b * m; i < j + (size_t)(b + 1) * m; i++)
				if (!isnan(x[i])) {
					a += x[i] - (base + slope * ((double)i - (double)first));
					c++;
				}
			if (2 * c < m || c == 0)
				keep = 0;
			else
				s += (b == 1 ? -2.0 : 1.0) * a / (double)c * (double)m;
		}
		if (keep) {
			sm += s * s;
			p->n_mdev++;
		}
	}
	for (j = 0; j + m < N; j++) {
		double e = x[j + m] - x[j], h = -INFINITY, l = INFINITY;

		if (!isnan(e)) {
			st += e * e;
			p->n_tie++;
		}
		for (i = j; i <= j + m; i++)
			if (!isnan(x[i])) {
				h = fmax(h, x[i]);
				l = fmin(l, x[i]);
			}
		if (h >= l) {
			mtie = fmax(mtie, h - l);
			p->n_mtie++;
		}
	}
	finish(p, sa, sm, st, mtie);
}
