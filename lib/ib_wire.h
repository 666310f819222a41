/* SPDX-License-Identifier: ISC */
/*
 * ib_wire.h - the parts of the InfiniBand UD transport (lib/ib.c) that
 * hold without a device (lib/ib_wire.c): the rules a received datagram
 * must pass, and the constants both ends agree on.  The transport itself is reached through
 * transport.h as scheme "ib"; nothing else here opens a device.
 *
 * On the wire an ib exchange is an ordinary NTP packet as the payload of a
 * UD SEND; the server's reply is a SEND with immediate data, and the
 * immediate data is the server's epoch (random per server start, never
 * 0), so that the NTP packet stays standard.  rdma_cm (RDMA_PS_UDP, SIDR)
 * tells the client the server's QPN and QKey; the SIDR reply's private
 * data carries IB_SIDR_MAGIC and the epoch, both big-endian.
 */
#ifndef NTPX_IB_WIRE_H
#define NTPX_IB_WIRE_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "transport.h"

#define IB_GRH_LEN	40		/* in front of every UD receive buffer */
#define IB_SIDR_MAGIC	0x4e545058u	/* "NTPX" */

/* What ib_check_recv() thinks of a receive completion. */
enum ib_verdict {
	IB_RECV_OK,
	IB_RECV_WC_ERROR,	/* completed with an error status */
	IB_RECV_OPCODE,		/* not a RECV (unexpected opcode) */
	IB_RECV_SHORT,		/* shorter than the GRH and an NTP header */
	IB_RECV_NO_IMM,		/* client: a reply without the server's epoch */
	IB_RECV_IMM,		/* server: a request carrying immediate data */
	IB_RECV_STRAY,		/* client: not from the server's QP */
	IB_RECV_NVERDICTS
};

/* Short names for the counters ("short", "opcode", ...). */
extern const char *const ib_verdict_names[IB_RECV_NVERDICTS];

/*
 * Judges @wc, a completion from the receive queue of a @role QP.  A
 * client's datagrams must come from @server_qpn (its resolved server) and
 * carry immediate data; a server's must not.  The epoch itself is judged
 * by lib/peer.c.  Pure: reads @wc only.
 */
enum ib_verdict ib_check_recv(const struct ibv_wc *wc, enum transport_role role,
			      uint32_t server_qpn);

/* The epoch a reply carries (wc->imm_data is big-endian on the wire). */
uint32_t ib_wc_epoch(const struct ibv_wc *wc);

/*
 * What the IB_GRH_LEN bytes at @grh in front of a received datagram hold,
 * decided as rdma-core does: 6 for an IB/RoCE v1 GRH or a RoCE v2 IPv6
 * header, 4 for RoCE v2 over IPv4 (the first 20 bytes are not written by
 * the HCA and may hold anything, a stale 6 included: an IPv4 header at
 * byte 20 is believed then only with IHL 5 and a good header checksum),
 * -1 for neither.  Pure: reads the 40 bytes only.
 */
int ib_grh_version(const void *grh);

#endif
