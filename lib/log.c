/* SPDX-License-Identifier: ISC */
/*
 * log.c - the one-line error convention (lib/log.h): a leaf, as OpenBSD
 * ntpd's log.c, that every tool and the rest of lib/ may call and that
 * calls nothing of ours.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

const char *ntpx_prog = "ntpx";

void ntpx_prog_set(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (argv0)
		ntpx_prog = slash ? slash + 1 : argv0;
}

static void verr(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "%s: %s\n", ntpx_prog, line);
}

void ntpx_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap);
	va_end(ap);
}

void ntpx_lines_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = buf ? strnlen(buf, len) : 0;
	va_list ap;
	int w;

	if (!buf || n + 1 >= len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + n, len - n - 1, fmt, ap);
	va_end(ap);
	if (w < 0)
		w = 0;
	n += (size_t)w < len - n - 1 ? (size_t)w : len - n - 2;
	buf[n++] = '\n';
	buf[n] = 0;
}

void ntpx_err_lines(const char *lines)
{
	const char *p;
	size_t n;

	for (p = lines; p && *p; p += n + (p[n] == '\n')) {
		n = strcspn(p, "\n");
		ntpx_err("%.*s", (int)n, p);
	}
}

int log_limit_pass(struct log_limit *l, int64_t now, uint64_t *held)
{
	*held = 0;
	if (!l->start || now - l->start >= l->window) {
		*held = l->held;
		l->start = now ? now : 1;
		l->n = 0;
		l->held = 0;
	}
	if (l->n < l->max) {
		l->n++;
		return 1;
	}
	l->held++;
	return 0;
}

uint64_t log_limit_held(struct log_limit *l)
{
	uint64_t held = l->held;

	l->held = 0;
	return held;
}

void ntpx_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap);
	va_end(ap);
	exit(code);
}

void opt_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", ntpx_prog);
	exit(NTPX_EXIT_USAGE);
}
