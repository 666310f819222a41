/* SPDX-License-Identifier: ISC */
/*
 * port_private.h - frame ports: where uudp.c hands whole Ethernet frames
 * to a NIC and takes them back, bypassing the kernel's UDP stack.
 *
 * A port is opened on one network interface for one local UDP port: the
 * port arranges that the NIC delivers to it the IPv4 UDP frames addressed
 * to that port (an XDP program, a flow rule) and nothing else, so ARP and
 * all other traffic stay with the kernel.  Frames are built in memory the
 * port owns (tx_buf), so nothing is copied between building and sending.
 *
 * A backend embeds struct port in its own struct, points it at a const
 * struct port_ops, reaches its own state with container_of(), and fills
 * it in its *_open(): port_xdp.c (AF_XDP, any NIC, veth), port_verbs.c
 * (raw-packet QP).  Callers (uudp.c) use the port_*() wrappers below,
 * never the ops: the pattern of transport_private.h.
 */
#ifndef NTPX_PORT_PRIVATE_H
#define NTPX_PORT_PRIVATE_H

#include <errno.h>

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

/* port capabilities */
#define PORT_CAP_CSUM		0x1	/* the NIC completes the IPv4 and UDP
					   checksums (IBV_SEND_IP_CSUM) */
#define PORT_CAP_RX_PARTIAL	0x2	/* the device joins kernels on this
					   host and completes no checksum
					   (veth): a frame may arrive with its
					   UDP checksum left partial, which the
					   receiving kernel would accept */

/* tx_submit flag: report this frame's send stamp, tagged port.tx_tag */
#define PORT_TX_STAMP		0x100
/* tx_submit flag: the frame carries no stamp of the moment it is handed
   over (an interleaved reply), so it may wait for the end of the receive
   burst it answers and go with the others in one kick */
#define PORT_TX_LATER		0x200

/* What a port stamps, from its stamps_enable. */
struct port_stamping {
	int rx_layer, tx_layer;		/* enum transport_layer, or -1: none */
	const char *rx_src, *tx_src;	/* for #stamps (doc/ntpx-record.5) */
	const char *why;		/* a side without: "-:REASON" for #stamps,
					   layer why_layer (NULL: nothing to say) */
	int why_layer;
	char *warn;			/* the transport's lines for its caller
					   (transport_warnings()): add with
					   ntpx_lines_add(warn, warnlen, ...) */
	size_t warnlen;
};

struct port_config {
	const char *dev;	/* interface name */
	int ifindex;
	uint16_t udp_port;	/* local UDP port to steer, host order */
	uint32_t ip;		/* local IPv4 address, host order; 0: any */
	uint8_t mac[6];		/* the interface's MAC */
	int busy_poll;		/* nonzero: the caller may spin; tune for it */
	const char *sysfs;	/* where sysfs is; NULL: /sys (tests: a tree
				   of their own) */
	int64_t reopen_ns;	/* verbs: a device gone (DEVICE_FATAL) is
				   opened again this often, ns; 0: each second */
	long qperr;		/* verbs: the frame sent this many-th goes with a
				   memory key the HCA refuses (a send error,
				   uudp's qperr=); 0: none */
	enum {
		PORT_XDP_AUTO,		/* the best the driver has */
		PORT_XDP_SKB,		/* generic XDP, copy */
		PORT_XDP_NATIVE,	/* driver XDP, copy */
		PORT_XDP_ZEROCOPY,	/* driver XDP, zero-copy */
	} xdp_mode;
};

struct port;

struct port_ops {
	const char *name;	/* "xdp", "verbs" */
	/*
	 * A buffer for one outgoing frame of up to *cap bytes, or NULL when
	 * every buffer is in flight (-EAGAIN for the caller).
	 */
	void *(*tx_buf)(struct port *p, size_t *cap);
	/*
	 * Hands the frame in @buf (from tx_buf) of @len bytes to the NIC.
	 * @flags: PORT_CAP_* the frame relies on.  0 or -errno.
	 */
	int (*tx_submit)(struct port *p, void *buf, size_t len, int flags);
	/* Gives the buffer from tx_buf back unsent. */
	void (*tx_cancel)(struct port *p);
	/*
	 * The next received frame, without waiting: 1 with *frame and *len
	 * set (valid until rx_release), 0 when none is waiting, or -errno.
	 */
	int (*rx_next)(struct port *p, const void **frame, size_t *len);
	/* Gives the frame from the last rx_next back to the NIC. */
	void (*rx_release)(struct port *p);
	/*
	 * Optional: how many frames rx_next will hand out without another
	 * look at the NIC (the rest of a burst it took); 0 when absent.
	 */
	unsigned (*rx_pending)(const struct port *p);
	/*
	 * Optional: the moment the frame from the last rx_next was seen
	 * below us (CLOCK_REALTIME ns): 1 with *ns set, 0 when it has none.
	 */
	int (*rx_stamp)(struct port *p, int64_t *ns);
	/*
	 * Optional: turns stamping on and says what the port offers (layers
	 * -1 when nothing).  0, or -errno with one line in @err.
	 */
	int (*stamps_enable)(struct port *p, struct port_stamping *s, char *err,
			     size_t errlen);
	/*
	 * Optional: puts back what stamps_enable changed on the host,
	 * adding what went wrong to @warn (ntpx_lines_add()).
	 */
	void (*stamps_release)(struct port *p, char *warn, size_t warnlen);
	/*
	 * Optional: the send stamps waiting, without blocking: @note is called
	 * for each frame submitted with PORT_TX_STAMP whose completion came,
	 * with its tag and the moment (CLOCK_REALTIME ns), or
	 * TRANSPORT_NO_STAMP when the completion carried none.  Nothing wakes
	 * a poll for them: the caller polls this.
	 */
	void (*tx_stamps)(struct port *p, void (*note)(void *arg, uint32_t tag, int64_t ns),
			  void *arg);
	void (*close)(struct port *p);
	/* Optional: port-level counters as "name=value" words, appended. */
	void (*counters)(struct port *p, char *buf, size_t len);
};

struct port {
	const struct port_ops *ops;
	int fd;			/* polls readable when a frame may be waiting */
	int caps;		/* PORT_CAP_* */
	size_t frame_max;	/* bytes: the largest frame tx_buf can hold (>= 60) */
	int spin;		/* set by the caller around rx_next while it
				   spins: look at the queue only, no system call */
	char mode[32];		/* how it runs, one word: "skb-copy", "drv-zerocopy" */
	uint32_t tx_tag;	/* set by the caller before a PORT_TX_STAMP submit */
	unsigned restarts;	/* the port rebuilt its queue (a QP in the error
				   state): frames may have been lost, a new stream */
	char note[256];		/* what the open has to tell the caller beside
				   its success (one line), or "" */
};

/* The wrappers: what struct port_ops says, for the port @p. */
static inline const char *port_name(const struct port *p)
{
	return p->ops->name;
}

static inline void *port_tx_buf(struct port *p, size_t *cap)
{
	return p->ops->tx_buf(p, cap);
}

static inline int port_tx_submit(struct port *p, void *buf, size_t len, int flags)
{
	return p->ops->tx_submit(p, buf, len, flags);
}

static inline void port_tx_cancel(struct port *p)
{
	p->ops->tx_cancel(p);
}

static inline int port_rx_next(struct port *p, const void **frame, size_t *len)
{
	return p->ops->rx_next(p, frame, len);
}

static inline void port_rx_release(struct port *p)
{
	p->ops->rx_release(p);
}

static inline unsigned port_rx_pending(const struct port *p)
{
	return p->ops->rx_pending ? p->ops->rx_pending(p) : 0;
}

static inline void port_close(struct port *p)
{
	p->ops->close(p);
}

/* The optional stamp operations: -ENOTSUP, 0 and nothing where absent. */
static inline int port_stamps_enable(struct port *p, struct port_stamping *s, char *err,
				     size_t errlen)
{
	return p->ops->stamps_enable ? p->ops->stamps_enable(p, s, err, errlen) : -ENOTSUP;
}

static inline void port_stamps_release(struct port *p, char *warn, size_t warnlen)
{
	if (p->ops->stamps_release)
		p->ops->stamps_release(p, warn, warnlen);
}

static inline int port_rx_stamp(struct port *p, int64_t *ns)
{
	return p->ops->rx_stamp ? p->ops->rx_stamp(p, ns) : 0;
}

static inline int port_has_tx_stamps(const struct port *p)
{
	return p->ops->tx_stamps != NULL;
}

static inline void port_tx_stamps(struct port *p,
				  void (*note)(void *arg, uint32_t tag, int64_t ns), void *arg)
{
	if (p->ops->tx_stamps)
		p->ops->tx_stamps(p, note, arg);
}

/* Whether the port has counters; port_counters() appends them to @buf. */
static inline int port_has_counters(const struct port *p)
{
	return p->ops->counters != NULL;
}

static inline void port_counters(struct port *p, char *buf, size_t len)
{
	if (p->ops->counters)
		p->ops->counters(p, buf, len);
}

/*
 * Each returns NULL with one line in @err (the device, then the cause).
 * port_verbs_open() fails fast when the interface has no verbs device.
 */
struct port *port_xdp_open(const struct port_config *cfg, char *err, size_t errlen);
struct port *port_verbs_open(const struct port_config *cfg, char *err, size_t errlen);

/*
 * Nonzero when @dev has an RDMA device behind it (sysfs under @sysfs,
 * NULL: /sys) that can carry uudp: raw-packet QPs and flow steering
 * (mlx5, mlx4 with steering on), not iWARP.  For via=auto: else xdp.
 */
int port_verbs_usable(const char *sysfs, const char *dev);

#endif
