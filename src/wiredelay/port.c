/* SPDX-License-Identifier: ISC */
/*
 * port.c - one interface's packet socket: every frame that arrives on it,
 * with the kernel's software receive stamp, and frames sent out of it
 * with their software transmit stamps.
 *
 * The socket takes every protocol (ETH_P_ALL) on one interface, in
 * promiscuous mode, and ignores what the host itself sends there
 * (PACKET_IGNORE_OUTGOING, Linux 4.20): wiredelay's own sends out of a
 * port do not come back in on it.  Frames travel with the virtio-net
 * header (PACKET_VNET_HDR) in front, so that a veth's frames whose
 * checksum is still to be filled in (CHECKSUM_PARTIAL) or that are one
 * GSO frame of many segments leave as they arrived: without it the
 * checksum would be sent unfinished and the receiver would drop the
 * datagram.
 *
 * Each port has two sockets: one that takes the frames arriving (bound
 * to ETH_P_ALL) and one that sends (bound to protocol 0, so that nothing
 * arrives on it).  Only one direction sends out of a port, so the
 * sending socket's error queue holds that direction's transmit stamps
 * and no one else's: each direction's thread (relay.c) reads its own.
 *
 * Stamps: SO_TIMESTAMPING's software receive stamp is taken when the
 * frame enters the stack (for a veth, as its peer's transmit hands it
 * over), the transmit stamp when the driver takes the frame
 * (skb_tx_timestamp in veth_xmit).  OPT_ID numbers the sends 0, 1, ...
 * per socket, OPT_TSONLY keeps the frame out of the error queue.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "opt_units.h"
#include "wiredelay.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING	23
#endif

static int setint(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v));
}

/*
 * Both of a port's sockets: a packet socket on protocol 0 (nothing
 * arrives until a bind names the interface and protocol), frames with the
 * virtio-net header in front, stamped as tsflags (SOF_TIMESTAMPING_*)
 * asks.  0, or -1 with *what naming the step that failed and errno its
 * cause; *fd is the socket (-1 when socket() itself failed), for the
 * caller's wd_port_close().
 */
static int port_socket(int *fd, int tsflags, const char **what)
{
	*what = "socket";
	*fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return -1;
	*what = "PACKET_VNET_HDR";
	if (setint(*fd, SOL_PACKET, PACKET_VNET_HDR, 1))
		return -1;
	*what = "SO_TIMESTAMPING";
	if (setint(*fd, SOL_SOCKET, SO_TIMESTAMPING, tsflags))
		return -1;
	return 0;
}

int wd_port_open(struct wd_port *p, const char *ifname, size_t rcvbuf,
		 char *err, size_t errlen)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };
	int rxts = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	int txts = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
		   SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	const char *what;

	p->ifname = ifname;
	p->fd = -1;
	p->txfd = -1;
	p->ifindex = (int)if_nametoindex(ifname);
	if (!p->ifindex) {
		snprintf(err, errlen, "%s: no such interface here", ifname);
		return -1;
	}
	if (port_socket(&p->fd, rxts, &what)) {
		if (p->fd < 0)
			goto no_socket;
		goto no_option;
	}
	what = "PACKET_IGNORE_OUTGOING";
	if (setint(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1))
		goto no_option;
	/* Room for a burst while the relay sends; the forced size needs
	   CAP_NET_ADMIN, which the socket needed anyway. */
	if (rcvbuf && setint(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, (int)rcvbuf))
		(void)setint(p->fd, SOL_SOCKET, SO_RCVBUF, (int)rcvbuf);
	what = "bind";
	sll.sll_ifindex = p->ifindex;
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)))
		goto no_option;
	what = "promiscuous mode";
	mr.mr_ifindex = p->ifindex;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		goto no_option;
	(void)wd_port_drops(p);		/* counts from here */

	if (port_socket(&p->txfd, txts, &what))
		goto no_option;
	/* Protocol 0 again, but bound: frames sent leave by this interface
	   (the kernel reads each one's protocol from its Ethernet header). */
	what = "bind";
	sll.sll_protocol = 0;
	if (bind(p->txfd, (struct sockaddr *)&sll, sizeof(sll)))
		goto no_option;
	return 0;

no_option:
	snprintf(err, errlen, "%s: %s: %s", ifname, what, strerror(errno));
	wd_port_close(p);
	return -1;
no_socket:
	snprintf(err, errlen, "%s: packet socket: %s%s", ifname, strerror(errno),
		 errno == EPERM ? " (needs CAP_NET_RAW)" : "");
	return -1;
}

void wd_port_close(struct wd_port *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->txfd >= 0)
		close(p->txfd);
	p->fd = p->txfd = -1;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NTPX_NS_PER_SEC + t->tv_nsec;
}

ssize_t wd_port_recv(struct wd_port *p, unsigned char *buf, size_t cap,
		     int64_t *rx, int *trunc)
{
	union {
		char b[CMSG_SPACE(sizeof(struct scm_timestamping)) + 64];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	ssize_t n;

	*rx = 0;
	*trunc = 0;
	n = recvmsg(p->fd, &m, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
	if ((size_t)n > cap || (m.msg_flags & MSG_TRUNC))
		*trunc = 1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
			struct scm_timestamping st;

			memcpy(&st, CMSG_DATA(c), sizeof(st));
			*rx = ts_ns(&st.ts[0]);
		}
	}
	/* A zero-length read is not a frame: there is none shorter than
	   the header in front. */
	return n ? n : 0;
}

int wd_port_send(struct wd_port *p, const unsigned char *buf, size_t len)
{
	ssize_t n = send(p->txfd, buf, len, MSG_DONTWAIT);

	if (n < 0)
		return -1;
	return 0;
}

int wd_port_txstamp(struct wd_port *p, uint32_t *id, int64_t *ts)
{
	union {
		char b[CMSG_SPACE(sizeof(struct scm_timestamping)) +
		       CMSG_SPACE(sizeof(struct sock_extended_err) + 64) + 64];
		struct cmsghdr align;
	} ctl;
	char dummy[64];
	struct iovec iov = { .iov_base = dummy, .iov_len = sizeof(dummy) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	int have_ts = 0, have_id = 0;

	for (;;) {
		m.msg_controllen = sizeof(ctl.b);
		if (recvmsg(p->txfd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
		have_ts = have_id = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
				struct scm_timestamping st;

				memcpy(&st, CMSG_DATA(c), sizeof(st));
				*ts = ts_ns(&st.ts[0]);
				have_ts = 1;
			} else if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_TX_TIMESTAMP) {
				struct sock_extended_err ee;

				memcpy(&ee, CMSG_DATA(c), sizeof(ee));
				if (ee.ee_errno == ENOMSG && ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING) {
					*id = ee.ee_data;
					have_id = 1;
				}
			}
		}
		/* Anything else on the error queue is not a stamp: skip it. */
		if (have_ts && have_id && *ts)
			return 1;
	}
}

uint64_t wd_port_drops(struct wd_port *p)
{
	struct tpacket_stats st;
	socklen_t l = sizeof(st);

	/* Reading the counters resets them. */
	if (getsockopt(p->fd, SOL_PACKET, PACKET_STATISTICS, &st, &l))
		return 0;
	return st.tp_drops;
}
