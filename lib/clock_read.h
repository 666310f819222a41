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

#endif
