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
 * header only, or the header and the ntpx stamp field when the request
 * carried one of the same size), so the server cannot be used to amplify
 * traffic.
 *
 * Interleaved mode (RFC 9769, lib/xleave.h): a client whose request names
 * our last reply to it gets the better transmit stamp of that reply (the
 * kernel's, where the path stamps) instead of T3.  The state behind it is
 * one slot per client address in a table of --clients slots; at the bound
 * the least recently seen client of a bucket of four loses its slot and
 * gets a basic reply next.  The server's stamps of a reply come after it
 * went, so log lines wait in a short queue until they have come.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "access.h"
#include "clock.h"
#include "ntp.h"
#include "opt.h"
#include "out.h"
#include "priv.h"
#include "record.h"
#include "stamp.h"
#include "transport.h"
#include "xleave.h"

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
	V_DENIED,	/* from outside every --allow network */
	V_RATE,		/* over --ratelimit, not even a kiss */
	V_KISS,		/* over --ratelimit: answered with a RATE kiss */
	V_NVERDICT
};

static const char *const verdict_names[V_NVERDICT] = {
	"ok", "short", "truncated", "malformed", "version", "control", "private", "mode",
	"denied", "rate", "kiss",
};

#define MAX_ALLOW	64

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
	       "      --clients N      interleaved-mode state for N clients (default 16384)\n"
	       "      --no-stamps      no kernel or hardware stamps\n"
	       "  -u, --user NAME      run as NAME once the endpoint is open\n"
	       "  -a, --allow CIDR     answer only clients in CIDR (repeatable; default all)\n"
	       "      --ratelimit RATE[/BURST]  per client address: RATE requests a second,\n"
	       "                       BURST at once (default 8); over it a RATE kiss, at\n"
	       "                       most RATE a second, else silence (default off)\n"
	       "  -h, --help           this help\n"
	       "      --version        print the version\n\n"
	       "Counts of what was answered and ignored go to stderr at exit.\n", opt_prog);
}

/* --allow: the sender is in one of the networks (all when none given). */
static enum verdict admit(struct transport *t, const struct transport_addr *from,
			  const struct access_net *allow, int nallow)
{
	struct access_ip ip;
	char peer[128];

	if (!nallow)
		return V_OK;
	transport_addr_str(t, from, peer, sizeof(peer));
	if (access_ip_from_peer(peer, &ip) || !access_allowed(allow, nallow, &ip))
		return V_DENIED;
	return V_OK;
}

/* --ratelimit: per sender address. */
static enum verdict limit(struct ratelimit *rl, struct transport *t,
			  const struct transport_addr *from)
{
	struct access_ip ip;
	char peer[128];

	transport_addr_str(t, from, peer, sizeof(peer));
	if (access_ip_from_peer(peer, &ip))
		return V_OK;	/* no address to limit by */
	switch (ratelimit_check(rl, &ip, clock_monotonic_ns())) {
	case RATELIMIT_PASS:
		return V_OK;
	case RATELIMIT_KISS:
		return V_KISS;
	default:
		return V_RATE;
	}
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

/*
 * A datagram answered or ignored, whose log line waits for the reply's
 * send stamps; and the client slot those stamps belong to.
 */
struct sent {
	uint64_t seq;
	struct transport_addr peer;
	struct xleave_client *c;	/* NULL: no client state */
	unsigned char key[124];		/* the client's key in the table */
	size_t keylen;
	uint32_t txid;
	int want;			/* the reply's send stamps are awaited */
	int version;			/* -1 for an ignored datagram */
	const char *status;
	const char *mode;		/* "basic", "interleaved" or "-" */
	struct xleave_ef st;		/* t2 t2k t2h t3, then t3q t3k t3h */
};

#define SENT_QUEUE	32		/* < TRANSPORT_TX_KEEP */

struct reflector {
	struct transport *t;
	struct clock *clk;
	FILE *log;
	const char *logname;
	int out;			/* the log's state (lib/out.h) */
	struct sent q[SENT_QUEUE];
	unsigned head, n;
};

static void put_stamp(FILE *f, const struct xleave_ef *e, int i)
{
	if (e->have & 1u << i)
		fprintf(f, " %lld", (long long)e->at[i]);
	else
		fputs(" -", f);
}

/* Takes the head of the queue: its stamps into the client's slot, its line into the log. */
static void sent_finish(struct reflector *r, int64_t deadline)
{
	struct sent *e = &r->q[r->head];

	if (e->want) {
		struct transport_stamps ts;

		transport_tx_stamps(r->t, e->txid, r->clk, &ts, deadline);
		if (ts.at[TRANSPORT_LAYER_Q] != TRANSPORT_NO_STAMP) {
			e->st.at[XEF_T3Q] = ts.at[TRANSPORT_LAYER_Q];
			e->st.have |= 1u << XEF_T3Q;
		}
		if (ts.at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP) {
			e->st.at[XEF_T3K] = ts.at[TRANSPORT_LAYER_K];
			e->st.have |= 1u << XEF_T3K;
		}
		if (ts.at[TRANSPORT_LAYER_H] != TRANSPORT_NO_STAMP) {
			e->st.at[XEF_T3H] = ts.at[TRANSPORT_LAYER_H];
			e->st.have |= 1u << XEF_T3H;
		}
		/* The slot may have gone to another client meanwhile. */
		if (e->c && e->c->tx_wanted && e->c->tx_id == e->txid &&
		    e->c->addrlen == e->keylen && memcmp(e->c->addr, e->key, e->keylen) == 0) {
			e->c->last = e->st;
			e->c->tx_wanted = 0;
		}
	}
	if (r->log && r->out == OUT_OK) {
		char peer[128];
		const struct xleave_ef *x = &e->st;

		transport_addr_str(r->t, &e->peer, peer, sizeof(peer));
		fprintf(r->log, "%llu", (unsigned long long)e->seq);
		put_stamp(r->log, x, XEF_T2);
		put_stamp(r->log, x, XEF_T3);
		put_stamp(r->log, x, XEF_T2K);
		put_stamp(r->log, x, XEF_T2H);
		put_stamp(r->log, x, XEF_T3Q);
		put_stamp(r->log, x, XEF_T3K);
		put_stamp(r->log, x, XEF_T3H);
		if (e->version >= 0)
			fprintf(r->log, " %s %s %d %s\n", e->mode, peer, e->version, e->status);
		else
			fprintf(r->log, " - %s - %s\n", peer, e->status);
		/* A log that cannot be written ends the server: quietly
		   when its reader went away, with the error otherwise. */
		r->out = out_flush(r->log, r->logname);
	}
	r->head = (r->head + 1) % SENT_QUEUE;
	r->n--;
}

/*
 * The send stamps of the client's last reply: those that have come.  The
 * request naming that reply was sent after the reply arrived, so they
 * normally all have; one that never comes (a NIC that missed a hardware
 * stamp) must not keep the client in basic mode.
 */
static void client_stamps(struct transport *t, struct clock *clk, struct xleave_client *c)
{
	struct transport_stamps ts;

	transport_tx_stamps(t, c->tx_id, clk, &ts, 0);
	if (ts.at[TRANSPORT_LAYER_Q] != TRANSPORT_NO_STAMP) {
		c->last.at[XEF_T3Q] = ts.at[TRANSPORT_LAYER_Q];
		c->last.have |= 1u << XEF_T3Q;
	}
	if (ts.at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP) {
		c->last.at[XEF_T3K] = ts.at[TRANSPORT_LAYER_K];
		c->last.have |= 1u << XEF_T3K;
	}
	if (ts.at[TRANSPORT_LAYER_H] != TRANSPORT_NO_STAMP) {
		c->last.at[XEF_T3H] = ts.at[TRANSPORT_LAYER_H];
		c->last.have |= 1u << XEF_T3H;
	}
	c->tx_wanted = 0;
}

/* Finishes what is complete, or everything (@all, at exit). */
static void sent_flush(struct reflector *r, int all)
{
	while (r->n) {
		struct sent *e = &r->q[r->head];

		if (!all && e->want && r->n < SENT_QUEUE / 2) {
			struct transport_stamps ts;

			/* Not yet: its stamps may still be on their way. */
			if (!transport_tx_stamps(r->t, e->txid, r->clk, &ts, 0))
				return;
		}
		sent_finish(r, all ? clock_monotonic_ns() + 10000000 : 0);
	}
}

static struct sent *sent_push(struct reflector *r)
{
	struct sent *e;

	if (r->n == SENT_QUEUE)
		sent_finish(r, 0);
	e = &r->q[(r->head + r->n++) % SENT_QUEUE];
	memset(e, 0, sizeof(*e));
	return e;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stratum", required_argument, NULL, 's' },
		{ "refid", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'n' },
		{ "log", required_argument, NULL, 'l' },
		{ "poll", required_argument, NULL, 'P' },
		{ "clients", required_argument, NULL, 'C' },
		{ "no-stamps", no_argument, NULL, 'N' },
		{ "user", required_argument, NULL, 'u' },
		{ "allow", required_argument, NULL, 'a' },
		{ "ratelimit", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	enum transport_poll pollmode = TRANSPORT_POLL_BLOCK;
	uint64_t stratum = 1, count = UINT64_MAX, answered = 0, seq = 0;
	uint64_t verdicts[V_NVERDICT] = { 0 }, send_errors = 0, dropped = 0;
	uint64_t nclients = 16384, interleaved = 0;
	int nostamps = 0, stamping = 0;
	struct reflector rf = { 0 };
	struct xleave_table *xt;
	uint32_t refid = parse_refid("NTPX");
	const char *logpath = NULL, *logname = NULL, *user = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct access_net allow[MAX_ALLOW];
	int nallow = 0;
	struct ratelimit *rl = NULL;
	double rl_rate = 0, rl_burst = 0;
	struct transport *t;
	struct clock *clk;
	struct endpoint ep;
	FILE *log = NULL;
	int8_t precision;
	struct ntp_packet reply;
	char err[256];
	int c, i, rc = 0, out = OUT_OK;

	opt_init(argv[0]);
	while ((c = getopt_long(argc, argv, "s:r:n:l:u:a:h", longopts, NULL)) != -1) {
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
		case 'C':
			if (opt_count(optarg, (uint64_t)1 << 30, &nclients) || nclients == 0)
				opt_usage_error("bad client count '%s'", optarg);
			break;
		case 'N':
			nostamps = 1;
			break;
		case 'u':
			user = optarg;
			break;
		case 'a':
			if (nallow == MAX_ALLOW)
				opt_usage_error("too many --allow (%d at most)", MAX_ALLOW);
			if (access_net_parse(optarg, &allow[nallow], err, sizeof(err)))
				opt_usage_error("%s", err);
			nallow++;
			break;
		case 'R':
			if (ratelimit_parse(optarg, &rl_rate, &rl_burst, err, sizeof(err)))
				opt_usage_error("%s", err);
			break;
		default:
			opt_other(c, usage);
		}
	}
	endpoint_from_args(argc, argv, optind, &ep);
	/* Before the log's header: a reader gone by then is an EPIPE too. */
	out_init();

	if (rl_rate > 0 && !(rl = ratelimit_create(rl_rate, rl_burst)))
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	clk = clock_open("realtime", err, sizeof(err));
	if (!clk)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	t = transport_open(&ep, TRANSPORT_SERVER, err, sizeof(err));
	if (!t)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	if (!nostamps) {
		if (transport_stamps_enable(t, err, sizeof(err)))
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", ep.url, err);
		stamping = transport_stamp_source(t, 1, TRANSPORT_LAYER_Q) ||
			   transport_stamp_source(t, 1, TRANSPORT_LAYER_K) ||
			   transport_stamp_source(t, 1, TRANSPORT_LAYER_H);
	}
	xt = xleave_table_new(nclients);
	if (!xt)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory for %llu clients",
			 (unsigned long long)nclients);
	if (logpath) {
		log = strcmp(logpath, "-") == 0 ? stdout : fopen(logpath, "w");
		if (!log)
			ntpx_die(NTPX_EXIT_FAIL, "cannot open log '%s': %s", logpath, strerror(errno));
		logname = log == stdout ? "standard output" : logpath;
		setvbuf(log, NULL, _IOLBF, 0);
		if (record_write_header(log, "ntpreflect", ep.url, clock_name(clk),
					"seq t2 t3 t2k t2h t3q t3k t3h mode peer version status"))
			out = out_failed(logname, errno);
		if (out == OUT_OK) {
			const char *src[STAMP_NCOLS] = {
				[STAMP_T2K] = transport_stamp_source(t, 0, TRANSPORT_LAYER_K),
				[STAMP_T2H] = transport_stamp_source(t, 0, TRANSPORT_LAYER_H),
				[STAMP_T3Q] = transport_stamp_source(t, 1, TRANSPORT_LAYER_Q),
				[STAMP_T3K] = transport_stamp_source(t, 1, TRANSPORT_LAYER_K),
				[STAMP_T3H] = transport_stamp_source(t, 1, TRANSPORT_LAYER_H),
			};

			if (stamp_write_sources(log, src))
				out = out_failed(logname, errno);
		}
	}
	/* Everything that needs root is open: the socket bound, for uudp the
	   AF_XDP socket and its XDP program attached, the log created. */
	if (user && priv_drop(user, priv_transport_caps(&ep, TRANSPORT_SERVER), err, sizeof(err)))
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
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

	rf.t = t;
	rf.clk = clk;
	rf.log = log;
	rf.logname = logname;
	rf.out = out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* A log that cannot be written ends the server: quietly when its
	   reader went away, with the error otherwise (lib/out.h). */
	while (!stopping && answered < count && rf.out == OUT_OK) {
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
		v = nallow || rl ? admit(t, &from, allow, nallow) : V_OK;
		if (v == V_OK)
			v = check(buf, n, &q);
		if (v == V_OK && rl)
			v = limit(rl, t, &from);
		verdicts[v]++;
		rc = 0;
		if (v == V_KISS) {
			/* RFC 5905 7.4: stratum 0, the code in refid; the poll
			   says how often this client may ask: 1/RATE. */
			r = reply;
			r.leap = NTP_LEAP_ALARM;
			r.stratum = NTP_STRATUM_KOD;
			r.refid = NTP_KISS_RATE;
			r.version = q.version;
			r.poll = ratelimit_poll(rl);
			r.ref = 0;
			r.org = q.xmt;
			r.rec = ntp_ts_from_ns(t2);
			ntp_encode(&r, buf);
			rc = transport_send(t, buf, NTP_HEADER_LEN, &from, clk,
					    TRANSPORT_STAMP_XMT, &t3);
			if (rc < 0)
				send_errors++;
		} else if (v == V_OK) {
			struct transport_stamps rx;
			unsigned char key[sizeof(from.data)];
			struct xleave_client *cl =
				xleave_client_get(xt, key, transport_addr_key(t, &from, key, sizeof(key)));
			struct xleave_ef ef;
			int64_t t2best;
			int want_ef = xleave_ef_find(buf, (size_t)n, &ef);
			int xl, want_tx;
			size_t len = NTP_HEADER_LEN;
			struct sent *e;

			/* Between T2 and T3: only what depends on the request. */
			transport_rx_stamps(t, clk, &rx);
			t2best = rx.at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP ?
				 rx.at[TRANSPORT_LAYER_K] : t2;
			r = reply;
			r.version = q.version;
			r.poll = q.poll;
			/* Updated "now": the last second boundary before T2. */
			r.ref = ntp_ts_from_ns(t2 - t2 % NTPX_NS_PER_SEC);
			/* Interleaved when the request names our last reply to
			   this address, the stamps of that reply are ours, and
			   its receive field is not its transmit field. */
			if (cl->tx_wanted && q.org == cl->rec_sent)
				client_stamps(t, clk, cl);
			xl = cl->rec_sent && q.org == cl->rec_sent && q.rec != q.xmt &&
			     !cl->tx_wanted && (cl->last.have & 1u << XEF_T3);
			if (xl) {
				const struct xleave_ef *l = &cl->last;

				r.org = q.rec;
				r.rec = ntp_ts_from_ns(t2best);
				r.xmt = ntp_ts_from_ns(l->have & 1u << XEF_T3K ? l->at[XEF_T3K] :
						       l->at[XEF_T3]);
				interleaved++;
			} else {
				r.org = q.xmt;
				r.rec = ntp_ts_from_ns(t2);
			}
			ntp_encode(&r, buf);
			if (want_ef) {
				struct xleave_ef now = { .have = 1u << XEF_T2 };

				now.at[XEF_T2] = t2;
				if (rx.at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP) {
					now.at[XEF_T2K] = rx.at[TRANSPORT_LAYER_K];
					now.have |= 1u << XEF_T2K;
				}
				if (rx.at[TRANSPORT_LAYER_H] != TRANSPORT_NO_STAMP) {
					now.at[XEF_T2H] = rx.at[TRANSPORT_LAYER_H];
					now.have |= 1u << XEF_T2H;
				}
				xleave_ef_put(buf + NTP_HEADER_LEN, xl ? &cl->last : &now);
				len += XLEAVE_EF_LEN;
			}
			/* The reply's own send stamps cost the kernel and us a
			   little: taken for the log, and for a client that
			   looks interleaved (it names a reply, or sends a
			   receive field of its own, or the ntpx field). */
			want_tx = stamping && (log || q.org || (q.rec && q.rec != q.xmt) || want_ef);
			rc = transport_send(t, buf, len, &from, clk,
					    (xl ? 0 : TRANSPORT_STAMP_XMT) |
					    (want_tx ? TRANSPORT_STAMP_SEND : 0), &t3);
			e = sent_push(&rf);
			e->seq = seq;
			e->peer = from;
			e->version = q.version;
			e->mode = xl ? "interleaved" : "basic";
			e->st.at[XEF_T2] = t2;
			e->st.have = 1u << XEF_T2;
			if (rx.at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP) {
				e->st.at[XEF_T2K] = rx.at[TRANSPORT_LAYER_K];
				e->st.have |= 1u << XEF_T2K;
			}
			if (rx.at[TRANSPORT_LAYER_H] != TRANSPORT_NO_STAMP) {
				e->st.at[XEF_T2H] = rx.at[TRANSPORT_LAYER_H];
				e->st.have |= 1u << XEF_T2H;
			}
			if (rc < 0) {
				send_errors++;
				e->status = "error";
				cl->rec_sent = 0;
			} else if (rc == TRANSPORT_DROPPED) {	/* lossinject */
				dropped++;
				e->status = "dropped";
				cl->rec_sent = 0;
			} else {
				answered++;
				e->status = "ok";
				e->st.at[XEF_T3] = t3;
				e->st.have |= 1u << XEF_T3;
				/* The client's state: this reply, its stamps to come. */
				cl->rec_sent = r.rec;
				cl->last = e->st;
				cl->tx_id = transport_tx_id(t);
				cl->tx_wanted = want_tx;
				e->c = cl;
				e->keylen = cl->addrlen;
				memcpy(e->key, cl->addr, cl->addrlen);
				e->txid = cl->tx_id;
				e->want = want_tx;
			}
		} else {
			struct sent *e = sent_push(&rf);

			e->seq = seq;
			e->peer = from;
			e->version = -1;
			e->mode = "-";
			e->status = verdict_names[v];
			e->st.at[XEF_T2] = t2;
			e->st.have = 1u << XEF_T2;
		}
		sent_flush(&rf, 0);
	}
	sent_flush(&rf, 1);
	out = rf.out;
	if (log && out == OUT_OK)
		out = out_close(log, logname);
	else if (log && log != stdout)
		fclose(log);
	if (out == OUT_FAILED) {
		xleave_table_free(xt);
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
	if (rl && ratelimit_evictions(rl))
		fprintf(stderr, ", ratelimit evictions %llu",
			(unsigned long long)ratelimit_evictions(rl));
	if (send_errors)
		fprintf(stderr, ", send errors %llu", (unsigned long long)send_errors);
	if (interleaved)
		fprintf(stderr, ", interleaved %llu", (unsigned long long)interleaved);
	if (xleave_table_evictions(xt))
		fprintf(stderr, ", client slots taken %llu",
			(unsigned long long)xleave_table_evictions(xt));
	fputc('\n', stderr);
	{
		char ctr[1024];

		transport_counters(t, ctr, sizeof(ctr));
		if (ctr[0])
			fprintf(stderr, "%s: transport %s\n", opt_prog, ctr);
	}
	xleave_table_free(xt);
	transport_close(t);
	ratelimit_free(rl);
	clock_close(clk);
	return NTPX_EXIT_OK;
}
