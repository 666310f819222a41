/* SPDX-License-Identifier: ISC */
/*
 * ib_cm.c - the ib transport's rdma_cm (RDMA_PS_UDP), where each event
 * has a handler of its own.  A server answers each SIDR request with the
 * QP of the port and partition it came in on (ib_qp.c), its QKey and its
 * epoch.  A client resolves address and route and "connects", which is
 * a SIDR exchange: its answer gives the server's QPN, QKey, an address
 * handle's attributes and, in the private data, the server's epoch.  The
 * first resolution runs at the open; later ones in a resolver thread of
 * their own, on a channel of their own, with IB_SIDR_TRIES tries of
 * growing patience, since the kernel's own SIDR retry comes only after
 * seconds.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>

#include "ib_private.h"

#define IB_SIDR_TRIES	3		/* SIDR requests per resolution... */
#define IB_SIDR_TRY_NS	(100 * 1000000LL) /* ...the first waited for this long,
					   each next one twice as long */

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

/*
 * An event on a cm_id we are not waiting for: the server's SIDR requests,
 * a client's address change, the device going away.  Consumes @ev.
 */
void ib_cm_other(struct ib_transport *u, struct rdma_cm_event *ev, int64_t now)
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
		} else {
			uint32_t pd[2] = { htobe32(IB_SIDR_MAGIC), htobe32(u->epoch) };
			struct rdma_conn_param p = {
				.private_data = pd, .private_data_len = sizeof(pd),
				.qp_num = u->qp->qp_num,
			};
			struct ibv_qp_attr qa;
			int mask, part = 0;

			/*
			 * A wildcard server answers on the port and in the
			 * partition of the interface the request came in on,
			 * as rdma_cm says: one QP for each.
			 */
			memset(&qa, 0, sizeof(qa));
			qa.qp_state = IBV_QPS_INIT;
			if (u->wildcard)
				part = ib_part_get(u, req->port_num,
						   rdma_init_qp_attr(req, &qa, &mask) == 0 ?
						   qa.pkey_index : 0);
			if (part >= 0)
				p.qp_num = u->part[part].qp->qp_num;
			if (part >= 0 && rdma_accept(req, &p) == 0) {
				u->n.sidr_accept++;
			} else {
				if (part < 0)
					rdma_reject(req, NULL, 0);
				u->n.sidr_reject++;
			}
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
 * Waits until @deadline for the next event on @id on channel @ch.  On
 * the transport's own channel the others that arrive meanwhile are
 * handled; on the resolver's they can only be of ids given up, and are
 * acked.  The resolver also stops when close asks it to.  Returns 0 with
 * *@out (to be acked) or -errno.
 */
static int ib_cm_wait(struct ib_transport *u, struct rdma_event_channel *ch,
		      struct rdma_cm_id *id, int64_t deadline, struct rdma_cm_event **out)
{
	int own = ch == u->cm;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = ch->fd, .events = POLLIN },
					 { .fd = u->stopfd, .events = POLLIN } };
		struct rdma_cm_event *ev;

		if (rdma_get_cm_event(ch, &ev) == 0) {
			if (ev->id == id) {
				*out = ev;
				return 0;
			}
			if (own) {
				ib_cm_other(u, ev, clock_monotonic_ns());
				if (u->dead)
					return u->dead;
			} else {
				rdma_ack_cm_event(ev);
			}
			continue;
		}
		if (errno != EAGAIN)
			return -errno;
		if (clock_monotonic_ns() >= deadline)
			return -ETIMEDOUT;
		if (poll(pfd, own || u->stopfd < 0 ? 1 : 2, ib_ms_left(deadline)) < 0 &&
		    errno != EINTR)
			return -errno;
		if (pfd[1].revents)
			return -ECANCELED;
	}
}

/* Waits for @want on @id; any other event on it is its failure. */
static int ib_cm_expect(struct ib_transport *u, struct rdma_event_channel *ch,
			struct rdma_cm_id *id, enum rdma_cm_event_type want, int64_t deadline,
			struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev = NULL;
	int rc = ib_cm_wait(u, ch, id, deadline, &ev);

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
 * Client: a fresh cm_id on @ch with address and route resolved towards
 * the server.  Returns 0 with *@idp, or -errno.
 */
int ib_cm_route(struct ib_transport *u, struct rdma_event_channel *ch, int64_t deadline,
		struct rdma_cm_id **idp)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int rc;

	if (rdma_create_id(ch, &id, u, RDMA_PS_UDP))
		return -errno;
	if (rdma_resolve_addr(id, u->have_src ? (struct sockaddr *)&u->src : NULL,
			      (struct sockaddr *)&u->dst, ib_ms_left(deadline))) {
		rc = -errno;
		goto no_addr;
	}
	rc = ib_cm_expect(u, ch, id, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &ev);
	if (rc)
		goto no_addr;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, ib_ms_left(deadline))) {
		rc = -errno;
		goto no_route;
	}
	rc = ib_cm_expect(u, ch, id, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, &ev);
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
 * Client: the SIDR exchange on a routed @id (channel @ch).  On success
 * @r holds the server's QPN, QKey, epoch and the address handle's
 * attributes.  Touches nothing of @u that changes after the open, so
 * that the resolver thread may run it.
 */
static int ib_cm_sidr(struct ib_transport *u, struct rdma_event_channel *ch,
		      struct rdma_cm_id *id, int64_t deadline, struct ib_res *r)
{
	struct rdma_conn_param p = { .qp_num = u->qp->qp_num };
	struct rdma_cm_event *ev;
	int rc;

	if (id->verbs != u->ctx || id->port_num != u->port)
		return -ENETUNREACH;	/* the route moved to another HCA port */
	if (rdma_connect(id, &p))
		return -errno;
	rc = ib_cm_expect(u, ch, id, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev);
	if (rc)
		return rc;
	r->attr = ev->param.ud.ah_attr;
	if (u->gid_index >= 0 && r->attr.is_global)
		r->attr.grh.sgid_index = (uint8_t)u->gid_index;
	r->epoch = PEER_EPOCH_NONE;
	if (ev->param.ud.private_data && ev->param.ud.private_data_len >= 8) {
		uint32_t pd[2];

		memcpy(pd, ev->param.ud.private_data, sizeof(pd));
		if (be32toh(pd[0]) == IB_SIDR_MAGIC)
			r->epoch = be32toh(pd[1]);
	}
	r->qpn = ev->param.ud.qp_num;
	r->qkey = u->qkey_forced >= 0 ? (uint32_t)u->qkey_forced : ev->param.ud.qkey;
	rdma_ack_cm_event(ev);
	return r->attr.port_num != u->port ? -ENETUNREACH : 0;
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
 * The resolver thread's work: address, route and SIDR on its own
 * channel, the SIDR sent again with twice the patience when its reply
 * does not come (it may be lost; the kernel's own retry is seconds away).
 */
static void ib_attempt(struct ib_transport *u, struct ib_res *r)
{
	int64_t patience = IB_SIDR_TRY_NS;
	unsigned try;
	int rc = -ETIMEDOUT;

	memset(r, 0, sizeof(*r));
	for (try = 0; try < IB_SIDR_TRIES; try++, patience *= 2) {
		struct rdma_cm_id *id;
		int64_t now = clock_monotonic_ns();

		if (try)
			r->retries++;
		rc = ib_cm_route(u, u->rcm, now + IB_RESOLVE_NS, &id);
		if (rc)
			break;
		rc = ib_cm_sidr(u, u->rcm, id, clock_monotonic_ns() + patience, r);
		if (rc == 0) {
			r->id = id;
			break;
		}
		rdma_destroy_id(id);
		if (rc != -ETIMEDOUT)
			break;
	}
	r->rc = rc;
}

static void *ib_resolver(void *arg)
{
	struct ib_transport *u = arg;
	struct ib_res r;

	pthread_mutex_lock(&u->rmu);
	for (;;) {
		while (!u->want && !u->stop)
			pthread_cond_wait(&u->rcv, &u->rmu);
		if (u->stop)
			break;
		u->want = 0;
		u->busy = 1;
		pthread_mutex_unlock(&u->rmu);
		ib_attempt(u, &r);
		pthread_mutex_lock(&u->rmu);
		u->busy = 0;
		if (u->stop) {
			if (r.id)
				rdma_destroy_id(r.id);
			break;
		}
		u->res = r;
		u->done = 1;
		ib_wake(u->wake);
	}
	pthread_mutex_unlock(&u->rmu);
	return NULL;
}

/*
 * Client: takes in the resolver's outcome, if there is one, and asks for
 * an attempt when one is due.  Returns nonzero while one runs.
 */
int ib_cm_resolve_step(struct ib_transport *u, int64_t now)
{
	struct ib_res r;
	int done, running;

	if (!u->have_thread)
		return 0;
	pthread_mutex_lock(&u->rmu);
	done = u->done;
	if (done) {
		r = u->res;
		u->done = 0;
	}
	pthread_mutex_unlock(&u->rmu);
	if (done) {
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
	pthread_mutex_lock(&u->rmu);
	if (!u->ah && !u->busy && !u->want && !u->done && !u->dead &&
	    peer_resolve_due(&u->peer, now)) {
		u->want = 1;
		pthread_cond_signal(&u->rcv);
	}
	running = u->want || u->busy || u->done;
	pthread_mutex_unlock(&u->rmu);
	return running;
}

void ib_cm_resolve_first(struct ib_transport *u, struct rdma_cm_id *id, int64_t now)
{
	struct ib_res r;
	int rc;

	/*
	 * The server may be down: a per-exchange error, retried on the
	 * backoff.  The routed id stays until a later resolution replaces
	 * it: it holds the device.
	 */
	memset(&r, 0, sizeof(r));
	rc = ib_cm_sidr(u, u->cm, id, now + IB_RESOLVE_NS, &r);
	if (rc == 0)
		rc = ib_res_apply(u, &r);
	if (rc == 0) {
		peer_resolve_ok(&u->peer, now, r.epoch);
	} else {
		peer_resolve_failed(&u->peer, now);
		u->last_err = rc;
	}
}

/* Later resolutions run in a thread, on a channel of their own. */
int ib_cm_resolver_start(struct ib_transport *u, const char *url, char *err, size_t errlen)
{
	int rc;

	u->rcm = rdma_create_event_channel();
	u->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!u->rcm || u->stopfd < 0 || ib_nonblock(u->rcm->fd)) {
		IB_FAIL("%s: rdma_cm event channel: %s", url, strerror(errno));
		return -1;
	}
	pthread_mutex_init(&u->rmu, NULL);
	pthread_cond_init(&u->rcv, NULL);
	rc = pthread_create(&u->th, NULL, ib_resolver, u);
	if (rc) {
		pthread_cond_destroy(&u->rcv);
		pthread_mutex_destroy(&u->rmu);
		IB_FAIL("%s: resolver thread: %s", url, strerror(rc));
		return -1;
	}
	u->have_thread = 1;
	return 0;
}

void ib_cm_resolver_stop(struct ib_transport *u)
{
	if (!u->have_thread)
		return;
	pthread_mutex_lock(&u->rmu);
	u->stop = 1;
	pthread_cond_signal(&u->rcv);
	pthread_mutex_unlock(&u->rmu);
	ib_wake(u->stopfd);
	pthread_join(u->th, NULL);
	if (u->done && u->res.id)
		rdma_destroy_id(u->res.id);
	pthread_cond_destroy(&u->rcv);
	pthread_mutex_destroy(&u->rmu);
}
