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
 * One socket per receive queue (ETHTOOL_GCHANNELS), all in one UMEM of
 * PORT_XDP_CHUNK-byte chunks: RSS sends a flow to any queue, and the
 * program redirects a frame to the socket of the queue it came in on,
 * so a socket on queue 0 alone would lose every reply of a client whose
 * flow hashes elsewhere.  Each queue's socket has its own fill ring and
 * receive chunks (xdp_rx_chunks()); queue 0's also transmits, from
 * PORT_XDP_TX_CHUNKS buffers kept on a free stack and returned from its
 * completion ring; the others share its UMEM (XDP_SHARED_UMEM) and so its
 * mode.  An ntuple rule steering the port to queue 0 would do with one
 * socket, but not every driver has ntuple filters, and a rule outlives
 * a process that dies (the BPF link does not): so sockets, and an
 * interface with more queues than PORT_XDP_MAX_QUEUES is refused with
 * the line that says how to have fewer.
 *
 * Mode: veth runs generic XDP (skb mode) with copy; other drivers try
 * native XDP with zero-copy, then native with copy, then generic.  The
 * endpoint's xdpmode= (port_config.xdp_mode) asks for one of them only.
 *
 * Send stamps from AF_XDP TX metadata (Linux 6.8 and later; the UAPI is
 * shimmed in missing.h): libxdp 1.3 cannot pass tx_metadata_len, so the
 * socket, its umem and rings are set up in xdp_own.c with the umem
 * registered with tx_metadata_len and XDP_UMEM_TX_METADATA_LEN, and libxdp
 * does only the rings' inline helpers.  Transmit frames start
 * PORT_XDP_TX_ROOM bytes into their chunk, the struct xsk_tx_metadata just
 * before them; a frame whose stamp is asked for goes with XDP_TX_METADATA
 * and XDP_TXMD_FLAGS_TIMESTAMP, and its completion's tx_timestamp is read
 * when the completion ring gives the chunk back.  In copy mode that stamp
 * is the kernel's, CLOCK_TAI when it freed the frame's copy (veth: when
 * the frame crossed to the peer namespace; a NIC: when the driver reaped
 * the send), the 'k' layer; in zero-copy mode the driver's, on the NIC's
 * PTP hardware clock, the 'h' layer, which igc and stmmac give only with
 * hardware transmit stamping on: stamps_enable switches it on (lib/hwts.h:
 * read first, nothing ptp4l set weakened, put back at close), as the
 * kernel's xdp_hw_metadata selftest does.  A kernel that refuses the umem so
 * registered gets the umem and socket from libxdp and no send stamps;
 * stamps_enable says so once, to its caller.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "bpf/ntpx_xdp.h"	/* build/: ntpx_xdp_bpf_obj[] */
#include "bpf/ntpx_xdp_meta.h"	/* lib/: the stamp the program writes */
#include "clock.h"
#include "missing.h"
#include "opt_units.h"
#include "log.h"
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "hwts.h"
#include "phc.h"
#include "util_private.h"
#include "port_private.h"
#include "xdp_own_private.h"
#include "xdp_quiet_private.h"

#define PORT_XDP_PROG		"ntpx_xdp"
#define PORT_XDP_TX_ROOM	256	/* bytes before a transmit frame in its chunk */
#define PORT_XDP_TX_CHUNKS	2048	/* transmit buffers, queue 0's */
#define PORT_XDP_RX_BUDGET	8192	/* receive chunks the queues share... */
#define PORT_XDP_RX_MIN		256	/* ...but at least this many each */
#define PORT_XDP_MAX_QUEUES	64	/* receive queues served, a socket each */
#define PORT_XDP_LINK_NS	(5 * NTPX_NS_PER_SEC)	/* the link's wait after attaching */
#define PORT_XDP_BURST		64	/* receive descriptors taken per look at a
					   ring, and chunks given back per fill */

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif

/* One receive queue's socket and rings. */
struct xdp_rxq {
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;	/* queue 0's: the transmit completions */
	struct xsk_ring_cons rx;
	struct xsk_socket *xsk;		/* libxdp's socket, or NULL */
	struct xdp_own own;		/* our own (own.fd -1: none) */
	int fd;				/* whichever it is, or -1 */
	uint64_t frames;		/* frames taken off its receive ring */
	__u32 rx_idx, rx_avail, rx_n;	/* the burst peeked: next slot, how many
					   left, how many it had */
	uint64_t refill[PORT_XDP_RING];	/* chunks released, for its fill ring */
	unsigned nrefill;
};

struct xdp_port {
	struct port p;
	void *area;
	size_t area_len;
	struct xsk_umem *umem;		/* libxdp's, when ours was refused */
	struct xdp_rxq *q;		/* a socket per receive queue */
	unsigned nq;
	unsigned rx_chunks;		/* receive chunks per queue */
	unsigned next_q;		/* the queue rx_next looks at first */
	int epfd;			/* several queues: all their sockets, or -1 */
	struct xsk_ring_prod tx;	/* queue 0's */
	struct bpf_object *obj;
	int link_fd;
	int busy;
	const char *dev;
	int stamping;
	struct phc *phc;		/* zero-copy: the NIC's clock */
	uint32_t tx_tag[PORT_XDP_TX_CHUNKS];	/* by transmit chunk */
	unsigned char tx_want[PORT_XDP_TX_CHUNKS];
	struct { uint32_t tag; uint64_t ts; } tx_done[PORT_XDP_TX_CHUNKS];
	unsigned ntx_done;
	uint64_t tx_stamps_missing;	/* completions asked for that had none */
	struct hwts hwts;		/* zero-copy: the NIC's TX stamping, put back at close */
	int hwts_fd;			/* its socket, or -1 */
	int ifindex;
	uint64_t tx_free[PORT_XDP_TX_CHUNKS];
	unsigned ntx_free;
	uint64_t tx_cur;	/* chunk handed out by tx_buf */
	uint64_t rx_cur;	/* chunk handed out by rx_next */
	unsigned rx_q;		/* the queue it came from */
	int rx_held;
	int64_t rx_mono;	/* its XDP program's stamp, or -1 */
	struct clock_pair rt_mono;	/* REALTIME - MONOTONIC, for rx_mono */
	struct clock_pair tai_rt;	/* TAI - REALTIME, for copy-mode send stamps */
	uint64_t tx_kicks_failed, fill_short;
	unsigned tx_unkicked;	/* frames in the TX ring the kernel was not
				   yet asked to send (PORT_TX_LATER) */
	uint64_t tx_kicks, rx_bursts;
};

static unsigned xdp_rx_pending(const struct port *p);

/* The chunk index of umem address @addr among the transmit chunks, or -1. */
static long xdp_tx_index(const struct xdp_port *x, uint64_t addr)
{
	uint64_t k = addr / PORT_XDP_CHUNK, first = (uint64_t)x->nq * x->rx_chunks;

	return k >= first && k - first < PORT_XDP_TX_CHUNKS ? (long)(k - first) : -1;
}

/* SIOCETHTOOL on @dev with the command at @cmd: 0, or -1 with errno. */
static int ethtool_ioctl(const char *dev, void *cmd)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc, e;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = cmd;
	rc = ioctl(fd, SIOCETHTOOL, &ifr);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* The interface's driver name ("veth", "mlx5_core"), or "" if unknown. */
static void driver_name(const char *dev, char *buf, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };

	buf[0] = 0;
	if (ethtool_ioctl(dev, &info) == 0)
		snprintf(buf, len, "%s", info.driver);
}

/* Whether @dev is up and running (IFF_RUNNING: the carrier is there). */
static int xdp_link_running(const char *dev)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return 1;	/* cannot tell: no wait */
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
	close(fd);
	return rc || (ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);
}

/*
 * Attaching a program restarts the port on some drivers: igc closed and
 * opened it until Linux 6.13 (the whole window of its zero-copy send
 * stamps), i40e resets the PF, ice drops the carrier.  Frames sent until
 * the link runs again are lost, and a ptp4l on the port goes FAULTY.  So
 * once the sockets are bound the open waits for the link to run,
 * PORT_XDP_LINK_NS at most, and says what it saw in one line (p.note);
 * a link that runs throughout costs one ioctl.
 */
static void xdp_link_wait(struct xdp_port *x, int64_t attached)
{
	struct timespec step = { 0, 10 * 1000000L };
	int64_t end = attached + PORT_XDP_LINK_NS;

	if (xdp_link_running(x->dev))
		return;
	while (!xdp_link_running(x->dev) && clock_monotonic_ns() < end)
		nanosleep(&step, NULL);
	if (xdp_link_running(x->dev))
		snprintf(x->p.note, sizeof(x->p.note), "%s: the link was down once the XDP "
			 "program was attached, and running %lld ms after", x->dev,
			 (long long)((clock_monotonic_ns() - attached) / 1000000));
	else
		snprintf(x->p.note, sizeof(x->p.note), "%s: the link is not running %lld s "
			 "after the XDP program was attached; going on", x->dev,
			 (long long)(PORT_XDP_LINK_NS / NTPX_NS_PER_SEC));
}

/*
 * The interface's receive queues: its receive and combined channels
 * (ETHTOOL_GCHANNELS: ice and i40e count in combined, veth in rx); 1
 * for a driver that has no channels to tell.
 */
static unsigned xdp_rx_queues(const char *dev)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };

	if (ethtool_ioctl(dev, &ch) || ch.rx_count + ch.combined_count == 0)
		return 1;
	return ch.rx_count + ch.combined_count;
}

/*
 * Receive chunks per queue: PORT_XDP_RX_BUDGET shared among them, no
 * more than a fill ring holds and no fewer than PORT_XDP_RX_MIN, so that
 * up to four queues keep the 2048 a flood on one of them needs
 * (doc/uudp.md, tests/net/attack.t), one or two the 4096 that a bursty
 * generator's catching up needs, and many cost 1 MiB each.
 */
static unsigned xdp_rx_chunks(unsigned nq)
{
	unsigned n = PORT_XDP_RX_BUDGET / nq;

	return n > PORT_XDP_RING ? PORT_XDP_RING : n < PORT_XDP_RX_MIN ? PORT_XDP_RX_MIN : n;
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
	/* A slot per receive queue: the program redirects by rx_queue_index. */
	map = bpf_object__find_map_by_name(x->obj, "ntpx_xsks");
	if (!map || bpf_map__set_max_entries(map, x->nq)) {
		snprintf(err, errlen, "%s: XDP object has no socket map for %u queues", cfg->dev,
			 x->nq);
		goto no_object;
	}
	rc = bpf_object__load(x->obj);
	if (rc) {
		snprintf(err, errlen, "%s: cannot load the XDP program: %s%s%s", cfg->dev,
			 strerror(-rc), xdp_quiet_last()[0] ? ": " : "", xdp_quiet_last());
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

/*
 * libxdp's socket on queue @qi (when the kernel refused our umem with TX
 * metadata): queue 0's with the transmit ring, the others sharing its
 * umem.  The socket of a process that just exited leaves its queue only
 * when the kernel's deferred cleanup of its UMEM has run: until then the
 * bind says EBUSY.  Waited for, briefly.
 */
static int xdp_socket(struct xdp_port *x, const struct port_config *cfg, unsigned qi,
		      __u32 mode, __u16 bind, char *err, size_t errlen)
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
	struct xdp_rxq *q = &x->q[qi];
	int rc;

	do {
		if (qi == 0)
			rc = xsk_socket__create(&q->xsk, cfg->dev, 0, x->umem, &q->rx, &x->tx,
						&sc);
		else
			rc = xsk_socket__create_shared(&q->xsk, cfg->dev, qi, x->umem, &q->rx,
						       NULL, &q->fq, &q->cq, &sc);
	} while (rc == -EBUSY && clock_monotonic_ns() < end && !nanosleep(&step, NULL));
	if (rc) {
		q->xsk = NULL;
		snprintf(err, errlen, "%s: AF_XDP socket on queue %u (%s): %s", cfg->dev, qi,
			 bind & XDP_ZEROCOPY ? "zero-copy" : "copy", strerror(-rc));
		return -1;
	}
	q->fd = xsk_socket__fd(q->xsk);
	return 0;
}

/* Our own socket on queue @qi: queue 0's owns the umem, the others share it. */
static int xdp_own_socket(struct xdp_port *x, const struct port_config *cfg, unsigned qi,
			  __u16 bind, char *err, size_t errlen)
{
	struct xdp_rxq *q = &x->q[qi];

	/* A failed bind leaves the umem half set up: each try anew. */
	if (qi == 0 && q->own.fd < 0 &&
	    xdp_own_create(&q->own, cfg->dev, x->area, x->area_len, &q->fq, &q->cq, &q->rx,
			   &x->tx, err, errlen))
		return -1;
	if (qi > 0 && xdp_own_create_shared(&q->own, cfg->dev, &q->fq, &q->cq, &q->rx, err,
					    errlen))
		return -1;
	if (xdp_own_bind(&q->own, cfg->dev, cfg->ifindex, qi, bind, qi ? x->q[0].fd : -1, err,
			 errlen)) {
		xdp_own_close(&q->own);
		return -1;
	}
	q->fd = q->own.fd;
	return 0;
}

/* Closes the queues' sockets, the umem's owner last. */
static void xdp_sockets_close(struct xdp_port *x)
{
	unsigned i;

	for (i = x->nq; x->q && i-- > 0;) {
		xdp_own_close(&x->q[i].own);
		if (x->q[i].xsk)
			xsk_socket__delete(x->q[i].xsk);
		x->q[i].xsk = NULL;
		x->q[i].fd = -1;
	}
}

/* Every queue's socket in @mode, or none (-1 with @err). */
static int xdp_sockets(struct xdp_port *x, const struct port_config *cfg, __u32 mode,
		       __u16 bind, char *err, size_t errlen)
{
	unsigned i;

	for (i = 0; i < x->nq; i++)
		if (x->umem ? xdp_socket(x, cfg, i, mode, bind, err, errlen) :
		    xdp_own_socket(x, cfg, i, bind, err, errlen)) {
			xdp_sockets_close(x);
			return -1;
		}
	return 0;
}

static void xdp_close_all(struct xdp_port *x)
{
	hwts_release(&x->hwts);
	if (x->hwts_fd >= 0)
		close(x->hwts_fd);
	phc_close(x->phc);
	xdp_sockets_close(x);
	free(x->q);
	if (x->epfd >= 0)
		close(x->epfd);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->link_fd >= 0)
		close(x->link_fd);
	if (x->obj)
		bpf_object__close(x->obj);
	if (x->area)
		munmap(x->area, x->area_len);
	xdp_quiet_release();
	free(x);
}

static const struct port_ops xdp_port_ops;

/* How a port runs, best first: xdp_bind_mode() tries them in this order. */
static const struct {
	__u32 mode;
	__u16 bind;
	const char *name;
} xdp_modes[] = {
	{ XDP_FLAGS_DRV_MODE, XDP_ZEROCOPY, "drv-zerocopy" },
	{ XDP_FLAGS_DRV_MODE, XDP_COPY, "drv-copy" },
	{ XDP_FLAGS_SKB_MODE, XDP_COPY, "skb-copy" },
};

/*
 * The receive queues and the UMEM area: a socket per queue (no more than
 * PORT_XDP_MAX_QUEUES), each with its receive chunks, then the transmit
 * chunks.
 */
static int xdp_open_queues(struct xdp_port *x, const struct port_config *cfg, char *err,
			   size_t errlen)
{
	unsigned qi;

	x->nq = xdp_rx_queues(cfg->dev);
	if (x->nq > PORT_XDP_MAX_QUEUES) {
		snprintf(err, errlen, "%s: %u receive queues, more than the %u uudp gives an "
			 "AF_XDP socket each (set fewer with ethtool -L)", cfg->dev, x->nq,
			 PORT_XDP_MAX_QUEUES);
		return -1;
	}
	x->q = calloc(x->nq, sizeof(*x->q));
	if (!x->q) {
		snprintf(err, errlen, "%s: out of memory", cfg->dev);
		return -1;
	}
	for (qi = 0; qi < x->nq; qi++)
		x->q[qi].fd = x->q[qi].own.fd = -1;
	x->rx_chunks = xdp_rx_chunks(x->nq);
	x->area_len = ((size_t)x->nq * x->rx_chunks + PORT_XDP_TX_CHUNKS) * PORT_XDP_CHUNK;
	x->area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		snprintf(err, errlen, "%s: UMEM: %s", cfg->dev, strerror(errno));
		return -1;
	}
	return 0;
}

/* The UMEM registered: ours with TX metadata, else libxdp's without. */
static int xdp_open_umem(struct xdp_port *x, const struct port_config *cfg, char *err,
			 size_t errlen)
{
	struct xsk_umem_config uc = {
		.fill_size = PORT_XDP_RING,
		.comp_size = PORT_XDP_RING,
		.frame_size = PORT_XDP_CHUNK,
		.frame_headroom = 0,
	};
	int rc;

	rc = xdp_own_create(&x->q[0].own, cfg->dev, x->area, x->area_len, &x->q[0].fq,
			    &x->q[0].cq, &x->q[0].rx, &x->tx, err, errlen);
	if (rc <= 0)
		return rc;
	rc = xsk_umem__create(&x->umem, x->area, x->area_len, &x->q[0].fq, &x->q[0].cq, &uc);
	if (rc) {
		x->umem = NULL;
		snprintf(err, errlen, "%s: UMEM registration: %s", cfg->dev, strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * The program attached and every queue's socket bound, in the first of
 * the modes cfg->xdp_mode allows that the driver takes (veth: generic
 * XDP, whose copy is the one the kernel tests most).  Returns the index
 * in xdp_modes, or -1 with the last mode's reason in @err.
 */
static int xdp_bind_mode(struct xdp_port *x, const struct port_config *cfg, int prog_fd,
			 const char *drv, char *err, size_t errlen)
{
	char why[256] = "";
	unsigned i, first, last;

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
		first = strcmp(drv, "veth") == 0 ? 2 : 0;
		last = 2;
		break;
	}
	for (i = first; i <= last; i++) {
		if (x->link_fd < 0 || (i > first && xdp_modes[i].mode != xdp_modes[i - 1].mode)) {
			if (x->link_fd >= 0) {
				close(x->link_fd);
				x->link_fd = -1;
			}
			if (xdp_attach(x, cfg, prog_fd, xdp_modes[i].mode, why, sizeof(why)))
				continue;
		}
		if (xdp_sockets(x, cfg, xdp_modes[i].mode, xdp_modes[i].bind, why,
				sizeof(why)) == 0)
			return (int)i;
	}
	snprintf(err, errlen, "%s", why);
	return -1;
}

/*
 * The sockets in the program's XSKMAP, a slot per queue; each queue's
 * receive chunks in its fill ring, the transmit chunks on the free stack.
 */
static int xdp_open_rings(struct xdp_port *x, const struct port_config *cfg, char *err,
			  size_t errlen)
{
	unsigned qi, i, nrx = x->nq * x->rx_chunks;
	int map_fd = bpf_object__find_map_fd_by_name(x->obj, "ntpx_xsks");
	__u32 idx;

	for (qi = 0; qi < x->nq; qi++)
		if (map_fd < 0 || bpf_map_update_elem(map_fd, &qi, &x->q[qi].fd, 0)) {
			snprintf(err, errlen, "%s: cannot insert the socket of queue %u into the "
				 "XSKMAP: %s", cfg->dev, qi, strerror(errno));
			return -1;
		}
	for (qi = 0; qi < x->nq; qi++) {
		struct xdp_rxq *q = &x->q[qi];

		if (xsk_ring_prod__reserve(&q->fq, x->rx_chunks, &idx) != x->rx_chunks) {
			snprintf(err, errlen, "%s: fill ring too small", cfg->dev);
			return -1;
		}
		for (i = 0; i < x->rx_chunks; i++)
			*xsk_ring_prod__fill_addr(&q->fq, idx + i) =
				((uint64_t)qi * x->rx_chunks + i) * PORT_XDP_CHUNK;
		xsk_ring_prod__submit(&q->fq, x->rx_chunks);
	}
	for (i = 0; i < PORT_XDP_TX_CHUNKS; i++)
		x->tx_free[x->ntx_free++] = (uint64_t)(nrx + i) * PORT_XDP_CHUNK;
	return 0;
}

/*
 * Busy polling tuned where the caller spins (best effort: kernels
 * without it simply spin in userspace), and the fd the caller polls:
 * queue 0's socket, or with several an epoll set of them all.
 */
static int xdp_open_poll(struct xdp_port *x, const struct port_config *cfg, char *err,
			 size_t errlen)
{
	unsigned qi;
	int one = 1;

	for (qi = 0; x->busy && qi < x->nq; qi++) {
		int usecs = 20, budget = 16, fd = x->q[qi].fd;

		(void)setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one));
		(void)setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs));
		(void)setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget));
	}
	x->p.fd = x->q[0].fd;
	if (x->nq == 1)
		return 0;
	x->epfd = epoll_create1(EPOLL_CLOEXEC);
	for (qi = 0; x->epfd >= 0 && qi < x->nq; qi++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = qi };

		if (epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->q[qi].fd, &ev))
			break;
	}
	if (x->epfd < 0 || qi < x->nq) {
		snprintf(err, errlen, "%s: epoll: %s", cfg->dev, strerror(errno));
		return -1;
	}
	x->p.fd = x->epfd;
	return 0;
}

struct port *port_xdp_open(const struct port_config *cfg, char *err, size_t errlen)
{
	struct xdp_port *x = calloc(1, sizeof(*x));
	char drv[32];
	int64_t attached;
	int prog_fd, m;

	if (!x) {
		snprintf(err, errlen, "%s: out of memory", cfg->dev);
		return NULL;
	}
	x->link_fd = -1;
	x->hwts_fd = -1;
	x->epfd = -1;
	x->rt_mono.a = CLOCK_MONOTONIC;
	x->rt_mono.b = CLOCK_REALTIME;
	x->tai_rt.a = CLOCK_REALTIME;
	x->tai_rt.b = CLOCK_TAI;
	x->tai_rt.whole_s = 1;
	x->dev = cfg->dev;
	x->ifindex = cfg->ifindex;
	x->busy = cfg->busy_poll;
	/* libbpf's messages go into the error we return, not to stderr:
	   only main() prints.  The caller's hook is back once the last
	   port closes. */
	xdp_quiet_hold();
	xdp_quiet_clear();
	if (xdp_open_queues(x, cfg, err, errlen) || xdp_open_umem(x, cfg, err, errlen) ||
	    xdp_clear_stale(cfg, err, errlen))
		goto no_port;
	prog_fd = xdp_load(x, cfg, err, errlen);
	if (prog_fd < 0)
		goto no_port;
	driver_name(cfg->dev, drv, sizeof(drv));
	attached = clock_monotonic_ns();
	m = xdp_bind_mode(x, cfg, prog_fd, drv, err, errlen);
	if (m < 0)
		goto no_port;
	snprintf(x->p.mode, sizeof(x->p.mode), "%s", xdp_modes[m].name);
	if (xdp_open_rings(x, cfg, err, errlen) || xdp_open_poll(x, cfg, err, errlen))
		goto no_port;
	x->p.ops = &xdp_port_ops;
	/*
	 * A kernel socket at the other end of a veth leaves its UDP checksum
	 * to a device that never completes it, and the bytes reach us so;
	 * the kernel there would accept them (doc/uudp.md).
	 */
	x->p.caps = strcmp(drv, "veth") == 0 ? PORT_CAP_RX_PARTIAL : 0;
	x->p.frame_max = PORT_XDP_CHUNK - PORT_XDP_TX_ROOM;
	xdp_link_wait(x, attached);
	return &x->p;

no_port:
	xdp_close_all(x);
	return NULL;
}

/* The TX metadata in front of the transmit frame at umem address @addr. */
static struct xsk_tx_metadata *xdp_txmd(struct xdp_port *x, uint64_t addr)
{
	return (void *)((unsigned char *)xsk_umem__get_data(x->area, addr) - PORT_XDP_TXMD_LEN);
}

/*
 * Takes back the transmit chunks whose frames the kernel has sent; the
 * completion stamp of a frame that asked for one waits in tx_done.
 */
static void xdp_reap(struct xdp_port *x)
{
	__u32 idx, n, i;

	n = xsk_ring_cons__peek(&x->q[0].cq, PORT_XDP_RING, &idx);
	for (i = 0; i < n; i++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&x->q[0].cq, idx + i);
		uint64_t c = a - a % PORT_XDP_CHUNK;
		long k = xdp_tx_index(x, c);

		if (k >= 0 && x->tx_want[k]) {
			x->tx_want[k] = 0;
			if (x->ntx_done < PORT_XDP_TX_CHUNKS) {
				x->tx_done[x->ntx_done].tag = x->tx_tag[k];
				x->tx_done[x->ntx_done++].ts =
					xdp_txmd(x, a)->completion.tx_timestamp;
			}
		}
		x->tx_free[x->ntx_free++] = c;
	}
	if (n)
		xsk_ring_cons__release(&x->q[0].cq, n);
}

/*
 * Asks the kernel to send what waits in the TX ring.  In copy mode the
 * kernel sends only when asked; zero-copy drivers say when they need the
 * kick.  A failed kick leaves the descriptors in the ring for the next.
 */
static int xdp_kick(struct xdp_port *x)
{
	x->tx_unkicked = 0;
	if (!xsk_ring_prod__needs_wakeup(&x->tx))
		return 0;
	x->tx_kicks++;
	if (sendto(x->q[0].fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
	    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS && errno != ENETDOWN)
		return -errno;
	return 0;
}

static void *xdp_tx_buf(struct port *p, size_t *cap)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);

	xdp_reap(x);
	if (!x->ntx_free && x->tx_unkicked) {
		/* Frames held for the burst's end hold the buffers: send them. */
		(void)xdp_kick(x);
		xdp_reap(x);
	}
	if (!x->ntx_free)
		return NULL;
	x->tx_cur = x->tx_free[--x->ntx_free];
	*cap = PORT_XDP_CHUNK - PORT_XDP_TX_ROOM;
	return xsk_umem__get_data(x->area, x->tx_cur + PORT_XDP_TX_ROOM);
}

static int xdp_tx_submit(struct port *p, void *buf, size_t len, int flags)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	struct xdp_desc *d;
	long k = xdp_tx_index(x, x->tx_cur);
	__u32 idx;
	int rc;

	if (xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1) {
		x->tx_free[x->ntx_free++] = x->tx_cur;
		return -EAGAIN;
	}
	d = xsk_ring_prod__tx_desc(&x->tx, idx);
	d->addr = x->tx_cur + PORT_XDP_TX_ROOM;
	d->len = (__u32)len;
	d->options = 0;
	x->tx_want[k] = 0;
	if (x->stamping && x->q[0].own.fd >= 0 && (flags & PORT_TX_STAMP)) {
		struct xsk_tx_metadata *md = xdp_txmd(x, d->addr);

		memset(md, 0, PORT_XDP_TXMD_LEN);
		md->flags = XDP_TXMD_FLAGS_TIMESTAMP;
		d->options = XDP_TX_METADATA;
		x->tx_tag[k] = p->tx_tag;
		x->tx_want[k] = 1;
	}
	xsk_ring_prod__submit(&x->tx, 1);
	/*
	 * A frame that may wait (its stamp is not in it: an interleaved
	 * reply) waits while the receive burst it answers lasts, and one
	 * kick sends them all (xdp_rx_next); any other goes now, so that
	 * the stamp it carries is read as late as the frame allows.
	 */
	if ((flags & PORT_TX_LATER) && xdp_rx_pending(p) &&
	    x->tx_unkicked + 1 < PORT_XDP_BURST) {
		x->tx_unkicked++;
		return 0;
	}
	rc = xdp_kick(x);
	if (rc)
		return rc;
	xdp_reap(x);
	return 0;
}

static void xdp_tx_cancel(struct port *p)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);

	x->tx_free[x->ntx_free++] = x->tx_cur;
}

/* Frames peeked on the queues' receive rings and not yet handed out. */
static unsigned xdp_rx_pending(const struct port *p)
{
	const struct xdp_port *x = container_of(p, const struct xdp_port, p);
	unsigned qi, n = 0;

	for (qi = 0; qi < x->nq; qi++)
		n += x->q[qi].rx_avail;
	return n;
}

/*
 * The chunks released on queue @q back to its fill ring, in one go.  The
 * kernel tells what it took from a fill ring only when it next looks for
 * more, so the ring may show less room than it has: what does not fit
 * waits for the next refill (counted in fill_short), and no chunk is lost.
 */
static void xdp_refill(struct xdp_port *x, struct xdp_rxq *q)
{
	__u32 idx, i, n;

	if (!q->nrefill)
		return;
	n = xsk_prod_nb_free(&q->fq, q->nrefill);
	if (n > q->nrefill)
		n = q->nrefill;
	if (n < q->nrefill)
		x->fill_short++;
	if (!n || xsk_ring_prod__reserve(&q->fq, n, &idx) != n)
		return;
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&q->fq, idx + i) = q->refill[i];
	xsk_ring_prod__submit(&q->fq, n);
	q->nrefill -= n;
	memmove(q->refill, q->refill + n, q->nrefill * sizeof(q->refill[0]));
}

/*
 * A burst: up to PORT_XDP_BURST descriptors of the first queue, taken in
 * turn from @x->next_q, that has any; its chunks released before given
 * back to the fill rings first, the frames held for the burst before it
 * sent.  Returns the queue, or NULL when none has a frame.
 */
static struct xdp_rxq *xdp_rx_burst(struct xdp_port *x)
{
	unsigned i, qi;

	for (qi = 0; qi < x->nq; qi++)
		xdp_refill(x, &x->q[qi]);
	if (x->tx_unkicked)
		(void)xdp_kick(x);
	for (i = 0; i < x->nq; i++) {
		struct xdp_rxq *q = &x->q[(x->next_q + i) % x->nq];

		q->rx_avail = xsk_ring_cons__peek(&q->rx, PORT_XDP_BURST, &q->rx_idx);
		if (q->rx_avail) {
			q->rx_n = q->rx_avail;
			x->next_q = (x->next_q + i + 1) % x->nq;
			x->rx_bursts++;
			return q;
		}
	}
	return NULL;
}

/*
 * The next frame of any queue, a burst at a time (xdp_rx_burst), the
 * queues taken in turn so that none starves another.
 */
static int xdp_rx_next(struct port *p, const void **frame, size_t *len)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	const struct xdp_desc *d;
	struct xdp_rxq *q = NULL;
	unsigned i;

	if (x->rx_held)
		return -EBUSY;
	for (i = 0; i < x->nq; i++)
		if (x->q[i].rx_avail) {
			q = &x->q[i];
			break;
		}
	if (!q)
		q = xdp_rx_burst(x);
	if (!q) {
		/* The driver asks to be driven (zero-copy): a sleeping
		   caller woken through epoll has not polled the XSK. */
		for (i = 0; i < x->nq; i++)
			if (xsk_ring_prod__needs_wakeup(&x->q[i].fq))
				(void)recvfrom(x->q[i].fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		return 0;
	}
	q->frames++;
	d = xsk_ring_cons__rx_desc(&q->rx, q->rx_idx++);
	x->rx_cur = d->addr;
	x->rx_q = (unsigned)(q - x->q);
	*len = d->len;
	/* The burst's ring slots go back once all are read. */
	if (--q->rx_avail == 0)
		xsk_ring_cons__release(&q->rx, q->rx_n);
	*frame = xsk_umem__get_data(x->area, x->rx_cur);
	x->rx_held = 1;
	x->rx_mono = -1;
	/*
	 * The program's stamp, in the metadata before the frame, when the
	 * mode kept it: the magic is wiped after reading, so that a chunk
	 * used again without metadata shows none rather than an old one.
	 * The data of a chunk starts at least XDP_PACKET_HEADROOM into it.
	 */
	if (x->rx_cur % PORT_XDP_CHUNK >= sizeof(struct ntpx_meta)) {
		struct ntpx_meta m;
		unsigned char *mp = (unsigned char *)*frame - sizeof(m);

		memcpy(&m, mp, sizeof(m));
		if (m.magic == NTPX_META_MAGIC) {
			x->rx_mono = (int64_t)m.mono_ns;
			memset(mp, 0, sizeof(m));
		}
	}
	return 1;
}

/* The program's stamp of the held frame, CLOCK_MONOTONIC to REALTIME. */
static int xdp_rx_stamp(struct port *p, int64_t *ns)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);

	if (!x->rx_held || x->rx_mono < 0)
		return 0;
	/* Both clocks are slewed alike: they differ by a constant but for
	   steps, which this reads as of now, a preemption between the
	   clocks' reads shifting it by no more than the reads take
	   (lib/clock_read.h). */
	*ns = x->rx_mono + clock_pair_offset(&x->rt_mono);
	return 1;
}

/* The PTP hardware clock behind @dev (zero-copy stamps), or NULL. */
static struct phc *xdp_phc(const char *dev)
{
	struct ethtool_ts_info info = { .cmd = ETHTOOL_GET_TS_INFO };
	char err[128];

	if (ethtool_ioctl(dev, &info) || info.phc_index < 0)
		return NULL;
	return phc_open(info.phc_index, err, sizeof(err));
}

/* The XDP program's receive stamps on: its ntpx_stamp (.bss) set to 1. */
static int xdp_rx_stamps_on(struct xdp_port *x)
{
	struct bpf_map *map;
	__u32 key = 0, on = 1;

	bpf_object__for_each_map(map, x->obj)
		if (bpf_map__is_internal(map) && strstr(bpf_map__name(map), ".bss") &&
		    bpf_map__value_size(map) == sizeof(on))
			return bpf_map_update_elem(bpf_map__fd(map), &key, &on, 0) ? -errno : 0;
	return -ENOENT;
}

/*
 * Does the driver behind @ifindex fill AF_XDP TX-metadata stamps?  The
 * netdev generic-netlink family says (xsk-features, Linux 6.8): 1 yes,
 * 0 no (or no such family: an older kernel).
 */
static int xdp_xsk_tx_timestamp(int ifindex)
{
	char buf[8192];	/* MNL_SOCKET_BUFFER_SIZE, which is not constant */
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlattr *a;
	unsigned portid, seq = 1;
	uint16_t family = 0;
	uint64_t features = 0;
	int found = 0, pass;
	ssize_t n;

	nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID)) {
		if (nl)
			mnl_socket_close(nl);
		return 0;
	}
	portid = mnl_socket_get_portid(nl);
	for (pass = 0; pass < 2; pass++) {
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_flags = NLM_F_REQUEST;
		nlh->nlmsg_seq = ++seq;
		g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
		if (pass == 0) {
			nlh->nlmsg_type = GENL_ID_CTRL;
			g->cmd = CTRL_CMD_GETFAMILY;
			g->version = 1;
			mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME);
		} else {
			nlh->nlmsg_type = family;
			g->cmd = NETDEV_CMD_DEV_GET;
			g->version = 1;
			mnl_attr_put_u32(nlh, NETDEV_A_DEV_IFINDEX, (uint32_t)ifindex);
		}
		if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
			break;
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n <= 0)
			break;
		nlh = (struct nlmsghdr *)buf;
		if (!mnl_nlmsg_ok(nlh, (int)n) || nlh->nlmsg_type == NLMSG_ERROR ||
		    nlh->nlmsg_pid != portid)
			break;
		mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
			if (pass == 0 && mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
				family = mnl_attr_get_u16(a);
			if (pass == 1 && mnl_attr_get_type(a) == NETDEV_A_DEV_XSK_FEATURES &&
			    mnl_attr_get_payload_len(a) == sizeof(uint64_t)) {
				features = mnl_attr_get_u64(a);
				found = 1;
			}
		}
		if (pass == 0 && !family)
			break;
	}
	mnl_socket_close(nl);
	return found && (features & NETDEV_XSK_FLAGS_TX_TIMESTAMP);
}

/*
 * Receive: the program's stamp, the 'k' layer.  Send: the TX metadata
 * completion stamp, 'k' in copy mode, 'h' (with a PHC) in zero-copy;
 * none, said once (in s->warn, for the caller), where the kernel refused
 * TX metadata.
 */
static int xdp_stamps_enable(struct port *p, struct port_stamping *s, char *err,
			     size_t errlen)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	int got;

	s->rx_layer = TRANSPORT_LAYER_K;
	s->rx_src = "xdp:bpf_ktime_get_ns";
	if (xdp_rx_stamps_on(x)) {
		s->rx_layer = -1;
		s->rx_src = NULL;
		ntpx_lines_add(s->warn, s->warnlen,
			       "%s: no XDP receive stamps: the program's switch cannot be set",
			       x->dev);
	}
	s->tx_layer = -1;
	s->tx_src = NULL;
	if (x->q[0].own.fd < 0) {
		ntpx_lines_add(s->warn, s->warnlen, "%s: no AF_XDP send stamps: %s", x->dev,
			       x->q[0].own.txmd_why);
		return 0;
	}
	if (strstr(p->mode, "zerocopy")) {
		if (!xdp_xsk_tx_timestamp(x->ifindex)) {
			ntpx_lines_add(s->warn, s->warnlen,
				       "%s: no AF_XDP send stamps: the driver fills no TX-metadata "
				       "stamp in zero-copy mode (netdev xsk-features has no "
				       "tx-timestamp)", x->dev);
			return 0;
		}
		x->phc = xdp_phc(x->dev);
		if (!x->phc) {
			ntpx_lines_add(s->warn, s->warnlen,
				       "%s: no AF_XDP send stamps: zero-copy stamps are on the "
				       "NIC's clock, and it has no PTP hardware clock", x->dev);
			return 0;
		}
		/*
		 * The driver stamps in zero-copy only with hardware TX
		 * stamping on (igc, stmmac): switched on here as the
		 * kernel's xdp_hw_metadata selftest does, without weakening
		 * ptp4l's setting, and put back at close (lib/hwts.h).
		 */
		x->hwts_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		got = x->hwts_fd < 0 ? 0 : hwts_acquire(&x->hwts, x->hwts_fd, x->dev, HWTS_TX);
		if (x->hwts.note[0])
			ntpx_lines_add(s->warn, s->warnlen, "%s", x->hwts.note);
		if (got < 0 || !(got & HWTS_TX)) {
			ntpx_lines_add(s->warn, s->warnlen,
				       "%s: no AF_XDP send stamps: the NIC would not switch "
				       "hardware transmit stamping on (SIOCSHWTSTAMP)", x->dev);
			return 0;
		}
		s->tx_layer = TRANSPORT_LAYER_H;
		s->tx_src = "xdp:tx_metadata+phc";
	} else if (x->q[0].own.txmd_noflag) {
		ntpx_lines_add(s->warn, s->warnlen,
			       "%s: no AF_XDP send stamps: copy-mode TX-metadata stamps need "
			       "Linux 6.11 (this kernel took tx_metadata_len without "
			       "XDP_UMEM_TX_METADATA_LEN)", x->dev);
		return 0;
	} else {
		s->tx_layer = TRANSPORT_LAYER_K;
		s->tx_src = "xdp:tx_metadata_sw";
	}
	x->stamping = 1;
	return 0;
}

static void xdp_stamps_release(struct port *p, char *warn, size_t warnlen)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);

	if (hwts_release(&x->hwts))
		ntpx_lines_add(warn, warnlen, "%s", x->hwts.note);
}

static void xdp_tx_stamps(struct port *p, void (*note)(void *arg, uint32_t tag, int64_t ns),
			  void *arg)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	unsigned i;

	xdp_reap(x);
	for (i = 0; i < x->ntx_done; i++) {
		int64_t ns = TRANSPORT_NO_STAMP, ts = (int64_t)x->tx_done[i].ts;

		if (ts <= 0)
			x->tx_stamps_missing++;
		else if (x->phc && phc_to_realtime(x->phc, ts, &ns))
			ns = TRANSPORT_NO_STAMP;
		else if (!x->phc)
			/* the kernel's CLOCK_TAI: the two clocks' difference
			   now, the TAI offset's whole seconds exactly */
			ns = ts - clock_pair_offset(&x->tai_rt);
		note(arg, x->tx_done[i].tag, ns);
	}
	x->ntx_done = 0;
}

static void xdp_rx_release(struct port *p)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	struct xdp_rxq *q = &x->q[x->rx_q];

	if (!x->rx_held)
		return;
	x->rx_held = 0;
	/* Back to the fill ring of the queue it came from, with its burst's. */
	q->refill[q->nrefill++] = xsk_umem__extract_addr(x->rx_cur);
	if (q->nrefill >= PORT_XDP_BURST)
		xdp_refill(x, q);
}

static void xdp_close(struct port *p)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);

	if (x->tx_unkicked)
		(void)xdp_kick(x);
	xdp_close_all(x);
}

/*
 * Ours, then the kernel's count of the frames the program redirected to
 * the sockets that they could not deliver (XDP_STATISTICS, summed over
 * the queues): rx_dropped (no room in the RX ring or the UMEM), of which
 * rx_ring_full with the RX ring full, and how often a fill ring was found
 * empty.  A frame lost there never reaches rx_next, so no other counter
 * sees it.  Last, the frames taken from each queue, in queue order.
 */
static void xdp_counters(struct port *p, char *buf, size_t len)
{
	struct xdp_port *x = container_of(p, struct xdp_port, p);
	uint64_t dropped = 0, full = 0, empty = 0;
	size_t n = strlen(buf);
	unsigned qi, got = 0;

	if (n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      "%squeues=%u fill_short=%llu tx_metadata=%s tx_stamps_missing=%llu"
				      " bursts=%llu tx_kicks=%llu",
				      n ? " " : "", x->nq, (unsigned long long)x->fill_short,
				      x->q[0].own.fd >= 0 ? "yes" : "no",
				      (unsigned long long)x->tx_stamps_missing,
				      (unsigned long long)x->rx_bursts,
				      (unsigned long long)x->tx_kicks);
	for (qi = 0; qi < x->nq; qi++) {
		struct xdp_statistics st = { 0 };
		socklen_t stlen = sizeof(st);

		if (getsockopt(x->q[qi].fd, SOL_XDP, XDP_STATISTICS, &st, &stlen))
			continue;
		dropped += st.rx_dropped;
		full += st.rx_ring_full;
		empty += st.rx_fill_ring_empty_descs;
		got++;
	}
	if (n < len && got)
		n += (size_t)snprintf(buf + n, len - n,
				      " xsk_rx_dropped=%llu xsk_rx_ring_full=%llu xsk_fill_empty=%llu",
				      (unsigned long long)dropped, (unsigned long long)full,
				      (unsigned long long)empty);
	/* Which queues the frames came on: where RSS (or XPS) put the flows. */
	for (qi = 0; qi < x->nq && n < len; qi++)
		n += (size_t)snprintf(buf + n, len - n, "%s%llu", qi ? "," : " queue_frames=",
				      (unsigned long long)x->q[qi].frames);
}

static const struct port_ops xdp_port_ops = {
	.name = "xdp",
	.tx_buf = xdp_tx_buf,
	.tx_submit = xdp_tx_submit,
	.tx_cancel = xdp_tx_cancel,
	.rx_next = xdp_rx_next,
	.rx_release = xdp_rx_release,
	.rx_pending = xdp_rx_pending,
	.rx_stamp = xdp_rx_stamp,
	.stamps_enable = xdp_stamps_enable,
	.stamps_release = xdp_stamps_release,
	.tx_stamps = xdp_tx_stamps,
	.close = xdp_close,
	.counters = xdp_counters,
};
