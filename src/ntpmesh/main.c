/* SPDX-License-Identifier: ISC */
/*
 * ntpmesh - a mesh of hosts that probe each other, without a reference
 * clock: each pair's offset, each loop's closure (which the clocks
 * cancel from, leaving the paths' asymmetry), each host's clock by least
 * squares and by a robust fit that finds the asymmetric links, and with
 * sim: clocks the error of each against the truth.
 *
 * This file is the wiring: the options, the inputs (input.c), then each
 * window fitted (window.c) and printed (output.c); ntpmesh.h is what
 * they share, doc/ntpmesh.1 what it all means.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "out.h"
#include "record.h"
#include "ntpmesh.h"

/* File scope: what input.c reads stays reachable until exit, which frees it. */
static struct mesh_run run;
static struct window win;

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] FILE|DIR...\n"
	       "Read the records of a mesh of hosts that probe each other, a file each\n"
	       "directed pair named by its '#pair CLIENT SERVER' header (a directory: every\n"
	       "such file under it), and print, per window, each pair's offset, each\n"
	       "loop's closure, each host's offset by least squares and by a robust fit,\n"
	       "and each link's asymmetry, as 'key value' lines.\n\n"
	       "      --window DUR      windows of DUR from the first record (default: one,\n"
	       "                        the whole run)\n"
	       "      --ref HOST        offsets relative to HOST (default: the first by name)\n"
	       "      --fraction F      fit the lowest-delay fraction F of each pair's\n"
	       "                        exchanges in a window (default 0.25)\n"
	       "      --stamps LAYER    the stamps each exchange's offset and delay come\n"
	       "                        from: user (t1 t2 t3 t4, the default) or kernel\n"
	       "                        (t1k t2k t3k t4k: ntpprobe --xleave's records)\n"
	       "      --blame-min DUR   blame a link only when its asymmetry is also at\n"
	       "                        least DUR (default 0: when it differs from zero\n"
	       "                        at 95%%, however small)\n"
	       "      --json            the same as one JSON object\n"
	       "  -h, --help            this text\n"
	       "      --version         the version\n", ntpx_prog);
}

static void options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "window", required_argument, NULL, 'W' },
		{ "ref", required_argument, NULL, 'R' },
		{ "fraction", required_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'j' },
		{ "stamps", required_argument, NULL, 'S' },
		{ "blame-min", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	char *end;
	int c;

	run.frac = 0.25;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'W':
			if (opt_duration(optarg, 0, &run.window_ns) || run.window_ns <= 0)
				opt_usage_error("bad --window '%s' (a duration, e.g. 10s)", optarg);
			break;
		case 'R':
			run.ref_name = optarg;
			break;
		case 'F':
			errno = 0;
			run.frac = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(run.frac > 0 && run.frac <= 1))
				opt_usage_error("bad --fraction '%s' (above 0, at most 1)", optarg);
			break;
		case 'B':
			if (opt_duration(optarg, 0, &run.blame_min_ns) || run.blame_min_ns < 0)
				opt_usage_error("bad --blame-min '%s' (a duration, e.g. 5us)", optarg);
			break;
		case 'j':
			run.json = 1;
			break;
		case 'S':
			if (strcmp(optarg, "user") && strcmp(optarg, "kernel"))
				opt_usage_error("bad --stamps '%s' (user or kernel)", optarg);
			run.kernel = !strcmp(optarg, "kernel");
			break;
		default:
			opt_other(c, usage);
		}
	}
	if (optind == argc)
		opt_usage_error("no FILE or DIR: the records of at least one pair are needed");
}

int main(int argc, char **argv)
{
	long w;
	int h, st = OUT_OK;

	opt_init(argv);
	out_init();
	options(argc, argv);
	record_sigint_ends_input();
	input_find(&run, argv + optind, argc - optind);
	if (!run.nin)
		ntpx_die(NTPX_EXIT_FAIL, "no record file with a '#pair' header to read");
	run.ref = 0;
	if (run.ref_name) {
		for (h = 0; h < run.nhosts && strcmp(run.host[h], run.ref_name); h++)
			;
		if (h == run.nhosts)
			opt_usage_error("--ref %s: no such host in the records' '#pair' headers",
					run.ref_name);
		run.ref = h;
	}
	if (input_read(&run))
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	output_begin(&run);
	for (w = 0; w < run.nwin && st == OUT_OK; w++) {
		window_fit(&run, w, &win);
		st = output_window(&run, &win);
	}
	if (st == OUT_OK)
		st = output_end(&run);
	if (st != OUT_OK)
		return out_exit_code(st);
	return run.failed ? NTPX_EXIT_FAIL : run.cut ? NTPX_EXIT_CUT : 0;
}
