/*
 * ib.c - NTP over InfiniBand unreliable datagrams (and RoCE), with
 * rediscovery of a server that restarted.
 *
 *   ib://HOST:PORT[?dev=mlx5_0&port=1&gid=N&qkey=Q]
 *
 * HOST is an IPoIB (or RoCE) address, PORT a port in rdma_cm's UDP port
 * space (not the kernel's UDP), dev/port the HCA and its port, gid the
 * source GID index of the client's address handle (RoCE v1/v2), qkey a
 * QKey the client sends with instead of the one the server announced (for
 * checking on hardware that the HCA drops what carries a wrong one).
 *
 * Discovery: the client resolves address and route with rdma_cm and
 * "connects" in RDMA_PS_UDP, which is a SIDR exchange: the answer
 * (RDMA_CM_EVENT_ESTABLISHED) gives the server's QPN, QKey and an address
 * handle's attributes, and its private data the server's epoch.  The
 * server listens, owns one UD QP, accepts each SIDR request with that QP's
 * number, and answers each datagram through an address handle made from
 * its work completion (ibv_create_ah_from_wc), kept in a small LRU cache.
 *
 * Data path: one PD, one registered region holding the receive pool and
 * the send ring, a receive CQ with a completion channel (block mode waits
 * on it; busy mode spins on the CQ), a send CQ, one UD QP.  Each receive
 * buffer has the 40-byte GRH in front of the payload; a buffer is posted
 * again as soon as its datagram is consumed.  No retransmission, no RC:
 * a lost datagram stays lost, as over UDP.
 *
 * Rediscovery (the defect of the original study: a restarted server has a
 * new QPN and the client kept the stale one): every reply carries the
 * server's epoch as immediate data.  A run of missed replies, a new epoch
 * or an async event (port down/up, LID/GID/P_Key change, address change)
 * makes lib/peer.c declare the server lost; the client destroys its
 * address handle, resolves again on its next send, spaced by peer.c's
 * backoff, and tells the caller once (transport_peer_reset) to reset its
 * filter.  A request is an NTP client-mode packet; only those expect a
 * reply, so load (loadgen) never counts as missed, and a request counts
 * as missed only when the next one goes out at least IB_MISS_MIN_NS
 * later without a reply in between (so a flood of requests does not).
 *
 * Timestamps: T1/T3 immediately before ibv_post_send, T2/T4 immediately
 * after ibv_poll_cq returned the receive completion.
 *
 * Bad input is counted by kind (ib_verdict_names) and dropped.  A wrong
 * QKey never reaches software: the HCA drops the datagram (the qkey=
 * parameter exists to show that on hardware).
 *
 * Without a device every open fails at once with one line: "no RDMA
 * device", the device asked for, and the devices found.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ib.h"
#include "ntp.h"
#include "peer.h"
#include "transport_private.h"

#define IB_RECV_CLIENT	64		/* receive pool, client */
#define IB_RECV_SERVER	256		/* receive pool, server */
#define IB_SEND_DEPTH	64		/* send ring */
#define IB_AH_CACHE	64		/* server: address handles kept */
#define IB_RESOLVE_NS	(1000 * 1000000LL)	/* bound on one resolution */
#define IB_CTL_NS	(1 * 1000000LL)	/* async and rdma_cm events checked at
					   most this often when the CQ is empty... */
#define IB_CTL_BUSY_NS	(10 * 1000000LL) /* ...and when it never is */
#define IB_MISS_MIN_NS	(1 * 1000000LL)	/* a request younger than this when
					   the next goes out is not missed */

const char *const ib_verdict_names[IB_RECV_NVERDICTS] = {
	[IB_RECV_OK] = "ok",
	[IB_RECV_WC_ERROR] = "wc_error",
	[IB_RECV_OPCODE] = "opcode",
	[IB_RECV_SHORT] = "short",
	[IB_RECV_NO_IMM] = "no_imm",
	[IB_RECV_IMM] = "imm",
	[IB_RECV_STRAY] = "stray",
};

enum ib_verdict ib_check_recv(const struct ibv_wc *wc, enum transport_role role,
			      uint32_t server_qpn)
{
	int imm = !!(wc->wc_flags & IBV_WC_WITH_IMM);

	if (wc->status != IBV_WC_SUCCESS)
		return IB_RECV_WC_ERROR;
	if (wc->opcode != IBV_WC_RECV)
		return IB_RECV_OPCODE;
	if (wc->byte_len < IB_GRH_LEN + NTP_HEADER_LEN)
		return IB_RECV_SHORT;
	if (role == TRANSPORT_SERVER)
		return imm ? IB_RECV_IMM : IB_RECV_OK;
	if (!imm)
		return IB_RECV_NO_IMM;
	if (wc->src_qp != server_qpn)
		return IB_RECV_STRAY;
	return IB_RECV_OK;
}

uint32_t ib_wc_epoch(const struct ibv_wc *wc)
{
	return be32toh(wc->imm_data);
}

/* Where a datagram came from, as far as an address handle cares. */
struct ib_key {
	uint16_t slid;
	uint8_t sl;
	uint8_t path_bits;
	uint8_t global;		/* sgid is valid */
	uint8_t pad[3];
	uint8_t sgid[16];
};

/* struct transport_addr's contents for this backend. */
struct ib_addr {
	struct ib_key key;
	uint32_t qpn;
	uint32_t qkey;
};

struct ib_ah_slot {
	struct ib_key key;
	struct ibv_ah *ah;	/* NULL: free */
	uint64_t used;		/* LRU clock */
};

struct ib_count {
	uint64_t bad[IB_RECV_NVERDICTS];	/* [IB_RECV_OK] unused */
	uint64_t epoch;		/* replies of another server instance */
	uint64_t send_err;	/* send completions with an error */
	uint64_t post_err;	/* ibv_post_send refused */
	uint64_t ah_new, ah_evict, ah_fail;
	uint64_t sidr_accept, sidr_reject;
	uint64_t async;		/* async events seen */
};

struct ib_transport {
	struct transport t;
	char url[512];
	int server;

	struct rdma_event_channel *cm;
	struct rdma_cm_id *id;		/* server: listening; client: last resolution */
	struct ibv_context *ctx;	/* rdma_cm's context of the device */
	uint8_t port;
	uint32_t mtu;			/* bytes, active path MTU of the port */
	struct ibv_comp_channel *chan;
	struct ibv_pd *pd;
	struct ibv_cq *rcq, *scq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *mem;
	size_t slot;			/* bytes per buffer: GRH + MTU */
	unsigned nrecv;
	unsigned send_next, send_busy;
	uint32_t max_inline;
	uint32_t qkey;			/* of our QP */
	int armed;			/* rcq notification requested, not yet consumed */
	int64_t ctl_ns;			/* CLOCK_MONOTONIC of the last event check */
	int dead;			/* -errno once the device or QP is gone */

	/* server */
	uint32_t epoch;
	struct ib_ah_slot ahc[IB_AH_CACHE];
	uint64_t ahc_clock;

	/* client */
	struct sockaddr_storage dst, src;
	int have_src;
	struct ibv_ah *ah;		/* NULL while the server is lost */
	uint32_t rqpn, rqkey;
	long qkey_forced;		/* -1: take the server's */
	int gid_index;			/* -1: rdma_cm's choice */
	struct peer peer;
	int outstanding;		/* a request awaits its reply */
	int64_t req_ns;			/* CLOCK_MONOTONIC when it was sent */
	int last_err;			/* -errno of the last failed resolution */

	struct ib_count n;
};

static const char *const ib_params[] = { "dev", "port", "gid", "qkey", NULL };

#define IB_FAIL(...) snprintf(err, errlen, __VA_ARGS__)

/* A number in [0, max] from a URL parameter (decimal or 0x hex). */
static int ib_param_num(const struct endpoint *ep, const char *key, long max, long *v,
			char *err, size_t errlen)
{
	const char *s = endpoint_param(ep, key);
	char *end;

	if (!s)
		return 0;
	errno = 0;
	*v = strtol(s, &end, 0);
	if (errno || *end || end == s || *v < 0 || *v > max) {
		IB_FAIL("%s: bad %s '%s' (expected 0..%ld)", ep->url, key, s, max);
		return -1;
	}
	return 0;
}

/*
 * The fast failure: is there an RDMA device, and the one asked for?  Runs
 * before rdma_cm is touched, so that a host without RDMA answers in
 * microseconds with the line the issue asks for.
 */
static int ib_device_check(const struct endpoint *ep, const char *dev, char *err, size_t errlen)
{
	struct ibv_device **list;
	char found[256] = "";
	size_t n = 0;
	int i, num = 0, hit = 0;

	list = ibv_get_device_list(&num);
	for (i = 0; list && i < num; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (!dev || strcmp(dev, name) == 0)
			hit = 1;
		if (n < sizeof(found))
			n += (size_t)snprintf(found + n, sizeof(found) - n, "%s%s",
					      n ? ", " : "", name);
	}
	if (list)
		ibv_free_device_list(list);
	if (hit)
		return 0;
	IB_FAIL("%s: no RDMA device (asked for %s, found %s)", ep->url, dev ? dev : "any",
		num > 0 ? found : "none");
	return -1;
}

static int ib_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

static int ib_sockaddr(const char *host, uint16_t port, int passive,
		       struct sockaddr_storage *ss, char *err, size_t errlen)
{
	socklen_t len;

	return transport_resolve(host, port, passive, ss, &len, err, errlen);
}

static int ib_ms_left(int64_t deadline)
{
	int64_t left = (deadline - clock_monotonic_ns()) / 1000000;

	return left < 1 ? 1 : left > INT_MAX ? INT_MAX : (int)left;
}

/*
 * What a failed step's event means, as -errno.  A SIDR reply with a
 * status other than success comes as UNREACHABLE with that (positive)
 * status: the server's CM answered that nothing listens on the port,
 * which is "refused" as for UDP; a negative status is rdma_cm's errno
 * (a timeout, no route).
 */
static int ib_cm_status(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		if (ev->status > 0)
			return -ECONNREFUSED;
		return ev->status < 0 ? ev->status : -EHOSTUNREACH;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return ev->status < 0 ? ev->status : -EPROTO;
	}
}

static void ib_drop_ah(struct ib_transport *u)
{
	if (u->ah) {
		ibv_destroy_ah(u->ah);
		u->ah = NULL;
	}
	u->outstanding = 0;
}

static void ib_ahc_flush(struct ib_transport *u)
{
	int i;

	for (i = 0; i < IB_AH_CACHE; i++)
		if (u->ahc[i].ah) {
			ibv_destroy_ah(u->ahc[i].ah);
			u->ahc[i].ah = NULL;
		}
}

/*
 * An event on a cm_id we are not waiting for: the server's SIDR requests,
 * a client's address change, the device going away.  Consumes @ev.
 */
static void ib_cm_other(struct ib_transport *u, struct rdma_cm_event *ev, int64_t now)
{
	struct rdma_cm_id *req = NULL;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* A SIDR request: answer with our QP, QKey and epoch. */
		req = ev->id;
		if (!u->server || req->verbs != u->ctx || req->port_num != u->port) {
			rdma_reject(req, NULL, 0);
			u->n.sidr_reject++;
		} else {
			uint32_t pd[2] = { htobe32(IB_SIDR_MAGIC), htobe32(u->epoch) };
			struct rdma_conn_param p = {
				.private_data = pd, .private_data_len = sizeof(pd),
				.qp_num = u->qp->qp_num,
			};

			if (rdma_accept(req, &p) == 0)
				u->n.sidr_accept++;
			else
				u->n.sidr_reject++;
		}
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		/* The address moved (bonding failover, a new port). */
		if (!u->server) {
			ib_drop_ah(u);
			peer_invalidate(&u->peer, now);
		}
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		u->dead = -ENODEV;
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
	/* SIDR keeps no state after the reply: the request's id can go. */
	if (req)
		rdma_destroy_id(req);
}

/*
 * Waits until @deadline for the next event on @id, handling the others
 * that arrive meanwhile.  Returns 0 with *@out (to be acked) or -errno.
 */
static int ib_cm_wait(struct ib_transport *u, struct rdma_cm_id *id, int64_t deadline,
		      struct rdma_cm_event **out)
{
	for (;;) {
		struct pollfd pfd = { .fd = u->cm->fd, .events = POLLIN };
		struct rdma_cm_event *ev;

		if (rdma_get_cm_event(u->cm, &ev) == 0) {
			if (ev->id == id) {
				*out = ev;
				return 0;
			}
			ib_cm_other(u, ev, clock_monotonic_ns());
			if (u->dead)
				return u->dead;
			continue;
		}
		if (errno != EAGAIN)
			return -errno;
		if (clock_monotonic_ns() >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, ib_ms_left(deadline)) < 0 && errno != EINTR)
			return -errno;
	}
}

/* Waits for @want on @id; any other event on it is its failure. */
static int ib_cm_expect(struct ib_transport *u, struct rdma_cm_id *id,
			enum rdma_cm_event_type want, int64_t deadline,
			struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev = NULL;
	int rc = ib_cm_wait(u, id, deadline, &ev);

	if (rc)
		return rc;
	if (ev->event != want) {
		rc = ib_cm_status(ev);
		rdma_ack_cm_event(ev);
		return rc;
	}
	*out = ev;
	return 0;
}

/*
 * Client: a fresh cm_id with address and route resolved towards the
 * server.  Returns 0 with *@idp, or -errno.
 */
static int ib_cm_route(struct ib_transport *u, int64_t deadline, struct rdma_cm_id **idp)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int rc;

	if (rdma_create_id(u->cm, &id, u, RDMA_PS_UDP))
		return -errno;
	if (rdma_resolve_addr(id, u->have_src ? (struct sockaddr *)&u->src : NULL,
			      (struct sockaddr *)&u->dst, ib_ms_left(deadline))) {
		rc = -errno;
		goto no_addr;
	}
	rc = ib_cm_expect(u, id, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &ev);
	if (rc)
		goto no_addr;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, ib_ms_left(deadline))) {
		rc = -errno;
		goto no_route;
	}
	rc = ib_cm_expect(u, id, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, &ev);
	if (rc)
		goto no_route;
	rdma_ack_cm_event(ev);
	*idp = id;
	return 0;

no_route:
no_addr:
	rdma_destroy_id(id);
	return rc;
}

/*
 * Client: the SIDR exchange on a routed @id.  On success the server's
 * QPN, QKey and epoch are taken and a new address handle replaces the old.
 */
static int ib_cm_sidr(struct ib_transport *u, struct rdma_cm_id *id, int64_t deadline,
		      uint32_t *epoch)
{
	struct rdma_conn_param p = { .qp_num = u->qp->qp_num };
	struct rdma_cm_event *ev;
	struct ibv_ah_attr attr;
	struct ibv_ah *ah;
	int rc;

	if (id->verbs != u->ctx || id->port_num != u->port)
		return -ENETUNREACH;	/* the route moved to another HCA port */
	if (rdma_connect(id, &p))
		return -errno;
	rc = ib_cm_expect(u, id, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev);
	if (rc)
		return rc;
	attr = ev->param.ud.ah_attr;
	if (u->gid_index >= 0 && attr.is_global)
		attr.grh.sgid_index = (uint8_t)u->gid_index;
	*epoch = PEER_EPOCH_NONE;
	if (ev->param.ud.private_data && ev->param.ud.private_data_len >= 8) {
		uint32_t pd[2];

		memcpy(pd, ev->param.ud.private_data, sizeof(pd));
		if (be32toh(pd[0]) == IB_SIDR_MAGIC)
			*epoch = be32toh(pd[1]);
	}
	u->rqpn = ev->param.ud.qp_num;
	u->rqkey = u->qkey_forced >= 0 ? (uint32_t)u->qkey_forced : ev->param.ud.qkey;
	rdma_ack_cm_event(ev);
	if (attr.port_num != u->port)
		return -ENETUNREACH;
	ah = ibv_create_ah(u->pd, &attr);
	if (!ah)
		return errno ? -errno : -ENOMEM;
	ib_drop_ah(u);
	u->ah = ah;
	return 0;
}

/* Client: finds the server again.  The old cm_id goes once a new one works. */
static int ib_resolve(struct ib_transport *u, int64_t now)
{
	int64_t deadline = now + IB_RESOLVE_NS;
	struct rdma_cm_id *id;
	uint32_t epoch;
	int rc;

	ib_drop_ah(u);
	rc = ib_cm_route(u, deadline, &id);
	if (rc == 0) {
		rc = ib_cm_sidr(u, id, deadline, &epoch);
		if (rc) {
			rdma_destroy_id(id);
		} else {
			if (u->id)
				rdma_destroy_id(u->id);
			u->id = id;
		}
	}
	if (rc) {
		peer_resolve_failed(&u->peer, now);
		u->last_err = rc;
		return rc;
	}
	peer_resolve_ok(&u->peer, now, epoch);
	u->last_err = 0;
	return 0;
}

static void ib_async(struct ib_transport *u, const struct ibv_async_event *ev, int64_t now)
{
	u->n.async++;
	switch (ev->event_type) {
	case IBV_EVENT_DEVICE_FATAL:
		u->dead = -ENODEV;
		break;
	case IBV_EVENT_CQ_ERR:
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		u->dead = -EIO;
		break;
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		if (ev->element.port_num != u->port)
			break;
		/* Addresses on this port may have changed: forget them. */
		if (u->server) {
			ib_ahc_flush(u);
		} else {
			ib_drop_ah(u);
			peer_invalidate(&u->peer, now);
		}
		break;
	default:
		break;
	}
}

/* Takes one event off the completion channel, if there is one. */
static void ib_chan_drain(struct ib_transport *u)
{
	struct ibv_cq *cq;
	void *cqctx;

	while (ibv_get_cq_event(u->chan, &cq, &cqctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		u->armed = 0;
	}
}

/*
 * Async and rdma_cm events.  @now is the caller's clock reading, so that
 * an attempt made due here is due for the caller too.  The completion
 * channel is not touched here: only ib_recv() consumes its events (see
 * there).
 */
static void ib_control(struct ib_transport *u, int64_t now)
{
	struct ibv_async_event aev;
	struct rdma_cm_event *cev;

	u->ctl_ns = now;
	while (ibv_get_async_event(u->ctx, &aev) == 0) {
		ib_async(u, &aev, now);
		ibv_ack_async_event(&aev);
	}
	while (rdma_get_cm_event(u->cm, &cev) == 0)
		ib_cm_other(u, cev, now);
}

static int ib_post_recv(struct ib_transport *u, unsigned i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(u->mem + (size_t)i * u->slot),
		.length = (uint32_t)u->slot,
		.lkey = u->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(u->qp, &wr, &bad);
}

/* Reaps send completions; a UD send error can leave the SQ in SQE state. */
static void ib_reap_sends(struct ib_transport *u)
{
	struct ibv_wc wc[16];
	int n, i, sqe = 0;

	while ((n = ibv_poll_cq(u->scq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				u->n.send_err++;
				sqe |= wc[i].status != IBV_WC_WR_FLUSH_ERR;
			}
		}
		u->send_busy -= (unsigned)n <= u->send_busy ? (unsigned)n : u->send_busy;
	}
	if (sqe) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		if (ibv_query_qp(u->qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_SQE) {
			memset(&a, 0, sizeof(a));
			a.qp_state = IBV_QPS_RTS;
			if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE))
				u->dead = -EIO;
		}
	}
}

/* Server: the address handle that answers @wc, from the cache or new. */
static struct ibv_ah *ib_ahc_get(struct ib_transport *u, const struct ib_key *k,
				 struct ibv_wc *wc, void *grh)
{
	struct ib_ah_slot *s, *victim = &u->ahc[0];
	int i;

	for (i = 0; i < IB_AH_CACHE; i++) {
		s = &u->ahc[i];
		if (s->ah && memcmp(&s->key, k, sizeof(*k)) == 0) {
			s->used = ++u->ahc_clock;
			return s->ah;
		}
		if (!s->ah || (victim->ah && s->used < victim->used))
			victim = s;
	}
	if (!wc)
		return NULL;
	if (victim->ah) {
		ibv_destroy_ah(victim->ah);
		victim->ah = NULL;
		u->n.ah_evict++;
	}
	victim->ah = ibv_create_ah_from_wc(u->pd, wc, grh, u->port);
	if (!victim->ah) {
		u->n.ah_fail++;
		return NULL;
	}
	u->n.ah_new++;
	victim->key = *k;
	victim->used = ++u->ahc_clock;
	return victim->ah;
}

/*
 * The sender as a cache key, read without a system call (unlike
 * ibv_init_ah_from_wc, which searches the GID table).  The 40 bytes in
 * front of the payload hold an IB/RoCE v1 GRH or, for RoCE v2, an IPv6
 * header (version 6 in the first nibble, source at byte 8), or 20 unused
 * bytes and an IPv4 header (0x45 at byte 20, source at byte 32), which
 * becomes the IPv4-mapped GID.
 */
static void ib_key_from_wc(const struct ibv_wc *wc, const unsigned char *grh, struct ib_key *k)
{
	memset(k, 0, sizeof(*k));
	k->slid = wc->slid;
	k->sl = wc->sl;
	k->path_bits = wc->dlid_path_bits;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return;
	k->global = 1;
	if (grh[0] >> 4 == 6) {
		memcpy(k->sgid, grh + 8, 16);
	} else if (grh[20] == 0x45) {
		k->sgid[10] = k->sgid[11] = 0xff;
		memcpy(k->sgid + 12, grh + 32, 4);
	}
}

/*
 * One receive completion, stamped: judged, copied out, and its buffer
 * posted again.  Returns the payload length, or -EAGAIN when it was
 * dropped.
 */
static ssize_t ib_take(struct ib_transport *u, struct ibv_wc *wc, void *buf, size_t cap,
		       struct transport_addr *from)
{
	unsigned i = (unsigned)wc->wr_id;
	unsigned char *grh = u->mem + (size_t)i * u->slot;
	enum ib_verdict v;
	struct ib_addr a;
	size_t len;

	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		u->dead = -EIO;		/* the QP went to the error state */
		return -EAGAIN;
	}
	v = ib_check_recv(wc, u->server ? TRANSPORT_SERVER : TRANSPORT_CLIENT, u->rqpn);
	if (v != IB_RECV_OK) {
		u->n.bad[v]++;
		goto drop;
	}
	ib_key_from_wc(wc, grh, &a.key);
	a.qpn = wc->src_qp;
	a.qkey = u->qkey;
	if (u->server) {
		if (!ib_ahc_get(u, &a.key, wc, grh))
			goto drop;
	} else if (peer_reply(&u->peer, clock_monotonic_ns(), ib_wc_epoch(wc)) == PEER_LOST) {
		/* Another server instance answered: find it properly. */
		u->n.epoch++;
		ib_drop_ah(u);
		goto drop;
	} else {
		u->outstanding = 0;
	}
	len = wc->byte_len - IB_GRH_LEN;
	memcpy(buf, grh + IB_GRH_LEN, len < cap ? len : cap);
	if (from) {
		from->len = sizeof(a);
		memcpy(from->data, &a, sizeof(a));
	}
	if (ib_post_recv(u, i))
		u->dead = -EIO;
	return (ssize_t)len;

drop:
	if (ib_post_recv(u, i))
		u->dead = -EIO;
	return -EAGAIN;
}

static ssize_t ib_recv(struct transport *t, void *buf, size_t cap,
		       struct transport_addr *from, struct clock *clk, int64_t *stamp)
{
	struct ib_transport *u = (struct ib_transport *)t;
	struct ibv_wc wc;
	ssize_t rc;
	int n;

	/*
	 * transport_fd() must poll readable whenever a datagram waits, for
	 * callers that poll before they receive.  So a completion channel
	 * event is consumed only here, when the CQ is found empty, and then
	 * the CQ is armed again and looked at once more before returning:
	 * at every return either the CQ is armed and was empty after
	 * arming, or an unconsumed event keeps the fd readable.  The price
	 * is one read of the channel per empty look (busy mode: per spin,
	 * as a non-blocking recvfrom is for udp).
	 */
	for (;;) {
		if (u->dead)
			return u->dead;
		n = ibv_poll_cq(u->rcq, 1, &wc);
		if (n > 0) {
			*stamp = clock_now(clk);
			rc = ib_take(u, &wc, buf, cap, from);
			if (rc != -EAGAIN) {
				int64_t now = clock_monotonic_ns();

				if (now - u->ctl_ns >= IB_CTL_BUSY_NS)
					ib_control(u, now);
				return rc;
			}
			continue;
		}
		if (n < 0)
			return -EIO;
		/*
		 * Empty.  Consume the event, arm, then look once more: a
		 * completion that arrived before arming raises no event.
		 */
		ib_chan_drain(u);
		if (!u->armed) {
			if (ibv_req_notify_cq(u->rcq, 0))
				return -EIO;
			u->armed = 1;
			continue;
		}
		{
			int64_t now = clock_monotonic_ns();

			if (now - u->ctl_ns >= IB_CTL_NS)
				ib_control(u, now);
			return u->dead ? u->dead : -EAGAIN;
		}
	}
}

static int ib_send(struct transport *t, void *buf, size_t len,
		   const struct transport_addr *to, struct clock *clk, int flags,
		   int64_t *stamp)
{
	struct ib_transport *u = (struct ib_transport *)t;
	const unsigned char *b = buf;
	int request = len >= NTP_HEADER_LEN && (b[0] & 7) == NTP_MODE_CLIENT;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_ah *ah;
	uint32_t qpn, qkey;
	unsigned char *slot;
	int64_t now = clock_monotonic_ns();
	int rc;

	/*
	 * Before a request, take in whatever the device and rdma_cm said
	 * (port down, address change): before T1, so it costs the
	 * measurement nothing.  Load is only rate-limited.
	 */
	if ((request && !u->server) || now - u->ctl_ns >= IB_CTL_NS)
		ib_control(u, now);
	if (u->dead)
		return u->dead;
	if (len > u->mtu)
		return -EMSGSIZE;
	ib_reap_sends(u);
	if (u->server) {
		struct ib_addr a;

		if (!to || to->len != sizeof(a))
			return -EDESTADDRREQ;
		memcpy(&a, to->data, sizeof(a));
		ah = ib_ahc_get(u, &a.key, NULL, NULL);
		if (!ah)
			return -EHOSTUNREACH;	/* evicted since it was received */
		qpn = a.qpn;
		qkey = a.qkey;
	} else {
		/*
		 * The request before this one was never answered: a miss,
		 * if it had time to be answered.  A reply over UD takes
		 * microseconds; a flood of requests (loadgen --ntp) sends the
		 * next one sooner than that and must not count as misses.
		 */
		if (request && u->outstanding && now - u->req_ns >= IB_MISS_MIN_NS) {
			u->outstanding = 0;
			if (peer_miss(&u->peer, now) == PEER_LOST)
				ib_drop_ah(u);
		}
		if (!u->ah) {
			if (!peer_resolve_due(&u->peer, now))
				return u->last_err ? u->last_err : -EHOSTUNREACH;
			rc = ib_resolve(u, now);
			if (rc)
				return rc;
		}
		ah = u->ah;
		qpn = u->rqpn;
		qkey = u->rqkey;
	}
	if (u->send_busy >= IB_SEND_DEPTH)
		return -ENOBUFS;
	slot = u->mem + (size_t)(u->nrecv + u->send_next) * u->slot;
	memcpy(slot, buf, len);
	sge = (struct ibv_sge){ .addr = (uintptr_t)slot, .length = (uint32_t)len,
				.lkey = u->mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = u->send_next;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | (len <= u->max_inline ? IBV_SEND_INLINE : 0);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	if (u->server) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htobe32(u->epoch);
	} else {
		wr.opcode = IBV_WR_SEND;
	}
	*stamp = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		transport_stamp_xmt(slot, *stamp);
	rc = ibv_post_send(u->qp, &wr, &bad);
	if (rc) {
		u->n.post_err++;
		return -rc;
	}
	u->send_busy++;
	u->send_next = (u->send_next + 1) % IB_SEND_DEPTH;
	if (flags & TRANSPORT_STAMP_XMT)
		transport_stamp_xmt(buf, *stamp);
	if (request && !u->server && !u->outstanding) {
		u->outstanding = 1;
		u->req_ns = now;
	}
	return 0;
}

/* PD, memory, CQs and the UD QP on u->ctx/u->port, receives posted. */
static int ib_datapath(struct ib_transport *u, struct rdma_cm_id *id, char *err, size_t errlen)
{
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	int mask = 0;
	unsigned i, nbuf;

	if (ibv_query_port(u->ctx, u->port, &pa)) {
		IB_FAIL("%s: cannot query port %u of %s: %s", u->url, u->port,
			ibv_get_device_name(u->ctx->device), strerror(errno));
		return -1;
	}
	u->mtu = 128u << pa.active_mtu;		/* IBV_MTU_256 is 1 */
	u->slot = IB_GRH_LEN + u->mtu;
	u->nrecv = u->server ? IB_RECV_SERVER : IB_RECV_CLIENT;
	nbuf = u->nrecv + IB_SEND_DEPTH;
	u->chan = ibv_create_comp_channel(u->ctx);
	if (!u->chan || ib_nonblock(u->chan->fd)) {
		IB_FAIL("%s: completion channel: %s", u->url, strerror(errno));
		return -1;
	}
	u->pd = ibv_alloc_pd(u->ctx);
	if (!u->pd) {
		IB_FAIL("%s: protection domain: %s", u->url, strerror(errno));
		return -1;
	}
	u->mem = aligned_alloc(4096, (nbuf * u->slot + 4095) / 4096 * 4096);
	if (!u->mem) {
		IB_FAIL("%s: out of memory", u->url);
		return -1;
	}
	memset(u->mem, 0, nbuf * u->slot);
	u->mr = ibv_reg_mr(u->pd, u->mem, nbuf * u->slot, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr) {
		IB_FAIL("%s: registering %zu bytes: %s", u->url, nbuf * u->slot, strerror(errno));
		return -1;
	}
	u->rcq = ibv_create_cq(u->ctx, (int)u->nrecv, u, u->chan, 0);
	u->scq = ibv_create_cq(u->ctx, IB_SEND_DEPTH, u, NULL, 0);
	if (!u->rcq || !u->scq) {
		IB_FAIL("%s: completion queue: %s", u->url, strerror(errno));
		return -1;
	}
	memset(&qia, 0, sizeof(qia));
	qia.send_cq = u->scq;
	qia.recv_cq = u->rcq;
	qia.qp_type = IBV_QPT_UD;
	qia.sq_sig_all = 1;
	qia.cap.max_send_wr = IB_SEND_DEPTH;
	qia.cap.max_recv_wr = u->nrecv;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	qia.cap.max_inline_data = NTP_HEADER_LEN + 64;
	u->qp = ibv_create_qp(u->pd, &qia);
	if (!u->qp) {
		/* Some HCAs inline less; ask for none rather than fail. */
		qia.cap.max_inline_data = 0;
		u->qp = ibv_create_qp(u->pd, &qia);
	}
	if (!u->qp) {
		IB_FAIL("%s: UD queue pair: %s", u->url, strerror(errno));
		return -1;
	}
	u->max_inline = qia.cap.max_inline_data;

	/*
	 * INIT takes P_Key index, port and QKey.  rdma_cm knows the P_Key
	 * of the IPoIB interface the address lives on; a wildcard listener
	 * has none, and then the default partition at index 0 is used.
	 */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	if (!id || rdma_init_qp_attr(id, &qa, &mask)) {
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IBV_QPS_INIT;
		qa.pkey_index = 0;
		qa.qkey = RDMA_UDP_QKEY;
	}
	qa.port_num = u->port;
	if (!qa.qkey)
		qa.qkey = RDMA_UDP_QKEY;
	u->qkey = qa.qkey;
	if (ibv_modify_qp(u->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		goto no_state;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u->qp, &qa, IBV_QP_STATE))
		goto no_state;
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 0;
	if (ibv_modify_qp(u->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto no_state;
	for (i = 0; i < u->nrecv; i++)
		if (ib_post_recv(u, i)) {
			IB_FAIL("%s: posting receive buffers failed", u->url);
			return -1;
		}
	if (ibv_req_notify_cq(u->rcq, 0)) {
		IB_FAIL("%s: cannot arm the completion queue", u->url);
		return -1;
	}
	u->armed = 1;
	return 0;

no_state:
	IB_FAIL("%s: moving the UD queue pair to %s: %s", u->url,
		qa.qp_state == IBV_QPS_INIT ? "INIT" : qa.qp_state == IBV_QPS_RTR ? "RTR" : "RTS",
		strerror(errno));
	return -1;
}

/* Server: the device a wildcard listener serves (dev=, or the only one). */
static struct ibv_context *ib_pick_device(const char *dev, char *err, size_t errlen,
					  const char *url)
{
	struct ibv_context **l, *c = NULL;
	int i, num = 0;

	l = rdma_get_devices(&num);
	if (!l) {
		IB_FAIL("%s: rdma_cm sees no device: %s", url, strerror(errno));
		return NULL;
	}
	for (i = 0; i < num; i++) {
		if (dev && strcmp(ibv_get_device_name(l[i]->device), dev))
			continue;
		if (c) {
			IB_FAIL("%s: several RDMA devices; choose one with dev=", url);
			c = NULL;
			break;
		}
		c = l[i];
	}
	if (!c && !err[0])
		IB_FAIL("%s: no RDMA device (asked for %s)", url, dev ? dev : "any");
	rdma_free_devices(l);
	return c;
}

static void ib_close(struct transport *t)
{
	struct ib_transport *u = (struct ib_transport *)t;

	if (u->t.fd >= 0)
		close(u->t.fd);
	ib_drop_ah(u);
	ib_ahc_flush(u);
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->rcq) {
		ib_chan_drain(u);
		ibv_destroy_cq(u->rcq);
	}
	if (u->scq)
		ibv_destroy_cq(u->scq);
	if (u->chan)
		ibv_destroy_comp_channel(u->chan);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	free(u->mem);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	/* The cm_id last: it holds the device the resources live on. */
	if (u->id)
		rdma_destroy_id(u->id);
	if (u->cm)
		rdma_destroy_event_channel(u->cm);
	free(u);
}

static struct transport *ib_open(const struct endpoint *ep, enum transport_role role,
				 char *err, size_t errlen)
{
	const char *dev = endpoint_param(ep, "dev");
	struct ib_transport *u;
	struct rdma_cm_id *route = NULL;
	long port = 0, gid = -1, qkey = -1;
	struct epoll_event ee = { .events = EPOLLIN };
	int rc;

	err[0] = 0;
	if (ib_param_num(ep, "port", 255, &port, err, errlen) ||
	    ib_param_num(ep, "gid", 255, &gid, err, errlen) ||
	    ib_param_num(ep, "qkey", 0xffffffffL, &qkey, err, errlen))
		return NULL;
	if (endpoint_param(ep, "port") && port == 0) {
		IB_FAIL("%s: bad port '0' (HCA ports count from 1)", ep->url);
		return NULL;
	}
	if (role == TRANSPORT_SERVER && (gid >= 0 || qkey >= 0)) {
		IB_FAIL("%s: gid= and qkey= are for clients; a server answers as it was reached",
			ep->url);
		return NULL;
	}
	if (ib_device_check(ep, dev, err, errlen))
		return NULL;

	u = calloc(1, sizeof(*u));
	if (!u) {
		IB_FAIL("out of memory");
		return NULL;
	}
	u->t.fd = -1;
	snprintf(u->url, sizeof(u->url), "%s", ep->url);
	u->server = role == TRANSPORT_SERVER;
	u->qkey_forced = qkey;
	u->gid_index = (int)gid;
	peer_init(&u->peer, NULL);

	u->cm = rdma_create_event_channel();
	if (!u->cm || ib_nonblock(u->cm->fd)) {
		IB_FAIL("%s: rdma_cm event channel: %s", ep->url, strerror(errno));
		goto fail;
	}
	if (u->server) {
		const char *host = strcmp(ep->host, "*") ? ep->host : "0.0.0.0";
		struct sockaddr_storage ss;

		if (ib_sockaddr(host, ep->port, 1, &ss, err, errlen))
			goto fail;
		if (rdma_create_id(u->cm, &u->id, u, RDMA_PS_UDP) ||
		    rdma_bind_addr(u->id, (struct sockaddr *)&ss)) {
			IB_FAIL("%s: cannot bind: %s", ep->url, strerror(errno));
			goto fail;
		}
		if (u->id->verbs) {
			u->ctx = u->id->verbs;
			u->port = u->id->port_num;
			if (dev && strcmp(dev, ibv_get_device_name(u->ctx->device))) {
				IB_FAIL("%s: %s is on %s, not on dev=%s", ep->url, host,
					ibv_get_device_name(u->ctx->device), dev);
				goto fail;
			}
		} else {
			u->ctx = ib_pick_device(dev, err, errlen, ep->url);
			if (!u->ctx)
				goto fail;
			u->port = 1;
		}
		if (port && port != u->port) {
			if (u->id->verbs) {
				IB_FAIL("%s: %s is on port %u, not on port=%ld", ep->url, host,
					u->port, port);
				goto fail;
			}
			u->port = (uint8_t)port;
		}
		if (getrandom(&u->epoch, sizeof(u->epoch), 0) != (ssize_t)sizeof(u->epoch))
			u->epoch = (uint32_t)clock_monotonic_ns() ^ (uint32_t)getpid();
		if (u->epoch == PEER_EPOCH_NONE)
			u->epoch = 1;
		if (ib_datapath(u, u->id->verbs ? u->id : NULL, err, errlen))
			goto fail;
		if (rdma_listen(u->id, 64)) {
			IB_FAIL("%s: listen: %s", ep->url, strerror(errno));
			goto fail;
		}
	} else {
		int64_t now = clock_monotonic_ns();

		if (ib_sockaddr(ep->host, ep->port, 0, &u->dst, err, errlen))
			goto fail;
		/*
		 * Address and route must resolve now: they name the device
		 * and port the data path is built on, and their failure is
		 * local (no IPoIB route).  The server itself may be absent:
		 * that is a per-exchange error, found again later.
		 */
		rc = ib_cm_route(u, now + IB_RESOLVE_NS, &u->id);
		if (rc) {
			IB_FAIL("%s: cannot resolve a route to %s: %s", ep->url, ep->host,
				strerror(-rc));
			goto fail;
		}
		route = u->id;
		u->ctx = route->verbs;
		u->port = route->port_num;
		if (dev && strcmp(dev, ibv_get_device_name(u->ctx->device))) {
			IB_FAIL("%s: the route to %s leaves by %s, not by dev=%s", ep->url,
				ep->host, ibv_get_device_name(u->ctx->device), dev);
			goto fail;
		}
		if (port && port != u->port) {
			IB_FAIL("%s: the route to %s leaves by port %u, not by port=%ld", ep->url,
				ep->host, u->port, port);
			goto fail;
		}
		if (ib_datapath(u, route, err, errlen))
			goto fail;
		{
			uint32_t epoch;

			/*
			 * The server may be down: a per-exchange error, retried
			 * on the backoff.  The routed id stays until a later
			 * resolution replaces it: it holds the device.
			 */
			rc = ib_cm_sidr(u, route, now + IB_RESOLVE_NS, &epoch);
			if (rc == 0) {
				peer_resolve_ok(&u->peer, now, epoch);
			} else {
				peer_resolve_failed(&u->peer, now);
				u->last_err = rc;
			}
		}
	}

	u->t.fd = epoll_create1(EPOLL_CLOEXEC);
	if (u->t.fd < 0 || ib_nonblock(u->ctx->async_fd) ||
	    epoll_ctl(u->t.fd, EPOLL_CTL_ADD, u->chan->fd, &ee) ||
	    epoll_ctl(u->t.fd, EPOLL_CTL_ADD, u->ctx->async_fd, &ee) ||
	    epoll_ctl(u->t.fd, EPOLL_CTL_ADD, u->cm->fd, &ee)) {
		IB_FAIL("%s: epoll: %s", ep->url, strerror(errno));
		goto fail;
	}
	u->ctl_ns = clock_monotonic_ns();
	return &u->t;

fail:
	ib_close(&u->t);
	return NULL;
}

static int ib_peer_reset(struct transport *t)
{
	struct ib_transport *u = (struct ib_transport *)t;

	return u->server ? 0 : peer_take_reset(&u->peer);
}

static void ib_counters(struct transport *t, char *buf, size_t len)
{
	struct ib_transport *u = (struct ib_transport *)t;
	const struct peer_counters *c = &u->peer.count;
	size_t n = 0;
	int v;

	for (v = IB_RECV_WC_ERROR; v < IB_RECV_NVERDICTS && n < len; v++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%llu", n ? " " : "",
				      ib_verdict_names[v], (unsigned long long)u->n.bad[v]);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      " epoch=%llu send_err=%llu post_err=%llu async=%llu",
				      (unsigned long long)u->n.epoch,
				      (unsigned long long)u->n.send_err,
				      (unsigned long long)u->n.post_err,
				      (unsigned long long)u->n.async);
	if (n >= len)
		return;
	if (u->server)
		snprintf(buf + n, len - n, " sidr_accept=%llu sidr_reject=%llu ah_new=%llu"
			 " ah_evict=%llu ah_fail=%llu",
			 (unsigned long long)u->n.sidr_accept, (unsigned long long)u->n.sidr_reject,
			 (unsigned long long)u->n.ah_new, (unsigned long long)u->n.ah_evict,
			 (unsigned long long)u->n.ah_fail);
	else
		snprintf(buf + n, len - n, " replies=%llu misses=%llu losses=%llu"
			 " resolutions=%llu resolve_failures=%llu resets=%llu",
			 (unsigned long long)c->replies, (unsigned long long)c->misses,
			 (unsigned long long)c->losses, (unsigned long long)c->resolutions,
			 (unsigned long long)c->resolve_failures, (unsigned long long)c->resets);
}

static void ib_addr_str(const struct transport_addr *ta, char *buf, size_t len)
{
	struct ib_addr a;
	char gid[INET6_ADDRSTRLEN];

	if (ta->len != sizeof(a)) {
		snprintf(buf, len, "?");
		return;
	}
	memcpy(&a, ta->data, sizeof(a));
	if (a.key.global && inet_ntop(AF_INET6, a.key.sgid, gid, sizeof(gid)))
		snprintf(buf, len, "gid %s qpn 0x%x", gid, a.qpn);
	else
		snprintf(buf, len, "lid 0x%x qpn 0x%x", a.key.slid, a.qpn);
}

const struct transport_ops ib_transport_ops = {
	.scheme = "ib",
	.params = ib_params,
	.open = ib_open,
	.send = ib_send,
	.recv = ib_recv,
	.close = ib_close,
	.addr_str = ib_addr_str,
	.peer_reset = ib_peer_reset,
	.counters = ib_counters,
};
