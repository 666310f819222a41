/* SPDX-License-Identifier: ISC */
/*
 * tests/bench/clock.c - the cost of reading a sim: clock against
 * clock_gettime(CLOCK_REALTIME), which it wraps.  The sim read sits
 * between T1/T4 and the wire, so it must stay cheap: the target is at most
 * twice the realtime read.
 *
 * usage: clock [-n READS] [-w WANDER_PPM] DIR
 * Prints ns per read of each and their ratio; exit 1 when the ratio is
 * above 2.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "opt.h"

static double per_read(struct clock *c, long n)
{
	volatile int64_t sink = 0;
	int64_t t0 = clock_monotonic_ns();
	struct timespec ts;
	long i;

	if (c)
		for (i = 0; i < n; i++)
			sink += clock_now(c);
	else
		for (i = 0; i < n; i++) {
			clock_gettime(CLOCK_REALTIME, &ts);
			sink += ts.tv_nsec;
		}
	(void)sink;
	return (double)(clock_monotonic_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	struct clock_sim_params p = { .freq_ppm = 25 };
	double best_rt = 1e9, best_sim = 1e9, rt, sim, ratio;
	char path[512], name[520], err[256];
	struct clock *c;
	long n = 2000000;
	int opt, round;

	opt_init(argv);
	while ((opt = getopt(argc, argv, "n:w:")) != -1) {
		if (opt == 'n')
			n = atol(optarg);
		else if (opt == 'w')
			p.wander_ppm = atof(optarg);
		else
			opt_usage_error("usage: clock [-n READS] [-w WANDER_PPM] DIR");
	}
	if (optind != argc - 1 || n <= 0)
		opt_usage_error("usage: clock [-n READS] [-w WANDER_PPM] DIR");
	snprintf(path, sizeof(path), "%s/bench-clk", argv[optind]);
	snprintf(name, sizeof(name), "sim:%s", path);
	if (clock_sim_create(path, &p, err, sizeof(err)))
		ntpx_die(1, "%s", err);
	c = clock_open(name, err, sizeof(err));
	if (!c)
		ntpx_die(1, "%s", err);
	/* Best of three, interleaved, against other load on the machine. */
	for (round = 0; round < 3; round++) {
		rt = per_read(NULL, n);
		sim = per_read(c, n);
		best_rt = rt < best_rt ? rt : best_rt;
		best_sim = sim < best_sim ? sim : best_sim;
	}
	clock_close(c);
	unlink(path);
	ratio = best_sim / best_rt;
	printf("realtime %.1f ns/read, sim %.1f ns/read (wander %g ppm), ratio %.2f (target <= 2)\n",
	       best_rt, best_sim, p.wander_ppm, ratio);
	return ratio <= 2.0 ? 0 : 1;
}
