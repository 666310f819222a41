/* SPDX-License-Identifier: ISC */
/*
 * offsetfit - fits offset(t) = a + b t to the ok exchanges of a record
 * stream and summarises what is left: drift, residuals, round-trip time.
 *
 * This file is the wiring: the options, the inputs (input.c, through
 * lib/exchange.c), the fit, then one output: the summary (summary.c), the
 * residuals or a CDF (output.c), --percentiles (percentiles.c) or
 * --stability (stability.c).  offsetfit.h is what they share;
 * doc/offsetfit.1 documents every output.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opt.h"
#include "out.h"
#include "offsetfit.h"

enum mode { M_SUMMARY, M_RESIDUALS, M_CDF_RTT, M_CDF_RESID, M_CHECK, M_STABILITY,
	    M_PERCENTILES };

/* File scope: the arrays stay reachable until exit, which frees them. */
static struct series in;

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] [FILE...]\n"
	       "Fit offset(t) = a + b*t by least squares over the ok records of FILEs\n"
	       "(standard input by default) and print a summary as 'key value' lines.\n\n"
	       "      --json            the summary as one JSON object\n"
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
	       "      --version         print the version\n", opt_prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
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
	enum mode mode = M_SUMMARY, m;
	struct linfit fit;
	unsigned series = 0;
	int64_t tau0_ns = 0;
	int c, json = 0;

	opt_init(argv[0]);
	out_init();
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
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
	if ((series || tau0_ns) && mode != M_STABILITY)
		opt_usage_error("--series and --tau0 go with --stability");

	if (optind == argc && series_read(0, "stdin", &in))
		return NTPX_EXIT_FAIL;
	for (; optind < argc; optind++) {
		const char *path = argv[optind];
		int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", path, strerror(errno));
		if (series_read(fd, fd ? path : "stdin", &in))
			return NTPX_EXIT_FAIL;
		if (fd)
			close(fd);
	}

	switch (mode) {
	case M_CHECK:
		printf("checked %llu\n", (unsigned long long)in.checked);
		return output_finish();
	case M_CDF_RTT:
		return output_cdf_rtt(&in);
	case M_PERCENTILES:
		return percentiles_print(&in, json);
	default:
		break;
	}
	if (in.n < 2)
		ntpx_die(NTPX_EXIT_FAIL, "%zu ok records: a fit needs at least 2", in.n);
	if (stats_linfit(in.t, in.off, in.n, &fit))
		ntpx_die(NTPX_EXIT_FAIL, "all ok records have the same T1: nothing to fit");
	switch (mode) {
	case M_RESIDUALS:
		return output_residuals(&in, &fit);
	case M_CDF_RESID:
		return output_cdf_residual(&in, &fit);
	case M_STABILITY:
		return stability_print(&in, &fit, series, (double)tau0_ns * 1e-9, json);
	default:
		return summary_print(&in, &fit, json);
	}
}
