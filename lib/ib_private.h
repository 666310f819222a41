/* SPDX-License-Identifier: ISC */
/*
 * ib_private.h - what the files of the ib transport share, and nothing
 * outside them sees (the transport is reached through transport.h as
 * scheme "ib"; the wire rules a test can hold without a device are in
 * ib.h).  lib/ib.c says what the transport does; here are its state and
 * the steps each file offers the others:
 *
 *   ib_wire.c   pure: a received datagram's header read as a cache key
 *   ib_ah.c     address handles: the server's cache, the client's one,
 *               given up only once no send in flight uses them (the send
 *               completions, reaped there, tell when)
 *   ib_qp.c     UD queue pairs: made, brought to RTS, rebuilt after the
 *               error state; receives posted; a wildcard server's QP per
 *               port and partition
 *   ib_event.c  the async events of a device, handed to the transports
 *               they concern (the one piece of global state)
 *   ib_cm.c     rdma_cm: a server's SIDR answers, a client's address,
 *               route and SIDR, and its resolver thread
 *   ib.c        the open, the close and the data path
 *
 * Each file uses only those above it in this list, never one below.
 */
#ifndef NTPX_IB_PRIVATE_H
#define NTPX_IB_PRIVATE_H

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ib.h"
#include "peer.h"
#include "transport_private.h"
#include "verbs_stamp.h"

#define IB_SEND_DEPTH	64		/* send slots */
#define IB_AH_CACHE	64		/* server: address handles kept */
#define IB_PARTS	8		/* wildcard server: ports and partitions answered */
#define IB_DEVS		8		/* wildcard server: devices served */
#define IB_AEV_QUEUE	16		/* async events handed over, not yet seen */
#define IB_RESOLVE_NS	(1000 * 1000000LL)	/* bound on address and route */

#define IB_FAIL(...) snprintf(err, errlen, __VA_ARGS__)

/*
 * Where a datagram came from and went to, as far as an address handle
 * made from it cares: what ibv_init_ah_from_wc() derives the handle's
 * attributes from.
 */
struct ib_key {
	uint16_t slid;
	uint8_t sl;
	uint8_t path_bits;
	uint8_t global;		/* a GRH: the fields below are valid */
	uint8_t gid_type;	/* IBV_GID_TYPE_*: IB or RoCE v1 share a header */
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;	/* IPv6/GRH only */
	uint8_t sgid[16];	/* the sender's: the handle's destination */
	uint8_t dgid[16];	/* ours it was sent to: the handle's source GID */
	uint8_t port;		/* the HCA port it came in on */
};

struct ib_ah_slot {
	struct ib_key key;
	struct ibv_ah *ah;	/* NULL: free */
	uint64_t used;		/* LRU clock */
};

/* A wildcard server's QP on one port in one IPoIB partition, with its receive pool. */
struct ib_part {
	uint8_t port;
	uint16_t pkey_index;
	uint32_t mtu;		/* bytes, the port's active MTU: a reply's bound */
	struct ibv_qp *qp;	/* NULL: unused */
	struct ibv_mr *mr;
	unsigned char *mem;	/* part 0: the transport's own region */
};

/* An async event as handed to its owner. */
struct ib_aev {
	enum ibv_event_type type;
	uint8_t port;
};

/* A resolution's outcome, from the resolver thread. */
struct ib_res {
	int rc;			/* 0 or -errno */
	struct rdma_cm_id *id;	/* routed, on the resolver's channel */
	struct ibv_ah_attr attr;
	uint32_t qpn, qkey, epoch;
	unsigned retries;	/* SIDR requests sent again */
};

struct ib_count {
	uint64_t bad[IB_RECV_NVERDICTS];	/* [IB_RECV_OK] unused */
	uint64_t epoch;		/* replies of another server instance */
	uint64_t send_err;	/* send completions with an error */
	uint64_t post_err;	/* ibv_post_send refused */
	uint64_t ah_new, ah_evict, ah_fail, ah_deferred;
	uint64_t sidr_accept, sidr_reject, sidr_retries;
	uint64_t async;		/* async events of ours seen */
	uint64_t qp_rebuilds;	/* QPs brought back from the error state */
};

struct ib_transport {
	struct transport t;
	char url[512];
	int server;
	struct ib_transport *reg_next;	/* ib_reg: open transports */
	struct transport *top;		/* what the caller holds, whose stamps these
					   are: &t, or a several-device server's */

	struct rdma_event_channel *cm;
	struct rdma_cm_id *id;		/* server: listening; client: last resolution */
	struct ibv_context *ctx;	/* rdma_cm's context of the device */
	uint8_t port;
	uint32_t mtu;			/* bytes, active path MTU of the port */
	uint32_t buf_mtu;		/* bytes, the largest a receive buffer holds:
					   the largest MTU of the ports served */
	struct ibv_comp_channel *chan;
	struct ibv_pd *pd;
	struct verbs_cq rcq, scq;
	struct verbs_clock vclk;	/* completion stamps of u->ctx */
	int stamping;			/* transport_stamps_enable() was called */
	uint32_t tx_seq;		/* ids of sends whose stamps were asked for... */
	uint32_t tx_step;		/* ...each tx_step on (a several-device server's
					   devices share its ids) */
	uint32_t send_tag[IB_SEND_DEPTH];	/* by wr_id: that id, or 0 */
	struct ibv_qp *qp;		/* == part[0].qp */
	struct ibv_mr *mr;
	unsigned char *mem;
	size_t slot;			/* bytes per buffer: GRH + MTU */
	unsigned nrecv;
	unsigned send_free[IB_SEND_DEPTH];	/* send slots (wr_ids) not in flight: a
						   wildcard server's QPs complete in any
						   order, so a slot is free once its own
						   completion is reaped, not in turn */
	unsigned nsend_free;
	struct ibv_ah *send_ah[IB_SEND_DEPTH];	/* the handle each send in flight uses */
	struct ibv_ah *zombie[IB_SEND_DEPTH];	/* dropped, still used by a send */
	unsigned nzombie;
	uint32_t max_inline;
	uint32_t qkey;			/* of our QP */
	int armed;			/* rcq notification requested, not yet consumed */
	int64_t ctl_ns;			/* CLOCK_MONOTONIC of the last event check */
	int dead;			/* -errno once the device or QP is gone */
	int rebuild;			/* a QP went to the error state: rebuild it */
	int restarted;			/* client: a rebuild not yet told (peer_reset) */
	int wake;			/* eventfd: an outcome or a handed-over event */
	struct ib_aev aq[IB_AEV_QUEUE];	/* handed over by another transport (ib_reg_mu) */
	unsigned an;

	/* server */
	uint32_t epoch;
	int wildcard;			/* bound to no address: partitions by request */
	int any_port;			/* ...and no port=: every active port */
	struct ib_part part[IB_PARTS];
	struct ib_ah_slot ahc[IB_AH_CACHE];
	uint64_t ahc_clock;
	/*
	 * A wildcard server on several devices (each port of a ConnectX-4
	 * or later is a device of its own): a server of this kind on each,
	 * none of them listening; this one listens and hands each SIDR
	 * request to the device it came in on (ib.c: ib_devs_*).
	 */
	struct ib_transport *dev[IB_DEVS];
	unsigned ndev, next_dev;

	/* client */
	struct sockaddr_storage dst, src;
	int have_src;
	struct ibv_ah *ah;		/* NULL while the server is lost */
	struct ibv_ah_attr ah_attr;	/* what it was made with */
	struct ibv_gid_entry sgid;	/* the GID it sends from, when known */
	int sgid_known;
	uint32_t rqpn, rqkey;
	long qkey_forced;		/* -1: take the server's */
	int gid_index;			/* -1: rdma_cm's choice */
	struct peer peer;
	int outstanding;		/* a request awaits its reply */
	int64_t req_ns;			/* CLOCK_MONOTONIC when it was sent */
	int last_err;			/* -errno of the last failed resolution */

	/* client: the resolver thread (fields below th under rmu) */
	int have_thread;
	pthread_t th;
	struct rdma_event_channel *rcm;	/* its own rdma_cm channel */
	int stopfd;			/* eventfd: close asks it to stop */
	pthread_mutex_t rmu;
	pthread_cond_t rcv;
	int want, busy, done, stop;
	struct ib_res res;

	struct ib_count n;
};

/* eventfds: sets and clears the wakeup of a transport or its resolver */
static inline void ib_wake(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* the counter is already set: whoever reads it wakes */
	}
}

static inline void ib_unwake(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was set */
	}
}

static inline int ib_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

/* ib_wire.c */

/*
 * The sender of @wc as a cache key, read from the IB_GRH_LEN bytes at
 * @grh without a system call.  0, or -1: a header no handle can be made
 * from.  Pure: reads @wc and the 40 bytes only.
 */
int ib_key_from_wc(const struct ibv_wc *wc, const unsigned char *grh, struct ib_key *k);

/* ib_ah.c */

/* Reaps send completions: their stamps noted, the handles they held released. */
void ib_reap_sends(struct ib_transport *u);
/* Destroys the handles no send in flight uses any more. */
void ib_zombies_reap(struct ib_transport *u);
/* Client: gives up the server's handle (the server is lost). */
void ib_drop_ah(struct ib_transport *u);
/* Server: gives up every cached handle. */
void ib_ahc_flush(struct ib_transport *u);
/*
 * Server: the handle that answers @k, from the cache; with @wc and its
 * @grh, one made anew when none is cached.  NULL when none can be.
 */
struct ibv_ah *ib_ahc_get(struct ib_transport *u, const struct ib_key *k,
			  struct ibv_wc *wc, void *grh);

/* ib_qp.c */

/* The MTU of @port in bytes: its active one, or with @largest its largest; 0 when unknown. */
uint32_t ib_port_mtu(struct ibv_context *ctx, uint8_t port, int largest);

/* Posts receive buffer @i of partition @part.  0, or an errno value. */
int ib_post_recv(struct ib_transport *u, unsigned part, unsigned i);
/*
 * A UD QP on @port in P_Key index @pkey_index, in RTS, or NULL with errno
 * and *@step the step that failed.
 */
struct ibv_qp *ib_qp_up(struct ib_transport *u, uint8_t port, uint16_t pkey_index,
			const char **step);
/* Rebuilds the QPs found in the error state; u->dead when one cannot be. */
void ib_rebuild(struct ib_transport *u);
/* Wildcard server: the partition whose QP answers on @port in @pkey_index, or -1. */
int ib_part_get(struct ib_transport *u, uint8_t port, uint16_t pkey_index);

/* ib_event.c */

/* @u receives the async events of its device from now on; until unregistered. */
void ib_event_register(struct ib_transport *u);
void ib_event_unregister(struct ib_transport *u);
/* Reads the device's async events, hands them out, then acts on @u's own. */
void ib_event_take(struct ib_transport *u, int64_t now);

/* ib_cm.c */

/* An rdma_cm event on u->cm that no one waits for.  Consumes @ev. */
void ib_cm_other(struct ib_transport *u, struct rdma_cm_event *ev, int64_t now);
/* Client: a fresh cm_id on @ch, address and route resolved.  0 with *@idp, or -errno. */
int ib_cm_route(struct ib_transport *u, struct rdma_event_channel *ch, int64_t deadline,
		struct rdma_cm_id **idp);
/* Client, at the open: the first SIDR exchange on the routed @id, as of @now. */
void ib_cm_resolve_first(struct ib_transport *u, struct rdma_cm_id *id, int64_t now);
/* Client: the resolver thread, started (0, or -1 with @err naming @url) and stopped. */
int ib_cm_resolver_start(struct ib_transport *u, const char *url, char *err, size_t errlen);
void ib_cm_resolver_stop(struct ib_transport *u);
/*
 * Client: takes in the resolver's outcome, if there is one, and asks for
 * an attempt when one is due.  Nonzero while one runs.
 */
int ib_cm_resolve_step(struct ib_transport *u, int64_t now);

#endif
