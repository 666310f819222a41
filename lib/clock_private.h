/*
 * clock_private.h - what a clock driver fills in.  Each driver embeds
 * struct clock as its first member and provides one *_open() function.
 */
#ifndef NTPX_CLOCK_PRIVATE_H
#define NTPX_CLOCK_PRIVATE_H

#include "clock.h"

struct clock {
	int64_t (*now)(struct clock *c);
	void (*close)(struct clock *c);
	char *name;
};

#endif
