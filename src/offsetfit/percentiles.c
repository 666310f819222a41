/* SPDX-License-Identifier: ISC */
/*
 * percentiles.c - offsetfit --percentiles: the distribution of offset and
 * delay (doc/offsetfit.1), as a table or JSON.
 */
#include <math.h>
#include <stdio.h>

#include "opt.h"
#include "offsetfit.h"

/*
 * The distribution of offset and delay: the percentiles ntpviz shows,
 * the 90% and 98% ranges between them, and the moments.  sd is the
 * sample standard deviation (n - 1); skewness is the moment coefficient
 * m3 / m2^(3/2).  The offsets are reordered.
 */
struct dist {
	double q[7];		/* min, 1, 5, 50, 95, 99, max */
	double mean, sd, skew;
};

static void dist_of(double *v, size_t n, struct dist *d)
{
	static const double ps[7] = { 0, 0.01, 0.05, 0.5, 0.95, 0.99, 1 };
	double m2 = 0, m3 = 0;
	size_t i;

	d->mean = 0;
	for (i = 0; i < n; i++)
		d->mean += v[i];
	d->mean /= (double)n;
	for (i = 0; i < n; i++) {
		double e = v[i] - d->mean;

		m2 += e * e;
		m3 += e * e * e;
	}
	d->sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
	m2 /= (double)n;
	m3 /= (double)n;
	d->skew = m2 > 0 ? m3 / pow(m2, 1.5) : 0;
	stats_quantiles(v, n, ps, d->q, 7);
}

int percentiles_print(struct series *s, int json)
{
	static const char *const key[7] = { "min", "p1", "p5", "p50", "p95", "p99", "max" };
	struct dist d[2];
	size_t i;
	int j, k;

	if (!s->n)
		ntpx_die(NTPX_EXIT_FAIL, "no ok records");
	dist_of(s->off, s->n, &d[0]);
	/* The offsets are spent: their array takes the delays. */
	for (i = 0; i < s->n; i++)
		s->off[i] = s->delay[i];
	dist_of(s->off, s->n, &d[1]);
	if (!json)
		printf("#n %zu\n#fields series min_us p1_us p5_us p50_us p95_us p99_us max_us "
		       "range90_us range98_us mean_us sd_us skew\n", s->n);
	else
		printf("{\"n\":%zu", s->n);
	for (j = 0; j < 2; j++) {
		const char *name = j ? "delay" : "offset";

		if (json)
			printf(",\"%s\":{", name);
		else
			printf("%s", name);
		for (k = 0; k < 7; k++)
			if (json)
				printf("%s\"%s_us\":%.3f", k ? "," : "", key[k], d[j].q[k] / 1e3);
			else
				printf(" %.3f", d[j].q[k] / 1e3);
		if (json)
			printf(",\"range90_us\":%.3f,\"range98_us\":%.3f,\"mean_us\":%.3f,"
			       "\"sd_us\":%.3f,\"skew\":%.4f}", (d[j].q[4] - d[j].q[2]) / 1e3,
			       (d[j].q[5] - d[j].q[1]) / 1e3, d[j].mean / 1e3, d[j].sd / 1e3,
			       d[j].skew);
		else
			printf(" %.3f %.3f %.3f %.3f %.4f\n", (d[j].q[4] - d[j].q[2]) / 1e3,
			       (d[j].q[5] - d[j].q[1]) / 1e3, d[j].mean / 1e3, d[j].sd / 1e3,
			       d[j].skew);
	}
	if (json)
		printf("}\n");
	return NTPX_EXIT_OK;
}
