/* SPDX-License-Identifier: ISC */
/*
 * neigh.c - interfaces, routes and neighbours over rtnetlink (libmnl).
 *
 * Every question opens its own netlink socket, asks, and closes it: this
 * runs at open time and after a run of missed replies, never per packet.
 */
#include <net/if.h>		/* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

#include "clock.h"
#include "neigh.h"
#include "opt_units.h"

#define NEIGH_POLL_NS	(5 * NTPX_NS_PER_MS)	/* table re-read while resolving */
#define NEIGH_BUF	16384			/* bytes: requests and answers */

/*
 * Sends @nlh and feeds every answer to @cb until the kernel is done (an
 * ACK, NLMSG_DONE, or the one answer of a non-dump request).  Returns 0,
 * or -errno (the kernel's error, or the socket's).
 */
static int rtnl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[NEIGH_BUF];
	struct mnl_socket *nl;
	unsigned portid, seq;
	ssize_t n;
	int rc;

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	seq = nlh->nlmsg_seq = (unsigned)time(NULL);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		rc = -errno;
		goto out;
	}
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		rc = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
	} while (rc > 0 && (nlh->nlmsg_flags & (NLM_F_DUMP | NLM_F_ACK)));
	rc = rc < 0 ? -errno : 0;
out:
	mnl_socket_close(nl);
	return rc;
}

int neigh_link(const char *dev, int *ifindex, uint8_t mac[6], char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd;

	if (strlen(dev) >= IFNAMSIZ) {
		snprintf(err, errlen, "interface name '%s' too long", dev);
		return -1;
	}
	*ifindex = (int)if_nametoindex(dev);
	if (!*ifindex) {
		snprintf(err, errlen, "no interface '%s': %s", dev, strerror(errno));
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s: socket: %s", dev, strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		snprintf(err, errlen, "%s: cannot read the MAC address: %s", dev, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		snprintf(err, errlen, "%s is not an Ethernet interface", dev);
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

struct addrs_ctx {
	int ifindex;
	uint32_t *ips;
	int n, max;
};

static int addrs_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct addrs_ctx *c = data;
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWADDR || ifa->ifa_family != AF_INET ||
	    (int)ifa->ifa_index != c->ifindex)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
		if (mnl_attr_get_type(a) == IFA_LOCAL && mnl_attr_get_payload_len(a) == 4 &&
		    c->n < c->max) {
			uint32_t ip;

			memcpy(&ip, mnl_attr_get_payload(a), 4);
			c->ips[c->n++] = ntohl(ip);
		}
	}
	return MNL_CB_OK;
}

int neigh_addrs(int ifindex, uint32_t *ips, int max, char *err, size_t errlen)
{
	char buf[NEIGH_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;
	struct addrs_ctx c = { .ifindex = ifindex, .ips = ips, .max = max };
	int rc;

	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	rc = rtnl_talk(nlh, addrs_cb, &c);
	if (rc) {
		snprintf(err, errlen, "cannot list addresses: %s", strerror(-rc));
		return -1;
	}
	return c.n;
}

struct route_ctx {
	uint32_t gw, src;
	int found;
};

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct route_ctx *c = data;
	const struct nlattr *a;
	uint32_t v;

	if (nlh->nlmsg_type != RTM_NEWROUTE || rtm->rtm_family != AF_INET)
		return MNL_CB_OK;
	c->found = 1;
	mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
		if (mnl_attr_get_payload_len(a) != 4)
			continue;
		memcpy(&v, mnl_attr_get_payload(a), 4);
		if (mnl_attr_get_type(a) == RTA_GATEWAY)
			c->gw = ntohl(v);
		else if (mnl_attr_get_type(a) == RTA_PREFSRC)
			c->src = ntohl(v);
	}
	return MNL_CB_OK;
}

int neigh_route(uint32_t dst, int ifindex, uint32_t *nexthop, uint32_t *src,
		char *err, size_t errlen)
{
	char buf[NEIGH_BUF], ip[INET_ADDRSTRLEN];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct route_ctx c = { 0 };
	struct rtmsg *rtm;
	uint32_t ndst = htonl(dst);
	int rc;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 32;
	mnl_attr_put(nlh, RTA_DST, 4, &ndst);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	rc = rtnl_talk(nlh, route_cb, &c);
	if (rc || !c.found) {
		inet_ntop(AF_INET, &ndst, ip, sizeof(ip));
		snprintf(err, errlen, "no route to %s: %s", ip, strerror(rc ? -rc : ENETUNREACH));
		return -1;
	}
	*nexthop = c.gw ? c.gw : dst;
	*src = c.src;
	return 0;
}

struct neigh_ctx {
	int ifindex;
	uint32_t ip;		/* network order */
	uint8_t mac[6];
	int usable;
	uint16_t state;		/* NUD_*, 0: no entry */
};

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	struct neigh_ctx *c = data;
	const struct nlattr *a;
	const void *lladdr = NULL;
	int dst_ok = 0;

	if (nlh->nlmsg_type != RTM_NEWNEIGH || nd->ndm_family != AF_INET ||
	    nd->ndm_ifindex != c->ifindex)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*nd)) {
		if (mnl_attr_get_type(a) == NDA_DST && mnl_attr_get_payload_len(a) == 4)
			dst_ok = memcmp(mnl_attr_get_payload(a), &c->ip, 4) == 0;
		else if (mnl_attr_get_type(a) == NDA_LLADDR && mnl_attr_get_payload_len(a) == 6)
			lladdr = mnl_attr_get_payload(a);
	}
	if (!dst_ok)
		return MNL_CB_OK;
	c->state = nd->ndm_state;
	if (!lladdr)
		return MNL_CB_OK;
	if (nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
			     NUD_PERMANENT | NUD_NOARP)) {
		memcpy(c->mac, lladdr, 6);
		c->usable = 1;
	}
	return MNL_CB_OK;
}

/* Reads @c->ip's entry of @c->ifindex into @c; 0 or -errno. */
static int neigh_get(struct neigh_ctx *c)
{
	char buf[NEIGH_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;

	/* A dump of one interface's table: works on every kernel. */
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = c->ifindex;
	return rtnl_talk(nlh, neigh_cb, c);
}

int neigh_lookup(int ifindex, uint32_t ip, uint8_t mac[6], char *err, size_t errlen)
{
	struct neigh_ctx c = { .ifindex = ifindex, .ip = htonl(ip) };
	int rc;

	rc = neigh_get(&c);
	if (rc) {
		snprintf(err, errlen, "cannot read the neighbour table: %s", strerror(-rc));
		return -1;
	}
	if (c.usable)
		memcpy(mac, c.mac, 6);
	return c.usable;
}

int neigh_forget(int ifindex, uint32_t ip, char *err, size_t errlen)
{
	char buf[NEIGH_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct neigh_ctx c = { .ifindex = ifindex, .ip = htonl(ip) };
	struct ndmsg *nd;
	int rc;

	rc = neigh_get(&c);
	if (rc == 0 && (!c.state || (c.state & (NUD_PERMANENT | NUD_NOARP))))
		return 0;
	if (rc == 0) {
		nlh->nlmsg_type = RTM_DELNEIGH;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
		nd->ndm_family = AF_INET;
		nd->ndm_ifindex = ifindex;
		mnl_attr_put(nlh, NDA_DST, 4, &c.ip);
		rc = rtnl_talk(nlh, NULL, NULL);
		if (rc == -ENOENT)
			rc = 0;		/* gone meanwhile: as good */
	}
	if (rc) {
		snprintf(err, errlen, "cannot drop a neighbour entry: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * Asks the kernel to resolve @ip on @ifindex as if a packet were waiting
 * for it (NTF_USE): the kernel creates the entry if needed and sends its
 * ARP request.  Old kernels without NTF_USE on RTM_NEWNEIGH get the same
 * effect from a datagram sent through a UDP socket to the discard port.
 */
static int neigh_prompt(int ifindex, uint32_t ip)
{
	char buf[NEIGH_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9) };
	char ifname[IF_NAMESIZE];
	struct ndmsg *nd;
	uint32_t nip = htonl(ip);
	int fd, rc;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = ifindex;
	nd->ndm_state = NUD_NONE;
	nd->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, 4, &nip);
	rc = rtnl_talk(nlh, NULL, NULL);
	if (rc == 0)
		return 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	sin.sin_addr.s_addr = nip;
	if (if_indextoname((unsigned)ifindex, ifname))
		(void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
				 (socklen_t)strlen(ifname) + 1);
	rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	     send(fd, "", 0, 0) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

int neigh_resolve(int ifindex, uint32_t ip, uint8_t mac[6], int64_t timeout_ns,
		  char *err, size_t errlen)
{
	int64_t end = clock_monotonic_ns() + timeout_ns;
	struct timespec step = { 0, NEIGH_POLL_NS };
	uint32_t nip = htonl(ip);
	char sip[INET_ADDRSTRLEN];
	int rc, prompted = 0;

	for (;;) {
		rc = neigh_lookup(ifindex, ip, mac, err, errlen);
		if (rc != 0)
			return rc > 0 ? 0 : -1;
		if (!prompted) {
			rc = neigh_prompt(ifindex, ip);
			if (rc) {
				inet_ntop(AF_INET, &nip, sip, sizeof(sip));
				snprintf(err, errlen, "cannot ask the kernel to resolve %s: %s", sip,
					 strerror(-rc));
				return -1;
			}
			prompted = 1;
		}
		if (clock_monotonic_ns() >= end)
			break;
		nanosleep(&step, NULL);
	}
	inet_ntop(AF_INET, &nip, sip, sizeof(sip));
	snprintf(err, errlen, "no neighbour %s: address not resolved (no ARP reply)", sip);
	return -1;
}
