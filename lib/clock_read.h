/* SPDX-License-Identifier: ISC */
/*
 * clock_read.h - the kernel's clocks read raw (clock_read.c), for the
 * drivers and for callers that need a reference or a schedule, not a
 * struct clock.  clock.h includes it.
 */
#ifndef NTPX_CLOCK_READ_H
#define NTPX_CLOCK_READ_H

#include <stdint.h>
#include <time.h>

/* CLOCK_REALTIME in nanoseconds: the reference time scale. */
int64_t clock_realtime_ns(void);

/* CLOCK_MONOTONIC in nanoseconds: for schedules and timeouts. */
int64_t clock_monotonic_ns(void);

/*
 * The offset between two of the kernel's clocks, @b minus @a, read so
 * that a preemption between the reads cannot shift it.  Two reads, one
 * of each, are off by however long the reader was away between them; so
 * @b is read between two reads of @a and compared with their midpoint,
 * which is off by at most half their distance, the sandwich's width.  A
 * sandwich wider than twice the narrowest this pair has seen was stretched
 * by something else (a preemption, an interrupt) and is read again, up to
 * CLOCK_PAIR_TRIES times, the narrowest kept.  The first call reads all
 * of them, to learn the narrowest.
 *
 * @whole_s: the offset is a whole number of seconds (CLOCK_TAI minus
 * CLOCK_REALTIME is the kernel's TAI offset exactly), rounded so.
 * @read: NULL, or what reads a clock instead of clock_gettime(), in ns
 * (a test's clock that stalls between reads).
 */
#define CLOCK_PAIR_TRIES	4

struct clock_pair {
	clockid_t a, b;
	int whole_s;
	int64_t (*read)(clockid_t id, void *arg);
	void *arg;
	int64_t width_min;	/* the narrowest sandwich seen, ns; 0: none yet */
	int64_t width;		/* the last call's, ns */
};

/* @b - @a now, in ns, within width / 2 (0 with whole_s: exact). */
int64_t clock_pair_offset(struct clock_pair *p);

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
