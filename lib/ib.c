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
 * lost, as over UDP.  A wildcard server serves every device (dev= keeps
 * it to one; each port of a ConnectX-4 or later is a device of its own:
 * a server of this kind on each, ib_devs_*, and one listener that hands
 * each SIDR request to the device it came in on), every active port of
 * a device (dual-port mlx4, Connect-IB; port= keeps it to one), and answers
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

#include "ib_wire.h"
#include "ib_private.h"
#include "util_private.h"
#include "ntp.h"
#include "opt_units.h"
#include "peer.h"
#include "transport_private.h"
#include "verbs_stamp.h"

#define IB_RECV_CLIENT	64		/* receive pool, client */
#define IB_RECV_SERVER	256		/* receive pool, server (per partition) */
#define IB_RESOLVE_HOLD_NS (5 * NTPX_NS_PER_MS) /* a send waits this long at most
					   for a resolution it started */
#define IB_CTL_NS	(1 * NTPX_NS_PER_MS)	/* load: events checked at most this often */
#define IB_CTL_BUSY_NS	(10 * NTPX_NS_PER_MS) /* spinning: events checked this often */
#define IB_MISS_MIN_NS	(1 * NTPX_NS_PER_MS)	/* a request younger than this when
					   the next goes out is not missed */

/* epoll tags of the transport's fds */
enum { IB_FD_CHAN, IB_FD_ASYNC, IB_FD_CM, IB_FD_WAKE, IB_FD_DEV };

/* struct transport_addr's contents for this backend. */
struct ib_addr {
	struct ib_key key;
	uint32_t qpn;
	uint32_t qkey;
	uint32_t part;		/* server: the partition's QP that answers */
	uint32_t dev;		/* a several-device server: the device's (ib_devs_*) */
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

/* Client: gives up the server's handle (the server is lost). */
static void ib_drop_ah(struct ib_transport *u)
{
	if (u->ah) {
		ib_ah_put(&u->ahs, u->ah);
		u->ah = NULL;
	}
	u->outstanding = 0;
}

/*
 * Reaps send completions: each slot free again, the stamp of a send that
 * asked for one noted, the handle it held released; a UD send error can
 * leave the SQ in SQE state, brought back.
 */
static void ib_reap_sends(struct ib_transport *u)
{
	struct verbs_wc wc[16];
	int n, i, sqe = 0;

	while ((n = verbs_cq_poll(&u->scq, wc, 16)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id < IB_SEND_DEPTH && u->nsend_free < IB_SEND_DEPTH) {
				uint32_t tag = u->send_tag[wc[i].wr_id];
				int64_t ns;

				u->send_free[u->nsend_free++] = (unsigned)wc[i].wr_id;
				u->ahs.send_ah[wc[i].wr_id] = NULL;
				u->send_tag[wc[i].wr_id] = 0;
				if (tag) {
					if (wc[i].status != IBV_WC_SUCCESS ||
					    verbs_clock_realtime(&u->vclk, u->scq.mode,
								 wc[i].ts, &ns) != 1)
						ns = TRANSPORT_NO_STAMP;
					transport_tx_note(u->top, tag, TRANSPORT_LAYER_H, ns);
				}
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				u->n.send_err++;
				sqe |= wc[i].status != IBV_WC_WR_FLUSH_ERR;
			}
		}
	}
	if (u->ahs.nzombie)
		ib_zombies_reap(&u->ahs);
	if (sqe && ib_qps_sqe_recover(&u->q))
		u->dead = -EIO;
}

/* The address handles' reaping of sends (ib_ahs.reap). */
static void ib_ahs_reap(struct ib_ahs *a)
{
	ib_reap_sends(container_of(a, struct ib_transport, ahs));
}

/*
 * The QPs found in the error state are rebuilt in place (ib_qp.c), the
 * flushed send completions taken first.  Counted (qp_rebuilds=); a client
 * tells the caller once (transport_peer_reset), so that its filters start
 * afresh.  A QP that cannot be rebuilt leaves the transport dead (EIO).
 */
static void ib_rebuild(struct ib_transport *u)
{
	int bad[IB_PARTS];

	u->rebuild = 0;
	if (!ib_qps_failed(&u->q, bad))
		return;
	ib_reap_sends(u);
	if (ib_qps_drain(&u->q, bad))
		u->dead = -EIO;
	if (ib_qps_rebuild(&u->q, bad, &u->n.qp_rebuilds)) {
		u->dead = -EIO;
		return;
	}
	if (!u->server) {
		u->restarted = 1;
		u->outstanding = 0;
	}
}

/* The GID our handle sends from is still what it was. */
static int ib_sgid_same(struct ib_transport *u)
{
	struct ibv_gid_entry e;

	if (!u->ah || !u->ah_attr.is_global)
		return 1;	/* LID routed: GIDs do not matter */
	if (!u->sgid_known ||
	    ibv_query_gid_ex(u->ctx, u->port, u->ah_attr.grh.sgid_index, &e, 0))
		return 0;
	return memcmp(&e.gid, &u->sgid.gid, sizeof(e.gid)) == 0 &&
	       e.gid_type == u->sgid.gid_type;
}

/* An async event of ours (ib_event.c matched it). */
static void ib_async(struct ib_transport *u, const struct ib_aev *ev, int64_t now)
{
	u->n.async++;
	switch (ev->type) {
	case IBV_EVENT_DEVICE_FATAL:
		u->dead = -ENODEV;
		break;
	case IBV_EVENT_CQ_ERR:
		u->dead = -EIO;		/* an overrun CQ: nothing to rebuild */
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		u->rebuild = 1;
		break;
	case IBV_EVENT_GID_CHANGE:
		/*
		 * On RoCE the table changes with every address change on
		 * the interface (IPv6 temporary addresses too): only the
		 * GID we send from moving is a loss.
		 */
		if (!u->server && ib_sgid_same(u))
			break;
		/* fall through */
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		/* Addresses on this port may have changed: forget them. */
		if (u->server) {
			ib_ahc_flush(&u->ahs);
		} else {
			ib_drop_ah(u);
			peer_invalidate(&u->peer, now);
		}
		break;
	default:
		break;
	}
}

/* @u's async events come to it from now on (ib_event.c). */
static void ib_sink_register(struct ib_transport *u)
{
	u->ev.ctx = u->ctx;
	u->ev.port = u->port;
	u->ev.qps = &u->q;
	u->ev.wake = u->wake;
	ib_event_register(&u->ev);
}

/*
 * An event on a cm_id we are not waiting for: the server's SIDR requests,
 * a client's address change, the device going away.  Consumes @ev.
 */
static void ib_cm_event(struct ib_transport *u, struct rdma_cm_event *ev, int64_t now)
{
	struct rdma_cm_id *req = NULL;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* A SIDR request: answer with our QP, QKey and epoch. */
		req = ev->id;
		if (!u->server || req->verbs != u->ctx ||
		    (!u->any_port && req->port_num != u->port)) {
			rdma_reject(req, NULL, 0);
			u->n.sidr_reject++;
		} else if (ib_cm_accept(&u->q, req, u->qp->qp_num, u->wildcard, u->epoch)) {
			u->n.sidr_accept++;
		} else {
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

/* What ib_cm.c meets on the own channel while it waits (ib_cm_client.other). */
static int ib_cm_other(void *arg, struct rdma_cm_event *ev)
{
	struct ib_transport *u = arg;

	ib_cm_event(u, ev, clock_monotonic_ns());
	return u->dead;
}

/* Client: a new address handle from @r replaces the old. */
static int ib_res_apply(struct ib_transport *u, const struct ib_res *r)
{
	struct ibv_ah_attr attr = r->attr;
	struct ibv_ah *ah = ibv_create_ah(u->pd, &attr);

	if (!ah)
		return errno ? -errno : -ENOMEM;
	ib_drop_ah(u);
	u->ah = ah;
	u->ah_attr = r->attr;
	u->rqpn = r->qpn;
	u->rqkey = r->qkey;
	/* The GID it sends from, to tell a GID change that matters. */
	u->sgid_known = r->attr.is_global &&
			ibv_query_gid_ex(u->ctx, u->port, r->attr.grh.sgid_index, &u->sgid, 0) == 0;
	return 0;
}

/*
 * Client: takes in the resolver's outcome, if there is one, and asks for
 * an attempt when one is due.  Returns nonzero while one runs.
 */
static int ib_resolve_step(struct ib_transport *u, int64_t now)
{
	struct ib_res r;

	if (!u->c.have_thread)
		return 0;
	if (ib_cm_resolver_take(&u->c, &r)) {
		u->n.sidr_retries += r.retries;
		if (r.rc == 0)
			r.rc = ib_res_apply(u, &r);
		if (r.rc == 0) {
			/* The routed id now holds the device: move it home. */
			if (rdma_migrate_id(r.id, u->cm) == 0) {
				if (u->id)
					rdma_destroy_id(u->id);
				u->id = r.id;
			} else {
				rdma_destroy_id(r.id);
			}
			peer_resolve_ok(&u->peer, now, r.epoch);
			u->last_err = 0;
		} else {
			if (r.id)
				rdma_destroy_id(r.id);
			peer_resolve_failed(&u->peer, now);
			u->last_err = r.rc;
		}
	}
	return ib_cm_resolver_ask(&u->c, !u->ah && !u->dead && ib_cm_resolver_idle(&u->c) &&
					 peer_resolve_due(&u->peer, now));
}

/* Client, at the open: the first SIDR exchange on the routed @id, as of @now. */
static void ib_resolve_first(struct ib_transport *u, struct rdma_cm_id *id, int64_t now)
{
	struct ib_res r;
	int rc;

	/*
	 * The server may be down: a per-exchange error, retried on the
	 * backoff.  The routed id stays until a later resolution replaces
	 * it: it holds the device.
	 */
	memset(&r, 0, sizeof(r));
	rc = ib_cm_sidr(&u->c, u->cm, id, now + IB_RESOLVE_NS, &r);
	if (rc == 0)
		rc = ib_res_apply(u, &r);
	if (rc == 0) {
		peer_resolve_ok(&u->peer, now, r.epoch);
	} else {
		peer_resolve_failed(&u->peer, now);
		u->last_err = rc;
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
 * Async and rdma_cm events, and the resolver's outcome.  @now is the
 * caller's clock reading, so that an attempt made due here is due for
 * the caller too.  The completion channel is not touched here: only
 * ib_recv() consumes its events (see there).
 */
static void ib_control(struct ib_transport *u, int64_t now)
{
	struct ib_aev mine[IB_AEV_QUEUE];
	struct rdma_cm_event *cev;
	unsigned i, n;

	u->ctl_ns = now;
	ib_unwake(u->wake);
	n = ib_event_take(&u->ev, mine);
	for (i = 0; i < n; i++)
		ib_async(u, &mine[i], now);
	while (rdma_get_cm_event(u->cm, &cev) == 0)
		ib_cm_event(u, cev, now);
	if (!u->server)
		ib_resolve_step(u, now);
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

	if (part >= IB_PARTS || !u->q.part[part].qp) {
		u->dead = -EIO;		/* not a buffer of ours */
		return -EAGAIN;
	}
	grh = u->q.part[part].mem + (size_t)i * u->q.slot;
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
		u->ahs.failed++;
		goto drop;
	}
	a.key.port = u->q.part[part].port;
	a.qpn = wc->src_qp;
	a.qkey = u->q.qkey;
	a.part = part;
	if (u->server) {
		if (!ib_ahc_get(&u->ahs, &a.key, wc, grh))
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
	if (ib_post_recv(&u->q, part, i))
		u->dead = -EIO;
	return (ssize_t)len;

drop:
	if (ib_post_recv(&u->q, part, i))
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

static ssize_t ib_devs_recv(struct ib_transport *u, struct transport_dgram *dg,
			    struct clock *clk);

static ssize_t ib_recv(struct transport *t, struct transport_dgram *d, struct clock *clk)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	struct verbs_wc vw;
	struct ibv_wc wc;
	ssize_t rc;
	int n;

	if (u->ndev)
		return ib_devs_recv(u, d, clk);

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

/*
 * A several-device server's rdma_cm: each SIDR request goes to the device
 * it came in on (one of another device is refused here), the listener's
 * own events are taken here.
 */
static void ib_devs_control(struct ib_transport *u, int64_t now)
{
	struct rdma_cm_event *ev;
	unsigned i;

	u->ctl_ns = now;
	while (rdma_get_cm_event(u->cm, &ev) == 0) {
		struct ib_transport *to = u;

		for (i = 0; ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && i < u->ndev; i++)
			if (u->dev[i]->ctx == ev->id->verbs)
				to = u->dev[i];
		ib_cm_event(to, ev, now);
	}
}

/*
 * A several-device server's receive: each device's in turn, starting
 * after the one that gave the last datagram; the address says which
 * device answers.  Each device's receive keeps transport_fd()'s promise
 * for its own set, so the set of sets keeps it too.
 */
static ssize_t ib_devs_recv(struct ib_transport *u, struct transport_dgram *dg,
			    struct clock *clk)
{
	struct transport_addr *from = &dg->peer;
	int64_t now;
	unsigned k;

	if (u->dead)
		return u->dead;
	for (k = 0; k < u->ndev; k++) {
		unsigned i = (u->next_dev + k) % u->ndev;
		struct ib_transport *d = u->dev[i];
		struct ib_addr a;
		ssize_t rc;

		d->t.spin = u->t.spin;
		rc = ib_recv(&d->t, dg, clk);
		if (rc == -EAGAIN)
			continue;
		u->next_dev = i + 1;
		if (rc >= 0 && from && from->len == sizeof(a)) {
			memcpy(&a, from->data, sizeof(a));
			a.dev = i;
			memcpy(from->data, &a, sizeof(a));
		}
		return rc;
	}
	now = clock_monotonic_ns();
	if (now - u->ctl_ns >= IB_CTL_BUSY_NS || (!u->t.spin && ib_ctl_readable(u)))
		ib_devs_control(u, now);
	return u->dead ? u->dead : -EAGAIN;
}

/* Client: the address handle to send with, or -errno. */
static int ib_client_ah(struct ib_transport *u, int64_t now)
{
	int64_t until = now + IB_RESOLVE_HOLD_NS;

	while (!u->ah && ib_resolve_step(u, clock_monotonic_ns())) {
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
		   const struct transport_addr *to, struct clock *clk, int flags);

/* A several-device server's send: by the device the address names. */
static int ib_devs_send(struct ib_transport *u, struct transport_dgram *d,
			const struct transport_addr *to, struct clock *clk, int flags)
{
	struct ib_addr a;

	if (u->dead)
		return u->dead;
	if (!to || to->len != sizeof(a))
		return -EDESTADDRREQ;
	memcpy(&a, to->data, sizeof(a));
	if (a.dev >= u->ndev)
		return -EHOSTUNREACH;
	return ib_send(&u->dev[a.dev]->t, d, to, clk, flags);
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
	unsigned sn;
	uint32_t qpn, qkey;
	unsigned char *slot;
	int64_t now = clock_monotonic_ns();
	int rc;

	if (u->ndev)
		return ib_devs_send(u, d, to, clk, flags);

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
	if (!u->server && len > u->mtu)
		return -EMSGSIZE;
	ib_reap_sends(u);
	if (u->server) {
		struct ib_addr a;

		if (!to || to->len != sizeof(a))
			return -EDESTADDRREQ;
		memcpy(&a, to->data, sizeof(a));
		if (a.part >= IB_PARTS || !u->q.part[a.part].qp)
			return -EHOSTUNREACH;
		if (len > u->q.part[a.part].mtu)
			return -EMSGSIZE;	/* its port's, not the first port's */
		ah = ib_ahc_get(&u->ahs, &a.key, NULL, NULL);
		if (!ah)
			return -EHOSTUNREACH;	/* evicted since it was received */
		qp = u->q.part[a.part].qp;
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
	slot = u->mem + (size_t)(u->q.nrecv + sn) * u->q.slot;
	memcpy(slot, buf, len);
	sge = (struct ibv_sge){ .addr = (uintptr_t)slot, .length = (uint32_t)len,
				.lkey = u->mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = sn;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | (len <= u->q.max_inline ? IBV_SEND_INLINE : 0);
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
	if (!u->stamping || u->scq.mode == VERBS_STAMP_NONE)
		d->tx_layers = 0;
	if (d->tx_layers) {
		do
			u->tx_seq += u->tx_step;
		while (!u->tx_seq);		/* 0 marks a send not asked for */
		u->send_tag[sn] = u->tx_seq;
		d->tx_id = u->tx_seq;
	}
	d->tx_at = clock_now(clk);
	if (flags & TRANSPORT_STAMP_XMT)
		ntp_put_xmt(slot, d->tx_at);
	rc = ibv_post_send(qp, &wr, &bad);
	if (rc) {
		u->send_tag[sn] = 0;
		u->n.post_err++;
		return -rc;
	}
	u->ahs.send_ah[sn] = ah;
	u->nsend_free--;
	if (flags & TRANSPORT_STAMP_XMT)
		ntp_put_xmt(buf, d->tx_at);
	if (request && !u->server && !u->outstanding) {
		u->outstanding = 1;
		u->req_ns = now;
	}
	return 0;
}

/*
 * What a receive buffer holds: the largest datagram any port served can
 * bring (one longer than its buffer errors the QP).  A wildcard's other
 * ports (dual-port mlx4, Connect-IB) may have a larger MTU than u->port
 * (@pa), and an MTU may grow up to the port's largest.
 */
static uint32_t ib_buf_mtu(struct ib_transport *u, const struct ibv_port_attr *pa)
{
	uint32_t most = 128u << pa->max_mtu;
	unsigned i;

	for (i = 1; u->any_port && i < IB_PARTS; i++) {
		uint32_t m = ib_port_mtu(u->ctx, (uint8_t)i, 1);

		if (!m)
			break;		/* ports count from 1; the first missing ends them */
		if (m > most)
			most = m;
	}
	return most < u->mtu ? u->mtu : most;
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
	u->q.buf_mtu = ib_buf_mtu(u, &pa);
	u->q.slot = IB_GRH_LEN + u->q.buf_mtu;
	u->q.nrecv = u->server ? IB_RECV_SERVER : IB_RECV_CLIENT;
	nbuf = u->q.nrecv + IB_SEND_DEPTH;
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
	u->q.ctx = u->ctx;
	u->q.pd = u->ahs.pd = u->pd;
	u->mem = aligned_alloc(4096, (nbuf * u->q.slot + 4095) / 4096 * 4096);
	if (!u->mem) {
		IB_FAIL("%s: out of memory", u->url);
		return -1;
	}
	memset(u->mem, 0, nbuf * u->q.slot);
	u->mr = ibv_reg_mr(u->pd, u->mem, nbuf * u->q.slot, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr) {
		IB_FAIL("%s: registering %zu bytes: %s", u->url, nbuf * u->q.slot, strerror(errno));
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
	u->q.qkey = RDMA_UDP_QKEY;
	if (id && rdma_init_qp_attr(id, &qa, &mask) == 0) {
		pkey_index = qa.pkey_index;
		if (qa.qkey)
			u->q.qkey = qa.qkey;
	}
	/*
	 * A QP refused for its CQs' stamp format (mlx5 in real-time mode)
	 * costs the stamps, never the transport: CQs again, a step down.
	 */
	for (;;) {
		if (verbs_cq_create(&u->vclk, &u->rcq,
				    (int)(u->server ? u->q.nrecv * IB_PARTS : u->q.nrecv), u,
				    u->chan) ||
		    verbs_cq_create(&u->vclk, &u->scq, IB_SEND_DEPTH, u, NULL)) {
			IB_FAIL("%s: completion queue: %s", u->url, strerror(errno));
			return -1;
		}
		u->qp = ib_qp_up(&u->q, u->port, pkey_index, &step);
		if (u->qp || strcmp(step, "creating") || !verbs_qp_refused(&u->vclk, errno))
			break;
		verbs_cq_destroy(&u->rcq);
		verbs_cq_destroy(&u->scq);
	}
	if (!u->qp) {
		IB_FAIL("%s: UD queue pair: %s: %s", u->url, step, strerror(errno));
		return -1;
	}
	u->q.part[0] = (struct ib_part){ .port = u->port, .pkey_index = pkey_index, .mtu = u->mtu,
				       .qp = u->qp, .mr = u->mr, .mem = u->mem };
	for (i = 0; i < u->q.nrecv; i++)
		if (ib_post_recv(&u->q, 0, i)) {
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
				ib_part_get(&u->q, p, 0);
	}
	if (ibv_req_notify_cq(u->rcq.cq, 0)) {
		IB_FAIL("%s: cannot arm the completion queue", u->url);
		return -1;
	}
	u->armed = 1;
	return 0;
}

/*
 * Server: the devices a wildcard listener serves into @out: dev=, or every
 * one rdma_cm sees that can carry UD datagrams (an iWARP one cannot), at
 * most IB_DEVS.  Each port of a ConnectX-4 or later is a device of its
 * own, so a dual-port card is two.  Their number, or -1.
 */
static int ib_pick_devices(const char *dev, struct ibv_context **out, char *err, size_t errlen,
			   const char *url)
{
	struct ibv_context **l;
	int i, num = 0, n = 0;

	l = rdma_get_devices(&num);
	if (!l) {
		IB_FAIL("%s: rdma_cm sees no device: %s", url, strerror(errno));
		return -1;
	}
	for (i = 0; i < num && n >= 0; i++) {
		if (dev ? strcmp(ibv_get_device_name(l[i]->device), dev) != 0 :
			  l[i]->device->transport_type == IBV_TRANSPORT_IWARP)
			continue;
		if (n == IB_DEVS) {
			IB_FAIL("%s: more than %d RDMA devices; choose one with dev=", url, IB_DEVS);
			n = -1;
		} else {
			out[n++] = l[i];
		}
	}
	if (n == 0)
		IB_FAIL("%s: no RDMA device (asked for %s)", url, dev ? dev : "any");
	rdma_free_devices(l);
	return n > 0 ? n : -1;
}

static void ib_close(struct transport *t)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	unsigned d;
	int p;

	for (d = 0; d < u->ndev; d++)
		ib_close(&u->dev[d]->t);
	ib_cm_resolver_stop(&u->c);
	ib_event_unregister(&u->ev);
	if (u->t.fd >= 0)
		close(u->t.fd);
	/* The QPs first: then no send can name an address handle. */
	for (p = IB_PARTS - 1; p >= 0; p--) {
		struct ib_part *pt = &u->q.part[p];

		if (pt->qp)
			ibv_destroy_qp(pt->qp);
		if (p && pt->mr)
			ibv_dereg_mr(pt->mr);
		if (p)
			free(pt->mem);
	}
	if (!u->q.part[0].qp && u->qp)
		ibv_destroy_qp(u->qp);
	memset(u->ahs.send_ah, 0, sizeof(u->ahs.send_ah));
	ib_drop_ah(u);
	ib_ahc_flush(&u->ahs);
	ib_zombies_reap(&u->ahs);
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
	if (u->c.rcm)
		rdma_destroy_event_channel(u->c.rcm);
	if (u->wake >= 0)
		close(u->wake);
	if (u->c.stopfd >= 0)
		close(u->c.stopfd);
	free(u);
}

/*
 * A transport of @role, its rdma_cm channel made, nothing else yet; NULL
 * with one line in @err.  @qkey and @gid: the client's, or -1.
 */
static struct ib_transport *ib_new(const struct endpoint *ep, enum transport_role role,
				   long qkey, long gid, char *err, size_t errlen)
{
	struct ib_transport *u = calloc(1, sizeof(*u));

	if (!u) {
		IB_FAIL("out of memory");
		return NULL;
	}
	u->t.ops = &ib_transport_ops;
	u->t.role = role;
	u->t.fd = -1;
	u->top = &u->t;
	u->tx_step = 1;
	u->c.stopfd = -1;
	snprintf(u->url, sizeof(u->url), "%s", ep->url);
	u->server = role == TRANSPORT_SERVER;
	u->q.rcq = &u->rcq;
	u->q.scq = &u->scq;
	u->q.nsend = IB_SEND_DEPTH;
	u->ahs.reap = ib_ahs_reap;
	u->c.qkey_forced = qkey;
	u->c.gid_index = (int)gid;
	u->c.other = ib_cm_other;
	u->c.arg = u;
	peer_init(&u->peer, NULL);
	u->wake = u->c.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (u->wake < 0) {
		IB_FAIL("%s: eventfd: %s", ep->url, strerror(errno));
		ib_close(&u->t);
		return NULL;
	}
	u->cm = u->c.cm = rdma_create_event_channel();
	if (!u->cm || ib_nonblock(u->cm->fd)) {
		IB_FAIL("%s: rdma_cm event channel: %s", ep->url, strerror(errno));
		ib_close(&u->t);
		return NULL;
	}
	return u;
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
 * address's, or for a wildcard (bound to no device) dev= or every device
 * (*@ndev of them in @ctx, u->ctx when there is one), port= or every
 * active port.
 */
static int ib_server_bind(struct ib_transport *u, const struct endpoint *ep, const char *host,
			  const char *dev, long port, struct ibv_context **ctx, int *ndev,
			  char *err, size_t errlen)
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
		*ndev = ib_pick_devices(dev, ctx, err, errlen, ep->url);
		if (*ndev < 0)
			return -1;
		u->ctx = *ndev == 1 ? ctx[0] : NULL;
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

static int ib_open_fds(struct ib_transport *u, const char *url, char *err, size_t errlen);

/*
 * A wildcard server on several devices: on each a server of its own,
 * bound to nothing and listening to nothing (@u listens for them all),
 * whose stamps and send ids are @u's.
 */
static int ib_devs_open(struct ib_transport *u, const struct endpoint *ep,
			struct ibv_context **ctx, int n, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ib_transport *d = ib_new(ep, TRANSPORT_SERVER, -1, -1, err, errlen);

		if (!d)
			return -1;
		u->dev[u->ndev++] = d;
		snprintf(d->url, sizeof(d->url), "%.400s on %.64s", ep->url,
			 ibv_get_device_name(ctx[i]->device));
		d->top = &u->t;
		d->tx_seq = (uint32_t)i;
		d->tx_step = (uint32_t)n;
		d->epoch = u->epoch;
		d->ctx = ctx[i];
		d->port = u->port;
		d->wildcard = 1;
		d->any_port = u->any_port;
		if (ib_datapath(d, NULL, err, errlen) || ib_open_fds(d, d->url, err, errlen))
			return -1;
		ib_sink_register(d);
		d->ctl_ns = clock_monotonic_ns();
	}
	return 0;
}

/* Server: its epoch drawn, bound, its data path built, listening. */
static int ib_open_server(struct ib_transport *u, const struct endpoint *ep, const char *dev,
			  long port, char *err, size_t errlen)
{
	const char *host = strcmp(ep->host, "*") ? ep->host : "0.0.0.0";
	struct ibv_context *ctx[IB_DEVS];
	int ndev = 1;

	u->epoch = ib_server_epoch();
	if (ib_server_bind(u, ep, host, dev, port, ctx, &ndev, err, errlen))
		return -1;
	if (ndev > 1 ? ib_devs_open(u, ep, ctx, ndev, err, errlen) :
		       ib_datapath(u, u->id->verbs ? u->id : NULL, err, errlen))
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

	if (ib_sockaddr(ep->host, ep->port, 0, &u->c.dst, err, errlen))
		return -1;
	/*
	 * Address and route must resolve now: they name the device
	 * and port the data path is built on, and their failure is
	 * local (no IPoIB route).  The server itself may be absent:
	 * that is a per-exchange error, found again later.
	 */
	rc = ib_cm_route(&u->c, u->cm, now + IB_RESOLVE_NS, &u->id);
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
	u->c.ctx = u->ctx;
	u->c.port = u->port;
	u->c.qpn = u->qp->qp_num;
	ib_resolve_first(u, route, now);
	return ib_cm_resolver_start(&u->c, ep->url, err, errlen);
}

/*
 * The transport's fd: an epoll set of the completion channel, the
 * device's async events, rdma_cm and the wakeup, tagged IB_FD_*.
 */
static int ib_open_fds(struct ib_transport *u, const char *url, char *err, size_t errlen)
{
	struct epoll_event ee = { .events = EPOLLIN };
	int fds[4], i;

	u->t.fd = epoll_create1(EPOLL_CLOEXEC);
	if (u->t.fd < 0 || ib_nonblock(u->ctx->async_fd)) {
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

/*
 * A several-device server's fd: an epoll set of its rdma_cm channel and
 * each device's own set (IB_FD_DEV + its index).
 */
static int ib_devs_fds(struct ib_transport *u, const char *url, char *err, size_t errlen)
{
	struct epoll_event ee = { .events = EPOLLIN, .data.u32 = IB_FD_CM };
	unsigned i;

	u->t.fd = epoll_create1(EPOLL_CLOEXEC);
	if (u->t.fd < 0 || epoll_ctl(u->t.fd, EPOLL_CTL_ADD, u->cm->fd, &ee)) {
		IB_FAIL("%s: epoll: %s", url, strerror(errno));
		return -1;
	}
	for (i = 0; i < u->ndev; i++) {
		ee.data.u32 = IB_FD_DEV + i;
		if (epoll_ctl(u->t.fd, EPOLL_CTL_ADD, u->dev[i]->t.fd, &ee)) {
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
	u = ib_new(ep, role, qkey, gid, err, errlen);
	if (!u)
		return NULL;
	if (u->server ? ib_open_server(u, ep, dev, port, err, errlen) :
			ib_open_client(u, ep, dev, port, err, errlen))
		goto fail;
	if (u->ndev ? ib_devs_fds(u, ep->url, err, errlen) : ib_open_fds(u, ep->url, err, errlen))
		goto fail;
	if (!u->ndev)
		ib_sink_register(u);
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
	unsigned i;

	if (u->ndev) {
		/* Each device's; a layer is offered when one device offers it. */
		for (i = 0; i < u->ndev; i++) {
			const struct transport_stamp_state *d = &u->dev[i]->t.st;

			ib_stamps_enable(&u->dev[i]->t, err, errlen);
			if (!t->st.rx_layers) {
				t->st.rx_layers = d->rx_layers;
				t->st.rx_src[TRANSPORT_LAYER_H] = d->rx_src[TRANSPORT_LAYER_H];
				t->st.rx_why[TRANSPORT_LAYER_H] = d->rx_why[TRANSPORT_LAYER_H];
			}
			if (!t->st.tx_layers) {
				t->st.tx_layers = d->tx_layers;
				t->st.tx_src[TRANSPORT_LAYER_H] = d->tx_src[TRANSPORT_LAYER_H];
				t->st.tx_why[TRANSPORT_LAYER_H] = d->tx_why[TRANSPORT_LAYER_H];
				t->st.tx_spin = d->tx_spin;
			}
		}
		return 0;
	}
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
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	unsigned i;

	for (i = 0; i < u->ndev; i++)
		ib_reap_sends(u->dev[i]);
	ib_reap_sends(u);
}

/* @sum += @c, counter by counter. */
static void ib_count_add(struct ib_count *sum, const struct ib_count *c)
{
	uint64_t a[sizeof(*sum) / sizeof(uint64_t)], b[sizeof(*sum) / sizeof(uint64_t)];
	size_t i;

	_Static_assert(sizeof(struct ib_count) % sizeof(uint64_t) == 0,
		       "struct ib_count holds counters only");
	memcpy(a, sum, sizeof(a));
	memcpy(b, c, sizeof(b));
	for (i = 0; i < ARRAY_SIZE(a); i++)
		a[i] += b[i];
	memcpy(sum, a, sizeof(a));
}

static void ib_counters(struct transport *t, char *buf, size_t len)
{
	struct ib_transport *u = container_of(t, struct ib_transport, t);
	const struct peer_counters *c = &u->peer.count;
	const struct ib_transport *m = u->ndev ? u->dev[0] : u;	/* whose stamps= */
	struct ib_count k = u->n;
	struct ib_ahs ah = u->ahs;		/* its counters, summed */
	uint64_t poll_errors = u->rcq.poll_errors + u->scq.poll_errors;
	uint64_t stamp_errors = u->vclk.errors;
	size_t n = 0;
	unsigned i;
	int v;

	for (i = 0; i < u->ndev; i++) {	/* a several-device server: their sums */
		const struct ib_transport *d = u->dev[i];

		ib_count_add(&k, &d->n);
		ah.made += d->ahs.made;
		ah.evicted += d->ahs.evicted;
		ah.failed += d->ahs.failed;
		ah.deferred += d->ahs.deferred;
		poll_errors += d->rcq.poll_errors + d->scq.poll_errors;
		stamp_errors += d->vclk.errors;
	}
	for (v = IB_RECV_WC_ERROR; v < IB_RECV_NVERDICTS && n < len; v++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%llu", n ? " " : "",
				      ib_verdict_names[v], (unsigned long long)k.bad[v]);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      " epoch=%llu send_err=%llu post_err=%llu poll_errors=%llu"
				      " async=%llu qp_rebuilds=%llu stamps=%s stamp_errors=%llu",
				      (unsigned long long)k.epoch,
				      (unsigned long long)k.send_err,
				      (unsigned long long)k.post_err,
				      (unsigned long long)poll_errors,
				      (unsigned long long)k.async,
				      (unsigned long long)k.qp_rebuilds,
				      m->rcq.mode == VERBS_STAMP_RAW ? "raw" :
				      m->rcq.mode == VERBS_STAMP_WALLCLOCK ? "wallclock" : "none",
				      (unsigned long long)stamp_errors);
	if (n >= len)
		return;
	if (u->server)
		snprintf(buf + n, len - n, " sidr_accept=%llu sidr_reject=%llu ah_new=%llu"
			 " ah_evict=%llu ah_fail=%llu ah_deferred=%llu",
			 (unsigned long long)k.sidr_accept, (unsigned long long)k.sidr_reject,
			 (unsigned long long)ah.made, (unsigned long long)ah.evicted,
			 (unsigned long long)ah.failed, (unsigned long long)ah.deferred);
	else
		snprintf(buf + n, len - n, " replies=%llu misses=%llu losses=%llu"
			 " resolutions=%llu resolve_failures=%llu sidr_retries=%llu resets=%llu",
			 (unsigned long long)c->replies, (unsigned long long)c->misses,
			 (unsigned long long)c->losses, (unsigned long long)c->resolutions,
			 (unsigned long long)c->resolve_failures,
			 (unsigned long long)k.sidr_retries, (unsigned long long)c->resets);
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
