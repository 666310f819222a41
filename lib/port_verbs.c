/* SPDX-License-Identifier: ISC */
/*
 * port_verbs.c - the raw-packet verbs frame port (ConnectX and the like):
 * the path the original study measured.
 *
 * An IBV_QPT_RAW_PACKET queue pair on the RDMA device behind the network
 * interface sends whole Ethernet frames and receives the frames that one
 * flow rule steers to it: Ethernet to our MAC, IPv4 (to our address when
 * we have one), UDP to our port.  Everything else, ARP included, keeps
 * going to the kernel.  Send and receive buffers live in one registered
 * region; receive completions are polled and each buffer is posted again
 * when uudp.c has read it.  When the device offers checksum offload
 * (IBV_DEVICE_RAW_IP_CSUM), frames go out with IBV_SEND_IP_CSUM, which
 * has the NIC compute the IPv4 and UDP checksums; uudp.c then leaves the
 * UDP checksum as Linux does for such a NIC (frame_udp_csum_partial()).
 *
 * The QP and the flow rule sit on the device port behind the interface:
 * /sys/class/net/DEV/dev_port + 1 (mlx4 shows its two network interfaces
 * as ports 1 and 2 of one device).  Flow rules need managed flow steering
 * (IBV_DEVICE_MANAGED_FLOW_STEERING), which mlx4 has only when its module
 * is loaded with log_num_mgm_entry_size=-1; the open says so when it is
 * missing.  A receive completing in error because the QP went to the
 * error state has the QP rebuilt (RESET to RTS, receives posted again),
 * counted (qp_error=, qp_rebuilds=, last_async= from the async events)
 * and told to uudp as a restart; so is a QP found in SQE or ERR after a
 * send failed on its own (a raw QP's send error raises no async event);
 * only a QP that cannot be rebuilt kills the port (EIO from then on).
 * The port's fd is an epoll set of the completion channel and the async
 * events: after IBV_EVENT_DEVICE_FATAL the dead context is let go of,
 * sends fail with ENETDOWN, and a timer in the set has the device opened
 * again each second until it is back (a restart too).  While the caller spins
 * (port.spin) rx_next only polls the CQ; blocking callers have it
 * consume the completion channel's event and re-arm.
 *
 * Compiled in every build; on a machine without an RDMA device the open
 * fails at once with one line saying so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "clock_read.h"
#include "opt_units.h"
#include "port_private.h"
#include "verbs_stamp.h"
#include "util_private.h"

#define PORT_VERBS_BUF_MIN	2048	/* bytes per buffer, at least: a 1500-MTU frame */
#define PORT_VERBS_RX		256	/* receive buffers posted */
#define PORT_VERBS_TX		256	/* send buffers */
#define PORT_VERBS_ASYNC_NS	(10 * NTPX_NS_PER_MS)	/* spinning: async events
							   read this often */
#define PORT_VERBS_REOPEN_NS	(1000 * NTPX_NS_PER_MS)	/* a device gone: opened
							   again this often at most */

struct verbs_port {
	struct port p;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct verbs_cq rx_cq, tx_cq;
	struct verbs_clock clk;		/* completion stamps (verbs_stamp.h) */
	int stamping;			/* stamps_enable was called */
	uint64_t rx_ts;			/* raw stamp of the frame handed out */
	uint32_t tx_tag[PORT_VERBS_RX + PORT_VERBS_TX];	/* by buffer */
	unsigned char tx_want[PORT_VERBS_RX + PORT_VERBS_TX];
	struct { uint32_t tag; uint64_t ts; } tx_done[PORT_VERBS_TX];
	unsigned ntx_done;		/* send stamps reaped, not yet taken */
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	uint8_t port;			/* the device port behind the interface */
	int dead;			/* -errno: -EIO once the QP could not be
					   rebuilt, -ENETDOWN while the device is gone */
	struct port_config cfg;		/* as opened (dev: v->dev), to open again */
	char dev[IF_NAMESIZE];
	int epfd;			/* port.fd: the completion channel and the
					   async events */
	int tfd;			/* in the set, armed while the device is gone:
					   a sleeping caller wakes to open it again */
	int64_t async_ns;		/* spinning: when they were last read */
	int64_t reopen_every;		/* the device gone: tried this often, ns */
	uint64_t fatal, reopens;	/* DEVICE_FATAL seen; the device opened again */
	int sq_error;			/* a send completed in error: QP state asked */
	uint64_t sends;			/* frames posted, for cfg.qperr */
	enum ibv_event_type last_async;
	uint64_t async;			/* async events read */
	struct ibv_mr *mr;
	unsigned char *mem;		/* RX buffers, then TX buffers */
	size_t buf;			/* bytes each: the interface's largest frame */
	unsigned tx_free[PORT_VERBS_TX];
	unsigned ntx_free;
	unsigned tx_cur;
	uint64_t rx_cur;		/* wr_id of the frame handed out */
	int rx_held;
	uint64_t rx_errors, tx_errors, repost_errors;
	uint64_t qp_errors, rebuilds;	/* QP found in the error state; rebuilt */
};

static const struct port_ops verbs_port_ops;
static void verbs_rebuild(struct verbs_port *v);

/* The RDMA device behind netdev @dev, from sysfs under @sys; 0 or -1. */
static int verbs_ibdev(const char *sys, const char *dev, char *name, size_t len)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/class/net/%s/device/infiniband", sys ? sys : "/sys",
		 dev);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(name, len, "%.63s", de->d_name);
			rc = 0;
			break;
		}
	closedir(d);
	return rc;
}

/*
 * Can the RDMA device described by @da carry uudp?  NULL when it can,
 * else why not, for the open's line.  No verbs capability says "raw
 * packet", but ibv_create_flow needs managed flow steering, and the
 * providers that report it (mlx5; mlx4 with its module option) are the
 * ones with raw-packet QPs; an iWARP device (irdma, siw, cxgb4) has
 * neither, nor have bnxt_re, qedr or rxe.
 */
static const char *verbs_unfit(struct ibv_context *ctx, const struct ibv_device_attr *da)
{
	if (ctx->device->transport_type == IBV_TRANSPORT_IWARP)
		return "is an iWARP device, with no raw-packet QPs (use via=xdp)";
	if (da->device_cap_flags & IBV_DEVICE_MANAGED_FLOW_STEERING)
		return NULL;
	if (strncmp(ibv_get_device_name(ctx->device), "mlx4", 4) == 0)
		return "has no managed flow steering, so no flow rule can steer UDP to a QP "
		       "(load mlx4_core with log_num_mgm_entry_size=-1, or use via=xdp)";
	return "has no managed flow steering, so no flow rule can steer UDP to a QP "
	       "(use via=xdp)";
}

int port_verbs_usable(const char *sysfs, const char *dev)
{
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_context *ctx = NULL;
	char name[64];
	int i, n = 0, ok = 0;

	if (verbs_ibdev(sysfs, dev, name, sizeof(name)))
		return 0;
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	if (ctx) {
		ok = ibv_query_device(ctx, &da) == 0 && !verbs_unfit(ctx, &da);
		ibv_close_device(ctx);
	}
	if (list)
		ibv_free_device_list(list);
	return ok;
}

/*
 * The device port behind netdev @dev: its dev_port (0 for the first)
 * plus one; 1 when the kernel has no dev_port.  -1 when it is garbage.
 */
static int verbs_devport(const char *sys, const char *dev)
{
	char path[512], line[32], *end;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/class/net/%s/dev_port", sys ? sys : "/sys", dev);
	f = fopen(path, "re");
	if (!f)
		return 1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	errno = 0;
	n = strtol(line, &end, 0);
	if (errno || end == line || (*end && *end != '\n') || n < 0 || n > 254)
		return -1;
	return (int)n + 1;
}

/*
 * Bytes per buffer: the interface's largest frame (its MTU, the Ethernet
 * header and a VLAN tag), in whole cache lines, at least
 * PORT_VERBS_BUF_MIN.  A frame longer than its receive buffer completes
 * in error on mlx5 (a local length error) and takes the QP down with it,
 * so one jumbo frame must fit.
 */
static size_t verbs_buf_size(const char *sys, const char *dev)
{
	char path[512], line[32];
	long mtu = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/class/net/%s/mtu", sys ? sys : "/sys", dev);
	f = fopen(path, "re");
	if (f) {
		if (fgets(line, sizeof(line), f))
			mtu = strtol(line, NULL, 10);
		fclose(f);
	}
	if (mtu <= 0 || mtu > 65535)
		mtu = 1500;
	n = ((size_t)mtu + 14 + 4 + 63) / 64 * 64;
	return n < PORT_VERBS_BUF_MIN ? PORT_VERBS_BUF_MIN : n;
}

/* The names counters use for the async events that matter here. */
static const char *verbs_event_name(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_QP_FATAL: return "qp_fatal";
	case IBV_EVENT_QP_REQ_ERR: return "qp_req_err";
	case IBV_EVENT_QP_ACCESS_ERR: return "qp_access_err";
	case IBV_EVENT_CQ_ERR: return "cq_err";
	case IBV_EVENT_DEVICE_FATAL: return "device_fatal";
	case IBV_EVENT_PORT_ERR: return "port_err";
	case IBV_EVENT_PORT_ACTIVE: return "port_active";
	default: return "other";
	}
}

static void verbs_teardown(struct verbs_port *v);

/*
 * Reads the async events, for the counters (they tell why), and acts on
 * IBV_EVENT_DEVICE_FATAL: after a firmware reset, a health recovery or
 * a driver rebind the context is dead for good (no completion ever
 * comes, and a send is still taken), so the port lets go of everything
 * of it and is opened again once the device is back (verbs_reopen()).
 */
static void verbs_async_read(struct verbs_port *v)
{
	struct ibv_async_event ev;
	int fatal = 0;

	while (v->ctx && ibv_get_async_event(v->ctx, &ev) == 0) {
		v->async++;
		v->last_async = ev.event_type;
		fatal |= ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
	}
	if (fatal) {
		struct itimerspec it = {
			.it_interval = { v->reopen_every / NTPX_NS_PER_SEC,
					 v->reopen_every % NTPX_NS_PER_SEC },
		};

		v->fatal++;
		verbs_teardown(v);
		v->dead = -ENETDOWN;
		it.it_value = it.it_interval;
		timerfd_settime(v->tfd, 0, &it, NULL);
	}
}

/* Whether the reopen timer expired; taken, so that the set sleeps again. */
static int verbs_timer_take(struct verbs_port *v)
{
	uint64_t n;

	return read(v->tfd, &n, sizeof(n)) == (ssize_t)sizeof(n);
}

static int verbs_post_rx(struct verbs_port *v, uint64_t i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(v->mem + i * v->buf),
		.length = (uint32_t)v->buf,
		.lkey = v->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(v->qp, &wr, &bad);
}

static int verbs_qp_up(struct verbs_port *v)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = v->port;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(v->qp, &a, IBV_QP_STATE) ? -1 : 0;
}

static void verbs_reap(struct verbs_port *v);

/*
 * The QP is in the error state: every receive posted again would flush
 * at once.  Rebuilt in place (RESET, INIT, RTR, RTS: same QP number, so
 * the flow rule still steers to it): the flushed completions are taken
 * first, the send buffers are all free again (a reset drops what was
 * queued), and every receive buffer but the one handed out is posted
 * again.  uudp hears of it as a restart (port.restarts), so that the
 * stream's filters start afresh.  A QP that cannot be rebuilt leaves the
 * port dead (EIO from then on).
 */
static void verbs_rebuild(struct verbs_port *v)
{
	struct ibv_qp_attr a;
	struct verbs_wc wc;
	unsigned i;

	v->qp_errors++;
	v->sq_error = 0;
	verbs_async_read(v);
	if (!v->ctx)
		return;		/* the device went away: verbs_reopen() */
	verbs_reap(v);
	while (verbs_cq_poll(&v->rx_cq, &wc, 1) > 0)
		;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE) || verbs_qp_up(v)) {
		v->dead = -EIO;
		return;
	}
	v->ntx_free = 0;
	for (i = 0; i < PORT_VERBS_TX; i++)
		v->tx_free[v->ntx_free++] = PORT_VERBS_RX + i;
	for (i = 0; i < PORT_VERBS_RX; i++)
		if ((!v->rx_held || v->rx_cur != i) && verbs_post_rx(v, i)) {
			v->dead = -EIO;
			return;
		}
	v->rebuilds++;
	v->p.restarts++;
}

/*
 * Steers Ethernet to our MAC + IPv4 (to our address) + UDP to our port.
 * The specs follow the attribute back to back, each at its own size.
 */
static int verbs_flow(struct verbs_port *v, const struct port_config *cfg)
{
	uint64_t raw[64];	/* aligned for struct ibv_flow_attr */
	struct ibv_flow_attr attr = {
		.type = IBV_FLOW_ATTR_NORMAL,
		.size = sizeof(attr) + sizeof(struct ibv_flow_spec_eth) +
			sizeof(struct ibv_flow_spec_ipv4) + sizeof(struct ibv_flow_spec_tcp_udp),
		.num_of_specs = 3,
		.port = v->port,
	};
	struct ibv_flow_spec_eth eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(eth) };
	struct ibv_flow_spec_ipv4 ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(ip) };
	struct ibv_flow_spec_tcp_udp udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(udp) };
	unsigned char *b = (unsigned char *)raw;

	memcpy(eth.val.dst_mac, cfg->mac, 6);
	memset(eth.mask.dst_mac, 0xff, 6);
	eth.val.ether_type = htons(0x0800);
	eth.mask.ether_type = 0xffff;
	if (cfg->ip) {
		ip.val.dst_ip = htonl(cfg->ip);
		ip.mask.dst_ip = 0xffffffff;
	}
	udp.val.dst_port = htons(cfg->udp_port);
	udp.mask.dst_port = 0xffff;
	memset(raw, 0, sizeof(raw));
	memcpy(b, &attr, sizeof(attr));
	b += sizeof(attr);
	memcpy(b, &eth, sizeof(eth));
	b += sizeof(eth);
	memcpy(b, &ip, sizeof(ip));
	b += sizeof(ip);
	memcpy(b, &udp, sizeof(udp));
	v->flow = ibv_create_flow(v->qp, (struct ibv_flow_attr *)raw);
	return v->flow ? 0 : -1;
}

/*
 * Lets go of everything of the device (the buffers stay): after
 * DEVICE_FATAL, before opening it again, and at close.  Closing the
 * channel and the context takes their fds out of the epoll set.
 */
static void verbs_teardown(struct verbs_port *v)
{
	unsigned i;

	/* Out of the set before they close (a descriptor shared with
	   another process would stay in it). */
	if (v->ch)
		epoll_ctl(v->epfd, EPOLL_CTL_DEL, v->ch->fd, NULL);
	if (v->ctx)
		epoll_ctl(v->epfd, EPOLL_CTL_DEL, v->ctx->async_fd, NULL);
	if (v->flow)
		ibv_destroy_flow(v->flow);
	if (v->qp)
		ibv_destroy_qp(v->qp);
	verbs_cq_destroy(&v->rx_cq);
	verbs_cq_destroy(&v->tx_cq);
	verbs_clock_close(&v->clk);
	if (v->ch)
		ibv_destroy_comp_channel(v->ch);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	v->flow = NULL;
	v->qp = NULL;
	v->ch = NULL;
	v->mr = NULL;
	v->pd = NULL;
	v->ctx = NULL;
	v->rx_held = 0;
	v->ntx_done = 0;
	v->ntx_free = 0;
	for (i = 0; i < PORT_VERBS_TX; i++)
		v->tx_free[v->ntx_free++] = PORT_VERBS_RX + i;
}

static void verbs_close_all(struct verbs_port *v)
{
	verbs_teardown(v);
	if (v->tfd >= 0)
		close(v->tfd);
	if (v->epfd >= 0)
		close(v->epfd);
	if (v->mem)
		munmap(v->mem, (size_t)(PORT_VERBS_RX + PORT_VERBS_TX) * v->buf);
	free(v);
}

/*
 * The RDMA device behind v->cfg.dev, opened (its name into @ibdev), with
 * the port the interface is on, checked fit for raw-packet QPs, its
 * async events non-blocking.  0, or -1 with one line in @err.
 */
static int verbs_device_open(struct verbs_port *v, char *ibdev, size_t iblen, char *err,
			     size_t errlen)
{
	const struct port_config *cfg = &v->cfg;
	struct ibv_device **list;
	struct ibv_device_attr da;
	int i, n = 0, port;

	if (verbs_ibdev(cfg->sysfs, cfg->dev, ibdev, iblen)) {
		snprintf(err, errlen, "%s: no RDMA device behind this interface "
			 "(via=verbs needs a raw-packet capable NIC; try via=xdp)", cfg->dev);
		return -1;
	}
	port = verbs_devport(cfg->sysfs, cfg->dev);
	if (port < 0) {
		snprintf(err, errlen, "%s: unreadable dev_port in sysfs", cfg->dev);
		return -1;
	}
	v->port = (uint8_t)port;
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), ibdev) == 0)
			break;
	if (!list || i == n) {
		snprintf(err, errlen, "%s: RDMA device %s not found by libibverbs", cfg->dev,
			 ibdev);
		goto fail;
	}
	v->ctx = ibv_open_device(list[i]);
	if (!v->ctx) {
		snprintf(err, errlen, "%s: cannot open %s: %s", cfg->dev, ibdev, strerror(errno));
		goto fail;
	}
	ibv_free_device_list(list);	/* the context holds its device */
	list = NULL;
	if (ibv_query_device(v->ctx, &da)) {
		snprintf(err, errlen, "%s: %s: cannot query the device: %s", cfg->dev, ibdev,
			 strerror(errno));
		return -1;
	}
	if (v->port > da.phys_port_cnt) {
		snprintf(err, errlen, "%s: %s has %u ports, not the %u this interface's dev_port "
			 "names", cfg->dev, ibdev, da.phys_port_cnt, v->port);
		return -1;
	}
	if (verbs_unfit(v->ctx, &da)) {
		snprintf(err, errlen, "%s: %s %s", cfg->dev, ibdev, verbs_unfit(v->ctx, &da));
		return -1;
	}
	v->p.caps = da.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM ? PORT_CAP_CSUM : 0;
	if (fcntl(v->ctx->async_fd, F_SETFL, fcntl(v->ctx->async_fd, F_GETFL) | O_NONBLOCK)) {
		snprintf(err, errlen, "%s: %s: async events: %s", cfg->dev, ibdev, strerror(errno));
		return -1;
	}
	return 0;

fail:
	if (list)
		ibv_free_device_list(list);
	return -1;
}

/* The protection domain, the buffers registered, the completion channel. */
static int verbs_memory(struct verbs_port *v, const char *ibdev, char *err, size_t errlen)
{
	const char *dev = v->cfg.dev;

	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		snprintf(err, errlen, "%s: %s: protection domain: %s", dev, ibdev,
			 strerror(errno));
		return -1;
	}
	v->mr = ibv_reg_mr(v->pd, v->mem, (size_t)(PORT_VERBS_RX + PORT_VERBS_TX) * v->buf,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!v->mr) {
		snprintf(err, errlen, "%s: %s: memory registration: %s", dev, ibdev,
			 strerror(errno));
		return -1;
	}
	v->ch = ibv_create_comp_channel(v->ctx);
	if (!v->ch || fcntl(v->ch->fd, F_SETFL, fcntl(v->ch->fd, F_GETFL) | O_NONBLOCK)) {
		snprintf(err, errlen, "%s: %s: completion channel: %s", dev, ibdev,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The CQs (stamped where the device can) and the raw-packet QP in RTS,
 * its receives posted and every send buffer free.
 */
static int verbs_queues(struct verbs_port *v, const char *ibdev, char *err, size_t errlen)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = PORT_VERBS_TX, .max_recv_wr = PORT_VERBS_RX,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	const char *dev = v->cfg.dev;
	int i;

	/* Completion stamps where the device has them (verbs_stamp.h). */
	verbs_clock_probe(&v->clk, v->ctx);
	/*
	 * A QP refused for its CQs' stamp format (mlx5 in real-time mode)
	 * costs the stamps, never the port: CQs again, a step down.
	 */
	for (;;) {
		if (verbs_cq_create(&v->clk, &v->rx_cq, PORT_VERBS_RX, NULL, v->ch) ||
		    verbs_cq_create(&v->clk, &v->tx_cq, PORT_VERBS_TX, NULL, NULL)) {
			snprintf(err, errlen, "%s: %s: completion queue: %s", dev, ibdev,
				 strerror(errno));
			return -1;
		}
		qa.send_cq = v->tx_cq.cq;
		qa.recv_cq = v->rx_cq.cq;
		v->qp = ibv_create_qp(v->pd, &qa);
		if (v->qp || !verbs_qp_refused(&v->clk, errno))
			break;
		verbs_cq_destroy(&v->rx_cq);
		verbs_cq_destroy(&v->tx_cq);
	}
	if (!v->qp) {
		snprintf(err, errlen, "%s: %s: raw-packet QP: %s%s", dev, ibdev,
			 strerror(errno), errno == EPERM ? " (needs CAP_NET_RAW)" : "");
		return -1;
	}
	if (verbs_qp_up(v)) {
		snprintf(err, errlen, "%s: %s: QP to ready-to-send: %s", dev, ibdev,
			 strerror(errno));
		return -1;
	}
	for (i = 0; i < PORT_VERBS_RX; i++)
		if (verbs_post_rx(v, (uint64_t)i)) {
			snprintf(err, errlen, "%s: %s: posting receives: %s", dev, ibdev,
				 strerror(errno));
			return -1;
		}
	v->ntx_free = 0;
	for (i = 0; i < PORT_VERBS_TX; i++)
		v->tx_free[v->ntx_free++] = PORT_VERBS_RX + (unsigned)i;
	memset(v->tx_want, 0, sizeof(v->tx_want));
	return 0;
}

/*
 * The flow rule that brings the port's frames to the QP, the receive CQ
 * armed, and the channel and async events watched in v->epfd.
 */
static int verbs_listen(struct verbs_port *v, const char *ibdev, char *err, size_t errlen)
{
	const struct port_config *cfg = &v->cfg;
	struct epoll_event ev = { .events = EPOLLIN };

	if (verbs_flow(v, cfg)) {
		snprintf(err, errlen, "%s: %s: flow rule for UDP port %u: %s", cfg->dev, ibdev,
			 cfg->udp_port, strerror(errno));
		return -1;
	}
	if (ibv_req_notify_cq(v->rx_cq.cq, 0)) {
		snprintf(err, errlen, "%s: %s: arming the completion queue: %s", cfg->dev,
			 ibdev, strerror(errno));
		return -1;
	}
	/* A sleeping caller wakes for a completion or an async event. */
	if (epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->ch->fd, &ev) ||
	    epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->ctx->async_fd, &ev)) {
		snprintf(err, errlen, "%s: epoll: %s", cfg->dev, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Opens the RDMA device behind v->cfg.dev and makes the port on it: the
 * QP with its CQs and receives, the flow rule, the channel armed and
 * watched with the async events in v->epfd.  0, or -1 with one line in
 * @err (what was made is left for verbs_teardown()).
 */
static int verbs_setup(struct verbs_port *v, char *err, size_t errlen)
{
	char ibdev[64];

	if (verbs_device_open(v, ibdev, sizeof(ibdev), err, errlen) ||
	    verbs_memory(v, ibdev, err, errlen) ||
	    verbs_queues(v, ibdev, err, errlen) ||
	    verbs_listen(v, ibdev, err, errlen))
		return -1;
	snprintf(v->p.mode, sizeof(v->p.mode), "%.16s-raw%s", ibdev,
		 v->p.caps & PORT_CAP_CSUM ? "-ipcsum" : "");
	return 0;
}

struct port *port_verbs_open(const struct port_config *cfg, char *err, size_t errlen)
{
	struct verbs_port *v;
	char ibdev[64];

	/* Fail fast, before any allocation, when there is nothing to open. */
	if (verbs_ibdev(cfg->sysfs, cfg->dev, ibdev, sizeof(ibdev))) {
		snprintf(err, errlen, "%s: no RDMA device behind this interface "
			 "(via=verbs needs a raw-packet capable NIC; try via=xdp)", cfg->dev);
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "%s: out of memory", cfg->dev);
		return NULL;
	}
	v->epfd = v->tfd = -1;
	v->cfg = *cfg;
	snprintf(v->dev, sizeof(v->dev), "%s", cfg->dev);
	v->cfg.dev = v->dev;
	v->reopen_every = cfg->reopen_ns > 0 ? cfg->reopen_ns : PORT_VERBS_REOPEN_NS;
	v->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	v->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (v->epfd < 0 || v->tfd < 0 ||
	    epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->tfd, &(struct epoll_event){ .events = EPOLLIN })) {
		snprintf(err, errlen, "%s: epoll: %s", cfg->dev, strerror(errno));
		goto no_port;
	}
	v->buf = verbs_buf_size(cfg->sysfs, cfg->dev);
	v->mem = mmap(NULL, (size_t)(PORT_VERBS_RX + PORT_VERBS_TX) * v->buf,
		      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v->mem == MAP_FAILED) {
		v->mem = NULL;
		snprintf(err, errlen, "%s: buffers: %s", cfg->dev, strerror(errno));
		goto no_port;
	}
	if (verbs_setup(v, err, errlen))
		goto no_port;
	v->p.ops = &verbs_port_ops;
	v->p.fd = v->epfd;
	v->p.frame_max = v->buf;
	return &v->p;

no_port:
	verbs_close_all(v);
	return NULL;
}

/*
 * The device went away (DEVICE_FATAL): opened again each time the timer
 * expires (every PORT_VERBS_REOPEN_NS), as the netdev names it now (a
 * rebind may rename it), until it is back; then a restart for uudp, as
 * after a rebuild.  1 when the port works again.
 */
static int verbs_reopen(struct verbs_port *v)
{
	char why[256];

	if (v->dead != -ENETDOWN || !verbs_timer_take(v))
		return 0;
	if (verbs_setup(v, why, sizeof(why))) {
		verbs_teardown(v);
		return 0;
	}
	timerfd_settime(v->tfd, 0, &(struct itimerspec){ { 0, 0 }, { 0, 0 } }, NULL);
	(void)verbs_timer_take(v);
	v->dead = 0;
	v->reopens++;
	v->p.restarts++;
	return 1;
}

/*
 * Takes the send completions: each buffer is free again; the stamp of a
 * frame that asked for one waits in tx_done for verbs_tx_stamps().
 */
static void verbs_reap(struct verbs_port *v)
{
	struct verbs_wc wc[16];
	int n, i;

	while ((n = verbs_cq_poll(&v->tx_cq, wc, 16)) > 0)
		for (i = 0; i < n; i++) {
			unsigned b = (unsigned)wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS)
				v->tx_errors++;
			/* A send's own error (not a flush) leaves the QP in
			   SQE or ERR: receives go on, every send fails. */
			if (wc[i].status != IBV_WC_SUCCESS &&
			    wc[i].status != IBV_WC_WR_FLUSH_ERR)
				v->sq_error = 1;
			if (b >= PORT_VERBS_RX + PORT_VERBS_TX)
				continue;
			if (v->tx_want[b] && v->ntx_done < PORT_VERBS_TX) {
				v->tx_done[v->ntx_done].tag = v->tx_tag[b];
				v->tx_done[v->ntx_done++].ts =
					wc[i].status == IBV_WC_SUCCESS ? wc[i].ts : 0;
			}
			v->tx_want[b] = 0;
			v->tx_free[v->ntx_free++] = b;
		}
}

/*
 * A send completed in error (v->sq_error): the QP is asked its state,
 * and rebuilt in SQE or ERR, where no send can go out again.
 */
static void verbs_sq_check(struct verbs_port *v)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!v->sq_error)
		return;
	v->sq_error = 0;
	if (ibv_query_qp(v->qp, &a, IBV_QP_STATE, &ia) == 0 &&
	    (a.qp_state == IBV_QPS_SQE || a.qp_state == IBV_QPS_ERR))
		verbs_rebuild(v);
}

static void *verbs_tx_buf(struct port *p, size_t *cap)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);

	/* Gone: a buffer all the same, the submit says why (ENETDOWN). */
	if (!v->dead || verbs_reopen(v)) {
		verbs_reap(v);
		verbs_sq_check(v);
	}
	if (!v->ntx_free)
		return NULL;
	v->tx_cur = v->tx_free[--v->ntx_free];
	*cap = v->buf;
	return v->mem + (size_t)v->tx_cur * v->buf;
}

static int verbs_tx_submit(struct port *p, void *buf, size_t len, int flags)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = (uint32_t)len };
	struct ibv_send_wr wr = { .wr_id = v->tx_cur, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	int rc;

	if (v->dead) {
		v->tx_free[v->ntx_free++] = v->tx_cur;
		return v->dead;
	}
	sge.lkey = v->mr->lkey;
	/* qperr=: a key of the right memory with another variant byte,
	   which the HCA refuses (a local protection error, QP to SQE/ERR). */
	if (v->cfg.qperr && ++v->sends == (uint64_t)v->cfg.qperr)
		sge.lkey ^= 1;
	if (flags & PORT_CAP_CSUM)
		wr.send_flags |= IBV_SEND_IP_CSUM;
	v->tx_want[v->tx_cur] = v->stamping && (flags & PORT_TX_STAMP);
	v->tx_tag[v->tx_cur] = p->tx_tag;
	rc = ibv_post_send(v->qp, &wr, &bad);
	if (rc) {
		v->tx_want[v->tx_cur] = 0;
		v->tx_free[v->ntx_free++] = v->tx_cur;
		return -rc;
	}
	return 0;
}

static void verbs_tx_cancel(struct port *p)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);

	v->tx_free[v->ntx_free++] = v->tx_cur;
}

static int verbs_rx_next(struct port *p, const void **frame, size_t *len)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);
	struct ibv_cq *cq;
	struct verbs_wc wc;
	void *ctx;
	int n;

	if (v->rx_held)
		return -EBUSY;
	for (;;) {
		/* Gone: nothing to receive until it is back (the timer
		   in the set wakes a sleeping caller to try again). */
		if (v->dead == -ENETDOWN && !verbs_reopen(v))
			return 0;
		if (v->dead)
			return v->dead;
		n = verbs_cq_poll(&v->rx_cq, &wc, 1);
		if (n < 0)
			return n;
		if (n == 0) {
			/* Spinning: the CQ only, and now and then the async
			   events, which nothing else would read. */
			if (p->spin) {
				int64_t now = clock_monotonic_ns();

				if (now - v->async_ns < PORT_VERBS_ASYNC_NS)
					return 0;
				v->async_ns = now;
				verbs_async_read(v);
				return v->dead == -ENETDOWN ? 0 : v->dead;
			}
			/* Consume a wakeup and re-arm, then look once more:
			   a completion may have come in between. */
			if (ibv_get_cq_event(v->ch, &cq, &ctx) == 0) {
				ibv_ack_cq_events(cq, 1);
				ibv_req_notify_cq(v->rx_cq.cq, 0);
				continue;
			}
			/* About to sleep: the async events, which wake the
			   set too, read now. */
			verbs_async_read(v);
			return v->dead == -ENETDOWN ? 0 : v->dead;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			struct ibv_qp_attr a;
			struct ibv_qp_init_attr ia;

			v->rx_errors++;
			if (wc.status == IBV_WC_WR_FLUSH_ERR ||
			    (ibv_query_qp(v->qp, &a, IBV_QP_STATE, &ia) == 0 &&
			     a.qp_state == IBV_QPS_ERR)) {
				verbs_rebuild(v);
				continue;
			}
			if (verbs_post_rx(v, wc.wr_id))
				v->repost_errors++;
			continue;
		}
		break;
	}
	v->rx_cur = wc.wr_id;
	v->rx_ts = wc.ts;
	v->rx_held = 1;
	*frame = v->mem + wc.wr_id * v->buf;
	*len = wc.byte_len;
	return 1;
}

static void verbs_rx_release(struct port *p)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);

	if (!v->rx_held)
		return;
	v->rx_held = 0;
	if (verbs_post_rx(v, v->rx_cur))
		v->repost_errors++;
}

/* The HCA's stamp of the frame handed out, as CLOCK_REALTIME. */
static int verbs_rx_stamp(struct port *p, int64_t *ns)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);

	if (!v->stamping || !v->rx_held)
		return 0;
	return verbs_clock_realtime(&v->clk, v->rx_cq.mode, v->rx_ts, ns);
}

/*
 * The 'h' layer both ways when both CQs carry stamps; none when the
 * device has none (verbs_clock_probe, verbs_cq_create stepped down).
 */
static int verbs_stamps_enable(struct port *p, struct port_stamping *s, char *err,
			       size_t errlen)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);

	s->rx_layer = s->tx_layer = -1;
	s->rx_src = verbs_stamp_source(v->rx_cq.mode);
	s->tx_src = verbs_stamp_source(v->tx_cq.mode);
	if (s->rx_src)
		s->rx_layer = TRANSPORT_LAYER_H;
	if (s->tx_src)
		s->tx_layer = TRANSPORT_LAYER_H;
	if (!s->rx_src || !s->tx_src)
		s->why = v->clk.why;
	s->why_layer = TRANSPORT_LAYER_H;
	v->stamping = s->rx_src || s->tx_src;
	return 0;
}

static void verbs_tx_stamps(struct port *p, void (*note)(void *arg, uint32_t tag, int64_t ns),
			    void *arg)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);
	unsigned i;

	verbs_reap(v);
	for (i = 0; i < v->ntx_done; i++) {
		int64_t ns;

		if (verbs_clock_realtime(&v->clk, v->tx_cq.mode, v->tx_done[i].ts, &ns) != 1)
			ns = TRANSPORT_NO_STAMP;
		note(arg, v->tx_done[i].tag, ns);
	}
	v->ntx_done = 0;
}

static void verbs_close(struct port *p)
{
	verbs_close_all(container_of(p, struct verbs_port, p));
}

static void verbs_counters(struct port *p, char *buf, size_t len)
{
	struct verbs_port *v = container_of(p, struct verbs_port, p);

	snprintf(buf, len, "rx_errors=%llu tx_errors=%llu repost_errors=%llu poll_errors=%llu"
		 " qp_error=%llu qp_rebuilds=%llu device_fatal=%llu reopens=%llu async=%llu"
		 " last_async=%s stamps=%s stamp_errors=%llu hca_rate=%s",
		 (unsigned long long)v->rx_errors, (unsigned long long)v->tx_errors,
		 (unsigned long long)v->repost_errors,
		 (unsigned long long)(v->rx_cq.poll_errors + v->tx_cq.poll_errors),
		 (unsigned long long)v->qp_errors,
		 (unsigned long long)v->rebuilds,
		 (unsigned long long)v->fatal, (unsigned long long)v->reopens,
		 (unsigned long long)v->async, v->async ? verbs_event_name(v->last_async) : "none",
		 v->rx_cq.mode == VERBS_STAMP_RAW ? "raw" :
		 v->rx_cq.mode == VERBS_STAMP_WALLCLOCK ? "wallclock" : "none",
		 (unsigned long long)v->clk.errors,
		 v->clk.rate_measured ? "measured" : "nominal");
}

static const struct port_ops verbs_port_ops = {
	.name = "verbs",
	.tx_buf = verbs_tx_buf,
	.tx_submit = verbs_tx_submit,
	.tx_cancel = verbs_tx_cancel,
	.rx_next = verbs_rx_next,
	.rx_release = verbs_rx_release,
	.rx_stamp = verbs_rx_stamp,
	.stamps_enable = verbs_stamps_enable,
	.tx_stamps = verbs_tx_stamps,
	.close = verbs_close,
	.counters = verbs_counters,
};
