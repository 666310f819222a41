/* SPDX-License-Identifier: ISC */
/*
 * clock.c - clock selection and the wrappers every caller uses.
 *
 * New drivers (sim:PATH) add a prefix to the table in clock_open() and a
 * file of their own; nothing above this file knows which driver runs.
 * The wrappers dispatch to the driver; a driver without an adjusting
 * operation gets -ENOTSUP here (-EPERM for realtime, whose adjusting
 * operations exist only after clock_allow_system(), clock_realtime.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_private.h"
#include "util_private.h"

static const struct {
	const char *prefix;	/* exact name, or a prefix ending in ':' */
	struct clock *(*open)(const char *arg, char *err, size_t errlen);
} drivers[] = {
	{ "realtime", clock_realtime_open },
	{ "sim:", clock_sim_open },
};

/* The drivers' names, for error lines: "realtime, sim:PATH". */
static const char *clock_known(void)
{
	static char list[128];
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(drivers) && n < sizeof(list); i++) {
		const char *p = drivers[i].prefix;

		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s%s",
				      i ? ", " : "", p, p[strlen(p) - 1] == ':' ? "PATH" : "");
	}
	return list;
}

struct clock *clock_open(const char *name, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(drivers); i++) {
		const char *p = drivers[i].prefix;
		size_t n = strlen(p);
		int is_prefix = n && p[n - 1] == ':';
		struct clock *c;

		if (is_prefix ? strncmp(name, p, n) != 0 : strcmp(name, p) != 0)
			continue;
		c = drivers[i].open(is_prefix ? name + n : name, err, errlen);
		if (!c)
			return NULL;
		c->name = strdup(name);
		if (!c->name) {
			c->ops->close(c);
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		return c;
	}
	snprintf(err, errlen, "unknown clock '%s' (known: %s)", name, clock_known());
	return NULL;
}

void clock_close(struct clock *c)
{
	char *name;

	if (!c)
		return;
	name = c->name;
	c->ops->close(c);
	free(name);
}

const char *clock_name(const struct clock *c)
{
	return c->name;
}

int64_t clock_now(struct clock *c)
{
	return c->ops->now(c);
}

int64_t clock_from_realtime(struct clock *c, int64_t ref_ns)
{
	int64_t e;

	if (clock_true_error(c, ref_ns, &e))
		return ref_ns;
	return ref_ns + e;
}

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
