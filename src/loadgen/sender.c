/* SPDX-License-Identifier: ISC */
/*
 * sender.c - the paced sender (a token bucket, batches of GSO messages,
 * an on/off burst schedule) and --calibrate, which measures the path's
 * sustained rate at the sink.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "loadproto.h"
#include "opt.h"
#include "out.h"
#include "loadgen.h"

/* -------------------------------------------------------------- sender */


/* Takes every report waiting; keeps the newest.  1 when the kernel said
   nothing listens there (ICMP port unreachable), else 0. */
static int sender_poll_reports(struct sender *s)
{
	unsigned char b[RBATCH][512];
	struct transport_msg m[RBATCH];
	int i, n;

	for (;;) {
		for (i = 0; i < RBATCH; i++)
			m[i] = (struct transport_msg){ .buf = b[i], .cap = sizeof(b[i]) };
		n = transport_recv_batch(s->t, m, RBATCH);
		if (n <= 0)
			return n == -ECONNREFUSED;
		for (i = 0; i < n; i++) {
			struct load_report lr;
			struct report r;

			if (load_report_get(b[i], m[i].len, &lr) || lr.run != s->run)
				continue;
			r.elapsed = lr.elapsed;
			r.bytes = lr.bytes;
			r.packets = lr.packets;
			r.lost = lr.lost;
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

		load_hdr_put(p, LOAD_DATA, s->run, s->seq++);
	}
}

/*
 * One run's pace: its clock, the token bucket and the interval line.  The
 * run is these steps in order: pace_start, the header, sender_loop (each
 * turn pace_line, pace_burst_off, pace_want, sender_send), sender_fin and
 * sender_summary.
 */
struct pace {
	size_t msg_bytes;		/* a message: per_msg datagrams */
	double bucket, cap;		/* bytes */
	int64_t start, last;		/* monotonic ns: the run's start, the last fill */
	int64_t next_line, last_line;	/* monotonic ns */
	uint64_t line_sent;		/* bytes sent since the last line */
};

/* The bucket's size, and the start: the first edge of a burst schedule
   that starts in the future. */
static void pace_start(const struct sender *s, struct pace *p)
{
	p->msg_bytes = s->size * s->per_msg;
	p->bucket = 0;
	p->line_sent = 0;
	p->start = p->last = p->last_line = clock_monotonic_ns();
	p->next_line = p->start + s->interval;
	/* The bucket holds what the sender owes, up to CATCHUP_NS of sending
	   at the rate (three messages if that is more).  On time, each turn
	   sleeps until one message is owed and sends it, so the bucket holds
	   no more than that.  Woken late (a busy machine, for tens of ms), or
	   held up by the kernel, a turn finds more owed and sends it at once:
	   over any interval longer than CATCHUP_NS the offered rate is the
	   rate asked, which a shaper's queue under this load needs to stay
	   full.  A sender later than that forgoes the rest.  Flat out, a
	   batch. */
	p->cap = s->rate ? s->rate / 8 * ntpx_ns_to_sec((double)CATCHUP_NS) :
		(double)p->msg_bytes * BATCH;
	if (p->cap < 3.0 * (double)p->msg_bytes)
		p->cap = 3.0 * (double)p->msg_bytes;
	if (s->off) {
		int64_t w = s->start_rt - clock_realtime_ns();

		if (w > 0)
			sleep_ns(w);
		p->start = p->last = p->last_line = clock_monotonic_ns();
		p->next_line = p->start + s->interval;
	}
}

/* The interval line, when it is due at @now. */
static void pace_line(struct sender *s, struct pace *p, int64_t now)
{
	if (now < p->next_line)
		return;
	sender_line(s, now - p->last_line, p->line_sent);
	p->line_sent = 0;
	p->last_line = now;
	p->next_line += s->interval;
}

/* In the off part of the burst schedule: sleeps towards the next edge (or
   line), empties the bucket and says 1; 0 when the schedule is on. */
static int pace_burst_off(const struct sender *s, struct pace *p, int64_t now)
{
	int64_t w = burst_wait(s, clock_realtime_ns()), until;

	if (!w)
		return 0;
	until = p->next_line - now;
	p->bucket = 0;
	sleep_ns(w < until ? w : until);
	p->last = clock_monotonic_ns();
	return 1;
}

/* How many messages to send at @now: a batch flat out, else what the
   bucket holds; 0 after sleeping until it holds one (or the line). */
static int pace_want(const struct sender *s, struct pace *p, int64_t now)
{
	int want;

	if (!s->rate)
		return BATCH;
	p->bucket += s->rate / 8 * ntpx_ns_to_sec((double)(now - p->last));
	if (p->bucket > p->cap)
		p->bucket = p->cap;
	p->last = now;
	if (p->bucket < (double)p->msg_bytes) {
		int64_t need = (int64_t)(((double)p->msg_bytes - p->bucket) * 8e9 / s->rate);

		sleep_ns(need < p->next_line - now ? need : p->next_line - now);
		return 0;
	}
	want = (int)(p->bucket / (double)p->msg_bytes);
	return want > BATCH ? BATCH : want;
}

/* @want messages, one batch: 0 (sent, or a refusal to try again), or -1
   with the error line. */
static int sender_send(struct sender *s, struct pace *p, int want)
{
	static unsigned char bufs[BATCH][MAX_DGRAM];
	struct transport_msg m[BATCH];
	int i, n;

	for (i = 0; i < want; i++) {
		fill(s, bufs[i], s->per_msg);
		m[i] = (struct transport_msg){ .buf = bufs[i], .len = p->msg_bytes,
					       .segment = s->per_msg > 1 ? s->size : 0 };
	}
	n = transport_send_batch(s->t, m, (unsigned)want);
	if (n < 0) {
		/* Sequence numbers not sent are taken back. */
		s->seq -= (uint64_t)want * s->per_msg;
		if (n == -EAGAIN || n == -ENOBUFS) {
			wait_writable(s->t);
			return 0;
		}
		if (n == -ECONNREFUSED) {	/* no sink (yet): ICMP */
			s->send_errors++;
			return 0;
		}
		ntpx_err("send: %s", strerror(-n));
		return -1;
	}
	s->seq -= (uint64_t)(want - n) * s->per_msg;
	s->sent_packets += (uint64_t)n * s->per_msg;
	s->sent_bytes += (uint64_t)n * p->msg_bytes;
	p->line_sent += (uint64_t)n * p->msg_bytes;
	if (s->rate)
		p->bucket -= (double)n * (double)p->msg_bytes;
	return 0;
}

/*
 * Is the run over at @now?  The duration on our clock; with sink_time
 * (calibration), also on the sink's, which is what is measured: its
 * reports must span the duration less the warm-up (calibrated()).  A sink
 * that lost the CPU, or started late, has done so only once it has
 * received for that long, however late that is on our clock.
 * FIN_WAIT_NS past the duration is the limit for a sink that never does.
 */
static int sender_done(const struct sender *s, const struct pace *p, int64_t now)
{
	if (!s->duration || now - p->start < s->duration)
		return 0;
	return !s->sink_time ||
	       (s->first_warm.valid && s->last.elapsed >= s->first_warm.elapsed &&
		s->last.elapsed - s->first_warm.elapsed >= (uint64_t)(s->duration - s->warmup)) ||
	       now - p->start >= s->duration + FIN_WAIT_NS;
}

/* Sends until the duration is over or a signal: 0, or -1 on a send error. */
static int sender_loop(struct sender *s, struct pace *p)
{
	while (!stopping) {
		int64_t now = clock_monotonic_ns();
		int want;

		if (sender_done(s, p, now))
			break;
		sender_poll_reports(s);
		pace_line(s, p, now);
		if (pace_burst_off(s, p, now))
			continue;
		want = pace_want(s, p, now);
		if (want && sender_send(s, p, want))
			return -1;
	}
	return 0;
}

/*
 * FIN, again every FIN_RESEND_NS as it may be lost as anything else, until
 * the sink's report accounts for every datagram (what was in flight
 * arrived or is counted lost): the wait is for that report, however long
 * a busy sink takes to read what is queued to it, not for a fixed time.
 * It ends sooner when nothing listens there (the kernel's port
 * unreachable), and at FIN_WAIT_NS at the latest, for a sink that is gone
 * without a word.  Then the line of what the sink reported since
 * @sending, its view while we sent.
 */
static void sender_fin(struct sender *s, const struct pace *p, const struct report *sending)
{
	unsigned char fin[LOAD_HDR_LEN];
	struct transport_msg fm = { .buf = fin, .len = sizeof(fin) };
	int64_t now = clock_monotonic_ns(), end = now + FIN_WAIT_NS, resend = now;

	load_hdr_put(fin, LOAD_FIN, s->run, s->seq);
	for (;;) {
		if (now >= resend) {
			(void)transport_send_batch(s->t, &fm, 1);
			resend = now + FIN_RESEND_NS;
		}
		wait_readable(s->t, (resend < end ? resend : end) - now);
		if (sender_poll_reports(s))
			break;
		if (s->last.valid && s->last.packets + s->last.lost >= s->seq)
			break;
		now = clock_monotonic_ns();
		if (now >= end)
			break;
	}
	if (s->last.valid && (!sending->valid || s->last.elapsed > sending->elapsed))
		sender_line(s, clock_monotonic_ns() - p->last_line, p->line_sent);
}

/* The run's one line on stderr: what was sent in @el ns, what the sink got. */
static void sender_summary(const struct sender *s, const struct report *sending, int64_t el)
{
	fprintf(stderr, "%s: sent %" PRIu64 " datagrams of %zu bytes, %" PRIu64
		" bytes in %.3f s (%.6f Gbit/s)", ntpx_prog, s->sent_packets, s->size,
		s->sent_bytes, ntpx_ns_to_sec((double)el), (double)s->sent_bytes * 8 / (double)el);
	if (s->got_report)
		fprintf(stderr, "; sink received %" PRIu64 " (%.6f Gbit/s), lost %" PRIu64
			" (%.3f%%)", s->last.packets,
			sending->valid && sending->elapsed ?
			(double)sending->bytes * 8 / (double)sending->elapsed : 0.0,
			s->last.lost,
			s->sent_packets ? 100.0 * (double)s->last.lost / (double)s->sent_packets : 0.0);
	else
		fprintf(stderr, "; no report from a sink");
	if (s->send_errors)
		fprintf(stderr, ", refused %" PRIu64, s->send_errors);
	fputc('\n', stderr);
}

int run_sender(struct sender *s)
{
	struct report sending;
	struct pace p;
	int64_t el;

	pace_start(s, &p);
	if (!s->quiet) {
		emit("#ntpx-load 1\n#tool loadgen\n");
		print_fields();
		emit_flush();
	}
	if (sender_loop(s, &p))
		return NTPX_EXIT_FAIL;
	el = clock_monotonic_ns() - p.start;
	sending = s->last;
	sender_fin(s, &p, &sending);
	if (!s->quiet) {
		if (loadgen_out == OUT_FAILED)
			return NTPX_EXIT_FAIL;
		sender_summary(s, &sending, el);
	}
	s->last = sending;
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
 * @duration; then, for the rest, a quarter above what came through.  Each
 * run lasts its time as the sink measures it too (sender_done).
 * Sending flat out overloads the machine as much as the path (the sender
 * and the shaper share CPUs), so the second run, above the path's rate but
 * not far, is the one measured.
 */
double calibrate_path(const struct sender *proto, int64_t duration)
{
	struct sender cal = *proto;
	double r1;

	cal.rate = 0;
	cal.on = cal.off = 0;
	cal.quiet = 1;
	cal.sink_time = 1;
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
	cal.sink_time = 1;
	cal.duration = duration - duration / 3;
	cal.warmup = cal.duration / 4 < WARMUP_NS ? cal.duration / 4 : WARMUP_NS;
	if (run_sender(&cal))
		return -1;
	return calibrated(&cal) > r1 ? calibrated(&cal) : r1;
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

/*
 * The sender as the options ask: the datagram size and how many go in a
 * GSO message, the rate (absolute, or a fraction of --capacity or of a
 * calibration run first), the burst schedule; or --calibrate alone.
 */
int sender_main(struct transport *t, const struct load_opts *o)
{
	struct sender s = { .t = t, .interval = o->interval, .rate = o->rate,
			    .on = o->on, .off = o->off };
	double frac = o->frac;
	int64_t dur = o->duration;

	if (getrandom(&s.run, sizeof(s.run), 0) != sizeof(s.run))
		s.run = (uint32_t)clock_realtime_ns() ^ (uint32_t)getpid();
	s.size = o->size ? o->size : default_size(t);
	/* GSO packs datagrams that fit the path MTU, 64 KiB at most. */
	s.per_msg = 1;
	if (o->gso && s.size <= default_size(t)) {
		s.per_msg = MAX_DGRAM / s.size;
		if (s.per_msg > TRANSPORT_MAX_SEGMENTS)
			s.per_msg = TRANSPORT_MAX_SEGMENTS;
	}
	if (s.on)
		s.start_rt = o->start >= 0 ? o->start :
			(clock_realtime_ns() / NTPX_NS_PER_SEC + 1) * NTPX_NS_PER_SEC;
	if (frac || o->calibrate) {
		int64_t cd = o->calibrate && dur > 0 ? dur : 3 * NTPX_NS_PER_SEC;
		double cap = calibrate_path(&s, cd);

		if (cap < 0)
			ntpx_die(NTPX_EXIT_FAIL, "%s: send failed during calibration", o->url);
		if (cap == 0)
			ntpx_die(NTPX_EXIT_FAIL, "%s: calibration failed: no report from a sink "
				 "(is 'loadgen --sink' running there?)", o->url);
		if (o->calibrate) {
			/* Payload, and on the wire with the UDP, IPv4 and
			   Ethernet headers (42 bytes a datagram), which is what
			   a shaper such as HTB counts. */
			emit("capacity_bps %.0f\ncapacity_gbps %.6f\ncapacity_l2_bps %.0f\n",
			     cap, cap / 1e9, cap * (double)(s.size + 42) / (double)s.size);
			emit_flush();
			if (loadgen_out == OUT_OK)
				fprintf(stderr, "%s: %s sustained %.6f Gbit/s of %zu-byte datagrams\n",
					ntpx_prog, o->url, cap / 1e9, s.size);
			return out_exit_code(loadgen_out);
		}
		s.rate = frac * cap;
		fprintf(stderr, "%s: calibrated %.6f Gbit/s, sending at %.6f Gbit/s\n",
			ntpx_prog, cap / 1e9, s.rate / 1e9);
		s.run += 2;	/* a new run for the sink */
	}
	s.duration = dur < 0 ? 10 * NTPX_NS_PER_SEC : dur;
	return run_sender(&s);
}
