/* SPDX-License-Identifier: ISC */
/*
 * clock_read.c - the kernel's clocks read raw, in nanoseconds: a leaf
 * that every driver and the schedules may use and that uses nothing.
 */
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
