/* SPDX-License-Identifier: ISC */
/*
 * transport_private.h - what a transport backend provides.  A backend
 * embeds struct transport in its own struct, reaches its state with
 * container_of() (util_private.h), and fills it in its one *_open()
 * function; transport.c lists the backends.  Callers use the wrappers of
 * transport.h.  Clocks (clock_private.h) and frame ports
 * (port_private.h) follow the same pattern.
 */
#ifndef NTPX_TRANSPORT_PRIVATE_H
#define NTPX_TRANSPORT_PRIVATE_H

#include "loss.h"
#include <sys/socket.h>

#include "transport.h"

struct transport_ops {
	const char *scheme;
	const char *const *params;	/* keys it accepts, NULL-terminated */
	struct transport *(*open)(const struct endpoint *ep, enum transport_role role,
				  char *err, size_t errlen);
	/*
	 * send: @d->buf, @d->len to @to (NULL: a client's endpoint); sets
	 * @d->tx_at.  @d->tx_layers says which send stamps to take: the
	 * backend sets @d->tx_id to the id it notes them under
	 * (transport_tx_note()), or clears @d->tx_layers when it takes none;
	 * transport_send() begins the id's slot when the send returns 0, so
	 * a backend notes a datagram's stamps only after its send returned.
	 * recv: into @d->buf (@d->cap); sets @d->peer, @d->rx_at and the
	 * layers' stamps in @d->rx, as CLOCK_REALTIME ns (the wrapper
	 * cleared them; transport_recv() brings them to the caller's clock).
	 */
	int (*send)(struct transport *t, struct transport_dgram *d,
		    const struct transport_addr *to, struct clock *clk, int flags);
	ssize_t (*recv)(struct transport *t, struct transport_dgram *d, struct clock *clk);
	/*
	 * Optional: transport_recv_wait()'s blocking wait, asleep in the
	 * receive itself until a datagram, a signal (-EINTR) or @deadline
	 * (CLOCK_MONOTONIC ns, INT64_MAX none).  It may return -EAGAIN
	 * before the deadline, for the caller to poll what is left.
	 */
	ssize_t (*recv_block)(struct transport *t, struct transport_dgram *d,
			      struct clock *clk, int64_t deadline);
	/* Optional (NULL: -ENOTSUP, and nothing pending); see transport.h. */
	int (*recv_ahead)(struct transport *t, unsigned n, size_t cap);
	unsigned (*pending)(const struct transport *t);
	/*
	 * Optional (NULL: every datagram is sent at once): send as above,
	 * but the datagram may wait (TRANSPORT_QUEUED) for send_flush(),
	 * which submits those waiting together (transport.h).
	 */
	int (*send_more)(struct transport *t, struct transport_dgram *d,
			 const struct transport_addr *to, struct clock *clk, int flags);
	int (*send_flush)(struct transport *t, struct clock *clk, struct transport_sent *res,
			  unsigned cap);
	/* optional: NULL means a loop of send / recv */
	int (*send_batch)(struct transport *t, struct transport_msg *m, unsigned n);
	int (*recv_batch)(struct transport *t, struct transport_msg *m, unsigned n);
	void (*close)(struct transport *t);
	void (*addr_str)(const struct transport_addr *a, char *buf, size_t len);
	/*
	 * Optional: checks parameter values that need no system access, so
	 * that transport_parse_endpoint() refuses them (a usage error) rather than the
	 * open.  0, or -1 with one line in @err.
	 */
	int (*check)(const struct endpoint *ep, char *err, size_t errlen);
	/* Optional (NULL: none); see transport.h. */
	int (*peer_reset)(struct transport *t);
	void (*counters)(struct transport *t, char *buf, size_t len);
	/*
	 * Optional stamping.  stamps_enable() sets the offered layers and
	 * their sources in t->st; tx_drain() reads every send stamp waiting
	 * (without blocking) into the ring through transport_tx_note(), or
	 * transport_tx_notes() for many at once.
	 */
	int (*stamps_enable)(struct transport *t, char *err, size_t errlen);
	/* Optional: puts back what stamps_enable changed on the host (a
	   NIC's setting), adding what went wrong to t->warn. */
	void (*stamps_release)(struct transport *t);
	void (*tx_drain)(struct transport *t);
	/*
	 * Optional (NULL: the whole address): the part of @a that names its
	 * host (transport_dgram's key), at most @cap bytes; its length.
	 */
	size_t (*addr_key)(const struct transport_addr *a, void *key, size_t cap);
	/* Optional (NULL: no host): @a's host as transport_dgram's host. */
	void (*addr_host)(const struct transport_addr *a, struct transport_host *h);
	/* Optional (NULL: the wrapper refuses, -ENOTSUP); see transport.h.
	   0 or -errno. */
	int (*rcvbuf_set)(struct transport *t, int bytes);
	int (*payload_max)(struct transport *t, size_t *bytes);
};

/* Stamps as the kernel gave them: CLOCK_REALTIME ns, or TRANSPORT_NO_STAMP. */
struct transport_stamp_state {
	unsigned tx_layers, rx_layers;		/* bit (1 << layer): offered */
	int tx_spin;				/* send stamps wake no poll on
						   fd: transport_tx_stamps()
						   asks tx_drain() again and
						   again until the deadline */
	const char *tx_src[TRANSPORT_NLAYERS], *rx_src[TRANSPORT_NLAYERS];
	/* a layer not offered: why, "-:REASON" for #stamps (NULL: nothing to say) */
	const char *tx_why[TRANSPORT_NLAYERS], *rx_why[TRANSPORT_NLAYERS];
	struct {
		uint32_t id;
		unsigned want;			/* layers asked for */
		unsigned got;			/* layers noted */
		int64_t at[TRANSPORT_NLAYERS];
	} ring[TRANSPORT_TX_KEEP];
};

struct transport {
	const struct transport_ops *ops;
	enum transport_role role;
	int fd;			/* what transport_fd() returns */
	int spin;		/* set by transport_recv_wait() while the caller
				   spins (TRANSPORT_POLL_BUSY): a backend then
				   polls its queue only, no system call */
	struct loss loss;	/* the deliberate loss schedule, the
				   endpoint's (the caller's) */
	struct clock *batch_clk; /* realtime, opened with the transport: the
				   clock the batch fallback hands a backend's
				   send and recv, whose stamps go unused */
	struct transport_stamp_state st;
	char resolved[64];	/* a client's peer as ADDR:PORT when its host
				   was a name (transport_resolved()), or "" */
	char warn[1024];	/* transport_warnings(): stamps_enable adds
				   lines with ntpx_lines_add() (log.h) */
};

/*
 * A backend's send: datagram @id got stamp @realtime_ns at layer @l
 * (TRANSPORT_NO_STAMP: the layer reported and had none for it).
 */
void transport_tx_note(struct transport *t, uint32_t id, enum transport_layer l,
		       int64_t realtime_ns);

/* One send stamp, as a backend reads it (transport_tx_notes()). */
struct transport_tx_stamp {
	uint32_t id;
	enum transport_layer layer;
	int64_t at;			/* CLOCK_REALTIME ns, or TRANSPORT_NO_STAMP */
};

/* transport_tx_note() for each of @n stamps: a backend's drain at once. */
void transport_tx_notes(struct transport *t, const struct transport_tx_stamp *s, unsigned n);

/*
 * Resolves host:port (a name or an address; @passive for a local bind;
 * @family AF_INET or AF_INET6 to choose, 0 for either) into @ss and
 * @sslen: the first address getaddrinfo() gives.  A name under .invalid
 * fails at once (RFC 6761).  Returns 0, or -1 with one line in @err and
 * errno ENXIO, which a backend's open leaves for transport_open()'s caller.
 */
int transport_resolve(const char *host, uint16_t port, int passive, int family,
		      struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errlen);

/* Nonzero when @host is an IPv4 or IPv6 address, not a name. */
int transport_host_numeric(const char *host);

extern const struct transport_ops udp_transport_ops;
extern const struct transport_ops uudp_transport_ops;
extern const struct transport_ops ib_transport_ops;

#endif
