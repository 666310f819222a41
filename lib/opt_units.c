/* SPDX-License-Identifier: ISC */
/*
 * opt_units.c - the parsers of values every tool reads the same way
 * (lib/opt_units.h): a leaf that the library may use too
 * (lib/discipline.c's parameters) and bin/ntpx-units offers the scripts.
 */
#include <math.h>
#include <string.h>

#include "opt_units.h"
#include "util_private.h"

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
		{ "ns", 1 }, { "us", NTPX_NS_PER_US }, { "ms", NTPX_NS_PER_MS },
		{ "s", NTPX_NS_PER_SEC }, { "m", 60.0 * NTPX_NS_PER_SEC },
		{ "h", 3600.0 * NTPX_NS_PER_SEC }, { "", NTPX_NS_PER_SEC },
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
