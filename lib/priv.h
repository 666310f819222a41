/* SPDX-License-Identifier: ISC */
/*
 * priv.h - dropping root after the endpoint is open (--user), as
 * chronyd -u and OpenNTPD do: the tools bind, attach and open what needs
 * privileges first, then run as an unprivileged user with no more
 * capabilities than their transport still uses.
 */
#ifndef NTPX_PRIV_H
#define NTPX_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

/* A set of capabilities: bit N is capability N (linux/capability.h). */
#define PRIV_CAP(n)	((uint64_t)1 << (n))

/*
 * What a transport opened for @role still needs once open:
 *   udp            nothing (the socket is bound)
 *   uudp server    nothing (the AF_XDP socket, its XDP program and its
 *                  link are held by descriptors; closing them detaches)
 *   uudp client    CAP_NET_ADMIN: rediscovery (#reset) forgets and
 *                  re-resolves the server's neighbour entry by netlink
 *   ib             nothing (verbs work on the objects opened)
 */
uint64_t priv_transport_caps(const struct endpoint *ep, enum transport_role role);

/*
 * Becomes @user (its uid, gid and only its primary group) keeping only
 * the capabilities in @keep, effective and permitted; none inheritable or
 * ambient, and no way back (a later setuid(0) fails, which is checked).
 * Must run as root.  Returns 0, or -1 with one line in @err.
 */
int priv_drop(const char *user, uint64_t keep, char *err, size_t errlen);

/* "net_admin,net_raw" for @caps, "none" when empty. */
void priv_caps_str(uint64_t caps, char *buf, size_t len);

#endif
