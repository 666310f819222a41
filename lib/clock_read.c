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
