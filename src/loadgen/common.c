/* SPDX-License-Identifier: ISC */
/*
 * common.c - loadgen's output (records on stdout, lib/out.h) and waiting.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "opt.h"
#include "out.h"
#include "loadgen.h"

volatile sig_atomic_t stopping;

/*
 * The reports on stdout (lib/out.h): a line that cannot be written stops
 * the run as a signal would, quietly when the reader went away (EPIPE),
 * with one error line and exit 1 otherwise, and then no summary.
 */
int loadgen_out = OUT_OK;
static int out_errno;		/* the first failed write's */

void __attribute__((format(printf, 1, 2))) emit(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	if (n < 0 && !out_errno)
		out_errno = errno ? errno : EIO;
}

/* Ends a line or a header: flushes it and stops the run if it failed. */
void emit_flush(void)
{
	if (loadgen_out != OUT_OK)
		return;
	loadgen_out = out_errno ? out_failed("standard output", out_errno) :
				out_flush(stdout, "standard output");
	if (loadgen_out != OUT_OK)
		stopping = 1;
}

void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NTPX_NS_PER_SEC, .tv_nsec = ns % NTPX_NS_PER_SEC };

	if (ns > 0)
		nanosleep(&ts, NULL);
}

/* Waits until @t's fd is readable or @ns passed. */
void wait_readable(struct transport *t, int64_t ns)
{
	struct pollfd pfd = { .fd = transport_fd(t), .events = POLLIN };
	struct timespec ts;

	if (ns < 0)
		ns = 0;
	ts.tv_sec = ns / NTPX_NS_PER_SEC;
	ts.tv_nsec = ns % NTPX_NS_PER_SEC;
	ppoll(&pfd, 1, &ts, NULL);
}

void wait_writable(struct transport *t)
{
	struct pollfd pfd = { .fd = transport_fd(t), .events = POLLOUT };

	poll(&pfd, 1, 10);
}

/* The columns of the sink's and the sender's interval lines. */
void print_fields(void)
{
	emit("#fields t bytes packets gbps drops sent_gbps\n");
}

/* An absolute rate (800M, 6G, 100k): a percentage is a usage error. */
double parse_rate_abs(const char *arg, const char *what)
{
	double v;
	int frac;

	if (opt_rate(arg, &v, &frac) || frac)
		opt_usage_error("bad %s '%s' (expected e.g. 800M, 6G, 100k)", what, arg);
	return v;
}
