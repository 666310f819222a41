/* SPDX-License-Identifier: ISC */
/*
 * output.c - offsetfit's plain outputs, lines for gnuplot: the residuals
 * over time (--residuals) and a distribution (--cdf); and the end of every
 * output (lib/out.h: a write error is exit 1, a closed pipe a quiet 0).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "opt.h"
#include "out.h"
#include "offsetfit.h"

/* The exit status once the output is written (lib/out.h). */
int output_finish(void)
{
	return out_exit_code(out_flush(stdout, STDOUT_NAME));
}

/* A line that could not be written ends the output at once. */
static int print_cdf(double *v, size_t n)
{
	size_t i;

	stats_sort(v, n);
	if (printf("#fields value_us fraction\n") < 0)
		return out_exit_code(out_failed(STDOUT_NAME, errno));
	for (i = 0; i < n; i++)
		if (printf("%.3f %.6f\n", v[i] / 1e3, (double)(i + 1) / (double)n) < 0)
			return out_exit_code(out_failed(STDOUT_NAME, errno));
	return output_finish();
}

/* --cdf rtt: the offsets' array takes the delays. */
int output_cdf_rtt(struct series *s)
{
	size_t i;

	if (!s->n)
		ntpx_die(NTPX_EXIT_FAIL, "no ok records");
	for (i = 0; i < s->n; i++)
		s->off[i] = s->delay[i];
	return print_cdf(s->off, s->n);
}

/* --cdf residual: |residual| replaces t. */
int output_cdf_residual(struct series *s, const struct linfit *fit)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->t[i] = fabs(s->off[i] - (fit->a + fit->b * s->t[i]));
	return print_cdf(s->t, s->n);
}

int output_residuals(const struct series *s, const struct linfit *fit)
{
	size_t i;

	if (printf("#fields t resid_us delay_us\n") < 0)
		return out_exit_code(out_failed(STDOUT_NAME, errno));
	for (i = 0; i < s->n; i++)
		if (printf("%.9f %.3f %.3f\n", s->t[i],
			   (s->off[i] - (fit->a + fit->b * s->t[i])) / 1e3,
			   s->delay[i] / 1e3) < 0)
			return out_exit_code(out_failed(STDOUT_NAME, errno));
	return output_finish();
}
