/* SPDX-License-Identifier: ISC */
/*
 * ntpprobe - NTP client: one exchange per interval, one record per
 * exchange on stdout.
 *
 * The request's transmit timestamp is a random nonce, not T1 (as chrony's
 * client does): T1 is kept here, so the server's reply is matched by its
 * origin timestamp and nothing on the wire tells an observer our clock.
 *
 *   T1  read immediately before the request is submitted (in the backend)
 *   T2  the server's receive timestamp, from the reply
 *   T3  the server's transmit timestamp, from the reply
 *   T4  read immediately after the reply's receive returned (in the backend)
 *
 *   delay = (T4 - T1) - (T3 - T2)        off2 = (T2 - T1) + (T3 - T4)
 *
 * With a sim: clock (--clock), each record also carries true2, twice the
 * true offset (reference minus client) at the exchange's midpoint: the sim
 * clock reads CLOCK_REALTIME r and returns r + e(r), so T1 - r1 = e(r1)
 * and T4 - r4 = e(r4) exactly, and true2 = -(e(r1) + e(r4)), which is
 * -2 e((r1 + r4) / 2) without losing the half nanosecond wherever e is
 * linear across the exchange.  --discipline runs OpenNTPD's filter and
 * control loop (lib/discipline.h) on that clock.
 *
 * Where the path offers them (lib/transport.h), the layers below stamp
 * too: t1q t1k t1h, t4k t4h (lib/stamp.h).  --xleave asks the server for
 * interleaved mode (lib/xleave.h): the reply to request n then carries
 * the server's better transmit stamp of reply n-1, so record n-1 is
 * written only when reply n has come, with t2k t3q t3k from the server.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "clock.h"
#include "hist.h"
#include "discipline.h"
#include "ntp.h"
#include "opt.h"
#include "out.h"
#include "priv.h"
#include "record.h"
#include "stamp.h"
#include "transport.h"
#include "xleave.h"

#define RECV_CAP	2048

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

struct probe {
	struct transport *t;
	struct clock *clk;
	enum transport_poll poll;
	int64_t timeout;		/* ns */
	uint64_t counts[RECORD_NSTATUS];
	uint64_t sent, late;
	int failed;			/* the discipline could not act on the clock */
	struct hist *delays;		/* of ok exchanges, for the summary's median */
	int64_t ref1;			/* CLOCK_REALTIME behind T1 (sim: clocks) */
	char kiss[5];			/* the last exchange's kiss code, or "" */
	int8_t kiss_poll;		/* ... and the poll its reply asked for */
	int stamping;			/* stamp columns written */
	int xleave;			/* --xleave */
	uint64_t srv_rec;		/* the receive timestamp of the last good
					   reply, as sent (0: none) */
	uint64_t interleaved;		/* replies in interleaved mode */
};

/* One exchange as it will be written. */
struct probe_out {
	struct record_exchange x;
	struct stamp_row s;
	int64_t true2;
	int has_true2;
};

/* What a reply said beyond its record, for --xleave. */
struct xleave_reply {
	int interleaved;		/* it answered in interleaved mode */
	int has_ef;			/* it carried the ntpx field */
	struct xleave_ef ef;
	int64_t xmt;			/* its transmit timestamp, ns */
};

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] ENDPOINT\n"
	       "Send NTP client requests to ENDPOINT, one per interval, and write one\n"
	       "record per exchange (T1..T4 in ns, delay, off2, status) on stdout.\n\n"
	       "  -i, --interval DUR   time between requests (default 1s)\n"
	       "  -c, --count N        stop after N exchanges\n"
	       "  -d, --duration DUR   stop after DUR\n"
	       "  -w, --timeout DUR    wait for a reply at most DUR (default: the\n"
	       "                       interval, at most 1s)\n"
	       "      --poll MODE      block (sleep in the kernel, default) or busy\n"
	       "                       (spin on a non-blocking receive)\n"
	       "      --cpu N          pin to CPU N\n"
	       "      --clock NAME     read T1/T4 from NAME: realtime (default) or\n"
	       "                       sim:PATH (adds the true2 column)\n"
	       "      --discipline     filter and correct the clock as OpenNTPD does\n"
	       "                       (adds the filter's columns and corr adj dfreq)\n"
	       "      --step-threshold DUR  with --discipline: step the clock at the\n"
	       "                       first reply when its offset is above DUR\n"
	       "      --discipline-params K=V,...  window, freq-samples, max-freq\n"
	       "      --no-stamps      no kernel or hardware stamps (t1q t1k ... t4h)\n"
	       "      --xleave         ask for interleaved mode: the server's own stamps\n"
	       "                       of each exchange fill t2k t3q t3k\n"
	       "      --user NAME      run as NAME once the endpoint is open\n"
	       "  -h, --help           this help\n"
	       "      --version        print the version\n\n"
	       "ENDPOINT: udp://HOST[:PORT][?dev=IF&src=ADDR] (port 123 by default),\n"
	       "uudp://HOST:PORT?dev=IF[&via=xdp|verbs][&mac=MAC], ib://HOST[:PORT][?dev=DEV].\n"
	       "A summary goes to stderr at exit; SIGINT/SIGTERM end the run after\n"
	       "the current exchange.\n", opt_prog);
}

static uint64_t nonce(void)
{
	uint64_t v = 0;

	/* getrandom() of 8 bytes is never cut short (under 256 bytes);
	   zero is refused because RFC 5905 reads it as "no timestamp". */
	do
		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			ntpx_die(NTPX_EXIT_FAIL, "getrandom: %s", strerror(errno));
	while (v == 0);
	return v;
}


/*
 * What a reply that answers our request says about the server: ok, or why
 * its timestamps must not be used (RFC 5905 section 8, the client checks;
 * lib/ntp.h ntp_judge).  A kiss code is kept in p->kiss for the schedule.
 */
static enum record_status judge(struct probe *p, const struct ntp_packet *r)
{
	switch (ntp_judge(r)) {
	case NTP_VERDICT_KISS:
		ntp_kiss_code(r, p->kiss);
		p->kiss_poll = r->poll;
		return RECORD_KOD;
	case NTP_VERDICT_UNSYNCED:
		return RECORD_UNSYNCED;
	case NTP_VERDICT_BOGUS:
		return RECORD_BOGUS;
	default:
		return RECORD_OK;
	}
}

/* The stamps the layers below took of request and reply. */
static void exchange_stamps(struct probe *p, uint32_t txid, int replied, struct probe_out *o)
{
	struct transport_stamps ts;

	if (!p->stamping)
		return;
	if (replied) {
		transport_rx_stamps(p->t, p->clk, &ts);
		o->s.v[STAMP_T4K] = ts.at[TRANSPORT_LAYER_K];
		o->s.v[STAMP_T4H] = ts.at[TRANSPORT_LAYER_H];
	}
	/* The request's send stamps came before the reply could: wait for
	   them only briefly. */
	transport_tx_stamps(p->t, txid, p->clk, &ts,
			    replied ? clock_monotonic_ns() + 10000000 : 0);
	o->s.v[STAMP_T1Q] = ts.at[TRANSPORT_LAYER_Q];
	o->s.v[STAMP_T1K] = ts.at[TRANSPORT_LAYER_K];
	o->s.v[STAMP_T1H] = ts.at[TRANSPORT_LAYER_H];
}

/* One exchange; fills @o, and @xr for --xleave. */
static void exchange(struct probe *p, uint64_t seq, struct probe_out *o, struct xleave_reply *xr)
{
	unsigned char req[NTP_HEADER_LEN + XLEAVE_EF_LEN], buf[RECV_CAP];
	struct record_exchange *x = &o->x;
	struct ntp_packet q = {
		.leap = NTP_LEAP_ALARM,	/* a client is unsynchronised to its server */
		.version = 4,
		.mode = NTP_MODE_CLIENT,
		.poll = 0,
		.precision = -20,
	};
	int64_t deadline, stamp;
	size_t reqlen = NTP_HEADER_LEN;
	uint32_t txid = 0;
	int saw_other = 0;
	int rc;

	memset(o, 0, sizeof(*o));
	memset(xr, 0, sizeof(*xr));
	memset(p->kiss, 0, sizeof(p->kiss));
	stamp_row_clear(&o->s);
	x->seq = seq;
	q.xmt = nonce();
	if (p->xleave) {
		/* RFC 9769: the origin names the server's last receive
		   stamp; the receive field is a nonce the server echoes in
		   an interleaved reply (our own clock stays off the wire). */
		q.org = p->srv_rec;
		do
			q.rec = nonce();
		while (q.rec == q.xmt);
	}
	ntp_encode(&q, req);
	if (p->xleave) {
		struct xleave_ef none = { .have = 0 };

		xleave_ef_put(req + NTP_HEADER_LEN, &none);
		reqlen += XLEAVE_EF_LEN;
	}
	p->srv_rec = 0;

	/* Replies that arrived after their exchange timed out are late:
	   drain them now so that they cannot be taken for this one. */
	while (transport_recv(p->t, buf, sizeof(buf), NULL, p->clk, &stamp) >= 0)
		p->late++;

	rc = transport_send(p->t, req, reqlen, NULL, p->clk,
			    p->stamping ? TRANSPORT_STAMP_SEND : 0, &x->t[0]);
	if (rc < 0) {
		x->have = 1;
		x->status = rc == -ECONNREFUSED ? RECORD_REFUSED : RECORD_ERROR;
		return;
	}
	x->have = 1;
	p->ref1 = clock_last_ref(p->clk);
	if (rc == TRANSPORT_DROPPED) {	/* lossinject: never submitted */
		x->status = RECORD_DROPPED;
		return;
	}
	txid = transport_tx_id(p->t);
	p->sent++;
	deadline = clock_monotonic_ns() + p->timeout;
	for (;;) {
		struct ntp_packet r;
		int64_t t4;
		ssize_t n = transport_recv_wait(p->t, buf, sizeof(buf), NULL, p->clk, &t4,
						deadline, p->poll);

		if (n == -EINTR)	/* a signal: finish this exchange first */
			continue;
		if (n == -ETIMEDOUT) {
			x->status = saw_other ? RECORD_BOGUS : RECORD_TIMEOUT;
			exchange_stamps(p, txid, 0, o);
			return;
		}
		if (n == -ECONNREFUSED) {
			x->status = RECORD_REFUSED;
			return;
		}
		if (n < 0) {
			x->status = RECORD_ERROR;
			return;
		}
		if (n > (ssize_t)sizeof(buf) || ntp_decode(buf, (size_t)n, &r) ||
		    r.mode != NTP_MODE_SERVER ||
		    !(r.org == q.xmt || (p->xleave && q.org && r.org == q.rec))) {
			/* Not an answer to this request: keep waiting for one,
			   but remember that something else came. */
			saw_other = 1;
			continue;
		}
		x->status = judge(p, &r);
		x->t[3] = t4;
		x->have |= 1u << 3;
		exchange_stamps(p, txid, 1, o);
		/* An unsynchronised server's timestamps are its own: kept, when
		   it sent them; a kiss carries none. */
		if (x->status == RECORD_OK ||
		    (x->status == RECORD_UNSYNCED && r.rec != 0 && r.xmt != 0)) {
			/* Era: the server's time is near ours (RFC 5905 6). */
			xr->interleaved = p->xleave && r.org == q.rec;
			x->t[1] = ntp_ts_to_ns(r.rec, x->t[0]);
			x->have |= 1u << 1;
			xr->xmt = ntp_ts_to_ns(r.xmt, x->t[0]);
			if (!xr->interleaved) {
				x->t[2] = xr->xmt;
				x->have |= 1u << 2;
			}
			if (p->xleave) {
				xr->has_ef = ntp_check_trailer(buf, (size_t)n) == 0 &&
					     xleave_ef_find(buf, (size_t)n, &xr->ef);
				p->srv_rec = r.rec;
				/* A basic reply's field is this exchange's. */
				if (xr->has_ef && !xr->interleaved &&
				    xr->ef.have & 1u << XEF_T2K)
					o->s.v[STAMP_T2K] = xr->ef.at[XEF_T2K];
				if (xr->has_ef && !xr->interleaved &&
				    xr->ef.have & 1u << XEF_T2H)
					o->s.v[STAMP_T2H] = xr->ef.at[XEF_T2H];
			}
		}
		return;
	}
}

/*
 * Completes the record of the previous exchange from an interleaved
 * reply: the server's stamps from its field, else its transmit timestamp
 * as t3k (the better stamp RFC 9769 has the server send).
 */
static void xleave_complete(struct probe_out *prev, const struct xleave_reply *xr)
{
	struct record_exchange *x = &prev->x;

	if (xr->has_ef) {
		const struct xleave_ef *e = &xr->ef;

		if (e->have & 1u << XEF_T2) {
			x->t[1] = e->at[XEF_T2];
			x->have |= 1u << 1;
		}
		if (e->have & 1u << XEF_T3) {
			x->t[2] = e->at[XEF_T3];
			x->have |= 1u << 2;
		}
		if (e->have & 1u << XEF_T2K)
			prev->s.v[STAMP_T2K] = e->at[XEF_T2K];
		if (e->have & 1u << XEF_T3Q)
			prev->s.v[STAMP_T3Q] = e->at[XEF_T3Q];
		if (e->have & 1u << XEF_T2H)
			prev->s.v[STAMP_T2H] = e->at[XEF_T2H];
		if (e->have & 1u << XEF_T3H)
			prev->s.v[STAMP_T3H] = e->at[XEF_T3H];
		if (e->have & 1u << XEF_T3K)
			prev->s.v[STAMP_T3K] = e->at[XEF_T3K];
		return;
	}
	prev->s.v[STAMP_T3K] = xr->xmt;
	if (!(x->have & 1u << 2)) {
		x->t[2] = xr->xmt;
		x->have |= 1u << 2;
	}
}

static void summary(struct probe *p)
{
	uint64_t lost = p->counts[RECORD_TIMEOUT] + p->counts[RECORD_DROPPED];
	char med[32] = "-", ctr[1024];
	int i;

	/* From the histogram: within 0.39% (hist.h), in constant memory. */
	if (p->delays->n)
		snprintf(med, sizeof(med), "%.3f us", hist_median(p->delays) / 1e3);
	fprintf(stderr, "%s: sent %llu, ok %llu, lost %llu", opt_prog,
		(unsigned long long)p->sent, (unsigned long long)p->counts[RECORD_OK],
		(unsigned long long)lost);
	for (i = 0; i < RECORD_NSTATUS; i++)
		if (i != RECORD_OK && i != RECORD_TIMEOUT && i != RECORD_DROPPED && p->counts[i])
			fprintf(stderr, ", %s %llu", record_status_name(i),
				(unsigned long long)p->counts[i]);
	if (p->late)
		fprintf(stderr, ", late %llu", (unsigned long long)p->late);
	if (p->xleave)
		fprintf(stderr, ", interleaved %llu", (unsigned long long)p->interleaved);
	fprintf(stderr, ", median delay %s\n", med);
	transport_counters(p->t, ctr, sizeof(ctr));
	if (ctr[0])
		fprintf(stderr, "%s: transport %s\n", opt_prog, ctr);
}

/*
 * Counts and writes one record.  Returns -1 when the run must end: the
 * discipline failed (p->failed), or the output did (*out, lib/out.h).
 */
static int emit(struct probe *p, struct discipline *disc, struct probe_out *o, int truth,
		int *out)
{
	struct record_exchange *x = &o->x;
	char line[768];
	int len;

	/* --xleave: an interleaved reply whose transmit stamp never came
	   (the next exchange failed or the run ended). */
	if (x->status == RECORD_OK && x->have != RECORD_HAVE_ALL)
		x->status = RECORD_TIMEOUT;
	p->counts[x->status]++;
	if (x->status == RECORD_OK)
		hist_add(p->delays, record_delay(x->t));
	len = record_format(line, sizeof(line), x);
	if (truth && o->has_true2 && x->have == RECORD_HAVE_ALL)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %lld",
				(long long)o->true2);
	else if (truth)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " -");
	if (disc) {
		struct discipline_out d;
		char err[256];
		int ok = x->status == RECORD_OK && x->have == RECORD_HAVE_ALL;

		if (discipline_sample(disc, ok ? RECORD_OK : x->status == RECORD_OK ?
				      RECORD_ERROR : x->status,
				      ok ? record_off2(x->t) : 0, ok ? record_delay(x->t) : 0,
				      &d, err, sizeof(err))) {
			ntpx_err("%s", err);
			p->failed = 1;
			return -1;
		}
		line[len++] = ' ';
		len += discipline_format(line + len, sizeof(line) - (size_t)len, &d);
	}
	if (p->stamping)
		stamp_format(line + len, sizeof(line) - (size_t)len, &o->s);
	/* A closed pipe stops the run as its end would; a full disk ends it
	   with the error instead of the summary (lib/out.h). */
	if (printf("%s\n", line) < 0)
		*out = out_failed("standard output", errno);
	else
		*out = out_flush(stdout, "standard output");
	return *out == OUT_OK ? 0 : -1;
}

/* Sleeps until @when (CLOCK_MONOTONIC ns); returns early on a signal. */
static void sleep_until(int64_t when)
{
	struct timespec ts = { .tv_sec = when / 1000000000, .tv_nsec = when % 1000000000 };

	while (!stopping && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 'w' },
		{ "poll", required_argument, NULL, 'P' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "clock", required_argument, NULL, 'K' },
		{ "discipline", no_argument, NULL, 'D' },
		{ "step-threshold", required_argument, NULL, 'T' },
		{ "discipline-params", required_argument, NULL, 'X' },
		{ "no-stamps", no_argument, NULL, 'N' },
		{ "xleave", no_argument, NULL, 'x' },
		{ "user", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct probe p = { .poll = TRANSPORT_POLL_BLOCK, .timeout = -1 };
	int64_t interval = NTPX_NS_PER_SEC, duration = -1, start, end, when;
	uint64_t count = UINT64_MAX, seq, cpu = UINT64_MAX;
	const char *clockname = "realtime", *user = NULL;
	struct discipline_params dp;
	struct discipline *disc = NULL;
	char fields[512];
	int discipline = 0, truth, step_given = 0, nostamps = 0;
	struct probe_out pending = { .x.seq = 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct endpoint ep;
	char err[256];
	int c, out, kissed_off = 0;

	opt_init(argv[0]);
	discipline_defaults(&dp);
	while ((c = getopt_long(argc, argv, "i:c:d:w:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (opt_duration(optarg, 0, &interval) || interval <= 0)
				opt_usage_error("bad interval '%s'", optarg);
			break;
		case 'c':
			if (opt_count(optarg, UINT64_MAX, &count) || count == 0)
				opt_usage_error("bad count '%s'", optarg);
			break;
		case 'd':
			if (opt_duration(optarg, 0, &duration) || duration <= 0)
				opt_usage_error("bad duration '%s'", optarg);
			break;
		case 'w':
			if (opt_duration(optarg, 0, &p.timeout) || p.timeout <= 0)
				opt_usage_error("bad timeout '%s'", optarg);
			break;
		case 'U':
			user = optarg;
			break;
		case 'P':
			if (transport_poll_parse(optarg, &p.poll))
				opt_usage_error("bad poll mode '%s' (block or busy)", optarg);
			break;
		case 'C':
			if (opt_count(optarg, CPU_SETSIZE - 1, &cpu))
				opt_usage_error("bad cpu '%s'", optarg);
			break;
		case 'K':
			clockname = optarg;
			break;
		case 'D':
			discipline = 1;
			break;
		case 'T':
			if (opt_duration(optarg, 0, &dp.step_threshold) || dp.step_threshold <= 0)
				opt_usage_error("bad step threshold '%s'", optarg);
			step_given = 1;
			break;
		case 'X':
			if (discipline_parse(&dp, optarg, err, sizeof(err)))
				opt_usage_error("%s", err);
			break;
		case 'N':
			nostamps = 1;
			break;
		case 'x':
			p.xleave = 1;
			break;
		default:
			opt_other(c, usage);
		}
	}
	endpoint_from_args(argc, argv, optind, &ep);
	if (step_given && !discipline)
		opt_usage_error("--step-threshold needs --discipline");
	if (p.timeout < 0)
		p.timeout = interval < NTPX_NS_PER_SEC ? interval : NTPX_NS_PER_SEC;

	if (cpu != UINT64_MAX) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			ntpx_die(NTPX_EXIT_FAIL, "cannot pin to cpu %llu: %s",
				 (unsigned long long)cpu, strerror(errno));
	}
	p.clk = clock_open(clockname, err, sizeof(err));
	if (!p.clk)
		ntpx_die(NTPX_EXIT_USAGE, "%s", err);
	{
		int64_t e;

		truth = clock_true_error(p.clk, 0, &e) == 0;
	}
	if (discipline) {
		disc = discipline_create(p.clk, &dp, err, sizeof(err));
		if (!disc)
			ntpx_die(NTPX_EXIT_USAGE, "%s", err);
	}
	p.delays = calloc(1, sizeof(*p.delays));
	if (!p.delays)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	p.t = transport_open(&ep, TRANSPORT_CLIENT, err, sizeof(err));
	if (!p.t)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (user && priv_drop(user, priv_transport_caps(&ep, TRANSPORT_CLIENT), err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);

	/* No SA_RESTART: a signal must wake the sleep and the wait. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	out_init();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!nostamps) {
		int l;

		if (transport_stamps_enable(p.t, err, sizeof(err)))
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", ep.url, err);
		for (l = 0; l < TRANSPORT_NLAYERS; l++)
			if (transport_stamp_source(p.t, 1, l) || transport_stamp_source(p.t, 0, l))
				p.stamping = 1;
		p.stamping |= p.xleave;
	}
	snprintf(fields, sizeof(fields), "%s%s%s%s", RECORD_BASE_FIELDS, truth ? " true2" : "",
		 disc ? " " DISCIPLINE_FIELDS : "", p.stamping ? " " STAMP_FIELDS : "");
	out = OUT_OK;
	if (record_write_header(stdout, "ntpprobe", ep.url, clock_name(p.clk), fields))
		out = out_failed("standard output", errno);
	if (out == OUT_OK && p.stamping) {
		const char *src[STAMP_NCOLS] = {
			[STAMP_T1Q] = transport_stamp_source(p.t, 1, TRANSPORT_LAYER_Q),
			[STAMP_T1K] = transport_stamp_source(p.t, 1, TRANSPORT_LAYER_K),
			[STAMP_T1H] = transport_stamp_source(p.t, 1, TRANSPORT_LAYER_H),
			[STAMP_T4K] = transport_stamp_source(p.t, 0, TRANSPORT_LAYER_K),
			[STAMP_T4H] = transport_stamp_source(p.t, 0, TRANSPORT_LAYER_H),
		};

		if (p.xleave) {
			src[STAMP_T2K] = src[STAMP_T3Q] = "server:ntpx-ef";
			src[STAMP_T2H] = src[STAMP_T3H] = "server:ntpx-ef";
			src[STAMP_T3K] = "server:ntpx-ef|interleaved-xmt";
		}
		if (stamp_write_sources(stdout, src))
			out = out_failed("standard output", errno);
	}
	if (out == OUT_OK)
		out = out_flush(stdout, "standard output");
	start = clock_monotonic_ns();
	end = duration > 0 ? start + duration : INT64_MAX;
	when = start;
	for (seq = 1; seq <= count && !stopping && out == OUT_OK && !kissed_off;
	     seq++, when += interval) {
		struct probe_out o;
		struct xleave_reply xr;

		if (when >= end)
			break;
		sleep_until(when);
		if (stopping)
			break;
		exchange(&p, seq, &o, &xr);
		if (truth && (o.x.have & 9u) == 9u) {
			o.true2 = -((o.x.t[0] - p.ref1) + (o.x.t[3] - clock_last_ref(p.clk)));
			o.has_true2 = 1;
		}
		/* A re-resolved peer (restarted server, new path): say so in
		   the stream, and start the filter afresh before this sample. */
		if (transport_peer_reset(p.t) == 1) {
			if (pending.x.seq && emit(&p, disc, &pending, truth, &out))
				break;
			pending.x.seq = 0;
			if (printf("#reset seq %llu\n", (unsigned long long)seq) < 0 &&
			    (out = out_failed("standard output", errno)) != OUT_OK)
				break;
			if (disc)
				discipline_peer_reset(disc);
		}
		/* RFC 5905 7.4: RATE asks for fewer requests, DENY and RSTR
		   for none (the run ends once this record is written); other
		   codes only inform. */
		if (o.x.status == RECORD_KOD && strcmp(p.kiss, "RATE") == 0) {
			/* The next request one new interval from now, not from
			   this one's schedule, which may have slipped. */
			interval = ntp_backoff_ns(interval, p.kiss_poll);
			when = clock_monotonic_ns();
			ntpx_err("%s: kiss code RATE: interval now %.3f s", ep.url,
				 (double)interval / 1e9);
		} else if (o.x.status == RECORD_KOD &&
			   (strcmp(p.kiss, "DENY") == 0 || strcmp(p.kiss, "RSTR") == 0)) {
			ntpx_err("%s: kiss code %s: the server refuses service, stopping",
				 ep.url, p.kiss);
			kissed_off = 1;
		}
		if (!p.xleave) {
			if (emit(&p, disc, &o, truth, &out))
				break;
			continue;
		}
		/* --xleave: the previous exchange is complete now. */
		if (xr.interleaved) {
			p.interleaved++;
			if (pending.x.seq)
				xleave_complete(&pending, &xr);
		}
		if (pending.x.seq && emit(&p, disc, &pending, truth, &out))
			break;
		pending.x.seq = 0;
		if ((o.x.status == RECORD_OK || o.x.status == RECORD_UNSYNCED) && !kissed_off)
			pending = o;
		else if (emit(&p, disc, &o, truth, &out))
			break;
	}
	/* The last interleaved record waits for a reply that would carry
	   its transmit stamp: one more request fetches it. */
	if (pending.x.seq && !(pending.x.have & 1u << 2) && !stopping && out == OUT_OK &&
	    !kissed_off && !p.failed) {
		struct probe_out o;
		struct xleave_reply xr;

		exchange(&p, seq, &o, &xr);
		if (xr.interleaved) {
			p.interleaved++;
			xleave_complete(&pending, &xr);
		}
	}
	if (pending.x.seq && out == OUT_OK && !p.failed)
		emit(&p, disc, &pending, truth, &out);
	if (out != OUT_FAILED)
		summary(&p);
	transport_close(p.t);
	discipline_free(disc);
	clock_close(p.clk);
	free(p.delays);
	return p.failed || kissed_off || out == OUT_FAILED ? NTPX_EXIT_FAIL : NTPX_EXIT_OK;
}
