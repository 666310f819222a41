/* SPDX-License-Identifier: ISC */
/*
 * udp_stamp.h - the kernel UDP transport's stamps (udp_stamp.c): what
 * lib/udp.c calls to stamp its socket's datagrams.  The state is the
 * stamping's own; the socket and the send ring are the transport's
 * (transport_private.h).
 */
#ifndef NTPX_UDP_STAMP_H
#define NTPX_UDP_STAMP_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "hwts.h"
#include "transport.h"

struct phc;

struct udp_stamping {
	int on;			/* SO_TIMESTAMPING on */
	int set_id;		/* SCM_TS_OPT_ID works: -1 unknown, 0, 1 */
	int tx_flags;		/* send stamps asked on the socket, or 0 */
	uint32_t next_id;	/* the id of the next send */
	int tx_unread;		/* send stamps asked for since the last drain */
	struct phc *phc;	/* hardware stamping: the NIC's clock */
	struct hwts hwts;	/* ...as found on dev=, put back at close */
	const char *hw_why;	/* dev= without hardware stamps: why, for #stamps */
};

/*
 * transport_stamps_enable() for the socket of @t: receive stamps for
 * every datagram, send stamps per datagram where asked, or once on the
 * socket when it is @connected (a client's: every send stamped); a NIC's
 * hardware stamps on @dev ("" for none) where it has them.  0, or -errno
 * with one line in @err.
 */
int udp_stamp_enable(struct udp_stamping *s, struct transport *t, const char *dev, int connected,
		     char *err, size_t errlen);
/* Puts the NIC's setting back (transport_stamps_release()), saying what
   went wrong in t->warn. */
void udp_stamp_release(struct udp_stamping *s, struct transport *t);
/* At close: the NIC's clock closed, its setting put back. */
void udp_stamp_close(struct udp_stamping *s);

/* udp_stamp_send() when the datagram asks for no stamp: the caller sends it. */
#define UDP_STAMP_UNSTAMPED	1
/* A send with its send stamps (transport_send() flags @flags): 0 or
   -errno as the backend's send, or UDP_STAMP_UNSTAMPED. */
int udp_stamp_send(struct udp_stamping *s, struct transport *t, struct transport_dgram *d,
		   const struct transport_addr *to, struct clock *clk, int flags);

/*
 * A send that waits for a batch (TRANSPORT_SEND_MORE): its send stamps'
 * control message into @h (msg_control with room for UDP_STAMP_CTL
 * bytes; msg_controllen 0 when it asks for none; the layers in
 * @d->tx_layers, as transport_send() set them) and its id, @d->tx_id
 * (transport_send() begins its slot).  0, or -1 when this socket cannot stamp a send
 * in a batch (the kernel counts its ids): then it is sent alone.
 */
#define UDP_STAMP_CTL	(CMSG_SPACE(sizeof(uint32_t)) * 2)
int udp_stamp_prepare(struct udp_stamping *s, struct transport *t, struct transport_dgram *d,
		      int flags, struct msghdr *h);

/* recvmsg() (@flags: MSG_DONTWAIT or 0) into @d with its receive stamps,
   as CLOCK_REALTIME ns, and the sender in @ss. */
ssize_t udp_stamp_recv(const struct udp_stamping *s, struct transport *t,
		       struct transport_dgram *d, struct sockaddr_storage *ss, socklen_t *sslen,
		       struct clock *clk, int flags);
/* The receive stamps in a received message's control data, into @rx. */
void udp_stamp_rx(const struct udp_stamping *s, struct msghdr *h, int64_t *rx);

/* Every send stamp waiting in the error queue, into the ring. */
void udp_stamp_drain(struct udp_stamping *s, struct transport *t);

#endif
