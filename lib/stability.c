/* SPDX-License-Identifier: ISC */
/*
 * stability.c - ADEV, MDEV, TDEV, MTIE and TIE-RMS over octaves of tau.
 *
 * Per octave m, one pass over the grid for ADEV and TIE, one or two for
 * MDEV (block means then their differences, or both at once past the
 * cache), one for MTIE, O(1) work per term:
 *   - the overlapping Allan variance from the second differences
 *     d = x[j+2m] - 2 x[j+m] + x[j]: avar = sum d^2 / (2 tau^2 n);
 *     a gap makes d NAN, and a NAN term is left out;
 *   - the modified Allan variance from the sums of m neighbouring second
 *     differences, S = A[j+2m] - 2 A[j+m] + A[j] with A[b] the sum of
 *     the m slots from b, which prefix sums P of the phase give in O(1)
 *     (A[b] = P[b+m] - P[b]), mvar = sum S^2 / (2 m^2 tau^2 n).  With
 *     gaps, a block's sum is m times the mean of the samples it holds
 *     (prefix counts C give how many, as doubles: exact, and their
 *     memory serves as P's does later; the mean is the sum times the
 *     reciprocal of the count, kept while the count stays the same),
 *     and a term is kept while each of its three blocks holds at least
 *     half its slots: one lost exchange would otherwise remove every
 *     term over it, and past a few octaves there would be none.  The
 *     phase is first less the line through its first and last samples:
 *     a line adds nothing to S without gaps, would leak into the block
 *     means through a gap's position with them, and would make the
 *     prefix sums of a drifting clock grow past what a double holds to
 *     the ns;
 *   - TIE-RMS from x[j+m] - x[j];
 *   - MTIE from the window extremes, doubled in place octave by octave
 *     (a sparse table kept one level at a time): after octave k, hi[j]
 *     is the largest sample in [j, j + 2^k), so the window of m + 1
 *     slots [j, j + m] has max(hi[j], hi[j+1]); the pass that reads
 *     the windows doubles the extremes behind it.
 *   - with STAB_HADAMARD, the Hadamard variances from the third
 *     differences x[j+3m] - 3 x[j+2m] + 3 x[j+m] - x[j]: every j for
 *     OHDEV, j a multiple of m for HDEV, hvar = sum d^2 / (6 tau^2 n);
 *   - TOTDEV from the ADEV sum and the 2 (m - 1) terms centred within m
 *     of an end, whose outer sample the reflected series gives.
 * SP 1065 eqs. (10), (14), (15), (18), (19), (25); G.810 for MTIE and
 * TIE-RMS.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt_units.h"
#include "stability.h"
#include "stats.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#include <immintrin.h>	/* AVX2, in the functions marked so (wide()) */

/* The two 64-bit lanes of @v added. */
static inline uint64_t lanes_sum(__m128i v)
{
	return (uint64_t)_mm_cvtsi128_si64(v) + (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
}

/*
 * Two lanes, two accumulators: the squares of the terms d0 and d1 into
 * *a0 and *a1.  A NAN term fails cmpord and its square is masked to 0;
 * the mask (-1 per lane kept) counts down in *k.
 */
static inline __attribute__((always_inline)) void
add_sq2(__m128d d0, __m128d d1, __m128d *a0, __m128d *a1, __m128i *k)
{
	__m128d o0 = _mm_cmpord_pd(d0, d0), o1 = _mm_cmpord_pd(d1, d1);

	*a0 = _mm_add_pd(*a0, _mm_and_pd(o0, _mm_mul_pd(d0, d0)));
	*a1 = _mm_add_pd(*a1, _mm_and_pd(o1, _mm_mul_pd(d1, d1)));
	*k = _mm_sub_epi64(*k, _mm_add_epi64(_mm_castpd_si128(o0), _mm_castpd_si128(o1)));
}

/* The accumulators of add_sq2() into the scalar sums *s0, *s1 and count *c. */
static inline __attribute__((always_inline)) void
add_sq2_end(__m128d a0, __m128d a1, __m128i k, double *s0, double *s1, uint64_t *c)
{
	a0 = _mm_add_pd(a0, a1);
	*s0 = _mm_cvtsd_f64(a0);
	*s1 = _mm_cvtsd_f64(_mm_unpackhi_pd(a0, a0));
	*c = lanes_sum(k);
}
#endif

/*
 * What a block's sum is multiplied by for its mean: 1 / c for a block of
 * m slots holding c samples, NAN (the term left out) below half of them.
 * sum * (1 / c) can differ from sum / c, the mean by its definition
 * (stab_direct()), in the last bit: a relative 1e-16 of the mean.
 */
static inline double mean_recip(double c, size_t m)
{
	return 2 * c < (double)m ? NAN : 1 / c;
}

/*
 * The slots without a sample, ascending, while they are few (at most
 * GAPS_MAX(N); else none listed and the loops below look at every
 * count): they say where MDEV's block counts can change.
 */
struct gaps {
	const uint32_t *at;
	size_t n;
};

#define GAPS_MAX(N)	((N) / 16 + 1)

/*
 * From term j - 1 to term j the counts of the three blocks change only
 * where one of x[j - 1 + k m], k = 0 .. 3, is a gap.  q->until is the
 * first such j - 1 at or after @from (SIZE_MAX: none), q->gi[k] how far
 * the gaps are passed for each k, found anew with @start, else moved on.
 */
struct quiet {
	size_t gi[4], until;
};

static void quiet_from(const struct gaps *g, size_t m, size_t from, int start, struct quiet *q)
{
	size_t k;

	q->until = SIZE_MAX;
	for (k = 0; k < 4; k++) {
		size_t pos = from + k * m;

		if (start) {	/* the first gap at or after pos */
			size_t lo = 0, hi = g->n;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (g->at[mid] < pos)
					lo = mid + 1;
				else
					hi = mid;
			}
			q->gi[k] = lo;
		}
		while (q->gi[k] < g->n && g->at[q->gi[k]] < pos)
			q->gi[k]++;
		if (q->gi[k] < g->n && g->at[q->gi[k]] - k * m < q->until)
			q->until = g->at[q->gi[k]] - k * m;
	}
}

#if defined(__SSE2__) && defined(__x86_64__)
/*
 * Four lanes where the CPU has AVX2 (wide(), and not STAB_TWO_LANES):
 * the same operations on twice the terms per instruction, chosen when
 * stab_octaves_ext() starts, each sum over the same terms in the same
 * order as with two lanes and two accumulators, so the same bits: lanes
 * 0 and 1 of a four-lane sum are the first two-lane accumulator's, 2
 * and 3 the second's.  No FMA: a fused multiply-add rounds once where
 * the two-lane code rounds twice.
 */
#define AVX2	__attribute__((target("avx2")))

static int wide(void)
{
	return __builtin_cpu_supports("avx2");
}

/* add_sq2() four lanes at once, into one accumulator. */
static inline __attribute__((always_inline)) AVX2 void
add_sq4(__m256d d, __m256d *a, __m256i *k)
{
	__m256d o = _mm256_cmp_pd(d, d, _CMP_ORD_Q);

	*a = _mm256_add_pd(*a, _mm256_and_pd(o, _mm256_mul_pd(d, d)));
	*k = _mm256_sub_epi64(*k, _mm256_castpd_si256(o));
}

/* add_sq2_end() of add_sq4()'s accumulator. */
static inline __attribute__((always_inline)) AVX2 void
add_sq4_end(__m256d a, __m256i k, double *s0, double *s1, uint64_t *c)
{
	__m128d v = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));

	*s0 = _mm_cvtsd_f64(v);
	*s1 = _mm_cvtsd_f64(_mm_unpackhi_pd(v, v));
	*c = lanes_sum(_mm_add_epi64(_mm256_castsi256_si128(k), _mm256_extracti128_si256(k, 1)));
}

/*
 * sumsq12()'s two-lane part four lanes at a time: the second
 * differences up to *j, the first ones up to *i (both multiples of 4),
 * into a[0..1], *ka and t[0..1], *kt as add_sq2_end() leaves them.
 */
static AVX2 void sumsq12_wide(const double *p, size_t m, size_t n1, size_t n2, size_t *j,
			      size_t *i, double *a, uint64_t *ka, double *t, uint64_t *kt)
{
	const double *q = p + m, *r = p + 2 * m;
	const __m256d two = _mm256_set1_pd(2);
	__m256d va = _mm256_setzero_pd(), vt = _mm256_setzero_pd();
	__m256i ak = _mm256_setzero_si256(), tk = _mm256_setzero_si256();
	size_t u = 0, v;

	for (; u + 4 <= n2; u += 4) {
		__m256d p0 = _mm256_loadu_pd(p + u), q0 = _mm256_loadu_pd(q + u);

		add_sq4(_mm256_sub_pd(q0, p0), &vt, &tk);
		add_sq4(_mm256_add_pd(_mm256_sub_pd(_mm256_loadu_pd(r + u), _mm256_mul_pd(two, q0)),
				      p0), &va, &ak);
	}
	add_sq4_end(va, ak, &a[0], &a[1], ka);
	for (v = u; v + 4 <= n1; v += 4)
		add_sq4(_mm256_sub_pd(_mm256_loadu_pd(q + v), _mm256_loadu_pd(p + v)), &vt, &tk);
	add_sq4_end(vt, tk, &t[0], &t[1], kt);
	*j = u;
	*i = v;
}

/* sumsq2()'s two-lane part four lanes at a time, up to *j. */
static AVX2 void sumsq2_wide(const double *p, size_t m, size_t n, size_t *j, double *a,
			     uint64_t *ka)
{
	const double *q = p + m, *r = p + 2 * m;
	const __m256d two = _mm256_set1_pd(2);
	__m256d va = _mm256_setzero_pd();
	__m256i ak = _mm256_setzero_si256();
	size_t u;

	for (u = 0; u + 4 <= n; u += 4)
		add_sq4(_mm256_add_pd(_mm256_sub_pd(_mm256_loadu_pd(r + u),
						    _mm256_mul_pd(two, _mm256_loadu_pd(q + u))),
				      _mm256_loadu_pd(p + u)), &va, &ak);
	add_sq4_end(va, ak, &a[0], &a[1], ka);
	*j = u;
}

/*
 * block_mean() four at a time, for the blocks of m slots from o to
 * o + 3, *cl and *rl the count and reciprocal kept in every lane.
 */
static inline __attribute__((always_inline)) AVX2 __m256d
block_mean4(const double *P, const double *C, size_t m, size_t o, __m256d *cl, __m256d *rl)
{
	__m256d c = _mm256_sub_pd(_mm256_loadu_pd(C + o + m), _mm256_loadu_pd(C + o));
	__m256d sum = _mm256_sub_pd(_mm256_loadu_pd(P + o + m), _mm256_loadu_pd(P + o));

	if (_mm256_movemask_pd(_mm256_cmp_pd(c, *cl, _CMP_EQ_OQ)) != 0xf) {
		double cv[4], rv[4];
		int h;

		_mm256_storeu_pd(cv, c);
		for (h = 0; h < 4; h++)
			rv[h] = mean_recip(cv[h], m);
		*cl = _mm256_set1_pd(cv[3]);
		*rl = _mm256_set1_pd(rv[3]);
		return _mm256_mul_pd(sum, _mm256_loadu_pd(rv));
	}
	return _mm256_mul_pd(sum, *rl);
}

/*
 * terms()' block means four at a time, B[j - jb] for j from *j while
 * j + 4 <= e, *j moved on: block_mean() with the count and reciprocal
 * kept in every lane.
 */
static AVX2 void means_wide(const double *P, const double *C, size_t m, double *B, size_t jb,
			    size_t *j, size_t e)
{
	__m256d cl = _mm256_set1_pd((double)m), rl = _mm256_set1_pd(1 / (double)m);
	size_t u;

	for (u = *j; u + 4 <= e; u += 4)
		_mm256_storeu_pd(B + u - jb, block_mean4(P, C, m, u, &cl, &rl));
	*j = u;
}

/*
 * mdev_direct()'s loop four terms at a time, j from *j while j + 4 <= e,
 * into s[0..1] and *k as add_sq2_end() leaves them, *j moved on.
 */
static AVX2 void mdev_wide(const double *P, const double *C, const struct gaps *g, size_t m,
			   size_t *j, size_t e, double *s, uint64_t *k)
{
	const __m256d two = _mm256_set1_pd(2);
	__m256d acc = _mm256_setzero_pd(), cl[3], rl[3];
	__m256i ak = _mm256_setzero_si256();
	struct quiet q = { { 0, 0, 0, 0 }, 0 };
	size_t u, jb = *j;
	int b;

	for (b = 0; b < 3; b++) {
		cl[b] = _mm256_set1_pd((double)m);
		rl[b] = _mm256_set1_pd(1 / (double)m);
	}
	for (u = jb; u + 4 <= e; u += 4) {
		__m256d m0, m1, m2;

		if (u > jb && u + 2 < q.until) {	/* the counts of u - 1 */
			const double *p = P + u;
			__m256d p1 = _mm256_loadu_pd(p + m), p2 = _mm256_loadu_pd(p + 2 * m);

			m0 = _mm256_mul_pd(_mm256_sub_pd(p1, _mm256_loadu_pd(p)), rl[0]);
			m1 = _mm256_mul_pd(_mm256_sub_pd(p2, p1), rl[1]);
			m2 = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(p + 3 * m), p2), rl[2]);
		} else {
			m0 = block_mean4(P, C, m, u, &cl[0], &rl[0]);
			m1 = block_mean4(P, C, m, u + m, &cl[1], &rl[1]);
			m2 = block_mean4(P, C, m, u + 2 * m, &cl[2], &rl[2]);
			if (g)
				quiet_from(g, m, u + 3, u == jb, &q);
		}
		add_sq4(_mm256_add_pd(_mm256_sub_pd(m2, _mm256_mul_pd(two, m1)), m0), &acc, &ak);
	}
	add_sq4_end(acc, ak, &s[0], &s[1], k);
	*j = u;
}

/*
 * windows_double()'s loop four lanes at a time, j from 0 while
 * j + 4 <= both: into *w and *n, *j moved on.
 */
static AVX2 void windows_double_wide(double *hi, double *lo, size_t m, size_t both, size_t *j,
				     double *w, uint64_t *n)
{
	__m256d wv = _mm256_set1_pd(*w);
	__m256i nv = _mm256_setzero_si256();
	__m128d w2;
	size_t u;

	for (u = 0; u + 4 <= both; u += 4) {
		__m256d h0 = _mm256_loadu_pd(hi + u), l0 = _mm256_loadu_pd(lo + u);
		__m256d h = _mm256_max_pd(h0, _mm256_loadu_pd(hi + u + 1));
		__m256d l = _mm256_min_pd(l0, _mm256_loadu_pd(lo + u + 1));

		wv = _mm256_max_pd(wv, _mm256_sub_pd(h, l));
		nv = _mm256_sub_epi64(nv, _mm256_castpd_si256(_mm256_cmp_pd(h, l, _CMP_GE_OQ)));
		_mm256_storeu_pd(hi + u, _mm256_max_pd(h0, _mm256_loadu_pd(hi + u + m)));
		_mm256_storeu_pd(lo + u, _mm256_min_pd(l0, _mm256_loadu_pd(lo + u + m)));
	}
	w2 = _mm_max_pd(_mm256_castpd256_pd128(wv), _mm256_extractf128_pd(wv, 1));
	w2 = _mm_max_pd(w2, _mm_unpackhi_pd(w2, w2));
	*w = _mm_cvtsd_f64(w2);
	*n += lanes_sum(_mm_add_epi64(_mm256_castsi256_si128(nv), _mm256_extracti128_si256(nv, 1)));
	*j = u;
}
#else
static int wide(void)
{
	return 0;
}
#endif

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

/*
 * round(v) for 0 <= v < 2^52 without a call into libm: v less its whole
 * part is exact there, and a half goes up as round() takes it.
 */
static inline size_t slot_of(double v)
{
	size_t k = (size_t)v;

	return k + (v - (double)k >= 0.5);
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
		size_t k = slot_of((t_s[i] - tmin) / tau0_s);

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

/* The sums of one octave. */
struct acc {
	double sa, sm, st, mtie, sh, so, stot;
	uint64_t na, nm, nt, nw, nh, no, ntot;
};

/* Deviations from sums of squares; NAN without a term. */
static void finish(struct stab_point *p, const struct acc *a)
{
	double tau = p->tau_s, m = (double)p->m;
	double sa = a->sa, sm = a->sm, st = a->st, mtie = a->mtie;

	p->n_adev = a->na;
	p->n_mdev = a->nm;
	p->n_tie = a->nt;
	p->n_mtie = a->nw;
	p->n_hdev = a->nh;
	p->n_ohdev = a->no;
	p->n_tot = a->ntot;
	p->hdev = a->nh ? ntpx_ns_to_sec(sqrt(a->sh / (6 * tau * tau * (double)a->nh))) : NAN;
	p->ohdev = a->no ? ntpx_ns_to_sec(sqrt(a->so / (6 * tau * tau * (double)a->no))) : NAN;
	p->totdev = a->ntot ? ntpx_ns_to_sec(sqrt(a->stot / (2 * tau * tau * (double)a->ntot))) : NAN;

	p->adev = p->n_adev ? ntpx_ns_to_sec(sqrt(sa / (2 * tau * tau * (double)p->n_adev))) : NAN;
	p->mdev = p->n_mdev ? ntpx_ns_to_sec(sqrt(sm / (2 * m * m * tau * tau * (double)p->n_mdev))) : NAN;
	p->tdev_ns = p->n_mdev ? ntpx_sec_to_ns(tau / sqrt(3) * p->mdev) : NAN;
	p->tie_rms_ns = p->n_tie ? sqrt(st / (double)p->n_tie) : NAN;
	p->mtie_ns = p->n_mtie ? mtie : NAN;
}

/* The line through the first and last samples: x[j] ~ base + slope (j - first). */
static size_t line_of(const double *x, size_t N, double *base, double *slope)
{
	size_t first = 0, last = N;

	*base = *slope = 0;
	while (first < N && isnan(x[first]))
		first++;
	if (first == N)
		return N;
	while (isnan(x[last - 1]))	/* stops at first at the latest */
		last--;
	last--;
	*base = x[first];
	if (last > first)
		*slope = (x[last] - x[first]) / (double)(last - first);
	return first;
}

static inline size_t min_z(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * Sums of squares of the terms of one statistic, NAN terms left out and
 * counted out of *cnt.  Four sums side by side: one alone waits on its
 * own additions.
 */
static inline __attribute__((always_inline)) void
add_sq(double d, double *s, uint64_t *c)
{
	if (d == d) {
		*s += d * d;
		(*c)++;
	}
}

/* The four sums of add_sq() into one, and the count into *cnt. */
static inline double sums_end(const double s[4], const uint64_t c[4], uint64_t *cnt)
{
	*cnt += c[0] + c[1] + c[2] + c[3];
	return (s[0] + s[1]) + (s[2] + s[3]);
}

/*
 * The second differences p[j+2m] - 2 p[j+m] + p[j], j in [0, n2), and
 * the first differences p[j+m] - p[j], j in [0, n1), n2 <= n1, in one
 * pass over p: ADEV's and TIE's terms read the same samples, and read
 * apart the phase went through the cache twice.  The squares go to
 * *s2, *c2 and *s1, *c1 (add_sq()); each sum adds its terms in the
 * order sumsq2() would alone, so the same bits.
 */
static void sumsq12(const double *p, size_t m, size_t n1, size_t n2,
		    double *s1, uint64_t *c1, double *s2, uint64_t *c2, int four)
{
	const double *q = p + m, *r = p + 2 * m;
	double a[4] = { 0, 0, 0, 0 }, t[4] = { 0, 0, 0, 0 };
	uint64_t ka[4] = { 0, 0, 0, 0 }, kt[4] = { 0, 0, 0, 0 };
	size_t j = 0, i;

#if defined(__SSE2__) && defined(__x86_64__)
	if (four) {
		sumsq12_wide(p, m, n1, n2, &j, &i, a, &ka[0], t, &kt[0]);
	} else {
		/* Two lanes at a time (add_sq2()); both while both have terms. */
		__m128d a0 = _mm_setzero_pd(), a1 = _mm_setzero_pd();
		__m128d t0 = _mm_setzero_pd(), t1 = _mm_setzero_pd();
		const __m128d two = _mm_set1_pd(2);
		__m128i ak = _mm_setzero_si128(), tk = _mm_setzero_si128();

		for (; j + 4 <= n2; j += 4) {
			__m128d p0 = _mm_loadu_pd(p + j), p1 = _mm_loadu_pd(p + j + 2);
			__m128d q0 = _mm_loadu_pd(q + j), q1 = _mm_loadu_pd(q + j + 2);

			add_sq2(_mm_sub_pd(q0, p0), _mm_sub_pd(q1, p1), &t0, &t1, &tk);
			add_sq2(_mm_add_pd(_mm_sub_pd(_mm_loadu_pd(r + j), _mm_mul_pd(two, q0)), p0),
				_mm_add_pd(_mm_sub_pd(_mm_loadu_pd(r + j + 2), _mm_mul_pd(two, q1)), p1),
				&a0, &a1, &ak);
		}
		add_sq2_end(a0, a1, ak, &a[0], &a[1], &ka[0]);
		for (i = j; i + 4 <= n1; i += 4)
			add_sq2(_mm_sub_pd(_mm_loadu_pd(q + i), _mm_loadu_pd(p + i)),
				_mm_sub_pd(_mm_loadu_pd(q + i + 2), _mm_loadu_pd(p + i + 2)),
				&t0, &t1, &tk);
		add_sq2_end(t0, t1, tk, &t[0], &t[1], &kt[0]);
	}
	/* the second differences left, then the first ones from i */
	for (; j < n2; j++)
		add_sq(r[j] - 2 * q[j] + p[j], &a[0], &ka[0]);
	for (; i < n1; i++)
		add_sq(q[i] - p[i], &t[0], &kt[0]);
	*s2 += sums_end(a, ka, c2);
	*s1 += sums_end(t, kt, c1);
	return;
#endif
	for (; j + 4 <= n2; j += 4)
		for (i = 0; i < 4; i++)
			add_sq(r[j + i] - 2 * q[j + i] + p[j + i], &a[i], &ka[i]);
	for (; j < n2; j++)
		add_sq(r[j] - 2 * q[j] + p[j], &a[0], &ka[0]);
	for (j = 0; j + 4 <= n1; j += 4)
		for (i = 0; i < 4; i++)
			add_sq(q[j + i] - p[j + i], &t[i], &kt[i]);
	for (; j < n1; j++)
		add_sq(q[j] - p[j], &t[0], &kt[0]);
	*s2 += sums_end(a, ka, c2);
	*s1 += sums_end(t, kt, c1);
}

/* The second differences alone, j in [0, n), summed as sumsq12() sums them. */
static double sumsq2(const double *p, size_t m, size_t n, uint64_t *cnt, int four)
{
	const double *q = p + m, *r = p + 2 * m;
	double a[4] = { 0, 0, 0, 0 };
	uint64_t ka[4] = { 0, 0, 0, 0 };
	size_t j = 0, i;

#if defined(__SSE2__) && defined(__x86_64__)
	if (four)
		sumsq2_wide(p, m, n, &j, a, &ka[0]);
	else {
		__m128d a0 = _mm_setzero_pd(), a1 = _mm_setzero_pd();
		const __m128d two = _mm_set1_pd(2);
		__m128i ak = _mm_setzero_si128();

		for (; j + 4 <= n; j += 4)
			add_sq2(_mm_add_pd(_mm_sub_pd(_mm_loadu_pd(r + j),
						      _mm_mul_pd(two, _mm_loadu_pd(q + j))),
					   _mm_loadu_pd(p + j)),
				_mm_add_pd(_mm_sub_pd(_mm_loadu_pd(r + j + 2),
						      _mm_mul_pd(two, _mm_loadu_pd(q + j + 2))),
					   _mm_loadu_pd(p + j + 2)),
				&a0, &a1, &ak);
		add_sq2_end(a0, a1, ak, &a[0], &a[1], &ka[0]);
	}
#endif
	for (; j + 4 <= n; j += 4)
		for (i = 0; i < 4; i++)
			add_sq(r[j + i] - 2 * q[j + i] + p[j + i], &a[i], &ka[i]);
	for (; j < n; j++)
		add_sq(r[j] - 2 * q[j] + p[j], &a[0], &ka[0]);
	return sums_end(a, ka, cnt);
}

/*
 * Sums of squares of the third differences
 * p[j+3m] - 3 p[j+2m] + 3 p[j+m] - p[j], j in [0, n): as sumsq2().
 */
static double sumsq3(const double *p, size_t m, size_t n, uint64_t *cnt)
{
	const double *q = p + m, *r = p + 2 * m, *u = p + 3 * m;
	double s0 = 0, s1 = 0;
	uint64_t c0 = 0, c1 = 0;
	size_t j = 0;

#if defined(__SSE2__) && defined(__x86_64__)
	{
		__m128d a0 = _mm_setzero_pd(), a1 = _mm_setzero_pd();
		const __m128d three = _mm_set1_pd(3);
		__m128i k = _mm_setzero_si128();

		for (; j + 4 <= n; j += 4) {
			__m128d d0, d1;

			d0 = _mm_add_pd(_mm_sub_pd(_mm_loadu_pd(u + j), _mm_loadu_pd(p + j)),
					_mm_mul_pd(three, _mm_sub_pd(_mm_loadu_pd(q + j),
								     _mm_loadu_pd(r + j))));
			d1 = _mm_add_pd(_mm_sub_pd(_mm_loadu_pd(u + j + 2), _mm_loadu_pd(p + j + 2)),
					_mm_mul_pd(three, _mm_sub_pd(_mm_loadu_pd(q + j + 2),
								     _mm_loadu_pd(r + j + 2))));
			add_sq2(d0, d1, &a0, &a1, &k);
		}
		add_sq2_end(a0, a1, k, &s0, &s1, &c0);
	}
#endif
	for (; j + 2 <= n; j += 2) {
		add_sq(u[j] - p[j] + 3 * (q[j] - r[j]), &s0, &c0);
		add_sq(u[j + 1] - p[j + 1] + 3 * (q[j + 1] - r[j + 1]), &s1, &c1);
	}
	for (; j < n; j++)
		add_sq(u[j] - p[j] + 3 * (q[j] - r[j]), &s0, &c0);
	*cnt += c0 + c1;
	return s0 + s1;
}

/* The Hadamard terms for j in [jb, je): OHDEV at every j, HDEV at multiples of m. */
static void hadamard(const double *x, size_t N, size_t m, size_t jb, size_t je, struct acc *a)
{
	size_t j, e = N > 3 * m ? min_z(je, N - 3 * m) : jb;

	if (e <= jb)
		return;
	a->so += sumsq3(x + jb, m, e - jb, &a->no);
	for (j = (jb + m - 1) / m * m; j < e; j += m) {
		double d = x[j + 3 * m] - 3 * x[j + 2 * m] + 3 * x[j + m] - x[j];

		add_sq(d, &a->sh, &a->nh);
	}
}

/*
 * TOTDEV's terms centred at i in [1, m) and [N - m, N - 1), whose outer
 * sample lies past an end: x*[-k] = 2 x[0] - x[k] and
 * x*[N-1+k] = 2 x[N-1] - x[N-1-k] (SP 1065 eq. (25)); the others are
 * ADEV's.  N > 3 m.
 */
static void total_edges(const double *x, size_t N, size_t m, struct acc *a)
{
	double s = a->stot;	/* in a register, not through a */
	uint64_t n = a->ntot;
	size_t i;

	for (i = 1; i < m; i++)
		add_sq(2 * x[0] - x[m - i] - 2 * x[i] + x[i + m], &s, &n);
	for (i = N - m; i + 1 < N; i++)
		add_sq(x[i - m] - 2 * x[i] + 2 * x[N - 1] - x[2 * (N - 1) - i - m], &s, &n);
	a->stot = s + a->sa;
	a->ntot = n + a->na;
}

/*
 * The mean of the block of m slots from o, the sum times the reciprocal
 * of its count, *cl and *rl the count and reciprocal kept from the block
 * before (terms()).
 */
static inline double block_mean(const double *P, const double *C, size_t m, size_t o,
				double *cl, double *rl)
{
	double c = C[o + m] - C[o];

	if (c != *cl) {
		*cl = c;
		*rl = mean_recip(c, m);
	}
	return (P[o + m] - P[o]) * *rl;
}

#if defined(__SSE2__) && defined(__x86_64__)
/*
 * block_mean() two at a time, for the blocks of m slots from o and
 * o + 1, *cl and *rl the count and reciprocal kept in both lanes.
 */
static inline __attribute__((always_inline)) __m128d
block_mean2(const double *P, const double *C, size_t m, size_t o, __m128d *cl, __m128d *rl)
{
	__m128d c = _mm_sub_pd(_mm_loadu_pd(C + o + m), _mm_loadu_pd(C + o));
	__m128d sum = _mm_sub_pd(_mm_loadu_pd(P + o + m), _mm_loadu_pd(P + o));

	if (_mm_movemask_pd(_mm_cmpeq_pd(c, *cl)) != 3) {
		__m128d c1 = _mm_unpackhi_pd(c, c);
		__m128d r = _mm_set_pd(mean_recip(_mm_cvtsd_f64(c1), m),
				       mean_recip(_mm_cvtsd_f64(c), m));

		*cl = c1;
		*rl = _mm_unpackhi_pd(r, r);
		return _mm_mul_pd(sum, r);
	}
	return _mm_mul_pd(sum, *rl);
}
#endif

/*
 * MDEV's terms for j in [jb, e) straight from the prefix sums: the three
 * block means at j, j + m and j + 2m made as terms() makes them into B,
 * each block keeping its own count and reciprocal, and summed as
 * sumsq2() sums B's second differences: the same bits.  For the large
 * octaves, whose arrays are far larger than the cache, writing B and
 * reading it back cost more than making each mean three times.
 */
static void mdev_direct(const double *P, const double *C, const struct gaps *g, size_t m,
			size_t jb, size_t e, struct acc *a, int four)
{
	double s[4] = { 0, 0, 0, 0 }, inv = 1 / (double)m;
	uint64_t k[4] = { 0, 0, 0, 0 };
	double cl[3] = { (double)m, (double)m, (double)m };
	double rl[3] = { inv, inv, inv };
	size_t j = jb, i;

#if defined(__SSE2__) && defined(__x86_64__)
	if (four)
		mdev_wide(P, C, g, m, &j, e, s, &k[0]);
	else {
		__m128d a0 = _mm_setzero_pd(), a1 = _mm_setzero_pd(), d[2];
		const __m128d two = _mm_set1_pd(2);
		__m128i ak = _mm_setzero_si128();
		__m128d vcl[3], vrl[3];
		struct quiet q = { { 0, 0, 0, 0 }, 0 };
		int b, h;

		for (b = 0; b < 3; b++) {
			vcl[b] = _mm_set1_pd((double)m);
			vrl[b] = _mm_set1_pd(inv);
		}
		for (; j + 4 <= e; j += 4) {
			int calm = j > jb && j + 2 < q.until;	/* the counts of j - 1 */

			for (h = 0; h < 2; h++) {
				size_t o = j + 2 * (size_t)h;
				__m128d m0, m1, m2;

				if (calm) {
					__m128d p1 = _mm_loadu_pd(P + o + m), p2 = _mm_loadu_pd(P + o + 2 * m);

					m0 = _mm_mul_pd(_mm_sub_pd(p1, _mm_loadu_pd(P + o)), vrl[0]);
					m1 = _mm_mul_pd(_mm_sub_pd(p2, p1), vrl[1]);
					m2 = _mm_mul_pd(_mm_sub_pd(_mm_loadu_pd(P + o + 3 * m), p2), vrl[2]);
				} else {
					m0 = block_mean2(P, C, m, o, &vcl[0], &vrl[0]);
					m1 = block_mean2(P, C, m, o + m, &vcl[1], &vrl[1]);
					m2 = block_mean2(P, C, m, o + 2 * m, &vcl[2], &vrl[2]);
				}
				d[h] = _mm_add_pd(_mm_sub_pd(m2, _mm_mul_pd(two, m1)), m0);
			}
			add_sq2(d[0], d[1], &a0, &a1, &ak);
			if (!calm && g)
				quiet_from(g, m, j + 3, j == jb, &q);
		}
		add_sq2_end(a0, a1, ak, &s[0], &s[1], &k[0]);
	}
#endif
	for (; j + 4 <= e; j += 4)
		for (i = 0; i < 4; i++) {
			double m0 = block_mean(P, C, m, j + i, &cl[0], &rl[0]);
			double m1 = block_mean(P, C, m, j + i + m, &cl[1], &rl[1]);
			double m2 = block_mean(P, C, m, j + i + 2 * m, &cl[2], &rl[2]);

			add_sq(m2 - 2 * m1 + m0, &s[i], &k[i]);
		}
	for (; j < e; j++) {
		double m0 = block_mean(P, C, m, j, &cl[0], &rl[0]);
		double m1 = block_mean(P, C, m, j + m, &cl[1], &rl[1]);
		double m2 = block_mean(P, C, m, j + 2 * m, &cl[2], &rl[2]);

		add_sq(m2 - 2 * m1 + m0, &s[0], &k[0]);
	}
	a->sm += sums_end(s, k, &a->nm) * (double)m * (double)m;
}

/*
 * The ADEV, MDEV and TIE terms for j in [jb, je): ADEV and TIE in one
 * loop (sumsq12()), MDEV in loops of its own with its bounds outside
 * them, through the block means in B (B[b - jb], room for je - jb + 2m)
 * or, B NULL, without them (mdev_direct(), with the gaps @g if listed):
 * a loop fusing all three kept too much in flight to stay in registers.
 * A gap makes a term NAN, which d == d leaves out without a branch to
 * mispredict.  @four: four lanes at a time (wide()).
 */
static void terms(const double *x, const double *P, const double *C, double *B,
		  const struct gaps *g, size_t N, size_t m, size_t jb, size_t je, struct acc *a,
		  int four)
{
	double inv = 1 / (double)m;
	size_t j, e, e2;

	e = N > m ? min_z(je, N - m) : jb;		/* TIE's terms end here */
	e2 = N > 2 * m ? min_z(je, N - 2 * m) : jb;	/* ADEV's here */
	if (e > jb)
		sumsq12(x + jb, m, e - jb, e2 > jb ? e2 - jb : 0, &a->st, &a->nt, &a->sa, &a->na,
			four);
	/*
	 * MDEV from the block means B[b] of the m slots from b (B[b - jb]
	 * here), NAN for a block with fewer than half its samples: then the
	 * term m (B[j+2m] - 2 B[j+m] + B[j]) is left out like a gap in ADEV.
	 * A block's count c changes only where a gap enters or leaves it,
	 * twice per gap along the run, so its mean is its sum times the
	 * reciprocal of the count (mean_recip()), kept from the block
	 * before: a division per new count, not per block.  Past a few
	 * octaves nearly every block holds a gap, and a division for each
	 * was most of this function.
	 */
	e = N >= 3 * m ? min_z(je, N - 3 * m + 1) : jb;
	if (e <= jb)
		return;
	if (!B) {
		mdev_direct(P, C, g, m, jb, e, a, four);
		return;
	}
	j = jb;
#if defined(__SSE2__) && defined(__x86_64__)
	if (four)
		means_wide(P, C, m, B, jb, &j, e + 2 * m);
	{
		__m128d cl = _mm_set1_pd((double)m), rl = _mm_set1_pd(inv);

		for (; j + 2 <= e + 2 * m; j += 2)
			_mm_storeu_pd(B + j - jb, block_mean2(P, C, m, j, &cl, &rl));
	}
#endif
	{
		double cl = (double)m, rl = inv;

		for (; j < e + 2 * m; j++)
			B[j - jb] = block_mean(P, C, m, j, &cl, &rl);
	}
	a->sm += sumsq2(B, m, e - jb, &a->nm, four) * (double)m * (double)m;
}

/*
 * The MTIE window [j, j + m] into *w (the largest range) and *n (those
 * with a sample), from the extremes of the w slots from j and from j +
 * @off = j + m + 1 - w (w <= m + 1 <= 2 w; an octave's off is 1).
 */
static inline void window_add(const double *hi, const double *lo, size_t j, size_t off,
			      double *w, uint64_t *n)
{
	double h = hi[j] > hi[j + off] ? hi[j] : hi[j + off];
	double l = lo[j] < lo[j + off] ? lo[j] : lo[j + off];
	double r = h - l;

	*w = r > *w ? r : *w;
	*n += (uint64_t)(h >= l);
}

/* The MTIE windows j in [jb, je) alone (windows_double(), stab_taus()). */
static void windows(const double *hi, const double *lo, size_t off, size_t jb, size_t je,
		    double *w, uint64_t *n)
{
	size_t j = jb;

#if defined(__SSE2__) && defined(__x86_64__)
	{
		__m128d wv = _mm_set1_pd(*w);
		__m128i nv = _mm_setzero_si128();

		for (; j + 2 <= je; j += 2) {
			__m128d h = _mm_max_pd(_mm_loadu_pd(hi + j), _mm_loadu_pd(hi + j + off));
			__m128d l = _mm_min_pd(_mm_loadu_pd(lo + j), _mm_loadu_pd(lo + j + off));

			wv = _mm_max_pd(wv, _mm_sub_pd(h, l));
			nv = _mm_sub_epi64(nv, _mm_castpd_si128(_mm_cmpge_pd(h, l)));
		}
		wv = _mm_max_pd(wv, _mm_unpackhi_pd(wv, wv));
		*w = _mm_cvtsd_f64(wv);
		*n += lanes_sum(nv);
	}
#endif
	for (; j < je; j++)
		window_add(hi, lo, j, off, w, n);
}

/* The extremes doubled alone, i in [ib, ie) (windows_double()). */
static void extremes_double(double *hi, double *lo, size_t ib, size_t ie, size_t m)
{
	size_t i = ib;

#if defined(__SSE2__) && defined(__x86_64__)
	/* Each step reads [i + m, i + m + 2) before it writes [i, i + 2). */
	for (; i + 2 <= ie; i += 2) {
		_mm_storeu_pd(hi + i, _mm_max_pd(_mm_loadu_pd(hi + i), _mm_loadu_pd(hi + i + m)));
		_mm_storeu_pd(lo + i, _mm_min_pd(_mm_loadu_pd(lo + i), _mm_loadu_pd(lo + i + m)));
	}
#endif
	for (; i < ie; i++) {
		hi[i] = hi[i + m] > hi[i] ? hi[i + m] : hi[i];
		lo[i] = lo[i + m] < lo[i] ? lo[i + m] : lo[i];
	}
}

/*
 * MTIE over the windows [j, j + m], j in [0, nw), from the extremes of
 * [j, j + m) and [j + 1, j + m]: max(hi[j], hi[j + 1]) and min(lo[j],
 * lo[j + 1]); and in the same pass the extremes doubled in place for the
 * next octave, i in [0, nd): [i, i + m) becomes [i, i + 2m).  Each step
 * reads hi[j + 1] and hi[j + m] before a later one writes them; apart,
 * the two read the extremes twice.
 */
static void windows_double(double *hi, double *lo, size_t m, size_t nw, size_t nd,
			   struct acc *a, int four)
{
	double w = a->mtie;
	uint64_t n = 0;
	size_t j = 0, both = min_z(nw, nd);

#if defined(__SSE2__) && defined(__x86_64__)
	if (four)
		windows_double_wide(hi, lo, m, both, &j, &w, &n);
	else {
		__m128d wv = _mm_set1_pd(w);
		__m128i nv = _mm_setzero_si128();

		for (; j + 2 <= both; j += 2) {
			__m128d h0 = _mm_loadu_pd(hi + j), l0 = _mm_loadu_pd(lo + j);
			__m128d h = _mm_max_pd(h0, _mm_loadu_pd(hi + j + 1));
			__m128d l = _mm_min_pd(l0, _mm_loadu_pd(lo + j + 1));

			wv = _mm_max_pd(wv, _mm_sub_pd(h, l));
			nv = _mm_sub_epi64(nv, _mm_castpd_si128(_mm_cmpge_pd(h, l)));
			_mm_storeu_pd(hi + j, _mm_max_pd(h0, _mm_loadu_pd(hi + j + m)));
			_mm_storeu_pd(lo + j, _mm_min_pd(l0, _mm_loadu_pd(lo + j + m)));
		}
		wv = _mm_max_pd(wv, _mm_unpackhi_pd(wv, wv));
		w = _mm_cvtsd_f64(wv);
		n = lanes_sum(nv);
	}
#endif
	for (; j < both; j++) {
		window_add(hi, lo, j, 1, &w, &n);
		hi[j] = hi[j + m] > hi[j] ? hi[j + m] : hi[j];
		lo[j] = lo[j + m] < lo[j] ? lo[j + m] : lo[j];
	}
	/* Then the windows past the doubling, or the doubling past them. */
	windows(hi, lo, 1, j, nw, &w, &n);
	extremes_double(hi, lo, j, nd, m);
	a->mtie = w;
	a->nw += n;
}

/* The slots of [from, from + n) below @end, as a count. */
static inline size_t part(size_t end, size_t from, size_t n)
{
	return end > from ? min_z(end - from, n) : 0;
}

#define PAIR_BLOCK	4096

/*
 * MTIE of the large octaves m and, with @second, 2m in one pass over
 * the run-long extremes, a[0] and a[1]: octave m's windows and doubling
 * block by block, and 2m's PAIR_BLOCK + 2m + 1 slots behind them, as
 * soon as the extremes over 2m are there, while the cache still holds
 * them.  Apart, the two passes read and wrote the extremes from memory
 * twice.  @more: an octave follows, which needs the extremes doubled
 * once more.  Each block is windows_double()'s own range: the windows
 * and the extremes the same as the whole pass gives them.
 */
static void mtie_pair(double *hi, double *lo, size_t N, size_t m, int second, int more,
		      struct acc *a, int four)
{
	size_t nw1 = N - m, nd1 = second && N >= 2 * m ? N - 2 * m + 1 : 0;
	size_t nw2 = second ? N - 2 * m : 0, nd2 = more && N >= 4 * m ? N - 4 * m + 1 : 0;
	size_t end1 = nw1 > nd1 ? nw1 : nd1, end2 = nw2 > nd2 ? nw2 : nd2, s1, s2 = 0;

	for (s1 = 0; s1 < end1 || s2 < end2; s1 += PAIR_BLOCK) {
		if (s1 < end1)
			windows_double(hi + s1, lo + s1, m, part(nw1, s1, PAIR_BLOCK),
				       part(nd1, s1, PAIR_BLOCK), &a[0], four);
		/* octave 2m where 2m's extremes (level k + 1) are complete */
		for (; s2 < end2 && (s1 + PAIR_BLOCK >= end1 ||
				     s2 + PAIR_BLOCK + 2 * m + 1 <= s1 + PAIR_BLOCK); s2 += PAIR_BLOCK)
			windows_double(hi + s2, lo + s2, 2 * m, part(nw2, s2, PAIR_BLOCK),
				       part(nd2, s2, PAIR_BLOCK), &a[1], four);
	}
}

/*
 * The points out of their sums, k < nk: TOTDEV's terms at the ends, then
 * every deviation; m = ms[k], or with ms NULL the octaves 2^k.
 */
static void points_out(const double *x, size_t N, double tau0_s, const size_t *ms,
		       struct acc *a, size_t nk, struct stab_point *out)
{
	size_t k;

	for (k = 0; k < nk; k++) {
		size_t m = ms ? ms[k] : (size_t)1 << k;
		struct stab_point *p = &out[k];

		memset(p, 0, sizeof(*p));
		p->m = m;
		p->tau_s = (double)m * tau0_s;
		total_edges(x, N, m, &a[k]);
		finish(p, &a[k]);
	}
}

/*
 * MDEV's prefix sums: P[j] the sum of the first j samples less the line
 * through the first and last (line_of()), C[j] how many there were.
 * The gaps into @at (GAPS_MAX(N) room; NULL: not listed).  Returns the
 * gap list for terms() (NULL: not listed, or too many); with no sample
 * at all NULL and g->n 0, with samples g->n SIZE_MAX when not listed.
 */
static struct gaps *prefix_build(const double *x, size_t N, double *P, double *C,
				 uint32_t *at, struct gaps *gs)
{
	double base, slope;
	size_t j, first = line_of(x, N, &base, &slope);
	long double acc = 0;

	gs->at = NULL;
	gs->n = 0;
	if (first == N)
		return NULL;
	P[0] = 0;
	C[0] = 0;
	for (j = 0; j < N; j++) {
		int gap = isnan(x[j]);

		if (!gap)
			acc += x[j] - (base + slope * ((double)j - (double)first));
		else if (at && gs->n < GAPS_MAX(N))
			at[gs->n++] = (uint32_t)j;
		else
			gs->n = SIZE_MAX;	/* not listed, or too many */
		P[j + 1] = (double)acc;
		C[j + 1] = C[j] + !gap;
	}
	if (!at || gs->n == SIZE_MAX) {
		gs->n = SIZE_MAX;
		return NULL;
	}
	gs->at = at;
	return gs;
}

/*
 * The small octaves, m <= SMALL_M, go chunk by chunk: every small octave
 * over CHUNK values of j before the next chunk, so that what they read
 * is still in the cache, and the window extremes doubled in a local copy
 * (CHUNK + 2 SMALL_M + 1 slots: the last doubling still reaches past the
 * chunk).  Done octave by octave over the whole run, the small octaves
 * would read the arrays from memory once each.  The larger octaves go
 * octave by octave: first their terms, MDEV's block means made where
 * they are used (mdev_direct()); then, after the chunks, their MTIE two
 * octaves a pass (mtie_pair()), the extremes doubled in run-long arrays
 * that the chunks leave at level 2 SMALL_M in the memory of P and C
 * (which no chunk reads behind its start): at 10 M slots 160 MB that
 * the kernel would otherwise find and clear, a page at a time, at a
 * cost like the passes themselves.
 */
#define SMALL_M	2048
#define CHUNK	16384

int stab_octaves(const double *x, size_t slots, double tau0_s,
		 struct stab_point *out, size_t max)
{
	return stab_octaves_ext(x, slots, tau0_s, 0, out, max);
}

/*
 * One stab_octaves_ext() run: what it computes and the memory it works
 * in.  The run is these steps in order: octs_plan, octs_alloc,
 * prefix_build, octs_large_terms, octs_chunk over the run, octs_large_mtie,
 * points_out, octs_free.
 */
struct octs {
	const double *x;
	size_t N;
	unsigned what;
	int four;			/* four lanes (wide()) */
	size_t nk, nsmall;		/* octaves; those of m <= SMALL_M */
	int big;			/* octaves above SMALL_M */
	double *P, *C;			/* prefix sums, then the large octaves' extremes */
	double *lh, *ll, *bl;		/* a chunk's extremes and block means */
	uint32_t *at;			/* the gaps (large octaves only) */
	struct gaps gs, *gp;
	struct acc a[STAB_MAX_POINTS];
};

/* Which octaves: 2^k for k < nk, m <= (N - 1) / 3, at most @max. */
static void octs_plan(struct octs *r, const double *x, size_t N, unsigned what, size_t max)
{
	size_t m;

	memset(r, 0, sizeof(*r));
	r->x = x;
	r->N = N;
	r->what = what;
	r->four = !(what & STAB_TWO_LANES) && wide();
	if (max > STAB_MAX_POINTS)
		max = STAB_MAX_POINTS;
	for (m = 1; m <= (N - 1) / 3 && r->nk < max; m *= 2, r->nk++)
		if (m <= SMALL_M)
			r->nsmall++;
	r->big = r->nk > r->nsmall;
}

/* 0, or -1 when some memory could not be had (octs_free() frees the rest). */
static int octs_alloc(struct octs *r)
{
	const size_t N = r->N;

	r->P = malloc((N + 1) * sizeof(*r->P));
	r->C = malloc((N + 1) * sizeof(*r->C));
	r->lh = malloc((CHUNK + 2 * SMALL_M + 1) * sizeof(*r->lh));
	r->ll = malloc((CHUNK + 2 * SMALL_M + 1) * sizeof(*r->ll));
	r->bl = malloc((CHUNK + 2 * SMALL_M + 1) * sizeof(*r->bl));
	if (r->big)
		r->at = malloc(GAPS_MAX(N) * sizeof(*r->at));
	return r->P && r->C && r->lh && r->ll && r->bl && (!r->big || r->at) ? 0 : -1;
}

static void octs_free(struct octs *r)
{
	free(r->P);
	free(r->C);
	free(r->at);
	free(r->lh);
	free(r->ll);
	free(r->bl);
}

/* The large octaves' terms, first: they need all of P and C. */
static void octs_large_terms(struct octs *r)
{
	size_t k, m;

	for (k = r->nsmall, m = (size_t)1 << r->nsmall; k < r->nk; k++, m *= 2) {
		terms(r->x, r->P, r->C, NULL, r->gp, r->N, m, 0, r->N - m, &r->a[k], r->four);
		if (r->what & STAB_HADAMARD)
			hadamard(r->x, r->N, m, 0, r->N - m, &r->a[k]);
	}
}

/*
 * The chunk from @j0: every small octave's terms and MTIE over it, and
 * the extremes at level 2 SMALL_M into @hi and @lo for the large octaves.
 */
static void octs_chunk(struct octs *r, size_t j0, double *hi, double *lo)
{
	const double *x = r->x;
	const size_t N = r->N;
	size_t len = N - j0 < CHUNK + 2 * SMALL_M + 1 ? N - j0 : CHUNK + 2 * SMALL_M + 1;
	size_t j, k, m;

	for (j = 0; j < len; j++) {
		int gap = isnan(x[j0 + j]);

		r->lh[j] = gap ? -INFINITY : x[j0 + j];
		r->ll[j] = gap ? INFINITY : x[j0 + j];
	}
	for (k = 0, m = 1; k < r->nsmall; k++, m *= 2) {
		size_t end = min_z(j0 + CHUNK, N - m);

		/*
		 * The last chunk can start past the last window of a
		 * larger octave (N - m < j0): nothing of that octave
		 * here, but its extremes still double below.
		 */
		if (end > j0) {
			terms(x, r->P, r->C, r->bl, NULL, N, m, j0, end, &r->a[k], r->four);
			if (r->what & STAB_HADAMARD)
				hadamard(x, N, m, j0, end, &r->a[k]);
		}
		windows_double(r->lh, r->ll, m, end > j0 ? end - j0 : 0,
			       len >= 2 * m ? len - 2 * m + 1 : 0, &r->a[k], r->four);
	}
	/* level 2 SMALL_M, for the large octaves */
	if (r->big) {
		memcpy(hi + j0, r->lh, min_z(CHUNK, N - j0) * sizeof(*hi));
		memcpy(lo + j0, r->ll, min_z(CHUNK, N - j0) * sizeof(*lo));
	}
}

/* The large octaves' MTIE, two octaves a pass, from @hi and @lo. */
static void octs_large_mtie(struct octs *r, double *hi, double *lo)
{
	size_t k, m;

	for (k = r->nsmall, m = (size_t)1 << r->nsmall; k < r->nk; k += 2, m *= 4)
		mtie_pair(hi, lo, r->N, m, k + 1 < r->nk, k + 2 < r->nk, &r->a[k], r->four);
}

int stab_octaves_ext(const double *x, size_t slots, double tau0_s, unsigned what,
		     struct stab_point *out, size_t max)
{
	struct octs r;
	double *hi, *lo;
	size_t j0;
	int rc = -1;

	if (slots < 4 || slots > UINT32_MAX - 1)
		return 0;
	octs_plan(&r, x, slots, what, max);
	if (octs_alloc(&r))
		goto out;
	r.gp = prefix_build(x, r.N, r.P, r.C, r.at, &r.gs);
	if (!r.gp && !r.gs.n) {	/* no sample at all */
		rc = 0;
		goto out;
	}
	octs_large_terms(&r);
	/*
	 * The large octaves' extremes in P's and C's memory: a chunk reads
	 * them from its start on, so the slots of the chunks done are free.
	 */
	hi = r.P;
	lo = r.C;
	for (j0 = 0; j0 < r.N; j0 += CHUNK)
		octs_chunk(&r, j0, hi, lo);
	octs_large_mtie(&r, hi, lo);
	points_out(x, r.N, tau0_s, NULL, r.a, r.nk, out);
	rc = (int)r.nk;
out:
	if (rc < 0)
		errno = ENOMEM;
	octs_free(&r);
	return rc;
}

int stab_taus(const double *x, size_t slots, double tau0_s, unsigned what, const size_t *ms,
	      size_t n, struct stab_point *out)
{
	const size_t N = slots;
	double *P = NULL, *C = NULL, *hi, *lo, mt;
	uint32_t *at = NULL;
	struct gaps gs, *gp;
	struct acc *a = NULL;
	size_t j, k, m, nk, w;
	int rc = -1, four = !(what & STAB_TWO_LANES) && wide();
	uint64_t nw;

	if (N < 4 || N > UINT32_MAX - 1)
		return 0;
	for (nk = 0; nk < n && ms[nk] >= 1 && ms[nk] <= (N - 1) / 3 &&
		     (nk == 0 || ms[nk] > ms[nk - 1]); nk++)
		;
	if (!nk)
		return 0;
	a = calloc(nk, sizeof(*a));
	P = malloc((N + 1) * sizeof(*P));
	C = malloc((N + 1) * sizeof(*C));
	at = malloc(GAPS_MAX(N) * sizeof(*at));
	if (!a || !P || !C || !at)
		goto out;
	gp = prefix_build(x, N, P, C, at, &gs);
	if (!gp && !gs.n) {
		rc = 0;
		goto out;
	}
	for (k = 0; k < nk; k++) {
		m = ms[k];
		terms(x, P, C, NULL, gp, N, m, 0, N - m, &a[k], four);
		if (what & STAB_HADAMARD)
			hadamard(x, N, m, 0, N - m, &a[k]);
	}
	/*
	 * MTIE from the extremes over w slots in P's and C's memory, w
	 * doubled (extremes_double()) while 2 w <= m + 1: the window [j, j +
	 * m] is the w slots from j and the w slots that end at j + m.  The
	 * levels go up once for the whole list: O(N log m) for them, O(N) a
	 * tau for the windows.
	 */
	hi = P;
	lo = C;
	for (j = 0; j < N; j++) {
		hi[j] = isnan(x[j]) ? -INFINITY : x[j];
		lo[j] = isnan(x[j]) ? INFINITY : x[j];
	}
	for (k = 0, w = 1; k < nk; k++) {
		m = ms[k];
		for (; 2 * w <= m + 1; w *= 2)
			extremes_double(hi, lo, 0, N - 2 * w + 1, w);
		mt = 0;
		nw = 0;
		windows(hi, lo, m + 1 - w, 0, N - m, &mt, &nw);
		a[k].mtie = mt;
		a[k].nw = nw;
	}
	points_out(x, N, tau0_s, ms, a, nk, out);
	rc = (int)nk;
out:
	if (rc < 0)
		errno = ENOMEM;
	free(a);
	free(P);
	free(C);
	free(at);
	return rc;
}

/* The reflected series of TOTDEV at any index in (-N, 2N - 1). */
static double reflected(const double *x, size_t N, long k)
{
	if (k < 0)
		return 2 * x[0] - x[-k];
	if ((size_t)k >= N)
		return 2 * x[N - 1] - x[2 * (N - 1) - (size_t)k];
	return x[k];
}

void stab_direct(const double *x, size_t slots, double tau0_s, size_t m,
		 struct stab_point *p)
{
	const size_t N = slots;
	double base, slope;
	size_t i, j, first = line_of(x, N, &base, &slope);
	struct acc a;

	memset(p, 0, sizeof(*p));
	memset(&a, 0, sizeof(a));
	p->m = m;
	p->tau_s = (double)m * tau0_s;
	for (j = 0; j + 2 * m < N; j++)
		add_sq(x[j + 2 * m] - 2 * x[j + m] + x[j], &a.sa, &a.na);
	for (j = 0; j + 3 * m < N; j++) {
		double d = x[j + 3 * m] - 3 * x[j + 2 * m] + 3 * x[j + m] - x[j];

		add_sq(d, &a.so, &a.no);
		if (j % m == 0)
			add_sq(d, &a.sh, &a.nh);
	}
	for (i = 1; i + 1 < N && m < N; i++) {
		long c = (long)i, w = (long)m;

		add_sq(reflected(x, N, c - w) - 2 * x[i] + reflected(x, N, c + w), &a.stot, &a.ntot);
	}
	for (j = 0; j + 3 * m <= N; j++) {
		double s = 0;
		int b, keep = 1;

		for (b = 0; b < 3; b++) {
			double sum = 0;
			size_t c = 0;

			for (i = j + (size_t)b * m; i < j + (size_t)(b + 1) * m; i++)
				if (!isnan(x[i])) {
					sum += x[i] - (base + slope * ((double)i - (double)first));
					c++;
				}
			if (2 * c < m || c == 0)
				keep = 0;
			else
				s += (b == 1 ? -2.0 : 1.0) * sum / (double)c * (double)m;
		}
		if (keep) {
			a.sm += s * s;
			a.nm++;
		}
	}
	for (j = 0; j + m < N; j++) {
		double e = x[j + m] - x[j], h = -INFINITY, l = INFINITY;

		add_sq(e, &a.st, &a.nt);
		for (i = j; i <= j + m; i++)
			if (!isnan(x[i])) {
				h = fmax(h, x[i]);
				l = fmin(l, x[i]);
			}
		if (h >= l) {
			a.mtie = fmax(a.mtie, h - l);
			a.nw++;
		}
	}
	finish(p, &a);
}
