/* SPDX-License-Identifier: ISC */
/*
 * port_xdp.c - the AF_XDP frame port: any Linux NIC, and veth.
 *
 * Our XDP program (lib/bpf/ntpx_xdp.bpf.c, embedded at build time) is
 * loaded with libbpf, told the UDP port, and attached through a BPF link:
 * the link belongs to this process's file table, so the program leaves
 * the interface when the process exits, however it exits (SIGKILL too).
 * A program of ours attached the old way (netlink), which outlives its
 * process, is replaced; anybody else's program is left alone and the open
 * fails, naming it.  Programs are never stacked.
 *
 * The socket and its UMEM come from libxdp (xsk.h), with libxdp's own
 * program inhibited.  UMEM: PORT_XDP_FRAMES chunks of PORT_XDP_CHUNK
 * bytes; the first half feed the fill ring, the second half are transmit
 * buffers kept on a free stack and returned from the completion ring.
 * One socket on queue 0: a multi-queue NIC must steer the port there
 * (ethtool -N ... action 0) or run with one combined channel.
 *
 * Mode: veth runs generic XDP (skb mode) with copy; other drivers try
 * native XDP with zero-copy, then native with copy, then generic.  The
 * endpoint's xdpmode= (port_config.xdp_mode) asks for one of them only.
 *
 * On veth, a frame from a kernel socket whose sender left the UDP
 * checksum to the device (tx offload on) carries only the pseudo-header
 * sum: PORT_CAP_RX_PARTIAL tells uudp.c to accept that, as the kernel
 * would.  Frames from a real NIC always carry a complete checksum.
 */
#include <net/if.h>		/* before the linux/ headers */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "bpf/ntpx_xdp.h"	/* build/: ntpx_xdp_bpf_obj[] */
#include "clock.h"
#include "util_private.h"
#include "port_private.h"

#define PORT_XDP_FRAMES		512
#define PORT_XDP_CHUNK		XSK_UMEM__DEFAULT_FRAME_SIZE	/* 4096 */
#define PORT_XDP_RING		256	/* descriptors per ring, power of 2 */
#define PORT_XDP_RX_FRAMES	(PORT_XDP_FRAMES / 2)
#define PORT_XDP_PROG		"ntpx_xdp"
#define PORT_XDP_BUSY_NS	(1000 * 1000000LL)	/* queue still held: wait 1 s */

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif

struct xdp_port {
	struct port p;
	void *area;
	struct xsk_umem *umem;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_ring_prod tx;
	struct xsk_ring_cons rx;
	struct xsk_socket *xsk;
	struct bpf_object *obj;
	int link_fd;
	int busy;
	uint64_t tx_free[PORT_XDP_FRAMES - PORT_XDP_RX_FRAMES];
	unsigned ntx_free;
	uint64_t tx_cur;	/* chunk handed out by tx_buf */
	uint64_t rx_cur;	/* chunk handed out by rx_next */
	int rx_held;
	uint64_t tx_kicks_failed, fill_short;
};

/* libbpf's complaints, kept for our one error line instead of stderr. */
static char libbpf_last[160];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *nl;

	if (level == LIBBPF_WARN) {
		vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, ap);
		nl = strchr(libbpf_last, '\n');
		if (nl)
			*nl = 0;
	}
	return 0;
}

/* The interface's driver name ("veth", "mlx5_core"), or "" if unknown. */
static void driver_name(const char *dev, char *buf, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	buf[0] = 0;
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&info;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		snprintf(buf, len, "%s", info.driver);
	close(fd);
}

/*
 * Makes room for our program on @ifindex: nothing attached, fine; ours
 * attached by netlink (left by a process that died), detached; anything
 * else, including ours held by a live process's link, refused.
 */
static int xdp_clear_stale(const struct port_config *cfg, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info;
	__u32 ilen = sizeof(info);
	__u32 flags;
	int fd, rc;

	if (bpf_xdp_query(cfg->ifindex, 0, &q) || !q.prog_id)
		return 0;
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		snprintf(err, errlen, "%s: cannot inspect the attached XDP program (id %u): %s",
			 cfg->dev, q.prog_id, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (strcmp(info.name, PORT_XDP_PROG) != 0) {
		snprintf(err, errlen, "%s: another XDP program is attached ('%s', id %u); "
			 "not replacing it", cfg->dev, info.name, q.prog_id);
		return -1;
	}
	switch (q.attach_mode) {
	case XDP_ATTACHED_SKB:
		flags = XDP_FLAGS_SKB_MODE;
		break;
	case XDP_ATTACHED_DRV:
		flags = XDP_FLAGS_DRV_MODE;
		break;
	default:
		flags = 0;
		break;
	}
	rc = bpf_xdp_detach(cfg->ifindex, flags, NULL);
	if (rc == -EBUSY) {
		snprintf(err, errlen, "%s: an ntpx XDP program is in use by a running process "
			 "(one uudp endpoint per interface)", cfg->dev);
		return -1;
	}
	if (rc) {
		snprintf(err, errlen, "%s: cannot detach a stale ntpx XDP program (id %u): %s",
			 cfg->dev, q.prog_id, strerror(-rc));
		return -1;
	}
	return 0;
}

static int xdp_load(struct xdp_port *x, const struct port_config *cfg, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "ntpx_xdp");
	struct bpf_program *prog;
	struct bpf_map *map;
	uint16_t nport = htons(cfg->udp_port);
	int rc;

	x->obj = bpf_object__open_mem(ntpx_xdp_bpf_obj, sizeof(ntpx_xdp_bpf_obj), &oo);
	if (!x->obj) {
		snprintf(err, errlen, "%s: cannot open the XDP object: %s", cfg->dev,
			 strerror(errno));
		return -1;
	}
	rc = -ENOENT;
	bpf_object__for_each_map(map, x->obj)
		if (bpf_map__is_internal(map) && strstr(bpf_map__name(map), ".rodata"))
			rc = bpf_map__set_initial_value(map, &nport, sizeof(nport));
	if (rc) {
		snprintf(err, errlen, "%s: XDP object has no 2-byte .rodata for the port",
			 cfg->dev);
		goto no_object;
	}
	rc = bpf_object__load(x->obj);
	if (rc) {
		snprintf(err, errlen, "%s: cannot load the XDP program: %s%s%s", cfg->dev,
			 strerror(-rc), libbpf_last[0] ? ": " : "", libbpf_last);
		goto no_object;
	}
	prog = bpf_object__find_program_by_name(x->obj, PORT_XDP_PROG);
	if (!prog) {
		snprintf(err, errlen, "%s: XDP object has no program %s", cfg->dev, PORT_XDP_PROG);
		goto no_object;
	}
	return bpf_program__fd(prog);

no_object:
	bpf_object__close(x->obj);
	x->obj = NULL;
	return -1;
}

static int xdp_attach(struct xdp_port *x, const struct port_config *cfg, int prog_fd,
		      __u32 mode, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = mode);

	x->link_fd = bpf_link_create(prog_fd, cfg->ifindex, BPF_XDP, &lo);
	if (x->link_fd < 0) {
		snprintf(err, errlen, "%s: cannot attach the XDP program (%s mode): %s", cfg->dev,
			 mode == XDP_FLAGS_SKB_MODE ? "skb" : "native", strerror(errno));
		return -1;
	}
	return 0;
}

static int xdp_socket(struct xdp_port *x, const struct port_config *cfg, __u32 mode,
		      __u16 bind, char *err, size_t errlen)
{
	struct xsk_socket_config sc = {
		.rx_size = PORT_XDP_RING,
		.tx_size = PORT_XDP_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = mode,
		.bind_flags = bind | XDP_USE_NEED_WAKEUP,
	};
	struct timespec step = { 0, 10 * 1000000L };
	int64_t end = clock_monotonic_ns() + PORT_XDP_BUSY_NS;
	int rc;

	/*
	 * The socket of a process that just exited leaves queue 0 only when
	 * the kernel's deferred cleanup of its UMEM has run: until then the
	 * bind says EBUSY.  Wait for it, briefly.
	 */
	while ((rc = xsk_socket__create(&x->xsk, cfg->dev, 0, x->umem, &x->rx, &x->tx,
					&sc)) == -EBUSY && clock_monotonic_ns() < end)
		nanosleep(&step, NULL);
	if (rc) {
		x->xsk = NULL;
		snprintf(err, errlen, "%s: AF_XDP socket (%s): %s", cfg->dev,
			 bind & XDP_ZEROCOPY ? "zero-copy" : "copy", strerror(-rc));
		return -1;
	}
	return 0;
}

static void xdp_close_all(struct xdp_port *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->link_fd >= 0)
		close(x->link_fd);
	if (x->obj)
		bpf_object__close(x->obj);
	if (x->area)
		munmap(x->area, (size_t)PORT_XDP_FRAMES * PORT_XDP_CHUNK);
	free(x);
}

static const struct port_ops xdp_port_ops;

struct port *port_xdp_open(const struct port_config *cfg, char *err, size_t errlen)
{
	static const struct {
		__u32 mode;
		__u16 bind;
		const char *name;
	} modes[] = {
		{ XDP_FLAGS_DRV_MODE, XDP_ZEROCOPY, "drv-zerocopy" },
		{ XDP_FLAGS_DRV_MODE, XDP_COPY, "drv-copy" },
		{ XDP_FLAGS_SKB_MODE, XDP_COPY, "skb-copy" },
	};
	struct xsk_umem_config uc = {
		.fill_size = PORT_XDP_RING,
		.comp_size = PORT_XDP_RING,
		.frame_size = PORT_XDP_CHUNK,
		.frame_headroom = 0,
	};
	struct xdp_port *x = calloc(1, sizeof(*x));
	size_t size = (size_t)PORT_XDP_FRAMES * PORT_XDP_CHUNK;
	char drv[32], why[256] = "";
	unsigned i, first, last;
	__u32 idx, key = 0;
	int prog_fd, rc, map_fd, xfd, one = 1;

	if (!x) {
		snprintf(err, errlen, "%s: out of memory", cfg->dev);
		return NULL;
	}
	x->link_fd = -1;
	x->busy = cfg->busy_poll;
	libbpf_set_print(libbpf_quiet);	/* only main() prints */
	libbpf_last[0] = 0;
	x->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		snprintf(err, errlen, "%s: UMEM: %s", cfg->dev, strerror(errno));
		goto no_port;
	}
	rc = xsk_umem__create(&x->umem, x->area, size, &x->fq, &x->cq, &uc);
	if (rc) {
		x->umem = NULL;
		snprintf(err, errlen, "%s: UMEM registration: %s", cfg->dev, strerror(-rc));
		goto no_port;
	}
	if (xdp_clear_stale(cfg, err, errlen))
		goto no_port;
	prog_fd = xdp_load(x, cfg, err, errlen);
	if (prog_fd < 0)
		goto no_port;

	driver_name(cfg->dev, drv, sizeof(drv));
	switch (cfg->xdp_mode) {
	case PORT_XDP_ZEROCOPY:
		first = last = 0;
		break;
	case PORT_XDP_NATIVE:
		first = last = 1;
		break;
	case PORT_XDP_SKB:
		first = last = 2;
		break;
	default:
		/* veth: generic XDP, whose copy is the one the kernel tests most */
		first = strcmp(drv, "veth") == 0 ? 2 : 0;
		last = 2;
		break;
	}
	for (i = first; i <= last; i++) {
		if (x->link_fd < 0 || (i > first && modes[i].mode != modes[i - 1].mode)) {
			if (x->link_fd >= 0) {
				close(x->link_fd);
				x->link_fd = -1;
			}
			if (xdp_attach(x, cfg, prog_fd, modes[i].mode, why, sizeof(why)))
				continue;
		}
		if (xdp_socket(x, cfg, modes[i].mode, modes[i].bind, why, sizeof(why)) == 0)
			break;
	}
	if (!x->xsk) {
		snprintf(err, errlen, "%s", why);	/* the last mode's reason */
		goto no_port;
	}
	snprintf(x->p.mode, sizeof(x->p.mode), "%s", modes[i].name);

	map_fd = bpf_object__find_map_fd_by_name(x->obj, "ntpx_xsks");
	xfd = xsk_socket__fd(x->xsk);
	if (map_fd < 0 || bpf_map_update_elem(map_fd, &key, &xfd, 0)) {
		snprintf(err, errlen, "%s: cannot insert the socket into the XSKMAP: %s", cfg->dev,
			 strerror(errno));
		goto no_port;
	}

	/* Receive chunks to the fill ring, transmit chunks to the free stack. */
	if (xsk_ring_prod__reserve(&x->fq, PORT_XDP_RX_FRAMES, &idx) != PORT_XDP_RX_FRAMES) {
		snprintf(err, errlen, "%s: fill ring too small", cfg->dev);
		goto no_port;
	}
	for (i = 0; i < PORT_XDP_RX_FRAMES; i++)
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) = (uint64_t)i * PORT_XDP_CHUNK;
	xsk_ring_prod__submit(&x->fq, PORT_XDP_RX_FRAMES);
	for (i = PORT_XDP_RX_FRAMES; i < PORT_XDP_FRAMES; i++)
		x->tx_free[x->ntx_free++] = (uint64_t)i * PORT_XDP_CHUNK;

	if (x->busy) {
		int usecs = 20, budget = 16;

		/* Best effort: kernels without it simply spin in userspace. */
		(void)setsockopt(xfd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one));
		(void)setsockopt(xfd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs));
		(void)setsockopt(xfd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget));
	}
	x->p.ops = &xdp_port_ops;
	x->p.fd = xfd;
	/*
	 * A kernel socket at the other end of a veth leaves its UDP checksum
	 * to a device that never completes it, and the bytes reach us so;
	 * the kernel there would accept them (doc/uudp.md).
	 */
	x->p.caps = strcmp(drv, "veth") == 0 ? PORT_CAP_RX_PARTIAL : 0;
	x->p.frame_max = PORT_XDP_CHUNK;
	return &x->p;

no_port:
	xdp_close_all(x);
	return NULL;
}

/* Takes back the transmit chunks whose frames the kernel has sent. */
static void xdp_reap(struct xdp_port *x)
{
	__u32 idx, n, i;

	n = xsk_ring_cons__peek(&x->cq, PORT_XDP_RING, &idx);
	for (i = 0; i < n; i++)
		x->tx_free[x->ntx_free++] = *xsk_ring_cons__comp_addr(&x->cq, idx + i);
	if (n)
		xsk_ring_cons__release(&x->cq, n);
}

static void *xdp_tx_buf(struct port *p, size_t *cap)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);

	xdp_reap(x);
	if (!x->ntx_free)
		return NULL;
	x->tx_cur = x->tx_free[--x->ntx_free];
	*cap = PORT_XDP_CHUNK;
	return xsk_umem__get_data(x->area, x->tx_cur);
}

static int xdp_tx_submit(struct port *p, void *buf, size_t len, int flags)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	struct xdp_desc *d;
	__u32 idx;

	if (xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1) {
		x->tx_free[x->ntx_free++] = x->tx_cur;
		return -EAGAIN;
	}
	d = xsk_ring_prod__tx_desc(&x->tx, idx);
	d->addr = x->tx_cur;
	d->len = (__u32)len;
	d->options = 0;
	xsk_ring_prod__submit(&x->tx, 1);
	/*
	 * In copy mode the kernel sends only when asked; zero-copy drivers
	 * say when they need the kick.  A failed kick leaves the descriptor
	 * in the ring for the next one.
	 */
	if (xsk_ring_prod__needs_wakeup(&x->tx) &&
	    sendto(x->p.fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
	    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS && errno != ENETDOWN)
		return -errno;
	xdp_reap(x);
	return 0;
}

static void xdp_tx_cancel(struct port *p)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);

	x->tx_free[x->ntx_free++] = x->tx_cur;
}

static int xdp_rx_next(struct port *p, const void **frame, size_t *len)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	const struct xdp_desc *d;
	__u32 idx;

	if (x->rx_held)
		return -EBUSY;
	if (xsk_ring_cons__peek(&x->rx, 1, &idx) != 1) {
		/* The driver asks to be driven (zero-copy): a sleeping
		   caller woken through epoll has not polled the XSK. */
		if (xsk_ring_prod__needs_wakeup(&x->fq))
			(void)recvfrom(x->p.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		return 0;
	}
	d = xsk_ring_cons__rx_desc(&x->rx, idx);
	x->rx_cur = d->addr;
	*len = d->len;
	xsk_ring_cons__release(&x->rx, 1);
	*frame = xsk_umem__get_data(x->area, x->rx_cur);
	x->rx_held = 1;
	return 1;
}

static void xdp_rx_release(struct port *p)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	__u32 idx;

	if (!x->rx_held)
		return;
	x->rx_held = 0;
	if (xsk_ring_prod__reserve(&x->fq, 1, &idx) != 1) {
		x->fill_short++;	/* cannot happen: as many slots as chunks */
		return;
	}
	*xsk_ring_prod__fill_addr(&x->fq, idx) = xsk_umem__extract_addr(x->rx_cur);
	xsk_ring_prod__submit(&x->fq, 1);
}

static void xdp_close(struct port *p)
{
	xdp_close_all(container_of(p, struct xdp_port, p));
}

static void xdp_counters(struct port *p, char *buf, size_t len)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	size_t n = strlen(buf);

	if (n < len)
		snprintf(buf + n, len - n, "%sfill_short=%llu", n ? " " : "",
			 (unsigned long long)x->fill_short);
}

static const struct port_ops xdp_port_ops = {
	.name = "xdp",
	.tx_buf = xdp_tx_buf,
	.tx_submit = xdp_tx_submit,
	.tx_cancel = xdp_tx_cancel,
	.rx_next = xdp_rx_next,
	.rx_release = xdp_rx_release,
	.close = xdp_close,
	.counters = xdp_counters,
};
