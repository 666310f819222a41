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
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "loadproto.h"
#include "nts_ke.h"
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

/* An absolute rate (800M, 6G, 100k): a percentage is a usage error. */
static double rate_abs(const char *arg, const char *what)
{
	double v;
	int frac;

	if (opt_rate(arg, &v, &frac) || frac)
		opt_usage_error("bad %s '%s' (expected e.g. 800M, 6G, 100k)", what, arg);
	return v;
}

/*
 * The sender's and the flood's values, checked here, before the endpoint
 * is opened (a bad one is a usage error whatever the path).  @a holds the
 * strings as given, NULL when not.
 */
struct load_args {
	const char *rate, *capacity, *size, *burst, *start, *ntp;
};

static void load_values(const struct load_args *a, struct load_opts *o)
{
	if (a->size) {
		uint64_t v;

		if (opt_count(a->size, MAX_DGRAM, &v) || v < LOAD_HDR_LEN)
			opt_usage_error("bad size '%s' (%d..%d bytes)", a->size, LOAD_HDR_LEN, MAX_DGRAM);
		o->size = (size_t)v;
	}
	if (a->rate) {
		int isfrac;
		double v;

		if (opt_rate(a->rate, &v, &isfrac))
			opt_usage_error("bad rate '%s' (expected 90%%, 6G, 800M)", a->rate);
		if (isfrac)
			o->frac = v;
		else
			o->rate = v;
	}
	if (a->capacity) {
		double cap = rate_abs(a->capacity, "capacity");

		if (!o->frac)
			opt_usage_error("--capacity goes with --rate N%%");
		o->rate = o->frac * cap;
		o->frac = 0;
	}
	if (a->burst) {
		char on[64], *slash = strchr(a->burst, '/');

		if (!slash || (size_t)(slash - a->burst) >= sizeof(on))
			opt_usage_error("bad burst '%s' (expected ON/OFF: 2s/6s)", a->burst);
		memcpy(on, a->burst, (size_t)(slash - a->burst));
		on[slash - a->burst] = 0;
		if (opt_duration(on, 0, &o->on) || opt_duration(slash + 1, 0, &o->off) ||
		    o->on <= 0 || o->off <= 0)
			opt_usage_error("bad burst '%s' (expected ON/OFF: 2s/6s)", a->burst);
	}
	if (a->start) {
		if (!a->burst)
			opt_usage_error("--start goes with --burst");
		if (opt_duration(a->start, 0, &o->start))
			opt_usage_error("bad start '%s' (Unix seconds)", a->start);
	}
	if (a->ntp)
		o->ntp = rate_abs(a->ntp, "--ntp rate");
}

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
	       "      --calibrate       send flat out, print the rate the sink sustained\n"
	       "  -k, --sink            receive, report to each sender, print intervals\n"
	       "      --ntp RATE        NTP requests per second (100k), count replies\n"
	       "  -w, --timeout DUR     --ntp: how long to wait for late replies (200ms)\n"
	       "      --nts[=HOST[:PORT]]  --ntp: NTS-KE at HOST (default: the endpoint's)\n"
	       "                       port PORT (4460) first, then every request with\n"
	       "                       NTS fields, sealed (RFC 8915)\n"
	       "      --nts-port PORT  with --nts: NTS-KE's port (4460), as ntpreflect's\n"
	       "      --ca FILE        with --nts: the CA certificates to trust (PEM)\n"
	       "      --no-gso          one datagram per message\n"
	       "  -u, --user NAME       run as NAME once the endpoint is open\n"
	       "  -4, -6                resolve HOST to an IPv4 / IPv6 address only\n"
	       "  -h, --help            this text\n"
	       "      --version         the version\n",
	       ntpx_prog, ntpx_prog, ntpx_prog, ntpx_prog);
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

int main(int argc, char **argv)
{
	enum { OPT_CALIBRATE = 256, OPT_NTP, OPT_NTS, OPT_NTS_PORT, OPT_CA };
	static const struct option longopts[] = {
		{ "rate", required_argument, NULL, 'r' },
		{ "capacity", required_argument, NULL, 'C' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "burst", required_argument, NULL, 'b' },
		{ "start", required_argument, NULL, 'S' },
		{ "interval", required_argument, NULL, 'i' },
		{ "calibrate", no_argument, NULL, OPT_CALIBRATE },
		{ "sink", no_argument, NULL, 'k' },
		{ "ntp", required_argument, NULL, OPT_NTP },
		{ "nts", optional_argument, NULL, OPT_NTS },
		{ "nts-port", required_argument, NULL, OPT_NTS_PORT },
		{ "ca", required_argument, NULL, OPT_CA },
		{ "timeout", required_argument, NULL, 'w' },
		{ "no-gso", no_argument, NULL, 'G' },
		{ "user", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct load_opts o = { .gso = 1, .interval = NTPX_NS_PER_SEC,
			       .timeout = 200 * NTPX_NS_PER_MS, .duration = -1, .start = -1 };
	struct load_args a = { 0 };
	const char *duration = NULL, *user = NULL, *nts_arg = NULL, *nts_port = NULL;
	int sink = 0, c, rc, family = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct transport *t;
	struct endpoint ep;
	char err[256];

	opt_init(argv);
	while ((c = getopt_long(argc, argv, "r:C:s:d:b:S:i:kw:u:46hcn:", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': a.rate = optarg; break;
		case 'C': a.capacity = optarg; break;
		case 's': a.size = optarg; break;
		case 'd': duration = optarg; break;
		case 'b': a.burst = optarg; break;
		case 'S': a.start = optarg; break;
		case 'i':
			if (opt_duration(optarg, 0, &o.interval) || o.interval < 10 * NTPX_NS_PER_MS)
				opt_usage_error("bad interval '%s' (at least 10ms)", optarg);
			break;
		/* -c and -n: the old spellings (ntpx(7), OPTIONS). */
		case 'c': opt_old("-c", "--calibrate"); /* fall through */
		case OPT_CALIBRATE: o.calibrate = 1; break;
		case 'k': sink = 1; break;
		case 'n': opt_old("-n", "--ntp"); /* fall through */
		case OPT_NTP: a.ntp = optarg; break;
		case OPT_NTS: o.nts = 1; nts_arg = optarg; break;
		case OPT_NTS_PORT: nts_port = optarg; break;
		case OPT_CA: o.ca = optarg; break;
		case 'w':
			/* As ntpprobe's: no wait at all is not a timeout. */
			if (opt_duration(optarg, 0, &o.timeout) || o.timeout <= 0)
				opt_usage_error("bad timeout '%s'", optarg);
			break;
		case 'G': o.gso = 0; break;
		case 'u': user = optarg; break;
		case '4': family = AF_INET; break;
		case '6': family = AF_INET6; break;
		default: opt_other(c, usage);
		}
	}
	opt_endpoint(argc, argv, optind, &ep);
	ep.family = family;
	o.url = ep.url;
	o.ntp_host = ep.host;
	o.ntp_port = ep.port;
	if (sink + o.calibrate + !!a.ntp > 1)
		opt_usage_error("--sink, --calibrate and --ntp go alone");
	if ((sink || a.ntp) && (a.rate || a.capacity || a.size || a.burst || a.start))
		opt_usage_error("--rate, --capacity, --size, --burst, --start are for the sender");
	if (o.calibrate && (a.rate || a.burst))
		opt_usage_error("--calibrate sends flat out: no --rate or --burst");
	if ((o.nts || o.ca) && !a.ntp)
		opt_usage_error("--nts and --ca are for --ntp");
	if (o.ca && !o.nts)
		opt_usage_error("--ca needs --nts");
	if (nts_port && !o.nts)
		opt_usage_error("--nts-port needs --nts");
	o.family = family;
	if (o.nts && nts_ke_server_parse(nts_arg, ep.host, o.nts_host, sizeof(o.nts_host), o.nts_port) < 0)
		opt_usage_error("bad NTS-KE server '%s'", nts_arg ? nts_arg : ep.host);
	opt_nts_port(nts_arg, nts_port, o.nts_port);
	if (duration && (opt_duration(duration, 0, &o.duration)))
		opt_usage_error("bad duration '%s'", duration);
	load_values(&a, &o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	out_init();

	/* The schedule first: a bad one opens nothing. */
	if (opt_loss_env(&ep.loss, err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	t = transport_open(&ep, sink ? TRANSPORT_SERVER : TRANSPORT_CLIENT, err, sizeof(err));
	if (!t)
		opt_open_failed(err);
	ntpx_err_lines(transport_warnings(t));

	if (sink || a.ntp)
		deep_rcvbuf(t);
	/* The socket is bound and its buffer forced: root is no longer needed. */
	if (user && priv_drop(user, priv_transport_caps(&ep, sink ? TRANSPORT_SERVER :
							 TRANSPORT_CLIENT), err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (sink)
		rc = run_sink(t, o.interval, o.duration < 0 ? 0 : o.duration);
	else if (a.ntp)
		rc = flood_main(t, &o);
	else
		rc = sender_main(t, &o);
	transport_close(t);
	return loadgen_out == OUT_FAILED ? NTPX_EXIT_FAIL : rc;
}
