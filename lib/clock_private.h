/* SPDX-License-Identifier: ISC */
/*
 * clock_private.h - what a clock driver fills in.  Each driver embeds
 * struct clock as its first member and provides one *_open() function,
 * listed in drivers[] in clock.c.
 *
 * The adjusting operations are optional: a NULL pointer means the clock
 * cannot be adjusted (or, for realtime, that nobody asked for it with
 * clock_allow_system()); the wrappers in clock_adjust.c then refuse.
 */
#ifndef NTPX_CLOCK_PRIVATE_H
#define NTPX_CLOCK_PRIVATE_H

#include "clock.h"

struct clock {
	int64_t (*now)(struct clock *c);
	void (*close)(struct clock *c);
	char *name;

	/* Optional; each returns 0 or -errno with a line in @err. */
	int (*step)(struct clock *c, int64_t ns, char *err, size_t errlen);
	int (*slew)(struct clock *c, int64_t ns, int64_t *old_ns, char *err, size_t errlen);
	int (*slew_left)(struct clock *c, int64_t *ns, char *err, size_t errlen);
	int (*freq_get)(struct clock *c, double *ppm, char *err, size_t errlen);
	int (*freq_set)(struct clock *c, double ppm, int relative, char *err, size_t errlen);
	int (*true_error)(struct clock *c, int64_t ref_ns, int64_t *e_ns);

	/* CLOCK_REALTIME behind the latest now(), for drivers that know it. */
	int64_t last_ref;
};

/* sim:PATH (clock_sim.c) */
struct clock *clock_sim_open(const char *path, char *err, size_t errlen);

#endif
