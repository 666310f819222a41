/* SPDX-License-Identifier: ISC */
/*
 * endpoint_private.h - what endpoint.c asks of the transports: the
 * schemes this build has, from the one table that lists them
 * (backends[] in transport.c), without knowing the transports.
 */
#ifndef NTPX_ENDPOINT_PRIVATE_H
#define NTPX_ENDPOINT_PRIVATE_H

#include <stddef.h>

#include "endpoint.h"

struct endpoint_scheme {
	const char *name;		/* "udp" */
	const char *const *params;	/* keys it accepts, NULL-terminated */
	/* NULL, or checks values that need no system access: 0, or -1
	   with one line in @err (struct transport_ops' check) */
	int (*check)(const struct endpoint *ep, char *err, size_t errlen);
};

/*
 * Scheme @i of this build into *s, in the table's order.  Returns 0, or
 * -1 past the last.  Defined in transport.c, beside backends[].
 */
int endpoint_scheme_nth(size_t i, struct endpoint_scheme *s);

#endif
