/* SPDX-License-Identifier: ISC */
/*
 * transport.h - how every tool sends and receives datagrams, whatever
 * the path underneath.
 *
 * An endpoint (endpoint.h) is a URL, the same in every tool.
 *
 * A transport is chosen by the endpoint's scheme from a table in
 * transport.c; nothing above this interface knows which backend runs.
 * Timestamps are taken inside the backend at the boundaries doc/design.md
 * (Transports) defines: immediately before the datagram is submitted, and
 * immediately after a receive returns it.
 */
#ifndef NTPX_TRANSPORT_H
#define NTPX_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "endpoint.h"
#include "opt_units.h"

enum transport_role {
	TRANSPORT_CLIENT,	/* talks to the endpoint */
	TRANSPORT_SERVER,	/* listens on the endpoint, answers whoever sent */
};

enum transport_poll {
	TRANSPORT_POLL_BLOCK,	/* sleep in the kernel until data arrives */
	TRANSPORT_POLL_BUSY,	/* spin on a non-blocking receive */
};

/* "block" or "busy" into *mode; -1 for anything else. */
int transport_poll_parse(const char *s, enum transport_poll *mode);

/* A peer's address as the backend knows it; opaque above transport.c. */
struct transport_addr {
	uint32_t len;
	unsigned char data[124];
};

/*
 * The sender's host as an address, for a server's policy (lib/access.h):
 * IPv6, an IPv4 address as ::ffff:a.b.c.d.  @has is 0 where the path's
 * peers have no IP address (ib://).
 */
struct transport_host {
	int has;
	uint8_t a[16];
};

/*
 * Stamps from the layers below the tool (doc/ntpx-record.5, columns tNq
 * tNk tNh).  Each is on the clock the caller passes, converted from the
 * kernel's CLOCK_REALTIME by clock_from_realtime(), so that it compares
 * with T1..T4 directly.  A backend that stamps nothing offers no layer;
 * its stamps are all TRANSPORT_NO_STAMP.
 */
enum transport_layer {
	TRANSPORT_LAYER_Q,	/* send: the datagram enters the qdisc */
	TRANSPORT_LAYER_K,	/* the kernel at the driver boundary */
	TRANSPORT_LAYER_H,	/* the NIC or HCA */
	TRANSPORT_NLAYERS
};

#define TRANSPORT_NO_STAMP	INT64_MIN

struct transport_stamps {
	int64_t at[TRANSPORT_NLAYERS];	/* ns on the caller's clock, or
					   TRANSPORT_NO_STAMP */
};

/*
 * A datagram and what the transport knows of it: its bytes, its peer and
 * every stamp taken of it, so that nothing about a datagram is fetched
 * afterwards from the transport (as linuxptp's transport_recv() returns
 * the message with its hardware stamp, and chrony's NSR_ProcessRx()
 * takes address, stamp and data together).  A receive fills the receive
 * side; a send reads buf, len and (a server's) peer and fills the send
 * side.  A server answers a request in the request's own struct.
 */
struct transport_dgram {
	void *buf;
	size_t cap;			/* receive: room in buf */
	size_t len;			/* send: bytes to send; receive: the
					   datagram's, more than cap when it
					   was truncated */
	struct transport_addr peer;	/* receive: the sender; a server's send:
					   where to (a client's goes to its
					   endpoint) */
	struct transport_host host;	/* receive: the sender's host */
	unsigned char key[124];		/* receive: the part of peer that
					   names its host, for per-client
					   state (for UDP the address without
					   the port, as chrony's client log
					   keys its clients): a client that
					   sends each request from a new port
					   stays one client */
	size_t keylen;
	int64_t rx_at;			/* receive: the caller's clock read
					   immediately after the receive
					   returned (T2, T4) */
	struct transport_stamps rx;	/* receive: the layers' stamps */
	unsigned ahead;			/* receive (even one that failed): the
					   datagrams read ahead that wait after
					   this one (transport_pending()) */
	int64_t tx_at;			/* send: the caller's clock read
					   immediately before the datagram was
					   submitted (T1, T3) */
	uint32_t tx_id;			/* send with TRANSPORT_STAMP_SEND: the
					   id whose stamps transport_tx_stamps()
					   reads */
	unsigned tx_layers;		/* send: the layers whose stamps it
					   asks for (bits 1 << layer), set by
					   transport_send() from its flags and
					   what the path offers; the backend
					   clears it for a datagram it does not
					   stamp */
};

/*
 * transport_send() returns this, not an error, when the loss schedule
 * (loss.h, $NTPX_LOSS) took the datagram: it was stamped but never
 * submitted.  Callers record the exchange as `dropped`.
 */
#define TRANSPORT_DROPPED	1

/* transport_send() flags */
#define TRANSPORT_STAMP_XMT	0x1	/* write the send stamp into the NTP
					   packet's transmit timestamp */
#define TRANSPORT_STAMP_SEND	0x2	/* with stamps enabled: take this
					   datagram's send stamps (below the
					   tool: transport_tx_stamps()) at
					   every layer the path offers */
/*
 * With TRANSPORT_STAMP_SEND: only at the layers in @mask (bits 1 <<
 * TRANSPORT_LAYER_*; 0 is every layer), so that a sender that uses one
 * layer pays for one where stamps are asked per datagram (a server's
 * kernel UDP socket: the kernel queues an error-queue message per layer
 * and send; a connected client's asks for every layer once, and @mask
 * only chooses what is kept).  A layer the path does not offer is left
 * out; a datagram none of whose layers is offered is sent without send
 * stamps, as without TRANSPORT_STAMP_SEND (transport_tx_layers() tells
 * beforehand).
 */
#define TRANSPORT_STAMP_ONLY(mask)	((int)(mask) << 8)
/*
 * The datagram may wait for others and go with them in one submission
 * (a sendmmsg), at transport_send_flush(): transport_send() then returns
 * TRANSPORT_QUEUED, with @d->tx_id set (its send stamps come after the
 * flush) and @d->tx_at not.  Only for a datagram that carries no stamp
 * of its own send: with TRANSPORT_STAMP_XMT, or where the backend does
 * not batch (or its batch is full), it is sent at once, as without.
 */
#define TRANSPORT_SEND_MORE	0x4
#define TRANSPORT_QUEUED	2

struct transport;

/*
 * Parses the endpoint URL @url (endpoint.h) with the schemes of this
 * build, each with its keys and checks.  Returns 0, or -1 with one line
 * in @err naming what is wrong (unknown scheme, bad port, unknown
 * key...).  Names are not resolved here.  ep->url is @url, or for a form
 * without a scheme the URL it stands for (udp://HOST:PORT...).
 */
int transport_parse_endpoint(const char *url, struct endpoint *ep, char *err, size_t errlen);

/*
 * Opens @ep for @role.  Returns NULL with one line in @err on failure
 * (the endpoint, then the cause), and errno ENXIO when it failed because
 * the endpoint's host name does not resolve: for the tool a usage error
 * (exit 2), as ping's unknown host is.
 */
struct transport *transport_open(const struct endpoint *ep, enum transport_role role,
				 char *err, size_t errlen);
void transport_close(struct transport *t);

/*
 * What a client's endpoint resolved to, "127.0.0.1:123" or "[::1]:123",
 * when its host was a name; NULL when it was an address (the URL says it
 * all) or the backend does not say.
 */
const char *transport_resolved(const struct transport *t);

/*
 * Sends @d->len bytes of @d->buf: a server's to @d->peer, a client's to
 * its endpoint.  @d->tx_at is @clk read immediately before the datagram
 * is submitted; with TRANSPORT_STAMP_XMT that reading is also written
 * into the packet, which must then be an NTP header.  With
 * TRANSPORT_STAMP_SEND, @d->tx_id names its send stamps.  The loss
 * schedule is applied first, the same for every backend.  Returns 0,
 * TRANSPORT_DROPPED, or -errno.
 */
int transport_send(struct transport *t, struct transport_dgram *d, struct clock *clk, int flags);

/*
 * Sends the datagrams that TRANSPORT_SEND_MORE left waiting, in the order
 * they were given, and says for each, in @res (room for @cap): 0 or
 * -errno, and @clk read immediately before the submission that took it.
 * Returns how many there were (none where the backend does not batch).
 */
struct transport_sent {
	int rc;
	int64_t tx_at;
};
int transport_send_flush(struct transport *t, struct clock *clk, struct transport_sent *res,
			 unsigned cap);

/*
 * Takes one datagram into @d->buf (@d->cap bytes) if one is waiting,
 * without blocking, and fills the receive side of @d: its length (which
 * may exceed @d->cap: the datagram was truncated), its peer, @d->rx_at
 * (@clk read immediately after the receive returned) and the layers'
 * receive stamps on @clk.  Returns the length, -EAGAIN when none is
 * waiting, or -errno (-ECONNREFUSED: the peer's port is closed).
 */
ssize_t transport_recv(struct transport *t, struct transport_dgram *d, struct clock *clk);

/*
 * transport_recv() that waits until @deadline (CLOCK_MONOTONIC ns, or
 * INT64_MAX for ever), sleeping or spinning as @mode says.  Returns as
 * transport_recv(), or -ETIMEDOUT (never before @deadline), or -EINTR
 * when a signal arrived, whether or not its handler asks SA_RESTART.
 * A wait without a deadline may also return -EAGAIN, nothing received,
 * every second or so: a signal that came between the caller's look at
 * its flags and the wait would otherwise go unseen; the caller looks
 * again and waits again.  Send stamps waiting meanwhile do not end it;
 * transport_tx_stamps() reads them.
 */
ssize_t transport_recv_wait(struct transport *t, struct transport_dgram *d, struct clock *clk,
			    int64_t deadline, enum transport_poll mode);

/*
 * Lets transport_recv() and transport_recv_wait() take up to @n datagrams
 * (of up to @cap bytes each: a longer one is truncated, as a receive
 * into @cap) in one system call where several are waiting, and hand
 * them out one at a time: a server under load pays one call for several
 * requests.  Each keeps its own receive stamps; its user stamp is the
 * moment the call that read it returned, which for all but the first is
 * earlier than one receive each would have read it.  Datagrams read
 * ahead wait in the transport, where transport_fd() cannot show them:
 * transport_pending() counts them, and transport_recv_wait() hands them
 * out before it waits.  @n of 0 or 1 turns it off.  0, or -errno with
 * one line in @err (-ENOTSUP: the backend cannot).
 */
int transport_recv_ahead(struct transport *t, unsigned n, size_t cap, char *err,
			 size_t errlen);
unsigned transport_pending(const struct transport *t);

/*
 * Batches, for bulk traffic (loadgen): no timestamps, as few system calls
 * as the backend can manage.  A backend without a batch path gets a loop
 * of single sends or receives.
 */
struct transport_msg {
	void *buf;
	size_t len;		/* send: bytes in buf; recv: bytes received,
				   more than cap when truncated */
	size_t cap;		/* recv: room in buf */
	size_t segment;		/* send: > 0 when buf holds datagrams of this
				   many bytes each (the last may be shorter),
				   sent as one submission where the backend can
				   (UDP GSO); recv: > 0 when the backend handed
				   up datagrams of this size coalesced (GRO) */
	struct transport_addr *addr;	/* send: to, NULL for a client's
					   endpoint; recv: from, or NULL */
};

/* Most datagrams in one segmented message (the kernel's UDP GSO limit). */
#define TRANSPORT_MAX_SEGMENTS	64

/*
 * Submits up to @n messages.  Each message passes the loss schedule as one
 * send.  Returns how many were taken (>= 1; dropped ones count), or -errno
 * when the first was not (-EAGAIN: the socket buffer is full, -EMSGSIZE:
 * too large for the path, -EIO/-EINVAL: segmentation refused).
 */
int transport_send_batch(struct transport *t, struct transport_msg *m, unsigned n);

/*
 * Takes up to @n waiting messages without blocking, filling len, segment
 * and addr.  Returns how many (>= 1), -EAGAIN when none waits, or -errno.
 * A backend may coalesce datagrams for batch receivers (segment > 0).
 */
int transport_recv_batch(struct transport *t, struct transport_msg *m, unsigned n);


/*
 * Asks the backend for every stamp its path offers.  Returns 0 (perhaps
 * with no layer offered), or -errno with one line in @err.  Off until
 * called: bulk senders (loadgen) never pay for it.
 */
int transport_stamps_enable(struct transport *t, char *err, size_t errlen);

/*
 * Puts back what transport_stamps_enable() changed on the host (a NIC's
 * hardware stamping setting), before transport_close(), so that a
 * failure can be said: transport_close() puts it back too, but can tell
 * nobody.
 */
void transport_stamps_release(struct transport *t);

/*
 * What the open, or the latest transport_stamps_enable() or
 * transport_stamps_release(), has to say beside its answer (a link that
 * went down when an XDP program was attached, a layer it cannot stamp
 * and why, a NIC's stamping setting it changed or could not put back):
 * lines each ending in "\n", "" when none, for the caller to show
 * (ntpx_err_lines()) after each; the library prints nothing.
 */
const char *transport_warnings(const struct transport *t);

/*
 * What feeds layer @l on the send (@tx = 1) or receive (@tx = 0) side:
 * "so_timestamping:tx_sched" and the like; for a layer the backend has
 * but cannot stamp with here, "-:" and why (#stamps says it:
 * "-:qp_refused_stamp_format"); NULL when nothing does.
 */
const char *transport_stamp_source(const struct transport *t, int tx, enum transport_layer l);

/*
 * The send layers offered (bits 1 << TRANSPORT_LAYER_*): those whose
 * transport_stamp_source() names a source.  0 without stamps.
 */
unsigned transport_tx_layers(const struct transport *t);

/*
 * The send stamps of datagram @id (a transport_dgram's tx_id).  Waits until @deadline (CLOCK_MONOTONIC
 * ns; 0: do not wait) for every layer its send asked for (all the path
 * offers, or those of TRANSPORT_STAMP_ONLY); the others are
 * TRANSPORT_NO_STAMP.  @deadline TRANSPORT_TX_PEEK does not wait and
 * does not read the backend either (the error queue): only what earlier
 * reads kept, so that a caller can read many datagrams' stamps with one
 * look (deadline 0) when enough are due.  Returns 1 when all came, 0 when some did not
 * (those are TRANSPORT_NO_STAMP).  A backend keeps the stamps of its
 * last TRANSPORT_TX_KEEP datagrams.
 */
#define TRANSPORT_TX_KEEP	64
#define TRANSPORT_TX_PEEK	(-1)

/*
 * How long a tool waits for a datagram's send stamps once they are due
 * (the reply has come, or the server is stopping): they normally came
 * long before; this only bounds the wait for one that never comes.
 */
#define TRANSPORT_TX_WAIT_NS	(10 * NTPX_NS_PER_MS)
int transport_tx_stamps(struct transport *t, uint32_t id, struct clock *clk,
			struct transport_stamps *s, int64_t deadline);

/* A file descriptor that polls readable when a datagram may be waiting. */
int transport_fd(const struct transport *t);

/*
 * Nonzero once after the backend lost its peer and found it again (a
 * re-resolved address, a restarted server; lib/peer.h): samples before
 * and after may come from another server instance or path, so the caller
 * resets its per-peer filter state before using the next sample.
 * Backends that track no peer always return 0.
 */
int transport_peer_reset(struct transport *t);

/*
 * The backend's counters as one line of "name=value" words (datagrams
 * dropped as bad input, resolutions...), for a tool's summary; "" when the
 * backend keeps none.  Returns @buf.
 */
const char *transport_counters(struct transport *t, char *buf, size_t len);

/*
 * What a bulk sender or receiver (loadgen) asks of a path.  Each returns
 * 0, or -ENOTSUP with one line in @err when the backend has no such
 * thing (uudp and ib keep no kernel socket), or -errno when it failed.
 *
 * transport_rcvbuf_set: a receive buffer of @bytes (a kernel socket's:
 *   past rmem_max where the process may, else what the kernel allows).
 * transport_payload_max: the largest datagram payload the path carries
 *   unfragmented (the connected socket's path MTU less the IPv4 and UDP
 *   headers).
 * Batch sends need no question: transport_send_batch() works on every
 * backend (a loop of sends where it has no batch operation).
 */
int transport_rcvbuf_set(struct transport *t, int bytes, char *err, size_t errlen);
int transport_payload_max(struct transport *t, size_t *bytes, char *err, size_t errlen);

/* @a as text ("10.0.0.1:41234"), for output: logs and error lines. */
const char *transport_addr_str(const struct transport *t, const struct transport_addr *a,
			       char *buf, size_t len);

#endif
