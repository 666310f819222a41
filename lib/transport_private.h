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
	int (*send)(struct transport *t, void *buf, size_t len,
		    const struct transport_addr *to, struct clock *clk, int flags,
		    int64_t *stamp);
	ssize_t (*recv)(struct transport *t, void *buf, size_t cap,
			struct transport_addr *from, struct clock *clk, int64_t *stamp);
	/* optional: NULL means a loop of send / recv */
	int (*send_batch)(struct transport *t, struct transport_msg *m, unsigned n);
	int (*recv_batch)(struct transport *t, struct transport_msg *m, unsigned n);
	void (*close)(struct transport *t);
	void (*addr_str)(const struct transport_addr *a, char *buf, size_t len);
	/*
	 * Optional: checks parameter values that need no system access, so
	 * that endpoint_parse() refuses them (a usage error) rather than the
	 * open.  0, or -1 with one line in @err.
	 */
	int (*check)(const struct endpoint *ep, char *err, size_t errlen);
	/* Optional (NULL: none); see transport.h. */
	int (*peer_reset)(struct transport *t);
	void (*counters)(struct transport *t, char *buf, size_t len);
	/* Optional (NULL: the wrapper refuses, -ENOTSUP); see transport.h.
	   0 or -errno. */
	int (*rcvbuf_set)(struct transport *t, int bytes);
	int (*payload_max)(struct transport *t, size_t *bytes);
};

struct transport {
	const struct transport_ops *ops;
	enum transport_role role;
	int fd;			/* what transport_fd() returns */
	int spin;		/* set by transport_recv_wait() while the caller
				   spins (TRANSPORT_POLL_BUSY): a backend then
				   polls its queue only, no system call */
	struct loss loss;	/* the deliberate loss schedule, set by
				   transport_open() from $NTPX_LOSS */
};

/*
 * Resolves host:port (a name or an address; @passive for a local bind)
 * into @ss and @sslen.  Returns 0, or -1 with one line in @err.
 */
int transport_resolve(const char *host, uint16_t port, int passive,
		      struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errlen);

/* Writes @ns as the transmit timestamp of the NTP header at @buf. */
void transport_stamp_xmt(void *buf, int64_t ns);

extern const struct transport_ops udp_transport_ops;
extern const struct transport_ops uudp_transport_ops;
extern const struct transport_ops ib_transport_ops;

#endif
