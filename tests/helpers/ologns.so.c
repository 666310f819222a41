/* SPDX-License-Identifier: ISC */
/*
 * ologns.so - LD_PRELOAD shim for tests/interop/openntpd.t: OpenNTPD's
 * debug line for a reply, "reply from %s: offset %f delay %f, ...",
 * printed to the nanosecond (%.9f) instead of the microsecond (%f).
 *
 * The daemon's filter keeps the reply of lowest delay.  Its delays are
 * differences of double timestamps near 1.7e9 s, so they come in steps
 * of 2^-22 s (238 ns): two replies whose delays print alike at %f may
 * still differ, and then the log cannot tell which one the daemon chose
 * (openntpd.t failed one run in seven that way).  At %.9f each value is
 * the daemon's own double to the nanosecond, and distinct doubles stay
 * distinct.  Only that one format's precision changes; every other line
 * and every argument passes through as it was.
 *
 * The daemon (Debian's build, fortified) logs through __vfprintf_chk;
 * vfprintf is wrapped too, for a build that is not.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);

static const char reply_fmt[] = "reply from %s: offset %f delay %f";
static const char reply_fmt_ns[] = "reply from %s: offset %.9f delay %.9f";

/* FMT, or the same with the reply's two values to the nanosecond in BUF. */
static const char *ologns_fmt(const char *fmt, char *buf, size_t size)
{
	size_t n = sizeof(reply_fmt) - 1, m = sizeof(reply_fmt_ns) - 1;
	size_t rest;

	if (strncmp(fmt, reply_fmt, n) != 0)
		return fmt;
	rest = strlen(fmt + n);
	if (m + rest >= size)
		return fmt;
	memcpy(buf, reply_fmt_ns, m);
	memcpy(buf + m, fmt + n, rest + 1);
	return buf;
}

int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	static int (*real)(FILE *, int, const char *, va_list);
	char buf[256];

	if (!real)
		real = (int (*)(FILE *, int, const char *, va_list))
			dlsym(RTLD_NEXT, "__vfprintf_chk");
	return real(fp, flag, ologns_fmt(fmt, buf, sizeof(buf)), ap);
}

int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	static int (*real)(FILE *, const char *, va_list);
	char buf[256];

	if (!real)
		real = (int (*)(FILE *, const char *, va_list))dlsym(RTLD_NEXT, "vfprintf");
	return real(fp, ologns_fmt(fmt, buf, sizeof(buf)), ap);
}
