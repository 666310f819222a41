/* SPDX-License-Identifier: ISC */
/*
 * stats.c - least squares, quantiles by selection, RMS.
 */
#include <math.h>
#include <stdlib.h>

#include "stats.h"

int stats_linfit(const double *x, const double *y, size_t n, struct linfit *fit)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, ss = 0, z = 0, sz = 0;
	size_t i, nb, batch = 0;

	if (n < 2)
		return -1;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (i = 0; i < n; i++) {
		double dx = x[i] - mx;

		sxx += dx * dx;
		sxy += dx * (y[i] - my);
	}
	if (sxx == 0)
		return -1;
	fit->b = sxy / sxx;
	fit->a = my - fit->b * mx;
	nb = n < STATS_SE_BATCHES ? n : STATS_SE_BATCHES;
	for (i = 0; i < n; i++) {
		double r = y[i] - (fit->a + fit->b * x[i]);
		size_t k = i * nb / n;

		ss += r * r;
		if (k != batch) {
			sz += z * z;
			z = 0;
			batch = k;
		}
		z += (x[i] - mx) * r;
	}
	sz += z * z;
	fit->rms = sqrt(ss / (double)n);
	fit->b_se = nb > 2 ? sqrt(sz * (double)nb / (double)(nb - 2)) / sxx : NAN;
	fit->n = n;
	return 0;
}

static void swap(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/*
 * Puts the k-th smallest of v[lo..hi] at v[k], smaller ones before it and
 * larger ones after (Hoare's selection with a median-of-three pivot).
 */
static void select_k(double *v, size_t lo, size_t hi, size_t k)
{
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		double pivot;

		if (v[mid] < v[lo])
			swap(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap(&v[hi], &v[mid]);
		pivot = v[mid];
		i = lo;
		j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swap(&v[i], &v[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

double stats_min(const double *v, size_t n)
{
	double m = v[0];
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

void stats_quantiles(double *v, size_t n, const double *ps, double *out, size_t k)
{
	size_t lo = 0, j;

	for (j = 0; j < k; j++) {
		double h = (double)(n - 1) * ps[j];
		size_t r = (size_t)floor(h);
		double x;

		/* Earlier selections leave v[0..lo) below: search only above. */
		if (r < lo)
			lo = 0;
		select_k(v, lo, n - 1, r);
		x = v[r];
		if (r + 1 < n && h > (double)r)
			x += (h - (double)r) * (stats_min(v + r + 1, n - r - 1) - x);
		out[j] = x;
		lo = r;
	}
}

double stats_quantile(double *v, size_t n, double p)
{
	double q;

	stats_quantiles(v, n, &p, &q, 1);
	return q;
}

double stats_rms(const double *v, size_t n)
{
	double ss = 0;
	size_t i;

	for (i = 0; i < n; i++)
		ss += v[i] * v[i];
	return n ? sqrt(ss / (double)n) : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double stats_median_i64(const int64_t *v, size_t n)
{
	double *d = malloc(n * sizeof(*d));
	double m;
	size_t i;

	if (!d)
		abort();
	for (i = 0; i < n; i++)
		d[i] = (double)v[i];
	m = stats_quantile(d, n, 0.5);
	free(d);
	return m;
}
