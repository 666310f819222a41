/* SPDX-License-Identifier: ISC */
/*
 * ib_cm.c - the ib transport's rdma_cm (RDMA_PS_UDP).  A server answers
 * each SIDR request with the QP of the port and partition it came in on
 * (ib_qp.c), its QKey and its epoch.  A client resolves address and
 * route and "connects", which is a SIDR exchange: its answer gives the
 * server's QPN, QKey, an address handle's attributes and, in the private
 * data, the server's epoch.  The first resolution runs at the open; later
 * ones in a resolver thread of their own, on a channel of their own, with
 * IB_SIDR_TRIES tries of growing patience, since the kernel's own SIDR
 * retry comes only after seconds.  What an outcome or another event
 * means for the transport is its owner's (ib.c): the address handle, the
 * peer, the counters.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>

#include "ib_wire.h"
#include "ib_cm_private.h"
#include "opt_units.h"
#include "peer.h"
#include "clock_read.h"

#define IB_SIDR_TRIES	3		/* SIDR requests per resolution... */
#define IB_SIDR_TRY_NS	(100 * NTPX_NS_PER_MS) /* ...the first waited for this long,
					   each next one twice as long */

static int ib_ms_left(int64_t deadline)
{
	int64_t left = (deadline - clock_monotonic_ns()) / NTPX_NS_PER_MS;

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

int ib_cm_accept(struct ib_qps *q, struct rdma_cm_id *req, uint32_t qpn, int wildcard,
		 uint32_t epoch)
{
	uint32_t pd[2] = { htobe32(IB_SIDR_MAGIC), htobe32(epoch) };
	struct rdma_conn_param p = {
		.private_data = pd, .private_data_len = sizeof(pd), .qp_num = qpn,
	};
	struct ibv_qp_attr qa;
	int mask, part = 0;

	/*
	 * A wildcard server answers on the port and in the partition of the
	 * interface the request came in on, as rdma_cm says: one QP for each.
	 */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	if (wildcard)
		part = ib_part_get(q, req->port_num,
				   rdma_init_qp_attr(req, &qa, &mask) == 0 ? qa.pkey_index : 0);
	if (part >= 0)
		p.qp_num = q->part[part].qp->qp_num;
	if (part >= 0 && rdma_accept(req, &p) == 0)
		return 1;
	if (part < 0)
		rdma_reject(req, NULL, 0);
	return 0;
}

/*
 * Waits until @deadline for the next event on @id on channel @ch.  On
 * the transport's own channel the others that arrive meanwhile are
 * handled; on the resolver's they can only be of ids given up, and are
 * acked.  The resolver also stops when close asks it to.  Returns 0 with
 * *@out (to be acked) or -errno.
 */
static int ib_cm_wait(struct ib_cm_client *c, struct rdma_event_channel *ch,
		      struct rdma_cm_id *id, int64_t deadline, struct rdma_cm_event **out)
{
	int own = ch == c->cm;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = ch->fd, .events = POLLIN },
					 { .fd = c->stopfd, .events = POLLIN } };
		struct rdma_cm_event *ev;

		if (rdma_get_cm_event(ch, &ev) == 0) {
			if (ev->id == id) {
				*out = ev;
				return 0;
			}
			if (own) {
				int dead = c->other(c->arg, ev);

				if (dead)
					return dead;
			} else {
				rdma_ack_cm_event(ev);
			}
			continue;
		}
		if (errno != EAGAIN)
			return -errno;
		if (clock_monotonic_ns() >= deadline)
			return -ETIMEDOUT;
		if (poll(pfd, own || c->stopfd < 0 ? 1 : 2, ib_ms_left(deadline)) < 0 &&
		    errno != EINTR)
			return -errno;
		if (pfd[1].revents)
			return -ECANCELED;
	}
}

/* Waits for @want on @id; any other event on it is its failure. */
static int ib_cm_expect(struct ib_cm_client *c, struct rdma_event_channel *ch,
			struct rdma_cm_id *id, enum rdma_cm_event_type want, int64_t deadline,
			struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev = NULL;
	int rc = ib_cm_wait(c, ch, id, deadline, &ev);

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
int ib_cm_route(struct ib_cm_client *c, struct rdma_event_channel *ch, int64_t deadline,
		struct rdma_cm_id **idp)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int rc;

	if (rdma_create_id(ch, &id, c->arg, RDMA_PS_UDP))
		return -errno;
	if (rdma_resolve_addr(id, c->have_src ? (struct sockaddr *)&c->src : NULL,
			      (struct sockaddr *)&c->dst, ib_ms_left(deadline))) {
		rc = -errno;
		goto no_addr;
	}
	rc = ib_cm_expect(c, ch, id, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &ev);
	if (rc)
		goto no_addr;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, ib_ms_left(deadline))) {
		rc = -errno;
		goto no_route;
	}
	rc = ib_cm_expect(c, ch, id, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, &ev);
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
 * Client: the SIDR exchange on a routed @id (channel @ch).  Touches
 * nothing of @c that changes after the open, so that the resolver thread
 * may run it.
 */
int ib_cm_sidr(struct ib_cm_client *c, struct rdma_event_channel *ch, struct rdma_cm_id *id,
	       int64_t deadline, struct ib_res *r)
{
	struct rdma_conn_param p = { .qp_num = c->qpn };
	struct rdma_cm_event *ev;
	int rc;

	if (id->verbs != c->ctx || id->port_num != c->port)
		return -ENETUNREACH;	/* the route moved to another HCA port */
	if (rdma_connect(id, &p))
		return -errno;
	rc = ib_cm_expect(c, ch, id, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev);
	if (rc)
		return rc;
	r->attr = ev->param.ud.ah_attr;
	if (c->gid_index >= 0 && r->attr.is_global)
		r->attr.grh.sgid_index = (uint8_t)c->gid_index;
	r->epoch = PEER_EPOCH_NONE;
	if (ev->param.ud.private_data && ev->param.ud.private_data_len >= 8) {
		uint32_t pd[2];

		memcpy(pd, ev->param.ud.private_data, sizeof(pd));
		if (be32toh(pd[0]) == IB_SIDR_MAGIC)
			r->epoch = be32toh(pd[1]);
	}
	r->qpn = ev->param.ud.qp_num;
	r->qkey = c->qkey_forced >= 0 ? (uint32_t)c->qkey_forced : ev->param.ud.qkey;
	rdma_ack_cm_event(ev);
	return r->attr.port_num != c->port ? -ENETUNREACH : 0;
}

/*
 * The resolver thread's work: address, route and SIDR on its own
 * channel, the SIDR sent again with twice the patience when its reply
 * does not come (it may be lost; the kernel's own retry is seconds away).
 */
static void ib_attempt(struct ib_cm_client *c, struct ib_res *r)
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
		rc = ib_cm_route(c, c->rcm, now + IB_RESOLVE_NS, &id);
		if (rc)
			break;
		rc = ib_cm_sidr(c, c->rcm, id, clock_monotonic_ns() + patience, r);
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
	struct ib_cm_client *c = arg;
	struct ib_res r;

	pthread_mutex_lock(&c->rmu);
	for (;;) {
		while (!c->want && !c->stop)
			pthread_cond_wait(&c->rcv, &c->rmu);
		if (c->stop)
			break;
		c->want = 0;
		c->busy = 1;
		pthread_mutex_unlock(&c->rmu);
		ib_attempt(c, &r);
		pthread_mutex_lock(&c->rmu);
		c->busy = 0;
		if (c->stop) {
			if (r.id)
				rdma_destroy_id(r.id);
			break;
		}
		c->res = r;
		c->done = 1;
		ib_wake(c->wake);
	}
	pthread_mutex_unlock(&c->rmu);
	return NULL;
}

int ib_cm_resolver_take(struct ib_cm_client *c, struct ib_res *r)
{
	int done;

	pthread_mutex_lock(&c->rmu);
	done = c->done;
	if (done) {
		*r = c->res;
		c->done = 0;
	}
	pthread_mutex_unlock(&c->rmu);
	return done;
}

int ib_cm_resolver_idle(struct ib_cm_client *c)
{
	int idle;

	pthread_mutex_lock(&c->rmu);
	idle = !c->busy && !c->want && !c->done;
	pthread_mutex_unlock(&c->rmu);
	return idle;
}

int ib_cm_resolver_ask(struct ib_cm_client *c, int want)
{
	int running;

	pthread_mutex_lock(&c->rmu);
	if (want && !c->busy && !c->want && !c->done) {
		c->want = 1;
		pthread_cond_signal(&c->rcv);
	}
	running = c->want || c->busy || c->done;
	pthread_mutex_unlock(&c->rmu);
	return running;
}

/* Later resolutions run in a thread, on a channel of their own. */
int ib_cm_resolver_start(struct ib_cm_client *c, const char *url, char *err, size_t errlen)
{
	int rc;

	c->rcm = rdma_create_event_channel();
	c->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!c->rcm || c->stopfd < 0 || ib_nonblock(c->rcm->fd)) {
		snprintf(err, errlen, "%s: rdma_cm event channel: %s", url, strerror(errno));
		return -1;
	}
	pthread_mutex_init(&c->rmu, NULL);
	pthread_cond_init(&c->rcv, NULL);
	rc = pthread_create(&c->th, NULL, ib_resolver, c);
	if (rc) {
		pthread_cond_destroy(&c->rcv);
		pthread_mutex_destroy(&c->rmu);
		snprintf(err, errlen, "%s: resolver thread: %s", url, strerror(rc));
		return -1;
	}
	c->have_thread = 1;
	return 0;
}

void ib_cm_resolver_stop(struct ib_cm_client *c)
{
	if (!c->have_thread)
		return;
	pthread_mutex_lock(&c->rmu);
	c->stop = 1;
	pthread_cond_signal(&c->rcv);
	pthread_mutex_unlock(&c->rmu);
	ib_wake(c->stopfd);
	pthread_join(c->th, NULL);
	if (c->done && c->res.id)
		rdma_destroy_id(c->res.id);
	pthread_cond_destroy(&c->rcv);
	pthread_mutex_destroy(&c->rmu);
}
