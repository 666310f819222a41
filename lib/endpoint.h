/* SPDX-License-Identifier: ISC */
/*
 * endpoint.h - the endpoint URLs every tool takes, parsed (endpoint.c).
 *
 * An endpoint is a URL, the same in every tool:
 *
 *     SCHEME://HOST[:PORT][?KEY=VALUE[&KEY=VALUE...]]
 *
 * udp://10.0.0.2:123?dev=eth1&src=10.0.0.1, udp://[::1]:12300.  HOST is an
 * address or a name; an IPv6 address goes in brackets; PORT defaults to
 * 123.  Each scheme names the keys it accepts; anything else is refused.
 * Without a scheme, HOST[:PORT][?KEY=VALUE...] means udp:// (as every NTP
 * client takes a bare host): time.example, 127.0.0.1, localhost:12300,
 * [::1]:12300; and a bare IPv6 literal (::1) is the host alone.
 *
 * The schemes and the keys each accepts are the transports': the parser
 * is handed them by its caller (transport_parse_endpoint() in
 * transport.c, from its backends[] table), and knows nothing above it.
 * Nothing here opens or resolves.
 */
#ifndef NTPX_ENDPOINT_H
#define NTPX_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "loss.h"

#define ENDPOINT_MAX_PARAMS	8

struct endpoint {
	char url[512];		/* as given */
	char scheme[16];
	char host[256];		/* without brackets */
	uint16_t port;
	int family;		/* 0, or AF_INET / AF_INET6 to resolve HOST to
				   (-4 / -6); the parse sets 0 */
	struct loss loss;	/* sends to drop (lossinject's schedule, which
				   the tool reads: opt_loss_env); the parse
				   sets none */
	int nparams;
	struct {
		char key[32];
		char value[128];
	} param[ENDPOINT_MAX_PARAMS];
};

/* A scheme the parser accepts: its name and keys, from a transport. */
struct endpoint_scheme {
	const char *name;		/* "udp"; NULL ends a table */
	const char *const *params;	/* keys it accepts, NULL-terminated */
	/* NULL, or checks values that need no system access: 0, or -1
	   with one line in @err (struct transport_ops' check) */
	int (*check)(const struct endpoint *ep, char *err, size_t errlen);
};

/*
 * Parses @url against @schemes (a table ended by a NULL name); a tool
 * calls transport_parse_endpoint(), which hands it this build's.  Returns
 * 0, or -1 with one line in @err naming what is wrong (unknown scheme,
 * bad port, unknown key...).  Names are not resolved here.  ep->url is
 * @url, or for a form without a scheme the URL it stands for
 * (udp://HOST:PORT...).
 */
int endpoint_parse(const char *url, const struct endpoint_scheme *schemes, struct endpoint *ep,
		   char *err, size_t errlen);

/* The value of parameter @key, or NULL when the URL does not set it. */
const char *endpoint_param(const struct endpoint *ep, const char *key);

#endif
