/* SPDX-License-Identifier: ISC */
/*
 * udp.c - the kernel UDP transport.
 *
 * A client socket is connected to its server, so that the kernel reports
 * ICMP port-unreachable as ECONNREFUSED on the next receive: a server that
 * is down shows as `refused`, not as a silent timeout.  dev= binds the
 * socket to an interface (SO_BINDTODEVICE), src= to a source address, so
 * that two NICs between the same hosts are two paths.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hwts.h"
#include "log.h"
#include "opt_units.h"
#include "phc.h"
#include "transport_private.h"
#include "util_private.h"

struct udp_transport {
	struct transport t;
	struct sockaddr_storage peer;	/* client: the server */
	socklen_t peerlen;
	int gro;		/* UDP_GRO asked for (first recv_batch) */
	int stamping;		/* SO_TIMESTAMPING on */
	int set_id;		/* SCM_TS_OPT_ID works: -1 unknown, 0, 1 */
	int tx_flags;		/* send stamps asked on the socket, or 0 */
	uint32_t next_id;	/* the id of the next send */
	char dev[IFNAMSIZ];	/* dev=, or "" */
	struct phc *phc;	/* hardware stamping: the NIC's clock */
	struct hwts hwts;	/* ...as found on dev=, put back at close */
	const char *hw_why;	/* dev= without hardware stamps: why, for #stamps */
	int tx_unread;		/* send stamps asked for since the last drain */
	int64_t tick;		/* SO_RCVTIMEO's granularity, ns (the kernel's tick) */
	int64_t rcvtimeo;	/* SO_RCVTIMEO as set, ns */
	struct udp_ahead *ahead;	/* transport_recv_ahead(), or NULL */
};

/*
 * Datagrams read ahead (transport_recv_ahead): what one recvmmsg() took,
 * handed out one at a time, each with its own receive stamps and the
 * user stamp of the call that read it.
 */
#define UDP_AHEAD_MAX	16
struct udp_ahead {
	unsigned n, next;		/* read, and the next to hand out */
	unsigned max;			/* taken per call */
	size_t cap;			/* bytes kept of each */
	int64_t stamp;			/* after the call returned */
	struct udp_slot {
		size_t len;		/* the datagram's: more than cap, truncated */
		struct sockaddr_storage ss;
		socklen_t sslen;
		int64_t rx[TRANSPORT_NLAYERS];
		union {
			char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
			struct cmsghdr align;
		} ctl;
	} slot[UDP_AHEAD_MAX];
	struct mmsghdr m[UDP_AHEAD_MAX];
	struct iovec iov[UDP_AHEAD_MAX];
	unsigned char data[];		/* max * cap */
};

#ifndef SCM_TS_OPT_ID
#define SCM_TS_OPT_ID	81	/* asm-generic/socket.h, Linux 6.13 */
#endif

static const char *const udp_params[] = { "dev", "src", NULL };

static void udp_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		snprintf(buf, len, "?");
	}
}

/*
 * SO_RCVTIMEO's granularity: the kernel keeps the timeout in ticks,
 * rounded up, so the shortest one set reads back as one tick.  10 ms
 * (HZ=100, the coarsest) when it cannot be read.
 */
static void udp_tick_learn(struct udp_transport *u)
{
	struct timeval tv = { .tv_usec = 1 };
	socklen_t len = sizeof(tv);

	u->tick = NTPX_NS_PER_SEC / 100;
	if (setsockopt(u->t.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
	    getsockopt(u->t.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) == 0 &&
	    tv.tv_sec == 0 && tv.tv_usec > 0)
		u->tick = (int64_t)tv.tv_usec * 1000;
	u->rcvtimeo = 0;		/* none set by us yet */
}

static struct transport *udp_open(const struct endpoint *ep, enum transport_role role,
				  char *err, size_t errlen)
{
	const char *dev = endpoint_param(ep, "dev");
	const char *src = endpoint_param(ep, "src");
	struct udp_transport *u = calloc(1, sizeof(*u));
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int fd = -1;
	const char *host = ep->host;

	if (!u) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* A server listens on its endpoint: "*" means every address. */
	if (role == TRANSPORT_SERVER && strcmp(host, "*") == 0)
		host = "0.0.0.0";
	if (transport_resolve(host, ep->port, role == TRANSPORT_SERVER, ep->family, &addr, &addrlen,
			      err, errlen))
		goto no_address;
	/* Blocking, so that udp_recv_block() can sleep in the receive
	   itself; every other call says MSG_DONTWAIT. */
	fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s: socket: %s", ep->url, strerror(errno));
		goto no_socket;
	}
	if (dev && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev) + 1)) {
		snprintf(err, errlen, "%s: cannot bind to device '%s': %s", ep->url, dev,
			 strerror(errno));
		goto no_option;
	}
	if (role == TRANSPORT_SERVER) {
		/*
		 * A server's queue must ride out the moments it is not
		 * scheduled: at 100k requests/s a 10 ms stall is 1000
		 * datagrams, several times the default buffer.  Root may go
		 * past rmem_max; anyone else gets what the kernel allows.
		 */
		int rcvbuf = 4 << 20;

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
			(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		if (src) {
			snprintf(err, errlen, "%s: src= is for clients; a server binds its own address",
				 ep->url);
			goto no_option;
		}
		if (bind(fd, (struct sockaddr *)&addr, addrlen)) {
			snprintf(err, errlen, "%s: bind: %s", ep->url, strerror(errno));
			goto no_bind;
		}
	} else {
		if (src) {
			struct sockaddr_storage sa;
			socklen_t salen;

			if (transport_resolve(src, 0, 1, 0, &sa, &salen, err, errlen))
				goto no_bind;
			if (sa.ss_family != addr.ss_family) {
				snprintf(err, errlen, "%s: src '%s' is not of the server's address family",
					 ep->url, src);
				goto no_bind;
			}
			if (bind(fd, (struct sockaddr *)&sa, salen)) {
				snprintf(err, errlen, "%s: cannot bind source '%s': %s", ep->url, src,
					 strerror(errno));
				goto no_bind;
			}
		}
		if (connect(fd, (struct sockaddr *)&addr, addrlen)) {
			snprintf(err, errlen, "%s: connect: %s", ep->url, strerror(errno));
			goto no_bind;
		}
		u->peer = addr;
		u->peerlen = addrlen;
		if (!transport_host_numeric(host))
			udp_sockaddr_str((struct sockaddr *)&addr, u->t.resolved,
					 sizeof(u->t.resolved));
	}
	if (dev)
		snprintf(u->dev, sizeof(u->dev), "%s", dev);
	u->t.fd = fd;
	udp_tick_learn(u);
	return &u->t;

no_bind:
no_option:
	close(fd);
no_socket:
no_address:
	free(u);
	return NULL;
}

static void udp_tx_drain(struct transport *t);

/*
 * sendmsg() asking for this datagram's send stamps at @layers (an
 * SO_TIMESTAMPING message: per datagram, so that a server pays for them
 * only where they are wanted, and for each layer only where it is: every
 * one is a message on the error queue), with its id in an SCM_TS_OPT_ID
 * message when @with_id.
 */
/* The SO_TIMESTAMPING send flags for @layers (bits 1 << TRANSPORT_LAYER_*). */
static uint32_t udp_tx_sof(unsigned layers)
{
	return (layers & 1u << TRANSPORT_LAYER_Q ? SOF_TIMESTAMPING_TX_SCHED : 0) |
	       (layers & 1u << TRANSPORT_LAYER_K ? SOF_TIMESTAMPING_TX_SOFTWARE : 0) |
	       (layers & 1u << TRANSPORT_LAYER_H ? SOF_TIMESTAMPING_TX_HARDWARE : 0);
}

static ssize_t udp_send_stamped(struct udp_transport *u, const void *buf, size_t len,
				const struct transport_addr *to, unsigned layers, uint32_t id,
				int with_id)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) * 2];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr h = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = CMSG_SPACE(sizeof(uint32_t)) * (with_id ? 2 : 1),
	};
	struct cmsghdr *c;
	uint32_t tx = udp_tx_sof(layers);

	memset(&ctl, 0, sizeof(ctl));
	if (to) {
		h.msg_name = (void *)to->data;
		h.msg_namelen = to->len;
	}
	c = CMSG_FIRSTHDR(&h);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SO_TIMESTAMPING;
	c->cmsg_len = CMSG_LEN(sizeof(tx));
	memcpy(CMSG_DATA(c), &tx, sizeof(tx));
	if (with_id) {
		c = CMSG_NXTHDR(&h, c);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_TS_OPT_ID;
		c->cmsg_len = CMSG_LEN(sizeof(id));
		memcpy(CMSG_DATA(c), &id, sizeof(id));
	}
	return sendmsg(u->t.fd, &h, MSG_DONTWAIT);
}

/* The socket's send-stamp counter back to 0, the stamps it has counted read. */
static void udp_tx_count_reset(struct udp_transport *u)
{
	int flags = u->tx_flags & ~SOF_TIMESTAMPING_OPT_ID;

	udp_tx_drain(&u->t);
	if (setsockopt(u->t.fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) == 0 &&
	    setsockopt(u->t.fd, SOL_SOCKET, SO_TIMESTAMPING, &u->tx_flags,
		       sizeof(u->tx_flags)) == 0)
		u->next_id = 0;
}

/*
 * A connected socket asks for its send stamps once, on the socket: a
 * control message would make the kernel look its route up again on every
 * send.  Every send is then stamped, and its id is the socket's count of
 * them; a send that fails may or may not have counted, so the count
 * starts again.  The kernel stamps every layer then: TRANSPORT_STAMP_ONLY
 * only chooses what is kept.
 */
static int udp_send_counted(struct udp_transport *u, struct transport_dgram *d,
			    const struct transport_addr *to, struct clock *clk, int flags)
{
	unsigned layers = transport_send_layers(&u->t, flags);
	ssize_t n;

	if (layers)
		transport_tx_begin(&u->t, d, u->next_id, layers);
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		transport_stamp_xmt(d->buf, d->tx_at);
	n = sendto(u->t.fd, d->buf, d->len, MSG_DONTWAIT, to ? (const struct sockaddr *)to->data : NULL,
		   to ? to->len : 0);
	if (n < 0) {
		int e = errno;

		udp_tx_count_reset(u);
		return -e;
	}
	u->next_id++;
	u->tx_unread = 1;
	return (size_t)n == d->len ? 0 : -EMSGSIZE;
}

static int udp_send(struct transport *t, struct transport_dgram *d,
		    const struct transport_addr *to, struct clock *clk, int flags)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	void *buf = d->buf;
	size_t len = d->len;
	unsigned layers;
	ssize_t n;

	if (u->tx_flags)
		return udp_send_counted(u, d, to, clk, flags);
	layers = transport_send_layers(t, flags);
	if (u->stamping && layers) {
		uint32_t id = u->next_id;

		transport_tx_begin(t, d, id, layers);
		d->tx_at = clock_now(clk);
		if (flags & TRANSPORT_STAMP_XMT)
			transport_stamp_xmt(buf, d->tx_at);
		n = -1;
		if (u->set_id != 0) {
			n = udp_send_stamped(u, buf, len, to, layers, id, 1);
			if (u->set_id < 0 && n < 0 && errno == EINVAL) {
				/* An older kernel: the socket's counter then,
				   which counts the datagrams that ask for stamps. */
				u->set_id = 0;
			} else if (u->set_id < 0 && n >= 0) {
				u->set_id = 1;
			}
		}
		if (u->set_id == 0)
			n = udp_send_stamped(u, buf, len, to, layers, id, 0);
		if (n < 0)
			return -errno;
		u->next_id++;
		/* The stamps are read later, off the path being measured:
		   after the answer (transport_tx_stamps), or before a poll
		   that they would wake (udp_recv_block). */
		u->tx_unread = 1;
		return (size_t)n == len ? 0 : -EMSGSIZE;
	}
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		transport_stamp_xmt(buf, d->tx_at);
	if (to)
		n = sendto(t->fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)to->data,
			   to->len);
	else
		n = send(t->fd, buf, len, MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NTPX_NS_PER_SEC + ts->tv_nsec;
}

/* A raw hardware stamp on CLOCK_REALTIME, or TRANSPORT_NO_STAMP. */
static int64_t udp_hw_realtime(const struct udp_transport *u, const struct timespec *ts)
{
	int64_t rt;

	if (!u->phc || phc_to_realtime(u->phc, ts_ns(ts), &rt))
		return TRANSPORT_NO_STAMP;
	return rt;
}

/* The receive stamps in a received message's control data, into @rx. */
static void udp_rx_stamps(const struct udp_transport *u, struct msghdr *h, int64_t *rx)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		struct scm_timestamping tss;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPING)
			continue;
		memcpy(&tss, CMSG_DATA(c), sizeof(tss));
		if (tss.ts[0].tv_sec || tss.ts[0].tv_nsec)
			rx[TRANSPORT_LAYER_K] = ts_ns(&tss.ts[0]);
		if (tss.ts[2].tv_sec || tss.ts[2].tv_nsec)
			rx[TRANSPORT_LAYER_H] = udp_hw_realtime(u, &tss.ts[2]);
	}
}

/* recvmsg() with the SCM_TIMESTAMPING message's stamps into @d. */
static ssize_t udp_recv_stamped(struct transport *t, struct transport_dgram *d,
				struct sockaddr_storage *ss, socklen_t *sslen,
				struct clock *clk, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = d->buf, .iov_len = d->cap };
	struct msghdr h = {
		.msg_name = ss, .msg_namelen = *sslen,
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n;

	n = recvmsg(t->fd, &h, MSG_TRUNC | flags);
	if (n < 0)
		return -errno;
	d->rx_at = clock_now(clk);
	*sslen = h.msg_namelen;
	udp_rx_stamps(container_of(t, struct udp_transport, t), &h, d->rx.at);
	return n;
}

/*
 * Whatever waits, up to u->ahead->max datagrams, in one recvmmsg():
 * asleep until the first comes when @flags is 0 (MSG_WAITFORONE), else
 * without waiting.  The user stamp is taken once, when the call returns.
 */
static int udp_read_ahead(struct udp_transport *u, struct clock *clk, int flags)
{
	struct udp_ahead *a = u->ahead;
	unsigned i;
	int r;

	for (i = 0; i < a->max; i++) {
		struct msghdr *h = &a->m[i].msg_hdr;

		a->iov[i].iov_base = a->data + i * a->cap;
		a->iov[i].iov_len = a->cap;
		memset(h, 0, sizeof(*h));
		h->msg_iov = &a->iov[i];
		h->msg_iovlen = 1;
		h->msg_name = &a->slot[i].ss;
		h->msg_namelen = sizeof(a->slot[i].ss);
		if (u->stamping) {
			h->msg_control = a->slot[i].ctl.buf;
			h->msg_controllen = sizeof(a->slot[i].ctl.buf);
		}
	}
	r = recvmmsg(u->t.fd, a->m, a->max, MSG_TRUNC | (flags ? flags : MSG_WAITFORONE), NULL);
	if (r < 0)
		return -errno;
	a->stamp = clock_now(clk);
	for (i = 0; i < (unsigned)r; i++) {
		struct udp_slot *s = &a->slot[i];
		int l;

		s->len = a->m[i].msg_len;
		s->sslen = a->m[i].msg_hdr.msg_namelen;
		for (l = 0; l < TRANSPORT_NLAYERS; l++)
			s->rx[l] = TRANSPORT_NO_STAMP;
		if (u->stamping)
			udp_rx_stamps(u, &a->m[i].msg_hdr, s->rx);
	}
	a->n = (unsigned)r;
	a->next = 0;
	return r;
}

/* The next datagram read ahead, as udp_recv_one() returns one. */
static ssize_t udp_ahead_take(struct udp_transport *u, struct transport_dgram *d)
{
	struct udp_ahead *a = u->ahead;
	unsigned i = a->next++;
	struct udp_slot *s = &a->slot[i];
	size_t kept = s->len < a->cap ? s->len : a->cap, cap = d->cap;

	memcpy(d->buf, a->data + i * a->cap, kept < cap ? kept : cap);
	memcpy(d->rx.at, s->rx, sizeof(d->rx.at));
	d->rx_at = a->stamp;
	d->peer.len = s->sslen <= sizeof(d->peer.data) ? s->sslen : 0;
	memcpy(d->peer.data, &s->ss, d->peer.len);
	/* Longer than was kept of it but not than the caller's buffer: it
	   was truncated all the same, so its length must say so. */
	if (s->len > a->cap && s->len <= cap)
		return (ssize_t)cap + 1;
	return (ssize_t)s->len;
}

/*
 * transport_recv_ahead(): up to @n datagrams of up to @cap bytes per
 * receive.
 */
static int udp_recv_ahead(struct transport *t, unsigned n, size_t cap)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	struct udp_ahead *a;

	if (n > UDP_AHEAD_MAX)
		n = UDP_AHEAD_MAX;
	if (u->ahead && u->ahead->next < u->ahead->n)
		return -EBUSY;		/* datagrams would be lost */
	free(u->ahead);
	u->ahead = NULL;
	if (n <= 1)
		return 0;
	a = calloc(1, sizeof(*a) + n * cap);
	if (!a)
		return -ENOMEM;
	a->max = n;
	a->cap = cap;
	u->ahead = a;
	return 0;
}

static unsigned udp_pending(const struct transport *t)
{
	const struct udp_transport *u = container_of(t, const struct udp_transport, t);

	return u->ahead ? u->ahead->n - u->ahead->next : 0;
}

/* One datagram; @flags MSG_DONTWAIT, or 0 to sleep until one comes. */
static ssize_t udp_recv_one(struct transport *t, struct transport_dgram *d, struct clock *clk,
			    int flags)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	ssize_t n;

	if (u->ahead) {
		if (u->ahead->next == u->ahead->n) {
			int r = udp_read_ahead(u, clk, flags);

			if (r < 0)
				return r;
		}
		return udp_ahead_take(u, d);
	}
	if (u->stamping) {
		n = udp_recv_stamped(t, d, &ss, &sslen, clk, flags);
		if (n < 0)
			return n;
		goto got;
	}
	/* MSG_TRUNC: the datagram's real length, so truncation is seen. */
	n = recvfrom(t->fd, d->buf, d->cap, MSG_TRUNC | flags, (struct sockaddr *)&ss, &sslen);
	if (n < 0)
		return -errno;
	d->rx_at = clock_now(clk);
got:
	d->peer.len = sslen <= sizeof(d->peer.data) ? sslen : 0;
	memcpy(d->peer.data, &ss, d->peer.len);
	return n;
}

static ssize_t udp_recv(struct transport *t, struct transport_dgram *d, struct clock *clk)
{
	return udp_recv_one(t, d, clk, MSG_DONTWAIT);
}

/*
 * The longest sleep in the receive that cannot end after @left from now:
 * the kernel's timer ends a sleep up to a tick late, plus up to an
 * eighth of its length for a long one (its timer wheel's coarser
 * levels).  0 when that leaves less than a tick.
 */
static int64_t udp_sleep_max(const struct udp_transport *u, int64_t left)
{
	int64_t s = left - 2 * u->tick - left / 8;

	return s >= u->tick ? s : 0;
}

/*
 * The receive's sleep at most @max and at least half of it, set only
 * when the one set is not: a client waiting the same time for every
 * answer sets it once.
 */
static int udp_rcvtimeo(struct udp_transport *u, int64_t max)
{
	struct timeval tv;
	int64_t ns;

	if (u->rcvtimeo <= max && u->rcvtimeo >= max / 2)
		return 0;
	ns = max - max / 4;
	tv.tv_sec = ns / NTPX_NS_PER_SEC;
	tv.tv_usec = ns % NTPX_NS_PER_SEC / 1000;
	if (!tv.tv_sec && !tv.tv_usec)
		tv.tv_usec = 1;		/* 0 would be no timeout at all */
	if (setsockopt(u->t.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	u->rcvtimeo = ns;
	return 0;
}

/*
 * Waits for a datagram asleep in recvmsg() itself (transport_ops): one
 * system call where a poll and a receive are two, and the send stamps
 * that the kernel queues on the error queue do not end the sleep, as
 * they end a poll (POLLERR), so they are read after the answer, off the
 * path being measured.  A timeout is always set: it also makes a signal
 * end the receive, SA_RESTART or not, and an endless wait (@deadline
 * INT64_MAX) returns -EAGAIN every second or so, so that a signal that
 * came just before the receive, or as its timeout ended, is seen by the
 * caller's next look at its flags.  It is the kernel's timer, a tick
 * coarse, so the receive sleeps only as long as cannot overrun
 * @deadline and returns -EAGAIN for the caller to poll what is left,
 * precisely, with the send stamps read first, or they would end that
 * poll at once.
 */
static ssize_t udp_recv_block(struct transport *t, struct transport_dgram *d,
			      struct clock *clk, int64_t deadline)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	int64_t max = deadline == INT64_MAX ? NTPX_NS_PER_SEC :
		      udp_sleep_max(u, deadline - clock_monotonic_ns());
	ssize_t n = -EAGAIN;

	if (max > 0) {
		int rc = udp_rcvtimeo(u, max);

		if (rc < 0)
			return rc;
		n = udp_recv_one(t, d, clk, 0);
	}
	if (n == -EAGAIN && u->tx_unread)
		udp_tx_drain(t);
	return n;
}

#define UDP_BATCH	64

/* sendmmsg(), a UDP_SEGMENT control message on each segmented message. */
static int udp_send_batch(struct transport *t, struct transport_msg *m, unsigned n)
{
	struct mmsghdr hdr[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl[UDP_BATCH];
	unsigned i;
	int r;

	if (n > UDP_BATCH)
		n = UDP_BATCH;
	memset(hdr, 0, n * sizeof(hdr[0]));
	for (i = 0; i < n; i++) {
		struct msghdr *h = &hdr[i].msg_hdr;

		iov[i].iov_base = m[i].buf;
		iov[i].iov_len = m[i].len;
		h->msg_iov = &iov[i];
		h->msg_iovlen = 1;
		if (m[i].addr) {
			h->msg_name = m[i].addr->data;
			h->msg_namelen = m[i].addr->len;
		}
		if (m[i].segment && m[i].len > m[i].segment) {
			struct cmsghdr *c;
			uint16_t seg = (uint16_t)m[i].segment;

			h->msg_control = ctl[i].buf;
			h->msg_controllen = sizeof(ctl[i].buf);
			c = CMSG_FIRSTHDR(h);
			c->cmsg_level = SOL_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(seg));
			memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		}
	}
	r = sendmmsg(t->fd, hdr, n, MSG_DONTWAIT);
	return r < 0 ? -errno : r;
}

/*
 * recvmmsg().  The first call asks for UDP_GRO, so that a batch receiver
 * gets datagrams coalesced (segment > 0) where the kernel can: a bulk sink
 * then reads tens of datagrams per message.
 */
static int udp_recv_batch(struct transport *t, struct transport_msg *m, unsigned n)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	struct mmsghdr hdr[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	struct sockaddr_storage ss[UDP_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl[UDP_BATCH];
	unsigned i;
	int r;

	if (!u->gro) {
		int one = 1;

		/* Without it (old kernels) datagrams simply come one by one. */
		(void)setsockopt(t->fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
		u->gro = 1;
	}
	if (n > UDP_BATCH)
		n = UDP_BATCH;
	memset(hdr, 0, n * sizeof(hdr[0]));
	for (i = 0; i < n; i++) {
		struct msghdr *h = &hdr[i].msg_hdr;

		iov[i].iov_base = m[i].buf;
		iov[i].iov_len = m[i].cap;
		h->msg_iov = &iov[i];
		h->msg_iovlen = 1;
		h->msg_name = &ss[i];
		h->msg_namelen = sizeof(ss[i]);
		h->msg_control = ctl[i].buf;
		h->msg_controllen = sizeof(ctl[i].buf);
	}
	r = recvmmsg(t->fd, hdr, n, MSG_TRUNC | MSG_DONTWAIT, NULL);
	if (r < 0)
		return -errno;
	for (i = 0; i < (unsigned)r; i++) {
		struct msghdr *h = &hdr[i].msg_hdr;
		struct cmsghdr *c;

		m[i].len = hdr[i].msg_len;
		m[i].segment = 0;
		for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
			if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
				int seg;

				memcpy(&seg, CMSG_DATA(c), sizeof(seg));
				m[i].segment = seg > 0 && (size_t)seg < m[i].len ? (size_t)seg : 0;
			}
		}
		if (m[i].addr) {
			m[i].addr->len = h->msg_namelen <= sizeof(m[i].addr->data) ? h->msg_namelen : 0;
			memcpy(m[i].addr->data, &ss[i], m[i].addr->len);
		}
	}
	return r;
}

/* The host: family and address, without the port. */
static size_t udp_addr_key(const struct transport_addr *a, void *key, size_t cap)
{
	const struct sockaddr *sa = (const void *)a->data;
	unsigned char k[1 + 16];
	size_t n = 0;

	if (sa->sa_family == AF_INET && a->len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = (const void *)sa;

		k[0] = 4;
		memcpy(k + 1, &s4->sin_addr, 4);
		n = 5;
	} else if (sa->sa_family == AF_INET6 && a->len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		k[0] = 6;
		memcpy(k + 1, &s6->sin6_addr, 16);
		n = 17;
	}
	if (n > cap)
		n = cap;
	memcpy(key, k, n);
	return n;
}

/* The host of @a, for a server's policy (IPv4 as ::ffff:a.b.c.d). */
static void udp_addr_host(const struct transport_addr *a, struct transport_host *h)
{
	const struct sockaddr *sa = (const void *)a->data;

	if (sa->sa_family == AF_INET && a->len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s4 = (const void *)sa;

		memset(h->a, 0, 10);
		h->a[10] = h->a[11] = 0xff;
		memcpy(h->a + 12, &s4->sin_addr, 4);
		h->has = 1;
	} else if (sa->sa_family == AF_INET6 && a->len >= sizeof(struct sockaddr_in6)) {
		memcpy(h->a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		h->has = 1;
	}
}

/* One message of the error queue: its send stamp, into the ring. */
static void udp_tx_one(struct transport *t, struct msghdr *h)
{
	struct scm_timestamping tss;
	struct cmsghdr *c;
	int have_ts = 0, have_err = 0;
	uint32_t id = 0, kind = 0;

	for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
			memcpy(&tss, CMSG_DATA(c), sizeof(tss));
			have_ts = 1;
		} else if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			   (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)) {
			struct sock_extended_err ee;

			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_errno == ENOMSG && ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING) {
				id = ee.ee_data;
				kind = ee.ee_info;
				have_err = 1;
			}
		}
	}
	if (!have_ts || !have_err)
		return;
	if (kind == SCM_TSTAMP_SND && (tss.ts[2].tv_sec || tss.ts[2].tv_nsec)) {
		int64_t rt = udp_hw_realtime(container_of(t, struct udp_transport, t), &tss.ts[2]);

		if (rt != TRANSPORT_NO_STAMP)
			transport_tx_note(t, id, TRANSPORT_LAYER_H, rt);
	}
	if (!(tss.ts[0].tv_sec || tss.ts[0].tv_nsec))
		return;
	if (kind == SCM_TSTAMP_SCHED)
		transport_tx_note(t, id, TRANSPORT_LAYER_Q, ts_ns(&tss.ts[0]));
	else if (kind == SCM_TSTAMP_SND)
		transport_tx_note(t, id, TRANSPORT_LAYER_K, ts_ns(&tss.ts[0]));
}

/*
 * Every send stamp waiting in the error queue, into the ring.  A send
 * queues one message per stamp (TX_SCHED and TX_SOFTWARE: two), so one
 * recvmmsg() takes them together; a batch that comes back short means
 * the queue is empty, without another call to learn it.
 */
#define TX_BATCH	8
static void udp_tx_drain(struct transport *t)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping)) +
			 CMSG_SPACE(sizeof(struct sock_extended_err) +
				    sizeof(struct sockaddr_in6)) + 64];
		struct cmsghdr align;
	} ctl[TX_BATCH];
	struct mmsghdr m[TX_BATCH];
	int n, i;

	container_of(t, struct udp_transport, t)->tx_unread = 0;
	do {
		memset(m, 0, sizeof(m));
		for (i = 0; i < TX_BATCH; i++) {
			m[i].msg_hdr.msg_control = ctl[i].buf;
			m[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
		}
		n = recvmmsg(t->fd, m, TX_BATCH, MSG_ERRQUEUE | MSG_DONTWAIT, NULL);
		for (i = 0; i < n; i++)
			udp_tx_one(t, &m[i].msg_hdr);
	} while (n == TX_BATCH);
}

/* Puts the NIC's stamping setting back, saying what went wrong. */
static void udp_hw_put_back(struct udp_transport *u)
{
	if (hwts_release(&u->hwts))
		ntpx_lines_add(u->t.warn, sizeof(u->t.warn), "%s", u->hwts.note);
}

/*
 * Hardware stamping on dev=, where the NIC has it: returns HWTS_TX and
 * HWTS_RX for what it stamps (sends; every received packet) with u->phc
 * open, 0 when it has none, u->hw_why saying why for what is missing.
 * A NIC that stamps sends but not every receive (i40e refuses
 * HWTSTAMP_FILTER_ALL; others give only PTP) keeps its send stamps.  The
 * setting is read first and only what is missing is switched on, never
 * weakening another program's (ptp4l's) setting, the driver's answer
 * checked, the change said, and put back at close (lib/hwts.h, after
 * linuxptp's hwts_init).
 */
static int udp_hw_enable(struct udp_transport *u)
{
	const unsigned need = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
			      SOF_TIMESTAMPING_RAW_HARDWARE;
	struct ethtool_ts_info info = { .cmd = ETHTOOL_GET_TS_INFO };
	struct ifreq ifr;
	char err[128];
	int got;

	if (!u->dev[0])
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", u->dev);
	ifr.ifr_data = (void *)&info;
	if (ioctl(u->t.fd, SIOCETHTOOL, &ifr) || (info.so_timestamping & need) != need ||
	    info.phc_index < 0) {
		u->hw_why = "-:nic_has_no_hw_stamps";
		return 0;
	}
	got = hwts_acquire(&u->hwts, u->t.fd, u->dev, HWTS_TX | HWTS_RX);
	if (u->hwts.note[0])
		ntpx_lines_add(u->t.warn, sizeof(u->t.warn), "%s", u->hwts.note);
	if (got <= 0 || !(got & HWTS_TX)) {
		udp_hw_put_back(u);
		u->hw_why = got < 0 ? "-:driver_refused_hw_stamping" :
				      "-:driver_cannot_stamp_sends";
		return 0;
	}
	if (!(got & HWTS_RX))
		u->hw_why = "-:driver_cannot_stamp_all_rx";
	u->phc = phc_open(info.phc_index, err, sizeof(err));
	if (!u->phc) {
		udp_hw_put_back(u);
		u->hw_why = "-:no_phc";
		return 0;
	}
	return got;
}

static int udp_stamps_enable(struct transport *t, char *err, size_t errlen)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	/* Receive stamps for every datagram; send stamps per datagram, where
	   asked (udp_send_stamped()), but a client's on the socket, every
	   send's (udp_send_counted()). */
	int flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		    SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	int hw = udp_hw_enable(u);
	unsigned tx = 1u << TRANSPORT_LAYER_Q | 1u << TRANSPORT_LAYER_K |
		      (hw & HWTS_TX ? 1u << TRANSPORT_LAYER_H : 0);

	if (hw)
		flags |= SOF_TIMESTAMPING_RAW_HARDWARE;
	if (hw & HWTS_RX)
		flags |= SOF_TIMESTAMPING_RX_HARDWARE;
	if (u->peerlen)
		flags |= (int)udp_tx_sof(tx);
	if (setsockopt(t->fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags))) {
		snprintf(err, errlen, "SO_TIMESTAMPING: %s", strerror(errno));
		return -errno;
	}
	u->tx_flags = u->peerlen ? flags : 0;
	u->stamping = 1;
	u->set_id = -1;
	u->next_id = 0;
	t->st.tx_layers = tx;
	t->st.rx_layers = 1u << TRANSPORT_LAYER_K;
	t->st.tx_src[TRANSPORT_LAYER_Q] = "so_timestamping:tx_sched";
	t->st.tx_src[TRANSPORT_LAYER_K] = "so_timestamping:tx_software";
	t->st.rx_src[TRANSPORT_LAYER_K] = "so_timestamping:rx_software";
	if (hw & HWTS_TX)
		t->st.tx_src[TRANSPORT_LAYER_H] = "so_timestamping:tx_hardware+phc";
	else
		t->st.tx_why[TRANSPORT_LAYER_H] = u->hw_why;
	if (hw & HWTS_RX) {
		t->st.rx_layers |= 1u << TRANSPORT_LAYER_H;
		t->st.rx_src[TRANSPORT_LAYER_H] = "so_timestamping:rx_hardware+phc";
	} else {
		t->st.rx_why[TRANSPORT_LAYER_H] = u->hw_why;
	}
	return 0;
}

static void udp_stamps_release(struct transport *t)
{
	udp_hw_put_back(container_of(t, struct udp_transport, t));
}

static void udp_close(struct transport *t)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);

	phc_close(u->phc);
	hwts_release(&u->hwts);
	close(t->fd);
	free(u->ahead);
	free(t);
}

static void udp_addr_str(const struct transport_addr *a, char *buf, size_t len)
{
	udp_sockaddr_str((const struct sockaddr *)a->data, buf, len);
}

/* As root past rmem_max (SO_RCVBUFFORCE), else what the kernel allows. */
static int udp_rcvbuf_set(struct transport *t, int bytes)
{
	if (setsockopt(t->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) == 0)
		return 0;
	if (setsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) == 0)
		return 0;
	return -errno;
}

/* IP_MTU of the connected socket, less the IPv4 and UDP headers. */
static int udp_payload_max(struct transport *t, size_t *bytes)
{
	int mtu = 0;
	socklen_t len = sizeof(mtu);

	if (getsockopt(t->fd, IPPROTO_IP, IP_MTU, &mtu, &len) < 0)
		return -errno;
	if (mtu <= 28)
		return -EMSGSIZE;
	*bytes = (size_t)mtu - 28;
	return 0;
}

const struct transport_ops udp_transport_ops = {
	.scheme = "udp",
	.params = udp_params,
	.open = udp_open,
	.send = udp_send,
	.recv = udp_recv,
	.recv_block = udp_recv_block,
	.recv_ahead = udp_recv_ahead,
	.pending = udp_pending,
	.send_batch = udp_send_batch,
	.recv_batch = udp_recv_batch,
	.close = udp_close,
	.addr_str = udp_addr_str,
	.stamps_enable = udp_stamps_enable,
	.stamps_release = udp_stamps_release,
	.tx_drain = udp_tx_drain,
	.addr_key = udp_addr_key,
	.addr_host = udp_addr_host,
	.rcvbuf_set = udp_rcvbuf_set,
	.payload_max = udp_payload_max,
};
