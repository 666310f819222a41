/* SPDX-License-Identifier: ISC */
/*
 * ib_event.c - a device's async events, matched to their source
 * (ev->element): a QP or CQ event to the sink whose transport owns it, a
 * port event to those on that port.  Transports on one device share its
 * context and so its event queue; whichever reads an event hands it to
 * its owners, through the one registry of sinks here (the ib transport's
 * only global state) and the owner's wakeup eventfd.  What an event
 * does is the owner's (ib.c).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "ib_event_private.h"

static pthread_mutex_t ib_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ib_evsink *ib_reg;	/* every open transport's, for async events */

void ib_event_register(struct ib_evsink *s)
{
	pthread_mutex_lock(&ib_reg_mu);
	s->next = ib_reg;
	ib_reg = s;
	pthread_mutex_unlock(&ib_reg_mu);
}

void ib_event_unregister(struct ib_evsink *s)
{
	struct ib_evsink **pp;

	pthread_mutex_lock(&ib_reg_mu);
	for (pp = &ib_reg; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	pthread_mutex_unlock(&ib_reg_mu);
}

/* Does @ev concern @s?  Matched by its element, as the event names it. */
static int ib_async_mine(const struct ib_evsink *s, const struct ibv_async_event *ev)
{
	const struct ib_qps *q = s->qps;
	int p;

	switch (ev->event_type) {
	case IBV_EVENT_DEVICE_FATAL:
		return 1;
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq == q->rcq->cq || ev->element.cq == q->scq->cq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		for (p = 0; p < IB_PARTS; p++)
			if (q->part[p].qp && ev->element.qp == q->part[p].qp)
				return 1;
		return 0;
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		if (ev->element.port_num == s->port)
			return 1;
		for (p = 0; p < IB_PARTS; p++)
			if (q->part[p].qp && q->part[p].port == ev->element.port_num)
				return 1;
		return 0;
	default:
		return 0;
	}
}

unsigned ib_event_take(struct ib_evsink *s, struct ib_aev *mine)
{
	struct ibv_async_event aev;
	struct ib_evsink *o;
	unsigned n;

	pthread_mutex_lock(&ib_reg_mu);
	while (ibv_get_async_event(s->ctx, &aev) == 0) {
		for (o = ib_reg; o; o = o->next) {
			if (o->ctx != s->ctx || !ib_async_mine(o, &aev))
				continue;
			if (o->an < IB_AEV_QUEUE) {
				o->aq[o->an].type = aev.event_type;
				o->aq[o->an++].port = aev.element.port_num;
			}
			if (o != s)
				ib_wake(o->wake);
		}
		ibv_ack_async_event(&aev);
	}
	n = s->an;
	memcpy(mine, s->aq, n * sizeof(mine[0]));
	s->an = 0;
	pthread_mutex_unlock(&ib_reg_mu);
	return n;
}
