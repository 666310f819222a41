/* SPDX-License-Identifier: ISC */
/*
 * layers.c - the offset noise by layer: for each of user (t1..t4), kernel
 * (t1k t2k t3k t4k) and hardware (t1h..t4h) stamps, the offset (off2 / 2)
 * is fitted with a line over time (the clocks' drift, as offsetfit does)
 * and the residuals summarised.  If the host stacks' noise is independent
 * of the path's, the user layer's residual variance is the kernel layer's
 * plus the stacks': host_share is that difference as a share of the whole.
 */
#include <math.h>
#include <stdio.h>

#include "record.h"
#include "stats.h"
#include "ntpstages.h"
#include "util_private.h"

/* The layers whose four stamps give an offset and a delay. */
static const struct layer {
	const char *name;
	enum st t[4];
} layers[] = {
	{ "user", { S_T1, S_T2, S_T3, S_T4 } },
	{ "kernel", { S_T1K, S_T2K, S_T3K, S_T4K } },
	{ "hardware", { S_T1H, S_T2H, S_T3H, S_T4H } },
};

#define NLAYERS	ARRAY_SIZE(layers)

size_t layer_count(void)
{
	return NLAYERS;
}

const char *layer_name(size_t k)
{
	return layers[k].name;
}

/* Layer @k's offset and delay medians and its residuals; -1 with fewer
   than three exchanges that have its four stamps. */
int layer_stats(const struct input *in, size_t k, double *v, double *w, double *t,
		struct layer_figures *f)
{
	const struct layer *l = &layers[k];
	struct linfit fit;
	size_t i, n;

	for (i = n = 0; i < in->n; i++) {
		const int64_t *x = in->x[i];
		int64_t tt[4];
		int m;

		for (m = 0; m < 4; m++)
			tt[m] = x[l->t[m]];
		if (tt[0] == NONE || tt[1] == NONE || tt[2] == NONE || tt[3] == NONE)
			continue;
		t[n] = ntpx_ns_to_sec((double)(int64_t)((uint64_t)x[S_T1] - (uint64_t)in->x[0][S_T1]));
		v[n] = (double)record_off2(tt) / 2;
		w[n] = (double)record_delay(tt);
		n++;
	}
	f->n = n;
	if (n < 3)
		return -1;
	f->jitter = jitter(v, n);
	if (stats_linfit(t, v, n, &fit))
		return -1;
	for (i = 0; i < n; i++)
		t[i] = v[i] - (fit.a + fit.b * t[i]);
	f->rms = stats_rms(t, n);
	for (i = 0; i < n; i++)
		t[i] = fabs(t[i]);
	f->p999 = stats_quantile(t, n, 0.999);
	f->offset = stats_quantile(v, n, 0.5);
	f->delay = stats_quantile(w, n, 0.5);
	return 0;
}

/* The user layer's residual variance less layer @k's, as a share of it;
   NAN where either is missing. */
double layer_host_share(const struct layer_figures *user, const struct layer_figures *f)
{
	double vu = user->rms * user->rms;

	if (vu <= 0)
		return NAN;
	return (vu - f->rms * f->rms) / vu;
}

void layers_print(const struct input *in, double *v, double *w, double *t)
{
	struct layer_figures f[NLAYERS];
	int have_layer[NLAYERS] = { 0 };
	size_t k;

	printf("%-16s %7s %10s %10s %10s %10s %10s\n", "#layer", "n", "offset_us", "delay_us",
	       "rms_us", "p99.9_us", "jitter_us");
	for (k = 0; k < NLAYERS; k++) {
		if (layer_stats(in, k, v, w, t, &f[k]))
			continue;
		printf("%-16s %7zu", layers[k].name, f[k].n);
		print_us(f[k].offset);
		print_us(f[k].delay);
		print_us(f[k].rms);
		print_us(f[k].p999);
		print_us(f[k].jitter);
		printf("\n");
		have_layer[k] = 1;
	}
	/* The answer: how much of the user layer's offset noise the stacks add. */
	for (k = 1; k < NLAYERS; k++) {
		if (!have_layer[0] || !have_layer[k] || !isfinite(layer_host_share(&f[0], &f[k])))
			continue;
		printf("host_share_%s_pct %.1f\n", layers[k].name,
		       100 * layer_host_share(&f[0], &f[k]));
	}
}
