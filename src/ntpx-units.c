/* SPDX-License-Identifier: ISC */
/*
 * ntpx-units - the option values of lib/opt_units.c for shell scripts, so that a
 * duration or a rate means the same in bin/ntpx-* as in every C tool.
 *
 *   ntpx-units duration VALUE     250ms, 2s, 1.5m, 3 (s)  -> ns
 *   ntpx-units rate VALUE         800M, 6G, 1.5k, 1000    -> bit/s
 *   ntpx-units endpoint VALUE     host:12300, [::1], UDP://h -> the URL
 *                                 it stands for (lib/endpoint.h)
 *
 * One line on stdout; a value that does not parse is one line on stderr
 * and exit 1 (the caller says which option was bad; an endpoint's line
 * says what is wrong with it).  Nothing is resolved or opened.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"
#include "transport.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: %s duration VALUE | rate VALUE | endpoint VALUE\n"
		"Prints VALUE parsed as every ntpx tool parses it: a duration in ns,\n"
		"a rate in bit/s, an endpoint as the URL it stands for.\n"
		"  -h, --help     this text\n"
		"      --version  the version\n", ntpx_prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *what, *v;
	int c;

	opt_init(argv);
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		opt_other(c, usage);
	if (argc - optind != 2)
		opt_usage_error("give KIND and VALUE");
	what = argv[optind];
	v = argv[optind + 1];
	if (strcmp(what, "duration") == 0) {
		int64_t ns;

		if (opt_duration(v, 0, &ns))
			ntpx_die(NTPX_EXIT_FAIL, "bad duration '%s'", v);
		printf("%" PRId64 "\n", ns);
	} else if (strcmp(what, "rate") == 0) {
		double bps;
		int frac;

		if (opt_rate(v, &bps, &frac) || frac)
			ntpx_die(NTPX_EXIT_FAIL, "bad rate '%s'", v);
		printf("%.0f\n", bps);
	} else if (strcmp(what, "endpoint") == 0) {
		struct endpoint ep;
		char err[256];

		if (transport_parse_endpoint(v, &ep, err, sizeof(err)))
			ntpx_die(NTPX_EXIT_FAIL, "%s", err);
		printf("%s\n", ep.url);
	} else {
		opt_usage_error("unknown kind '%s' (duration, rate, endpoint)", what);
	}
	return NTPX_EXIT_OK;
}
