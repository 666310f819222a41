/* SPDX-License-Identifier: ISC */
/*
 * clock_realtime.c - the realtime driver: CLOCK_REALTIME, read and, only
 * when asked, adjusted.
 *
 * Its ops read the host clock and cannot change it until
 * clock_allow_system() installs the adjusting ones below, after checking
 * CAP_SYS_TIME: changing the host clock is something a user asks for by
 * name (clockstep --clock realtime --system), never a default, and no test
 * does it.  This file is the only place in ntpx that can change it.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "clock_private.h"
#include "clock_read.h"
#include "opt_units.h"

int64_t clock_realtime_now(struct clock *c)
{
	(void)c;
	return clock_realtime_ns();
}

void clock_realtime_close(struct clock *c)
{
	free(c);
}

const struct clock_ops clock_realtime_ops = {
	.now = clock_realtime_now,
	.close = clock_realtime_close,
};

struct clock *clock_realtime_open(const char *arg, char *err, size_t errlen)
{
	struct clock *c = calloc(1, sizeof(*c));

	(void)arg;
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->ops = &clock_realtime_ops;
	return c;
}

/* The realtime driver's adjusting operations: the kernel's own. */

static int sys_step(struct clock *c, int64_t ns, char *err, size_t errlen)
{
	int64_t t = clock_realtime_ns() + ns;
	struct timespec ts = { .tv_sec = t / NTPX_NS_PER_SEC, .tv_nsec = t % NTPX_NS_PER_SEC };

	if (clock_settime(CLOCK_REALTIME, &ts) < 0) {
		snprintf(err, errlen, "clock 'realtime': clock_settime: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int64_t tv_to_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * NTPX_NS_PER_SEC + (int64_t)tv->tv_usec * NTPX_NS_PER_US;
}

static int sys_slew(struct clock *c, int64_t ns, int64_t *old_ns, char *err, size_t errlen)
{
	struct timeval tv, old;
	int64_t us = ns / NTPX_NS_PER_US;

	tv.tv_sec = us / NTPX_US_PER_SEC;
	tv.tv_usec = us % NTPX_US_PER_SEC;
	if (tv.tv_usec < 0) {
		tv.tv_sec -= 1;
		tv.tv_usec += NTPX_US_PER_SEC;
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
