/* SPDX-License-Identifier: ISC */
/*
 * clock_read.c - the kernel's clocks read raw, in nanoseconds, and what it
 * says of their synchronisation (read only): a leaf
 * that every driver and the schedules may use and that uses nothing.
 */
#include <errno.h>
#include <sys/timex.h>
#include <time.h>

#include "clock_read.h"
#include "opt_units.h"

int64_t clock_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

int64_t clock_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

static int64_t pair_read(const struct clock_pair *p, clockid_t id)
{
	struct timespec ts;

	if (p->read)
		return p->read(id, p->arg);
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

int64_t clock_pair_offset(struct clock_pair *p)
{
	int64_t a1, b, a2, w, off = 0, best = -1, s;
	int i;

	for (i = 0; i < CLOCK_PAIR_TRIES; i++) {
		a1 = pair_read(p, p->a);
		b = pair_read(p, p->b);
		a2 = pair_read(p, p->a);
		w = a2 - a1;
		if (w < 0)		/* @a stepped back: not a sandwich */
			continue;
		if (best < 0 || w < best) {
			best = w;
			off = b - (a1 + w / 2);
		}
		if (p->width_min == 0 || w < p->width_min)
			p->width_min = w ? w : 1;
		/* As narrow as this pair reads, once it knows how narrow that is. */
		if (p->width == 0)	/* the first call: all of them */
			continue;
		if (best <= 2 * p->width_min)
			break;
	}
	if (best < 0) {			/* stepped in every try: the last pair */
		best = 0;
		off = b - a2;
	}
	p->width = best ? best : 1;
	if (p->whole_s) {
		s = (off >= 0 ? off + NTPX_NS_PER_SEC / 2 : off - NTPX_NS_PER_SEC / 2) /
		    NTPX_NS_PER_SEC;
		off = s * NTPX_NS_PER_SEC;
	}
	return off;
}

int clock_sync_read(struct clock_sync *s)
{
	struct timex tx = { .modes = 0 };	/* read only: never a change */
	int state = adjtimex(&tx);

	if (state < 0)
		return -errno;
	s->synced = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
	s->leap = !s->synced ? 0 : tx.status & STA_INS ? 1 : tx.status & STA_DEL ? 2 : 0;
	s->maxerror_ns = (int64_t)tx.maxerror * NTPX_NS_PER_US;
	return 0;
}
