/* SPDX-License-Identifier: ISC */
/*
 * clock_read.h - the kernel's clocks read raw (clock_read.c), for the
 * drivers and for callers that need a reference or a schedule, not a
 * struct clock.  clock.h includes it.
 */
#ifndef NTPX_CLOCK_READ_H
#define NTPX_CLOCK_READ_H

#include <stdint.h>

/* CLOCK_REALTIME in nanoseconds: the reference time scale. */
int64_t clock_realtime_ns(void);

/* CLOCK_MONOTONIC in nanoseconds: for schedules and timeouts. */
int64_t clock_monotonic_ns(void);

/* What the kernel says of CLOCK_REALTIME's synchronisation. */
struct clock_sync {
	int synced;		/* a time daemon disciplines it: not STA_UNSYNC,
				   not TIME_ERROR */
	int leap;		/* 0; 1: a second is inserted at the end of the
				   UTC day (STA_INS), 2: one is deleted (STA_DEL) */
	int64_t maxerror_ns;	/* the kernel's bound on its error (maxerror),
				   which a daemon sets and the kernel grows */
};

/*
 * Reads it with adjtimex(2) and modes 0, which only reads and never
 * changes the clock (every ntpx tool's rule).  Returns 0, or -errno.
 */
int clock_sync_read(struct clock_sync *s);

#endif
