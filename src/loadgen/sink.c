/* SPDX-License-Identifier: ISC */
/*
 * sink.c - loadgen --sink: counts what each sender's run delivers and
 * lost, and reports it back every LOAD_REPORT_NS (lib/loadproto.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "loadproto.h"
#include "opt.h"
#include "out.h"
#include "loadgen.h"

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
	unsigned char b[LOAD_REPORT_LEN];
	struct transport_msg m = { .buf = b, .len = sizeof(b), .addr = &r->from };
	struct load_report rep = { .run = r->id, .elapsed = (uint64_t)(now - r->first),
				   .bytes = r->bytes, .packets = r->packets, .lost = run_lost(r) };

	load_report_put(b, &rep);
	/* A report that cannot go now is replaced by the next one. */
	(void)transport_send_batch(s->t, &m, 1);
}

/* One datagram of @len bytes at @p from @from. */
static void sink_take(struct sink *s, const unsigned char *p, size_t len,
		      const struct transport_addr *from, int64_t now)
{
	struct load_hdr h;
	struct run *r;

	if (load_hdr_get(p, len, &h) == LOAD_FOREIGN) {
		s->foreign++;
		return;
	}
	r = sink_run(s, h.run, from, now);
	r->last = now;
	r->from = *from;
	if (h.kind == LOAD_FIN) {
		/* It carries how many were sent: the tail lost counts too. */
		if (h.seq > r->next_seq)
			r->next_seq = h.seq;
		r->fin = 1;
		sink_report(s, r, now);
		return;
	}
	if (h.seq + 1 > r->next_seq)
		r->next_seq = h.seq + 1;
	r->bytes += len;
	r->packets++;
	s->bytes += len;
	s->packets++;
}

int run_sink(struct transport *t, int64_t interval, int64_t duration)
{
	static unsigned char bufs[RBATCH][RBUF];
	struct transport_msg m[RBATCH];
	struct transport_addr from[RBATCH];
	struct sink s = { .t = t };
	int64_t start = clock_monotonic_ns(), next_report = start + LOAD_REPORT_NS;
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
			next_report = now + LOAD_REPORT_NS;
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
	if (loadgen_out == OUT_FAILED)
		return NTPX_EXIT_FAIL;
	{
		int64_t el = clock_monotonic_ns() - start;

		fprintf(stderr, "%s: sink received %" PRIu64 " datagrams, %" PRIu64
			" bytes in %.3f s (%.6f Gbit/s), lost %" PRIu64 ", from %d senders",
			ntpx_prog, s.packets, s.bytes, ntpx_ns_to_sec((double)el),
			(double)s.bytes * 8 / (double)el, s.lost + sink_lost(&s), s.nruns);
		if (s.foreign)
			fprintf(stderr, ", not ours %" PRIu64, s.foreign);
		fputc('\n', stderr);
	}
	return NTPX_EXIT_OK;
}
