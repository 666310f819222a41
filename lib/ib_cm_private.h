/* SPDX-License-Identifier: ISC */
/*
 * ib_cm_private.h - the ib transport's rdma_cm (ib_cm.c): a server's
 * answer to a SIDR request, a client's address, route and SIDR, and the
 * client's resolver thread.  What it decides is its owner's (ib.c) to
 * apply: the address handle, the peer's state, the counters.
 */
#ifndef NTPX_IB_CM_PRIVATE_H
#define NTPX_IB_CM_PRIVATE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ib_event_private.h"
#include "ib_qp_private.h"
#include "opt_units.h"

#define IB_RESOLVE_NS	(1000 * NTPX_NS_PER_MS)	/* bound on address and route */

/* A resolution's outcome. */
struct ib_res {
	int rc;			/* 0 or -errno */
	struct rdma_cm_id *id;	/* routed, on the resolver's channel */
	struct ibv_ah_attr attr;
	uint32_t qpn, qkey, epoch;
	unsigned retries;	/* SIDR requests sent again */
};

/* A client's resolution: what it needs, then the resolver thread's state. */
struct ib_cm_client {
	/* set at the open, before the thread is asked for anything */
	struct rdma_event_channel *cm;	/* the transport's own channel */
	struct sockaddr_storage dst, src;
	int have_src;
	struct ibv_context *ctx;	/* the device and port the route must leave by */
	uint8_t port;
	uint32_t qpn;			/* the client's QP */
	int gid_index;			/* -1: rdma_cm's choice */
	long qkey_forced;		/* -1: take the server's */
	int wake;			/* the transport's eventfd: an outcome waits */
	/*
	 * An event on the own channel for another id, met while waiting
	 * there: the owner's to handle (it consumes it).  Returns 0, or the
	 * transport's -errno once it is dead.
	 */
	int (*other)(void *arg, struct rdma_cm_event *ev);
	void *arg;

	/* the resolver thread (fields below th under rmu) */
	int have_thread;
	pthread_t th;
	struct rdma_event_channel *rcm;	/* its own rdma_cm channel */
	int stopfd;			/* eventfd: close asks it to stop */
	pthread_mutex_t rmu;
	pthread_cond_t rcv;
	int want, busy, done, stop;
	struct ib_res res;
};

/*
 * Server: answers the SIDR request @req with the QP of @q that serves the
 * port and partition it came in on (@wildcard: made on first use, else
 * @qpn), and @epoch.  1 accepted; 0 refused (rejected when no QP could
 * serve it).
 */
int ib_cm_accept(struct ib_qps *q, struct rdma_cm_id *req, uint32_t qpn, int wildcard,
		 uint32_t epoch);
/* Client: a fresh cm_id on @ch, address and route resolved.  0 with *@idp, or -errno. */
int ib_cm_route(struct ib_cm_client *c, struct rdma_event_channel *ch, int64_t deadline,
		struct rdma_cm_id **idp);
/*
 * Client: the SIDR exchange on a routed @id (channel @ch): @r holds the
 * server's QPN, QKey, epoch and the address handle's attributes.  0 or -errno.
 */
int ib_cm_sidr(struct ib_cm_client *c, struct rdma_event_channel *ch, struct rdma_cm_id *id,
	       int64_t deadline, struct ib_res *r);
/* Client: the resolver thread, started (0, or -1 with @err naming @url) and stopped. */
int ib_cm_resolver_start(struct ib_cm_client *c, const char *url, char *err, size_t errlen);
void ib_cm_resolver_stop(struct ib_cm_client *c);
/* Client: the resolver's outcome into @r, when one waits: 1, else 0. */
int ib_cm_resolver_take(struct ib_cm_client *c, struct ib_res *r);
/* Client: nothing asked, nothing running, no outcome waiting. */
int ib_cm_resolver_idle(struct ib_cm_client *c);
/*
 * Client: with @want, asks for an attempt unless one is asked for, runs
 * or waits to be taken.  Nonzero while one does.
 */
int ib_cm_resolver_ask(struct ib_cm_client *c, int want);

#endif
