/* SPDX-License-Identifier: ISC */
/*
 * udp_stamp.c - the kernel UDP transport's stamps (udp.c): Linux's
 * SO_TIMESTAMPING on the socket, the stamps in a received datagram's
 * control messages, send stamps asked per datagram or once on a
 * connected socket and read back from the error queue into the
 * transport's ring, and a NIC's hardware stamping with its PTP clock, as
 * chrony keeps its Linux timestamping in ntp_io_linux.c.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "hwts.h"
#include "log.h"
#include "ntp.h"
#include "opt_units.h"
#include "phc.h"
#include "transport_private.h"
#include "udp_stamp.h"

#ifndef SCM_TS_OPT_ID
#define SCM_TS_OPT_ID	81	/* asm-generic/socket.h, Linux 6.13 */
#endif

/*
 * sendmsg() asking for this datagram's send stamps at @layers (an
 * SO_TIMESTAMPING message: per datagram, so that a server pays for them
 * only where they are wanted, and for each layer only where it is: every
 * one is a message on the error queue), with its id in an SCM_TS_OPT_ID
 * message when @with_id.
 */
/* The SO_TIMESTAMPING send flags for @layers (bits 1 << TRANSPORT_LAYER_*). */
static uint32_t tx_sof(unsigned layers)
{
	return (layers & 1u << TRANSPORT_LAYER_Q ? SOF_TIMESTAMPING_TX_SCHED : 0) |
	       (layers & 1u << TRANSPORT_LAYER_K ? SOF_TIMESTAMPING_TX_SOFTWARE : 0) |
	       (layers & 1u << TRANSPORT_LAYER_H ? SOF_TIMESTAMPING_TX_HARDWARE : 0);
}

/* The control messages of such a send into @h's msg_control (room for
   UDP_STAMP_CTL bytes), msg_controllen set. */
static void stamp_ctl(struct msghdr *h, unsigned layers, uint32_t id, int with_id)
{
	struct cmsghdr *c;
	uint32_t tx = tx_sof(layers);

	h->msg_controllen = CMSG_SPACE(sizeof(uint32_t)) * (with_id ? 2 : 1);
	memset(h->msg_control, 0, h->msg_controllen);
	c = CMSG_FIRSTHDR(h);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SO_TIMESTAMPING;
	c->cmsg_len = CMSG_LEN(sizeof(tx));
	memcpy(CMSG_DATA(c), &tx, sizeof(tx));
	if (with_id) {
		c = CMSG_NXTHDR(h, c);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_TS_OPT_ID;
		c->cmsg_len = CMSG_LEN(sizeof(id));
		memcpy(CMSG_DATA(c), &id, sizeof(id));
	}
}

static ssize_t send_stamped(int fd, const void *buf, size_t len,
				const struct transport_addr *to, unsigned layers, uint32_t id,
				int with_id)
{
	union {
		char buf[UDP_STAMP_CTL];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr h = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf,
	};

	if (to) {
		h.msg_name = (void *)to->data;
		h.msg_namelen = to->len;
	}
	stamp_ctl(&h, layers, id, with_id);
	return sendmsg(fd, &h, MSG_DONTWAIT);
}

int udp_stamp_prepare(struct udp_stamping *s, struct transport *t, struct transport_dgram *d,
		      int flags, struct msghdr *h)
{
	unsigned layers = d->tx_layers;

	h->msg_controllen = 0;
	if (!s->on || !layers) {
		d->tx_layers = 0;
		return 0;
	}
	/* A count the kernel keeps (a connected socket's, or an older
	   kernel's) is not known to match until each send is seen to have
	   gone; an id of our own in each message is. */
	if (s->tx_flags || s->set_id != 1)
		return -1;
	d->tx_id = s->next_id;
	stamp_ctl(h, layers, s->next_id, 1);
	s->next_id++;
	s->tx_unread = 1;
	return 0;
}

/* The socket's send-stamp counter back to 0, the stamps it has counted read. */
static void tx_count_reset(struct udp_stamping *s, struct transport *t)
{
	int flags = s->tx_flags & ~SOF_TIMESTAMPING_OPT_ID;

	udp_stamp_drain(s, t);
	if (setsockopt(t->fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) == 0 &&
	    setsockopt(t->fd, SOL_SOCKET, SO_TIMESTAMPING, &s->tx_flags,
		       sizeof(s->tx_flags)) == 0)
		s->next_id = 0;
}

/*
 * A connected socket asks for its send stamps once, on the socket: a
 * control message would make the kernel look its route up again on every
 * send.  Every send is then stamped, and its id is the socket's count of
 * them; a send that fails may or may not have counted, so the count
 * starts again.  The kernel stamps every layer then: TRANSPORT_STAMP_ONLY
 * only chooses what is kept.
 */
static int send_counted(struct udp_stamping *s, struct transport *t, struct transport_dgram *d,
			const struct transport_addr *to, struct clock *clk, int flags)
{
	ssize_t n;

	d->tx_id = s->next_id;
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		ntp_put_xmt(d->buf, d->tx_at);
	n = sendto(t->fd, d->buf, d->len, MSG_DONTWAIT, to ? (const struct sockaddr *)to->data : NULL,
		   to ? to->len : 0);
	if (n < 0) {
		int e = errno;

		tx_count_reset(s, t);
		return -e;
	}
	s->next_id++;
	s->tx_unread = 1;
	return (size_t)n == d->len ? 0 : -EMSGSIZE;
}


/*
 * A datagram asking for its send stamps per datagram (a server's socket,
 * or an unconnected one): its id in an SCM_TS_OPT_ID message where the
 * kernel takes one, else the socket's count of stamped sends.
 */
int udp_stamp_send(struct udp_stamping *s, struct transport *t, struct transport_dgram *d,
		   const struct transport_addr *to, struct clock *clk, int flags)
{
	unsigned layers = d->tx_layers;
	uint32_t id;
	ssize_t n = -1;

	if (s->tx_flags)
		return send_counted(s, t, d, to, clk, flags);
	if (!s->on || !layers) {
		d->tx_layers = 0;
		return UDP_STAMP_UNSTAMPED;
	}
	id = s->next_id;
	d->tx_id = id;
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		ntp_put_xmt(d->buf, d->tx_at);
	if (s->set_id != 0) {
		n = send_stamped(t->fd, d->buf, d->len, to, layers, id, 1);
		if (s->set_id < 0 && n < 0 && errno == EINVAL) {
			/* An older kernel: the socket's counter then,
			   which counts the datagrams that ask for stamps. */
			s->set_id = 0;
		} else if (s->set_id < 0 && n >= 0) {
			s->set_id = 1;
		}
	}
	if (s->set_id == 0)
		n = send_stamped(t->fd, d->buf, d->len, to, layers, id, 0);
	if (n < 0)
		return -errno;
	s->next_id++;
	/* The stamps are read later, off the path being measured:
	   after the answer (transport_tx_stamps), or before a poll
	   that they would wake (udp_recv_block). */
	s->tx_unread = 1;
	return (size_t)n == d->len ? 0 : -EMSGSIZE;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NTPX_NS_PER_SEC + ts->tv_nsec;
}

/* A raw hardware stamp on CLOCK_REALTIME, or TRANSPORT_NO_STAMP. */
static int64_t hw_realtime(const struct udp_stamping *s, const struct timespec *ts)
{
	int64_t rt;

	if (!s->phc || phc_to_realtime(s->phc, ts_ns(ts), &rt))
		return TRANSPORT_NO_STAMP;
	return rt;
}

/* The receive stamps in a received message's control data, into @rx. */
void udp_stamp_rx(const struct udp_stamping *s, struct msghdr *h, int64_t *rx)
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
			rx[TRANSPORT_LAYER_H] = hw_realtime(s, &tss.ts[2]);
	}
}

/* recvmsg() with the SCM_TIMESTAMPING message's stamps into @d. */
ssize_t udp_stamp_recv(const struct udp_stamping *s, struct transport *t,
		       struct transport_dgram *d, struct sockaddr_storage *ss, socklen_t *sslen,
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
	udp_stamp_rx(s, &h, d->rx.at);
	return n;
}


/*
 * One message of the error queue: its send stamps (two at most) into
 * @out; how many.
 */
static unsigned tx_one(const struct udp_stamping *s, struct msghdr *h,
		       struct transport_tx_stamp *out)
{
	unsigned n = 0;
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
		return 0;
	if (kind == SCM_TSTAMP_SND && (tss.ts[2].tv_sec || tss.ts[2].tv_nsec)) {
		int64_t rt = hw_realtime(s, &tss.ts[2]);

		if (rt != TRANSPORT_NO_STAMP)
			out[n++] = (struct transport_tx_stamp){ id, TRANSPORT_LAYER_H, rt };
	}
	if (!(tss.ts[0].tv_sec || tss.ts[0].tv_nsec))
		return n;
	if (kind == SCM_TSTAMP_SCHED)
		out[n++] = (struct transport_tx_stamp){ id, TRANSPORT_LAYER_Q, ts_ns(&tss.ts[0]) };
	else if (kind == SCM_TSTAMP_SND)
		out[n++] = (struct transport_tx_stamp){ id, TRANSPORT_LAYER_K, ts_ns(&tss.ts[0]) };
	return n;
}

/*
 * Every send stamp waiting in the error queue, into the ring.  A send
 * queues one message per stamp (TX_SCHED and TX_SOFTWARE: two), so one
 * recvmmsg() takes them together, and they go into the ring together
 * (transport_tx_notes()); a batch that comes back short means the queue
 * is empty, without another call to learn it.
 */
#define TX_BATCH	32
void udp_stamp_drain(struct udp_stamping *s, struct transport *t)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping)) +
			 CMSG_SPACE(sizeof(struct sock_extended_err) +
				    sizeof(struct sockaddr_in6)) + 64];
		struct cmsghdr align;
	} ctl[TX_BATCH];
	struct mmsghdr m[TX_BATCH];
	struct transport_tx_stamp st[TX_BATCH * 2];
	unsigned got;
	int n, i;

	s->tx_unread = 0;
	do {
		memset(m, 0, sizeof(m));
		for (i = 0; i < TX_BATCH; i++) {
			m[i].msg_hdr.msg_control = ctl[i].buf;
			m[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
		}
		n = recvmmsg(t->fd, m, TX_BATCH, MSG_ERRQUEUE | MSG_DONTWAIT, NULL);
		for (i = 0, got = 0; i < n; i++)
			got += tx_one(s, &m[i].msg_hdr, st + got);
		if (got)
			transport_tx_notes(t, st, got);
	} while (n == TX_BATCH);
}

/* Puts the NIC's stamping setting back, saying what went wrong. */
static void hw_put_back(struct udp_stamping *s, struct transport *t)
{
	if (hwts_release(&s->hwts))
		ntpx_lines_add(t->warn, sizeof(t->warn), "%s", s->hwts.note);
}

/*
 * Hardware stamping on dev=, where the NIC has it: returns HWTS_TX and
 * HWTS_RX for what it stamps (sends; every received packet) with s->phc
 * open, 0 when it has none, s->hw_why saying why for what is missing.
 * A NIC that stamps sends but not every receive (i40e refuses
 * HWTSTAMP_FILTER_ALL; others give only PTP) keeps its send stamps.  The
 * setting is read first and only what is missing is switched on, never
 * weakening another program's (ptp4l's) setting, the driver's answer
 * checked, the change said, and put back at close (lib/hwts.h, after
 * linuxptp's hwts_init).
 */
static int hw_enable(struct udp_stamping *s, struct transport *t, const char *dev)
{
	const unsigned need = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
			      SOF_TIMESTAMPING_RAW_HARDWARE;
	struct ethtool_ts_info info = { .cmd = ETHTOOL_GET_TS_INFO };
	struct ifreq ifr;
	char err[128];
	int got;

	if (!dev[0])
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&info;
	if (ioctl(t->fd, SIOCETHTOOL, &ifr) || (info.so_timestamping & need) != need ||
	    info.phc_index < 0) {
		s->hw_why = "-:nic_has_no_hw_stamps";
		return 0;
	}
	got = hwts_acquire(&s->hwts, t->fd, dev, HWTS_TX | HWTS_RX);
	if (s->hwts.note[0])
		ntpx_lines_add(t->warn, sizeof(t->warn), "%s", s->hwts.note);
	if (got <= 0 || !(got & HWTS_TX)) {
		hw_put_back(s, t);
		s->hw_why = got < 0 ? "-:driver_refused_hw_stamping" :
				      "-:driver_cannot_stamp_sends";
		return 0;
	}
	if (!(got & HWTS_RX))
		s->hw_why = "-:driver_cannot_stamp_all_rx";
	s->phc = phc_open(info.phc_index, err, sizeof(err));
	if (!s->phc) {
		hw_put_back(s, t);
		s->hw_why = "-:no_phc";
		return 0;
	}
	return got;
}

int udp_stamp_enable(struct udp_stamping *s, struct transport *t, const char *dev, int connected,
		     char *err, size_t errlen)
{
	/* Receive stamps for every datagram; send stamps per datagram, where
	   asked (udp_send_stamped()), but a client's on the socket, every
	   send's (udp_send_counted()). */
	int flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		    SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	int hw = hw_enable(s, t, dev);
	unsigned tx = 1u << TRANSPORT_LAYER_Q | 1u << TRANSPORT_LAYER_K |
		      (hw & HWTS_TX ? 1u << TRANSPORT_LAYER_H : 0);

	if (hw)
		flags |= SOF_TIMESTAMPING_RAW_HARDWARE;
	if (hw & HWTS_RX)
		flags |= SOF_TIMESTAMPING_RX_HARDWARE;
	if (connected)
		flags |= (int)tx_sof(tx);
	if (setsockopt(t->fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags))) {
		snprintf(err, errlen, "SO_TIMESTAMPING: %s", strerror(errno));
		return -errno;
	}
	s->tx_flags = connected ? flags : 0;
	s->on = 1;
	s->set_id = -1;
	s->next_id = 0;
	t->st.tx_layers = tx;
	t->st.rx_layers = 1u << TRANSPORT_LAYER_K;
	t->st.tx_src[TRANSPORT_LAYER_Q] = "so_timestamping:tx_sched";
	t->st.tx_src[TRANSPORT_LAYER_K] = "so_timestamping:tx_software";
	t->st.rx_src[TRANSPORT_LAYER_K] = "so_timestamping:rx_software";
	if (hw & HWTS_TX)
		t->st.tx_src[TRANSPORT_LAYER_H] = "so_timestamping:tx_hardware+phc";
	else
		t->st.tx_why[TRANSPORT_LAYER_H] = s->hw_why;
	if (hw & HWTS_RX) {
		t->st.rx_layers |= 1u << TRANSPORT_LAYER_H;
		t->st.rx_src[TRANSPORT_LAYER_H] = "so_timestamping:rx_hardware+phc";
	} else {
		t->st.rx_why[TRANSPORT_LAYER_H] = s->hw_why;
	}
	return 0;
}

void udp_stamp_release(struct udp_stamping *s, struct transport *t)
{
	hw_put_back(s, t);
}

void udp_stamp_close(struct udp_stamping *s)
{
	phc_close(s->phc);
	hwts_release(&s->hwts);
}

