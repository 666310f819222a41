/* SPDX-License-Identifier: ISC */
/*
 * clock.c - clock selection and the realtime driver.
 *
 * New drivers (sim:PATH) add a prefix to the table in clock_open() and a
 * file of their own; nothing above this file knows which driver runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_private.h"
#include "util_private.h"

int64_t clock_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clock_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

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

static struct clock *realtime_open(const char *arg, char *err, size_t errlen)
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

static const struct {
	const char *prefix;	/* exact name, or a prefix ending in ':' */
	struct clock *(*open)(const char *arg, char *err, size_t errlen);
} drivers[] = {
	{ "realtime", realtime_open },
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
