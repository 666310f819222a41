/* SPDX-License-Identifier: ISC */
/*
 * clockstep - create, show, step, slew and detune a clock.
 *
 * A sim:PATH clock is changed freely; realtime (the host's clock) only
 * with --system, and then only with CAP_SYS_TIME.  Actions run in a fixed
 * order whatever the order on the command line: create, step, slew, freq,
 * detune, show.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "opt.h"
#include "out.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: clockstep --clock NAME ACTION...\n"
"\n"
"      --clock NAME     realtime or sim:PATH\n"
"      --create         make the sim: clock (replacing one that is there)\n"
"      --offset X       with --create: start X ahead of CLOCK_REALTIME (120s, -5ms)\n"
"      --wander W       with --create: random walk of frequency, W ppm per second\n"
"      --seed S         with --create: the walk's seed (default 1)\n"
"      --step X         jump by X (+ => forward)\n"
"      --slew X         move by X at 500 ppm, replacing a slew in progress\n"
"      --freq Yppm      set the frequency (+ => fast); with --create, the initial one\n"
"      --detune Yppm    add Y ppm to the frequency\n"
"      --show           print offset, frequency, slew remaining, wander\n"
"      --system         allow changing the realtime clock (needs CAP_SYS_TIME)\n"
"  -h, --help           this text\n"
"      --version        the version\n");
}

enum {
	OPT_CLOCK = 256, OPT_CREATE, OPT_OFFSET, OPT_WANDER, OPT_SEED, OPT_STEP, OPT_SLEW,
	OPT_FREQ, OPT_DETUNE, OPT_SHOW, OPT_SYSTEM,
};

static const struct option longopts[] = {
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ "create", no_argument, NULL, OPT_CREATE },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "wander", required_argument, NULL, OPT_WANDER },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "slew", required_argument, NULL, OPT_SLEW },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ "detune", required_argument, NULL, OPT_DETUNE },
	{ "show", no_argument, NULL, OPT_SHOW },
	{ "system", no_argument, NULL, OPT_SYSTEM },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

struct args {
	const char *clock;
	int create, show, system;
	int have_offset, have_wander, have_seed, have_step, have_slew, have_freq, have_detune;
	int64_t offset, step, slew;
	double wander, freq, detune;
	uint64_t seed;
};

static void parse(int argc, char **argv, struct args *a)
{
	int opt;

	while ((opt = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			opt_old("-c", "--clock");
			/* fall through */
		case OPT_CLOCK:
			a->clock = optarg;
			break;
		case OPT_CREATE:
			a->create = 1;
			break;
		case OPT_OFFSET:
			if (opt_duration(optarg, 1, &a->offset))
				opt_usage_error("bad --offset '%s' (a duration: 120s, -5ms)", optarg);
			a->have_offset = 1;
			break;
		case OPT_WANDER:
			if (opt_ppm(optarg, &a->wander) || a->wander < 0 || a->wander > 1000)
				opt_usage_error("bad --wander '%s' (ppm per second, 0 to 1000)", optarg);
			a->have_wander = 1;
			break;
		case OPT_SEED:
			if (opt_count(optarg, UINT64_MAX, &a->seed))
				opt_usage_error("bad --seed '%s' (an unsigned integer)", optarg);
			a->have_seed = 1;
			break;
		case OPT_STEP:
			if (opt_duration(optarg, 1, &a->step))
				opt_usage_error("bad --step '%s' (a duration: +120s, -5ms)", optarg);
			a->have_step = 1;
			break;
		case OPT_SLEW:
			if (opt_duration(optarg, 1, &a->slew))
				opt_usage_error("bad --slew '%s' (a duration: +250ms, -1s)", optarg);
			a->have_slew = 1;
			break;
		case OPT_FREQ:
			if (opt_ppm(optarg, &a->freq))
				opt_usage_error("bad --freq '%s' (a frequency: +50ppm)", optarg);
			a->have_freq = 1;
			break;
		case OPT_DETUNE:
			if (opt_ppm(optarg, &a->detune))
				opt_usage_error("bad --detune '%s' (a frequency: -25ppm)", optarg);
			a->have_detune = 1;
			break;
		case OPT_SHOW:
			a->show = 1;
			break;
		case OPT_SYSTEM:
			a->system = 1;
			break;
		default:
			opt_other(opt, usage);
		}
	}
	if (optind < argc)
		opt_usage_error("unexpected argument '%s'", argv[optind]);
	if (!a->clock)
		opt_usage_error("no clock (--clock realtime or --clock sim:PATH)");
	if (!a->create && !a->show && !a->have_step && !a->have_slew && !a->have_freq &&
	    !a->have_detune)
		opt_usage_error("nothing to do (--create, --show, --step, --slew, --freq, --detune)");
	if ((a->have_offset || a->have_wander || a->have_seed) && !a->create)
		opt_usage_error("--offset, --wander and --seed go with --create");
	if (a->have_seed && !a->have_wander)
		opt_usage_error("--seed without --wander");
	if (strncmp(a->clock, "sim:", 4) != 0 && strcmp(a->clock, "realtime") != 0)
		opt_usage_error("unknown clock '%s' (known: realtime, sim:PATH)", a->clock);
	if (strcmp(a->clock, "realtime") == 0) {
		if (!a->system)
			opt_usage_error("clock 'realtime': refusing to change the system clock "
					"without --system");
		if (a->create)
			opt_usage_error("--create makes sim: clocks only");
	}
}

static int show(struct clock *c)
{
	struct clock_sim_state st;
	char err[256];
	int64_t left;
	double ppm;
	int rc;

	printf("clock %s\n", clock_name(c));
	rc = clock_sim_state(c, &st, err, sizeof(err));
	if (rc == 0) {
		/* offset: the clock minus CLOCK_REALTIME, + => the clock is ahead */
		printf("offset_ns %" PRId64 "\n", st.error_ns);
		printf("freq_ppm %.6f\n", st.freq_ppm);
		printf("slew_left_ns %" PRId64 "\n", st.slew_left_ns);
		printf("wander_ppm %.6f\n", st.wander_ppm);
		printf("wander_freq_ppm %.6f\n", st.wander_freq_ppm);
		printf("seed %" PRIu64 "\n", st.seed);
		return 0;
	}
	/* realtime: what the kernel will say; its offset is not known here */
	if (clock_freq_get(c, &ppm, err, sizeof(err)) ||
	    clock_slew_left(c, &left, err, sizeof(err))) {
		ntpx_err("%s", err);
		return -1;
	}
	printf("offset_ns -\nfreq_ppm %.6f\nslew_left_ns %" PRId64 "\n", ppm, left);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .seed = 1 };
	struct clock *c;
	char err[256];
	int rc = 0;

	opt_init(argv);
	out_init();
	parse(argc, argv, &a);

	if (a.create) {
		struct clock_sim_params p = {
			.offset_ns = a.offset, .freq_ppm = a.have_freq ? a.freq : 0,
			.wander_ppm = a.wander, .seed = a.seed,
		};

		if (clock_sim_create(a.clock + 4, &p, err, sizeof(err)))
			ntpx_die(NTPX_EXIT_FAIL, "%s", err);
		a.have_freq = 0;	/* done */
	}
	c = clock_open(a.clock, err, sizeof(err));
	if (!c)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (a.system && clock_allow_system(c, err, sizeof(err)))
		goto failed;
	if (a.have_step && (rc = clock_step(c, a.step, err, sizeof(err))))
		goto failed;
	if (a.have_slew && (rc = clock_slew(c, a.slew, NULL, err, sizeof(err))))
		goto failed;
	if (a.have_freq && (rc = clock_freq_set(c, a.freq, err, sizeof(err))))
		goto failed;
	if (a.have_detune && (rc = clock_freq_add(c, a.detune, err, sizeof(err))))
		goto failed;
	if (a.show && show(c)) {
		clock_close(c);
		return NTPX_EXIT_FAIL;
	}
	clock_close(c);
	/* The changes above are made whatever happens to the output; a show
	   that could not be written is still an error (lib/out.h). */
	return out_exit_code(out_flush(stdout, "standard output"));

failed:
	ntpx_err("%s", err);
	clock_close(c);
	return NTPX_EXIT_FAIL;
}
