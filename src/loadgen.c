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
 * counts what arrived and what went missing.  Every REPORT_NS the sink
 * sends each sender its cumulative counters; the sender prints what the
 * sink measured, interval by interval.  Rates are of UDP payload, as
 * iperf3 counts them.
 *
 * --ntp sends NTP client requests at a fixed rate and counts the replies
 * that answer them (org == our xmt), as ntpperf does, to measure a
 * server's capacity.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ntp.h"
#include "opt.h"
#include "out.h"
#include "transport.h"
#include "util_private.h"

#define HDR_LEN		16
#define MAGIC_DATA	0x4e54584cu	/* "NTXL" */
#define MAGIC_FIN	0x4e545846u	/* "NTXF": the sender is done */
#define MAGIC_REPORT	0x4e545852u	/* "NTXR": sink -> sender */
#define REPORT_LEN	48
#define REPORT_NS	50000000LL	/* sink reports every 50 ms */
#define MAX_DGRAM	65507		/* largest UDP payload over IPv4 */
#define BATCH		16		/* messages per send_batch */
#define RBATCH		32		/* messages per recv_batch */
#define RBUF		(65536 + 4096)	/* a GRO message: up to 64 KiB */
#define MAX_RUNS	32		/* senders a sink keeps apart */
#define WARMUP_NS	500000000LL	/* calibration ignores the first 0.5 s,
					   or a quarter of a shorter run */

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/*
 * The reports on stdout (lib/out.h): a line that cannot be written stops
 * the run as a signal would, quietly when the reader went away (EPIPE),
 * with one error line and exit 1 otherwise, and then no summary.
 */
static int out_state = OUT_OK;
static int out_errno;		/* the first failed write's */

static void __attribute__((format(printf, 1, 2))) emit(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	if (n < 0 && !out_errno)
		out_errno = errno ? errno : EIO;
}

/* Ends a line or a header: flushes it and stops the run if it failed. */
static void emit_flush(void)
{
	if (out_state != OUT_OK)
		return;
	out_state = out_errno ? out_failed("standard output", out_errno) :
				out_flush(stdout, "standard output");
	if (out_state != OUT_OK)
		stopping = 1;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NTPX_NS_PER_SEC, .tv_nsec = ns % NTPX_NS_PER_SEC };

	if (ns > 0)
		nanosleep(&ts, NULL);
}

/* Waits until @t's fd is readable or @ns passed. */
static void wait_readable(struct transport *t, int64_t ns)
{
	struct pollfd pfd = { .fd = transport_fd(t), .events = POLLIN };
	struct timespec ts;

	if (ns < 0)
		ns = 0;
	ts.tv_sec = ns / NTPX_NS_PER_SEC;
	ts.tv_nsec = ns % NTPX_NS_PER_SEC;
	ppoll(&pfd, 1, &ts, NULL);
}

static void wait_writable(struct transport *t)
{
	struct pollfd pfd = { .fd = transport_fd(t), .events = POLLOUT };

	poll(&pfd, 1, 10);
}

/* The sink's cumulative counters for one sender's run. */
struct report {
	uint64_t elapsed;	/* ns since the run's first datagram, at the sink */
	uint64_t bytes;		/* payload bytes received */
	uint64_t packets;
	uint64_t lost;		/* sequence numbers never seen */
	int valid;
};

/* ---------------------------------------------------------------- sink */

struct run {
	uint32_t id;
	struct transport_addr from;
	int64_t first;		/* monotonic ns of the first datagram */
	int64_t last;		/* monotonic ns of the latest datagram */
	uint64_t next_seq;	/* highest sequence seen + 1 */
	uint64_t bytes, packets;
	int fin;
};

struct sink {
	struct transport *t;
	struct run runs[MAX_RUNS];
	int nruns;
	uint64_t bytes, packets, lost;	/* over all runs */
	uint64_t foreign;		/* datagrams that were not ours */
};

static uint64_t run_lost(const struct run *r)
{
	return r->next_seq > r->packets ? r->next_seq - r->packets : 0;
}

static uint64_t sink_lost(const struct sink *s)
{
	uint64_t lost = 0;
	int i;

	for (i = 0; i < s->nruns; i++)
		lost += run_lost(&s->runs[i]);
	return lost;
}

static struct run *sink_run(struct sink *s, uint32_t id, const struct transport_addr *from,
			    int64_t now)
{
	struct run *r;
	int i, oldest = 0;

	for (i = 0; i < s->nruns; i++)
		if (s->runs[i].id == id)
			return &s->runs[i];
	if (s->nruns < MAX_RUNS) {
		r = &s->runs[s->nruns++];
	} else {
		/* Forget the run heard from longest ago; keep its losses in the
		   totals by folding them into a run that is never reported. */
		for (i = 1; i < MAX_RUNS; i++)
			if (s->runs[i].last < s->runs[oldest].last)
				oldest = i;
		r = &s->runs[oldest];
		s->lost += run_lost(r);
	}
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->from = *from;
	r->first = now;
	return r;
}

static void sink_report(struct sink *s, struct run *r, int64_t now)
{
	unsigned char b[REPORT_LEN] = { 0 };
	struct transport_msg m = { .buf = b, .len = sizeof(b), .addr = &r->from };

	put32(b, MAGIC_REPORT);
	put32(b + 4, r->id);
	put64(b + 8, (uint64_t)(now - r->first));
	put64(b + 16, r->bytes);
	put64(b + 24, r->packets);
	put64(b + 32, run_lost(r));
	/* A report that cannot go now is replaced by the next one. */
	(void)transport_send_batch(s->t, &m, 1);
}

/* One datagram of @len bytes at @p from @from. */
static void sink_take(struct sink *s, const unsigned char *p, size_t len,
		      const struct transport_addr *from, int64_t now)
{
	uint32_t magic = len >= HDR_LEN ? get32(p) : 0;
	struct run *r;

	if (magic != MAGIC_DATA && magic != MAGIC_FIN) {
		s->foreign++;
		return;
	}
	r = sink_run(s, get32(p + 4), from, now);
	r->last = now;
	r->from = *from;
	if (magic == MAGIC_FIN) {
		/* It carries how many were sent: the tail lost counts too. */
		uint64_t sent = get64(p + 8);

		if (sent > r->next_seq)
			r->next_seq = sent;
		r->fin = 1;
		sink_report(s, r, now);
		return;
	}
	{
		uint64_t seq = get64(p + 8);

		if (seq + 1 > r->next_seq)
			r->next_seq = seq + 1;
	}
	r->bytes += len;
	r->packets++;
	s->bytes += len;
	s->packets++;
}

static void print_fields(void)
{
	emit("#fields t bytes packets gbps drops sent_gbps\n");
}

static int run_sink(struct transport *t, int64_t interval, int64_t duration)
{
	static unsigned char bufs[RBATCH][RBUF];
	struct transport_msg m[RBATCH];
	struct transport_addr from[RBATCH];
	struct sink s = { .t = t };
	int64_t start = clock_monotonic_ns(), next_report = start + REPORT_NS;
	int64_t next_line = start + interval, last_line = start;
	uint64_t lb = 0, lp = 0, ll = 0;
	int i, n;

	emit("#ntpx-load 1\n#tool loadgen sink\n");
	print_fields();
	emit_flush();
	while (!stopping) {
		int64_t now = clock_monotonic_ns();

		if (duration && now - start >= duration)
			break;
		for (i = 0; i < RBATCH; i++)
			m[i] = (struct transport_msg){ .buf = bufs[i], .cap = RBUF, .addr = &from[i] };
		n = transport_recv_batch(t, m, RBATCH);
		now = clock_monotonic_ns();
		if (n > 0) {
			for (i = 0; i < n; i++) {
				size_t len = m[i].len > RBUF ? RBUF : m[i].len;
				size_t seg = m[i].segment ? m[i].segment : len;
				size_t off;

				for (off = 0; off < len; off += seg)
					sink_take(&s, bufs[i] + off, len - off < seg ? len - off : seg,
						  &from[i], now);
			}
		} else if (n != -EAGAIN && n != -EINTR && n != -ECONNREFUSED) {
			ntpx_err("receive: %s", strerror(-n));
			return NTPX_EXIT_FAIL;
		}
		if (now >= next_report) {
			for (i = 0; i < s.nruns; i++)
				if (!s.runs[i].fin && now - s.runs[i].last < 2 * NTPX_NS_PER_SEC)
					sink_report(&s, &s.runs[i], now);
			next_report = now + REPORT_NS;
		}
		if (now >= next_line) {
			uint64_t lost = s.lost + sink_lost(&s);

			emit("%" PRId64 " %" PRIu64 " %" PRIu64 " %.6f %" PRIu64 " -\n",
			       clock_realtime_ns(), s.bytes - lb, s.packets - lp,
			       (double)(s.bytes - lb) * 8 / (double)(now - last_line),
			       lost - ll);
			emit_flush();
			lb = s.bytes;
			lp = s.packets;
			ll = lost;
			last_line = now;
			next_line += interval;
		}
		if (n == -EAGAIN) {
			int64_t until = next_report < next_line ? next_report : next_line;

			wait_readable(t, until - clock_monotonic_ns());
		}
	}
	if (out_state == OUT_FAILED)
		return NTPX_EXIT_FAIL;
	{
		int64_t el = clock_monotonic_ns() - start;

		fprintf(stderr, "%s: sink received %" PRIu64 " datagrams, %" PRIu64
			" bytes in %.3f s (%.6f Gbit/s), lost %" PRIu64 ", from %d senders",
			opt_prog, s.packets, s.bytes, (double)el / 1e9,
			(double)s.bytes * 8 / (double)el, s.lost + sink_lost(&s), s.nruns);
		if (s.foreign)
			fprintf(stderr, ", not ours %" PRIu64, s.foreign);
		fputc('\n', stderr);
	}
	return NTPX_EXIT_OK;
}

/* -------------------------------------------------------------- sender */

struct sender {
	struct transport *t;
	uint32_t run;
	size_t size;		/* datagram payload */
	size_t per_msg;		/* datagrams per message (GSO) */
	double rate;		/* payload bit/s; 0: as fast as it goes */
	int64_t duration;	/* ns; 0: until a signal */
	int64_t interval;
	int64_t on, off;	/* burst schedule, ns; off 0: always on */
	int64_t start_rt;	/* realtime ns the schedule is aligned to */
	int quiet;		/* no interval lines (calibration) */
	int64_t warmup;		/* calibration ignores what the sink saw before */

	uint64_t seq;
	uint64_t sent_bytes, sent_packets, send_errors;
	struct report first_warm, last, line;	/* sink reports */
	int got_report;
};

/* Takes every report waiting; keeps the newest. */
static void sender_poll_reports(struct sender *s)
{
	unsigned char b[RBATCH][512];
	struct transport_msg m[RBATCH];
	int i, n;

	for (;;) {
		for (i = 0; i < RBATCH; i++)
			m[i] = (struct transport_msg){ .buf = b[i], .cap = sizeof(b[i]) };
		n = transport_recv_batch(s->t, m, RBATCH);
		if (n <= 0)
			return;
		for (i = 0; i < n; i++) {
			struct report r;

			if (m[i].len < REPORT_LEN || get32(b[i]) != MAGIC_REPORT ||
			    get32(b[i] + 4) != s->run)
				continue;
			r.elapsed = get64(b[i] + 8);
			r.bytes = get64(b[i] + 16);
			r.packets = get64(b[i] + 24);
			r.lost = get64(b[i] + 32);
			r.valid = 1;
			if (s->last.valid && r.elapsed < s->last.elapsed)
				continue;	/* reordered: older than what we have */
			s->last = r;
			s->got_report = 1;
			if (!s->first_warm.valid && r.elapsed >= (uint64_t)s->warmup)
				s->first_warm = r;
		}
	}
}

/* Is the burst schedule on at realtime @rt?  Else, ns until it is. */
static int64_t burst_wait(const struct sender *s, int64_t rt)
{
	int64_t period = s->on + s->off, ph;

	if (!s->off)
		return 0;
	ph = (rt - s->start_rt) % period;
	if (ph < 0)
		ph += period;
	return ph < s->on ? 0 : period - ph;
}

static void sender_line(struct sender *s, int64_t el_ns, uint64_t sent_bytes_iv)
{
	const struct report *a = &s->line, *b = &s->last;

	if (s->quiet)
		return;
	if (b->valid && (!a->valid || b->elapsed > a->elapsed)) {
		uint64_t db = b->bytes - (a->valid ? a->bytes : 0);
		uint64_t dp = b->packets - (a->valid ? a->packets : 0);
		uint64_t dl = b->lost - (a->valid ? a->lost : 0);
		uint64_t de = b->elapsed - (a->valid ? a->elapsed : 0);

		emit("%" PRId64 " %" PRIu64 " %" PRIu64 " %.6f %" PRIu64, clock_realtime_ns(),
		       db, dp, de ? (double)db * 8 / (double)de : 0.0, dl);
		s->line = *b;
	} else {
		emit("%" PRId64 " - - - -", clock_realtime_ns());
	}
	emit(" %.6f\n", el_ns ? (double)sent_bytes_iv * 8 / (double)el_ns : 0.0);
	emit_flush();
}

static void fill(struct sender *s, unsigned char *buf, size_t ndg)
{
	size_t i;

	for (i = 0; i < ndg; i++) {
		unsigned char *p = buf + i * s->size;

		put32(p, MAGIC_DATA);
		put32(p + 4, s->run);
		put64(p + 8, s->seq++);
	}
}

static int run_sender(struct sender *s)
{
	static unsigned char bufs[BATCH][MAX_DGRAM];
	struct transport_msg m[BATCH];
	size_t msg_bytes = s->size * s->per_msg;
	double bucket = 0, cap;
	int64_t start = clock_monotonic_ns(), last = start, next_line = start + s->interval;
	int64_t last_line = start;
	uint64_t line_sent = 0;
	int i, n;

	/* The bucket holds 2 ms at the rate, or three messages if that is
	   more: enough that a late wake-up costs no rate, little enough that
	   a burst at line rate does not fill a shaper's queue by itself.
	   Flat out, a batch. */
	cap = s->rate ? s->rate / 8 * 2e-3 : (double)msg_bytes * BATCH;
	if (cap < 3.0 * (double)msg_bytes)
		cap = 3.0 * (double)msg_bytes;
	/* Wait for the first edge when the schedule starts in the future. */
	if (s->off) {
		int64_t w = s->start_rt - clock_realtime_ns();

		if (w > 0)
			sleep_ns(w);
		start = last = last_line = clock_monotonic_ns();
		next_line = start + s->interval;
	}
	if (!s->quiet) {
		emit("#ntpx-load 1\n#tool loadgen\n");
		print_fields();
		emit_flush();
	}
	while (!stopping) {
		int64_t now = clock_monotonic_ns(), w;
		int want;

		if (s->duration && now - start >= s->duration)
			break;
		sender_poll_reports(s);
		if (now >= next_line) {
			sender_line(s, now - last_line, line_sent);
			line_sent = 0;
			last_line = now;
			next_line += s->interval;
		}
		w = burst_wait(s, clock_realtime_ns());
		if (w) {
			int64_t until = next_line - now;

			bucket = 0;
			sleep_ns(w < until ? w : until);
			last = clock_monotonic_ns();
			continue;
		}
		if (s->rate) {
			bucket += s->rate / 8 * (double)(now - last) / 1e9;
			if (bucket > cap)
				bucket = cap;
			last = now;
			if (bucket < (double)msg_bytes) {
				int64_t need = (int64_t)(((double)msg_bytes - bucket) * 8e9 / s->rate);

				sleep_ns(need < next_line - now ? need : next_line - now);
				continue;
			}
			want = (int)(bucket / (double)msg_bytes);
			if (want > BATCH)
				want = BATCH;
		} else {
			want = BATCH;
		}
		for (i = 0; i < want; i++) {
			fill(s, bufs[i], s->per_msg);
			m[i] = (struct transport_msg){ .buf = bufs[i], .len = msg_bytes,
						       .segment = s->per_msg > 1 ? s->size : 0 };
		}
		n = transport_send_batch(s->t, m, (unsigned)want);
		if (n < 0) {
			/* Sequence numbers not sent are taken back. */
			s->seq -= (uint64_t)want * s->per_msg;
			if (n == -EAGAIN || n == -ENOBUFS) {
				wait_writable(s->t);
				continue;
			}
			if (n == -ECONNREFUSED) {	/* no sink (yet): ICMP */
				s->send_errors++;
				continue;
			}
			ntpx_err("send: %s", strerror(-n));
			return NTPX_EXIT_FAIL;
		}
		s->seq -= (uint64_t)(want - n) * s->per_msg;
		s->sent_packets += (uint64_t)n * s->per_msg;
		s->sent_bytes += (uint64_t)n * msg_bytes;
		line_sent += (uint64_t)n * msg_bytes;
		if (s->rate)
			bucket -= (double)n * (double)msg_bytes;
	}
	{
		int64_t el = clock_monotonic_ns() - start;
		struct report sending = s->last;	/* the sink's view while we sent */
		unsigned char fin[HDR_LEN];
		struct transport_msg fm = { .buf = fin, .len = sizeof(fin) };

		/* FIN, a few times as it may be lost as anything else, until
		   the sink has accounted for every datagram: what was in
		   flight arrives or is counted lost. */
		put32(fin, MAGIC_FIN);
		put32(fin + 4, s->run);
		put64(fin + 8, s->seq);
		for (i = 0; i < 3; i++) {
			(void)transport_send_batch(s->t, &fm, 1);
			wait_readable(s->t, 100000000LL);
			sender_poll_reports(s);
			if (s->last.valid && s->last.packets + s->last.lost >= s->seq)
				break;
		}
		if (s->last.valid && (!sending.valid || s->last.elapsed > sending.elapsed))
			sender_line(s, clock_monotonic_ns() - last_line, line_sent);
		if (s->quiet) {
			s->last = sending;
			return NTPX_EXIT_OK;
		}
		if (out_state == OUT_FAILED)
			return NTPX_EXIT_FAIL;
		fprintf(stderr, "%s: sent %" PRIu64 " datagrams of %zu bytes, %" PRIu64
			" bytes in %.3f s (%.6f Gbit/s)", opt_prog, s->sent_packets, s->size,
			s->sent_bytes, (double)el / 1e9, (double)s->sent_bytes * 8 / (double)el);
		if (s->got_report)
			fprintf(stderr, "; sink received %" PRIu64 " (%.6f Gbit/s), lost %" PRIu64
				" (%.3f%%)", s->last.packets,
				sending.valid && sending.elapsed ?
				(double)sending.bytes * 8 / (double)sending.elapsed : 0.0,
				s->last.lost,
				s->sent_packets ? 100.0 * (double)s->last.lost / (double)s->sent_packets : 0.0);
		else
			fprintf(stderr, "; no report from a sink");
		if (s->send_errors)
			fprintf(stderr, ", refused %" PRIu64, s->send_errors);
		fputc('\n', stderr);
		s->last = sending;
	}
	return NTPX_EXIT_OK;
}

/* The receiver's sustained rate: warm-up excluded, idle after FIN too. */
static double calibrated(const struct sender *s)
{
	const struct report *a = &s->first_warm, *b = &s->last;

	if (!a->valid || !b->valid || b->elapsed <= a->elapsed)
		return 0;
	return (double)(b->bytes - a->bytes) * 8e9 / (double)(b->elapsed - a->elapsed);
}

/*
 * The path's sustained rate at the receiver, payload bit/s: 0 without a
 * sink's reports, -1 when sending failed.  Flat out first, for a third of
 * @duration; then, for the rest, a quarter above what came through.
 * Sending flat out overloads the machine as much as the path (the sender
 * and the shaper share CPUs), so the second run, above the path's rate but
 * not far, is the one measured.
 */
static double calibrate_path(const struct sender *proto, int64_t duration)
{
	struct sender cal = *proto;
	double r1;

	cal.rate = 0;
	cal.on = cal.off = 0;
	cal.quiet = 1;
	cal.duration = duration / 3;
	cal.warmup = cal.duration / 4 < WARMUP_NS ? cal.duration / 4 : WARMUP_NS;
	if (run_sender(&cal))
		return -1;
	r1 = calibrated(&cal);
	if (!r1 || stopping)
		return r1;
	cal = *proto;
	cal.run++;
	cal.rate = 1.25 * r1;
	cal.on = cal.off = 0;
	cal.quiet = 1;
	cal.duration = duration - duration / 3;
	cal.warmup = cal.duration / 4 < WARMUP_NS ? cal.duration / 4 : WARMUP_NS;
	if (run_sender(&cal))
		return -1;
	return calibrated(&cal) > r1 ? calibrated(&cal) : r1;
}

/* ----------------------------------------------------------------- ntp */

struct flood {
	struct transport *t;
	double rate;		/* requests per second */
	int64_t duration, interval, timeout;
	uint32_t nonce;
	uint64_t sent, replies, dup, other;
	unsigned char *seen;	/* bit per request */
	size_t seen_cap;	/* bits */
};

static int flood_mark(struct flood *f, uint64_t seq)
{
	if (seq >= f->seen_cap) {
		size_t cap = f->seen_cap ? f->seen_cap : 1 << 20;
		unsigned char *p;

		while (cap <= seq)
			cap *= 2;
		p = realloc(f->seen, cap / 8);
		if (!p)
			return -1;
		memset(p + f->seen_cap / 8, 0, (cap - f->seen_cap) / 8);
		f->seen = p;
		f->seen_cap = cap;
	}
	if (f->seen[seq / 8] & (1u << (seq % 8)))
		return 1;
	f->seen[seq / 8] |= (unsigned char)(1u << (seq % 8));
	return 0;
}

static uint64_t flood_take(struct flood *f)
{
	static unsigned char bufs[RBATCH][RBUF];
	struct transport_msg m[RBATCH];
	uint64_t got = 0;
	int i, n;

	for (;;) {
		for (i = 0; i < RBATCH; i++)
			m[i] = (struct transport_msg){ .buf = bufs[i], .cap = RBUF };
		n = transport_recv_batch(f->t, m, RBATCH);
		if (n <= 0)
			return got;
		for (i = 0; i < n; i++) {
			size_t len = m[i].len > RBUF ? RBUF : m[i].len;
			size_t seg = m[i].segment ? m[i].segment : len, off;

			for (off = 0; off < len; off += seg) {
				struct ntp_packet r;
				size_t l = len - off < seg ? len - off : seg;

				if (ntp_decode(bufs[i] + off, l, &r) || r.mode != NTP_MODE_SERVER ||
				    (uint32_t)(r.org >> 32) != f->nonce ||
				    (r.org & 0xffffffffu) >= f->sent) {
					f->other++;
					continue;
				}
				switch (flood_mark(f, r.org & 0xffffffffu)) {
				case 0: f->replies++; got++; break;
				case 1: f->dup++; break;
				default: ntpx_die(NTPX_EXIT_FAIL, "out of memory");
				}
			}
		}
	}
}

static int run_flood(struct flood *f)
{
	static unsigned char reqs[BATCH][NTP_HEADER_LEN];
	struct transport_msg m[BATCH];
	struct ntp_packet q = {
		.leap = NTP_LEAP_ALARM, .version = 4, .mode = NTP_MODE_CLIENT, .precision = -20,
	};
	int64_t start = clock_monotonic_ns(), next_line = start + f->interval, end, sent_end;
	uint64_t line_sent = 0, line_rep = 0;
	int i, n;

	emit("#ntpx-load 1\n#tool loadgen ntp\n#fields t requests replies\n");
	emit_flush();
	while (!stopping) {
		int64_t now = clock_monotonic_ns();
		uint64_t due = (uint64_t)((double)(now - start) * f->rate / 1e9);
		unsigned want;

		if (f->duration && now - start >= f->duration)
			break;
		if (f->sent >= 0xffffffffu - BATCH)
			break;		/* the sequence space of one nonce */
		line_rep += flood_take(f);
		if (now >= next_line) {
			emit("%" PRId64 " %" PRIu64 " %" PRIu64 "\n", clock_realtime_ns(),
			       line_sent, line_rep);
			emit_flush();
			line_sent = line_rep = 0;
			next_line += f->interval;
		}
		if (due <= f->sent) {
			int64_t next = start + (int64_t)((double)(f->sent + 1) * 1e9 / f->rate);

			if (next - now > 20000)
				wait_readable(f->t, next - now > 1000000 ? 1000000 : next - now);
			continue;
		}
		want = due - f->sent > BATCH ? BATCH : (unsigned)(due - f->sent);
		for (i = 0; i < (int)want; i++) {
			q.xmt = (uint64_t)f->nonce << 32 | (f->sent + (uint64_t)i);
			ntp_encode(&q, reqs[i]);
			m[i] = (struct transport_msg){ .buf = reqs[i], .len = NTP_HEADER_LEN };
		}
		n = transport_send_batch(f->t, m, want);
		if (n == -EAGAIN || n == -ENOBUFS) {
			wait_writable(f->t);
			continue;
		}
		if (n == -ECONNREFUSED)
			continue;
		if (n < 0) {
			ntpx_err("send: %s", strerror(-n));
			return NTPX_EXIT_FAIL;
		}
		f->sent += (uint64_t)n;
		line_sent += (uint64_t)n;
	}
	/* Late replies still count until the timeout. */
	sent_end = clock_monotonic_ns();
	end = sent_end + f->timeout;
	while (clock_monotonic_ns() < end && f->replies < f->sent) {
		wait_readable(f->t, end - clock_monotonic_ns());
		line_rep += flood_take(f);
	}
	emit("%" PRId64 " %" PRIu64 " %" PRIu64 "\n", clock_realtime_ns(), line_sent, line_rep);
	emit_flush();
	if (out_state == OUT_FAILED) {
		free(f->seen);
		return NTPX_EXIT_FAIL;
	}
	{
		double el = (double)(sent_end - start) / 1e9;
		uint64_t lost = f->sent - f->replies;

		fprintf(stderr, "%s: ntp requests %" PRIu64 " replies %" PRIu64 " lost %" PRIu64
			" loss %.4f%% rate %.0f/s", opt_prog, f->sent, f->replies, lost,
			f->sent ? 100.0 * (double)lost / (double)f->sent : 0.0,
			el > 0 ? (double)f->sent / el : 0.0);
		if (f->dup)
			fprintf(stderr, " duplicate %" PRIu64, f->dup);
		if (f->other)
			fprintf(stderr, " other %" PRIu64, f->other);
		fputc('\n', stderr);
	}
	free(f->seen);
	return NTPX_EXIT_OK;
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
 * kernel allows; other backends have no such fd and ignore it.
 */
static void deep_rcvbuf(struct transport *t)
{
	int want = 16 << 20;

	if (setsockopt(transport_fd(t), SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)))
		(void)setsockopt(transport_fd(t), SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
}

/* The path MTU's datagram: IP_MTU of the connected socket where the
   backend is a kernel socket, else a 1500-byte frame's. */
static size_t default_size(struct transport *t)
{
	int mtu = 0;
	socklen_t len = sizeof(mtu);

	if (getsockopt(transport_fd(t), IPPROTO_IP, IP_MTU, &mtu, &len) == 0 && mtu > 28 + HDR_LEN)
		return (size_t)mtu - 28;
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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *rate = NULL, *capacity = NULL, *size = NULL, *duration = NULL;
	const char *burst = NULL, *start = NULL, *ntp = NULL;
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

			if (opt_count(size, MAX_DGRAM, &v) || v < HDR_LEN)
				opt_usage_error("bad size '%s' (%d..%d bytes)", size, HDR_LEN, MAX_DGRAM);
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
