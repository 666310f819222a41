/* SPDX-License-Identifier: ISC */
/*
 * transport.c - the backend table, the wrappers every tool calls (the
 * loss schedule applied here, once), and the waiting loop every backend
 * shares.  Endpoint URLs are parsed in endpoint.c.
 *
 * Optional backends join the table here and nowhere else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ntp.h"
#include "opt_units.h"
#include "transport_private.h"
#include "util_private.h"

static const struct transport_ops *const backends[] = {
	&udp_transport_ops,
	&uudp_transport_ops,
	&ib_transport_ops,	/* built always; a host without RDMA fails at open */
};

/* endpoint.c parses; the schemes and their keys are handed down from here. */
int transport_parse_endpoint(const char *url, struct endpoint *ep, char *err, size_t errlen)
{
	struct endpoint_scheme tab[ARRAY_SIZE(backends) + 1] = { { 0 } };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(backends); i++) {
		tab[i].name = backends[i]->scheme;
		tab[i].params = backends[i]->params;
		tab[i].check = backends[i]->check;
	}
	return endpoint_parse(url, tab, ep, err, errlen);
}

static const struct transport_ops *backend_find(const char *scheme)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(backends); i++)
		if (strcmp(backends[i]->scheme, scheme) == 0)
			return backends[i];
	return NULL;
}


/* RFC 6761 6.4: a name under .invalid never resolves, and is not asked. */
static int reserved_invalid(const char *host)
{
	size_t n = strlen(host);

	if (n && host[n - 1] == '.')
		n--;
	return (n == 7 && strncasecmp(host, "invalid", 7) == 0) ||
	       (n > 7 && strncasecmp(host + n - 8, ".invalid", 8) == 0);
}

int transport_resolve(const char *host, uint16_t port, int passive, int family,
		      struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = family, .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV,
	};
	struct addrinfo *ai;
	char sport[8];
	int rc;

	if (passive)
		hints.ai_flags |= AI_PASSIVE;
	snprintf(sport, sizeof(sport), "%u", port);
	rc = reserved_invalid(host) ? EAI_NONAME : getaddrinfo(host, sport, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "cannot resolve '%s'%s: %s", host,
			 family == AF_INET ? " (IPv4)" : family == AF_INET6 ? " (IPv6)" : "",
			 gai_strerror(rc));
		errno = ENXIO;
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

int transport_host_numeric(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

const char *transport_resolved(const struct transport *t)
{
	return t->resolved[0] ? t->resolved : NULL;
}

int transport_poll_parse(const char *s, enum transport_poll *mode)
{
	if (strcmp(s, "block") == 0)
		*mode = TRANSPORT_POLL_BLOCK;
	else if (strcmp(s, "busy") == 0)
		*mode = TRANSPORT_POLL_BUSY;
	else
		return -1;
	return 0;
}

struct transport *transport_open(const struct endpoint *ep, enum transport_role role,
				 char *err, size_t errlen)
{
	const struct transport_ops *ops = backend_find(ep->scheme);
	struct transport *t;

	if (!ops) {
		snprintf(err, errlen, "unknown scheme '%s'", ep->scheme);
		return NULL;
	}
	t = ops->open(ep, role, err, errlen);
	if (!t)
		return NULL;
	t->ops = ops;
	t->role = role;
	t->loss = ep->loss;
	t->batch_clk = clock_open("realtime", err, errlen);
	if (!t->batch_clk) {
		ops->close(t);
		return NULL;
	}
	return t;
}

void transport_close(struct transport *t)
{
	struct clock *c;

	if (!t)
		return;
	c = t->batch_clk;
	t->ops->close(t);
	clock_close(c);
}

/* The "begun" bit of a ring slot, beside the layer bits. */
#define TX_BEGUN	(1u << TRANSPORT_NLAYERS)

/*
 * The layers a send with @flags asks for: those of TRANSPORT_STAMP_ONLY,
 * or all, that the path offers; 0 without TRANSPORT_STAMP_SEND.
 */
static unsigned send_layers(const struct transport *t, int flags)
{
	unsigned only = (unsigned)flags >> 8 & ((1u << TRANSPORT_NLAYERS) - 1);

	if (!(flags & TRANSPORT_STAMP_SEND))
		return 0;
	return t->st.tx_layers & (only ? only : ~0u);
}

/* Datagram @id's slot in the ring, emptied, asking for @layers. */
static void tx_begin(struct transport *t, uint32_t id, unsigned layers)
{
	unsigned i = id % TRANSPORT_TX_KEEP;
	int l;

	t->st.ring[i].id = id;
	t->st.ring[i].want = layers;
	t->st.ring[i].got = TX_BEGUN;
	for (l = 0; l < TRANSPORT_NLAYERS; l++)
		t->st.ring[i].at[l] = TRANSPORT_NO_STAMP;
}

int transport_send(struct transport *t, struct transport_dgram *d, struct clock *clk, int flags)
{
	int rc;

	d->tx_id = 0;
	/* Loss before submission, here and only here, so that every
	   backend drops the same way. */
	if (loss_next(&t->loss)) {
		d->tx_layers = 0;
		d->tx_at = clock_now(clk);
		if (flags & TRANSPORT_STAMP_XMT)
			ntp_put_xmt(d->buf, d->tx_at);
		return TRANSPORT_DROPPED;
	}
	/*
	 * The backend is handed what the send asks for in @d and hands back
	 * the id; the slot is begun here once the datagram went, or waits
	 * in the backend's batch (TRANSPORT_QUEUED): no backend reads a
	 * datagram's send stamps before its send has returned.
	 */
	d->tx_layers = send_layers(t, flags);
	if (flags & TRANSPORT_SEND_MORE && !(flags & TRANSPORT_STAMP_XMT) && t->ops->send_more)
		rc = t->ops->send_more(t, d, t->role == TRANSPORT_SERVER ? &d->peer : NULL, clk,
				       flags);
	else
		rc = t->ops->send(t, d, t->role == TRANSPORT_SERVER ? &d->peer : NULL, clk, flags);
	if ((rc == 0 || rc == TRANSPORT_QUEUED) && d->tx_layers)
		tx_begin(t, d->tx_id, d->tx_layers);
	return rc;
}

int transport_send_flush(struct transport *t, struct clock *clk, struct transport_sent *res,
			 unsigned cap)
{
	return t->ops->send_flush ? t->ops->send_flush(t, clk, res, cap) : 0;
}

static int send_batch_loop(struct transport *t, struct transport_msg *m, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		size_t seg = m[i].segment ? m[i].segment : m[i].len;
		size_t off = 0;
		int rc = 0;

		do {
			struct transport_dgram d = { .buf = (char *)m[i].buf + off };

			d.len = m[i].len - off < seg ? m[i].len - off : seg;
			rc = t->ops->send(t, &d, m[i].addr, t->batch_clk, 0);
			off += d.len;
		} while (rc == 0 && off < m[i].len);
		if (rc < 0)
			return i ? (int)i : rc;
	}
	return (int)n;
}

int transport_send_batch(struct transport *t, struct transport_msg *m, unsigned n)
{
	unsigned i;
	int rc;

	if (n == 0)
		return 0;
	if (t->loss.kind == LOSS_NONE)
		return t->ops->send_batch ? t->ops->send_batch(t, m, n) : send_batch_loop(t, m, n);
	/*
	 * With a schedule each message is one send, offered alone.  One the
	 * schedule counted but the backend did not take is counted again
	 * when it is offered again: the schedule follows offers, as it does
	 * for single sends.
	 */
	for (i = 0; i < n; i++) {
		if (loss_next(&t->loss))
			continue;
		rc = t->ops->send_batch ? t->ops->send_batch(t, m + i, 1) : send_batch_loop(t, m + i, 1);
		if (rc < 0)
			return i ? (int)i : rc;
	}
	return (int)n;
}

static int recv_batch_loop(struct transport *t, struct transport_msg *m, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct transport_dgram d = { .buf = m[i].buf, .cap = m[i].cap };
		ssize_t r = t->ops->recv(t, &d, t->batch_clk);

		if (r < 0)
			return i ? (int)i : (int)r;
		if (m[i].addr)
			*m[i].addr = d.peer;
		m[i].len = (size_t)r;
		m[i].segment = 0;
	}
	return (int)n;
}

int transport_recv_batch(struct transport *t, struct transport_msg *m, unsigned n)
{
	if (n == 0)
		return 0;
	return t->ops->recv_batch ? t->ops->recv_batch(t, m, n) : recv_batch_loop(t, m, n);
}

/* Before each receive: no layer's stamp yet. */
static void rx_clear(struct transport_dgram *d)
{
	int l;

	for (l = 0; l < TRANSPORT_NLAYERS; l++)
		d->rx.at[l] = TRANSPORT_NO_STAMP;
}

/*
 * After a receive that returned @n: the length, the layers' stamps on
 * @clk, the peer's host and key.  Once here, so that no caller asks the
 * transport about a datagram afterwards.
 */
static ssize_t rx_done(struct transport *t, struct transport_dgram *d, struct clock *clk,
		       ssize_t n)
{
	int l;

	d->ahead = t->ops->pending ? t->ops->pending(t) : 0;
	if (n < 0)
		return n;
	d->len = (size_t)n;
	for (l = 0; l < TRANSPORT_NLAYERS; l++)
		if (d->rx.at[l] != TRANSPORT_NO_STAMP)
			d->rx.at[l] = clock_from_realtime(clk, d->rx.at[l]);
	d->host.has = 0;
	if (t->ops->addr_host)
		t->ops->addr_host(&d->peer, &d->host);
	if (t->ops->addr_key) {
		d->keylen = t->ops->addr_key(&d->peer, d->key, sizeof(d->key));
	} else {
		d->keylen = d->peer.len < sizeof(d->key) ? d->peer.len : sizeof(d->key);
		memcpy(d->key, d->peer.data, d->keylen);
	}
	return n;
}

ssize_t transport_recv(struct transport *t, struct transport_dgram *d, struct clock *clk)
{
	rx_clear(d);
	return rx_done(t, d, clk, t->ops->recv(t, d, clk));
}

int transport_recv_ahead(struct transport *t, unsigned n, size_t cap, char *err,
			 size_t errlen)
{
	int rc = t->ops->recv_ahead ? t->ops->recv_ahead(t, n, cap) : -ENOTSUP;

	if (rc < 0)
		snprintf(err, errlen, "%s: cannot read datagrams ahead: %s", t->ops->scheme,
			 strerror(-rc));
	return rc;
}

unsigned transport_pending(const struct transport *t)
{
	return t->ops->pending ? t->ops->pending(t) : 0;
}

static ssize_t recv_wait(struct transport *t, struct transport_dgram *d, struct clock *clk,
			 int64_t deadline, enum transport_poll mode, struct pollfd *pfd);

ssize_t transport_recv_wait(struct transport *t, struct transport_dgram *d, struct clock *clk,
			    int64_t deadline, enum transport_poll mode)
{
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	ssize_t rc;

	rx_clear(d);
	if (mode == TRANSPORT_POLL_BLOCK && t->ops->recv_block) {
		rc = t->ops->recv_block(t, d, clk, deadline);
		/* An endless wait's -EAGAIN is the caller's (transport.h). */
		if (rc != -EAGAIN || deadline == INT64_MAX)
			return rx_done(t, d, clk, rc);
	}
	t->spin = mode == TRANSPORT_POLL_BUSY;
	rc = recv_wait(t, d, clk, deadline, mode, &pfd);
	t->spin = 0;
	return rx_done(t, d, clk, rc);
}

static ssize_t recv_wait(struct transport *t, struct transport_dgram *d, struct clock *clk,
			 int64_t deadline, enum transport_poll mode, struct pollfd *pfd)
{
	for (;;) {
		/*
		 * Receive first: under load a datagram is usually waiting and
		 * one system call takes it.  When none is, the receive that
		 * failed ran before the datagram arrived, so the wake-up and the
		 * stamp after it are as early as with a poll first.
		 */
		ssize_t n = t->ops->recv(t, d, clk);
		struct timespec ts, *tsp = NULL;
		int64_t left;

		if (n != -EAGAIN)
			return n;
		if (deadline != INT64_MAX) {
			left = deadline - clock_monotonic_ns();
			if (left <= 0)
				return -ETIMEDOUT;
			ts.tv_sec = left / NTPX_NS_PER_SEC;
			ts.tv_nsec = left % NTPX_NS_PER_SEC;
			tsp = &ts;
		}
		if (mode == TRANSPORT_POLL_BUSY)
			continue;
		if (ppoll(pfd, 1, tsp, NULL) < 0 && errno == EINTR)
			return -EINTR;
		/* Send stamps waiting in the error queue wake the poll: take
		   them, or it would never sleep again. */
		if (pfd->revents & POLLERR && t->ops->tx_drain)
			t->ops->tx_drain(t);
	}
}

int transport_stamps_enable(struct transport *t, char *err, size_t errlen)
{
	t->warn[0] = 0;
	if (!t->ops->stamps_enable)
		return 0;
	return t->ops->stamps_enable(t, err, errlen);
}

void transport_stamps_release(struct transport *t)
{
	t->warn[0] = 0;
	if (t->ops->stamps_release)
		t->ops->stamps_release(t);
}

const char *transport_warnings(const struct transport *t)
{
	return t->warn;
}

const char *transport_stamp_source(const struct transport *t, int tx, enum transport_layer l)
{
	unsigned layers = tx ? t->st.tx_layers : t->st.rx_layers;

	if ((unsigned)l >= TRANSPORT_NLAYERS)
		return NULL;
	if (!(layers & 1u << l))
		return tx ? t->st.tx_why[l] : t->st.rx_why[l];
	return tx ? t->st.tx_src[l] : t->st.rx_src[l];
}

unsigned transport_tx_layers(const struct transport *t)
{
	return t->st.tx_layers;
}

void transport_tx_note(struct transport *t, uint32_t id, enum transport_layer l,
		       int64_t realtime_ns)
{
	unsigned i = id % TRANSPORT_TX_KEEP;

	/*
	 * A stamp for a datagram no longer kept (or never begun) is lost.
	 * The first of a layer is kept: a datagram that crosses into
	 * another namespace and through a second qdisc there (an IFB) may
	 * report a second TX_SCHED, which is not our host's.  A layer
	 * not asked for is not kept either: every backend hands up what
	 * was asked, however it stamps.
	 */
	if (t->st.ring[i].id != id || !(t->st.ring[i].got & TX_BEGUN) ||
	    (unsigned)l >= TRANSPORT_NLAYERS || t->st.ring[i].got & 1u << l ||
	    !(t->st.ring[i].want & 1u << l))
		return;
	t->st.ring[i].at[l] = realtime_ns;
	t->st.ring[i].got |= 1u << l;
}

void transport_tx_notes(struct transport *t, const struct transport_tx_stamp *s, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		transport_tx_note(t, s[i].id, s[i].layer, s[i].at);
}

int transport_tx_stamps(struct transport *t, uint32_t id, struct clock *clk,
			struct transport_stamps *s, int64_t deadline)
{
	unsigned i = id % TRANSPORT_TX_KEEP, want = t->st.ring[i].want;
	int l, all;

	for (l = 0; l < TRANSPORT_NLAYERS; l++)
		s->at[l] = TRANSPORT_NO_STAMP;
	if (!t->st.tx_layers || !t->ops->tx_drain)
		return 1;
	for (;;) {
		struct pollfd pfd = { .fd = t->fd, .events = 0 };
		int64_t left;

		/* The error queue only when the ring does not have them all. */
		if (deadline != TRANSPORT_TX_PEEK &&
		    (t->st.ring[i].id != id || (t->st.ring[i].got & want) != want))
			t->ops->tx_drain(t);
		if (t->st.ring[i].id != id || !(t->st.ring[i].got & TX_BEGUN))
			return 0;
		want = t->st.ring[i].want;
		if ((t->st.ring[i].got & want) == want)
			break;
		left = deadline - clock_monotonic_ns();
		if (left <= 0)
			break;
		/* A backend whose completions wake nothing is asked again. */
		if (t->st.tx_spin) {
			sched_yield();
			continue;
		}
		/* POLLERR: the error queue has something. */
		if (poll(&pfd, 1, (int)((left + NTPX_NS_PER_MS - 1) / NTPX_NS_PER_MS)) < 0 &&
		    errno != EINTR)
			break;
	}
	all = (t->st.ring[i].got & want) == want;
	for (l = 0; l < TRANSPORT_NLAYERS; l++)
		if (t->st.ring[i].at[l] != TRANSPORT_NO_STAMP)
			s->at[l] = clock_from_realtime(clk, t->st.ring[i].at[l]);
		else if (want & 1u << l)
			all = 0;	/* reported without a stamp */
	return all;
}

int transport_fd(const struct transport *t)
{
	return t->fd;
}

int transport_peer_reset(struct transport *t)
{
	return t->ops->peer_reset ? t->ops->peer_reset(t) : 0;
}

const char *transport_counters(struct transport *t, char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	if (t->ops->counters && len)
		t->ops->counters(t, buf, len);
	return buf;
}

const char *transport_addr_str(const struct transport *t, const struct transport_addr *a,
			       char *buf, size_t len)
{
	t->ops->addr_str(a, buf, len);
	return buf;
}

static int refuse(const struct transport *t, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s://: %s", t->ops->scheme, what);
	return -ENOTSUP;
}

int transport_rcvbuf_set(struct transport *t, int bytes, char *err, size_t errlen)
{
	int rc;

	if (!t->ops->rcvbuf_set)
		return refuse(t, "no socket receive buffer to size", err, errlen);
	rc = t->ops->rcvbuf_set(t, bytes);
	if (rc < 0)
		snprintf(err, errlen, "%s://: receive buffer: %s", t->ops->scheme, strerror(-rc));
	return rc;
}

int transport_payload_max(struct transport *t, size_t *bytes, char *err, size_t errlen)
{
	int rc;

	if (!t->ops->payload_max)
		return refuse(t, "cannot tell the path's largest payload", err, errlen);
	rc = t->ops->payload_max(t, bytes);
	if (rc < 0)
		snprintf(err, errlen, "%s://: path MTU: %s", t->ops->scheme, strerror(-rc));
	return rc;
}
