/* SPDX-License-Identifier: ISC */
/*
 * stats.c - least squares, quantiles by selection, RMS.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "stats.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

int stats_line(const double *x, const double *y, size_t n, double *mean_x, double *mean_y,
	       double *b, double *sxx)
{
	double mx = 0, my = 0, sx = 0, sxy = 0;
	size_t i;

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

		sx += dx * dx;
		sxy += dx * (y[i] - my);
	}
	if (sx == 0)
		return -1;
	*mean_x = mx;
	*mean_y = my;
	*b = sxy / sx;
	*sxx = sx;
	return 0;
}

int stats_linfit(const double *x, const double *y, size_t n, struct linfit *fit)
{
	double mx, my, sxx, ss = 0, z = 0, sz = 0;
	size_t i, nb, batch = 0;

	if (stats_line(x, y, n, &mx, &my, &fit->b, &sxx))
		return -1;
	fit->a = my - fit->b * mx;
	nb = n < STATS_SE_BATCHES ? n : STATS_SE_BATCHES;
	/* Batch k is i from ceil(k n / nb): i k n / nb computed once a batch. */
	for (batch = 0, i = 0; batch < nb; batch++) {
		size_t end = ((batch + 1) * n + nb - 1) / nb;

		z = 0;
		for (; i < end; i++) {
			double r = y[i] - (fit->a + fit->b * x[i]);

			ss += r * r;
			z += (x[i] - mx) * r;
		}
		sz += z * z;
	}
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

/* The old way, and the fallback: selection in place, quantile after quantile. */
static void quantiles_select(double *v, size_t n, const double *ps, double *out, size_t k)
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

static int cmp_double(const void *a, const void *b);

/*
 * Large arrays: Floyd and Rivest's idea.  The sorted sample of QS_SAMPLE
 * values spread through v brackets each wanted rank between two of its
 * values, [lo, hi], that hold it with a margin of four standard
 * deviations of the sample's rank; one pass over v counts the values
 * below each bracket and copies those in it to a buffer of its own
 * (scan_bracket); selection in the buffers then gives ranks r and
 * r + 1 exactly, so the quantiles are those of the selection in place,
 * bit for bit (the order statistics and the same arithmetic on them).
 * When a bracket misses its ranks (unlucky data), overflows its buffer or
 * v holds a NAN, the selection in place does it all.  v is not reordered.
 * Returns 0, or -1 for that fallback.
 */
#define QS_MIN		65536
#define QS_SAMPLE	16384
#define QS_MAXK		8
#define QS_BLOCK	2048

/*
 * One block of @e values at @p against the bracket [l, u]: those in it
 * appended to d[*m...], and the count of those below l returned.  A NAN
 * is neither (the caller has checked for it).
 *
 * A bracket holds a few percent of the values at most (the median's is
 * about 3 %, the tails' under 1 %), so a branch taken only for a value in
 * it is nearly always predicted, and SSE2 compares two values at a time
 * and counts those below in a vector; this is half the time of the
 * branch-free copy of every value it replaced (on 10 M residuals).  Data
 * with many ties may fill a bracket: the branch is then mispredicted
 * more, and the buffer's overflow sends the caller to the fallback.
 */
static size_t scan_bracket(const double *p, size_t e, double l, double u, double *d, size_t *m)
{
	size_t t = 0, c = 0, k = *m;

#if defined(__SSE2__) && defined(__x86_64__)
	const __m128d vl = _mm_set1_pd(l), vu = _mm_set1_pd(u);
	__m128i below = _mm_setzero_si128();

	for (; t + 2 <= e; t += 2) {
		__m128d x = _mm_loadu_pd(p + t), lt = _mm_cmplt_pd(x, vl);
		/* a compare's true is all ones, -1 as an integer: subtract to count */
		int in = _mm_movemask_pd(_mm_andnot_pd(lt, _mm_cmple_pd(x, vu)));

		below = _mm_sub_epi64(below, _mm_castpd_si128(lt));
		if (in) {
			if (in & 1)
				d[k++] = p[t];
			if (in & 2)
				d[k++] = p[t + 1];
		}
	}
	c = (size_t)_mm_cvtsi128_si64(below) + (size_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(below, below));
#endif
	for (; t < e; t++) {
		double x = p[t];

		if (x >= l && x <= u)
			d[k++] = x;
		c += x < l;
	}
	*m = k;
	return c;
}

/* Whether any of the @e values at @p is a NAN: two at a time with SSE2 (a scalar loop is a sixth of the quantiles' time). */
static unsigned any_nan(const double *p, size_t e)
{
	size_t t = 0;
	unsigned nan = 0;

#if defined(__SSE2__) && defined(__x86_64__)
	__m128d acc = _mm_setzero_pd();

	for (; t + 2 <= e; t += 2) {
		__m128d x = _mm_loadu_pd(p + t);

		acc = _mm_or_pd(acc, _mm_cmpunord_pd(x, x));
	}
	nan = (unsigned)_mm_movemask_pd(acc);
#endif
	for (; t < e; t++)
		nan |= p[t] != p[t];
	return nan;
}

static int quantiles_bracket(const double *v, size_t n, const double *ps, double *out,
			     size_t k)
{
	double *smp, *buf[QS_MAXK] = { 0 }, lo[QS_MAXK], hi[QS_MAXK];
	size_t below[QS_MAXK], nb[QS_MAXK], cap[QS_MAXK], i, j, step = n / QS_SAMPLE;
	int rc = -1;
	unsigned nan = 0;

	if (k > QS_MAXK || !(smp = malloc(QS_SAMPLE * sizeof(*smp))))
		return -1;
	for (i = 0; i < QS_SAMPLE; i++)
		smp[i] = v[i * step + step / 2];
	for (i = 0; i < QS_SAMPLE; i++)
		if (isnan(smp[i]))
			goto out;
	qsort(smp, QS_SAMPLE, sizeof(*smp), cmp_double);
	for (j = 0; j < k; j++) {
		double p = ps[j], q = p * (QS_SAMPLE - 1);
		double g = 4 * sqrt(QS_SAMPLE * p * (1 - p)) + 4;
		double a = floor(q - g), b = ceil(q + g + 1);

		lo[j] = a < 0 ? -INFINITY : smp[(size_t)a];
		hi[j] = b > QS_SAMPLE - 1 ? INFINITY : smp[(size_t)b];
		/* the values expected in the bracket, twice over, and some */
		cap[j] = (size_t)((b - a + 1) / QS_SAMPLE * (double)n) * 2 + 2 * QS_BLOCK;
		below[j] = nb[j] = 0;
		if (!(buf[j] = malloc(cap[j] * sizeof(double))))
			goto out;
	}
	/* Blocks of QS_BLOCK: a bracket's buffer is checked once a block. */
	for (i = 0; i < n; i += QS_BLOCK) {
		size_t e = n - i < QS_BLOCK ? n - i : QS_BLOCK;

		nan |= any_nan(v + i, e);
		for (j = 0; j < k; j++) {
			if (cap[j] - nb[j] < QS_BLOCK)
				goto out;
			below[j] += scan_bracket(v + i, e, lo[j], hi[j], buf[j], &nb[j]);
		}
	}
	if (nan)
		goto out;
	for (j = 0; j < k; j++) {
		double h = (double)(n - 1) * ps[j], x;
		size_t r = (size_t)floor(h), two = r + 1 < n && h > (double)r, b;

		if (r < below[j] || r + two >= below[j] + nb[j])
			goto out;
		b = r - below[j];
		select_k(buf[j], 0, nb[j] - 1, b);
		x = buf[j][b];
		if (two)
			x += (h - (double)r) * (stats_min(buf[j] + b + 1, nb[j] - b - 1) - x);
		out[j] = x;
	}
	rc = 0;
out:
	for (j = 0; j < k; j++)
		free(buf[j]);
	free(smp);
	return rc;
}

void stats_quantiles(double *v, size_t n, const double *ps, double *out, size_t k)
{
	if (n >= QS_MIN && quantiles_bracket(v, n, ps, out, k) == 0)
		return;
	quantiles_select(v, n, ps, out, k);
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

int stats_median_i64(const int64_t *v, size_t n, double *median)
{
	double *d;
	size_t i;

	if (n > SIZE_MAX / sizeof(*d) || !(d = malloc(n * sizeof(*d))))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		d[i] = (double)v[i];
	*median = stats_quantile(d, n, 0.5);
	free(d);
	return 0;
}

double stats_kth(double *v, size_t n, size_t k)
{
	select_k(v, 0, n - 1, k);
	return v[k];
}

/*
 * P(|T| <= t) for Student's t with @dof degrees of freedom (A&S 26.7.3,
 * 26.7.4): with c = cos(theta), theta = atan(t / sqrt(dof)), a finite
 * series in c^2, one form for odd and one for even degrees.
 */
static double t_central(double t, int dof)
{
	double th = atan(t / sqrt((double)dof)), s = sin(th), c2 = cos(th) * cos(th);
	double term = 1, sum = 1;
	int k;

	if (dof % 2 == 0) {
		/* sin(th) [1 + 1/2 c^2 + 1.3/2.4 c^4 + ... + 1.3...(dof-3)/2.4...(dof-2) c^(dof-2)] */
		for (k = 2; k <= dof - 2; k += 2) {
			term *= c2 * (k - 1) / k;
			sum += term;
		}
		return s * sum;
	}
	if (dof == 1)
		return 2 * th / M_PI;
	/* 2/pi [th + sin(th) cos(th) (1 + 2/3 c^2 + ... + 2.4...(dof-3)/1.3...(dof-2) c^(dof-3))] */
	for (k = 3; k <= dof - 2; k += 2) {
		term *= c2 * (k - 1) / k;
		sum += term;
	}
	return 2 / M_PI * (th + s * cos(th) * sum);
}

double stats_t_quantile(double p, int dof)
{
	double lo = 0, hi = 1, want;
	int i;

	if (p < 0.5)
		return -stats_t_quantile(1 - p, dof);
	want = 2 * p - 1;
	while (t_central(hi, dof) < want && hi < 1e300)
		hi *= 2;
	for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (t_central(mid, dof) < want)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}
