/* SPDX-License-Identifier: ISC */
/*
 * absent.c - what stands in for an optional path this build does not
 * have (the Makefile leaves its files out when pkg-config does not find
 * its libraries, or when told NO_VERBS=1 / NO_XDP=1):
 *
 *   NTPX_NO_VERBS  no libibverbs, libmlx5, librdmacm: the ib transport
 *                  and uudp's via=verbs
 *   NTPX_NO_XDP    no libxdp, libbpf: uudp's AF_XDP port (via=xdp)
 *
 * Each open refuses with one line that says what the build lacked, and
 * via=auto never picks verbs.  The one place with an #if for these.
 */
#include <stdio.h>

#include "port_private.h"
#include "transport_private.h"

#ifdef NTPX_NO_VERBS
static const char *const ib_absent_params[] = { "dev", "port", "gid", "qkey", NULL };

static struct transport *ib_absent_open(const struct endpoint *ep, enum transport_role role,
					char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: this ntpx was built without libibverbs and librdmacm "
		 "(rdma-core): install them, then make", ep->url);
	return NULL;
}

const struct transport_ops ib_transport_ops = {
	.scheme = "ib",
	.params = ib_absent_params,
	.open = ib_absent_open,
};

struct port *port_verbs_open(const struct port_config *cfg, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: via=verbs: this ntpx was built without libibverbs "
		 "(rdma-core): install it, then make; or via=xdp", cfg->dev);
	return NULL;
}

int port_verbs_usable(const char *sysfs, const char *dev)
{
	return 0;
}
#endif

#ifdef NTPX_NO_XDP
struct port *port_xdp_open(const struct port_config *cfg, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: via=xdp: this ntpx was built without libxdp and libbpf: "
		 "install them, then make", cfg->dev);
	return NULL;
}
#endif
