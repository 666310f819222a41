/*
 * lib/ib.c driven over a simulated fabric.
 *
 * THIS IS A MOCK, and it says so: no host here has an RDMA device (the
 * kernel has no RDMA support, so neither rdma_rxe nor siw can be made),
 * and the data path and rediscovery of lib/ib.c must still run somewhere
 * before they meet hardware.  This file defines the libibverbs and
 * librdmacm calls lib/ib.c makes; the executable's definitions take
 * precedence over the shared libraries, and the inline verbs (post_send,
 * poll_cq...) dispatch through the fake context's ops.  The fabric moves
 * datagrams between UD QPs by QPN, drops what carries a wrong QKey or
 * finds no posted receive (as an HCA does), puts a 40-byte GRH in front,
 * answers SIDR through the listener's event channel, and raises
 * completion-channel and async events through real pipes, so that the
 * epoll/poll waiting in lib/ib.c and lib/transport.c is the real one.
 *
 * What it proves: the miss run, epoch and async-event paths find a
 * restarted server and tell the caller to reset; bad input is counted and
 * dropped without draining the receive pool; a wrong QKey gets nothing;
 * the server's address-handle cache stays bounded.  What it cannot prove:
 * anything about a real HCA, rdma_cm or timing (tests/hw/ib.t).
 *
 * Devices: fake0 (lid 1) holds the server's address 10.9.0.1, fake1
 * (lid 2) is where a client's route to it leaves.  The server runs in a
 * thread, answering like ntpreflect.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "clock.h"
#include "ib.h"
#include "ntp.h"
#include "peer.h"
#include "transport.h"

#define MS		1000000LL
#define SERVER_ADDR	"10.9.0.1"
#define NDEV		2
#define CQ_CAP		2048
#define RQ_CAP		1024

/* ---- the fabric ---------------------------------------------------- */

static pthread_mutex_t fab = PTHREAD_MUTEX_INITIALIZER;

struct fdev {
	struct ibv_device dev;
	struct ibv_context ctx;
	int apipe[2];			/* async events: one byte each */
	enum ibv_event_type aq[64];
	int an;
	int down;			/* port 1 is down: nothing moves */
	uint16_t lid;
};

struct fchan {
	struct ibv_comp_channel ch;
	int pipe[2];
	struct ibv_cq *cq;
};

struct fcq {
	struct ibv_cq cq;
	struct ibv_wc q[CQ_CAP];
	int head, n;
	int armed;
	struct fchan *chan;
};

struct frecv {
	uint64_t wr_id;
	uint64_t addr;
	uint32_t length;
};

struct fqp {
	struct ibv_qp qp;
	struct fdev *dev;
	uint32_t qkey;
	struct frecv rq[RQ_CAP];
	int rhead, rn;
	int sig_all;
	struct fqp *next;
};

struct fcm {
	struct rdma_event_channel ch;
	int pipe[2];
	struct rdma_cm_event *q[64];
	int head, n;
};

struct fid {
	struct rdma_cm_id id;
	uint16_t port;
	int listening;
	struct fid *client;		/* a SIDR request: who asked */
	struct fid *next;
};

struct fevent {
	struct rdma_cm_event ev;
	unsigned char pd[136];		/* IB_CM_SIDR_REP_PRIVATE_DATA_SIZE */
};

static struct fdev devs[NDEV];
static int ndevs = NDEV;		/* 0: a host without RDMA */
static struct fqp *qps;
static struct fid *ids;
static uint32_t next_qpn = 0x100;
static uint32_t force_qpn;		/* nonzero: the next QP gets it */
static int ah_live;			/* address handles not destroyed */

static struct ibv_context_ops fake_ops;

static struct fqp *fab_qp(uint32_t qpn)
{
	struct fqp *q;

	for (q = qps; q; q = q->next)
		if (q->qp.qp_num == qpn)
			return q;
	return NULL;
}

static struct fqp *fab_qp_on(int d)
{
	struct fqp *q, *last = NULL;

	for (q = qps; q; q = q->next)
		if (q->dev == &devs[d])
			last = q;
	return last;
}

static int fab_id_alive(struct fid *f)
{
	struct fid *i;

	for (i = ids; i; i = i->next)
		if (i == f)
			return 1;
	return 0;
}

static void poke(int fd)
{
	char c = 1;

	assert_int_equal(write(fd, &c, 1), 1);
}

static void cq_push(struct fcq *c, const struct ibv_wc *wc)
{
	if (c->n == CQ_CAP)
		return;		/* overrun: lost, as on an HCA without CQ room */
	c->q[(c->head + c->n++) % CQ_CAP] = *wc;
	if (c->armed && c->chan) {
		c->armed = 0;
		poke(c->chan->pipe[1]);
	}
}

/*
 * Puts a datagram into @dst's next posted receive, behind a zero GRH, and
 * its completion into the receive CQ: what the HCA does on arrival.
 * Called with fab held.
 */
static void deliver(struct fqp *dst, const struct ibv_wc *tmpl, const void *data, uint32_t len)
{
	struct ibv_wc wc = *tmpl;
	struct frecv r;

	if (!dst->rn)
		return;		/* no receive posted: UD drops it */
	r = dst->rq[dst->rhead];
	dst->rhead = (dst->rhead + 1) % RQ_CAP;
	dst->rn--;
	if (IB_GRH_LEN + len > r.length)
		len = r.length - IB_GRH_LEN;
	memset((void *)(uintptr_t)r.addr, 0, IB_GRH_LEN);
	memcpy((unsigned char *)(uintptr_t)r.addr + IB_GRH_LEN, data, len);
	wc.wr_id = r.wr_id;
	wc.byte_len = tmpl->byte_len ? tmpl->byte_len : IB_GRH_LEN + len;
	wc.qp_num = dst->qp.qp_num;
	cq_push((struct fcq *)dst->qp.recv_cq, &wc);
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fqp *src = (struct fqp *)qp;

	pthread_mutex_lock(&fab);
	for (; wr; wr = wr->next) {
		struct fqp *dst = fab_qp(wr->wr.ud.remote_qpn);
		struct ibv_wc wc = {
			.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			.src_qp = qp->qp_num, .slid = src->dev->lid,
		};

		if (wr->opcode == IBV_WR_SEND_WITH_IMM) {
			wc.wc_flags = IBV_WC_WITH_IMM;
			wc.imm_data = wr->imm_data;
		}
		if (dst && !src->dev->down && !dst->dev->down &&
		    dst->qkey == wr->wr.ud.remote_qkey && wr->wr.ud.ah)
			deliver(dst, &wc, (void *)(uintptr_t)wr->sg_list[0].addr,
				wr->sg_list[0].length);
		if (src->sig_all || (wr->send_flags & IBV_SEND_SIGNALED)) {
			struct ibv_wc s = { .wr_id = wr->wr_id, .status = IBV_WC_SUCCESS,
					    .opcode = IBV_WC_SEND, .qp_num = qp->qp_num };

			cq_push((struct fcq *)qp->send_cq, &s);
		}
	}
	pthread_mutex_unlock(&fab);
	*bad = NULL;
	return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fqp *q = (struct fqp *)qp;
	int rc = 0;

	pthread_mutex_lock(&fab);
	for (; wr; wr = wr->next) {
		if (q->rn == RQ_CAP) {
			rc = ENOMEM;
			*bad = wr;
			break;
		}
		q->rq[(q->rhead + q->rn++) % RQ_CAP] = (struct frecv){
			wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length };
	}
	pthread_mutex_unlock(&fab);
	return rc;
}

static int fake_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	struct fcq *c = (struct fcq *)cq;
	int n = 0;

	pthread_mutex_lock(&fab);
	while (n < num && c->n) {
		wc[n++] = c->q[c->head];
		c->head = (c->head + 1) % CQ_CAP;
		c->n--;
	}
	pthread_mutex_unlock(&fab);
	return n;
}

static int fake_req_notify_cq(struct ibv_cq *cq, int solicited)
{
	pthread_mutex_lock(&fab);
	((struct fcq *)cq)->armed = 1;
	pthread_mutex_unlock(&fab);
	return 0;
}

static void fab_reset(void)
{
	int i;

	pthread_mutex_lock(&fab);
	fake_ops.poll_cq = fake_poll_cq;
	fake_ops.req_notify_cq = fake_req_notify_cq;
	fake_ops.post_send = fake_post_send;
	fake_ops.post_recv = fake_post_recv;
	for (i = 0; i < NDEV; i++) {
		struct fdev *d = &devs[i];

		if (d->ctx.device) {
			close(d->apipe[0]);
			close(d->apipe[1]);
		}
		memset(d, 0, sizeof(*d));
		snprintf(d->dev.name, sizeof(d->dev.name), "fake%d", i);
		d->ctx.device = &d->dev;
		d->ctx.ops = fake_ops;
		assert_int_equal(pipe2(d->apipe, O_CLOEXEC), 0);
		d->ctx.async_fd = d->apipe[0];
		d->ctx.cmd_fd = -1;
		d->lid = (uint16_t)(i + 1);
	}
	ndevs = NDEV;
	force_qpn = 0;
	pthread_mutex_unlock(&fab);
}

/* An async event on device @d's port 1, and the port's new state. */
static void fab_async(int d, enum ibv_event_type type, int down)
{
	pthread_mutex_lock(&fab);
	devs[d].down = down;
	devs[d].aq[devs[d].an++] = type;
	poke(devs[d].apipe[1]);
	pthread_mutex_unlock(&fab);
}

/* ---- libibverbs, as far as lib/ib.c uses it ------------------------ */

struct ibv_device **(ibv_get_device_list)(int *num)
{
	struct ibv_device **l = calloc(NDEV + 1, sizeof(*l));
	int i;

	for (i = 0; i < ndevs; i++)
		l[i] = &devs[i].dev;
	if (num)
		*num = ndevs;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

int (ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		     struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr *pa = (struct ibv_port_attr *)port_attr;

	if (port_num != 1)
		return EINVAL;
	pa->state = IBV_PORT_ACTIVE;
	pa->max_mtu = pa->active_mtu = IBV_MTU_2048;
	return 0;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct fchan *c = calloc(1, sizeof(*c));

	assert_int_equal(pipe2(c->pipe, O_CLOEXEC), 0);
	c->ch.context = context;
	c->ch.fd = c->pipe[0];
	return &c->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct fchan *c = (struct fchan *)channel;

	close(c->pipe[0]);
	close(c->pipe[1]);
	free(c);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct fchan *c = (struct fchan *)channel;
	char b;

	if (read(c->pipe[0], &b, 1) != 1)
		return -1;	/* errno: EAGAIN on the non-blocking fd */
	*cq = c->cq;
	*cq_context = c->cq->cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct fdev *d = (struct fdev *)((char *)context - offsetof(struct fdev, ctx));
	char b;
	int i;

	pthread_mutex_lock(&fab);
	if (!d->an || read(d->apipe[0], &b, 1) != 1) {
		pthread_mutex_unlock(&fab);
		errno = EAGAIN;
		return -1;
	}
	event->event_type = d->aq[0];
	event->element.port_num = 1;
	for (i = 1; i < d->an; i++)
		d->aq[i - 1] = d->aq[i];
	d->an--;
	pthread_mutex_unlock(&fab);
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	pd->context = context;
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct ibv_mr *mr = calloc(1, sizeof(*mr));

	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = 0x4242;
	return mr;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	free(mr);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct fcq *c = calloc(1, sizeof(*c));

	c->cq.context = context;
	c->cq.channel = channel;
	c->cq.cq_context = cq_context;
	c->cq.cqe = cqe;
	if (channel) {
		c->chan = (struct fchan *)channel;
		c->chan->cq = &c->cq;
	}
	return &c->cq;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	free(cq);
	return 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct fqp *q = calloc(1, sizeof(*q));

	q->qp.context = pd->context;
	q->qp.pd = pd;
	q->qp.send_cq = attr->send_cq;
	q->qp.recv_cq = attr->recv_cq;
	q->qp.qp_type = attr->qp_type;
	q->qp.state = IBV_QPS_RESET;
	q->sig_all = attr->sq_sig_all;
	q->dev = (struct fdev *)((char *)pd->context - offsetof(struct fdev, ctx));
	pthread_mutex_lock(&fab);
	q->qp.qp_num = force_qpn ? force_qpn : next_qpn++;
	force_qpn = 0;
	q->next = qps;
	qps = q;
	pthread_mutex_unlock(&fab);
	return &q->qp;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fqp **p;

	pthread_mutex_lock(&fab);
	for (p = &qps; *p; p = &(*p)->next)
		if (&(*p)->qp == qp) {
			*p = (*p)->next;
			break;
		}
	pthread_mutex_unlock(&fab);
	free(qp);
	return 0;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct fqp *q = (struct fqp *)qp;

	pthread_mutex_lock(&fab);
	if (mask & IBV_QP_QKEY)
		q->qkey = attr->qkey;
	if (mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	pthread_mutex_unlock(&fab);
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init_attr)
{
	attr->qp_state = qp->state;
	return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibv_ah *ah = calloc(1, sizeof(*ah));

	ah->context = pd->context;
	ah->pd = pd;
	__atomic_add_fetch(&ah_live, 1, __ATOMIC_SEQ_CST);
	return ah;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	return ibv_create_ah(pd, NULL);
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	__atomic_sub_fetch(&ah_live, 1, __ATOMIC_SEQ_CST);
	free(ah);
	return 0;
}

/* ---- librdmacm ----------------------------------------------------- */

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct fcm *c;

	if (!ndevs) {
		errno = ENODEV;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	assert_int_equal(pipe2(c->pipe, O_CLOEXEC), 0);
	c->ch.fd = c->pipe[0];
	return &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct fcm *c = (struct fcm *)channel;

	while (c->n--)
		free(c->q[c->head++ % 64]);
	close(c->pipe[0]);
	close(c->pipe[1]);
	free(c);
}

/* Queues an event for @f on its channel.  Called with fab held. */
static struct fevent *cm_event(struct fid *f, enum rdma_cm_event_type type, int status)
{
	struct fcm *c = (struct fcm *)f->id.channel;
	struct fevent *e = calloc(1, sizeof(*e));

	e->ev.id = &f->id;
	e->ev.event = type;
	e->ev.status = status;
	assert_true(c->n < 64);
	c->q[(c->head + c->n++) % 64] = &e->ev;
	poke(c->pipe[1]);
	return e;
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct fcm *c = (struct fcm *)channel;
	char b;

	pthread_mutex_lock(&fab);
	if (!c->n) {
		pthread_mutex_unlock(&fab);
		errno = EAGAIN;
		return -1;
	}
	assert_int_equal(read(c->pipe[0], &b, 1), 1);
	*event = c->q[c->head];
	c->head = (c->head + 1) % 64;
	c->n--;
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	free(event);		/* struct fevent starts with it */
	return 0;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps)
{
	struct fid *f = calloc(1, sizeof(*f));

	f->id.channel = channel;
	f->id.context = context;
	f->id.ps = ps;
	f->id.qp_type = IBV_QPT_UD;
	pthread_mutex_lock(&fab);
	f->next = ids;
	ids = f;
	pthread_mutex_unlock(&fab);
	*id = &f->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct fid **p;

	pthread_mutex_lock(&fab);
	for (p = &ids; *p; p = &(*p)->next)
		if (&(*p)->id == id) {
			*p = (*p)->next;
			break;
		}
	pthread_mutex_unlock(&fab);
	free(id);
	return 0;
}

static const char *sa_host(const struct sockaddr *sa, char *buf)
{
	inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, INET_ADDRSTRLEN);
	return buf;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct fid *f = (struct fid *)id;
	char h[INET_ADDRSTRLEN];

	sa_host(addr, h);
	f->port = ntohs(((struct sockaddr_in *)addr)->sin_port);
	if (strcmp(h, SERVER_ADDR) == 0) {
		id->verbs = &devs[0].ctx;
		id->port_num = 1;
	} else if (strcmp(h, "0.0.0.0")) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	return 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct fid *f = (struct fid *)id, *i;

	pthread_mutex_lock(&fab);
	for (i = ids; i; i = i->next)
		if (i != f && i->listening && i->port == f->port) {
			pthread_mutex_unlock(&fab);
			errno = EADDRINUSE;
			return -1;
		}
	f->listening = 1;
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
		      int timeout_ms)
{
	struct fid *f = (struct fid *)id;
	char h[INET_ADDRSTRLEN];

	pthread_mutex_lock(&fab);
	f->port = ntohs(((struct sockaddr_in *)dst)->sin_port);
	if (strcmp(sa_host(dst, h), SERVER_ADDR) == 0) {
		id->verbs = &devs[1].ctx;
		id->port_num = 1;
		cm_event(f, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	} else {
		cm_event(f, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH);
	}
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	pthread_mutex_lock(&fab);
	if (devs[1].down)
		cm_event((struct fid *)id, RDMA_CM_EVENT_ROUTE_ERROR, -ENETUNREACH);
	else
		cm_event((struct fid *)id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fid *f = (struct fid *)id, *l;

	pthread_mutex_lock(&fab);
	for (l = ids; l; l = l->next)
		if (l->listening && l->port == f->port)
			break;
	if (!l) {
		/* The server's CM answers: no such service (status 1). */
		cm_event(f, RDMA_CM_EVENT_UNREACHABLE, 1);
	} else {
		struct fid *r = calloc(1, sizeof(*r));
		struct fevent *e;

		r->id.channel = l->id.channel;
		r->id.context = l->id.context;
		r->id.verbs = &devs[0].ctx;
		r->id.port_num = 1;
		r->id.ps = RDMA_PS_UDP;
		r->client = f;
		r->next = ids;
		ids = r;
		e = cm_event(r, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
		e->ev.listen_id = &l->id;
	}
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fid *r = (struct fid *)id;
	struct fevent *e;

	pthread_mutex_lock(&fab);
	if (r->client && fab_id_alive(r->client)) {
		e = cm_event(r->client, RDMA_CM_EVENT_ESTABLISHED, 0);
		memcpy(e->pd, param->private_data, param->private_data_len);
		e->ev.param.ud.private_data = e->pd;
		e->ev.param.ud.private_data_len = sizeof(e->pd);
		e->ev.param.ud.qp_num = param->qp_num;
		e->ev.param.ud.qkey = RDMA_UDP_QKEY;
		e->ev.param.ud.ah_attr.dlid = devs[0].lid;
		e->ev.param.ud.ah_attr.port_num = 1;
	}
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t len)
{
	struct fid *r = (struct fid *)id;

	pthread_mutex_lock(&fab);
	if (r->client && fab_id_alive(r->client))
		cm_event(r->client, RDMA_CM_EVENT_UNREACHABLE, 1);
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr, int *mask)
{
	attr->pkey_index = 0;
	attr->port_num = id->port_num;
	attr->qkey = RDMA_UDP_QKEY;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	return 0;
}

struct ibv_context **rdma_get_devices(int *num)
{
	struct ibv_context **l = calloc(NDEV + 1, sizeof(*l));
	int i;

	for (i = 0; i < ndevs; i++)
		l[i] = &devs[i].ctx;
	if (num)
		*num = ndevs;
	return l;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- a server like ntpreflect, in a thread ------------------------- */

struct server {
	struct transport *t;
	struct clock *clk;
	pthread_t th;
	int stop;
	int answered;
	uint32_t qpn;
	unsigned char last_req[NTP_HEADER_LEN];
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	unsigned char buf[4096];
	struct transport_addr from;
	int64_t t2, t3;

	while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
		ssize_t n = transport_recv_wait(s->t, buf, sizeof(buf), &from, s->clk, &t2,
						clock_monotonic_ns() + 20 * MS,
						TRANSPORT_POLL_BLOCK);

		if (n < NTP_HEADER_LEN || (buf[0] & 7) != NTP_MODE_CLIENT)
			continue;
		memcpy(s->last_req, buf, NTP_HEADER_LEN);
		buf[0] = 0x24;				/* LI 0, VN 4, mode 4 */
		buf[1] = 1;				/* stratum */
		memcpy(buf + 24, s->last_req + 40, 8);	/* origin = their xmt */
		memset(buf + 32, 0x11, 8);		/* receive: any nonzero */
		if (transport_send(s->t, buf, NTP_HEADER_LEN, &from, s->clk,
				   TRANSPORT_STAMP_XMT, &t3) == 0)
			__atomic_add_fetch(&s->answered, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void server_start(struct server *s)
{
	struct endpoint ep;
	char err[256];
	struct fqp *q;

	memset(s, 0, sizeof(*s));
	s->clk = clock_open("realtime", err, sizeof(err));
	assert_non_null(s->clk);
	assert_int_equal(endpoint_parse("ib://" SERVER_ADDR ":123", &ep, err, sizeof(err)), 0);
	s->t = transport_open(&ep, TRANSPORT_SERVER, err, sizeof(err));
	if (!s->t)
		fail_msg("server: %s", err);
	pthread_mutex_lock(&fab);
	q = fab_qp_on(0);
	s->qpn = q->qp.qp_num;
	pthread_mutex_unlock(&fab);
	assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

/* Waits (at most 5 s) until the server has answered @n requests. */
static void wait_answered(struct server *s, int n)
{
	int64_t end = clock_monotonic_ns() + 5000 * MS;

	while (__atomic_load_n(&s->answered, __ATOMIC_SEQ_CST) < n) {
		if (clock_monotonic_ns() > end)
			fail_msg("server answered %d of %d", s->answered, n);
		usleep(200);
	}
}

/* Stops the thread; the transport stays open for its counters. */
static void server_halt(struct server *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(s->th, NULL);
}

static void server_stop(struct server *s)
{
	server_halt(s);
	transport_close(s->t);
	clock_close(s->clk);
}

/* ---- a client like ntpprobe ---------------------------------------- */

struct client {
	struct transport *t;
	struct clock *clk;
	uint64_t seq;
	int64_t t1, t4;
};

static struct transport *client_open_url(struct client *c, const char *url, char *err,
					 size_t errlen)
{
	struct endpoint ep;

	memset(c, 0, sizeof(*c));
	c->clk = clock_open("realtime", err, errlen);
	assert_non_null(c->clk);
	assert_int_equal(endpoint_parse(url, &ep, err, errlen), 0);
	c->t = transport_open(&ep, TRANSPORT_CLIENT, err, errlen);
	return c->t;
}

static void client_open(struct client *c, const char *url)
{
	char err[256];

	if (!client_open_url(c, url, err, sizeof(err)))
		fail_msg("client: %s", err);
}

static void client_close(struct client *c)
{
	transport_close(c->t);
	clock_close(c->clk);
}

/* One exchange: 1 answered, 0 timed out, -errno when it could not send. */
static int exchange(struct client *c, enum transport_poll mode)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[4096];
	int64_t deadline;
	uint64_t nonce = htobe64(++c->seq);
	int rc;

	memcpy(req + 40, &nonce, 8);
	rc = transport_send(c->t, req, sizeof(req), NULL, c->clk, 0, &c->t1);
	if (rc)
		return rc;
	deadline = clock_monotonic_ns() + 200 * MS;
	for (;;) {
		ssize_t n = transport_recv_wait(c->t, buf, sizeof(buf), NULL, c->clk, &c->t4,
						deadline, mode);

		if (n == -ETIMEDOUT)
			return 0;
		assert_true(n >= 0 || n == -EINTR);
		if (n >= NTP_HEADER_LEN && (buf[0] & 7) == NTP_MODE_SERVER &&
		    memcmp(buf + 24, &nonce, 8) == 0)
			return 1;
	}
}

/* The value of "name=" in the transport's counters line. */
static unsigned long long counter(struct transport *t, const char *name)
{
	char line[512], key[40];
	const char *p;

	transport_counters(t, line, sizeof(line));
	snprintf(key, sizeof(key), "%s=", name);
	for (p = line; (p = strstr(p, key)); p++)
		if (p == line || p[-1] == ' ')
			return strtoull(p + strlen(key), NULL, 10);
	fail_msg("no counter %s in '%s'", name, line);
	return 0;
}

/* ---- tests ---------------------------------------------------------- */

static int setup(void **state)
{
	fab_reset();
	return 0;
}

static int teardown(void **state)
{
	assert_null(qps);
	assert_null(ids);
	assert_int_equal(ah_live, 0);
	return 0;
}

static void test_exchange(void **state)
{
	struct server s;
	struct client c;
	int64_t before;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	before = clock_realtime_ns();
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_true(c.t1 >= before && c.t4 >= c.t1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BUSY), 1);
	assert_int_equal(transport_peer_reset(c.t), 0);
	assert_int_equal(counter(c.t, "replies"), 2);
	assert_int_equal(counter(c.t, "resolutions"), 1);
	client_close(&c);
	server_halt(&s);
	assert_int_equal(counter(s.t, "sidr_accept"), 1);
	assert_int_equal(counter(s.t, "ah_new"), 1);	/* one client, one AH */
	server_stop(&s);
}

/* TRANSPORT_STAMP_XMT: T1 is in the packet the server received. */
static void test_stamp_xmt(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, want[8];
	struct server s;
	struct client c;
	uint64_t ts;
	int64_t t1;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(transport_send(c.t, req, sizeof(req), NULL, c.clk,
					TRANSPORT_STAMP_XMT, &t1), 0);
	ts = ntp_ts_from_ns(t1);
	for (i = 7; i >= 0; i--, ts >>= 8)
		want[i] = (unsigned char)ts;
	assert_memory_equal(req + 40, want, 8);		/* the caller's copy */
	wait_answered(&s, 1);
	server_halt(&s);
	assert_memory_equal(s.last_req + 40, want, 8);	/* what went on the wire */
	client_close(&c);
	server_stop(&s);
}

/* The study's defect: the server restarts with a new QPN. */
static void test_server_restart(void **state)
{
	struct server s;
	struct client c;
	uint32_t old;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	old = s.qpn;
	server_stop(&s);
	server_start(&s);
	assert_int_not_equal(s.qpn, old);
	/* The stale address gets nothing, exactly miss-limit times... */
	for (i = 0; i < PEER_MISS_LIMIT_DEFAULT; i++)
		assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 0);
	assert_int_equal(transport_peer_reset(c.t), 0);
	/* ...then the next request finds the new server. */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	assert_int_equal(transport_peer_reset(c.t), 0);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(counter(c.t, "losses"), 1);
	assert_int_equal(counter(c.t, "resolutions"), 2);
	assert_int_equal(counter(c.t, "resets"), 1);
	client_close(&c);
	server_stop(&s);
}

/* A restarted server that got the same QPN: only the epoch tells. */
static void test_epoch_change(void **state)
{
	struct server s;
	struct client c;
	uint32_t old;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	old = s.qpn;
	server_stop(&s);
	force_qpn = old;
	server_start(&s);
	assert_int_equal(s.qpn, old);
	/* Answered, but by another instance: dropped, and found again. */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 0);
	assert_int_equal(counter(c.t, "epoch"), 1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	assert_int_equal(counter(c.t, "resolutions"), 2);
	client_close(&c);
	server_stop(&s);
}

/* Requests faster than replies (loadgen --ntp): no false loss. */
static void test_request_flood(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[256];
	struct server s;
	struct client c;
	int64_t t, deadline;
	int i, got = 0;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	for (i = 0; i < 50; i++)
		assert_int_equal(transport_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	deadline = clock_monotonic_ns() + 2000 * MS;
	while (got < 50 && transport_recv_wait(c.t, buf, sizeof(buf), NULL, c.clk, &t, deadline,
					       TRANSPORT_POLL_BLOCK) > 0)
		got++;
	assert_int_equal(got, 50);
	assert_int_equal(counter(c.t, "losses"), 0);
	assert_int_equal(counter(c.t, "resolutions"), 1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	client_close(&c);
	server_stop(&s);
}

/*
 * transport_fd()'s promise, as a caller that polls before it receives
 * relies on it: whenever a datagram waits, the fd is readable.  Five
 * replies queue up at once; each must be announced by the fd.
 */
static void test_fd_contract(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[256];
	struct server s;
	struct client c;
	int64_t t;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	for (i = 0; i < 5; i++)
		assert_int_equal(transport_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	wait_answered(&s, 5);
	for (i = 0; i < 5; i++) {
		struct pollfd pfd = { .fd = transport_fd(c.t), .events = POLLIN };
		ssize_t n = -EAGAIN;

		/* A readable fd may still yield -EAGAIN (an event to consume),
		   but never sleeps through a datagram that is there. */
		while (n == -EAGAIN) {
			if (poll(&pfd, 1, 1000) != 1)
				fail_msg("reply %d waits but the fd is not readable", i + 1);
			n = transport_recv(c.t, buf, sizeof(buf), NULL, c.clk, &t);
		}
		assert_int_equal(n, NTP_HEADER_LEN);
	}
	client_close(&c);
	server_stop(&s);
}

/* No server yet: refused, like UDP, until one listens. */
static void test_server_absent(void **state)
{
	struct server s;
	struct client c;
	int i, rc = 0;

	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), -ECONNREFUSED);
	server_start(&s);
	/* Resolution retries on the backoff; a poll interval of 50 ms. */
	for (i = 0; i < 40 && rc != 1; i++) {
		rc = exchange(&c, TRANSPORT_POLL_BLOCK);
		if (rc != 1)
			usleep(50000);
	}
	assert_int_equal(rc, 1);
	assert_true(counter(c.t, "resolve_failures") >= 1);
	client_close(&c);
	server_stop(&s);
}

/* Injects @n datagrams (NTP mode @mode) into @qpn as if they had arrived. */
static void inject(uint32_t qpn, int n, const struct ibv_wc *tmpl, int mode)
{
	unsigned char pkt[NTP_HEADER_LEN] = { (unsigned char)(0x20 | mode) };
	struct fqp *q;
	int i;

	pthread_mutex_lock(&fab);
	q = fab_qp(qpn);
	assert_non_null(q);
	for (i = 0; i < n; i++)
		deliver(q, tmpl, pkt, sizeof(pkt));
	pthread_mutex_unlock(&fab);
}

static void test_bad_input(void **state)
{
	struct server s;
	struct client c;
	uint32_t cqpn;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	pthread_mutex_lock(&fab);
	cqpn = fab_qp_on(1)->qp.qp_num;
	pthread_mutex_unlock(&fab);

	/*
	 * 200 in all, three times the receive pool: each buffer must be
	 * posted again after its datagram is dropped.
	 */
	wc.src_qp = s.qpn;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.byte_len = IB_GRH_LEN + 20;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* short */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	wc.byte_len = 0;
	wc.wc_flags = 0;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* no epoch */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BUSY), 1);
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.src_qp = 0xdead;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* stray */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	wc.src_qp = s.qpn;
	wc.opcode = IBV_WC_SEND;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* opcode */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	wc.opcode = IBV_WC_RECV;
	wc.imm_data = htobe32(0x5eed);
	wc.status = IBV_WC_LOC_LEN_ERR;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* error status */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);

	assert_int_equal(counter(c.t, "short"), 40);
	assert_int_equal(counter(c.t, "no_imm"), 40);
	assert_int_equal(counter(c.t, "stray"), 40);
	assert_int_equal(counter(c.t, "opcode"), 40);
	assert_int_equal(counter(c.t, "wc_error"), 40);
	assert_int_equal(counter(c.t, "losses"), 0);	/* none of it was a loss */
	assert_int_equal(transport_peer_reset(c.t), 0);

	/* A server drops requests that carry immediate data. */
	wc.status = IBV_WC_SUCCESS;
	wc.src_qp = cqpn;
	server_halt(&s);
	inject(s.qpn, 3, &wc, NTP_MODE_CLIENT);
	s.stop = 0;
	assert_int_equal(pthread_create(&s.th, NULL, server_main, &s), 0);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	server_halt(&s);
	assert_int_equal(counter(s.t, "imm"), 3);
	client_close(&c);
	server_stop(&s);
}

/* A wrong QKey: the HCA drops the datagram; nobody answers. */
static void test_wrong_qkey(void **state)
{
	struct server s;
	struct client c;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123?qkey=0x1");
	for (i = 0; i < 2; i++)
		assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 0);
	server_halt(&s);
	assert_int_equal(s.answered, 0);
	client_close(&c);
	server_stop(&s);
}

/* Port down, then up: dropped at once, found again at once. */
static void test_port_flap(void **state)
{
	struct server s;
	struct client c;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	fab_async(1, IBV_EVENT_PORT_ERR, 1);
	/* Told at once, not after a miss run: no route while it is down. */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), -ENETUNREACH);
	assert_int_equal(counter(c.t, "losses"), 1);
	fab_async(1, IBV_EVENT_PORT_ACTIVE, 0);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	assert_int_equal(counter(c.t, "async"), 2);
	client_close(&c);
	server_stop(&s);
}

/* Many clients: the server's address handles stay at the bound. */
static void test_ah_cache_bounded(void **state)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };
	struct server s;
	int i;

	server_start(&s);
	for (i = 0; i < 100; i++) {
		wc.slid = (uint16_t)(100 + i);
		wc.src_qp = 0x7000 + (uint32_t)i;
		inject(s.qpn, 1, &wc, NTP_MODE_CLIENT);
		wait_answered(&s, i + 1);
	}
	server_halt(&s);
	assert_int_equal(counter(s.t, "ah_new"), 100);
	assert_int_equal(counter(s.t, "ah_evict"), 100 - 64);
	assert_true(ah_live <= 64);
	server_stop(&s);
}

static void test_no_device(void **state)
{
	struct client c;
	char err[256];

	assert_null(client_open_url(&c, "ib://" SERVER_ADDR ":123?dev=fake7", err, sizeof(err)));
	assert_string_equal(err, "ib://" SERVER_ADDR ":123?dev=fake7: no RDMA device "
			    "(asked for fake7, found fake0, fake1)");
	clock_close(c.clk);
	ndevs = 0;
	assert_null(client_open_url(&c, "ib://" SERVER_ADDR ":123", err, sizeof(err)));
	assert_string_equal(err, "ib://" SERVER_ADDR ":123: no RDMA device "
			    "(asked for any, found none)");
	clock_close(c.clk);
}

static void test_no_route(void **state)
{
	struct client c;
	char err[256];

	assert_null(client_open_url(&c, "ib://10.9.9.9:123", err, sizeof(err)));
	assert_non_null(strstr(err, "cannot resolve a route to 10.9.9.9"));
	clock_close(c.clk);
	/* The route leaves by fake1: asking for fake0 is refused clearly. */
	assert_null(client_open_url(&c, "ib://" SERVER_ADDR ":123?dev=fake0", err, sizeof(err)));
	assert_non_null(strstr(err, "leaves by fake1, not by dev=fake0"));
	clock_close(c.clk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exchange, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamp_xmt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_epoch_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_contract, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_qkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_flap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ah_cache_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_route, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
