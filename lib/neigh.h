/* SPDX-License-Identifier: ISC */
/*
 * neigh.h - what the kernel knows about the link layer around an IPv4
 * peer, asked over rtnetlink (libmnl): an interface's MAC and addresses,
 * the next hop and source address towards a destination, and the next
 * hop's MAC from the neighbour table.
 *
 * The kernel stays the one ARP speaker on the interface: when the table
 * has no usable entry, neigh_resolve() asks the kernel to resolve (a
 * neighbour "use", as if a packet were waiting) and reads the table again
 * until the entry is reachable or the time is up.  Nothing here sends ARP
 * itself or writes a permanent entry.
 *
 * IPv4 addresses are host byte order; MACs are six bytes as on the wire.
 */
#ifndef NTPX_NEIGH_H
#define NTPX_NEIGH_H

#include <stddef.h>
#include <stdint.h>

/* @dev's index and MAC address.  0, or -1 with one line in @err. */
int neigh_link(const char *dev, int *ifindex, uint8_t mac[6], char *err, size_t errlen);

/*
 * @dev's IPv4 addresses (at most @max) into @ips.  Returns how many, or
 * -1 with one line in @err.
 */
int neigh_addrs(int ifindex, uint32_t *ips, int max, char *err, size_t errlen);

/*
 * The route to @dst out of @ifindex: *nexthop is the gateway, or @dst
 * itself when it is on-link; *src the kernel's preferred source address
 * (0 when the route has none).  0, or -1 with one line in @err.
 */
int neigh_route(uint32_t dst, int ifindex, uint32_t *nexthop, uint32_t *src,
		char *err, size_t errlen);

/*
 * @ip's MAC from the neighbour table of @ifindex.  Returns 1 when the entry
 * is usable (reachable, stale, delay, probe, permanent or noarp), 0 when
 * it is missing, incomplete or failed, -1 with one line in @err when the
 * table cannot be read.
 */
int neigh_lookup(int ifindex, uint32_t ip, uint8_t mac[6], char *err, size_t errlen);

/*
 * Forgets what the kernel learnt about @ip on @ifindex (a dynamic entry,
 * never one an administrator made permanent), so that the next
 * resolution asks the network again instead of trusting an entry that our
 * own traffic, bypassing the kernel, never confirms nor refutes.
 * 0, or -1 with one line in @err.
 */
int neigh_forget(int ifindex, uint32_t ip, char *err, size_t errlen);

/*
 * Looks @ip up on @ifindex and, when there is no usable entry, prompts
 * the kernel to resolve it and waits for the entry, polling the table,
 * for at most @timeout_ns nanoseconds.  0 with @mac filled, or -1 with
 * one line in @err (unresolved after the timeout: no such neighbour).
 */
int neigh_resolve(int ifindex, uint32_t ip, uint8_t mac[6], int64_t timeout_ns,
		  char *err, size_t errlen);

#endif
