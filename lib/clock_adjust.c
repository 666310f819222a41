/* SPDX-License-Identifier: ISC */
/*
 * clock_adjust.c - stepping, slewing and tuning a clock, and the ground
 * truth a simulated clock knows.
 *
 * The wrappers dispatch to the driver; a driver without the operation
 * gets -ENOTSUP.  The realtime driver has no adjusting operations until
 * clock_allow_system() installs the ones below, after checking
 * CAP_SYS_TIME: changing the host clock is something a user asks for by
 * name (clockstep --clock realtime --system), never a default, and no test
 * does it.  This file is the only place in ntpx that can change it.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "clock_private.h"

static int unsupported(const struct clock *c, const char *what, char *err, size_t errlen)
{
	if (strcmp(c->name, "realtime") == 0) {
		snprintf(err, errlen, "clock 'realtime': refusing to %s the system clock "
			 "(not asked for explicitly)", what);
		return -EPERM;
	}
	snprintf(err, errlen, "clock '%s' cannot %s", c->name, what);
	return -ENOTSUP;
}

int clock_step(struct clock *c, int64_t ns, char *err, size_t errlen)
{
	if (!c->ops->step)
		return unsupported(c, "step", err, errlen);
	return c->ops->step(c, ns, err, errlen);
}

int clock_slew(struct clock *c, int64_t ns, int64_t *old_ns, char *err, size_t errlen)
{
	if (!c->ops->slew)
		return unsupported(c, "slew", err, errlen);
	return c->ops->slew(c, ns, old_ns, err, errlen);
}

int clock_slew_left(struct clock *c, int64_t *ns, char *err, size_t errlen)
{
	if (!c->ops->slew_left)
		return unsupported(c, "report the slew of", err, errlen);
	return c->ops->slew_left(c, ns, err, errlen);
}

int clock_freq_get(struct clock *c, double *ppm, char *err, size_t errlen)
{
	if (!c->ops->freq_get)
		return unsupported(c, "report the frequency of", err, errlen);
	return c->ops->freq_get(c, ppm, err, errlen);
}

int clock_freq_set(struct clock *c, double ppm, char *err, size_t errlen)
{
	if (!c->ops->freq_set)
		return unsupported(c, "set the frequency of", err, errlen);
	return c->ops->freq_set(c, ppm, 0, err, errlen);
}

int clock_freq_add(struct clock *c, double ppm, char *err, size_t errlen)
{
	if (!c->ops->freq_set)
		return unsupported(c, "set the frequency of", err, errlen);
	return c->ops->freq_set(c, ppm, 1, err, errlen);
}

int clock_true_error(struct clock *c, int64_t ref_ns, int64_t *e_ns)
{
	if (!c->ops->true_error)
		return -ENOTSUP;
	return c->ops->true_error(c, ref_ns, e_ns);
}

int64_t clock_last_ref(const struct clock *c)
{
	return c->last_ref;
}

/* The realtime driver's adjusting operations: the kernel's own. */

static int sys_step(struct clock *c, int64_t ns, char *err, size_t errlen)
{
	int64_t t = clock_realtime_ns() + ns;
	struct timespec ts = { .tv_sec = t / 1000000000, .tv_nsec = t % 1000000000 };

	if (clock_settime(CLOCK_REALTIME, &ts) < 0) {
		snprintf(err, errlen, "clock 'realtime': clock_settime: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int64_t tv_to_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
}

static int sys_slew(struct clock *c, int64_t ns, int64_t *old_ns, char *err, size_t errlen)
{
	struct timeval tv, old;
	int64_t us = ns / 1000;

	tv.tv_sec = us / 1000000;
	tv.tv_usec = us % 1000000;
	if (tv.tv_usec < 0) {
		tv.tv_sec -= 1;
		tv.tv_usec += 1000000;
	}
	if (adjtime(&tv, &old) < 0) {
		snprintf(err, errlen, "clock 'realtime': adjtime: %s", strerror(errno));
		return -errno;
	}
	if (old_ns)
		*old_ns = tv_to_ns(&old);
	return 0;
}

static int sys_slew_left(struct clock *c, int64_t *ns, char *err, size_t errlen)
{
	struct timeval old;

	if (adjtime(NULL, &old) < 0) {
		snprintf(err, errlen, "clock 'realtime': adjtime: %s", strerror(errno));
		return -errno;
	}
	*ns = tv_to_ns(&old);
	return 0;
}

/* adjtimex's frequency is ppm with a 16-bit binary fraction. */
static int sys_freq_get(struct clock *c, double *ppm, char *err, size_t errlen)
{
	struct timex tx = { 0 };

	if (adjtimex(&tx) < 0) {
		snprintf(err, errlen, "clock 'realtime': adjtimex: %s", strerror(errno));
		return -errno;
	}
	*ppm = (double)tx.freq / 65536.0;
	return 0;
}

static int sys_freq_set(struct clock *c, double ppm, int relative, char *err, size_t errlen)
{
	struct timex tx = { 0 };
	double cur = 0;
	int rc;

	if (relative) {
		rc = sys_freq_get(c, &cur, err, errlen);
		if (rc)
			return rc;
	}
	tx.modes = ADJ_FREQUENCY;
	tx.freq = (long)((cur + ppm) * 65536.0);
	if (adjtimex(&tx) < 0) {
		snprintf(err, errlen, "clock 'realtime': adjtimex: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

const struct clock_ops clock_system_ops = {
	.now = clock_realtime_now,
	.close = clock_realtime_close,
	.step = sys_step,
	.slew = sys_slew,
	.slew_left = sys_slew_left,
	.freq_get = sys_freq_get,
	.freq_set = sys_freq_set,
};

static int have_cap_sys_time(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	return !!(d[CAP_TO_INDEX(CAP_SYS_TIME)].effective & CAP_TO_MASK(CAP_SYS_TIME));
}

int clock_allow_system(struct clock *c, char *err, size_t errlen)
{
	if (strcmp(c->name, "realtime") != 0)
		return 0;
	if (!have_cap_sys_time()) {
		snprintf(err, errlen, "clock 'realtime': changing the system clock needs CAP_SYS_TIME");
		return -EPERM;
	}
	c->ops = &clock_system_ops;
	return 0;
}
