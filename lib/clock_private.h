/* SPDX-License-Identifier: ISC */
/*
 * clock_private.h - what a clock driver provides: the pattern of
 * transport_private.h.  A driver embeds struct clock in its own struct,
 * points it at a const struct clock_ops, reaches its own state with
 * container_of(), and provides one *_open() function, listed in
 * drivers[] in clock.c.  Callers use the wrappers of clock.h only.
 *
 * The adjusting operations are optional: a NULL pointer means the clock
 * cannot be adjusted (or, for realtime, that nobody asked for it with
 * clock_allow_system()); the wrappers in clock.c then refuse.
 */
#ifndef NTPX_CLOCK_PRIVATE_H
#define NTPX_CLOCK_PRIVATE_H

#include "clock.h"

struct clock_ops {
	int64_t (*now)(struct clock *c);
	void (*close)(struct clock *c);
	/* Optional (NULL: the clock cannot); each returns 0 or -errno with a
	   line in @err. */
	int (*step)(struct clock *c, int64_t ns, char *err, size_t errlen);
	int (*slew)(struct clock *c, int64_t ns, int64_t *old_ns, char *err, size_t errlen);
	int (*slew_left)(struct clock *c, int64_t *ns, char *err, size_t errlen);
	int (*freq_get)(struct clock *c, double *ppm, char *err, size_t errlen);
	int (*freq_set)(struct clock *c, double ppm, int relative, char *err, size_t errlen);
	int (*true_error)(struct clock *c, int64_t ref_ns, int64_t *e_ns);
};

struct clock {
	const struct clock_ops *ops;
	char *name;
	/* CLOCK_REALTIME behind the latest now(), for drivers that know it. */
	int64_t last_ref;
};

/*
 * The realtime driver (clock_realtime.c).  Its ops cannot adjust the host
 * clock; clock_allow_system() swaps them for clock_system_ops, which can,
 * once the caller has asked by name.
 */
struct clock *clock_realtime_open(const char *arg, char *err, size_t errlen);
int64_t clock_realtime_now(struct clock *c);
void clock_realtime_close(struct clock *c);
extern const struct clock_ops clock_realtime_ops, clock_system_ops;

/* sim:PATH (clock_sim.c) */
struct clock *clock_sim_open(const char *path, char *err, size_t errlen);

#endif
