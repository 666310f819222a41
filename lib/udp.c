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
#include <sys/socket.h>
#include <unistd.h>

#include "transport_private.h"
#include "util_private.h"

struct udp_transport {
	struct transport t;
	struct sockaddr_storage peer;	/* client: the server */
	socklen_t peerlen;
	int gro;		/* UDP_GRO asked for (first recv_batch) */
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
	if (transport_resolve(host, ep->port, role == TRANSPORT_SERVER, &addr, &addrlen, err, errlen))
		goto no_address;
	fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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

			if (transport_resolve(src, 0, 1, &sa, &salen, err, errlen))
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
	}
	u->t.fd = fd;
	return &u->t;

no_bind:
no_option:
	close(fd);
no_socket:
no_address:
	free(u);
	return NULL;
}

static int udp_send(struct transport *t, void *buf, size_t len,
		    const struct transport_addr *to, struct clock *clk, int flags,
		    int64_t *stamp)
{
	ssize_t n;

	*stamp = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		transport_stamp_xmt(buf, *stamp);
	if (to)
		n = sendto(t->fd, buf, len, 0, (const struct sockaddr *)to->data, to->len);
	else
		n = send(t->fd, buf, len, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EMSGSIZE;
}

static ssize_t udp_recv(struct transport *t, void *buf, size_t cap,
			struct transport_addr *from, struct clock *clk, int64_t *stamp)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	ssize_t n;

	/* MSG_TRUNC: the datagram's real length, so truncation is seen. */
	n = recvfrom(t->fd, buf, cap, MSG_TRUNC, (struct sockaddr *)&ss, &sslen);
	if (n < 0)
		return -errno;
	*stamp = clock_now(clk);
	if (from) {
		from->len = sslen <= sizeof(from->data) ? sslen : 0;
		memcpy(from->data, &ss, from->len);
	}
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
	r = sendmmsg(t->fd, hdr, n, 0);
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
	r = recvmmsg(t->fd, hdr, n, MSG_TRUNC, NULL);
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

static void udp_close(struct transport *t)
{
	close(t->fd);
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
	.send_batch = udp_send_batch,
	.recv_batch = udp_recv_batch,
	.close = udp_close,
	.addr_str = udp_addr_str,
	.rcvbuf_set = udp_rcvbuf_set,
	.payload_max = udp_payload_max,
};
