/* SPDX-License-Identifier: ISC */
/*
 * noclock.so - LD_PRELOAD shim for the interop tests: a daemon under test
 * (OpenNTPD, ntpsec's ntpd) may believe it sets the clock, but never does.
 *
 * Every call that could change a clock is a no-op that reports success:
 * adjtime, adjtimex, ntp_adjtime and clock_adjtime with modes != 0 answer
 * with the clock's current state (read with modes = 0, which changes
 * nothing), settimeofday and clock_settime do nothing.  adjtime reports no
 * adjustment in progress.  Reads (modes = 0) pass through.  The tests also
 * drop CAP_SYS_TIME (setpriv), so that a path this shim misses fails in
 * the kernel instead of setting the clock; each write is noted on
 * stderr ("noclock: NAME"), so that the tests can see the daemon tried.
 *
 * NOCLOCK_WARP=N (2..1000) also makes the daemon's scheduler run N times
 * faster: CLOCK_MONOTONIC and CLOCK_BOOTTIME, which daemons schedule by,
 * advance N times faster than the real ones from the first call on, and
 * the timeouts of poll, ppoll and select are divided by N.  The
 * wall clock (CLOCK_REALTIME, gettimeofday, SO_TIMESTAMP), which the NTP
 * timestamps come from, is untouched, so offsets and delays are real.
 * OpenNTPD polls a valid peer every 30 s, so without it reaching "clock
 * synced" takes minutes.
 */
#include <dlfcn.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

int adjtime(const struct timeval *delta, struct timeval *olddelta);
int adjtimex(struct timex *tx);
int ntp_adjtime(struct timex *tx);
int __adjtimex(struct timex *tx);
int clock_adjtime(clockid_t clk, struct timex *tx);
int settimeofday(const struct timeval *tv, const struct timezone *tz);
int clock_settime(clockid_t clk, const struct timespec *ts);
int clock_gettime(clockid_t clk, struct timespec *ts);
int poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *mask);
int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout);

static void noclock_note(const char *name)
{
	static const char pre[] = "noclock: ";
	char buf[64];
	size_t n = strlen(name);

	if (n > sizeof(buf) - sizeof(pre) - 1)
		n = sizeof(buf) - sizeof(pre) - 1;
	memcpy(buf, pre, sizeof(pre) - 1);
	memcpy(buf + sizeof(pre) - 1, name, n);
	buf[sizeof(pre) - 1 + n] = '\n';
	if (write(2, buf, sizeof(pre) + n) < 0)
		return;
}

/* The state of CLK, read only; what a write of TX would have returned. */
static int noclock_read(clockid_t clk, struct timex *tx)
{
	struct timex rd;

	memset(&rd, 0, sizeof(rd));
	rd.modes = 0;
	return (int)syscall(SYS_clock_adjtime, clk, tx ? tx : &rd);
}

static int noclock_adjust(clockid_t clk, struct timex *tx)
{
	if (tx && tx->modes == 0)
		return (int)syscall(SYS_clock_adjtime, clk, tx);
	noclock_note("clock_adjtime");
	if (tx) {
		unsigned int modes = tx->modes;

		/* ADJ_OFFSET_SS_READ (0xa001) is a read in adjtime's old form. */
		tx->modes = 0;
		if (modes == 0xa001)
			tx->offset = 0;
	}
	return noclock_read(clk, tx);
}

int clock_adjtime(clockid_t clk, struct timex *tx)
{
	return noclock_adjust(clk, tx);
}

int adjtimex(struct timex *tx)
{
	return noclock_adjust(CLOCK_REALTIME, tx);
}

int __adjtimex(struct timex *tx)
{
	return noclock_adjust(CLOCK_REALTIME, tx);
}

int ntp_adjtime(struct timex *tx)
{
	return noclock_adjust(CLOCK_REALTIME, tx);
}

int adjtime(const struct timeval *delta, struct timeval *olddelta)
{
	if (delta)
		noclock_note("adjtime");
	if (olddelta) {
		olddelta->tv_sec = 0;
		olddelta->tv_usec = 0;
	}
	return 0;
}

int settimeofday(const struct timeval *tv, const struct timezone *tz)
{
	noclock_note("settimeofday");
	return 0;
}

int clock_settime(clockid_t clk, const struct timespec *ts)
{
	noclock_note("clock_settime");
	return 0;
}

/* The warp factor: 1 (none) unless NOCLOCK_WARP says otherwise. */
static int64_t noclock_warp(void)
{
	static int64_t warp;

	if (!warp) {
		const char *e = getenv("NOCLOCK_WARP");
		long v = e ? strtol(e, NULL, 10) : 1;

		warp = v >= 2 && v <= 1000 ? v : 1;
	}
	return warp;
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static int64_t base[8];	/* ns of the first read, per clock id */
	int64_t now, w = noclock_warp();
	int r;

	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	r = real(clk, ts);
	if (r || w == 1 || (clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME &&
			    clk != CLOCK_MONOTONIC_COARSE))
		return r;
	now = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
	if (!base[clk])
		base[clk] = now;
	now = base[clk] + (now - base[clk]) * w;
	ts->tv_sec = now / 1000000000;
	ts->tv_nsec = now % 1000000000;
	return 0;
}

int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	static int (*real)(struct pollfd *, nfds_t, int);
	int64_t w = noclock_warp();

	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	if (timeout_ms > 0)
		timeout_ms = (int)((timeout_ms + w - 1) / w);
	return real(fds, n, timeout_ms);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *mask)
{
	static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	struct timespec t;
	int64_t ns, w = noclock_warp();

	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, const struct timespec *,
				const sigset_t *))dlsym(RTLD_NEXT, "ppoll");
	if (!timeout)
		return real(fds, n, NULL, mask);
	ns = ((int64_t)timeout->tv_sec * 1000000000 + timeout->tv_nsec) / w;
	t.tv_sec = ns / 1000000000;
	t.tv_nsec = ns % 1000000000;
	return real(fds, n, &t, mask);
}

int select(int n, fd_set *r, fd_set *wr, fd_set *e, struct timeval *timeout)
{
	static int (*real)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int64_t us, w = noclock_warp();

	if (!real)
		real = (int (*)(int, fd_set *, fd_set *, fd_set *,
				struct timeval *))dlsym(RTLD_NEXT, "select");
	if (timeout && w > 1) {
		us = ((int64_t)timeout->tv_sec * 1000000 + timeout->tv_usec) / w;
		timeout->tv_sec = us / 1000000;
		timeout->tv_usec = us % 1000000;
	}
	return real(n, r, wr, e, timeout);
}
