/* SPDX-License-Identifier: ISC */
/*
 * ib_event.c - a device's async events, matched to their source
 * (ev->element): a QP or CQ event to the transport that owns it, a port
 * event to those on that port.  Transports on one device share its
 * context and so its event queue; whichever reads an event hands it to
 * its owners, through the one registry of open transports here (the ib
 * transport's only global state) and the owner's wakeup eventfd.
 */
#include <errno.h>
#include <string.h>

#include "ib_private.h"

static pthread_mutex_t ib_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ib_transport *ib_reg;	/* every open transport, for async events */

void ib_event_register(struct ib_transport *u)
{
	pthread_mutex_lock(&ib_reg_mu);
	u->reg_next = ib_reg;
	ib_reg = u;
	pthread_mutex_unlock(&ib_reg_mu);
}

void ib_event_unregister(struct ib_transport *u)
{
	struct ib_transport **pp;

	pthread_mutex_lock(&ib_reg_mu);
	for (pp = &ib_reg; *pp; pp = &(*pp)->reg_next)
		if (*pp == u) {
			*pp = u->reg_next;
			break;
		}
	pthread_mutex_unlock(&ib_reg_mu);
}

/* Does @ev concern @u?  Matched by its element, as the event names it. */
static int ib_async_mine(const struct ib_transport *u, const struct ibv_async_event *ev)
{
	int p;

	switch (ev->event_type) {
	case IBV_EVENT_DEVICE_FATAL:
		return 1;
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq == u->rcq.cq || ev->element.cq == u->scq.cq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		for (p = 0; p < IB_PARTS; p++)
			if (u->part[p].qp && ev->element.qp == u->part[p].qp)
				return 1;
		return 0;
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		if (ev->element.port_num == u->port)
			return 1;
		for (p = 0; p < IB_PARTS; p++)
			if (u->part[p].qp && u->part[p].port == ev->element.port_num)
				return 1;
		return 0;
	default:
		return 0;
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

/* An async event of ours. */
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

/*
 * Reads the device's async events and hands each to the open transports
 * it concerns (those on one device share its event queue); then takes
 * @u's own.
 */
void ib_event_take(struct ib_transport *u, int64_t now)
{
	struct ib_aev mine[IB_AEV_QUEUE];
	struct ibv_async_event aev;
	struct ib_transport *o;
	unsigned i, n;

	pthread_mutex_lock(&ib_reg_mu);
	while (ibv_get_async_event(u->ctx, &aev) == 0) {
		for (o = ib_reg; o; o = o->reg_next) {
			if (o->ctx != u->ctx || !ib_async_mine(o, &aev))
				continue;
			if (o->an < IB_AEV_QUEUE) {
				o->aq[o->an].type = aev.event_type;
				o->aq[o->an++].port = aev.element.port_num;
			}
			if (o != u)
				ib_wake(o->wake);
		}
		ibv_ack_async_event(&aev);
	}
	n = u->an;
	memcpy(mine, u->aq, n * sizeof(mine[0]));
	u->an = 0;
	pthread_mutex_unlock(&ib_reg_mu);
	for (i = 0; i < n; i++)
		ib_async(u, &mine[i], now);
}
