/* SPDX-License-Identifier: ISC */
/*
 * options.c - offsetfit's command line into a struct fit_config
 * (offsetfit.h): one output, and what goes with it; a bad or clashing
 * option is one line and exit 2.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "offsetfit.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] [FILE...]\n"
	       "Fit offset(t) = a + b*t by least squares over the ok records of FILEs\n"
	       "(standard input by default) and print a summary as 'key value' lines.\n"
	       "At a step (a #reset line, or a jump in offset that the records' own\n"
	       "delays cannot explain) the series is cut and its last segment used.\n\n"
	       "      --across-steps    use every ok record, across steps\n"
	       "      --json            the summary as one JSON object\n"
	       "      --openmetrics     the summary in the Prometheus text format (for\n"
	       "                        node_exporter's textfile collector)\n"
	       "      --residuals       one line per ok record: t (s), residual (us), delay (us)\n"
	       "      --cdf rtt|residual  value (us) and cumulative fraction, for gnuplot\n"
	       "      --check           verify every record's delay/off2 arithmetic and\n"
	       "                        print how many were checked\n"
	       "      --stability       ADEV, MDEV, TDEV, MTIE, TIE-RMS per tau (--taus)\n"
	       "      --series LIST     --stability's series: offset,residual,error\n"
	       "                        (default: each the input has)\n"
	       "      --tau0 DUR        the nominal interval (default: the median spacing)\n"
	       "      --dev LIST        --stability's columns: adev,mdev,tdev,mtie,tie_rms,\n"
	       "                        hdev,ohdev,totdev,alpha (default: the first five)\n"
	       "      --ci [P]          intervals of confidence P (default 0.683, 1 sigma),\n"
	       "                        their EDF and the noise (alpha) at each tau\n"
	       "      --taus GRID       octave (default), decade (1, 2, 4, 10, 20, 40 ...\n"
	       "                        times tau0), all (every multiple of tau0) or a\n"
	       "                        list of durations, e.g. 1s,10s,100s\n"
	       "      --max-tau DUR     the longest tau (default: a third of the run)\n"
	       "      --mask SPEC       MTIE/TDEV against prtc-a, prtc-b, [mtie:|tdev:]FILE;\n"
	       "                        exit 1 if any tau fails\n"
	       "      --percentiles     distribution of offset and delay\n"
	       "                        (--json: as JSON, with --stability too)\n"
	       "  -h, --help            this text\n"
	       "      --version         the version\n", ntpx_prog);
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
		{ "dev", required_argument, NULL, 'D' },
		{ "ci", optional_argument, NULL, 'c' },
		{ "max-tau", required_argument, NULL, 'X' },
		{ "taus", required_argument, NULL, 'G' },
		{ "mask", required_argument, NULL, 'M' },
		{ "percentiles", no_argument, NULL, 'P' },
		{ "across-steps", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	enum fit_mode mode = M_SUMMARY, m;
	unsigned series = 0;
	int64_t tau0_ns = 0, max_tau_ns = 0;
	int c, json = 0, om = 0, stab_opt = 0;
	const char *mask = NULL;

	memset(&cfg->stab, 0, sizeof(cfg->stab));
	cfg->across_steps = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			continue;
		case 'O':
			om = 1;
			continue;
		case 'A':
			cfg->across_steps = 1;
			continue;
		case 's':
			if (stability_series_parse(optarg, &series))
				opt_usage_error("bad --series '%s' (offset, residual, error)", optarg);
			continue;
		case 'T':
			if (opt_duration(optarg, 0, &tau0_ns) || tau0_ns <= 0)
				opt_usage_error("bad --tau0 '%s'", optarg);
			continue;
		case 'D':
			if (stability_dev_parse(optarg, &cfg->stab))
				opt_usage_error("bad --dev '%s' (adev, mdev, tdev, mtie, tie_rms, "
						"hdev, ohdev, totdev, alpha)", optarg);
			stab_opt = 1;
			continue;
		case 'c': {
			/* --ci, --ci=P, or --ci P when the next word is a number */
			const char *a = optarg;
			char *end;
			double p;

			if (!a && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9' &&
			    (strtod(argv[optind], &end), *end == '\0'))
				a = argv[optind++];
			p = 0.682689492137086;		/* erf(1 / sqrt 2): 1 sigma */
			if (a) {
				errno = 0;
				p = strtod(a, &end);
				if (end == a || *end || errno || !(p > 0 && p < 1))
					opt_usage_error("bad --ci '%s' (a confidence between 0 and 1, "
							"e.g. 0.95)", a);
			}
			cfg->stab.conf = p;
			stab_opt = 1;
			continue;
		}
		case 'X':
			if (opt_duration(optarg, 0, &max_tau_ns) || max_tau_ns <= 0)
				opt_usage_error("bad --max-tau '%s'", optarg);
			stab_opt = 1;
			continue;
		case 'G':
			if (stability_taus_parse(optarg, &cfg->stab))
				opt_usage_error("bad --taus '%s' (octave, decade, all, or durations "
						"such as 1s,10s,100s)", optarg);
			stab_opt = 1;
			continue;
		case 'M':
			mask = optarg;
			stab_opt = 1;
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
	if ((series || tau0_ns || stab_opt) && mode != M_STABILITY)
		opt_usage_error("--series, --tau0, --dev, --ci, --taus, --max-tau and --mask go "
				"with --stability");
	if (mask)
		cfg->stab.nmask = mask_parse(mask, cfg->stab.mask);
	cfg->stab.max_tau_s = ntpx_ns_to_sec((double)max_tau_ns);
	cfg->mode = mode;
	cfg->json = om ? SUMMARY_OPENMETRICS : json;
	cfg->series = series;
	cfg->tau0_s = ntpx_ns_to_sec((double)tau0_ns);
	return optind;
}
