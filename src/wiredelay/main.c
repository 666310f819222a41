/* SPDX-License-Identifier: ISC */
/*
 * wiredelay - a wire of fixed one-way delay between two interfaces.
 *
 * Run in a namespace that holds two interfaces (veth ends), it bridges
 * every frame between them, holding each until its kernel receive stamp
 * plus the delay of its direction (relay.c, port.c).  The kernel here
 * has no netem, fq or etf qdisc to delay a link, so the lab builds its
 * fixed delays from this, and the report says how exactly each was held.
 *
 * This file is the wiring: the options, the two ports, the relay until a
 * signal, and the report on stderr (and --stats FILE).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "opt.h"
#include "out.h"
#include "wiredelay.h"

#define WD_QUEUE_DEFAULT	(4u << 20)
#define WD_RCVBUF		(4u << 20)
/* The most a send is spun for, by default (relay.c). */
#define WD_SPIN_DEFAULT		"200us"
/* The virtio-net header in front of every frame the sockets pass. */
#define WD_VNET_HDR		10

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--delay-ab DUR] [--delay-ba DUR] [--ready FILE] [--stats FILE] IFACE_A IFACE_B\n"
		"Bridges every frame between IFACE_A and IFACE_B, each held until its kernel\n"
		"receive stamp plus its direction's delay; a summary of how exactly the delay\n"
		"was held on stderr at SIGINT or SIGTERM.\n"
		"      --delay DUR     both directions' delay (default 0): 100us, 1ms\n"
		"      --delay-ab DUR  the delay of frames from IFACE_A to IFACE_B\n"
		"      --delay-ba DUR  the delay of frames from IFACE_B to IFACE_A\n"
		"      --queue BYTES   each direction's queue (default %u); a frame that\n"
		"                      finds it full is dropped and counted\n"
		"      --priority N    run under SCHED_FIFO at N (1..99): the holds stay\n"
		"                      exact when every core is busy\n"
		"      --spin DUR      spin at most DUR before a frame's due time (default\n"
		"                      %s, 0 never), the timer set that much earlier\n"
		"      --ready FILE    created (with the process id) once both ports are open\n"
		"      --stats FILE    the summary as key-value lines, written at the end\n"
		"  -h, --help          this text\n"
		"      --version       the version\n",
		ntpx_prog, WD_QUEUE_DEFAULT, WD_SPIN_DEFAULT);
}

static void on_signal(int sig)
{
	(void)sig;
	wd_stop = 1;
}

static int64_t delay_arg(const char *opt, const char *s)
{
	int64_t ns;

	if (opt_duration(s, 0, &ns))
		ntpx_die(NTPX_EXIT_USAGE, "bad %s '%s' (expected a duration: 100us, 1ms)", opt, s);
	return ns;
}

static void write_ready(const char *path)
{
	char line[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());

	if (fd < 0)
		ntpx_die(NTPX_EXIT_FAIL, "%s: %m", path);
	if (write(fd, line, (size_t)n) != n || close(fd))
		ntpx_die(NTPX_EXIT_FAIL, "write error on %s: %m", path);
}

/* Where a hold error comes from: the transmit stamps, else the loop's
   own clock at the send, else nothing sent. */
static const char *hold_source(const struct wd_dir *d)
{
	return d->stamped ? "tx_stamp" : d->frames ? "wakeup" : "none";
}

/*
 * The median and 99th percentile of @h, whose largest value is @max
 * (exact) and smallest @min (INT64_MIN: not known).  The histogram gives
 * a bucket's midpoint, which can lie past the largest or smallest value
 * counted: held within them, the quantiles never claim more than was seen.
 */
static void quantiles(const struct hist *h, int64_t min, int64_t max, double *med, int64_t *p99)
{
	*med = hist_median(h);
	*p99 = hist_rank(h, h->n - h->n / 100);
	if (*med > (double)max)
		*med = (double)max;
	if (*med < (double)min)
		*med = (double)min;
	if (*p99 > max)
		*p99 = max;
	if (*p99 < min)
		*p99 = min;
}

static void hold_of(const struct wd_dir *d, double *med, int64_t *max, int64_t *p99)
{
	if (d->stamped) {
		*max = d->hold_max;
		quantiles(&d->hold, d->hold_min, d->hold_max, med, p99);
	} else {
		*max = d->wake_max;
		quantiles(&d->wake, INT64_MIN, d->wake_max, med, p99);
	}
}

static void report(const struct wd_dir *d, uint64_t sockdrops)
{
	double med;
	int64_t max, p99;

	fprintf(stderr, "%s: %s>%s delay %lld ns: %llu frames", ntpx_prog,
		d->in->ifname, d->out->ifname, (long long)d->delay,
		(unsigned long long)d->frames);
	if (d->frames) {
		hold_of(d, &med, &max, &p99);
		fprintf(stderr, ", hold error median %.0f ns, max %lld ns (%s)", med,
			(long long)max, d->stamped ? "transmit stamps" : "the loop's clock, no transmit stamps");
	}
	fprintf(stderr, ", dropped %llu (queue full), %llu (socket), %llu (too large)",
		(unsigned long long)d->drop_full, (unsigned long long)sockdrops,
		(unsigned long long)d->drop_big);
	if (d->send_errors)
		fprintf(stderr, ", send errors %llu", (unsigned long long)d->send_errors);
	if (d->q.frames)
		fprintf(stderr, ", left held %llu", (unsigned long long)d->q.frames);
	fputc('\n', stderr);
}

/* KEY's median, 99th percentile and maximum of @h, or - when it is empty. */
static void stats_dist(FILE *f, const char *n, const char *key, const struct hist *h,
		       int64_t max)
{
	double med;
	int64_t p99;

	if (h->n) {
		quantiles(h, INT64_MIN, max, &med, &p99);
		fprintf(f, "%s_%s_median_ns %.0f\n%s_%s_p99_ns %lld\n%s_%s_max_ns %lld\n", n, key,
			med, n, key, (long long)p99, n, key, (long long)max);
	} else
		fprintf(f, "%s_%s_median_ns -\n%s_%s_p99_ns -\n%s_%s_max_ns -\n", n, key, n, key,
			n, key);
}

static void stats_dir(FILE *f, const struct wd_dir *d, uint64_t sockdrops)
{
	const char *n = d->name;
	double med = 0;
	int64_t max = 0, p99 = 0;

	if (d->frames)
		hold_of(d, &med, &max, &p99);
	fprintf(f, "%s_in %s\n%s_out %s\n%s_delay_ns %lld\n", n, d->in->ifname, n,
		d->out->ifname, n, (long long)d->delay);
	fprintf(f, "%s_frames %llu\n%s_bytes %llu\n", n, (unsigned long long)d->frames, n,
		(unsigned long long)(d->bytes - d->frames * WD_VNET_HDR));
	fprintf(f, "%s_hold_source %s\n", n, hold_source(d));
	if (d->frames)
		fprintf(f, "%s_hold_median_ns %.0f\n%s_hold_p99_ns %lld\n%s_hold_max_ns %lld\n",
			n, med, n, (long long)p99, n, (long long)max);
	else
		fprintf(f, "%s_hold_median_ns -\n%s_hold_p99_ns -\n%s_hold_max_ns -\n", n, n, n);
	if (d->stamped)
		fprintf(f, "%s_hold_min_ns %lld\n", n, (long long)d->hold_min);
	else
		fprintf(f, "%s_hold_min_ns -\n", n);
	fprintf(f, "%s_stamped %llu\n%s_stamps_lost %llu\n", n, (unsigned long long)d->stamped,
		n, (unsigned long long)d->stamps_lost);
	if (d->frames) {
		quantiles(&d->wake, INT64_MIN, d->wake_max, &med, &p99);
		fprintf(f, "%s_wake_median_ns %.0f\n%s_wake_max_ns %lld\n", n, med, n,
			(long long)d->wake_max);
	} else {
		fprintf(f, "%s_wake_median_ns -\n%s_wake_max_ns -\n", n, n);
	}
	fprintf(f, "%s_dropped_full %llu\n%s_dropped_socket %llu\n%s_dropped_big %llu\n", n,
		(unsigned long long)d->drop_full, n, (unsigned long long)sockdrops, n,
		(unsigned long long)d->drop_big);
	fprintf(f, "%s_send_errors %llu\n%s_unstamped %llu\n%s_left %llu\n%s_max_held %llu\n", n,
		(unsigned long long)d->send_errors, n, (unsigned long long)d->unstamped, n,
		(unsigned long long)d->q.frames, n, (unsigned long long)d->max_frames);
	/* Added after the above: the hold error's parts, and the spin. */
	fprintf(f, "%s_wake_p99_ns ", n);
	if (d->frames) {
		quantiles(&d->wake, INT64_MIN, d->wake_max, &med, &p99);
		fprintf(f, "%lld\n", (long long)p99);
	} else {
		fprintf(f, "-\n");
	}
	stats_dist(f, n, "send", &d->send, d->send_max);
	stats_dist(f, n, "deliver", &d->deliver, d->deliver_max);
	fprintf(f, "%s_late_arrivals %llu\n", n, (unsigned long long)d->late_in);
	fprintf(f, "%s_timer_wakes %llu\n", n, (unsigned long long)d->timer.n);
	stats_dist(f, n, "timer", &d->timer, d->timer_max);
	fprintf(f, "%s_spin_max_ns %lld\n%s_spin_margin_ns %lld\n%s_spins %llu\n%s_spin_ns %lld\n",
		n, (long long)d->spin_max, n, (long long)d->margin, n,
		(unsigned long long)d->spins, n, (long long)d->spun);
}

static int write_stats(const char *path, const struct wd_dir *ab, const struct wd_dir *ba,
		       const uint64_t sockdrops[2])
{
	FILE *f = fopen(path, "w");

	if (!f) {
		ntpx_err("%s: %m", path);
		return -1;
	}
	stats_dir(f, ab, sockdrops[0]);
	stats_dir(f, ba, sockdrops[1]);
	return out_close(f, path) == OUT_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'D' },
		{ "delay-ab", required_argument, NULL, 'A' },
		{ "delay-ba", required_argument, NULL, 'B' },
		{ "queue", required_argument, NULL, 'Q' },
		{ "priority", required_argument, NULL, 'P' },
		{ "spin", required_argument, NULL, 'X' },
		{ "ready", required_argument, NULL, 'R' },
		{ "stats", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct wd_dir ab, ba;	/* their histograms are large */
	struct wd_port pa, pb;
	const char *ready = NULL, *stats = NULL;
	int64_t dab = 0, dba = 0, spin = delay_arg("--spin", WD_SPIN_DEFAULT);
	uint64_t qbytes = WD_QUEUE_DEFAULT, sockdrops[2] = { 0, 0 }, prio = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block;
	char err[256];
	int c, rc;

	opt_init(argv);
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'D': dab = dba = delay_arg("--delay", optarg); break;
		case 'A': dab = delay_arg("--delay-ab", optarg); break;
		case 'B': dba = delay_arg("--delay-ba", optarg); break;
		case 'Q':
			if (opt_count(optarg, (uint64_t)1 << 34, &qbytes) ||
			    qbytes < 4 * (uint64_t)WD_FRAME_MAX)
				ntpx_die(NTPX_EXIT_USAGE, "bad --queue '%s' (expected bytes, %u to 2^34)",
					 optarg, 4 * WD_FRAME_MAX);
			break;
		case 'P':
			if (opt_count(optarg, 99, &prio) || prio < 1)
				ntpx_die(NTPX_EXIT_USAGE, "bad --priority '%s' (expected 1 to 99)", optarg);
			break;
		case 'X': spin = delay_arg("--spin", optarg); break;
		case 'R': ready = optarg; break;
		case 'S': stats = optarg; break;
		case '?': fprintf(stderr, "Try '%s --help'.\n", ntpx_prog); return NTPX_EXIT_USAGE;
		default: opt_other(c, usage);
		}
	}
	if (argc - optind != 2)
		ntpx_die(NTPX_EXIT_USAGE, "expected two interfaces, IFACE_A IFACE_B (try '%s --help')",
			 ntpx_prog);
	if (!strcmp(argv[optind], argv[optind + 1]))
		ntpx_die(NTPX_EXIT_USAGE, "IFACE_A and IFACE_B are both %s", argv[optind]);
	out_init();

	if (wd_port_open(&pa, argv[optind], WD_RCVBUF, err, sizeof(err)) ||
	    wd_port_open(&pb, argv[optind + 1], WD_RCVBUF, err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (wd_dir_init(&ab, "ab", &pa, &pb, dab, spin, qbytes) ||
	    wd_dir_init(&ba, "ba", &pb, &pa, dba, spin, qbytes))
		ntpx_die(NTPX_EXIT_FAIL, "out of memory for two queues of %llu bytes",
			 (unsigned long long)qbytes);
	/* A wakeup's slack is added to every hold: none (a timerfd has
	   none; this is for everything else). */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	if (prio) {
		struct sched_param sp = { .sched_priority = (int)prio };

		/* Two threads (they inherit it) that sleep but for a
		   frame's work and a spin of a bounded share (relay.c): the
		   kernel's real-time throttling still leaves the others
		   theirs. */
		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			ntpx_die(NTPX_EXIT_FAIL, "--priority %llu: SCHED_FIFO: %m",
				 (unsigned long long)prio);
	}

	/* Blocked but in the relay's wait (relay.c). */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ready)
		write_ready(ready);

	rc = wd_relay(&ab, &ba, sockdrops, err, sizeof(err));
	if (rc)
		ntpx_err("%s", err);
	report(&ab, sockdrops[0]);
	report(&ba, sockdrops[1]);
	if (stats && write_stats(stats, &ab, &ba, sockdrops))
		rc = -1;
	wd_dir_free(&ab);
	wd_dir_free(&ba);
	wd_port_close(&pa);
	wd_port_close(&pb);
	return rc ? NTPX_EXIT_FAIL : NTPX_EXIT_OK;
}
