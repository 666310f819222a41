/*
 * clock.h - the clocks that T1..T4 are read from, behind one interface.
 *
 * A clock is named the same way in every tool: "realtime" is the host's
 * CLOCK_REALTIME; "sim:PATH" is a simulated clock kept in a shared-memory
 * file (lib/clock_sim.c).  Reading a clock is on the path between a
 * timestamp and the wire, so clock_now() is one indirect call and nothing
 * else.
 */
#ifndef NTPX_CLOCK_H
#define NTPX_CLOCK_H

#include <stddef.h>
#include <stdint.h>

struct clock;

/*
 * Opens the clock called @name.  On failure returns NULL with a one-line
 * reason in @err.
 */
struct clock *clock_open(const char *name, char *err, size_t errlen);
void clock_close(struct clock *c);

/* The clock's name as given to clock_open(). */
const char *clock_name(const struct clock *c);

/* Now, in nanoseconds since the Unix epoch, on this clock's time scale. */
int64_t clock_now(struct clock *c);

/* CLOCK_REALTIME in nanoseconds: the reference time scale. */
int64_t clock_realtime_ns(void);

/* CLOCK_MONOTONIC in nanoseconds: for schedules and timeouts. */
int64_t clock_monotonic_ns(void);

#endif
