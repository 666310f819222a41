/* SPDX-License-Identifier: ISC */
/*
 * ntpstages - where an exchange's time goes: per-stage figures from the
 * per-layer stamps of ntpprobe's records (doc/ntpx-record.5), and the
 * offset and delay computed from each stamp layer with their noise.
 *
 * This file is the wiring: the options, the inputs (input.c), then -e's
 * lines or the two tables, stages (stages.c) and layers (layers.c);
 * ntpstages.h is what they share.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "opt.h"
#include "out.h"
#include "ntpstages.h"

/* File scope: the arrays stay reachable until exit, which frees them. */
static struct input in;

static int read_input(int fd, const char *name, void *arg)
{
	return input_read(fd, name, arg);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] [FILE...]\n"
	       "Read ntpprobe records (stdin without FILE) with per-layer stamps and\n"
	       "print where each exchange's time went: the client's and the server's\n"
	       "stages, the two one-way paths, and the offset and delay from each stamp\n"
	       "layer with their residual RMS, p99.9 and jitter.\n\n"
	       "  -e, --each           one line per exchange: every stage in ns\n"
	       "      --same-clock     both hosts read one clock (loopback, the lab):\n"
	       "                       the one-way paths are true one-way delays\n"
	       "      --openmetrics    both tables in the Prometheus text format (for\n"
	       "                       node_exporter's textfile collector)\n"
	       "  -h, --help           this text\n"
	       "      --version        the version\n", ntpx_prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "each", no_argument, NULL, 'e' },
		{ "same-clock", no_argument, NULL, 'S' },
		{ "openmetrics", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int per_exchange = 0, same = 0, om = 0, c;
	double *v, *w, *t;

	opt_init(argv);
	out_init();
	while ((c = getopt_long(argc, argv, "esh", longopts, NULL)) != -1) {
		if (c == 'e')
			per_exchange = 1;
		else if (c == 's' || c == 'S') {
			if (c == 's')
				opt_old("-s", "--same-clock");
			same = 1;
		}
		else if (c == 'O')
			om = 1;
		else
			opt_other(c, usage);
	}
	if (om && per_exchange)
		opt_usage_error("--openmetrics and --each exclude each other");
	record_sigint_ends_input();
	if (opt_inputs(argc, argv, optind, read_input, &in))
		return NTPX_EXIT_FAIL;
	if (!in.n)
		ntpx_die(NTPX_EXIT_FAIL, "no ok records");

	if (per_exchange) {
		stages_each(&in);
	} else {
		v = malloc(in.n * sizeof(*v));
		w = malloc(in.n * sizeof(*w));
		t = malloc(in.n * sizeof(*t));
		if (!v || !w || !t)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory");
		if (om) {
			int rc = out_exit_code(metrics_print(&in, same, v, w, t));

			if (rc == NTPX_EXIT_OK && in.cut)
				rc = NTPX_EXIT_CUT;

			free(v);
			free(w);
			free(t);
			free(in.x);
			free(in.seq);
			return rc;
		}
		printf("# ntpstages: %llu records, %zu ok; clocks: %s\n",
		       (unsigned long long)in.records, in.n,
		       same ? "one clock (one-way paths are true one-way delays)" :
		       "two hosts (one-way paths offset-bearing, marked *; their sum is exact)");
		stages_print(&in, same, v);
		layers_print(&in, v, w, t);
		free(v);
		free(w);
		free(t);
	}
	free(in.x);
	free(in.seq);
	c = out_exit_code(out_flush(stdout, "standard output"));
	/* Everything went well but a line was dropped: say so. */
	return c == NTPX_EXIT_OK && in.cut ? NTPX_EXIT_CUT : c;
}
