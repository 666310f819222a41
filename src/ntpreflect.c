/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect - an NTPv4 server for client-mode requests, on any transport.
 *
 *   T2  read immediately after the request's receive returned (backend)
 *   T3  read immediately before the reply is submitted (backend), and
 *       written into the reply's transmit timestamp
 *
 * It answers only what a server should: a well-formed client-mode (3)
 * request of version 1..4.  Control (6) and private (7) queries, other
 * modes, short, truncated or malformed datagrams are counted and never
 * answered, and a reply is never larger than its request (48 bytes: the
 * header only), so the server cannot be used to amplify traffic.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ntp.h"
#include "opt.h"
#include "out.h"
#include "record.h"
#include "transport.h"

#define RECV_CAP	2048

/* Why a datagram was not answered: counted, logged, never replied to. */
enum verdict {
	V_OK,
	V_SHORT,	/* shorter than an NTP header */
	V_TRUNCATED,	/* longer than we read: cut off */
	V_MALFORMED,	/* extension fields or MAC of no valid shape */
	V_VERSION,	/* version 0 or above 4 */
	V_CONTROL,	/* mode 6 */
	V_PRIVATE,	/* mode 7 */
	V_MODE,		/* any other mode than client */
	V_NVERDICT
};

static const char *const verdict_names[V_NVERDICT] = {
	"ok", "short", "truncated", "malformed", "version", "control", "private", "mode",
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] ENDPOINT\n"
	       "Serve NTPv4 to clients on ENDPOINT (udp://0.0.0.0:123, udp://127.0.0.1:12300,\n"
	       "uudp://*:123?dev=IF, ib://HOST:123).\n\n"
	       "  -s, --stratum N      stratum to announce, 1..15 (default 1)\n"
	       "  -r, --refid ID       reference ID, up to 4 ASCII characters (default NTPX)\n"
	       "  -n, --count N        exit after answering N requests\n"
	       "  -l, --log FILE       write server-side records to FILE (- for stdout)\n"
	       "      --poll MODE      block (default) or busy\n"
	       "  -h, --help           this help\n"
	       "      --version        print the version\n\n"
	       "Counts of what was answered and ignored go to stderr at exit.\n", opt_prog);
}

static enum verdict check(const unsigned char *buf, ssize_t n, struct ntp_packet *q)
{
	if (n > RECV_CAP)
		return V_TRUNCATED;
	/* Control and private queries have headers of their own (12 and 8
	   bytes), so they are told by the mode bits before the length. */
	if (n >= 1 && (buf[0] & 7) == NTP_MODE_CONTROL)
		return V_CONTROL;
	if (n >= 1 && (buf[0] & 7) == NTP_MODE_PRIVATE)
		return V_PRIVATE;
	if (ntp_decode(buf, (size_t)n, q))
		return V_SHORT;
	if (q->mode != NTP_MODE_CLIENT)
		return V_MODE;
	if (q->version < 1 || q->version > 4)
		return V_VERSION;
	if (ntp_check_trailer(buf, (size_t)n))
		return V_MALFORMED;
	return V_OK;
}

/*
 * The precision we announce: log2 of the time one clock reading takes,
 * rounded up (RFC 5905: "the precision of the system clock").
 */
static int8_t measure_precision(struct clock *clk)
{
	int64_t best = INT64_MAX;
	int i;

	for (i = 0; i < 64; i++) {
		int64_t a = clock_now(clk), b = clock_now(clk);

		if (b > a && b - a < best)
			best = b - a;
	}
	if (best == INT64_MAX)
		best = 1;
	return (int8_t)ceil(log2((double)best * 1e-9));
}

static uint32_t parse_refid(const char *s)
{
	uint32_t v = 0;
	size_t i, n = strlen(s);

	if (n == 0 || n > 4)
		return 0;
	for (i = 0; i < 4; i++) {
		unsigned char ch = i < n ? (unsigned char)s[i] : 0;

		if (i < n && (ch < 0x20 || ch > 0x7e))
			return 0;
		v = v << 8 | ch;
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stratum", required_argument, NULL, 's' },
		{ "refid", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'n' },
		{ "log", required_argument, NULL, 'l' },
		{ "poll", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	enum transport_poll pollmode = TRANSPORT_POLL_BLOCK;
	uint64_t stratum = 1, count = UINT64_MAX, answered = 0, seq = 0;
	uint64_t verdicts[V_NVERDICT] = { 0 }, send_errors = 0, dropped = 0;
	uint32_t refid = parse_refid("NTPX");
	const char *logpath = NULL, *logname = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct transport *t;
	struct clock *clk;
	struct endpoint ep;
	FILE *log = NULL;
	int8_t precision;
	struct ntp_packet reply;
	char err[256];
	int c, i, rc = 0, out = OUT_OK;

	opt_init(argv[0]);
	while ((c = getopt_long(argc, argv, "s:r:n:l:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (opt_count(optarg, 15, &stratum) || stratum < 1)
				opt_usage_error("bad stratum '%s' (1..15)", optarg);
			break;
		case 'r':
			refid = parse_refid(optarg);
			if (!refid)
				opt_usage_error("bad refid '%s' (1 to 4 printable ASCII characters)",
						optarg);
			break;
		case 'n':
			if (opt_count(optarg, UINT64_MAX, &count) || count == 0)
				opt_usage_error("bad count '%s'", optarg);
			break;
		case 'l':
			logpath = optarg;
			break;
		case 'P':
			if (transport_poll_parse(optarg, &pollmode))
				opt_usage_error("bad poll mode '%s' (block or busy)", optarg);
			break;
		default:
			opt_other(c, usage);
		}
	}
	endpoint_from_args(argc, argv, optind, &ep);
	/* Before the log's header: a reader gone by then is an EPIPE too. */
	out_init();

	clk = clock_open("realtime", err, sizeof(err));
	if (!clk)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	t = transport_open(&ep, TRANSPORT_SERVER, err, sizeof(err));
	if (!t)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (logpath) {
		log = strcmp(logpath, "-") == 0 ? stdout : fopen(logpath, "w");
		if (!log)
			ntpx_die(NTPX_EXIT_FAIL, "cannot open log '%s': %s", logpath, strerror(errno));
		logname = log == stdout ? "standard output" : logpath;
		setvbuf(log, NULL, _IOLBF, 0);
		if (record_write_header(log, "ntpreflect", ep.url, clock_name(clk),
					"seq t2 t3 peer version status"))
			out = out_failed(logname, errno);
	}
	precision = measure_precision(clk);
	/* What every reply says the same way.  A reference of our own: no
	   delay to it, the dispersion of one clock reading. */
	reply = (struct ntp_packet){
		.leap = NTP_LEAP_NONE,
		.mode = NTP_MODE_SERVER,
		.stratum = (uint8_t)stratum,
		.precision = precision,
		.root_delay = 0,
		.root_disp = ntp_short_from_ns((int64_t)ldexp(1e9, precision)),
		.refid = refid,
	};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* A log that cannot be written ends the server: quietly when its
	   reader went away, with the error otherwise (lib/out.h). */
	while (!stopping && answered < count && out == OUT_OK) {
		unsigned char buf[RECV_CAP];
		struct transport_addr from;
		struct ntp_packet q, r;
		enum verdict v;
		int64_t t2, t3 = 0;
		/* Busy polling cannot be woken by a signal: look up now and then. */
		int64_t deadline = pollmode == TRANSPORT_POLL_BUSY ?
			clock_monotonic_ns() + 100000000 : INT64_MAX;
		ssize_t n = transport_recv_wait(t, buf, sizeof(buf), &from, clk, &t2,
						deadline, pollmode);

		if (n == -EINTR || n == -ETIMEDOUT || n == -EAGAIN)
			continue;
		if (n < 0) {
			/* A client that went away leaves an ICMP error behind. */
			if (n == -ECONNREFUSED || n == -EHOSTUNREACH || n == -ENETUNREACH)
				continue;
			ntpx_die(NTPX_EXIT_FAIL, "receive: %s", strerror((int)-n));
		}
		seq++;
		v = check(buf, n, &q);
		verdicts[v]++;
		rc = 0;
		if (v == V_OK) {
			/* Between T2 and T3: only what depends on the request. */
			r = reply;
			r.version = q.version;
			r.poll = q.poll;
			/* Updated "now": the last second boundary before T2. */
			r.ref = ntp_ts_from_ns(t2 - t2 % NTPX_NS_PER_SEC);
			r.org = q.xmt;
			r.rec = ntp_ts_from_ns(t2);
			ntp_encode(&r, buf);
			rc = transport_send(t, buf, NTP_HEADER_LEN, &from, clk,
					    TRANSPORT_STAMP_XMT, &t3);
			if (rc < 0)
				send_errors++;
			else if (rc == TRANSPORT_DROPPED)	/* lossinject */
				dropped++;
			else
				answered++;
		}
		if (log) {
			char peer[128];
			int w;

			transport_addr_str(t, &from, peer, sizeof(peer));
			if (v == V_OK)
				w = fprintf(log, "%llu %lld %lld %s %u %s\n",
					    (unsigned long long)seq, (long long)t2, (long long)t3,
					    peer, q.version,
					    rc == TRANSPORT_DROPPED ? "dropped" : "ok");
			else
				w = fprintf(log, "%llu %lld - %s - %s\n", (unsigned long long)seq,
					    (long long)t2, peer, verdict_names[v]);
			if (w < 0)
				out = out_failed(logname, errno);
		}
	}
	if (log && out == OUT_OK)
		out = out_close(log, logname);
	else if (log && log != stdout)
		fclose(log);
	if (out == OUT_FAILED) {
		transport_close(t);
		clock_close(clk);
		return NTPX_EXIT_FAIL;
	}
	fprintf(stderr, "%s: answered %llu", opt_prog, (unsigned long long)answered);
	for (i = 1; i < V_NVERDICT; i++)
		if (verdicts[i])
			fprintf(stderr, ", %s %llu", verdict_names[i], (unsigned long long)verdicts[i]);
	if (dropped)
		fprintf(stderr, ", dropped %llu", (unsigned long long)dropped);
	if (send_errors)
		fprintf(stderr, ", send errors %llu", (unsigned long long)send_errors);
	fputc('\n', stderr);
	{
		char ctr[1024];

		transport_counters(t, ctr, sizeof(ctr));
		if (ctr[0])
			fprintf(stderr, "%s: transport %s\n", opt_prog, ctr);
	}
	transport_close(t);
	clock_close(clk);
	return NTPX_EXIT_OK;
}
