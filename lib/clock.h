/* SPDX-License-Identifier: ISC */
/*
 * clock.h - the clocks that T1..T4 are read from, behind one interface.
 *
 * A clock is named the same way in every tool: "realtime" is the host's
 * CLOCK_REALTIME; "sim:PATH" is a simulated clock kept in a shared-memory
 * file (lib/clock_sim.c).  Reading a clock is on the path between a
 * timestamp and the wire, so clock_now() is one indirect call through
 * the driver's const ops (clock_private.h) and nothing else.
 */
#ifndef NTPX_CLOCK_H
#define NTPX_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "clock_read.h"

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

/*
 * A CLOCK_REALTIME reading @ref_ns (a kernel timestamp) on this clock's
 * time scale: itself for realtime, ref + e(ref) for a sim: clock, so that
 * a stamp the kernel took carries the same error as a clock_now() at that
 * instant and true2 stays exact.
 */
int64_t clock_from_realtime(struct clock *c, int64_t ref_ns);


/*
 * Adjusting a clock (the wrappers in clock.c).  Signs: "error" and "offset of the
 * clock" are clock minus CLOCK_REALTIME, +ve => the clock is ahead; a
 * frequency is +ve => the clock runs fast.  Each returns 0, or -errno with
 * one line in @err: -ENOTSUP when the driver cannot do it, -EPERM for
 * realtime unless clock_allow_system() was called first.
 *
 * A sim: clock can always be adjusted; realtime only after an explicit
 * clock_allow_system(), which only clockstep --system calls.  No test
 * ever does: these change the host's clock.
 */

/* Jumps the clock by @ns (+ve => forward) at once. */
int clock_step(struct clock *c, int64_t ns, char *err, size_t errlen);

/*
 * adjtime(2) semantics: moves the clock gradually by @ns (+ve => forward)
 * at CLOCK_SLEW_PPM; a new slew replaces the one in progress, whose
 * remaining amount (ns, same sign convention) goes to *@old_ns if not NULL.
 */
#define CLOCK_SLEW_PPM	500
int clock_slew(struct clock *c, int64_t ns, int64_t *old_ns, char *err, size_t errlen);

/* The part of the current slew still to be applied, in ns (+ve => forward). */
int clock_slew_left(struct clock *c, int64_t *ns, char *err, size_t errlen);

/* The frequency correction in ppm, +ve => fast: get, set, add (@ppm relative). */
int clock_freq_get(struct clock *c, double *ppm, char *err, size_t errlen);
int clock_freq_set(struct clock *c, double ppm, char *err, size_t errlen);
int clock_freq_add(struct clock *c, double ppm, char *err, size_t errlen);

/*
 * realtime only (clock_realtime.c): lets the calls above change the host clock.  Refused
 * (-EPERM) without CAP_SYS_TIME.  A no-op for other clocks.
 */
int clock_allow_system(struct clock *c, char *err, size_t errlen);

/*
 * Ground truth.  clock_true_error() gives e(@ref_ns), the clock minus
 * CLOCK_REALTIME (ns, +ve => ahead) at reference time @ref_ns; -ENOTSUP
 * when the clock does not know it (realtime).  clock_last_ref() is the
 * CLOCK_REALTIME reading (ns) that the latest clock_now() on this handle
 * was derived from (sim: only; 0 otherwise), so that a caller can ask for
 * the truth at exactly the instant a timestamp was taken.
 */
int clock_true_error(struct clock *c, int64_t ref_ns, int64_t *e_ns);
int64_t clock_last_ref(const struct clock *c);

/*
 * The simulated clock (clock_sim.c): sim(t) = CLOCK_REALTIME(t) + e(t),
 *
 *   e(t) = phase + freq (t - t0) + wander(t) + slew done by t,
 *
 * kept in a small shared-memory file that any number of processes map.
 * wander is a random walk of frequency: every second since creation the
 * frequency takes a step drawn (approximately normal, standard deviation
 * wander_ppm) from a generator seeded with @seed and indexed by the second,
 * so every reader computes the same e(t).  A handle is for one thread.
 */
struct clock_sim_params {
	int64_t offset_ns;	/* e at creation, +ve => ahead */
	double freq_ppm;	/* +ve => fast */
	double wander_ppm;	/* per-second frequency step, ppm; 0 = none */
	uint64_t seed;
};

/* Creates (or atomically replaces) the sim clock file at @path. */
int clock_sim_create(const char *path, const struct clock_sim_params *p,
		     char *err, size_t errlen);

struct clock_sim_state {
	int64_t ref_ns;		/* CLOCK_REALTIME the state was read at */
	int64_t error_ns;	/* e(ref_ns), +ve => ahead */
	int64_t slew_left_ns;	/* +ve => still to move forward */
	double freq_ppm;	/* set frequency, without wander */
	double wander_ppm;	/* the walk's step size */
	double wander_freq_ppm;	/* the walk's current contribution */
	uint64_t seed;
};

/* Reads the whole state of a sim: clock now; -ENOTSUP for other clocks. */
int clock_sim_state(struct clock *c, struct clock_sim_state *st, char *err, size_t errlen);

#endif
