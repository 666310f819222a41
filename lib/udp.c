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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ntp.h"
#include "opt_units.h"
#include "transport_private.h"
#include "udp_stamp.h"
#include "util_private.h"

struct udp_transport {
	struct transport t;
	struct sockaddr_storage peer;	/* client: the server */
	socklen_t peerlen;
	int gro;		/* UDP_GRO asked for (first recv_batch) */
	char dev[IFNAMSIZ];	/* dev=, or "" */
	struct udp_stamping ts;	/* udp_stamp.c */
	int64_t tick;		/* SO_RCVTIMEO's granularity, ns (the kernel's tick) */
	int64_t rcvtimeo;	/* SO_RCVTIMEO as set, ns */
	struct udp_ahead *ahead;	/* transport_recv_ahead(), or NULL */
	struct udp_more *more;		/* TRANSPORT_SEND_MORE's batch, or NULL */
};

/*
 * Datagrams waiting to go together (TRANSPORT_SEND_MORE): copies of
 * their bytes and addresses, with their stamps' control messages, ready
 * for one sendmmsg() (udp_send_flush).
 */
#define UDP_MORE_MAX	16
#define UDP_MORE_CAP	2048
struct udp_more {
	unsigned n;
	struct mmsghdr m[UDP_MORE_MAX];
	struct iovec iov[UDP_MORE_MAX];
	struct sockaddr_storage to[UDP_MORE_MAX];
	union {
		char buf[UDP_STAMP_CTL];
		struct cmsghdr align;
	} ctl[UDP_MORE_MAX];
	unsigned char data[UDP_MORE_MAX][UDP_MORE_CAP];
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

static int udp_send(struct transport *t, struct transport_dgram *d,
		    const struct transport_addr *to, struct clock *clk, int flags)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	void *buf = d->buf;
	size_t len = d->len;
	ssize_t n;
	int rc;

	rc = udp_stamp_send(&u->ts, t, d, to, clk, flags);
	if (rc != UDP_STAMP_UNSTAMPED)
		return rc;
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		ntp_put_xmt(buf, d->tx_at);
	if (to)
		n = sendto(t->fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)to->data,
			   to->len);
	else
		n = send(t->fd, buf, len, MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
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
		if (u->ts.on) {
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
		if (u->ts.on)
			udp_stamp_rx(&u->ts, &a->m[i].msg_hdr, s->rx);
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
	if (u->ts.on) {
		n = udp_stamp_recv(&u->ts, t, d, &ss, &sslen, clk, flags);
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
	if (n == -EAGAIN && u->ts.tx_unread)
		udp_stamp_drain(&u->ts, t);
	return n;
}

/*
 * A datagram that may wait for a batch: copied in, with its stamps'
 * control message, where there is room and the socket can say each
 * one's id (udp_stamp_prepare); else sent at once.
 */
static int udp_send_more(struct transport *t, struct transport_dgram *d,
			 const struct transport_addr *to, struct clock *clk, int flags)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	struct udp_more *b = u->more;
	struct msghdr *h;
	unsigned i;

	if (!b) {
		b = u->more = calloc(1, sizeof(*u->more));
		if (!b)
			return udp_send(t, d, to, clk, flags);
	}
	i = b->n;
	if (i == UDP_MORE_MAX || d->len > UDP_MORE_CAP || (to && to->len > sizeof(b->to[i])))
		return udp_send(t, d, to, clk, flags);
	h = &b->m[i].msg_hdr;
	memset(h, 0, sizeof(*h));
	h->msg_control = b->ctl[i].buf;
	if (udp_stamp_prepare(&u->ts, t, d, flags, h) < 0)
		return udp_send(t, d, to, clk, flags);
	if (!h->msg_controllen)
		h->msg_control = NULL;
	memcpy(b->data[i], d->buf, d->len);
	b->iov[i].iov_base = b->data[i];
	b->iov[i].iov_len = d->len;
	h->msg_iov = &b->iov[i];
	h->msg_iovlen = 1;
	if (to) {
		memcpy(&b->to[i], to->data, to->len);
		h->msg_name = &b->to[i];
		h->msg_namelen = to->len;
	}
	b->n++;
	return TRANSPORT_QUEUED;
}

/*
 * The batch in sendmmsg() calls: the first that fails a message says
 * its error and the rest go in the next call.  A batch of one goes in
 * sendmsg(), which the kernel takes about 0.1 us faster than a
 * sendmmsg() of one (tests/bench/stampcost.c): a server at a low rate
 * answers a burst of one request at a time.
 */
static int udp_send_flush(struct transport *t, struct clock *clk, struct transport_sent *res,
			  unsigned cap)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);
	struct udp_more *b = u->more;
	unsigned i = 0, n, j;

	if (!b || !b->n)
		return 0;
	n = b->n;
	b->n = 0;
	while (i < n) {
		int64_t at = clock_now(clk);
		int r, e;

		if (n - i == 1) {
			ssize_t l = sendmsg(t->fd, &b->m[i].msg_hdr, MSG_DONTWAIT);

			if (l >= 0)
				b->m[i].msg_len = (unsigned)l;
			r = l < 0 ? -1 : 1;
		} else {
			r = sendmmsg(t->fd, b->m + i, n - i, MSG_DONTWAIT);
		}
		e = errno;

		if (r <= 0) {
			if (i < cap)
				res[i] = (struct transport_sent){ .rc = r < 0 ? -e : -EAGAIN,
								  .tx_at = at };
			i++;
			continue;
		}
		for (j = i; j < i + (unsigned)r; j++)
			if (j < cap)
				res[j] = (struct transport_sent){
					.rc = b->m[j].msg_len == b->iov[j].iov_len ? 0 : -EMSGSIZE,
					.tx_at = at };
		i += (unsigned)r;
	}
	return (int)n;
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

static int udp_stamps_enable(struct transport *t, char *err, size_t errlen)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);

	return udp_stamp_enable(&u->ts, t, u->dev, u->peerlen != 0, err, errlen);
}

static void udp_stamps_release(struct transport *t)
{
	udp_stamp_release(&container_of(t, struct udp_transport, t)->ts, t);
}

static void udp_tx_drain(struct transport *t)
{
	udp_stamp_drain(&container_of(t, struct udp_transport, t)->ts, t);
}

static void udp_close(struct transport *t)
{
	struct udp_transport *u = container_of(t, struct udp_transport, t);

	udp_stamp_close(&u->ts);
	close(t->fd);
	free(u->ahead);
	free(u->more);
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
	.send_more = udp_send_more,
	.send_flush = udp_send_flush,
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
