/* SPDX-License-Identifier: ISC */
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
 * the send slots (each free again when its own completion is reaped: a
 * wildcard server's QPs complete in any order), a receive CQ with a
 * completion channel (block mode waits on it; busy mode spins on the CQ
 * and makes no system call while it is empty), a send CQ, one UD QP.  Each receive buffer has the 40-byte GRH
 * in front of the payload; a buffer is posted again as soon as its
 * datagram is consumed.  No retransmission, no RC: a lost datagram stays
 * lost, as over UDP.  A wildcard server serves every active port of its
 * HCA (dual-port mlx4, Connect-IB; port= keeps it to one) and answers
 * each IPoIB partition it is reached on from a QP on that port in that
 * partition: the port and P_Key index come from the SIDR request's id
 * (rdma_init_qp_attr()), and a port or partition seen for the first time
 * gets its own QP and receive pool (IB_PARTS at most); replies leave by
 * the port the request came in on (the AH is made for it).
 *
 * Address handles: the server keys its cache on what ibv_init_ah_from_wc()
 * derives the handle from (the header version as rdma-core decides it, the
 * GID type, the sender's GID and the local GID it was sent to, hop limit,
 * traffic class, flow label), read from the header without a system call.
 * A handle is destroyed only once no send in flight uses it: some
 * providers (rxe) look the handle up when the send is processed.
 *
 * Rediscovery (the defect of the original study: a restarted server has a
 * new QPN and the client kept the stale one): every reply carries the
 * server's epoch as immediate data.  A run of missed replies, a new epoch
 * or an async event on our port (port down/up, LID/P_Key change, address
 * change; a GID change only when the GID our handle sends from moved)
 * makes lib/peer.c declare the server lost; the client drops its address
 * handle and resolves again, spaced by peer.c's backoff, and tells the
 * caller once (transport_peer_reset) to reset its filter.  Resolution
 * after the open runs in a thread of its own (address, route, SIDR, with
 * IB_SIDR_TRIES tries of growing patience, since the kernel's own SIDR
 * retry comes only after seconds), so that a send waits at most
 * IB_RESOLVE_HOLD_NS for it; meanwhile sends fail with EINPROGRESS.
 *
 * Async events are matched to their source (ev->element): a QP or CQ
 * event to the transport that owns it, a port event to those on that
 * port.  Transports on one device share its context and so its event
 * queue; whichever reads an event hands it to its owners.
 *
 * A request is an NTP client-mode packet; only those expect a reply, so
 * load (loadgen) never counts as missed, and a request counts as missed
 * only when the next one goes out at least IB_MISS_MIN_NS later without
 * a reply in between (so a flood of requests does not).
 *
 * Timestamps: T1/T3 immediately before ibv_post_send, T2/T4 immediately
 * after the poll returned the receive completion.  With stamps enabled
 * (transport_stamps_enable), the HCA's completion stamps of the send and
 * the receive fill the 'h' layer where the device has them
 * (verbs_stamp.h: created as extended CQs and polled through
 * verbs_cq_poll whether stamped or not).  Waiting blocked,
 * rdma_cm and async events are taken in as soon as their fds are readable.
 *
 * Bad input is counted by kind (ib_verdict_names) and dropped.  A wrong
 * QKey never reaches software: the HCA drops the datagram (the qkey=
 * parameter exists to show that on hardware).
 *
 * Without a device every open fails at once with one line: "no RDMA
 *
 * The files (lib/ib_private.h has their map): the wire rules in
 * ib_wire.c, address handles in ib_ah.c, queue pairs in ib_qp.c, async
 * events in ib_event.c, rdma_cm and the resolver thread in ib_cm.c; here
 * the open, the close and the data path.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ib.h"
#include "ib_private.h"
#include "util_private.h"
#include "ntp.h"
#include "peer.h"
#include "transport_private.h"
#include "verbs_stamp.h"

#define IB_RECV_CLIENT	64		/* receive pool, client */
#define IB_RECV_SERVER	256		/* receive pool, server (per partition) */
#define IB_RESOLVE_HOLD_NS (5 * 1000000LL) /* a send waits this long at most
					   for a resolution it started */
#define IB_CTL_NS	(1 * 1000000LL)	/* load: events checked at most this often */
#define IB_CTL_BUSY_NS	(10 * 1000000LL) /* spinning: events checked this often */
#define IB_MISS_MIN_NS	(1 * 1000000LL)	/* a request younger than this when
					   the next goes out is not missed */

/* epoll tags of the transport's fds */
enum { IB_FD_CHAN, IB_FD_ASYNC, IB_FD_CM, IB_FD_WAKE };

/* struct transport_addr's contents for this backend. */
struct ib_addr {
	struct ib_key key;
	uint32_t qpn;
	uint32_t qkey;
	uint32_t part;		/* server: the partition's QP that answers */
};

static const char *const ib_params[] = { "dev", "port", "gid", "qkey", NULL };

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

static int ib_sockaddr(const char *host, uint16_t port, int passive,
		       struct sockaddr_storage *ss, char *err, size_t errlen)
{
	socklen_t len;

	return transport_resolve(host, port, passive, 0, ss, &len, err, errlen);
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
 * Async and rdma_cm events, and the resolver's outcome.  @now is the
 * caller's clock reading, so that an attempt made due here is due for
 * the caller too.  The completion channel is not touched here: only
 * ib_recv() consumes its events (see there).
 */
static void ib_control(struct ib_transport *u, int64_t now)
{
	struct rdma_cm_event *cev;

	u->ctl_ns = now;
	ib_unwake(u->wake);
	ib_event_take(u, now);
	while (rdma_get_cm_event(u->cm, &cev) == 0)
		ib_cm_other(u, cev, now);
	if (!u->server)
		ib_cm_resolve_step(u, now);
}

/*
 * One receive completion, stamped: judged, copied out, and its buffer
 * posted again.  Returns the payload length, or -EAGAIN when it was
 * dropped.
 */
static ssize_t ib_take(struct ib_transport *u, struct ibv_wc *wc, void *buf, size_t cap,
		       struct transport_addr *from)
{
	unsigned part = (unsigned)(wc->wr_id >> 32), i = (unsigned)wc->wr_id;
	unsigned char *grh;
	enum ib_verdict v;
	struct ib_addr a;
	size_t len;

	if (part >= IB_PARTS || !u->part[part].qp) {
		u->dead = -EIO;		/* not a buffer of ours */
		return -EAGAIN;
	}
	grh = u->part[part].mem + (size_t)i * u->slot;
	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		u->rebuild = 1;		/* the QP went to the error state */
		return -EAGAIN;
	}
	v = ib_check_recv(wc, u->server ? TRANSPORT_SERVER : TRANSPORT_CLIENT, u->rqpn);
	if (v != IB_RECV_OK) {
		u->n.bad[v]++;
		goto drop;
	}
	memset(&a, 0, sizeof(a));
	if (ib_key_from_wc(wc, grh, &a.key)) {
		u->n.ah_fail++;
		goto drop;
	}
	a.key.port = u->part[part].port;
	a.qpn = wc->src_qp;
	a.qkey = u->qkey;
	a.part = part;
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
	if (ib_post_recv(u, part, i))
		u->dead = -EIO;
	return (ssize_t)len;

drop:
	if (ib_post_recv(u, part, i))
		u->dead = -EIO;
	return -EAGAIN;
}

/* Blocking: are the async, rdma_cm or wake fds readable?  One epoll look. */
static int ib_ctl_readable(struct ib_transport *u)
{
	struct epoll_event ev[4];
	int n, i;

	n = epoll_wait(u->t.fd, ev, 4, 0);
	for (i = 0; i < n; i++)
		if (ev[i].data.u32 != IB_FD_CHAN)
			return 1;
	return 0;
}

static ssize_t ib_recv(struct transport *t, struct transport_dgram *d, struct clock *clk)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	struct verbs_wc vw;
	struct ibv_wc wc;
	ssize_t rc;
	int n;

	/*
	 * transport_fd() must poll readable whenever a datagram waits, for
	 * callers that poll before they receive.  So a completion channel
	 * event is consumed only here, when the CQ is found empty, and then
	 * the CQ is armed again and looked at once more before returning:
	 * at every return either the CQ is armed and was empty after
	 * arming, or an unconsumed event keeps the fd readable.  A caller
	 * that spins (t->spin) polls the CQ only: an event it leaves keeps
	 * the fd readable, and the arming stays for the next blocking wait.
	 */
	for (;;) {
		if (u->rebuild)
			ib_rebuild(u);
		if (u->dead)
			return u->dead;
		n = verbs_cq_poll(&u->rcq, &vw, 1);
		if (n > 0) {
			d->rx_at = clock_now(clk);
			verbs_wc_ibv(&vw, &wc);
			rc = ib_take(u, &wc, d->buf, d->cap, &d->peer);
			if (rc != -EAGAIN) {
				int64_t now = clock_monotonic_ns(), h;

				if (u->stamping && vw.ts &&
				    verbs_clock_realtime(&u->vclk, u->rcq.mode, vw.ts, &h) == 1)
					d->rx.at[TRANSPORT_LAYER_H] = h;

				if (now - u->ctl_ns >= IB_CTL_BUSY_NS)
					ib_control(u, now);
				return rc;
			}
			continue;
		}
		if (n < 0)
			return -EIO;
		if (t->spin) {
			int64_t now = clock_monotonic_ns();

			if (now - u->ctl_ns >= IB_CTL_BUSY_NS)
				ib_control(u, now);
			return u->dead ? u->dead : -EAGAIN;
		}
		/*
		 * Empty.  Consume the event, arm, then look once more: a
		 * completion that arrived before arming raises no event.
		 */
		ib_chan_drain(u);
		if (!u->armed) {
			if (ibv_req_notify_cq(u->rcq.cq, 0))
				return -EIO;
			u->armed = 1;
			continue;
		}
		/* About to sleep: take in what the other fds have. */
		if (ib_ctl_readable(u))
			ib_control(u, clock_monotonic_ns());
		return u->dead ? u->dead : -EAGAIN;
	}
}

/* Client: the address handle to send with, or -errno. */
static int ib_client_ah(struct ib_transport *u, int64_t now)
{
	int64_t until = now + IB_RESOLVE_HOLD_NS;

	while (!u->ah && ib_cm_resolve_step(u, clock_monotonic_ns())) {
		struct pollfd pfd = { .fd = u->wake, .events = POLLIN };
		int64_t left = until - clock_monotonic_ns();
		struct timespec ts;

		if (left <= 0)
			return -EINPROGRESS;
		ts.tv_sec = 0;
		ts.tv_nsec = left;
		if (ppoll(&pfd, 1, &ts, NULL) > 0)
			ib_control(u, clock_monotonic_ns());
	}
	if (!u->ah)
		return u->dead ? u->dead : u->last_err ? u->last_err : -EHOSTUNREACH;
	return 0;
}

static int ib_send(struct transport *t, struct transport_dgram *d,
		   const struct transport_addr *to, struct clock *clk, int flags)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	void *buf = d->buf;
	size_t len = d->len;
	const unsigned char *b = buf;
	int request = len >= NTP_HEADER_LEN && (b[0] & 7) == NTP_MODE_CLIENT;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_qp *qp = u->qp;
	struct ibv_ah *ah;
	unsigned layers, sn;
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
	if (u->rebuild)
		ib_rebuild(u);
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
		if (a.part >= IB_PARTS || !u->part[a.part].qp)
			return -EHOSTUNREACH;
		ah = ib_ahc_get(u, &a.key, NULL, NULL);
		if (!ah)
			return -EHOSTUNREACH;	/* evicted since it was received */
		qp = u->part[a.part].qp;
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
		rc = ib_client_ah(u, now);
		if (rc)
			return rc;
		ah = u->ah;
		qpn = u->rqpn;
		qkey = u->rqkey;
	}
	if (!u->nsend_free)
		return -ENOBUFS;
	sn = u->send_free[u->nsend_free - 1];
	slot = u->mem + (size_t)(u->nrecv + sn) * u->slot;
	memcpy(slot, buf, len);
	sge = (struct ibv_sge){ .addr = (uintptr_t)slot, .length = (uint32_t)len,
				.lkey = u->mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = sn;
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
	u->send_tag[sn] = 0;
	/* One layer at most (H): stamped when the send asks for it. */
	layers = u->stamping && u->scq.mode != VERBS_STAMP_NONE ? transport_send_layers(t, flags) : 0;
	if (layers) {
		if (!++u->tx_seq)
			u->tx_seq = 1;		/* 0 marks a send not asked for */
		u->send_tag[sn] = u->tx_seq;
		transport_tx_begin(t, d, u->tx_seq, layers);
	}
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		transport_stamp_xmt(slot, d->tx_at);
	rc = ibv_post_send(qp, &wr, &bad);
	if (rc) {
		u->send_tag[sn] = 0;
		u->n.post_err++;
		return -rc;
	}
	u->send_ah[sn] = ah;
	u->nsend_free--;
	if (flags & TRANSPORT_STAMP_XMT)
		transport_stamp_xmt(buf, d->tx_at);
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
	struct ibv_qp_attr qa;
	const char *step;
	int mask = 0;
	unsigned i, nbuf;
	uint16_t pkey_index = 0;

	if (ibv_query_port(u->ctx, u->port, &pa)) {
		IB_FAIL("%s: cannot query port %u of %s: %s", u->url, u->port,
			ibv_get_device_name(u->ctx->device), strerror(errno));
		return -1;
	}
	u->mtu = 128u << pa.active_mtu;		/* IBV_MTU_256 is 1 */
	u->slot = IB_GRH_LEN + u->mtu;
	u->nrecv = u->server ? IB_RECV_SERVER : IB_RECV_CLIENT;
	nbuf = u->nrecv + IB_SEND_DEPTH;
	for (u->nsend_free = 0; u->nsend_free < IB_SEND_DEPTH; u->nsend_free++)
		u->send_free[u->nsend_free] = IB_SEND_DEPTH - 1 - u->nsend_free;
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
	/* Completion stamps where the device has them (verbs_stamp.h). */
	verbs_clock_probe(&u->vclk, u->ctx);

	/*
	 * rdma_cm knows the P_Key index of the IPoIB interface the address
	 * lives on, and the QKey; a wildcard listener has neither: it starts
	 * in the default partition at index 0, and answers a request from
	 * another partition from a QP there (ib_part_get).
	 */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	u->qkey = RDMA_UDP_QKEY;
	if (id && rdma_init_qp_attr(id, &qa, &mask) == 0) {
		pkey_index = qa.pkey_index;
		if (qa.qkey)
			u->qkey = qa.qkey;
	}
	/*
	 * A QP refused for its CQs' stamp format (mlx5 in real-time mode)
	 * costs the stamps, never the transport: CQs again, a step down.
	 */
	for (;;) {
		if (verbs_cq_create(&u->vclk, &u->rcq,
				    (int)(u->server ? u->nrecv * IB_PARTS : u->nrecv), u,
				    u->chan) ||
		    verbs_cq_create(&u->vclk, &u->scq, IB_SEND_DEPTH, u, NULL)) {
			IB_FAIL("%s: completion queue: %s", u->url, strerror(errno));
			return -1;
		}
		u->qp = ib_qp_up(u, u->port, pkey_index, &step);
		if (u->qp || strcmp(step, "creating") || !verbs_qp_refused(&u->vclk, errno))
			break;
		verbs_cq_destroy(&u->rcq);
		verbs_cq_destroy(&u->scq);
	}
	if (!u->qp) {
		IB_FAIL("%s: UD queue pair: %s: %s", u->url, step, strerror(errno));
		return -1;
	}
	u->part[0] = (struct ib_part){ .port = u->port, .pkey_index = pkey_index, .qp = u->qp,
				       .mr = u->mr, .mem = u->mem };
	for (i = 0; i < u->nrecv; i++)
		if (ib_post_recv(u, 0, i)) {
			IB_FAIL("%s: posting receive buffers failed", u->url);
			return -1;
		}
	/*
	 * A wildcard server serves every active port (dual-port mlx4,
	 * Connect-IB): a QP on each in the default partition now, others as
	 * requests come (ib_part_get).
	 */
	if (u->any_port) {
		uint8_t p;

		/* ports count from 1; the first that does not exist ends it */
		for (p = 1; p < IB_PARTS && ibv_query_port(u->ctx, p, &pa) == 0; p++)
			if (p != u->port && pa.state == IBV_PORT_ACTIVE)
				ib_part_get(u, p, 0);
	}
	if (ibv_req_notify_cq(u->rcq.cq, 0)) {
		IB_FAIL("%s: cannot arm the completion queue", u->url);
		return -1;
	}
	u->armed = 1;
	return 0;
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
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	int p;

	ib_cm_resolver_stop(u);
	ib_event_unregister(u);
	if (u->t.fd >= 0)
		close(u->t.fd);
	/* The QPs first: then no send can name an address handle. */
	for (p = IB_PARTS - 1; p >= 0; p--) {
		struct ib_part *pt = &u->part[p];

		if (pt->qp)
			ibv_destroy_qp(pt->qp);
		if (p && pt->mr)
			ibv_dereg_mr(pt->mr);
		if (p)
			free(pt->mem);
	}
	if (!u->part[0].qp && u->qp)
		ibv_destroy_qp(u->qp);
	memset(u->send_ah, 0, sizeof(u->send_ah));
	ib_drop_ah(u);
	ib_ahc_flush(u);
	ib_zombies_reap(u);
	if (u->rcq.cq) {
		ib_chan_drain(u);
		verbs_cq_destroy(&u->rcq);
	}
	verbs_cq_destroy(&u->scq);
	verbs_clock_close(&u->vclk);
	if (u->chan)
		ibv_destroy_comp_channel(u->chan);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	free(u->mem);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	/* The cm_ids last: they hold the device the resources live on. */
	if (u->id)
		rdma_destroy_id(u->id);
	if (u->cm)
		rdma_destroy_event_channel(u->cm);
	if (u->rcm)
		rdma_destroy_event_channel(u->rcm);
	if (u->wake >= 0)
		close(u->wake);
	if (u->stopfd >= 0)
		close(u->stopfd);
	free(u);
}

/* The URL's parameters, judged for @role, and the device asked for. */
static int ib_open_check(const struct endpoint *ep, enum transport_role role, const char *dev,
			 long *port, long *gid, long *qkey, char *err, size_t errlen)
{
	if (ib_param_num(ep, "port", 255, port, err, errlen) ||
	    ib_param_num(ep, "gid", 255, gid, err, errlen) ||
	    ib_param_num(ep, "qkey", 0xffffffffL, qkey, err, errlen))
		return -1;
	if (endpoint_param(ep, "port") && *port == 0) {
		IB_FAIL("%s: bad port '0' (HCA ports count from 1)", ep->url);
		return -1;
	}
	if (role == TRANSPORT_SERVER && (*gid >= 0 || *qkey >= 0)) {
		IB_FAIL("%s: gid= and qkey= are for clients; a server answers as it was reached",
			ep->url);
		return -1;
	}
	return ib_device_check(ep, dev, err, errlen);
}

/*
 * Server: a cm_id bound to @host, and the device and port it serves: the
 * address's, or for a wildcard (bound to no device) dev= or the only
 * device, port= or every active port.
 */
static int ib_server_bind(struct ib_transport *u, const struct endpoint *ep, const char *host,
			  const char *dev, long port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;

	if (ib_sockaddr(host, ep->port, 1, &ss, err, errlen))
		return -1;
	if (rdma_create_id(u->cm, &u->id, u, RDMA_PS_UDP) ||
	    rdma_bind_addr(u->id, (struct sockaddr *)&ss)) {
		IB_FAIL("%s: cannot bind: %s", ep->url, strerror(errno));
		return -1;
	}
	if (u->id->verbs) {
		u->ctx = u->id->verbs;
		u->port = u->id->port_num;
		if (dev && strcmp(dev, ibv_get_device_name(u->ctx->device))) {
			IB_FAIL("%s: %s is on %s, not on dev=%s", ep->url, host,
				ibv_get_device_name(u->ctx->device), dev);
			return -1;
		}
	} else {
		u->ctx = ib_pick_device(dev, err, errlen, ep->url);
		if (!u->ctx)
			return -1;
		u->port = 1;
		u->wildcard = 1;
		u->any_port = !port;
	}
	if (port && port != u->port) {
		if (u->id->verbs) {
			IB_FAIL("%s: %s is on port %u, not on port=%ld", ep->url, host,
				u->port, port);
			return -1;
		}
		u->port = (uint8_t)port;
	}
	return 0;
}

/* Server: a new epoch, random and never PEER_EPOCH_NONE. */
static uint32_t ib_server_epoch(void)
{
	uint32_t epoch;

	if (getrandom(&epoch, sizeof(epoch), 0) != (ssize_t)sizeof(epoch))
		epoch = (uint32_t)clock_monotonic_ns() ^ (uint32_t)getpid();
	return epoch == PEER_EPOCH_NONE ? 1 : epoch;
}

/* Server: bound, its epoch drawn, its data path built, listening. */
static int ib_open_server(struct ib_transport *u, const struct endpoint *ep, const char *dev,
			  long port, char *err, size_t errlen)
{
	const char *host = strcmp(ep->host, "*") ? ep->host : "0.0.0.0";

	if (ib_server_bind(u, ep, host, dev, port, err, errlen))
		return -1;
	u->epoch = ib_server_epoch();
	if (ib_datapath(u, u->id->verbs ? u->id : NULL, err, errlen))
		return -1;
	if (rdma_listen(u->id, 64)) {
		IB_FAIL("%s: listen: %s", ep->url, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Client: the route to the server, the data path on the device and port
 * it leaves by, the first resolution, and the resolver thread.
 */
static int ib_open_client(struct ib_transport *u, const struct endpoint *ep, const char *dev,
			  long port, char *err, size_t errlen)
{
	int64_t now = clock_monotonic_ns();
	struct rdma_cm_id *route;
	int rc;

	if (ib_sockaddr(ep->host, ep->port, 0, &u->dst, err, errlen))
		return -1;
	/*
	 * Address and route must resolve now: they name the device
	 * and port the data path is built on, and their failure is
	 * local (no IPoIB route).  The server itself may be absent:
	 * that is a per-exchange error, found again later.
	 */
	rc = ib_cm_route(u, u->cm, now + IB_RESOLVE_NS, &u->id);
	if (rc) {
		IB_FAIL("%s: cannot resolve a route to %s: %s", ep->url, ep->host,
			strerror(-rc));
		return -1;
	}
	route = u->id;
	u->ctx = route->verbs;
	u->port = route->port_num;
	if (dev && strcmp(dev, ibv_get_device_name(u->ctx->device))) {
		IB_FAIL("%s: the route to %s leaves by %s, not by dev=%s", ep->url,
			ep->host, ibv_get_device_name(u->ctx->device), dev);
		return -1;
	}
	if (port && port != u->port) {
		IB_FAIL("%s: the route to %s leaves by port %u, not by port=%ld", ep->url,
			ep->host, u->port, port);
		return -1;
	}
	if (ib_datapath(u, route, err, errlen))
		return -1;
	ib_cm_resolve_first(u, route, now);
	return ib_cm_resolver_start(u, ep->url, err, errlen);
}

/*
 * The transport's fd: an epoll set of the completion channel, the
 * device's async events, rdma_cm and the wakeup, tagged IB_FD_*.
 */
static int ib_open_fds(struct ib_transport *u, const char *url, char *err, size_t errlen)
{
	struct epoll_event ee = { .events = EPOLLIN };
	int fds[4], i;

	u->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	u->t.fd = epoll_create1(EPOLL_CLOEXEC);
	if (u->wake < 0 || u->t.fd < 0 || ib_nonblock(u->ctx->async_fd)) {
		IB_FAIL("%s: epoll: %s", url, strerror(errno));
		return -1;
	}
	fds[IB_FD_CHAN] = u->chan->fd;
	fds[IB_FD_ASYNC] = u->ctx->async_fd;
	fds[IB_FD_CM] = u->cm->fd;
	fds[IB_FD_WAKE] = u->wake;
	for (i = 0; i < 4; i++) {
		ee.data.u32 = (uint32_t)i;
		if (epoll_ctl(u->t.fd, EPOLL_CTL_ADD, fds[i], &ee)) {
			IB_FAIL("%s: epoll: %s", url, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static struct transport *ib_open(const struct endpoint *ep, enum transport_role role,
				 char *err, size_t errlen)
{
	const char *dev = endpoint_param(ep, "dev");
	struct ib_transport *u;
	long port = 0, gid = -1, qkey = -1;

	err[0] = 0;
	if (ib_open_check(ep, role, dev, &port, &gid, &qkey, err, errlen))
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u) {
		IB_FAIL("out of memory");
		return NULL;
	}
	u->t.fd = -1;
	u->wake = u->stopfd = -1;
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
	if (u->server ? ib_open_server(u, ep, dev, port, err, errlen) :
			ib_open_client(u, ep, dev, port, err, errlen))
		goto fail;
	if (ib_open_fds(u, ep->url, err, errlen))
		goto fail;
	ib_event_register(u);
	u->ctl_ns = clock_monotonic_ns();
	return &u->t;

fail:
	ib_close(&u->t);
	return NULL;
}

static int ib_peer_reset(struct transport *t)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	int restarted = u->restarted;

	if (u->server)
		return 0;
	u->restarted = 0;
	return peer_take_reset(&u->peer) | restarted;
}

/*
 * The HCA's completion stamps, both ways, where the device has them
 * (verbs_stamp.h); none otherwise.  A device found again later (a new
 * context after rediscovery) is probed again: if it has none, the
 * columns show '-' from then on.
 */
static int ib_stamps_enable(struct transport *t, char *err, size_t errlen)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	const char *rx = verbs_stamp_source(u->rcq.mode), *tx = verbs_stamp_source(u->scq.mode);

	u->stamping = 1;
	if (rx) {
		t->st.rx_layers = 1u << TRANSPORT_LAYER_H;
		t->st.rx_src[TRANSPORT_LAYER_H] = rx;
	}
	else
		t->st.rx_why[TRANSPORT_LAYER_H] = u->vclk.why;
	if (!tx)
		t->st.tx_why[TRANSPORT_LAYER_H] = u->vclk.why;
	if (tx) {
		t->st.tx_layers = 1u << TRANSPORT_LAYER_H;
		t->st.tx_src[TRANSPORT_LAYER_H] = tx;
		t->st.tx_spin = 1;	/* send completions wake no poll */
	}
	return 0;
}

static void ib_tx_drain(struct transport *t)
{
	ib_reap_sends(container_of(t, struct ib_transport, t));
}

static void ib_counters(struct transport *t, char *buf, size_t len)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	const struct peer_counters *c = &u->peer.count;
	size_t n = 0;
	int v;

	for (v = IB_RECV_WC_ERROR; v < IB_RECV_NVERDICTS && n < len; v++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%llu", n ? " " : "",
				      ib_verdict_names[v], (unsigned long long)u->n.bad[v]);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      " epoch=%llu send_err=%llu post_err=%llu poll_errors=%llu"
				      " async=%llu qp_rebuilds=%llu stamps=%s stamp_errors=%llu",
				      (unsigned long long)u->n.epoch,
				      (unsigned long long)u->n.send_err,
				      (unsigned long long)u->n.post_err,
				      (unsigned long long)(u->rcq.poll_errors + u->scq.poll_errors),
				      (unsigned long long)u->n.async,
				      (unsigned long long)u->n.qp_rebuilds,
				      u->rcq.mode == VERBS_STAMP_RAW ? "raw" :
				      u->rcq.mode == VERBS_STAMP_WALLCLOCK ? "wallclock" : "none",
				      (unsigned long long)u->vclk.errors);
	if (n >= len)
		return;
	if (u->server)
		snprintf(buf + n, len - n, " sidr_accept=%llu sidr_reject=%llu ah_new=%llu"
			 " ah_evict=%llu ah_fail=%llu ah_deferred=%llu",
			 (unsigned long long)u->n.sidr_accept, (unsigned long long)u->n.sidr_reject,
			 (unsigned long long)u->n.ah_new, (unsigned long long)u->n.ah_evict,
			 (unsigned long long)u->n.ah_fail, (unsigned long long)u->n.ah_deferred);
	else
		snprintf(buf + n, len - n, " replies=%llu misses=%llu losses=%llu"
			 " resolutions=%llu resolve_failures=%llu sidr_retries=%llu resets=%llu",
			 (unsigned long long)c->replies, (unsigned long long)c->misses,
			 (unsigned long long)c->losses, (unsigned long long)c->resolutions,
			 (unsigned long long)c->resolve_failures,
			 (unsigned long long)u->n.sidr_retries, (unsigned long long)c->resets);
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
	.stamps_enable = ib_stamps_enable,
	.tx_drain = ib_tx_drain,
};
