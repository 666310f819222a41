/* SPDX-License-Identifier: ISC */
/*
 * tests/unit/support/dgram.h - one datagram sent or received through
 * struct transport_dgram (lib/transport.h) in the shape the unit tests
 * read best: a buffer, a peer, a stamp.  The whole struct of the last
 * send is kept in dg_tx and of the last receive in dg_rx, for a test
 * that checks its send id or receive stamps.
 */
#ifndef NTPX_TEST_DGRAM_H
#define NTPX_TEST_DGRAM_H

#include <string.h>

#include "transport.h"

/* Per thread: a test may run a server thread beside its client. */
static __thread struct transport_dgram dg_tx, dg_rx;

/* transport_send() of @len bytes of @buf, to @to (a server's) or NULL. */
static inline int dg_send(struct transport *t, void *buf, size_t len,
			  const struct transport_addr *to, struct clock *clk, int flags,
			  int64_t *stamp)
{
	int rc;

	memset(&dg_tx, 0, sizeof(dg_tx));
	dg_tx.buf = buf;
	dg_tx.len = len;
	if (to)
		dg_tx.peer = *to;
	rc = transport_send(t, &dg_tx, clk, flags);
	*stamp = dg_tx.tx_at;
	return rc;
}

static inline ssize_t dg_took(ssize_t n, struct transport_addr *from, int64_t *stamp)
{
	if (n >= 0 && from)
		*from = dg_rx.peer;
	*stamp = dg_rx.rx_at;	/* 0 when nothing came */
	return n;
}

/* transport_recv() into @buf, the sender into @from unless NULL. */
static inline ssize_t dg_recv(struct transport *t, void *buf, size_t cap,
			      struct transport_addr *from, struct clock *clk, int64_t *stamp)
{
	memset(&dg_rx, 0, sizeof(dg_rx));
	dg_rx.buf = buf;
	dg_rx.cap = cap;
	return dg_took(transport_recv(t, &dg_rx, clk), from, stamp);
}

/* transport_recv_wait(), as dg_recv(). */
static inline ssize_t dg_recv_wait(struct transport *t, void *buf, size_t cap,
				   struct transport_addr *from, struct clock *clk, int64_t *stamp,
				   int64_t deadline, enum transport_poll mode)
{
	memset(&dg_rx, 0, sizeof(dg_rx));
	dg_rx.buf = buf;
	dg_rx.cap = cap;
	return dg_took(transport_recv_wait(t, &dg_rx, clk, deadline, mode), from, stamp);
}

#endif
