/* SPDX-License-Identifier: ISC */
/*
 * ib_private.h - lib/ib.c's state, which no other file sees (the
 * transport is reached through transport.h as scheme "ib"; the wire rules
 * a test can hold without a device are in ib_wire.h).  lib/ib.c says what the
 * transport does; it is made of files of one idea each, from the bottom
 * up, each with its own header that gives the file only what it needs:
 *
 *   ib_wire.c   pure: a received datagram's header read as a cache key
 *               (ib_wire_private.h)
 *   ib_ah.c     address handles: the server's cache, and handles given
 *               up only once no send in flight uses them (ib_ah_private.h)
 *   ib_qp.c     UD queue pairs: made, brought to RTS, rebuilt after the
 *               error state; receives posted; a wildcard server's QP per
 *               port and partition (ib_qp_private.h)
 *   ib_event.c  the async events of a device, handed to the transports
 *               they concern (the one piece of global state)
 *               (ib_event_private.h)
 *   ib_cm.c     rdma_cm: a server's SIDR answers, a client's address,
 *               route and SIDR, and its resolver thread (ib_cm_private.h)
 *   ib.c        the open, the close and the data path, and what the
 *               files below decide, applied (this header)
 *
 * Each file uses only those above it in this list, never one below, and
 * none of them knows struct ib_transport.
 */
#ifndef NTPX_IB_PRIVATE_H
#define NTPX_IB_PRIVATE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ib_wire.h"
#include "ib_ah_private.h"
#include "ib_cm_private.h"
#include "ib_event_private.h"
#include "ib_qp_private.h"
#include "ib_wire_private.h"
#include "peer.h"
#include "transport_private.h"
#include "verbs_stamp.h"

#define IB_DEVS		8		/* wildcard server: devices served */

#define IB_FAIL(...) snprintf(err, errlen, __VA_ARGS__)

struct ib_count {
	uint64_t bad[IB_RECV_NVERDICTS];	/* [IB_RECV_OK] unused */
	uint64_t epoch;		/* replies of another server instance */
	uint64_t send_err;	/* send completions with an error */
	uint64_t post_err;	/* ibv_post_send refused */
	uint64_t sidr_accept, sidr_reject, sidr_retries;
	uint64_t async;		/* async events of ours seen */
	uint64_t qp_rebuilds;	/* QPs brought back from the error state */
};

struct ib_transport {
	struct transport t;
	char url[512];
	int server;
	struct transport *top;		/* what the caller holds, whose stamps these
					   are: &t, or a several-device server's */

	struct rdma_event_channel *cm;
	struct rdma_cm_id *id;		/* server: listening; client: last resolution */
	struct ibv_context *ctx;	/* rdma_cm's context of the device */
	uint8_t port;
	uint32_t mtu;			/* bytes, active path MTU of the port */
	struct ibv_comp_channel *chan;
	struct ibv_pd *pd;
	struct verbs_cq rcq, scq;
	struct verbs_clock vclk;	/* completion stamps of u->ctx */
	int stamping;			/* transport_stamps_enable() was called */
	uint32_t tx_seq;		/* ids of sends whose stamps were asked for... */
	uint32_t tx_step;		/* ...each tx_step on (a several-device server's
					   devices share its ids) */
	uint32_t send_tag[IB_SEND_DEPTH];	/* by wr_id: that id, or 0 */
	struct ibv_qp *qp;		/* == q.part[0].qp */
	struct ibv_mr *mr;
	unsigned char *mem;
	struct ib_qps q;		/* the QPs, their buffers (ib_qp.c) */
	struct ib_ahs ahs;		/* the address handles (ib_ah.c) */
	struct ib_evsink ev;		/* where the async events come (ib_event.c) */
	unsigned send_free[IB_SEND_DEPTH];	/* send slots (wr_ids) not in flight: a
						   wildcard server's QPs complete in any
						   order, so a slot is free once its own
						   completion is reaped, not in turn */
	unsigned nsend_free;
	int armed;			/* rcq notification requested, not yet consumed */
	int64_t ctl_ns;			/* CLOCK_MONOTONIC of the last event check */
	int dead;			/* -errno once the device or QP is gone */
	int rebuild;			/* a QP went to the error state: rebuild it */
	int restarted;			/* client: a rebuild not yet told (peer_reset) */
	int wake;			/* eventfd: an outcome or a handed-over event */

	/* server */
	uint32_t epoch;
	int wildcard;			/* bound to no address: partitions by request */
	int any_port;			/* ...and no port=: every active port */
	/*
	 * A wildcard server on several devices (each port of a ConnectX-4
	 * or later is a device of its own): a server of this kind on each,
	 * none of them listening; this one listens and hands each SIDR
	 * request to the device it came in on (ib.c: ib_devs_*).
	 */
	struct ib_transport *dev[IB_DEVS];
	unsigned ndev, next_dev;

	/* client */
	struct ib_cm_client c;		/* its resolution (ib_cm.c) */
	struct ibv_ah *ah;		/* NULL while the server is lost */
	struct ibv_ah_attr ah_attr;	/* what it was made with */
	struct ibv_gid_entry sgid;	/* the GID it sends from, when known */
	int sgid_known;
	uint32_t rqpn, rqkey;
	struct peer peer;
	int outstanding;		/* a request awaits its reply */
	int64_t req_ns;			/* CLOCK_MONOTONIC when it was sent */
	int last_err;			/* -errno of the last failed resolution */

	struct ib_count n;
};

#endif
