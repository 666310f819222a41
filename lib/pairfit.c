/* SPDX-License-Identifier: ISC */
/*
 * pairfit.c - one pair's offset over a window: the lowest-delay
 * exchanges, a line through them, its value and variance at an instant
 * (pairfit.h says why each).
 */
#include <math.h>

#include "pairfit.h"
#include "opt_units.h"
#include "stats.h"

size_t pairfit_keep(size_t n, double frac)
{
	size_t k = (size_t)ceil(frac * (double)n - 1e-9);

	return k > n ? n : k;
}

int pairfit_fit(const struct pair_sample *s, size_t n, double frac, double *scratch,
		struct pairfit *f)
{
	double *x = scratch, *y = scratch + n, *ty = scratch + 2 * n;
	size_t k = pairfit_keep(n, frac), i, j, nb = PAIRFIT_BATCHES, below = 0, equal, eq0;
	double dbar = 0;
	int64_t cut;
	int truth = 1;

	if (k < PAIRFIT_MIN)
		return -1;
	/* The cut: the k-th lowest delay (exact: a delay is an integer below 2^53). */
	for (i = 0; i < n; i++)
		scratch[i] = (double)s[i].delay;
	cut = (int64_t)stats_kth(scratch, n, k - 1);
	for (i = 0; i < n; i++)
		below += s[i].delay < cut;
	equal = eq0 = k - below;	/* of those at the cut, the first ones */
	f->n = n;
	f->used = k;
	f->delay_cut = cut;
	f->origin = s[0].t;
	f->tmin = f->tmax = s[0].t;
	for (i = j = 0; i < n; i++) {
		const struct pair_sample *p = &s[i];

		f->tmin = p->t < f->tmin ? p->t : f->tmin;
		f->tmax = p->t > f->tmax ? p->t : f->tmax;
		if (p->delay > cut || (p->delay == cut && !equal))
			continue;
		if (p->delay == cut)
			equal--;
		/* Modulo 2^64 as a record's arithmetic: a t is whatever a file holds. */
		x[j] = ntpx_ns_to_sec((double)(int64_t)((uint64_t)p->t - (uint64_t)f->origin));
		y[j] = (double)p->off2 / 2;
		dbar += (double)p->delay;
		if (p->true2 == PAIRFIT_NO_TRUTH)
			truth = 0;
		else
			ty[j] = (double)p->true2 / 2;
		j++;
	}
	if (stats_line(x, y, k, &f->xbar, &f->ybar, &f->b, &f->sxx))
		return -1;
	/*
	 * The batches cut every exchange of the window, kept or not, in
	 * order: batch j holds those from ceil(j n / nb).  Each sums the
	 * residuals of its kept ones, their (x - xbar) r, and how many more
	 * it kept than the fraction of its own: the cut is itself a sample
	 * quantile, and a batch that brings more exchanges below it pushes
	 * out those at the cut, whose residual g the kept ones' own line of
	 * residual against delay gives there.
	 */
	{
		double p = (double)k / (double)n, sdd = 0, sdr = 0;
		size_t b = 0, next = (n + nb - 1) / nb;

		dbar /= (double)k;
		for (j = 0; j < nb; j++) {
			f->rsum[j] = f->zsum[j] = 0;
			f->csum[j] = -p * (double)(((j + 1) * n + nb - 1) / nb - (j * n + nb - 1) / nb);
		}
		equal = eq0;
		for (i = j = 0; i < n; i++) {
			const struct pair_sample *q = &s[i];
			double r, dd;

			while (i >= next)
				next = ((++b + 1) * n + nb - 1) / nb;
			if (q->delay > cut || (q->delay == cut && !equal))
				continue;
			if (q->delay == cut)
				equal--;
			r = y[j] - (f->ybar + f->b * (x[j] - f->xbar));
			dd = (double)q->delay - dbar;
			f->rsum[b] += r;
			f->zsum[b] += (x[j] - f->xbar) * r;
			f->csum[b] += 1;
			sdd += dd * dd;
			sdr += dd * r;
			j++;
		}
		f->g = sdd > 0 ? sdr / sdd * ((double)cut - dbar) : 0;
	}
	f->truth = truth;
	if (truth) {
		double tx, tsxx;

		stats_line(x, ty, k, &tx, &f->true_ybar, &f->true_b, &tsxx);
	}
	return 0;
}

static double x_of(const struct pairfit *f, int64_t t)
{
	return ntpx_ns_to_sec((double)(int64_t)((uint64_t)t - (uint64_t)f->origin));
}

double pairfit_at(const struct pairfit *f, int64_t t, double *var)
{
	double dx = x_of(f, t) - f->xbar, c = dx / f->sxx, v = 0;
	int j;

	/* Each batch's sum of the influences r_i (1/n + dx (x_i - xbar) / Sxx). */
	for (j = 0; j < PAIRFIT_BATCHES; j++) {
		double z = (f->rsum[j] - f->g * f->csum[j]) / (double)f->used + c * f->zsum[j];

		v += z * z;
	}
	*var = v * PAIRFIT_BATCHES / (PAIRFIT_BATCHES - 2);
	return f->ybar + f->b * dx;
}

double pairfit_truth_at(const struct pairfit *f, int64_t t)
{
	return f->true_ybar + f->true_b * (x_of(f, t) - f->xbar);
}
