/* SPDX-License-Identifier: ISC */
/*
 * offsetfit - fits offset(t) = a + b t to the ok exchanges of a record
 * stream and summarises what is left: drift, residuals, round-trip time.
 *
 * This file is the wiring: the options (options.c), the inputs (input.c,
 * through lib/exchange.c), the fit, then one output: the summary
 * (summary.c), the residuals or a CDF (output.c), --percentiles
 * (percentiles.c) or --stability (stability.c).  offsetfit.h is what they
 * share; doc/offsetfit.1 documents every output.
 */
#include <stdio.h>

#include "opt.h"
#include "out.h"
#include "offsetfit.h"

/* File scope: the arrays stay reachable until exit, which frees them. */
static struct series in;

static int read_input(int fd, const char *name, void *arg)
{
	return series_read(fd, name, arg);
}

/* What is asked of the records read; the exit status. */
static int report(const struct fit_config *cfg)
{
	struct linfit fit;

	if (cfg->mode == M_CHECK) {
		printf("checked %llu\n", (unsigned long long)in.checked);
		return output_finish();
	}
	/* Across a step no line fits: the last segment is the clock now.
	   The summary says so in its own lines; the other outputs here. */
	if (cfg->across_steps)
		in.steps = 0;
	else
		series_last_segment(&in);
	if (in.steps && cfg->mode != M_SUMMARY)
		ntpx_err("%u step%s in the records (a #reset, or a jump their delays cannot "
			 "explain): the last %zu ok records, after the last, are used",
			 in.steps, in.steps == 1 ? "" : "s", in.n);
	switch (cfg->mode) {
	case M_CDF_RTT:
		return output_cdf_rtt(&in);
	case M_PERCENTILES:
		return percentiles_print(&in, cfg->json);
	default:
		break;
	}
	if (in.n < 2)
		ntpx_die(NTPX_EXIT_FAIL, "%zu ok records: a fit needs at least 2", in.n);
	if (stats_linfit(in.t, in.off, in.n, &fit))
		ntpx_die(NTPX_EXIT_FAIL, "all ok records have the same T1: nothing to fit");
	switch (cfg->mode) {
	case M_RESIDUALS:
		return output_residuals(&in, &fit);
	case M_CDF_RESID:
		return output_cdf_residual(&in, &fit);
	case M_STABILITY:
		return stability_print(&in, &fit, cfg->series, cfg->tau0_s, cfg->json, &cfg->stab);
	default:
		return summary_print(&in, &fit, cfg->json);
	}
}

int main(int argc, char **argv)
{
	struct fit_config cfg;
	int i, rc;

	opt_init(argv);
	out_init();
	i = fit_options(argc, argv, &cfg);
	record_sigint_ends_input();
	if (opt_inputs(argc, argv, i, read_input, &in))
		return NTPX_EXIT_FAIL;
	rc = report(&cfg);
	/* Everything went well but a line was dropped: say so. */
	return rc == NTPX_EXIT_OK && in.cut ? NTPX_EXIT_CUT : rc;
}
