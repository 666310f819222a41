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

void layers_print(const struct input *in, double *v, double *w, double *t)
{
	double var[NLAYERS];
	int have_layer[NLAYERS] = { 0 };
	size_t i, k, n;

	printf("%-16s %7s %10s %10s %10s %10s %10s\n", "#layer", "n", "offset_us", "delay_us",
	       "rms_us", "p99.9_us", "jitter_us");
	for (k = 0; k < NLAYERS; k++) {
		const struct layer *l = &layers[k];
		struct linfit fit;
		double off_med, del_med, rms, p999, j;

		for (i = n = 0; i < in->n; i++) {
			const int64_t *x = in->x[i];
			int64_t tt[4];
			int m;

			for (m = 0; m < 4; m++)
				tt[m] = x[l->t[m]];
			if (tt[0] == NONE || tt[1] == NONE || tt[2] == NONE || tt[3] == NONE)
				continue;
			t[n] = (double)(int64_t)((uint64_t)x[S_T1] - (uint64_t)in->x[0][S_T1]) / 1e9;
			v[n] = (double)record_off2(tt) / 2;
			w[n] = (double)record_delay(tt);
			n++;
		}
		if (n < 3)
			continue;
		j = jitter(v, n);
		if (stats_linfit(t, v, n, &fit))
			continue;
		for (i = 0; i < n; i++)
			t[i] = v[i] - (fit.a + fit.b * t[i]);
		rms = stats_rms(t, n);
		for (i = 0; i < n; i++)
			t[i] = fabs(t[i]);
		p999 = stats_quantile(t, n, 0.999);
		off_med = stats_quantile(v, n, 0.5);
		del_med = stats_quantile(w, n, 0.5);
		printf("%-16s %7zu", l->name, n);
		print_us(off_med);
		print_us(del_med);
		print_us(rms);
		print_us(p999);
		print_us(j);
		printf("\n");
		have_layer[k] = 1;
		var[k] = rms * rms;
	}
	/* The answer: how much of the user layer's offset noise the stacks add. */
	for (k = 1; k < NLAYERS; k++) {
		if (!have_layer[0] || !have_layer[k] || var[0] <= 0)
			continue;
		printf("host_share_%s_pct %.1f\n", layers[k].name,
		       100 * (var[0] - var[k]) / var[0]);
	}
}
