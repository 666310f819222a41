/* SPDX-License-Identifier: ISC */
/*
 * options.c - offsetfit's command line into a struct fit_config
 * (offsetfit.h): one output, and what goes with it; a bad or clashing
 * option is one line and exit 2.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"
#include "offsetfit.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] [FILE...]\n"
	       "Fit offset(t) = a + b*t by least squares over the ok records of FILEs\n"
	       "(standard input by default) and print a summary as 'key value' lines.\n\n"
	       "      --json            the summary as one JSON object\n"
	       "      --openmetrics     the summary in the Prometheus text format (for\n"
	       "                        node_exporter's textfile collector)\n"
	       "      --residuals       one line per ok record: t (s), residual (us), delay (us)\n"
	       "      --cdf rtt|residual  value (us) and cumulative fraction, for gnuplot\n"
	       "      --check           verify every record's delay/off2 arithmetic and\n"
	       "                        print how many were checked\n"
	       "      --stability       ADEV, MDEV, TDEV, MTIE, TIE-RMS per octave of tau\n"
	       "      --series LIST     --stability's series: offset,residual,error\n"
	       "                        (default: each the input has)\n"
	       "      --tau0 DUR        the nominal interval (default: the median spacing)\n"
	       "      --percentiles     distribution of offset and delay\n"
	       "                        (--json: as JSON, with --stability too)\n"
	       "  -h, --help            this help\n"
	       "      --version         print the version\n", ntpx_prog);
}

/* Returns the index of the first input in @argv. */
int fit_options(int argc, char **argv, struct fit_config *cfg)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "openmetrics", no_argument, NULL, 'O' },
		{ "residuals", no_argument, NULL, 'r' },
		{ "cdf", required_argument, NULL, 'C' },
		{ "check", no_argument, NULL, 'k' },
		{ "stability", no_argument, NULL, 'S' },
		{ "series", required_argument, NULL, 's' },
		{ "tau0", required_argument, NULL, 'T' },
		{ "percentiles", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	enum fit_mode mode = M_SUMMARY, m;
	unsigned series = 0;
	int64_t tau0_ns = 0;
	int c, json = 0, om = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			continue;
		case 'O':
			om = 1;
			continue;
		case 's':
			if (stability_series_parse(optarg, &series))
				opt_usage_error("bad --series '%s' (offset, residual, error)", optarg);
			continue;
		case 'T':
			if (opt_duration(optarg, 0, &tau0_ns) || tau0_ns <= 0)
				opt_usage_error("bad --tau0 '%s'", optarg);
			continue;
		case 'C':
			if (strcmp(optarg, "rtt") && strcmp(optarg, "residual"))
				opt_usage_error("bad --cdf '%s' (rtt or residual)", optarg);
			m = strcmp(optarg, "rtt") == 0 ? M_CDF_RTT : M_CDF_RESID;
			break;
		case 'r': m = M_RESIDUALS; break;
		case 'k': m = M_CHECK; break;
		case 'S': m = M_STABILITY; break;
		case 'P': m = M_PERCENTILES; break;
		default: opt_other(c, usage);
		}
		if (mode != M_SUMMARY && mode != m)
			opt_usage_error("--residuals, --cdf, --check, --stability and --percentiles "
					"exclude each other");
		mode = m;
	}
	if (json && mode != M_SUMMARY && mode != M_STABILITY && mode != M_PERCENTILES)
		opt_usage_error("--json goes with the summary, --stability or --percentiles");
	if (om && (json || mode != M_SUMMARY))
		opt_usage_error("--openmetrics goes with the summary alone");
	if ((series || tau0_ns) && mode != M_STABILITY)
		opt_usage_error("--series and --tau0 go with --stability");
	cfg->mode = mode;
	cfg->json = om ? SUMMARY_OPENMETRICS : json;
	cfg->series = series;
	cfg->tau0_s = (double)tau0_ns * 1e-9;
	return optind;
}
