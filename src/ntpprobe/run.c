/* SPDX-License-Identifier: ISC */
/*
 * The schedule of ntpprobe's exchanges: one every interval on
 * CLOCK_MONOTONIC, until --count, --duration, a signal, a failed write or
 * a kiss that refuses service.  With a sim: clock each record also
 * carries true2, twice the true offset (reference minus client) at the
 * exchange's midpoint: the sim clock reads CLOCK_REALTIME r and returns
 * r + e(r), so T1 - r1 = e(r1) and T4 - r4 = e(r4) exactly, and
 * true2 = -(e(r1) + e(r4)), which is -2 e((r1 + r4) / 2) without losing
 * the half nanosecond wherever e is linear across the exchange.  With
 * the server's sim clock too (--server-clock), its error at the same two
 * instants is added, es(r1) + es(r4): true2 is then twice the true offset
 * of the server's clock from the client's, whichever of them is sim.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "discipline.h"
#include "ntp.h"
#include "opt.h"
#include "out.h"
#include "record.h"
#include "transport.h"
#include "ntpprobe.h"

volatile sig_atomic_t probe_stopping;

void probe_on_signal(int sig)
{
	(void)sig;
	probe_stopping = 1;
}

/* Sleeps until @when (CLOCK_MONOTONIC ns); returns early on a signal. */
static void sleep_until(int64_t when)
{
	struct timespec ts = { .tv_sec = when / NTPX_NS_PER_SEC, .tv_nsec = when % NTPX_NS_PER_SEC };

	while (!probe_stopping &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * RFC 5905 7.4: RATE asks for fewer requests, DENY and RSTR for none (the
 * run ends once this record is written); other codes only inform.
 */
static void kiss(struct probe *p, const struct probe_out *o, int64_t *interval, int64_t *when)
{
	if (o->x.status == RECORD_KOD && strcmp(p->kiss, "RATE") == 0) {
		/* The next request one new interval from now, not from
		   this one's schedule, which may have slipped. */
		*interval = ntp_backoff_ns(*interval, p->kiss_poll);
		*when = clock_monotonic_ns();
		ntpx_err("%s: kiss code RATE: interval now %.3f s", p->cfg->ep.url,
			 (double)*interval / NTPX_NS_PER_SEC);
	} else if (o->x.status == RECORD_KOD &&
		   (strcmp(p->kiss, "DENY") == 0 || strcmp(p->kiss, "RSTR") == 0)) {
		ntpx_err("%s: kiss code %s: the server refuses service, stopping",
			 p->cfg->ep.url, p->kiss);
		p->kissed_off = 1;
	}
}

/* true2 of an exchange that has T1 and T4 (see the top). */
static void truth(struct probe *p, struct probe_out *o)
{
	int64_t r1 = o->x.t[0], r4 = o->x.t[3], e1 = 0, e4 = 0;

	if (p->client_truth) {
		r1 = p->ref1;
		r4 = clock_last_ref(p->clk);
	}
	o->true2 = -((o->x.t[0] - r1) + (o->x.t[3] - r4));
	if (p->srv_clk && (clock_true_error(p->srv_clk, r1, &e1) ||
			   clock_true_error(p->srv_clk, r4, &e4)))
		return;
	o->true2 += e1 + e4;
	o->has_true2 = 1;
}

/* The exchanges, each record written as it completes (interleave.c). */
void probe_run(struct probe *p)
{
	int64_t interval = p->cfg->interval, start, end, when;
	uint64_t seq;

	start = clock_monotonic_ns();
	end = p->cfg->duration > 0 ? start + p->cfg->duration : INT64_MAX;
	when = start;
	for (seq = 1; seq <= p->cfg->count && !probe_stopping && p->out == OUT_OK &&
	     !p->kissed_off && !p->device_gone; seq++, when += interval) {
		struct probe_out o;
		struct xleave_reply xr;

		/* The end is in real time: a schedule that fell behind (a path
		   slower than the interval) does not stretch the run. */
		if (when >= end || clock_monotonic_ns() >= end)
			break;
		sleep_until(when);
		if (probe_stopping)
			break;
		probe_exchange(p, seq, &o, &xr);
		if (p->truth && (o.x.have & 9u) == 9u)
			truth(p, &o);
		/* A re-resolved peer (restarted server, new path): say so in
		   the stream, and start the filter afresh before this sample. */
		if (transport_peer_reset(p->t) == 1) {
			if (p->pending.x.seq && probe_record(p, &p->pending))
				break;
			p->pending.x.seq = 0;
			if (probe_write_reset(p, seq))
				break;
			if (p->disc)
				discipline_peer_reset(p->disc);
		}
		kiss(p, &o, &interval, &when);
		/* The device went away for good (ib's DEVICE_FATAL, an
		   interface deleted): this record says error, and that is
		   the last.  uudp via=verbs opens its device again itself. */
		if (p->device_gone)
			ntpx_err("%s: the device went away (%s), stopping", p->cfg->ep.url,
				 strerror(ENODEV));
		if (!p->cfg->xleave) {
			if (probe_record(p, &o))
				break;
			continue;
		}
		if (probe_xleave_record(p, &o, &xr))
			break;
	}
	probe_xleave_finish(p, seq);
}
