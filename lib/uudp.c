/* SPDX-License-Identifier: ISC */
/*
 * uudp.c - userspace UDP: the program builds Ethernet/IPv4/UDP frames in
 * its own memory and hands them to a frame port (AF_XDP or a raw-packet
 * verbs QP), past the kernel's UDP stack; on the wire it is plain UDP.
 *
 *   uudp://HOST:PORT?dev=IF[&via=xdp|verbs][&mac=MAC][&src=ADDR][&xdpmode=M][&maxwait=DUR]
 *
 * A client talks to HOST:PORT out of dev; a server answers on PORT at
 * HOST ("*" or 0.0.0.0: any of dev's IPv4 addresses).  via= picks the
 * port (default: verbs when dev has an RDMA device with raw-packet QPs
 * and flow steering, mlx5 or mlx4, else xdp).  mac= is
 * the next hop's MAC, overriding the neighbour table; src= the source
 * address (default: the route's preferred source).  xdpmode= (auto, skb,
 * native, zerocopy) pins how the XDP port runs instead of the best the
 * driver has.  qperr=N (via=verbs, a test knob as ib's qkey=) has the
 * Nth frame sent with a memory key the HCA refuses, a real send error
 * that the port must recover from (doc/hardware.md, step 9).
 * maxwait=DUR (a server's) drops, when it is read, a request that
 * waited in the receive ring longer than DUR by its arrival stamp,
 * counted as rx_stale: a server that fell behind then answers what is
 * recent, as a socket that fills drops what comes, instead of answering
 * every request late (doc/uudp.md).
 *
 * The kernel keeps the addresses: our UDP port is reserved by an ordinary
 * socket bound to it (so no kernel socket takes it), the next hop and
 * source come from the routing table, the next hop's MAC from the
 * neighbour table (lib/neigh.c), and ARP stays with the kernel.  A server
 * answers to the MAC a request came from, as a reflector should.
 *
 * Liveness (lib/peer.c): a client's request (an NTP client-mode packet)
 * that drew no reply by the next request, 1 ms or more later, is a miss.
 * After a run of PEER_MISS_LIMIT_DEFAULT misses the neighbour is
 * forgotten and resolved again (spaced by the peer backoff), so a server
 * whose NIC or MAC changed is found again, and the caller is told once
 * (transport_peer_reset).  ICMP port unreachable, which the kernel hands
 * to the reserving socket, is reported as -ECONNREFUSED.
 *
 * Receiving, frame_check() refuses what a kernel socket would not have
 * delivered.  On veth (PORT_CAP_RX_PARTIAL) a kernel socket would also
 * deliver a frame whose UDP checksum a kernel sender on this host left
 * partial, so uudp accepts it too and counts it as rx_udp_csum_partial;
 * the fast path of a lab from bin/ntpx-lab never carries one.
 *
 * Timestamps: T1/T3 are read immediately before the frame is handed to
 * the port (after the transmit stamp is written and the UDP checksum
 * computed over it, unless the NIC completes it), T4 immediately after
 * the port shows a received frame, before it is checked.  A server's T2
 * is the port's receive stamp where it has one (the XDP program's
 * reading as it redirected the frame, or the HCA's completion), on the
 * server's clock; else, as T4, the moment the port showed the frame.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock_read.h"
#include "frame.h"
#include "log.h"
#include "util_private.h"
#include "neigh.h"
#include "ntp.h"
#include "opt_units.h"
#include "peer.h"
#include "port_private.h"
#include "transport_private.h"

#define UUDP_RESOLVE_NS		(500 * NTPX_NS_PER_MS)	/* at open: 500 ms */
#define UUDP_RERESOLVE_NS	(200 * NTPX_NS_PER_MS)	/* after a loss: 200 ms */
#define UUDP_MISS_MIN_NS	(1 * NTPX_NS_PER_MS)	/* a request younger than this
							   when the next goes out is
							   not missed */
#define UUDP_ERR_CHECK_NS	(1 * NTPX_NS_PER_MS)	/* ICMP errors read at most
							   this often while idle */

/* What a uudp transport_addr holds: the other side, and our address it used. */
struct uudp_addr {
	uint32_t ip;		/* host order */
	uint32_t local_ip;	/* host order: the address the request was sent to */
	uint16_t port;
	uint8_t mac[6];
};

struct uudp_transport {
	struct transport t;
	struct port *port;
	char dev[32];
	int ifindex;
	struct frame_addr local;	/* our MAC, source IP and UDP port */
	struct frame_addr remote;	/* client: the server (MAC: the next hop's) */
	struct frame_tmpl tmpl;		/* our frames' constant headers (local) */
	uint32_t nexthop;		/* client: whose MAC we need */
	int mac_fixed;			/* mac= given: never resolve */
	int resolved;
	int awaiting;			/* client: a request without reply yet */
	int64_t req_ns;			/* CLOCK_MONOTONIC ns it was sent */
	struct peer peer;
	struct frame_filter filter;
	struct frame_counters rx;
	uint64_t rx_foreign;		/* client: good frames from another sender */
	uint64_t rx_partial;		/* accepted with a partial UDP checksum */
	uint64_t rx_truncated;
	uint64_t rx_stale;		/* server: dropped, older than max_wait_ns */
	int64_t max_wait_ns;		/* server: maxwait=, 0 for none */
	uint64_t tx_frames, tx_busy, resolve_errors;
	uint16_t ip_id;
	int reserve_fd;			/* kernel socket holding our UDP port */
	int epfd;			/* client: port fd + reserve_fd, for poll */
	int64_t err_check_ns;		/* client: when reserve_fd was last read */
	int stamping;			/* transport_stamps_enable() was called */
	unsigned restarts_seen;		/* port.restarts already told as a reset */
	struct port_stamping ps;	/* what the port stamps */
	uint32_t tx_seq;		/* ids of datagrams sent with stamps */
};

static const char *const uudp_params[] = { "dev", "via", "mac", "src", "xdpmode", "qperr",
					    "maxwait", NULL };
static const char *const uudp_xdp_modes[] = {	/* by enum port_config.xdp_mode */
	"auto", "skb", "native", "zerocopy", NULL
};

/* xdpmode= as PORT_XDP_*, or -1 when unknown. */
static int uudp_xdp_mode(const char *s)
{
	int i;

	for (i = 0; s && uudp_xdp_modes[i]; i++)
		if (strcmp(s, uudp_xdp_modes[i]) == 0)
			return i;
	return s ? -1 : PORT_XDP_AUTO;
}

/* qperr= as a count of frames (1 or more), 0 when absent, -1 when bad. */
static long uudp_qperr(const char *s)
{
	char *end;
	long n;

	if (!s)
		return 0;
	errno = 0;
	n = strtol(s, &end, 10);
	return errno || end == s || *end || n < 1 || n > 1000000000 ? -1 : n;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto no_transport; } while (0)

static int ipv4_resolve(const char *host, uint32_t *ip)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM };
	struct addrinfo *ai;
	struct in_addr a;

	if (inet_pton(AF_INET, host, &a) == 1) {
		*ip = ntohl(a.s_addr);
		return 0;
	}
	if (getaddrinfo(host, NULL, &hints, &ai))
		return -1;
	*ip = ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr);
	freeaddrinfo(ai);
	return 0;
}

/*
 * Reserves UDP @port (0: any, the chosen one returned) on @ip at the
 * kernel, so that no kernel socket is given the port whose frames our
 * XDP program or flow rule takes.  Returns the fd or -errno.
 */
static int port_reserve(const char *dev, uint32_t ip, uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(*port),
				   .sin_addr.s_addr = htonl(ip) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev) + 1) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len)) {
		int e = errno;

		close(fd);
		return -e;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

/*
 * A client's server that is down answers with ICMP port unreachable.  The
 * kernel hands that error to the socket that reserves our port once it is
 * connected to the server (as udp.c's socket is), so uudp reports
 * -ECONNREFUSED like the kernel path.  transport_fd() becomes an epoll
 * set of the frame port and that socket, so a sleeping caller wakes for
 * either.
 */
static int uudp_watch_refused(struct uudp_transport *u, char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(u->remote.port),
				   .sin_addr.s_addr = htonl(u->remote.ip) };
	struct epoll_event ev = { .events = EPOLLIN };

	if (connect(u->reserve_fd, (struct sockaddr *)&sin, sizeof(sin))) {
		snprintf(err, errlen, "connect: %s", strerror(errno));
		return -1;
	}
	u->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (u->epfd < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		return -1;
	}
	ev.data.fd = u->port->fd;
	if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->port->fd, &ev))
		goto no_ctl;
	ev.data.fd = u->reserve_fd;
	if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->reserve_fd, &ev))
		goto no_ctl;
	u->t.fd = u->epfd;
	return 0;

no_ctl:
	snprintf(err, errlen, "epoll: %s", strerror(errno));
	return -1;
}

/*
 * -ECONNREFUSED when the kernel holds an ICMP error for our port, else 0.
 * Read at most every UUDP_ERR_CHECK_NS while the port is idle, so that a
 * busy-polling caller does not pay a system call per spin.  Anything the
 * kernel queued on the socket (frames for our port that arrived before
 * the XDP program or flow rule was in place) is discarded on the way.
 */
static int uudp_refused(struct uudp_transport *u)
{
	int64_t now = clock_monotonic_ns();
	char b;

	if (now - u->err_check_ns < UUDP_ERR_CHECK_NS)
		return 0;
	u->err_check_ns = now;
	while (recv(u->reserve_fd, &b, 1, MSG_DONTWAIT) >= 0)
		;
	return errno == ECONNREFUSED ? -ECONNREFUSED : 0;
}

/* The client's next hop MAC, from the kernel (after forgetting, if @fresh). */
static int uudp_resolve(struct uudp_transport *u, int fresh, int64_t timeout,
			char *err, size_t errlen)
{
	uint8_t mac[6];

	if (fresh && neigh_forget(u->ifindex, u->nexthop, err, errlen))
		return -1;
	if (neigh_resolve(u->ifindex, u->nexthop, mac, timeout, err, errlen))
		return -1;
	memcpy(u->remote.mac, mac, 6);
	u->resolved = 1;
	return 0;
}

/* What can be said of an endpoint without the system: see transport_private.h. */
static int uudp_check(const struct endpoint *ep, char *err, size_t errlen)
{
	const char *via = endpoint_param(ep, "via");
	const char *mac = endpoint_param(ep, "mac");
	const char *xm = endpoint_param(ep, "xdpmode");
	const char *qe = endpoint_param(ep, "qperr");
	const char *mw = endpoint_param(ep, "maxwait");
	int64_t mw_ns;
	uint8_t m[6];

	if (!endpoint_param(ep, "dev"))
		snprintf(err, errlen, "%s: uudp needs dev=INTERFACE", ep->url);
	else if (via && strcmp(via, "xdp") && strcmp(via, "verbs"))
		snprintf(err, errlen, "%s: bad via '%s' (xdp or verbs)", ep->url, via);
	else if (mac && frame_mac_parse(mac, m))
		snprintf(err, errlen, "%s: bad mac '%s' (expected aa:bb:cc:dd:ee:ff)", ep->url, mac);
	else if (ep->port == 0)
		snprintf(err, errlen, "%s: port 0 (uudp needs the port to steer)", ep->url);
	else if (uudp_xdp_mode(xm) < 0)
		snprintf(err, errlen, "%s: bad xdpmode '%s' (auto, skb, native or zerocopy)",
			 ep->url, xm);
	else if (xm && via && strcmp(via, "xdp"))
		snprintf(err, errlen, "%s: xdpmode= is for via=xdp", ep->url);
	else if (qe && (!via || strcmp(via, "verbs")))
		snprintf(err, errlen, "%s: qperr= is for via=verbs", ep->url);
	else if (qe && uudp_qperr(qe) < 0)
		snprintf(err, errlen, "%s: bad qperr '%s' (a count of frames, 1 or more)",
			 ep->url, qe);
	else if (mw && (opt_duration(mw, 0, &mw_ns) || mw_ns <= 0))
		snprintf(err, errlen, "%s: bad maxwait '%s' (a duration above 0: 10ms)",
			 ep->url, mw);
	else
		return 0;
	return -1;
}

/*
 * A server's addresses: the one it was given, or with "*" every IPv4
 * address of its interface, whose frames it takes; it answers from the
 * address each request was sent to.
 */
static int uudp_open_server(struct uudp_transport *u, const struct endpoint *ep,
			    uint32_t host, char *err, size_t errlen)
{
	char why[200];
	int n;

	if (host) {
		u->filter.nip = 1;
		u->filter.ip[0] = host;
	} else {
		n = neigh_addrs(u->ifindex, u->filter.ip, 8, why, sizeof(why));
		if (n <= 0) {
			snprintf(err, errlen, n < 0 ? "%s: %s" : "%s: %s has no IPv4 address",
				 ep->url, n < 0 ? why : u->dev);
			return -1;
		}
		u->filter.nip = n;
	}
	u->local.ip = host;
	u->local.port = ep->port;
	return 0;
}

/*
 * A client's route to its server @host: the next hop (whose MAC it
 * resolves), the source (src=, else the route's preferred source, else
 * the interface's first address), and its UDP port, reserved at the
 * kernel.
 */
static int uudp_open_client(struct uudp_transport *u, const struct endpoint *ep,
			    uint32_t host, char *err, size_t errlen)
{
	const char *src = endpoint_param(ep, "src");
	uint32_t prefsrc = 0;
	char why[200];

	if (!host) {
		snprintf(err, errlen, "%s: a client needs the server's address", ep->url);
		return -1;
	}
	u->remote.ip = host;
	u->remote.port = ep->port;
	if (neigh_route(host, u->ifindex, &u->nexthop, &prefsrc, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", ep->url, why);
		return -1;
	}
	if (src && ipv4_resolve(src, &u->local.ip)) {
		snprintf(err, errlen, "%s: bad src '%s' (an IPv4 address)", ep->url, src);
		return -1;
	}
	if (!src)
		u->local.ip = prefsrc;
	if (!u->local.ip && neigh_addrs(u->ifindex, &u->local.ip, 1, why, sizeof(why)) <= 0) {
		snprintf(err, errlen, "%s: %s has no IPv4 address to send from", ep->url, u->dev);
		return -1;
	}
	u->filter.nip = 1;
	u->filter.ip[0] = u->local.ip;
	u->reserve_fd = port_reserve(u->dev, u->local.ip, &u->local.port);
	if (u->reserve_fd < 0) {
		snprintf(err, errlen, "%s: cannot reserve a UDP port: %s", ep->url,
			 strerror(-u->reserve_fd));
		return -1;
	}
	return 0;
}

/* The frame port: via= (default: verbs where the device can, else xdp). */
static int uudp_open_port(struct uudp_transport *u, const struct endpoint *ep, char *err,
			  size_t errlen)
{
	const char *via = endpoint_param(ep, "via");
	struct port_config pc = { 0 };
	char why[200];

	pc.dev = u->dev;
	pc.ifindex = u->ifindex;
	pc.udp_port = u->local.port;
	pc.ip = u->local.ip;
	memcpy(pc.mac, u->local.mac, 6);
	pc.busy_poll = 1;
	pc.xdp_mode = uudp_xdp_mode(endpoint_param(ep, "xdpmode"));
	pc.qperr = uudp_qperr(endpoint_param(ep, "qperr"));
	if (!via)
		via = port_verbs_usable(NULL, u->dev) ? "verbs" : "xdp";
	if (strcmp(via, "verbs") == 0)
		u->port = port_verbs_open(&pc, why, sizeof(why));
	else
		u->port = port_xdp_open(&pc, why, sizeof(why));
	if (!u->port) {
		snprintf(err, errlen, "%s: %s", ep->url, why);
		return -1;
	}
	u->filter.udp_csum_partial = !!(u->port->caps & PORT_CAP_RX_PARTIAL);
	if (u->port->note[0])
		ntpx_lines_add(u->t.warn, sizeof(u->t.warn), "%s: %s", ep->url, u->port->note);
	return 0;
}

static struct transport *uudp_open(const struct endpoint *ep, enum transport_role role,
				   char *err, size_t errlen)
{
	const char *dev = endpoint_param(ep, "dev");
	const char *mac = endpoint_param(ep, "mac");
	struct uudp_transport *u;
	char why[200];
	uint32_t host = 0;
	int saved;

	u = calloc(1, sizeof(*u));
	if (!u) {
		snprintf(err, errlen, "%s: out of memory", ep->url);
		return NULL;
	}
	u->reserve_fd = -1;
	u->epfd = -1;
	if (uudp_check(ep, err, errlen))
		goto no_transport;
	if (mac)
		frame_mac_parse(mac, u->remote.mac);
	u->mac_fixed = mac != NULL;
	if (role == TRANSPORT_SERVER && endpoint_param(ep, "src"))
		FAIL("%s: src= is for clients; a server answers from its own address", ep->url);
	if (role == TRANSPORT_SERVER && mac)
		FAIL("%s: mac= is for clients; a server answers to the sender's MAC", ep->url);
	if (role == TRANSPORT_CLIENT && endpoint_param(ep, "maxwait"))
		FAIL("%s: maxwait= is for servers (it bounds a request's wait for its reply)",
		     ep->url);
	if (endpoint_param(ep, "maxwait"))
		opt_duration(endpoint_param(ep, "maxwait"), 0, &u->max_wait_ns);
	snprintf(u->dev, sizeof(u->dev), "%.31s", dev);
	if (neigh_link(dev, &u->ifindex, u->local.mac, why, sizeof(why)))
		FAIL("%s: %s", ep->url, why);
	if (strcmp(ep->host, "*") && ipv4_resolve(ep->host, &host)) {
		errno = ENXIO;	/* for the caller: transport_open() */
		FAIL("%s: cannot resolve '%s' to an IPv4 address", ep->url, ep->host);
	}
	/* A client learns its port from the reservation. */
	if (role == TRANSPORT_SERVER ? uudp_open_server(u, ep, host, err, errlen) :
	    uudp_open_client(u, ep, host, err, errlen))
		goto no_transport;
	memcpy(u->filter.mac, u->local.mac, 6);
	u->filter.port = u->local.port;

	peer_init(&u->peer, NULL);
	if (role == TRANSPORT_CLIENT) {
		if (u->mac_fixed)
			u->resolved = 1;
		else if (uudp_resolve(u, 0, UUDP_RESOLVE_NS, why, sizeof(why)))
			FAIL("%s: %s", ep->url, why);
		peer_resolve_ok(&u->peer, clock_monotonic_ns(), PEER_EPOCH_NONE);
	}
	if (uudp_open_port(u, ep, err, errlen))
		goto no_transport;
	/* A server reserves its known port last, so that a kernel socket
	   listening on it means the frame port is ready (tests wait for
	   that). */
	if (role == TRANSPORT_SERVER) {
		u->reserve_fd = port_reserve(dev, u->local.ip, &u->local.port);
		if (u->reserve_fd < 0)
			FAIL("%s: UDP port %u: %s", ep->url, u->local.port,
			     strerror(-u->reserve_fd));
	}
	u->ip_id = (uint16_t)(clock_monotonic_ns() ^ (uint64_t)getpid());
	frame_tmpl_init(&u->tmpl, &u->local, 0);
	u->t.fd = u->port->fd;
	if (role == TRANSPORT_CLIENT && uudp_watch_refused(u, why, sizeof(why)))
		FAIL("%s: %s", ep->url, why);
	return &u->t;

no_transport:
	saved = errno;
	if (u->epfd >= 0)
		close(u->epfd);
	if (u->port)
		port_close(u->port);
	if (u->reserve_fd >= 0)
		close(u->reserve_fd);
	free(u);
	errno = saved;
	return NULL;
}

/*
 * A client's bookkeeping before each send: misses, loss, resolution.  The
 * request before this one that drew no reply is a miss, if it had
 * UUDP_MISS_MIN_NS to be answered: a flood of requests (loadgen) sends
 * the next one sooner, and that is load, not loss (as lib/ib.c counts).
 */
static int uudp_client_ready(struct uudp_transport *u, int request)
{
	int64_t now = clock_monotonic_ns();
	char why[200];

	if (request && u->awaiting && now - u->req_ns >= UUDP_MISS_MIN_NS) {
		u->awaiting = 0;
		if (peer_miss(&u->peer, now) == PEER_LOST && !u->mac_fixed)
			u->resolved = 0;
	}
	if (u->resolved)
		return 0;
	if (!peer_resolve_due(&u->peer, now))
		return -EHOSTUNREACH;
	if (uudp_resolve(u, 1, UUDP_RERESOLVE_NS, why, sizeof(why))) {
		u->resolve_errors++;
		peer_resolve_failed(&u->peer, clock_monotonic_ns());
		return -EHOSTUNREACH;
	}
	peer_resolve_ok(&u->peer, clock_monotonic_ns(), PEER_EPOCH_NONE);
	return 0;
}

static int uudp_send(struct transport *t, struct transport_dgram *d,
		     const struct transport_addr *to, struct clock *clk, int flags)
{
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);
	const void *buf = d->buf;
	size_t len = d->len;
	uint32_t src_ip = u->local.ip;
	struct frame_addr dst;
	int offload = u->port->caps & PORT_CAP_CSUM, rc, request, pflags;
	unsigned char *f;
	unsigned layers;
	size_t cap, flen;

	/* Only an NTP client-mode packet expects a reply. */
	request = len >= 48 && (((const unsigned char *)buf)[0] & 7) == 3;
	if (t->role == TRANSPORT_CLIENT) {
		rc = uudp_client_ready(u, request);
		if (rc)
			return rc;
		dst = u->remote;
	} else {
		const struct uudp_addr *a = to ? (const void *)to->data : NULL;

		if (!a || to->len != sizeof(*a))
			return -EDESTADDRREQ;
		memcpy(dst.mac, a->mac, 6);
		dst.ip = a->ip;
		dst.port = a->port;
		src_ip = a->local_ip;
	}
	if (len > u->port->frame_max - FRAME_HDR_LEN)
		return -EMSGSIZE;
	f = port_tx_buf(u->port, &cap);
	if (!f) {
		u->tx_busy++;
		return -EAGAIN;
	}
	/*
	 * The headers from the template; the UDP checksum field holds the
	 * pseudo-header's sum, which the stamp does not change: a NIC that
	 * completes the checksum takes it so, otherwise we complete it.
	 */
	flen = frame_tmpl_build(f, cap, &u->tmpl, src_ip, &dst, u->ip_id++, buf, len);
	if (!flen) {
		port_tx_cancel(u->port);
		return -EMSGSIZE;
	}
	/* T1/T3: the stamp, written in, then the checksum that covers it. */
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		ntp_put_xmt(f + FRAME_HDR_LEN, d->tx_at);
	if (!offload)
		frame_udp_csum_finish(f, flen);
	/* One layer at most: stamped when the send asks for it. */
	layers = u->stamping && u->ps.tx_layer >= 0 ? d->tx_layers : 0;
	d->tx_layers = layers;
	/* A frame without its own send stamp may go with its burst's. */
	pflags = offload | (flags & TRANSPORT_STAMP_XMT ? 0 : PORT_TX_LATER);
	if (layers) {
		u->port->tx_tag = ++u->tx_seq;
		d->tx_id = u->tx_seq;
		rc = port_tx_submit(u->port, f, flen, pflags | PORT_TX_STAMP);
	} else {
		rc = port_tx_submit(u->port, f, flen, pflags);
	}
	if (rc)
		return rc;
	u->tx_frames++;
	if (t->role == TRANSPORT_CLIENT && request && !u->awaiting) {
		u->awaiting = 1;
		u->req_ns = clock_monotonic_ns();
	}
	return 0;
}

/*
 * maxwait=: whether the frame in hand waited longer than that since it
 * arrived (the port's receive stamp, on CLOCK_REALTIME).  A frame
 * without a stamp (--no-stamps, a mode that keeps no metadata) is never
 * stale.
 */
static int uudp_stale(struct uudp_transport *u)
{
	int64_t k;

	return u->stamping && port_rx_stamp(u->port, &k) == 1 &&
	       clock_realtime_ns() - k > u->max_wait_ns;
}

static ssize_t uudp_recv(struct transport *t, struct transport_dgram *d, struct clock *clk)
{
	size_t cap = d->cap;
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);
	struct frame_info fi;
	enum frame_reason r;
	const void *f;
	size_t flen;
	int64_t now;
	int rc;

	u->port->spin = t->spin;
	for (;;) {
		rc = port_rx_next(u->port, &f, &flen);
		if (rc == 0 && t->role == TRANSPORT_CLIENT && uudp_refused(u))
			return -ECONNREFUSED;
		if (rc <= 0)
			return rc ? rc : -EAGAIN;
		now = clock_now(clk);	/* T2/T4: the frame is seen */
		r = frame_check(f, flen, &u->filter, &fi);
		u->rx.n[r]++;
		if (r != FRAME_OK) {
			port_rx_release(u->port);
			continue;
		}
		u->rx_partial += fi.udp_csum_partial != 0;
		if (t->role == TRANSPORT_CLIENT &&
		    (fi.src.ip != u->remote.ip || fi.src.port != u->remote.port)) {
			/* A connected socket would not have delivered it. */
			u->rx_foreign++;
			port_rx_release(u->port);
			continue;
		}
		if (u->max_wait_ns && uudp_stale(u)) {
			u->rx_stale++;
			port_rx_release(u->port);
			continue;
		}
		break;
	}
	d->rx_at = now;
	if (u->stamping && u->ps.rx_layer >= 0) {
		int64_t k;

		if (port_rx_stamp(u->port, &k) == 1) {
			d->rx.at[u->ps.rx_layer] = k;
			/*
			 * A server's T2 is the frame's arrival (issue 38): the
			 * stamp below us, on its clock, as chronyd's is the
			 * kernel's.  The wait in the ring and the wake-up are
			 * then in T3 - T2, as they are in chronyd's.
			 */
			if (t->role == TRANSPORT_SERVER)
				d->rx_at = clock_from_realtime(clk, k);
		}
	}
	memcpy(d->buf, (const unsigned char *)f + fi.payload_off,
	       fi.payload_len < cap ? fi.payload_len : cap);
	if (fi.payload_len > cap)
		u->rx_truncated++;
	{
		struct uudp_addr a = { .ip = fi.src.ip, .local_ip = fi.dst.ip,
				       .port = fi.src.port };

		memcpy(a.mac, fi.src.mac, 6);
		d->peer.len = sizeof(a);
		memcpy(d->peer.data, &a, sizeof(a));
	}
	port_rx_release(u->port);
	if (t->role == TRANSPORT_CLIENT) {
		u->awaiting = 0;
		peer_reply(&u->peer, clock_monotonic_ns(), PEER_EPOCH_NONE);
	}
	return (ssize_t)fi.payload_len;
}

/* Frames of the burst the port took that uudp_recv() has yet to hand out. */
static unsigned uudp_pending(const struct transport *t)
{
	const struct uudp_transport *u = container_of(t, const struct uudp_transport, t);

	return port_rx_pending(u->port);
}

static void uudp_close(struct transport *t)
{
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);

	port_close(u->port);
	if (u->epfd >= 0)
		close(u->epfd);
	close(u->reserve_fd);
	free(u);
}

static void uudp_addr_str(const struct transport_addr *ta, char *buf, size_t len)
{
	const struct uudp_addr *a = (const void *)ta->data;
	struct in_addr in;
	char ip[INET_ADDRSTRLEN];

	if (ta->len != sizeof(*a)) {
		snprintf(buf, len, "?");
		return;
	}
	in.s_addr = htonl(a->ip);
	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, a->port);
}

/* The sender's IPv4 address, as ::ffff:a.b.c.d. */
static void uudp_addr_host(const struct transport_addr *ta, struct transport_host *h)
{
	struct uudp_addr a;
	uint32_t ip;

	if (ta->len != sizeof(a))
		return;
	memcpy(&a, ta->data, sizeof(a));
	ip = htonl(a.ip);
	memset(h->a, 0, 10);
	h->a[10] = h->a[11] = 0xff;
	memcpy(h->a + 12, &ip, 4);
	h->has = 1;
}

static int uudp_peer_reset(struct transport *t)
{
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);
	int reset = peer_take_reset(&u->peer);

	/* A port that rebuilt its queue starts a new stream as well. */
	if (u->port && u->port->restarts != u->restarts_seen) {
		u->restarts_seen = u->port->restarts;
		reset = 1;
	}
	return reset;
}

static void uudp_counters(struct transport *t, char *buf, size_t len)
{
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);
	size_t n;

	snprintf(buf, len, "port=%s mode=%s ", port_name(u->port), u->port->mode);
	n = strlen(buf);
	frame_counters_str(&u->rx, buf + n, len - n);
	n = strlen(buf);
	snprintf(buf + n, len - n,
		 " rx_udp_csum_partial=%llu rx_foreign=%llu rx_truncated=%llu rx_stale=%llu tx=%llu"
		 " tx_busy=%llu misses=%llu losses=%llu resolutions=%llu resolve_errors=%llu",
		 (unsigned long long)u->rx_partial,
		 (unsigned long long)u->rx_foreign, (unsigned long long)u->rx_truncated,
		 (unsigned long long)u->rx_stale, (unsigned long long)u->tx_frames,
		 (unsigned long long)u->tx_busy,
		 (unsigned long long)u->peer.count.misses,
		 (unsigned long long)u->peer.count.losses,
		 (unsigned long long)u->peer.count.resolutions,
		 (unsigned long long)u->resolve_errors);
	if (port_has_counters(u->port)) {
		n = strlen(buf);
		if (n + 1 < len) {
			buf[n++] = ' ';
			buf[n] = 0;
			port_counters(u->port, buf + n, len - n);
		}
	}
}

/*
 * Stamps where the port has them: receive stamps from the XDP program's
 * reading of the moment it saw the frame (lib/bpf/ntpx_xdp.bpf.c) when
 * the mode keeps the metadata, or from the HCA's completions (via=verbs,
 * lib/verbs_stamp.h); send stamps from the HCA's send completions, or
 * from AF_XDP TX metadata where the kernel and driver fill it in.
 */
static int uudp_stamps_enable(struct transport *t, char *err, size_t errlen)
{
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);
	int rc;

	u->ps.rx_layer = u->ps.tx_layer = -1;
	u->ps.why = NULL;
	u->ps.warn = t->warn;
	u->ps.warnlen = sizeof(t->warn);
	rc = port_stamps_enable(u->port, &u->ps, err, errlen);
	if (rc == -ENOTSUP)
		return 0;
	if (rc)
		return rc;
	u->stamping = 1;
	if (u->ps.why && u->ps.rx_layer < 0)
		t->st.rx_why[u->ps.why_layer] = u->ps.why;
	if (u->ps.why && u->ps.tx_layer < 0)
		t->st.tx_why[u->ps.why_layer] = u->ps.why;
	if (u->ps.rx_layer >= 0) {
		t->st.rx_layers = 1u << u->ps.rx_layer;
		t->st.rx_src[u->ps.rx_layer] = u->ps.rx_src;
	}
	if (u->ps.tx_layer >= 0 && port_has_tx_stamps(u->port)) {
		t->st.tx_layers = 1u << u->ps.tx_layer;
		t->st.tx_src[u->ps.tx_layer] = u->ps.tx_src;
		t->st.tx_spin = 1;	/* send completions wake no poll */
	} else {
		u->ps.tx_layer = -1;
	}
	return 0;
}

static void uudp_stamps_release(struct transport *t)
{
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);

	port_stamps_release(u->port, t->warn, sizeof(t->warn));
}

static void uudp_tx_note(void *arg, uint32_t tag, int64_t ns)
{
	struct transport *t = arg;
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);

	transport_tx_note(t, tag, (enum transport_layer)u->ps.tx_layer, ns);
}

static void uudp_tx_drain(struct transport *t)
{
	struct uudp_transport *u = container_of(t, struct uudp_transport, t);

	if (u->ps.tx_layer >= 0)
		port_tx_stamps(u->port, uudp_tx_note, t);
}

const struct transport_ops uudp_transport_ops = {
	.scheme = "uudp",
	.params = uudp_params,
	.open = uudp_open,
	.send = uudp_send,
	.recv = uudp_recv,
	.close = uudp_close,
	.addr_str = uudp_addr_str,
	.addr_host = uudp_addr_host,
	.peer_reset = uudp_peer_reset,
	.counters = uudp_counters,
	.check = uudp_check,
	.stamps_enable = uudp_stamps_enable,
	.stamps_release = uudp_stamps_release,
	.tx_drain = uudp_tx_drain,
	.pending = uudp_pending,
};
