/* SPDX-License-Identifier: ISC */
/*
 * lossinject - runs a command under a deliberate loss schedule.
 *
 * It only sets NTPX_LOSS (lib/loss.h) and execs the command; the library
 * drops before transport submission, so every ntpx tool on every backend
 * loses the same way, and the same seed loses the same sends.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loss.h"
#include "opt.h"

/* The issue asks for one line on a usage error, not two: no "Try --help". */
#define usage_die(...) ntpx_die(NTPX_EXIT_USAGE, __VA_ARGS__)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s --drop P [--seed S] -- COMMAND [ARG...]\n"
		"       %s --every N [--phase K] -- COMMAND [ARG...]\n"
		"Runs COMMAND with the ntpx library dropping sends before submission.\n"
		"      --drop P     drop each send with probability P: 5%%, 0.05\n"
		"      --seed S     the schedule's seed (default 1): same seed, same drops\n"
		"      --every N    drop sends N, 2N, 3N... (numbered from 1)\n"
		"  -p, --phase K    with --every: drop sends K, K+N, K+2N... (0 <= K < N)\n"
		"  -h, --help       this text\n"
		"      --version    the version\n",
		ntpx_prog, ntpx_prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "drop", required_argument, NULL, 'D' },
		{ "rate", required_argument, NULL, 'R' },
		{ "seed", required_argument, NULL, 'S' },
		{ "every", required_argument, NULL, 'E' },
		{ "phase", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct loss l = { .kind = LOSS_NONE, .seed = 1 };
	const char *rate = NULL, *seed = NULL, *every = NULL, *phase = NULL;
	char spec[128], err[256];
	int c;

	opt_init(argv);
	/* '+': options end at the command, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+r:s:e:p:h", longopts, NULL)) != -1) {
		switch (c) {
		/* -r and --rate: a rate is traffic (ntpx(7)); a drop is --drop. */
		case 'r': opt_old("-r", "--drop"); rate = optarg; break;
		case 'R': opt_old("--rate", "--drop"); /* fall through */
		case 'D': rate = optarg; break;
		case 's': opt_old("-s", "--seed"); /* fall through */
		case 'S': seed = optarg; break;
		case 'e': opt_old("-e", "--every"); /* fall through */
		case 'E': every = optarg; break;
		case 'p': phase = optarg; break;
		case '?': return NTPX_EXIT_USAGE;	/* getopt said why; no "Try" line */
		default: opt_other(c, usage);
		}
	}
	if (!rate == !every)
		usage_die("give one of --drop and --every");
	if (seed && !rate)
		usage_die("--seed goes with --drop");
	if (phase && !every)
		usage_die("--phase goes with --every");
	if (rate) {
		double p;
		int frac;

		/* "5%" or a probability "0.05"; nothing above one. */
		if (opt_rate(rate, &p, &frac) || (!frac && p > 1))
			usage_die("bad --drop '%s' (expected a percentage 5%% or a probability 0.05)",
				  rate);
		l.kind = LOSS_RATE;
		l.rate = p;
		if (seed && opt_count(seed, UINT64_MAX, &l.seed))
			usage_die("bad seed '%s' (expected a whole number)", seed);
	} else {
		l.kind = LOSS_EVERY;
		if (opt_count(every, UINT64_MAX, &l.every) || l.every == 0)
			usage_die("bad --every '%s' (expected a whole number >= 1)", every);
		if (phase && (opt_count(phase, UINT64_MAX, &l.phase) || l.phase >= l.every))
			usage_die("bad --phase '%s' (expected 0 <= K < %s)", phase, every);
	}
	if (optind >= argc)
		usage_die("missing command to run");

	loss_format(&l, spec, sizeof(spec));
	/* What the library will read must read back as this schedule. */
	if (loss_parse(spec, &l, err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (setenv(LOSS_ENV, spec, 1))
		ntpx_die(NTPX_EXIT_FAIL, "cannot set %s: %m", LOSS_ENV);
	execvp(argv[optind], argv + optind);
	ntpx_die(NTPX_EXIT_FAIL, "cannot run '%s': %m", argv[optind]);
}
