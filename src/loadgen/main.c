/* SPDX-License-Identifier: ISC */
/*
 * loadgen - background traffic through the transport table, and an NTP
 * request flood.
 *
 *   loadgen [--rate R] [--size B] [--duration D] [--burst ON/OFF] ENDPOINT
 *   loadgen --sink ENDPOINT
 *   loadgen --calibrate ENDPOINT
 *   loadgen --ntp RATE ENDPOINT
 *
 * The sender paces datagrams of --size bytes (UDP payload) with a token
 * bucket and hands them to the transport in batches (transport_send_batch:
 * sendmmsg, and UDP GSO when a datagram fits the path MTU, up to
 * TRANSPORT_MAX_SEGMENTS datagrams per message).  Each datagram starts
 * with a 16-byte header, magic, run and sequence number, so that the sink
 * counts what arrived and what went missing (lib/loadproto.h).  Every
 * LOAD_REPORT_NS the sink
 * sends each sender its cumulative counters; the sender prints what the
 * sink measured, interval by interval.  Rates are of UDP payload, as
 * iperf3 counts them.
 *
 * --ntp sends NTP client requests at a fixed rate and counts the replies
 * that answer them (org == our xmt), as ntpperf does, to measure a
 * server's capacity.
 *
 * This file is the wiring: the options, then one of sink.c, sender.c or
 * flood.c (src/loadgen/loadgen.h).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "loadproto.h"
#include "opt.h"
#include "priv.h"
#include "out.h"
#include "transport.h"
#include "loadgen.h"

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] ENDPOINT          send load to a sink\n"
	       "       %s --sink [options] ENDPOINT   receive and report\n"
	       "       %s --calibrate ENDPOINT        the path's sustained rate\n"
	       "       %s --ntp RATE ENDPOINT         an NTP request flood\n\n"
	       "  -r, --rate RATE       payload rate: 800M, 6G, or 90%% of --capacity\n"
	       "                        (or of a calibration run first); default: all it can\n"
	       "  -C, --capacity RATE   the path's rate, for --rate N%%\n"
	       "  -s, --size BYTES      datagram payload, 16..65507 (default: the path MTU's)\n"
	       "  -d, --duration DUR    how long (default 10s; 3s for --calibrate; 0: until a signal)\n"
	       "  -b, --burst ON/OFF    on for ON, off for OFF, repeated: 2s/6s\n"
	       "  -S, --start TIME      realtime (Unix seconds, 1764455329.5) of the first\n"
	       "                        burst edge (default: the next whole second)\n"
	       "  -i, --interval DUR    report interval (default 1s)\n"
	       "  -c, --calibrate       send flat out, print the rate the sink sustained\n"
	       "  -k, --sink            receive, report to each sender, print intervals\n"
	       "  -n, --ntp RATE        NTP requests per second (100k), count replies\n"
	       "  -w, --timeout DUR     --ntp: how long to wait for late replies (200ms)\n"
	       "      --no-gso          one datagram per message\n"
	       "      --user NAME       run as NAME once the endpoint is open\n"
	       "  -h, --help            this text\n"
	       "      --version         the version\n",
	       opt_prog, opt_prog, opt_prog, opt_prog);
}

static double parse_rate_abs(const char *arg, const char *what)
{
	double v;
	int frac;

	if (opt_rate(arg, &v, &frac) || frac)
		opt_usage_error("bad %s '%s' (expected e.g. 800M, 6G, 100k)", what, arg);
	return v;
}

/*
 * A deep receive buffer where the backend is a kernel socket: a sink that
 * loses the CPU for a few milliseconds must not count its own socket's
 * overflow as the path's loss.  As root past rmem_max; else what the
 * kernel allows (transport_rcvbuf_set).  Backends without a kernel
 * socket (uudp, ib) refuse, and their queues are what they are.
 */
static void deep_rcvbuf(struct transport *t)
{
	char err[128];

	(void)transport_rcvbuf_set(t, 16 << 20, err, sizeof(err));
}

/* The path MTU's datagram (transport_payload_max) where the backend
   knows it, else a 1500-byte frame's. */
static size_t default_size(struct transport *t)
{
	char err[128];
	size_t n;

	if (transport_payload_max(t, &n, err, sizeof(err)) == 0 && n > LOAD_HDR_LEN)
		return n;
	return 1472;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rate", required_argument, NULL, 'r' },
		{ "capacity", required_argument, NULL, 'C' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "burst", required_argument, NULL, 'b' },
		{ "start", required_argument, NULL, 'S' },
		{ "interval", required_argument, NULL, 'i' },
		{ "calibrate", no_argument, NULL, 'c' },
		{ "sink", no_argument, NULL, 'k' },
		{ "ntp", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 'w' },
		{ "no-gso", no_argument, NULL, 'G' },
		{ "user", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *rate = NULL, *capacity = NULL, *size = NULL, *duration = NULL;
	const char *burst = NULL, *start = NULL, *ntp = NULL, *user = NULL;
	int64_t interval = NTPX_NS_PER_SEC, timeout = 200000000LL, dur = -1;
	int calibrate = 0, sink = 0, gso = 1, c, rc;
	struct sigaction sa = { .sa_handler = on_signal };
	struct transport *t;
	struct endpoint ep;
	char err[256];

	opt_init(argv[0]);
	while ((c = getopt_long(argc, argv, "r:C:s:d:b:S:i:ckn:w:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': rate = optarg; break;
		case 'C': capacity = optarg; break;
		case 's': size = optarg; break;
		case 'd': duration = optarg; break;
		case 'b': burst = optarg; break;
		case 'S': start = optarg; break;
		case 'i':
			if (opt_duration(optarg, 0, &interval) || interval < 10000000)
				opt_usage_error("bad interval '%s' (at least 10ms)", optarg);
			break;
		case 'c': calibrate = 1; break;
		case 'k': sink = 1; break;
		case 'n': ntp = optarg; break;
		case 'w':
			if (opt_duration(optarg, 0, &timeout))
				opt_usage_error("bad timeout '%s'", optarg);
			break;
		case 'G': gso = 0; break;
		case 'U': user = optarg; break;
		default: opt_other(c, usage);
		}
	}
	endpoint_from_args(argc, argv, optind, &ep);
	if (sink + calibrate + !!ntp > 1)
		opt_usage_error("--sink, --calibrate and --ntp go alone");
	if ((sink || ntp) && (rate || capacity || size || burst || start))
		opt_usage_error("--rate, --capacity, --size, --burst, --start are for the sender");
	if (calibrate && (rate || burst))
		opt_usage_error("--calibrate sends flat out: no --rate or --burst");
	if (duration && (opt_duration(duration, 0, &dur)))
		opt_usage_error("bad duration '%s'", duration);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	out_init();

	t = transport_open(&ep, sink ? TRANSPORT_SERVER : TRANSPORT_CLIENT, err, sizeof(err));
	if (!t)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);

	if (sink || ntp)
		deep_rcvbuf(t);
	/* The socket is bound and its buffer forced: root is no longer needed. */
	if (user && priv_drop(user, priv_transport_caps(&ep, sink ? TRANSPORT_SERVER :
							 TRANSPORT_CLIENT), err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (sink) {
		rc = run_sink(t, interval, dur < 0 ? 0 : dur);
	} else if (ntp) {
		struct flood f = { .t = t, .interval = interval, .timeout = timeout,
				   .duration = dur < 0 ? 10 * NTPX_NS_PER_SEC : dur };

		f.rate = parse_rate_abs(ntp, "--ntp rate");
		if (getrandom(&f.nonce, sizeof(f.nonce), 0) != sizeof(f.nonce))
			f.nonce = (uint32_t)clock_realtime_ns();
		rc = run_flood(&f);
	} else {
		struct sender s = { .t = t, .interval = interval };
		double frac = 0;

		if (getrandom(&s.run, sizeof(s.run), 0) != sizeof(s.run))
			s.run = (uint32_t)clock_realtime_ns() ^ (uint32_t)getpid();
		s.size = default_size(t);
		if (size) {
			uint64_t v;

			if (opt_count(size, MAX_DGRAM, &v) || v < LOAD_HDR_LEN)
				opt_usage_error("bad size '%s' (%d..%d bytes)", size, LOAD_HDR_LEN, MAX_DGRAM);
			s.size = (size_t)v;
		}
		/* GSO packs datagrams that fit the path MTU, 64 KiB at most. */
		s.per_msg = 1;
		if (gso && s.size <= default_size(t)) {
			s.per_msg = MAX_DGRAM / s.size;
			if (s.per_msg > TRANSPORT_MAX_SEGMENTS)
				s.per_msg = TRANSPORT_MAX_SEGMENTS;
		}
		if (rate) {
			int isfrac;
			double v;

			if (opt_rate(rate, &v, &isfrac))
				opt_usage_error("bad rate '%s' (expected 90%%, 6G, 800M)", rate);
			if (isfrac)
				frac = v;
			else
				s.rate = v;
		}
		if (capacity) {
			double cap = parse_rate_abs(capacity, "capacity");

			if (!frac)
				opt_usage_error("--capacity goes with --rate N%%");
			s.rate = frac * cap;
			frac = 0;
		}
		if (burst) {
			char on[64], *slash = strchr(burst, '/');

			if (!slash || (size_t)(slash - burst) >= sizeof(on))
				opt_usage_error("bad burst '%s' (expected ON/OFF: 2s/6s)", burst);
			memcpy(on, burst, (size_t)(slash - burst));
			on[slash - burst] = 0;
			if (opt_duration(on, 0, &s.on) || opt_duration(slash + 1, 0, &s.off) ||
			    s.on <= 0 || s.off <= 0)
				opt_usage_error("bad burst '%s' (expected ON/OFF: 2s/6s)", burst);
			s.start_rt = (clock_realtime_ns() / NTPX_NS_PER_SEC + 1) * NTPX_NS_PER_SEC;
		}
		if (start) {
			int64_t v;

			if (!burst)
				opt_usage_error("--start goes with --burst");
			if (opt_duration(start, 0, &v))
				opt_usage_error("bad start '%s' (Unix seconds)", start);
			s.start_rt = v;
		}
		if (frac || calibrate) {
			int64_t cd = calibrate && dur > 0 ? dur : 3 * NTPX_NS_PER_SEC;
			double cap = calibrate_path(&s, cd);

			if (cap < 0)
				ntpx_die(NTPX_EXIT_FAIL, "%s: send failed during calibration", ep.url);
			if (cap == 0)
				ntpx_die(NTPX_EXIT_FAIL, "%s: calibration failed: no report from a sink "
					 "(is 'loadgen --sink' running there?)", ep.url);
			if (calibrate) {
				/* Payload, and on the wire with the UDP, IPv4 and
				   Ethernet headers (42 bytes a datagram), which is what
				   a shaper such as HTB counts. */
				emit("capacity_bps %.0f\ncapacity_gbps %.6f\ncapacity_l2_bps %.0f\n",
				     cap, cap / 1e9, cap * (double)(s.size + 42) / (double)s.size);
				emit_flush();
				if (out_state == OUT_OK)
					fprintf(stderr, "%s: %s sustained %.6f Gbit/s of %zu-byte datagrams\n",
						opt_prog, ep.url, cap / 1e9, s.size);
				rc = out_exit_code(out_state);
				goto done;
			}
			s.rate = frac * cap;
			fprintf(stderr, "%s: calibrated %.6f Gbit/s, sending at %.6f Gbit/s\n",
				opt_prog, cap / 1e9, s.rate / 1e9);
			s.run += 2;	/* a new run for the sink */
		}
		s.duration = dur < 0 ? 10 * NTPX_NS_PER_SEC : dur;
		rc = run_sender(&s);
	}
done:
	transport_close(t);
	return out_state == OUT_FAILED ? NTPX_EXIT_FAIL : rc;
}
