/* SPDX-License-Identifier: ISC */
/*
 * ib_event_private.h - a device's async events, matched to their source
 * and handed to the transports they concern (ib_event.c), through the
 * registry of the sinks the transports own and their wakeup eventfds
 * (the helpers below, which ib_cm.c and ib.c use too).
 */
#ifndef NTPX_IB_EVENT_PRIVATE_H
#define NTPX_IB_EVENT_PRIVATE_H

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ib_qp_private.h"

#define IB_AEV_QUEUE	16		/* async events handed over, not yet taken */

/* An async event as handed to its owner. */
struct ib_aev {
	enum ibv_event_type type;
	uint8_t port;
};

/* Where a transport's async events go: what it is made of, to match them. */
struct ib_evsink {
	struct ibv_context *ctx;	/* its device: the event queue it shares */
	uint8_t port;
	const struct ib_qps *qps;	/* its QPs, their ports and CQs */
	int wake;			/* its eventfd: an event was handed over */
	struct ib_aev aq[IB_AEV_QUEUE];	/* handed over, not yet taken (the
					   registry's lock) */
	unsigned an;
	struct ib_evsink *next;		/* the registry */
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

/* @s receives the async events of its device from now on; until unregistered. */
void ib_event_register(struct ib_evsink *s);
void ib_event_unregister(struct ib_evsink *s);
/*
 * Reads the device's async events and hands each to the sinks it
 * concerns; then takes @s's own into @mine (IB_AEV_QUEUE at most).
 * Returns how many.
 */
unsigned ib_event_take(struct ib_evsink *s, struct ib_aev *mine);

#endif
