/* SPDX-License-Identifier: ISC */
/*
 * stability_ci.c - how sure a deviation is: the dominant power-law noise
 * at a tau, the equivalent degrees of freedom of each estimator for it,
 * and the chi-squared interval they give.
 *
 *   - Noise identification as Riley and Greenhall define it ("Power law
 *     noise identification using the lag 1 autocorrelation", EFTF 2004;
 *     SP 1065 sec. 5.6), which Stable32 and allantools follow: the phase
 *     decimated to tau, less its quadratic, differenced until its lag-1
 *     autocorrelation says it is stationary, the estimate rounded; with
 *     fewer than 30 samples, Barnes' B1 ratio (N-sample over Allan
 *     variance) and, where B1 says PM, the ratio R(n) of modified to
 *     Allan variance between white and flicker PM (SP 1065 sec. 5.6).
 *   - EDF: Greenhall and Riley's algorithm ("Uncertainty of stability
 *     variances based on finite differences", PTTI 2003; SP 1065 sec.
 *     5.4.1) for ADEV, MDEV/TDEV, HDEV and OHDEV; for TOTDEV, SP 1065
 *     sec. 5.2.11's b T/tau - c, and the overlapping ADEV's plus 2 for PM.
 *   - The interval: var edf / chi2(p, edf), SP 1065 eq. (45), with the
 *     chi-squared quantile from the regularised incomplete gamma
 *     function.
 */
#include <math.h>
#include <stddef.h>

#include "stability.h"

/* --- the chi-squared distribution --------------------------------------- */

/* P(a, x), the regularised lower incomplete gamma function. */
static double gamma_p(double a, double x)
{
	double lg = lgamma(a), s, t, b, c, d, h;
	int n;

	if (x <= 0)
		return 0;
	if (x < a + 1) {	/* the series */
		s = t = 1 / a;
		for (n = 1; n < 100000; n++) {
			t *= x / (a + n);
			s += t;
			if (fabs(t) < fabs(s) * 1e-15)
				break;
		}
		return s * exp(-x + a * log(x) - lg);
	}
	/* the continued fraction for Q = 1 - P (modified Lentz) */
	b = x + 1 - a;
	c = 1 / 1e-300;
	d = 1 / b;
	h = d;
	for (n = 1; n < 100000; n++) {
		double an = -n * (n - a), del;

		b += 2;
		d = an * d + b;
		if (fabs(d) < 1e-300)
			d = 1e-300;
		c = b + an / c;
		if (fabs(c) < 1e-300)
			c = 1e-300;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return 1 - exp(-x + a * log(x) - lg) * h;
}

double stab_chi2_cdf(double x, double df)
{
	return gamma_p(df / 2, x / 2);
}

double stab_chi2_quantile(double p, double df)
{
	double lo, hi;
	int i;

	if (!(p > 0 && p < 1 && df > 0))
		return NAN;
	/* bisection on a bracket grown from the mean */
	hi = lo = df;
	while (stab_chi2_cdf(hi, df) < p)
		hi *= 2;
	while (lo > 1e-300 && stab_chi2_cdf(lo, df) > p)
		lo /= 2;
	for (i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = 0.5 * (lo + hi);

		if (stab_chi2_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

void stab_interval(double dev, double edf, double conf, double *lo, double *hi)
{
	double tail = (1 - conf) / 2;

	*lo = *hi = NAN;
	if (!(edf > 0) || isnan(dev) || !(conf > 0 && conf < 1))
		return;
	*lo = dev * sqrt(edf / stab_chi2_quantile(1 - tail, edf));
	*hi = dev * sqrt(edf / stab_chi2_quantile(tail, edf));
}

/* --- equivalent degrees of freedom (Greenhall and Riley) ---------------- */

/* sw(t): the generalised autocovariance of the noise of exponent @a. */
static double sw(double t, int a)
{
	double u = fabs(t);

	switch (a) {
	case 2: return -u;
	case 1: return u > 0 ? t * t * log(u) : 0;
	case 0: return u * u * u;
	case -1: return u > 0 ? -t * t * t * t * log(u) : 0;
	case -2: return -u * u * u * u * u;
	case -3: return u > 0 ? pow(t, 6) * log(u) : 0;
	default: return pow(u, 7);
	}
}

/*
 * sx(t): sw through the averaging filter of 1/F (F = INFINITY: the
 * continuous limit, sw of a + 2).
 */
static double sx(double t, double F, int a)
{
	if (isinf(F))
		return sw(t, a + 2);
	return F * F * (2 * sw(t, a) - sw(t - 1 / F, a) - sw(t + 1 / F, a));
}

/* sz(t): sx through the 2d-th central difference (binomial weights). */
static double sz(double t, double F, int a, int d)
{
	static const double w[4][4] = {
		{ 0 }, { 2, -1 }, { 6, -4, 1 }, { 20, -15, 6, -1 },
	};
	double s = w[d][0] * sx(t, F, a);
	int k;

	for (k = 1; k <= d; k++)
		s += w[d][k] * (sx(t - k, F, a) + sx(t + k, F, a));
	return s;
}

/*
 * The basic sum sz(0)^2 + 2 sum_{j<J} (1 - j/M) sz(j/S)^2 + (1 - J/M)
 * sz(J/S)^2.  With white PM and F = S, sz(j/S) is 0 but at multiples of
 * S: only those are visited.
 */
static double basic_sum(double J, double M, double S, double F, int a, int d)
{
	double s, j, step = a == 2 && F == S ? S : 1;

	s = pow(sz(0, F, a, d), 2) + (1 - J / M) * pow(sz(J / S, F, a, d), 2);
	for (j = step; j < J; j += step)
		s += 2 * (1 - j / M) * pow(sz(j / S, F, a, d), 2);
	return s;
}

/* Greenhall's tables 1-3: rows alpha 2..-2, columns d = 1..3 (a0, a1). */
static const double tab1[5][3][2] = {
	{ { 2. / 3, 1. / 3 }, { 7. / 9, 1. / 2 }, { 22. / 25, 2. / 3 } },
	{ { 0.840, 0.345 }, { 0.997, 0.616 }, { 1.141, 0.843 } },
	{ { 1.079, 0.368 }, { 1.033, 0.607 }, { 1.184, 0.848 } },
	{ { 0, 0 }, { 1.048, 0.534 }, { 1.180, 0.816 } },
	{ { 0, 0 }, { 1.302, 0.535 }, { 1.175, 0.777 } },
};
static const double tab2[5][3][2] = {
	{ { 3. / 2, 1. / 2 }, { 35. / 18, 1 }, { 231. / 100, 3. / 2 } },
	{ { 78.6, 25.2 }, { 790, 410 }, { 9950, 6520 } },
	{ { 2. / 3, 1. / 6 }, { 2. / 3, 1. / 3 }, { 7. / 9, 1. / 2 } },
	{ { 0, 0 }, { 0.852, 0.375 }, { 0.997, 0.617 } },
	{ { 0, 0 }, { 1.079, 0.368 }, { 1.033, 0.607 } },
};
static const double tab3[3][2] = { { 6, 4 }, { 15.23, 12 }, { 47.8, 40 } };

#define JMAX	100.0

static double edf_greenhall(int a, int d, double m, double N, int overlapping, int modified)
{
	double F = modified ? 1 : m, S = overlapping ? m : 1;
	double L = m / F + m * d, M, J, r, inv, mp, b;
	const double *t;

	if (N < L || a + 2 * d <= 1 || a > 2 || a < -2)
		return NAN;
	M = 1 + floor(S * (N - L) / m);
	J = fmin(M, (d + 1) * S);
	r = M / S;
	if (modified) {
		t = tab1[2 - a][d - 1];
		if (J <= JMAX)
			inv = basic_sum(J, M, S, 1, a, d) / (M * pow(sz(0, 1, a, d), 2));
		else if (r > d + 1)
			inv = (t[0] - t[1] / r) / r;
		else
			inv = basic_sum(JMAX, JMAX, JMAX / r, 1, a, d) /
			      (JMAX * pow(sz(0, 1, a, d), 2));
	} else if (a <= 0) {
		t = tab2[2 - a][d - 1];
		if (J <= JMAX) {
			mp = m * (d + 1) <= JMAX ? m : INFINITY;
			inv = basic_sum(J, M, S, mp, a, d) / (M * pow(sz(0, mp, a, d), 2));
		} else if (r > d + 1) {
			inv = (t[0] - t[1] / r) / r;
		} else {
			inv = basic_sum(JMAX, JMAX, JMAX / r, INFINITY, a, d) /
			      (JMAX * pow(sz(0, INFINITY, a, d), 2));
		}
	} else if (a == 1) {
		t = tab2[1][d - 1];
		b = tab3[d - 1][0] + tab3[d - 1][1] * log(m);
		if (J <= JMAX)
			inv = basic_sum(J, M, S, m, 1, d) / (M * pow(sz(0, m, 1, d), 2));
		else if (r > d + 1)
			inv = (t[0] - t[1] / r) / (b * b * r);
		else
			inv = basic_sum(JMAX, JMAX, JMAX / r, JMAX / r, 1, d) / (JMAX * b * b);
	} else {	/* white PM, unmodified */
		double a0, a1 = d / 2.0;

		if (ceil(r) <= d) {
			/* few terms: the sum itself (F = S = m visits J / m terms) */
			inv = basic_sum(J, M, S, m, 2, d) / (M * pow(sz(0, m, 2, d), 2));
		} else {
			/* binomial(4d, 2d) / binomial(2d, d)^2 */
			a0 = d == 1 ? 6. / 4 : d == 2 ? 70. / 36 : 924. / 400;
			inv = (a0 - a1 / r) / M;
		}
	}
	return inv > 0 ? 1 / inv : NAN;
}

/*
 * TOTVAR's edf (SP 1065 sec. 5.2.11): b T/tau - c for white, flicker and
 * random-walk FM, with b and c to three decimals as that section gives
 * them (its Table 7 rounds them to two; Stable32's intervals are the
 * three-decimal ones, tests/unit/stability.c); for white and flicker PM
 * the overlapping ADEV's with 2 degrees of freedom more.
 */
static double edf_total(int a, double m, double N)
{
	static const double bc[3][2] = { { 1.500, 0 }, { 1.168, 0.222 }, { 0.927, 0.358 } };
	double e;

	if (a > 0)
		return edf_greenhall(a, 2, m, N, 1, 0) + 2;
	if (a < -2 || N < 3 * m)
		return NAN;
	e = bc[-a][0] * N / m - bc[-a][1];
	return e > 0 ? e : NAN;
}

double stab_edf(enum stab_dev dev, int alpha, size_t m, double n)
{
	double dm = (double)m;

	switch (dev) {
	case STAB_DEV_ADEV: return edf_greenhall(alpha, 2, dm, n, 1, 0);
	case STAB_DEV_MDEV: case STAB_DEV_TDEV: return edf_greenhall(alpha, 2, dm, n, 1, 1);
	case STAB_DEV_HDEV: return edf_greenhall(alpha, 3, dm, n, 0, 0);
	case STAB_DEV_OHDEV: return edf_greenhall(alpha, 3, dm, n, 1, 0);
	case STAB_DEV_TOTDEV: return edf_total(alpha, dm, n);
	case STAB_NDEV: break;
	}
	return NAN;
}

/* --- noise identification ------------------------------------------------ */

/*
 * The phase decimated to tau, every m-th sample x[k m], k < n, less its
 * least-squares quadratic (frequency offset and drift): Riley and
 * Greenhall's preprocessing of phase data at averaging factor m, which
 * SP 1065 sec. 5.6 and allantools follow.
 */
struct decim {
	const double *x;
	size_t m, n;		/* samples x[k m], k < n */
	double c0, c1, c2, mid, scale;
};

static inline double decim_at(const struct decim *q, size_t k)
{
	double u = ((double)k - q->mid) * q->scale;

	return q->x[k * q->m] - (q->c0 + u * (q->c1 + u * q->c2));
}

/* Fits the quadratic over the samples present; the number present. */
static size_t decim_fit(struct decim *q)
{
	long double s[5] = { 0 }, r[3] = { 0 };
	double A[3][4], f;
	size_t k, used = 0;
	int i, j, p;

	q->mid = (double)(q->n - 1) / 2;
	q->scale = q->n > 1 ? 2 / (double)(q->n - 1) : 1;
	q->c0 = q->c1 = q->c2 = 0;
	for (k = 0; k < q->n; k++) {
		double v = q->x[k * q->m], u = ((double)k - q->mid) * q->scale;

		if (isnan(v))
			continue;
		used++;
		s[0] += 1; s[1] += u; s[2] += u * u; s[3] += u * u * u; s[4] += u * u * u * u;
		r[0] += v; r[1] += v * u; r[2] += v * u * u;
	}
	if (used < 3)
		return used;
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 3; j++)
			A[i][j] = (double)s[i + j];
		A[i][3] = (double)r[i];
	}
	/* Gaussian elimination: the matrix is positive definite */
	for (p = 0; p < 3; p++)
		for (i = p + 1; i < 3; i++) {
			f = A[i][p] / A[p][p];
			for (j = p; j < 4; j++)
				A[i][j] -= f * A[p][j];
		}
	q->c2 = A[2][3] / A[2][2];
	q->c1 = (A[1][3] - A[1][2] * q->c2) / A[1][1];
	q->c0 = (A[0][3] - A[0][1] * q->c1 - A[0][2] * q->c2) / A[0][0];
	return used;
}

/* The d-th difference of the detrended series at k (NAN through a gap). */
static inline double decim_diff(const struct decim *q, size_t k, int d)
{
	switch (d) {
	case 0: return decim_at(q, k);
	case 1: return decim_at(q, k + 1) - decim_at(q, k);
	default: return decim_at(q, k + 2) - 2 * decim_at(q, k + 1) + decim_at(q, k);
	}
}

/* The lag-1 autocorrelation of the d-th difference (Riley and Greenhall eq. (2)). */
static double lag1(const struct decim *q, int d)
{
	size_t k, n = q->n - (size_t)d, c = 0;
	double mean = 0, num = 0, den = 0, prev = NAN;

	for (k = 0; k < n; k++) {
		double z = decim_diff(q, k, d);

		if (!isnan(z)) {
			mean += z;
			c++;
		}
	}
	if (c < 2)
		return NAN;
	mean /= (double)c;
	for (k = 0; k < n; k++) {
		double z = decim_diff(q, k, d) - mean;

		if (isnan(z)) {
			prev = NAN;
			continue;
		}
		den += z * z;
		if (!isnan(prev))
			num += prev * z;
		prev = z;
	}
	return den > 0 ? num / den : NAN;
}

/* B1 of N averages for the exponent mu of tau in the Allan variance (Barnes). */
static double b1_theory(double N, int mu)
{
	if (mu == 0)
		return N * log(N) / (2 * (N - 1) * log(2));
	return N * (1 - pow(N, mu)) / (2 * (N - 1) * (1 - pow(2, mu)));
}

/* R(n) = MVAR / AVAR for white PM (alpha 2) and flicker PM (1), f_h = 1 / (2 tau0). */
static double rn_theory(double m, int a)
{
	if (a == 2)
		return 1 / m;
	return (3 * log(256. / 27) / (8 * M_PI * M_PI)) /
	       ((1.038 + 3 * log(M_PI * m)) / (4 * M_PI * M_PI));
}

/* White (2) or flicker (1) PM by R(n) = MVAR / AVAR against the geometric mean of their values. */
static int pm_by_rn(size_t m, double adev, double mdev)
{
	double bound = sqrt(rn_theory((double)m, 2) * rn_theory((double)m, 1));

	return (mdev * mdev) / (adev * adev) > bound ? 1 : 2;
}

/*
 * B1 = the N-sample variance of the tau averages over the Allan variance,
 * against Barnes' B1(N, mu) for tau^mu: alpha 0, -1 or -2, or 2 for
 * either PM noise (mu = -2); STAB_NO_ALPHA without three averages.
 */
static int by_b1(const double *x, size_t n, double tau0_s, size_t m, double adev)
{
	double mean = 0, ss = 0, c = 0, b1, tau = (double)m * tau0_s;
	size_t k;
	int mu, pick = -2;

	for (k = 0; k + 1 < n; k++) {
		double y = x[(k + 1) * m] - x[k * m], dlt;

		if (isnan(y))
			continue;
		c++;
		dlt = y - mean;
		mean += dlt / c;
		ss += dlt * (y - mean);
	}
	if (c < 3 || !(adev > 0))
		return STAB_NO_ALPHA;
	/* the phase steps are ns over tau: the frequencies times 1e9 tau */
	b1 = ss / (c - 1) * 1e-18 / (tau * tau) / (adev * adev);
	for (mu = -1; mu <= 1; mu++)
		if (b1 > sqrt(b1_theory(c, mu) * b1_theory(c, mu - 1)))
			pick = mu;
	return pick > -2 ? -1 - pick : 2;	/* mu -1, 0, 1: alpha 0, -1, -2 */
}

/*
 * The lag-1 estimate (Riley and Greenhall eq. (2) to (4)): the phase
 * differenced d = 0, 1, 2 times until delta = r1 / (1 + r1) falls below
 * 0.25 (stationary), then alpha = 2 - 2 d - round(2 delta).  r1 at -1
 * (a sawtooth) sends delta to minus infinity: as white as the method
 * can say, 2 after the clamp to the five noises.
 */
static int by_lag1(const struct decim *q)
{
	int d;

	for (d = 0; d <= 2; d++) {
		double r1 = lag1(q, d), delta;

		if (isnan(r1))
			return STAB_NO_ALPHA;
		delta = r1 > -1 + 1e-9 ? r1 / (1 + r1) : -1e9;
		if (delta < 0.25 || d == 2) {
			long a = 2 - 2 * d - lround(2 * fmax(delta, -4));

			return a > 2 ? 2 : a < -2 ? -2 : (int)a;
		}
	}
	return STAB_NO_ALPHA;
}

int stab_noise_id(const double *x, size_t slots, double tau0_s, size_t m, double adev,
		  double mdev, int *how)
{
	struct decim q = { .x = x, .m = m, .n = m ? (slots - 1) / m + 1 : 0 };
	int a;

	*how = STAB_ID_NONE;
	if (!m || slots < 2)
		return STAB_NO_ALPHA;
	if (q.n >= STAB_LAG1_MIN && decim_fit(&q) >= STAB_LAG1_MIN) {
		a = by_lag1(&q);
		if (a != STAB_NO_ALPHA) {
			*how = STAB_ID_LAG1;
			return a;
		}
	}
	/* Too few samples for the lag-1 method: B1, and R(n) between the PM noises. */
	a = by_b1(x, q.n, tau0_s, m, adev);
	if (a == STAB_NO_ALPHA)
		return a;
	*how = STAB_ID_B1;
	if (a == 2 && !isnan(mdev) && adev > 0)
		a = pm_by_rn(m, adev, mdev);
	return a;
}
