/* SPDX-License-Identifier: ISC */
/*
 * opt.c - shared option parsing and the one-line error convention.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opt.h"
#include "out.h"
#include "version.h"
#include "util_private.h"

const char *opt_prog = "ntpx";

void opt_init(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (argv0)
		opt_prog = slash ? slash + 1 : argv0;
	out_check_at_exit();
}

static void verr(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "%s: %s\n", opt_prog, line);
}

void ntpx_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap);
	va_end(ap);
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
	fprintf(stderr, "Try '%s --help'.\n", opt_prog);
	exit(NTPX_EXIT_USAGE);
}

void opt_version(void)
{
	printf("%s %s\n", opt_prog, NTPX_VERSION);
}

void opt_other(int c, void (*usage)(FILE *out))
{
	switch (c) {
	case 'h':
		usage(stdout);
		exit(NTPX_EXIT_OK);
	case 'V':
		opt_version();
		exit(NTPX_EXIT_OK);
	default:
		fprintf(stderr, "Try '%s --help'.\n", opt_prog);
		exit(NTPX_EXIT_USAGE);
	}
}

/*
 * Reads a plain decimal number (digits, one optional point, more digits)
 * with an optional sign.  strtod is not used: it accepts hex, "inf", "nan"
 * and exponents, none of which belongs in a duration.
 */
static int parse_decimal(const char **sp, int signed_ok, double *v)
{
	const char *s = *sp;
	double sign = 1, x = 0, scale = 1;
	int digits = 0;

	if (*s == '+' || *s == '-') {
		if (!signed_ok)
			return -1;
		sign = *s == '-' ? -1 : 1;
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++, digits++)
		x = x * 10 + (*s - '0');
	if (*s == '.') {
		s++;
		for (; *s >= '0' && *s <= '9'; s++, digits++) {
			scale /= 10;
			x += (*s - '0') * scale;
		}
	}
	if (!digits || !isfinite(x))
		return -1;
	*v = sign * x;
	*sp = s;
	return 0;
}

int opt_duration(const char *s, int signed_ok, int64_t *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	double v;
	size_t i;

	if (!s || parse_decimal(&s, signed_ok, &v))
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(s, units[i].unit) == 0) {
			double x = v * units[i].ns;

			/* Beyond about 292 years int64 ns overflows. */
			if (fabs(x) > 9.2e18)
				return -1;
			*ns = llround(x);
			return 0;
		}
	}
	return -1;
}

int opt_ppm(const char *s, double *ppm)
{
	double v;

	if (!s || parse_decimal(&s, 1, &v))
		return -1;
	if (*s && strcmp(s, "ppm") != 0)
		return -1;
	/* Anything beyond 10% is not a frequency error but a typo. */
	if (fabs(v) > 1e5)
		return -1;
	*ppm = v;
	return 0;
}

int opt_rate(const char *s, double *bps, int *is_fraction)
{
	static const struct { const char *suffix; double mult; } sfx[] = {
		{ "", 1 }, { "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 },
		{ "T", 1e12 },
	};
	double v;
	size_t i;

	if (!s || parse_decimal(&s, 0, &v))
		return -1;
	if (strcmp(s, "%") == 0) {
		if (v <= 0 || v > 100)
			return -1;
		*bps = v / 100;
		*is_fraction = 1;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(sfx); i++) {
		if (strcmp(s, sfx[i].suffix) == 0) {
			if (v <= 0)
				return -1;
			*bps = v * sfx[i].mult;
			*is_fraction = 0;
			return 0;
		}
	}
	return -1;
}

int opt_count(const char *s, uint64_t max, uint64_t *n)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*n = v;
	return 0;
}

int opt_inputs(int argc, char **argv, int first,
	       int (*read)(int fd, const char *name, void *arg), void *arg)
{
	int i, fd, rc;

	if (first >= argc)
		return read(0, "stdin", arg);
	for (i = first; i < argc; i++) {
		fd = strcmp(argv[i], "-") == 0 ? 0 : open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", argv[i], strerror(errno));
		rc = read(fd, fd ? argv[i] : "stdin", arg);
		if (fd)
			close(fd);
		if (rc)
			return rc;
	}
	return 0;
}
