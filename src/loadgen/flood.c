/* SPDX-License-Identifier: ISC */
/*
 * flood.c - loadgen --ntp: NTP client requests at a fixed rate, counting
 * the replies that answer them (org == our xmt), as ntpperf does, to
 * measure a server's capacity.  Nothing here shares the load protocol.
 * With --nts each request carries NTS fields (nts.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "ntp.h"
#include "opt.h"
#include "out.h"
#include "loadgen.h"

/* ----------------------------------------------------------------- ntp */


/*
 * Replies are told apart over the last SEEN_BITS requests (2 MiB of
 * bits, 168 s at 100k/s): memory stays bounded however long the flood
 * runs.  A reply to an older request is counted as late, not as a reply.
 */
#define SEEN_BITS	((uint64_t)1 << 24)

/* 0: first reply to @seq; 1: a duplicate; 2: too old to tell; -1: no memory. */
static int flood_mark(struct flood *f, uint64_t seq)
{
	uint64_t b;

	if (!f->seen && !(f->seen = calloc(SEEN_BITS / 8, 1)))
		return -1;
	/* The bits of requests sent since: fresh. */
	if (f->sent - f->cleared >= SEEN_BITS) {
		memset(f->seen, 0, SEEN_BITS / 8);
		f->cleared = f->sent;
	}
	for (; f->cleared < f->sent; f->cleared++) {
		b = f->cleared % SEEN_BITS;
		f->seen[b / 8] &= (unsigned char)~(1u << (b % 8));
	}
	if (seq + SEEN_BITS < f->sent)
		return 2;
	b = seq % SEEN_BITS;
	if (f->seen[b / 8] & (1u << (b % 8)))
		return 1;
	f->seen[b / 8] |= (unsigned char)(1u << (b % 8));
	return 0;
}

/* The server's time from receive to transmit stamp of reply @r, kept. */
static void flood_response(struct flood *f, const struct ntp_packet *r)
{
	/* 32.32 fixed point to ns, the difference only: no era needed. */
	int64_t d = (int64_t)(r->xmt - r->rec), ns;

	if (!r->rec || !r->xmt)
		return;
	ns = (int64_t)ntpx_sec_to_ns((double)d / 4294967296.0);
	if (!f->rt_n || ns < f->rt_min)
		f->rt_min = ns;
	if (!f->rt_n || ns > f->rt_max)
		f->rt_max = ns;
	f->rt_sum += (double)ns;
	f->rt_sq += (double)ns * (double)ns;
	f->rt_n++;
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
				case 0: f->replies++; got++; flood_response(f, &r); break;
				case 1: f->dup++; break;
				case 2: f->late++; break;
				default: ntpx_die(NTPX_EXIT_FAIL, "out of memory");
				}
			}
		}
	}
}

int run_flood(struct flood *f)
{
	static unsigned char reqs[BATCH][NTS_FLOOD_REQ_MAX];
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
		uint64_t due = (uint64_t)(ntpx_ns_to_sec((double)(now - start)) * f->rate);
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
			int64_t next = start + (int64_t)ntpx_sec_to_ns((double)(f->sent + 1) / f->rate);

			if (next - now > 20 * NTPX_NS_PER_US)
				wait_readable(f->t, next - now > NTPX_NS_PER_MS ? NTPX_NS_PER_MS :
					      next - now);
			continue;
		}
		want = due - f->sent > BATCH ? BATCH : (unsigned)(due - f->sent);
		for (i = 0; i < (int)want; i++) {
			size_t len = NTP_HEADER_LEN;

			q.xmt = (uint64_t)f->nonce << 32 | (f->sent + (uint64_t)i);
			ntp_encode(&q, reqs[i]);
			if (f->nts && !(len = nts_flood_request(f->nts, reqs[i], sizeof(reqs[i]),
								 f->sent + (uint64_t)i)))
				ntpx_die(NTPX_EXIT_FAIL, "cannot build an NTS request");
			m[i] = (struct transport_msg){ .buf = reqs[i], .len = len };
		}
		n = transport_send_batch(f->t, m, want);
		if (n == -EAGAIN || n == -ENOBUFS) {
			wait_writable(f->t);
			continue;
		}
		if (n == -ECONNREFUSED)
			continue;
		if (n == -ENETUNREACH || n == -EHOSTUNREACH || n == -ENETDOWN) {
			/* The path is down (a link flap): these requests are
			   spent and lost, and the flood goes on. */
			f->unsent += want;
			f->sent += want;
			line_sent += want;
			wait_writable(f->t);
			continue;
		}
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
	if (loadgen_out == OUT_FAILED) {
		free(f->seen);
		return NTPX_EXIT_FAIL;
	}
	{
		double el = ntpx_ns_to_sec((double)(sent_end - start));
		uint64_t lost = f->sent - f->replies;

		fprintf(stderr, "%s: ntp requests %" PRIu64 " replies %" PRIu64 " lost %" PRIu64
			" loss %.4f%% rate %.0f/s", ntpx_prog, f->sent, f->replies, lost,
			f->sent ? 100.0 * (double)lost / (double)f->sent : 0.0,
			el > 0 ? (double)f->sent / el : 0.0);
		if (f->dup)
			fprintf(stderr, " duplicate %" PRIu64, f->dup);
		if (f->other)
			fprintf(stderr, " other %" PRIu64, f->other);
		if (f->late)
			fprintf(stderr, " late %" PRIu64, f->late);
		if (f->unsent)
			fprintf(stderr, " unsent %" PRIu64, f->unsent);
		if (f->rt_n) {
			double mean = f->rt_sum / (double)f->rt_n;
			double var = f->rt_sq / (double)f->rt_n - mean * mean;

			fprintf(stderr, " response_us min %.3f mean %.3f max %.3f sd %.3f",
				(double)f->rt_min / 1e3, mean / 1e3, (double)f->rt_max / 1e3,
				var > 0 ? sqrt(var) / 1e3 : 0.0);
		}
		fputc('\n', stderr);
	}
	free(f->seen);
	return NTPX_EXIT_OK;
}

/* --ntp as the options ask: the rate, a random nonce to tell our replies. */
int flood_main(struct transport *t, const struct load_opts *o)
{
	struct flood f = { .t = t, .interval = o->interval, .timeout = o->timeout,
			   .duration = o->duration < 0 ? 10 * NTPX_NS_PER_SEC : o->duration };

	f.rate = o->ntp;
	if (o->nts) {
		char err[512];

		f.nts = nts_flood_new(o, err, sizeof(err));
		if (!f.nts)
			ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	}
	if (getrandom(&f.nonce, sizeof(f.nonce), 0) != sizeof(f.nonce))
		f.nonce = (uint32_t)clock_realtime_ns();
	{
		int rc = run_flood(&f);

		nts_flood_free(f.nts);
		return rc;
	}
}
