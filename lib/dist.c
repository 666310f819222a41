/* SPDX-License-Identifier: ISC */
/*
 * dist.c - a series' distribution for a summary (dist.h): every value
 * kept up to DIST_EXACT_MAX, the histogram beside them from the start so
 * that nothing is recounted when they are let go.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "hist.h"

#define NCHUNKS	(DIST_EXACT_MAX / DIST_CHUNK)

struct dist {
	uint64_t n;
	int64_t min, max;
	int exact;			/* every value is in chunk[] */
	int64_t *chunk[NCHUNKS];
	int64_t *sorted;		/* a sorted copy of the n kept values, or NULL */
	uint64_t nsorted;
	struct hist h;
};

struct dist *dist_new(void)
{
	struct dist *d = calloc(1, sizeof(*d));

	if (d)
		d->exact = 1;
	return d;
}

/* The kept values go: past DIST_EXACT_MAX, or out of memory for them. */
static void let_go(struct dist *d)
{
	size_t i;

	for (i = 0; i < NCHUNKS; i++) {
		free(d->chunk[i]);
		d->chunk[i] = NULL;
	}
	free(d->sorted);
	d->sorted = NULL;
	d->exact = 0;
}

void dist_free(struct dist *d)
{
	if (!d)
		return;
	let_go(d);
	free(d);
}

void dist_add(struct dist *d, int64_t v)
{
	uint64_t i = d->n;

	if (!d->n || v < d->min)
		d->min = v;
	if (!d->n || v > d->max)
		d->max = v;
	d->n++;
	hist_add(&d->h, v);
	if (!d->exact)
		return;
	if (i >= DIST_EXACT_MAX) {
		let_go(d);
		return;
	}
	if (!d->chunk[i / DIST_CHUNK] &&
	    !(d->chunk[i / DIST_CHUNK] = malloc(DIST_CHUNK * sizeof(int64_t)))) {
		let_go(d);
		return;
	}
	d->chunk[i / DIST_CHUNK][i % DIST_CHUNK] = v;
}

uint64_t dist_count(const struct dist *d)
{
	return d->n;
}

int64_t dist_min(const struct dist *d)
{
	return d->n ? d->min : 0;
}

int64_t dist_max(const struct dist *d)
{
	return d->n ? d->max : 0;
}

int dist_exact(const struct dist *d)
{
	return d->exact;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The kept values, sorted, in one array; NULL when out of memory. */
static const int64_t *sorted(struct dist *d)
{
	uint64_t i;

	if (d->sorted && d->nsorted == d->n)
		return d->sorted;
	free(d->sorted);
	d->sorted = malloc(d->n * sizeof(int64_t));
	if (!d->sorted)
		return NULL;
	for (i = 0; i < d->n; i += DIST_CHUNK)
		memcpy(d->sorted + i, d->chunk[i / DIST_CHUNK],
		       (d->n - i < DIST_CHUNK ? d->n - i : DIST_CHUNK) * sizeof(int64_t));
	qsort(d->sorted, d->n, sizeof(int64_t), cmp_i64);
	d->nsorted = d->n;
	return d->sorted;
}

double dist_quantile(struct dist *d, double p, double *err)
{
	const int64_t *v;
	uint64_t k;
	double h, q;

	if (err)
		*err = 0;
	if (!d->n)
		return 0;
	p = p < 0 ? 0 : p > 1 ? 1 : p;
	if (d->exact && (v = sorted(d))) {
		/* Type 7: rank h = (n - 1) p, between the two nearest. */
		h = (double)(d->n - 1) * p;
		k = (uint64_t)h;
		if (k + 1 >= d->n)
			return (double)v[d->n - 1];
		return (double)v[k] + (h - (double)k) * ((double)v[k + 1] - (double)v[k]);
	}
	k = (uint64_t)ceil(p * (double)d->n);
	q = (double)hist_rank(&d->h, k < 1 ? 1 : k);
	q = q < (double)d->min ? (double)d->min : q > (double)d->max ? (double)d->max : q;
	if (err && fabs(q) >= (1 << HIST_BITS))
		*err = fabs(q) / (1 << HIST_BITS);
	return q;
}

void dist_us_str(char *buf, size_t len, int sign, double ns, double err)
{
	int k = err < 1 ? 0 : (int)ceil(log10(err));
	double unit = pow(10, k);

	/* Exact: printf rounds as a record's %.3f does. */
	snprintf(buf, len, sign ? "%+.*f us" : "%.*f us", k < 3 ? 3 - k : 0,
		 (k ? round(ns / unit) * unit : ns) / 1e3);
}
