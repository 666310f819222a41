/* SPDX-License-Identifier: ISC */
/*
 * lib/ib.c (and the lib/ib_*.c it is made of) driven over a simulated
 * fabric.
 *
 * THIS IS A MOCK, and it says so: no host here has an RDMA device (the
 * kernel has no RDMA support, so neither rdma_rxe nor siw can be made),
 * and the data path and rediscovery of lib/ib.c must still run somewhere
 * before they meet hardware.  This file defines the libibverbs and
 * librdmacm calls lib/ib.c makes; the executable's definitions take
 * precedence over the shared libraries, and the inline verbs (post_send,
 * poll_cq...) dispatch through the fake context's ops.  Completion-channel,
 * async and rdma_cm events travel through real pipes, so that the
 * epoll/poll waiting in lib/ib.c and lib/transport.c is the real one.
 * The completion channels, the CQs and the HCA clock are the ones
 * tests/unit/port_verbs.c uses too (support/verbs_mock.c): here the polls
 * hold the fabric's lock and a full CQ loses completions.
 *
 * What the mock models, as rdma-core, its providers and the IB spec say
 * real verbs behave (each point is what some test relies on):
 *   - an InfiniBand fabric (LID routed, no GRH) or a RoCE one (fab_roce):
 *     a GID table per device with RoCE v1 and v2 entries for each
 *     address, address handles that must be global and name a valid
 *     source GID, and on arrival the header of the sender's GID type in
 *     the 40 bytes in front of the payload with IBV_WC_GRH: an IB/RoCE v1
 *     GRH (next header 0x1b), a RoCE v2 IPv6 header (next header UDP), or
 *     for RoCE v2 over IPv4 20 bytes the HCA does not write (they keep
 *     whatever the buffer held, or fab_garbage) and then an IPv4 header;
 *   - datagrams routed by the address handle's attributes (LID, or the
 *     destination GID) to a device, and there to the QP by number, with
 *     the QKey and the P_Key (by index) checked: the wrong device or
 *     partition gets nothing, as on a fabric;
 *   - address handles keep their attributes; a send either copies them
 *     when posted (mlx5 writes the address into the WQE) or, with
 *     fab_ah_by_ref (rxe), looks the handle up when it is transmitted, so
 *     that a handle destroyed while a send using it is queued makes that
 *     send fail (fab_stale).  fab_hold keeps posted sends queued until
 *     fab_release(), as a busy send queue does;
 *   - a datagram longer than the posted buffer completes with
 *     IBV_WC_LOC_LEN_ERR (never truncated);
 *   - ibv_modify_qp checks the transition and the attribute mask a UD QP
 *     requires, post_send needs RTS, post_recv refuses a RESET QP; a QP
 *     put into the error state (fab_qp_error) flushes its receives with
 *     IBV_WC_WR_FLUSH_ERR, flushes each later one at once, and raises
 *     IBV_EVENT_QP_FATAL on its element; a send that fails on its own
 *     (fab_send_fail) leaves the QP in SQE, where later posts are taken
 *     and flushed until it is moved back to RTS;
 *   - rdma_connect needs a resolved route, rdma_accept a connect request
 *     not yet answered; SIDR replies carry the AH attributes rdma_cm
 *     gives (global on RoCE); a SIDR reply can be lost (fab_sidr_drop);
 *   - async events carry their element (port number, QP, CQ), on any of
 *     the device's two ports;
 *   - with fab_stamps, completion stamps (lib/verbs_stamp.h): every
 *     device has the extended verbs, CQs made by ibv_create_cq_ex carry
 *     the moment each completion was queued on a 1 GHz, 48-bit HCA clock
 *     that is CLOCK_REALTIME's nanoseconds, which ibv_query_rt_values_ex
 *     reads; without it the contexts have no extended verbs at all (the
 *     plain-CQ path).
 * What it cannot prove: anything about a real HCA, rdma_cm or timing
 * (doc/hardware.md lists what only hardware shows; tests/hw/ib.t).
 *
 * How the tests wait: for the event itself, with WAIT_NS only as the
 * bound of a failure.  A reply is waited for (exchange); a request that
 * must go unanswered is told from a slow reply by what settles it: the
 * fabric losing it during its send (fdev.lost) or the server's counters
 * moving (exchange_lost), never by a reply's absence over some time.
 *
 * Devices: fake0 (lid 1) holds the server's addresses 10.9.0.1 and
 * 10.9.0.11 and, on a child partition at P_Key index 1, 10.9.0.21; fake1
 * (lid 2, 10.9.0.2) and fake2 (lid 3, 10.9.0.3) are where a client's
 * route leaves (fab_client_dev).  The server runs in a thread, answering
 * like ntpreflect.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "clock.h"
#include "ib_wire.h"
#include "ntp.h"
#include "nts_client.h"
#include "nts_server.h"
#include "opt_units.h"
#include "peer.h"
#include "transport.h"
#include "support/dgram.h"
#include "util_private.h"
#include "support/phc_mock.h"
#include "support/verbs_mock.h"

#define WAIT_NS		(5 * NTPX_NS_PER_SEC)	/* a failure guard: never reached
						   when what is waited for comes */
#define SERVER_ADDR	"10.9.0.1"
#define NDEV		4		/* fake3 only where a test adds it (ndevs) */
#define NPORT		2
#define NGID		8
#define CQ_CAP		2048
#define RQ_CAP		1024
#define SQ_CAP		256
#define ROCE_V1_NEXT	0x1b		/* a GRH followed by the IB BTH */

/* ---- the fabric ---------------------------------------------------- */

static pthread_mutex_t fab = PTHREAD_MUTEX_INITIALIZER;

struct fgid {
	union ibv_gid gid;
	int type;			/* enum ibv_gid_type */
	int valid;
};

struct fdev {
	struct ibv_device dev;
	struct verbs_context vctx;	/* vctx.context: the device's context */
	int apipe[2];			/* async events: one byte each */
	struct ibv_async_event aq[64];
	int an;
	int down[NPORT + 1];		/* port is down: nothing moves */
	enum ibv_mtu mtu[NPORT + 1];	/* each port's, active and largest */
	uint16_t lid;
	struct fgid gid[NGID];		/* port 1's GID table */
	int lost;			/* its sends that reached no receive CQ:
					   dropped on the way or failed here */
};

struct frecv {
	uint64_t wr_id;
	uint64_t addr;
	uint32_t length;
};

struct fah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
	int dead;			/* destroyed (kept for fab_stale) */
	struct fah *next;
};

/* A posted send not yet transmitted (fab_hold). */
struct fsend {
	uint64_t wr_id;
	struct fah *ah;
	struct ibv_ah_attr attr;	/* as copied when posted */
	uint32_t qpn, qkey, imm;
	int opcode, signaled;
	uint32_t len;
	unsigned char data[256];
};

struct fqp {
	struct ibv_qp qp;
	struct fdev *dev;
	uint32_t qkey;
	uint16_t pkey_index;
	uint8_t port;
	struct frecv rq[RQ_CAP];
	int rhead, rn;
	struct fsend sq[SQ_CAP];
	int sqn;
	int sig_all;
	/* what the wire last brought it */
	int rx_n;
	int rx_type;			/* enum ibv_gid_type, or -1: no GRH */
	union ibv_gid rx_sgid, rx_dgid;
	struct fqp *next;
};

struct fcm {
	struct rdma_event_channel ch;
	int pipe[2];
	struct rdma_cm_event *q[64];
	int head, n;
};

enum fid_state { FID_IDLE, FID_BOUND, FID_ADDR, FID_ROUTE, FID_REQ, FID_DONE };

struct fid {
	struct rdma_cm_id id;
	enum fid_state state;
	uint16_t port;
	uint16_t pkey_index;
	int listening;
	uint32_t dst_ip;		/* network order: where it resolved or was asked */
	struct fid *client;		/* a SIDR request: who asked */
	struct fid *next;
};

struct fevent {
	struct rdma_cm_event ev;
	unsigned char pd[136];		/* IB_CM_SIDR_REP_PRIVATE_DATA_SIZE */
};

/* The IPv4 addresses of the fabric's hosts. */
static const struct faddr {
	const char *ip;
	int dev;
	uint16_t pkey_index;		/* of the IPoIB interface it is on */
	uint8_t port;			/* the HCA port behind it (0: port 1) */
} addrs[] = {
	{ "10.9.0.1", 0, 0, 0 }, { "10.9.0.11", 0, 0, 0 }, { "10.9.0.21", 0, 1, 0 },
	{ "10.9.0.2", 1, 0, 0 }, { "10.9.0.3", 2, 0, 0 },
	{ "10.9.0.12", 0, 0, 2 },	/* fake0's second port (IB only) */
	{ "10.9.0.4", 3, 0, 0 },	/* fake3: the server's card's second port where,
					   as on a ConnectX-4 or later, each port is a
					   device of its own (present with ndevs = NDEV) */
};
#define NADDR	(int)ARRAY_SIZE(addrs)

static struct fdev devs[NDEV];
static int ndevs = NDEV - 1;		/* 0: a host without RDMA */
static struct fqp *qps;
static struct fid *ids;
static struct fah *ahs;			/* every handle made, live or dead */
static uint32_t next_qpn = 0x100;
static uint32_t force_qpn;		/* nonzero: the next QP gets it */
static int ah_live;			/* address handles not destroyed */

/* knobs and what the tests read */
static int fab_roce;			/* RoCE (Ethernet) rather than IB */
static int fab_ah_by_ref;		/* rxe: a send finds its AH when transmitted */
static int fab_hold;			/* posted sends wait for fab_release() */
static int fab_garbage = -1;		/* RoCE v2/IPv4: the 20 unwritten bytes, or -1 */
static int fab_client_dev = 1;		/* where a client's route leaves */
static int fab_sidr_drop;		/* SIDR replies still to lose */
static int fab_stale;			/* sends whose AH was gone when transmitted */
static int fab_send_fail;		/* sends still to fail on their own (a local
					   protection error): the QP goes to SQE */
static int fab_dup_wr;			/* sends posted with the wr_id of one held
					   on a QP of the same send CQ */
static int fab_idle_polls;		/* empty polls of a receive CQ while an
					   rdma_cm or async event waited */
static int cm_pending;			/* rdma_cm events queued, all channels */
static int fab_delivered;		/* datagrams queued on a receive CQ */

static struct ibv_context_ops fake_ops;

/* An IB port has a LID of its own: port 2's is port 1's + 0x10. */
static uint16_t fab_lid(const struct fdev *d, int port)
{
	return (uint16_t)(port == 2 ? d->lid + 0x10 : d->lid);
}

static int addr_port(const struct faddr *a)
{
	return a && a->port ? a->port : 1;
}

/* An address of the server's card (fake0, and fake3 its second device). */
static int addr_server(const struct faddr *a)
{
	return a && (a->dev == 0 || a->dev == 3);
}

static struct fdev *fab_dev(struct ibv_context *ctx)
{
	return (struct fdev *)((char *)ctx - offsetof(struct fdev, vctx.context));
}

static uint32_t ip4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static const struct faddr *fab_addr(uint32_t ip)
{
	int i;

	for (i = 0; i < NADDR; i++)
		if (ip4(addrs[i].ip) == ip)
			return &addrs[i];
	return NULL;
}

static void gid_v4(union ibv_gid *g, uint32_t ip)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	memcpy(g->raw + 12, &ip, 4);
}

static int gid_is_v4(const union ibv_gid *g)
{
	static const unsigned char pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, pfx, 12) == 0;
}

/* The index of @g with @type in device @d's table, or -1. */
static int fab_gid_find(const struct fdev *d, const union ibv_gid *g, int type)
{
	int i;

	for (i = 0; i < NGID; i++)
		if (d->gid[i].valid && d->gid[i].type == type &&
		    memcmp(&d->gid[i].gid, g, sizeof(*g)) == 0)
			return i;
	return -1;
}

static struct fqp *fab_qp(uint32_t qpn)
{
	struct fqp *q;

	for (q = qps; q; q = q->next)
		if (q->qp.qp_num == qpn)
			return q;
	return NULL;
}

static struct fqp *fab_qp_on(int d)
{
	struct fqp *q, *last = NULL;

	for (q = qps; q; q = q->next)
		if (q->dev == &devs[d])
			last = q;
	return last;
}

static int fab_id_alive(struct fid *f)
{
	struct fid *i;

	for (i = ids; i; i = i->next)
		if (i == f)
			return 1;
	return 0;
}

static int fab_stamps;		/* devices have completion stamps */
#define FAB_HCA_MASK	((1ull << 48) - 1)
/* The HCA clock: 1 GHz, 48 bits, CLOCK_REALTIME's nanoseconds. */
static const struct mock_hca fab_hca = { .khz = 1000000, .mask = FAB_HCA_MASK };

static int fab_rt;		/* mlx5 with its clock in real-time mode */
/* The PHC (the HCA's wall clock): TAI, as ptp4l keeps it, CLOCK_REALTIME + 37 s. */
#define FAB_PHC_OFF	(37 * NTPX_NS_PER_SEC)

/*
 * The stamp a completion queued at CLOCK_REALTIME @now carries, as mlx5
 * gives it: raw cycles for IBV_WC_EX_WITH_COMPLETION_TIMESTAMP; for the
 * wall-clock flavour the PHC's time, in real-time mode the CQE's own
 * seconds << 32 | nanoseconds (read_completion_wallclock_ns returns the
 * CQE value there), else in ns (mlx5dv_ts_to_ns).
 */
static uint64_t fab_stamp(const struct mock_cq *c, int64_t now)
{
	int64_t phc = now + FAB_PHC_OFF;

	if (c->ex && (c->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK))
		return fab_rt ? (uint64_t)(phc / NTPX_NS_PER_SEC) << 32 |
				(uint64_t)(phc % NTPX_NS_PER_SEC) : (uint64_t)phc;
	return mock_hca_cycles(&fab_hca, now);
}

static int cq_push(struct mock_cq *c, const struct ibv_wc *wc)
{
	int64_t now = mock_rt_now();

	return mock_cq_push(c, wc, now, fab_stamp(c, now));
}

/* An async event on device @d.  Called with fab held. */
static void fab_event(struct fdev *d, const struct ibv_async_event *ev)
{
	assert_true(d->an < 64);
	d->aq[d->an++] = *ev;
	mock_poke(d->apipe[1]);
}

/*
 * Puts a datagram into @dst's next posted receive and its completion
 * into the receive CQ: what the HCA does on arrival.  @hdr: the 40 bytes
 * to write in front of the payload (NULL: none, the buffer keeps what it
 * held); with @keep20, the first 20 of them are not written (RoCE v2 over
 * IPv4).  Called with fab held.
 */
static void deliver(struct fqp *dst, const struct ibv_wc *tmpl, const unsigned char *hdr,
		    int keep20, const void *data, uint32_t len)
{
	struct ibv_wc wc = *tmpl;
	unsigned char *b;
	struct frecv r;

	if (!dst->rn)
		return;		/* no receive posted: UD drops it */
	r = dst->rq[dst->rhead];
	dst->rhead = (dst->rhead + 1) % RQ_CAP;
	dst->rn--;
	wc.wr_id = r.wr_id;
	wc.qp_num = dst->qp.qp_num;
	if (IB_GRH_LEN + len > r.length) {
		/* The HCA does not truncate: the receive completes in error. */
		wc.status = IBV_WC_LOC_LEN_ERR;
		wc.byte_len = 0;
		if (cq_push((struct mock_cq *)dst->qp.recv_cq, &wc) == 0)
			fab_delivered++;
		return;
	}
	b = (unsigned char *)(uintptr_t)r.addr;
	if (hdr && keep20) {
		if (fab_garbage >= 0)
			memset(b, fab_garbage, 20);
		memcpy(b + 20, hdr + 20, 20);
	} else if (hdr) {
		memcpy(b, hdr, IB_GRH_LEN);
	}
	memcpy(b + IB_GRH_LEN, data, len);
	wc.byte_len = tmpl->byte_len ? tmpl->byte_len : IB_GRH_LEN + len;
	if (cq_push((struct mock_cq *)dst->qp.recv_cq, &wc) == 0)
		fab_delivered++;
}

static uint16_t csum16(const unsigned char *p, int n)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * The 40 bytes a datagram from @sgid (of @type) to @dgid arrives behind.
 * Returns 1 when the first 20 are not written (RoCE v2 over IPv4).
 */
static int fab_header(unsigned char *h, int type, const union ibv_gid *sgid,
		      const union ibv_gid *dgid, uint32_t paylen, uint8_t hop, uint8_t tclass)
{
	memset(h, 0, IB_GRH_LEN);
	if (type == IBV_GID_TYPE_ROCE_V2 && gid_is_v4(sgid)) {
		unsigned char *ip = h + 20;
		uint16_t tot = (uint16_t)(20 + 8 + 12 + paylen + 4), c;

		ip[0] = 0x45;
		ip[1] = tclass;
		ip[2] = (unsigned char)(tot >> 8);
		ip[3] = (unsigned char)tot;
		ip[6] = 0x40;			/* DF */
		ip[8] = hop;
		ip[9] = 17;			/* UDP, port 4791 */
		memcpy(ip + 12, sgid->raw + 12, 4);
		memcpy(ip + 16, dgid->raw + 12, 4);
		c = csum16(ip, 20);
		ip[10] = (unsigned char)(c >> 8);
		ip[11] = (unsigned char)c;
		return 1;
	}
	h[0] = (unsigned char)(0x60 | tclass >> 4);
	h[1] = (unsigned char)(tclass << 4);
	h[4] = (unsigned char)(paylen >> 8);
	h[5] = (unsigned char)paylen;
	h[6] = type == IBV_GID_TYPE_ROCE_V2 ? 17 : ROCE_V1_NEXT;
	h[7] = hop;
	memcpy(h + 8, sgid->raw, 16);
	memcpy(h + 24, dgid->raw, 16);
	return 0;
}

/*
 * Transmits one send of @src through @attr: to the device the address
 * leads to, there to the QP numbered @qpn when QKey and partition match.
 * Called with fab held.
 */
static void transmit_to(struct fqp *src, const struct ibv_ah_attr *attr, uint32_t qpn,
			uint32_t qkey, int with_imm, uint32_t imm, const void *data, uint32_t len)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			     .src_qp = src->qp.qp_num };
	struct fdev *to = NULL;
	struct fqp *dst;
	unsigned char hdr[IB_GRH_LEN];
	const struct fgid *sg = NULL;
	int i, keep20 = 0, to_port = 1;

	/* A UD send leaves by its QP's port; an AH for another is no use. */
	if (src->dev->down[src->port] || attr->port_num != src->port)
		return;
	for (i = 0; i < ndevs && !to; i++) {
		if (!fab_roce && !attr->is_global && devs[i].lid == attr->dlid)
			to = &devs[i];
		if (!fab_roce && !attr->is_global && fab_lid(&devs[i], 2) == attr->dlid) {
			to = &devs[i];
			to_port = 2;
		}
		if (attr->is_global && (fab_gid_find(&devs[i], &attr->grh.dgid,
						     IBV_GID_TYPE_ROCE_V1) >= 0 ||
					fab_gid_find(&devs[i], &attr->grh.dgid,
						     IBV_GID_TYPE_ROCE_V2) >= 0 ||
					fab_gid_find(&devs[i], &attr->grh.dgid,
						     IBV_GID_TYPE_IB) >= 0))
			to = &devs[i];
	}
	if (!to || to->down[to_port])
		return;
	for (dst = qps; dst; dst = dst->next)
		if (dst->dev == to && dst->qp.qp_num == qpn && dst->port == to_port)
			break;
	if (!dst || dst->qkey != qkey || dst->pkey_index != src->pkey_index ||
	    (dst->qp.state != IBV_QPS_RTR && dst->qp.state != IBV_QPS_RTS &&
	     dst->qp.state != IBV_QPS_SQE))
		return;
	if (with_imm) {
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = imm;
	}
	if (attr->is_global) {
		sg = &src->dev->gid[attr->grh.sgid_index];
		keep20 = fab_header(hdr, sg->type, &sg->gid, &attr->grh.dgid, len,
				    attr->grh.hop_limit, attr->grh.traffic_class);
		wc.wc_flags |= IBV_WC_GRH;
		dst->rx_type = sg->type;
		dst->rx_sgid = sg->gid;
		dst->rx_dgid = attr->grh.dgid;
	} else {
		dst->rx_type = -1;
	}
	if (!fab_roce)
		wc.slid = fab_lid(src->dev, src->port);
	dst->rx_n++;
	deliver(dst, &wc, attr->is_global ? hdr : NULL, keep20, data, len);
}

/* transmit_to(), counting on the sender's device what reached no receive CQ. */
static void transmit(struct fqp *src, const struct ibv_ah_attr *attr, uint32_t qpn,
		     uint32_t qkey, int with_imm, uint32_t imm, const void *data, uint32_t len)
{
	int before = fab_delivered;

	transmit_to(src, attr, qpn, qkey, with_imm, imm, data, len);
	if (fab_delivered == before)
		src->dev->lost++;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fqp *src = (struct fqp *)qp;
	int rc = 0;

	pthread_mutex_lock(&fab);
	for (; wr; wr = wr->next) {
		struct fah *ah = (struct fah *)wr->wr.ud.ah;
		int sig = src->sig_all || (wr->send_flags & IBV_SEND_SIGNALED);

		if ((qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQE) || !ah || ah->dead ||
		    wr->num_sge != 1 || wr->sg_list[0].length > sizeof(src->sq[0].data) ||
		    src->sqn == SQ_CAP) {
			rc = EINVAL;
			*bad = wr;
			break;
		}
		/*
		 * A send that fails on its own completes in error and leaves
		 * the send queue in SQE (IB spec, UD); there a post is taken
		 * and flushed, as libmlx5 does, until the QP is back in RTS.
		 */
		if (qp->state == IBV_QPS_SQE || fab_send_fail > 0) {
			struct ibv_wc e = { .wr_id = wr->wr_id, .status = IBV_WC_WR_FLUSH_ERR,
					    .opcode = IBV_WC_SEND, .qp_num = qp->qp_num };

			if (qp->state != IBV_QPS_SQE) {
				fab_send_fail--;
				e.status = IBV_WC_LOC_PROT_ERR;
				qp->state = IBV_QPS_SQE;
			}
			cq_push((struct mock_cq *)qp->send_cq, &e);
			src->dev->lost++;
			continue;
		}
		if (fab_hold) {
			struct fsend *s;
			struct fqp *o;
			int k;

			/* A wr_id is the sender's slot: one still in flight
			   on any QP whose completions share the CQ is reused. */
			for (o = qps; o; o = o->next)
				for (k = 0; k < o->sqn; k++)
					if (o->qp.send_cq == qp->send_cq &&
					    o->sq[k].wr_id == wr->wr_id)
						fab_dup_wr++;
			s = &src->sq[src->sqn++];

			s->wr_id = wr->wr_id;
			s->ah = ah;
			s->attr = ah->attr;
			s->qpn = wr->wr.ud.remote_qpn;
			s->qkey = wr->wr.ud.remote_qkey;
			s->opcode = wr->opcode;
			s->imm = wr->imm_data;
			s->signaled = sig;
			s->len = wr->sg_list[0].length;
			memcpy(s->data, (void *)(uintptr_t)wr->sg_list[0].addr, s->len);
			continue;
		}
		transmit(src, &ah->attr, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey,
			 wr->opcode == IBV_WR_SEND_WITH_IMM, wr->imm_data,
			 (void *)(uintptr_t)wr->sg_list[0].addr, wr->sg_list[0].length);
		if (sig) {
			struct ibv_wc s = { .wr_id = wr->wr_id, .status = IBV_WC_SUCCESS,
					    .opcode = IBV_WC_SEND, .qp_num = qp->qp_num };

			cq_push((struct mock_cq *)qp->send_cq, &s);
		}
	}
	pthread_mutex_unlock(&fab);
	if (!rc)
		*bad = NULL;
	return rc;
}

/* Transmits the sends held on @q (fab held).  On rxe a send whose AH went meanwhile fails. */
static void fab_release_locked(struct fqp *q)
{
	int i;

	{
		for (i = 0; i < q->sqn; i++) {
			struct fsend *s = &q->sq[i];
			struct ibv_wc c = { .wr_id = s->wr_id, .status = IBV_WC_SUCCESS,
					    .opcode = IBV_WC_SEND, .qp_num = q->qp.qp_num };

			if (fab_ah_by_ref && s->ah->dead) {
				fab_stale++;
				q->dev->lost++;
				c.status = IBV_WC_LOC_QP_OP_ERR;
			} else {
				transmit(q, fab_ah_by_ref ? &s->ah->attr : &s->attr, s->qpn,
					 s->qkey, s->opcode == IBV_WR_SEND_WITH_IMM, s->imm,
					 s->data, s->len);
			}
			if (s->signaled || c.status != IBV_WC_SUCCESS)
				cq_push((struct mock_cq *)q->qp.send_cq, &c);
		}
		q->sqn = 0;
	}
}

/* Transmits every held send, and holds no more. */
static void fab_release(void)
{
	struct fqp *q;

	pthread_mutex_lock(&fab);
	fab_hold = 0;
	for (q = qps; q; q = q->next)
		fab_release_locked(q);
	pthread_mutex_unlock(&fab);
}

/* Transmits the sends held on the QP numbered @qpn alone; the rest stay held. */
static void fab_release_qp(uint32_t qpn)
{
	pthread_mutex_lock(&fab);
	fab_release_locked(fab_qp(qpn));
	pthread_mutex_unlock(&fab);
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fqp *q = (struct fqp *)qp;
	int rc = 0;

	pthread_mutex_lock(&fab);
	for (; wr; wr = wr->next) {
		if (qp->state == IBV_QPS_RESET || q->rn == RQ_CAP) {
			rc = qp->state == IBV_QPS_RESET ? EINVAL : ENOMEM;
			*bad = wr;
			break;
		}
		if (qp->state == IBV_QPS_ERR) {
			struct ibv_wc f = { .wr_id = wr->wr_id, .status = IBV_WC_WR_FLUSH_ERR,
					    .qp_num = qp->qp_num };

			cq_push((struct mock_cq *)qp->recv_cq, &f);
			continue;
		}
		q->rq[(q->rhead + q->rn++) % RQ_CAP] = (struct frecv){
			wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length };
	}
	pthread_mutex_unlock(&fab);
	return rc;
}

static int fab_events_waiting(void)
{
	int i, n = cm_pending;

	for (i = 0; i < ndevs; i++)
		n += devs[i].an;
	return n;
}

/* A receive CQ polled empty while events waited (mock_cq_config). */
static void fab_idle(struct mock_cq *c)
{
	if (fab_events_waiting())
		fab_idle_polls++;
}

/* Threads (the server's): the polls hold fab; a full CQ loses completions. */
const struct mock_cq_config mock_cq_config = {
	.cap = CQ_CAP,
	.overrun_drops = 1,
	.lock = &fab,
	.on_empty = fab_idle,
};

static struct ibv_cq_ex *fake_create_cq_ex(struct ibv_context *context,
					   struct ibv_cq_init_attr_ex *a)
{
	/* Without real-time mode: no clock_info page here, so no wall clock. */
	if ((a->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK) && !fab_rt) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &mock_cq_create_ex(context, a)->cqx;
}

static int fake_query_device_ex(struct ibv_context *context,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr, size_t attr_size)
{
	memset(attr, 0, attr_size);
	attr->orig_attr.phys_port_cnt = NPORT;
	attr->completion_timestamp_mask = fab_hca.mask;
	attr->hca_core_clock = fab_hca.khz;
	return 0;
}

static int fake_query_rt_values(struct ibv_context *context, struct ibv_values_ex *v)
{
	v->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	v->raw_clock.tv_sec = 0;
	v->raw_clock.tv_nsec = (long)mock_hca_cycles(&fab_hca, mock_rt_now());
	return 0;
}

/* Every device gets the extended verbs and completion stamps. */
static void fab_stamps_on(void)
{
	int i;

	pthread_mutex_lock(&fab);
	fab_stamps = 1;
	for (i = 0; i < NDEV; i++) {
		devs[i].vctx.query_device_ex = fake_query_device_ex;
		devs[i].vctx.create_cq_ex = fake_create_cq_ex;
		devs[i].vctx.query_rt_values = fake_query_rt_values;
	}
	pthread_mutex_unlock(&fab);
}

/*
 * mlx5 with REAL_TIME_CLOCK_ENABLE: it reports the timestamp mask and
 * core clock still, creates a CQ with raw stamps, and the kernel refuses
 * the QP on it (EOPNOTSUPP: the free-running format is gone).
 */
static void fab_rt_on(void)
{
	fab_stamps_on();
	pthread_mutex_lock(&fab);
	fab_rt = mock_mlx5 = mock_mlx5_rt = 1;
	pthread_mutex_unlock(&fab);
}

static int cq_raw(const struct ibv_cq *cq)
{
	const struct mock_cq *c = (const struct mock_cq *)cq;

	return c && c->ex && (c->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
}

/* Device @d's GID table: a link-local entry, then each IPv4 address's. */
static void fab_gids(struct fdev *d, int i)
{
	int a, n = 0;

	memset(d->gid, 0, sizeof(d->gid));
	if (!fab_roce) {
		d->gid[0].gid.raw[0] = 0xfe;
		d->gid[0].gid.raw[1] = 0x80;
		d->gid[0].gid.raw[15] = (uint8_t)d->lid;
		d->gid[0].type = IBV_GID_TYPE_IB;
		d->gid[0].valid = 1;
		return;
	}
	for (; n < 2; n++) {
		d->gid[n].gid.raw[0] = 0xfe;
		d->gid[n].gid.raw[1] = 0x80;
		d->gid[n].gid.raw[15] = (uint8_t)(i + 1);
		d->gid[n].type = n ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
		d->gid[n].valid = 1;
	}
	for (a = 0; a < NADDR && n + 1 < NGID; a++) {
		if (addrs[a].dev != i)
			continue;
		gid_v4(&d->gid[n].gid, ip4(addrs[a].ip));
		d->gid[n].type = IBV_GID_TYPE_ROCE_V1;
		d->gid[n++].valid = 1;
		gid_v4(&d->gid[n].gid, ip4(addrs[a].ip));
		d->gid[n].type = IBV_GID_TYPE_ROCE_V2;
		d->gid[n++].valid = 1;
	}
}

/* The link the fabric models; call before opening anything. */
static void fab_link(int roce)
{
	int i;

	pthread_mutex_lock(&fab);
	fab_roce = roce;
	for (i = 0; i < NDEV; i++)
		fab_gids(&devs[i], i);
	pthread_mutex_unlock(&fab);
}

static void fab_reset(void)
{
	int i;

	pthread_mutex_lock(&fab);
	fake_ops.poll_cq = mock_poll_cq;
	fake_ops.req_notify_cq = mock_req_notify_cq;
	fake_ops.post_send = fake_post_send;
	fake_ops.post_recv = fake_post_recv;
	for (i = 0; i < NDEV; i++) {
		struct fdev *d = &devs[i];

		if (d->vctx.context.device) {
			close(d->apipe[0]);
			close(d->apipe[1]);
		}
		memset(d, 0, sizeof(*d));
		snprintf(d->dev.name, sizeof(d->dev.name), "fake%d", i);
		d->vctx.sz = sizeof(d->vctx);
		d->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
		d->vctx.context.device = &d->dev;
		d->vctx.context.ops = fake_ops;
		mock_dummy_ex(&d->vctx);	/* until fab_stamps_on() */
		assert_int_equal(pipe2(d->apipe, O_CLOEXEC), 0);
		d->vctx.context.async_fd = d->apipe[0];
		d->vctx.context.cmd_fd = -1;
		d->lid = (uint16_t)(i + 1);
		d->mtu[1] = d->mtu[2] = IBV_MTU_2048;
		/* each has a PHC (group_setup): sysfs shows ptpN under it */
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "%s/ib/fake%d",
			 mock_phc_root(), i);
	}
	memset(&mock_phc, 0, sizeof(mock_phc));
	mock_phc.off = FAB_PHC_OFF;
	mock_start_busy = 0;
	while (ahs) {
		struct fah *a = ahs;

		ahs = a->next;
		free(a);
	}
	ndevs = NDEV - 1;
	force_qpn = 0;
	fab_roce = fab_ah_by_ref = fab_hold = 0;
	fab_garbage = -1;
	fab_stamps = fab_rt = mock_mlx5 = mock_mlx5_rt = 0;
	fab_client_dev = 1;
	fab_sidr_drop = fab_stale = fab_dup_wr = mock_chan_reads = fab_idle_polls = 0;
	fab_send_fail = 0;
	cm_pending = fab_delivered = 0;
	pthread_mutex_unlock(&fab);
	fab_link(0);
}

/* A port event on device @d's port @port, and the port's new state. */
static void fab_async(int d, int port, enum ibv_event_type type, int down)
{
	struct ibv_async_event ev = { .event_type = type };

	ev.element.port_num = port;
	pthread_mutex_lock(&fab);
	devs[d].down[port] = down;
	fab_event(&devs[d], &ev);
	pthread_mutex_unlock(&fab);
}

/* The QP numbered @qpn goes into the error state, as after a fatal error. */
static void fab_qp_error(uint32_t qpn)
{
	struct ibv_async_event ev = { .event_type = IBV_EVENT_QP_FATAL };
	struct fqp *q;

	pthread_mutex_lock(&fab);
	q = fab_qp(qpn);
	assert_non_null(q);
	q->qp.state = IBV_QPS_ERR;
	while (q->rn) {
		struct ibv_wc f = { .wr_id = q->rq[q->rhead].wr_id,
				    .status = IBV_WC_WR_FLUSH_ERR, .qp_num = qpn };

		q->rhead = (q->rhead + 1) % RQ_CAP;
		q->rn--;
		cq_push((struct mock_cq *)q->qp.recv_cq, &f);
	}
	ev.element.qp = &q->qp;
	fab_event(q->dev, &ev);
	pthread_mutex_unlock(&fab);
}

/* ---- libibverbs, as far as lib/ib.c uses it ------------------------ */

struct ibv_device **(ibv_get_device_list)(int *num)
{
	struct ibv_device **l = calloc(NDEV + 1, sizeof(*l));
	int i;

	for (i = 0; i < ndevs; i++)
		l[i] = &devs[i].dev;
	if (num)
		*num = ndevs;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

int (ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		     struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr *pa = (struct ibv_port_attr *)port_attr;
	struct fdev *d = fab_dev(context);

	if (port_num < 1 || port_num > NPORT)
		return EINVAL;
	pa->state = d->down[port_num] ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	pa->max_mtu = pa->active_mtu = d->mtu[port_num];
	pa->link_layer = fab_roce ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
	pa->lid = fab_roce ? 0 : fab_lid(d, port_num);
	pa->gid_tbl_len = NGID;
	pa->pkey_tbl_len = 2;
	return 0;
}

/* What ibv_query_device_ex falls back to where the provider has no _ex. */
int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->phys_port_cnt = NPORT;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
		  union ibv_gid *gid)
{
	struct fdev *d = fab_dev(context);

	if (port_num != 1 || index < 0 || index >= NGID)
		return -1;
	pthread_mutex_lock(&fab);
	if (d->gid[index].valid)
		*gid = d->gid[index].gid;
	else
		memset(gid, 0, sizeof(*gid));
	pthread_mutex_unlock(&fab);
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct fdev *d = fab_dev(context);
	int rc = 0;

	if (port_num != 1 || gid_index >= NGID)
		return EINVAL;
	pthread_mutex_lock(&fab);
	if (!d->gid[gid_index].valid) {
		rc = ENODATA;
	} else {
		memset(entry, 0, entry_size);
		entry->gid = d->gid[gid_index].gid;
		entry->gid_index = gid_index;
		entry->port_num = port_num;
		entry->gid_type = (uint32_t)d->gid[gid_index].type;
	}
	pthread_mutex_unlock(&fab);
	return rc;
}

/* The GID at @index of device @d changes (an address came or went). */
static void fab_set_gid(int d, int index, const char *ip6, int type)
{
	struct ibv_async_event ev = { .event_type = IBV_EVENT_GID_CHANGE };

	pthread_mutex_lock(&fab);
	assert_int_equal(inet_pton(AF_INET6, ip6, devs[d].gid[index].gid.raw), 1);
	devs[d].gid[index].type = type;
	devs[d].gid[index].valid = 1;
	ev.element.port_num = 1;
	fab_event(&devs[d], &ev);
	pthread_mutex_unlock(&fab);
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct fdev *d = fab_dev(context);
	char b;
	int i;

	pthread_mutex_lock(&fab);
	if (!d->an || read(d->apipe[0], &b, 1) != 1) {
		pthread_mutex_unlock(&fab);
		errno = EAGAIN;
		return -1;
	}
	*event = d->aq[0];
	for (i = 1; i < d->an; i++)
		d->aq[i - 1] = d->aq[i];
	d->an--;
	pthread_mutex_unlock(&fab);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	return &mock_cq_create(context, cqe, cq_context, channel)->cq;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct fqp *q;

	if (fab_rt && (cq_raw(attr->send_cq) || cq_raw(attr->recv_cq))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	q = calloc(1, sizeof(*q));

	q->qp.context = pd->context;
	q->qp.pd = pd;
	q->qp.send_cq = attr->send_cq;
	q->qp.recv_cq = attr->recv_cq;
	q->qp.qp_type = attr->qp_type;
	q->qp.state = IBV_QPS_RESET;
	q->sig_all = attr->sq_sig_all;
	q->rx_type = -2;
	q->dev = fab_dev(pd->context);
	pthread_mutex_lock(&fab);
	q->qp.qp_num = force_qpn ? force_qpn : next_qpn++;
	force_qpn = 0;
	q->next = qps;
	qps = q;
	pthread_mutex_unlock(&fab);
	return &q->qp;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fqp **p;

	pthread_mutex_lock(&fab);
	for (p = &qps; *p; p = &(*p)->next)
		if (&(*p)->qp == qp) {
			*p = (*p)->next;
			break;
		}
	pthread_mutex_unlock(&fab);
	free(qp);
	return 0;
}

/*
 * The UD transitions of the IB spec's QP state table (11.2.4.2 in
 * volume 1): the attributes each needs and those it may take.
 */
static int ud_transition(enum ibv_qp_state from, enum ibv_qp_state to, int *need, int *may)
{
	*need = IBV_QP_STATE;
	*may = 0;
	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		return 0;
	if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) {
		*need |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		return 0;
	}
	if (from == IBV_QPS_INIT && to == IBV_QPS_INIT) {
		*may = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		return 0;
	}
	if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
		*may = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
		return 0;
	}
	if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
		*need |= IBV_QP_SQ_PSN;
		*may = IBV_QP_CUR_STATE | IBV_QP_QKEY;
		return 0;
	}
	if ((from == IBV_QPS_RTS || from == IBV_QPS_SQE) && to == IBV_QPS_RTS) {
		*may = IBV_QP_CUR_STATE | IBV_QP_QKEY;
		return 0;
	}
	return -1;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct fqp *q = (struct fqp *)qp;
	enum ibv_qp_state to = mask & IBV_QP_STATE ? attr->qp_state : qp->state;
	int need, may, rc = 0;

	pthread_mutex_lock(&fab);
	if (qp->qp_type != IBV_QPT_UD || ud_transition(qp->state, to, &need, &may) ||
	    (mask & need) != need || (mask & ~(need | may)) ||
	    ((mask & IBV_QP_PORT) && (attr->port_num < 1 || attr->port_num > NPORT)) ||
	    ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index > 1)) {
		rc = EINVAL;
		goto out;
	}
	if (mask & IBV_QP_QKEY)
		q->qkey = attr->qkey;
	if (mask & IBV_QP_PKEY_INDEX)
		q->pkey_index = attr->pkey_index;
	if (mask & IBV_QP_PORT)
		q->port = attr->port_num;
	if (to == IBV_QPS_RESET)	/* a reset drops every queued request */
		q->rn = q->rhead = q->sqn = 0;
	qp->state = to;
out:
	pthread_mutex_unlock(&fab);
	errno = rc;
	return rc;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init_attr)
{
	attr->qp_state = qp->state;
	return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct fdev *d = fab_dev(pd->context);
	struct fah *a;

	if (attr->port_num < 1 || attr->port_num > NPORT || (fab_roce && !attr->is_global) ||
	    (attr->is_global && (attr->grh.sgid_index >= NGID ||
				 !d->gid[attr->grh.sgid_index].valid)) ||
	    (!attr->is_global && !attr->dlid)) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->attr = *attr;
	pthread_mutex_lock(&fab);
	a->next = ahs;
	ahs = a;
	pthread_mutex_unlock(&fab);
	__atomic_add_fetch(&ah_live, 1, __ATOMIC_SEQ_CST);
	return &a->ah;
}

/*
 * What libibverbs' ibv_init_ah_from_wc derives (written here from its
 * documented behaviour): the header version as rdma-core decides it (an
 * IPv4 header at byte 20 is believed only with IHL 5 and a good checksum
 * when the first nibble says 6), the GID type from it, and the source
 * GID index as the local GID the datagram was sent to, of that type.
 */
static int mock_init_ah_from_wc(struct fdev *d, uint8_t port, const struct ibv_wc *wc,
				const unsigned char *g, struct ibv_ah_attr *a)
{
	const unsigned char *ip = g + 20;
	union ibv_gid local;
	int v, type, idx;

	memset(a, 0, sizeof(*a));
	a->dlid = wc->slid;
	a->sl = wc->sl;
	a->src_path_bits = wc->dlid_path_bits;
	a->port_num = port;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	a->is_global = 1;
	if (g[0] >> 4 != 6)
		v = ip[0] >> 4 == 4 ? 4 : -1;
	else
		v = (ip[0] & 15) == 5 && csum16(ip, 20) == 0 ? 4 : 6;
	if (v == 4) {
		uint32_t s, t;

		memcpy(&s, ip + 12, 4);
		memcpy(&t, ip + 16, 4);
		gid_v4(&a->grh.dgid, s);
		gid_v4(&local, t);
		type = IBV_GID_TYPE_ROCE_V2;
		a->grh.hop_limit = ip[8];
		a->grh.traffic_class = ip[1];
	} else if (v == 6 && (g[6] == 17 || g[6] == ROCE_V1_NEXT)) {
		memcpy(a->grh.dgid.raw, g + 8, 16);
		memcpy(local.raw, g + 24, 16);
		type = g[6] == 17 ? IBV_GID_TYPE_ROCE_V2 :
		       fab_roce ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_IB;
		a->grh.hop_limit = g[7];
		a->grh.flow_label = (uint32_t)(g[1] & 15) << 16 | (uint32_t)g[2] << 8 | g[3];
		a->grh.traffic_class = (uint8_t)(g[0] << 4 | g[1] >> 4);
	} else {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	idx = fab_gid_find(d, &local, type);
	if (idx < 0) {
		errno = ENOENT;
		return -1;
	}
	a->grh.sgid_index = (uint8_t)idx;
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr a;
	int rc;

	pthread_mutex_lock(&fab);
	rc = mock_init_ah_from_wc(fab_dev(pd->context), port_num, wc,
				  (const unsigned char *)grh, &a);
	pthread_mutex_unlock(&fab);
	return rc ? NULL : ibv_create_ah(pd, &a);
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct fah *a = (struct fah *)ah;

	pthread_mutex_lock(&fab);
	assert_false(a->dead);
	a->dead = 1;		/* kept until fab_reset(): queued sends may name it */
	pthread_mutex_unlock(&fab);
	__atomic_sub_fetch(&ah_live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- librdmacm ----------------------------------------------------- */

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct fcm *c;

	if (!ndevs) {
		errno = ENODEV;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	assert_int_equal(pipe2(c->pipe, O_CLOEXEC), 0);
	c->ch.fd = c->pipe[0];
	return &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct fcm *c = (struct fcm *)channel;

	pthread_mutex_lock(&fab);
	cm_pending -= c->n;
	while (c->n--)
		free(c->q[c->head++ % 64]);
	pthread_mutex_unlock(&fab);
	close(c->pipe[0]);
	close(c->pipe[1]);
	free(c);
}

/* Queues an event for @f on its channel.  Called with fab held. */
static struct fevent *cm_event(struct fid *f, enum rdma_cm_event_type type, int status)
{
	struct fcm *c = (struct fcm *)f->id.channel;
	struct fevent *e = calloc(1, sizeof(*e));

	e->ev.id = &f->id;
	e->ev.event = type;
	e->ev.status = status;
	assert_true(c->n < 64);
	c->q[(c->head + c->n++) % 64] = &e->ev;
	cm_pending++;
	mock_poke(c->pipe[1]);
	return e;
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct fcm *c = (struct fcm *)channel;
	char b;

	pthread_mutex_lock(&fab);
	if (!c->n) {
		pthread_mutex_unlock(&fab);
		errno = EAGAIN;
		return -1;
	}
	assert_int_equal(read(c->pipe[0], &b, 1), 1);
	*event = c->q[c->head];
	c->head = (c->head + 1) % 64;
	c->n--;
	cm_pending--;
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	free(event);		/* struct fevent starts with it */
	return 0;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps)
{
	struct fid *f = calloc(1, sizeof(*f));

	f->id.channel = channel;
	f->id.context = context;
	f->id.ps = ps;
	f->id.qp_type = IBV_QPT_UD;
	pthread_mutex_lock(&fab);
	f->next = ids;
	ids = f;
	pthread_mutex_unlock(&fab);
	*id = &f->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct fid **p;

	pthread_mutex_lock(&fab);
	for (p = &ids; *p; p = &(*p)->next)
		if (&(*p)->id == id) {
			*p = (*p)->next;
			break;
		}
	pthread_mutex_unlock(&fab);
	free(id);
	return 0;
}

/* Moves @id, and its events not yet fetched, to @channel. */
int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct fcm *from = (struct fcm *)id->channel, *to = (struct fcm *)channel;
	struct rdma_cm_event *keep[64];
	int i, n = 0;
	char b;

	pthread_mutex_lock(&fab);
	for (i = 0; i < from->n; i++) {
		struct rdma_cm_event *e = from->q[(from->head + i) % 64];

		assert_int_equal(read(from->pipe[0], &b, 1), 1);
		if (e->id == id) {
			to->q[(to->head + to->n++) % 64] = e;
			mock_poke(to->pipe[1]);
		} else {
			keep[n++] = e;
		}
	}
	from->head = 0;
	from->n = n;
	for (i = 0; i < n; i++) {
		from->q[i] = keep[i];
		mock_poke(from->pipe[1]);
	}
	id->channel = channel;
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct fid *f = (struct fid *)id;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	const struct faddr *a = fab_addr(sin->sin_addr.s_addr);

	f->port = ntohs(sin->sin_port);
	if (addr_server(a) && a->dev < ndevs) {
		id->verbs = &devs[a->dev].vctx.context;
		id->port_num = (uint8_t)addr_port(a);
		f->pkey_index = a->pkey_index;
		f->dst_ip = sin->sin_addr.s_addr;
	} else if (sin->sin_addr.s_addr != htonl(INADDR_ANY)) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	f->state = FID_BOUND;
	return 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct fid *f = (struct fid *)id, *i;

	pthread_mutex_lock(&fab);
	for (i = ids; i; i = i->next)
		if (i != f && i->listening && i->port == f->port) {
			pthread_mutex_unlock(&fab);
			errno = EADDRINUSE;
			return -1;
		}
	f->listening = 1;
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
		      int timeout_ms)
{
	struct fid *f = (struct fid *)id;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)dst;
	const struct faddr *a = fab_addr(sin->sin_addr.s_addr);

	pthread_mutex_lock(&fab);
	f->port = ntohs(sin->sin_port);
	if (addr_server(a) && a->dev < ndevs) {
		id->verbs = &devs[fab_client_dev].vctx.context;
		id->port_num = 1;
		f->pkey_index = a->pkey_index;	/* the client's child interface */
		f->dst_ip = sin->sin_addr.s_addr;
		f->state = FID_ADDR;
		cm_event(f, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	} else {
		cm_event(f, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH);
	}
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct fid *f = (struct fid *)id;

	if (f->state != FID_ADDR) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&fab);
	if (devs[fab_dev(id->verbs) - devs].down[id->port_num]) {
		cm_event(f, RDMA_CM_EVENT_ROUTE_ERROR, -ENETUNREACH);
	} else {
		f->state = FID_ROUTE;
		cm_event(f, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	}
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fid *f = (struct fid *)id, *l;

	if (f->state != FID_ROUTE || !param || !param->qp_num) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&fab);
	f->state = FID_REQ;
	for (l = ids; l; l = l->next)
		if (l->listening && l->port == f->port &&
		    (!l->dst_ip || l->dst_ip == f->dst_ip))
			break;
	if (!l) {
		/* The server's CM answers: no such service (status 1). */
		cm_event(f, RDMA_CM_EVENT_UNREACHABLE, 1);
	} else {
		struct fid *r = calloc(1, sizeof(*r));
		struct fevent *e;

		r->id.channel = l->id.channel;
		r->id.context = l->id.context;
		r->id.verbs = &devs[fab_addr(f->dst_ip)->dev].vctx.context;
		r->id.port_num = (uint8_t)addr_port(fab_addr(f->dst_ip));
		r->id.ps = RDMA_PS_UDP;
		r->state = FID_REQ;
		r->pkey_index = f->pkey_index;	/* the partition it came in on */
		r->dst_ip = f->dst_ip;
		r->client = f;
		r->next = ids;
		ids = r;
		e = cm_event(r, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
		e->ev.listen_id = &l->id;
	}
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fid *r = (struct fid *)id;
	struct fevent *e;

	if (r->state != FID_REQ || !r->client || !param || !param->qp_num) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&fab);
	r->state = FID_DONE;
	if (fab_sidr_drop > 0) {
		fab_sidr_drop--;	/* the SIDR reply is lost on the way */
	} else if (fab_id_alive(r->client) && r->client->state == FID_REQ) {
		struct ibv_ah_attr *a;
		struct fdev *cd = fab_dev(r->client->id.verbs);
		union ibv_gid src;
		int i;

		r->client->state = FID_DONE;
		e = cm_event(r->client, RDMA_CM_EVENT_ESTABLISHED, 0);
		memcpy(e->pd, param->private_data, param->private_data_len);
		e->ev.param.ud.private_data = e->pd;
		e->ev.param.ud.private_data_len = sizeof(e->pd);
		e->ev.param.ud.qp_num = param->qp_num;
		e->ev.param.ud.qkey = RDMA_UDP_QKEY;
		a = &e->ev.param.ud.ah_attr;
		a->port_num = 1;
		if (fab_roce) {
			/* rdma_cm's choice on RoCE: the RoCE v2 GID of the address. */
			a->is_global = 1;
			gid_v4(&a->grh.dgid, r->dst_ip);
			for (i = 0; i < NADDR; i++)
				if (&devs[addrs[i].dev] == cd)
					gid_v4(&src, ip4(addrs[i].ip));
			a->grh.sgid_index = (uint8_t)fab_gid_find(cd, &src,
								  IBV_GID_TYPE_ROCE_V2);
			a->grh.hop_limit = 64;
		} else {
			a->dlid = fab_lid(fab_dev(r->id.verbs), r->id.port_num);
		}
	}
	pthread_mutex_unlock(&fab);
	return 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t len)
{
	struct fid *r = (struct fid *)id;

	pthread_mutex_lock(&fab);
	if (r->client && fab_id_alive(r->client))
		cm_event(r->client, RDMA_CM_EVENT_UNREACHABLE, 1);
	pthread_mutex_unlock(&fab);
	return 0;
}

/* rdma_cm's INIT attributes for a bound, resolved or requesting id. */
int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr, int *mask)
{
	struct fid *f = (struct fid *)id;

	if (!id->verbs) {
		errno = EINVAL;		/* a wildcard listener has no device */
		return -1;
	}
	attr->qp_state = IBV_QPS_INIT;
	attr->pkey_index = f->pkey_index;
	attr->port_num = id->port_num;
	attr->qkey = RDMA_UDP_QKEY;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	return 0;
}

struct ibv_context **rdma_get_devices(int *num)
{
	struct ibv_context **l = calloc(NDEV + 1, sizeof(*l));
	int i;

	for (i = 0; i < ndevs; i++)
		l[i] = &devs[i].vctx.context;
	if (num)
		*num = ndevs;
	return l;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- a server like ntpreflect, in a thread ------------------------- */

struct server {
	struct transport *t;
	struct clock *clk;
	pthread_t th;
	int stop;
	int answered;
	int received;			/* requests taken in */
	uint32_t qpn;
	unsigned char last_req[NTP_HEADER_LEN];
	struct nts_server *nts;		/* NULL: plain NTP; else NTS, as ntpreflect */
	int nts_dropped;		/* requests whose NTS fields did not check */
	pthread_mutex_t mu;		/* the counters above change under it, */
	pthread_cond_t cv;		/* and wake the test's wait_count() */
};

/* One more in @counter of @s, and whoever waits for it woken. */
static void server_count(struct server *s, int *counter)
{
	pthread_mutex_lock(&s->mu);
	__atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/*
 * Waits until @counter of @s reaches @n: woken by each server_count(),
 * never by a timer.  WAIT_NS only bounds a failure.
 */
static void wait_count(struct server *s, int *counter, int n, const char *what)
{
	int64_t end = clock_monotonic_ns() + WAIT_NS;
	struct timespec ts = { .tv_sec = end / NTPX_NS_PER_SEC, .tv_nsec = end % NTPX_NS_PER_SEC };

	pthread_mutex_lock(&s->mu);
	while (__atomic_load_n(counter, __ATOMIC_SEQ_CST) < n)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT &&
		    __atomic_load_n(counter, __ATOMIC_SEQ_CST) < n) {
			pthread_mutex_unlock(&s->mu);
			fail_msg("server %s %d of %d in %.0f s", what, *counter, n,
				 ntpx_ns_to_sec(WAIT_NS));
		}
	pthread_mutex_unlock(&s->mu);
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	unsigned char buf[4096];
	struct transport_addr from;
	int64_t t2, t3;

	while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
		ssize_t n = dg_recv_wait(s->t, buf, sizeof(buf), &from, s->clk, &t2,
						clock_monotonic_ns() + 20 * NTPX_NS_PER_MS,
						TRANSPORT_POLL_BLOCK);

		if (n < NTP_HEADER_LEN || (buf[0] & 7) != NTP_MODE_CLIENT)
			continue;
		memcpy(s->last_req, buf, NTP_HEADER_LEN);
		server_count(s, &s->received);
		if (s->nts) {
			struct nts_server_req req;
			const char *why;
			int64_t ns;
			size_t len = NTP_HEADER_LEN;

			if (nts_server_check(s->nts, buf, (size_t)n, &req, &why, &ns) != NTS_SERVER_OK) {
				server_count(s, &s->nts_dropped);
				continue;
			}
			/* As ntpreflect in basic mode: T3 before sealing. */
			buf[0] = 0x24;
			buf[1] = 1;
			memcpy(buf + 24, s->last_req + 40, 8);
			memset(buf + 32, 0x11, 8);
			memset(buf + 40, 0x22, 8);
			if (nts_server_reply(s->nts, &req, buf, (size_t)n, &len, &ns) == 0 &&
			    dg_send(s->t, buf, len, &from, s->clk, 0, &t3) == 0)
				server_count(s, &s->answered);
			continue;
		}
		buf[0] = 0x24;				/* LI 0, VN 4, mode 4 */
		buf[1] = 1;				/* stratum */
		memcpy(buf + 24, s->last_req + 40, 8);	/* origin = their xmt */
		memset(buf + 32, 0x11, 8);		/* receive: any nonzero */
		if (dg_send(s->t, buf, NTP_HEADER_LEN, &from, s->clk,
				   TRANSPORT_STAMP_XMT, &t3) == 0)
			server_count(s, &s->answered);
	}
	return NULL;
}

static void server_start_url(struct server *s, const char *url)
{
	struct endpoint ep;
	char err[256];
	struct fqp *q;

	pthread_condattr_t ca;

	memset(s, 0, sizeof(*s));
	assert_int_equal(pthread_mutex_init(&s->mu, NULL), 0);
	assert_int_equal(pthread_condattr_init(&ca), 0);
	assert_int_equal(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
	assert_int_equal(pthread_cond_init(&s->cv, &ca), 0);
	pthread_condattr_destroy(&ca);
	s->clk = clock_open("realtime", err, sizeof(err));
	assert_non_null(s->clk);
	assert_int_equal(transport_parse_endpoint(url, &ep, err, sizeof(err)), 0);
	s->t = transport_open(&ep, TRANSPORT_SERVER, err, sizeof(err));
	if (!s->t)
		fail_msg("server: %s", err);
	pthread_mutex_lock(&fab);
	q = fab_qp_on(0);
	s->qpn = q->qp.qp_num;
	pthread_mutex_unlock(&fab);
	assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

static void server_start(struct server *s)
{
	server_start_url(s, "ib://" SERVER_ADDR ":123");
}

/* The halted server's thread runs again. */
static void server_resume(struct server *s)
{
	s->stop = 0;
	assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

/* Waits until the server has answered @n requests. */
static void wait_answered(struct server *s, int n)
{
	wait_count(s, &s->answered, n, "answered");
}

/* Waits until the server has taken in @n requests. */
static void wait_received(struct server *s, int n)
{
	wait_count(s, &s->received, n, "received");
}

/* Stops the thread; the transport stays open for its counters. */
static void server_halt(struct server *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(s->th, NULL);
}

static void server_stop(struct server *s)
{
	server_halt(s);
	transport_close(s->t);
	clock_close(s->clk);
}

/* ---- a client like ntpprobe ---------------------------------------- */

struct client {
	struct transport *t;
	struct clock *clk;
	uint32_t qpn;			/* its QP on the fabric */
	uint64_t seq;
	int64_t t1, t4;
};

static struct transport *client_open_url(struct client *c, const char *url, char *err,
					 size_t errlen)
{
	struct endpoint ep;

	memset(c, 0, sizeof(*c));
	c->clk = clock_open("realtime", err, errlen);
	assert_non_null(c->clk);
	assert_int_equal(transport_parse_endpoint(url, &ep, err, errlen), 0);
	c->t = transport_open(&ep, TRANSPORT_CLIENT, err, errlen);
	if (c->t) {
		struct fqp *q;

		pthread_mutex_lock(&fab);
		for (q = qps; q && q->dev != &devs[fab_client_dev]; q = q->next)
			;
		c->qpn = q ? q->qp.qp_num : 0;	/* the newest there is its own */
		pthread_mutex_unlock(&fab);
	}
	return c->t;
}

static void client_open(struct client *c, const char *url)
{
	char err[256];

	if (!client_open_url(c, url, err, sizeof(err)))
		fail_msg("client: %s", err);
}

static void client_close(struct client *c)
{
	transport_close(c->t);
	clock_close(c->clk);
}

/* Sends one request with the next nonce: 0 or -errno. */
static int request(struct client *c, uint64_t *nonce)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 };

	*nonce = htobe64(++c->seq);
	memcpy(req + 40, nonce, 8);
	return dg_send(c->t, req, sizeof(req), NULL, c->clk, 0, &c->t1);
}

/*
 * Takes in what comes until the reply to @nonce (1) or @deadline
 * (CLOCK_MONOTONIC ns, 0).
 */
static int reply_by(struct client *c, uint64_t nonce, int64_t deadline, enum transport_poll mode)
{
	unsigned char buf[4096];

	for (;;) {
		ssize_t n = dg_recv_wait(c->t, buf, sizeof(buf), NULL, c->clk, &c->t4,
						deadline, mode);

		if (n == -ETIMEDOUT)
			return 0;
		assert_true(n >= 0 || n == -EINTR);
		if (n >= NTP_HEADER_LEN && (buf[0] & 7) == NTP_MODE_SERVER &&
		    memcmp(buf + 24, &nonce, 8) == 0)
			return 1;
	}
}

/*
 * One exchange that must be answered: 1 answered, -errno when it could
 * not send.  The wait ends with the reply; 0 (no reply) only after
 * WAIT_NS, which a reply that comes never reaches however loaded the
 * machine.  A request that must go unanswered is exchange_lost()'s.
 */
static int exchange(struct client *c, enum transport_poll mode)
{
	uint64_t nonce;
	int rc = request(c, &nonce);

	if (rc)
		return rc;
	return reply_by(c, nonce, clock_monotonic_ns() + WAIT_NS, mode);
}

/*
 * lib/ib.c counts a request missed when the next one goes out at least
 * IB_MISS_MIN_NS (1 ms) after it with no reply between: the age a lost
 * request must have reached before the next exchange.
 */
#define MISS_AGE_NS	(1 * NTPX_NS_PER_MS)

/* The sends from the clients' device that reached no receive CQ. */
static int client_lost(void)
{
	int n;

	pthread_mutex_lock(&fab);
	n = devs[fab_client_dev].lost;
	pthread_mutex_unlock(&fab);
	return n;
}

/*
 * One exchange whose request must go unanswered.  What tells a lost
 * request from a slow reply is the event that settles its fate, never a
 * wait long enough: with @s, @s's @counter reaching @n (the server took
 * the request in and answered or dropped it: a reply, if any, is queued
 * at the client by then); without, the request lost during its own send
 * (client_lost(): on the way, or failed at the sender; nothing can come).
 * Then the client takes in what is queued, until the request is
 * MISS_AGE_NS old.  1 answered, 0 unanswered, -errno when it could not
 * send.
 */
static int exchange_lost(struct client *c, struct server *s, int *counter, int n)
{
	uint64_t nonce;
	int lost = client_lost();
	int rc = request(c, &nonce);
	int64_t sent = clock_monotonic_ns();

	if (rc)
		return rc;
	if (s)
		wait_count(s, counter, n, "settled");
	else if (client_lost() != lost + 1)
		fail_msg("the request was not lost on the fabric");
	return reply_by(c, nonce, sent + MISS_AGE_NS, TRANSPORT_POLL_BLOCK);
}

/* exchange_lost() of a request the fabric must lose. */
static int exchange_dropped(struct client *c)
{
	return exchange_lost(c, NULL, NULL, 0);
}

/* Waits for an event on @c's fd, at most @ns: what a retry waits for. */
static void client_pace(struct client *c, int64_t ns)
{
	struct pollfd pfd = { .fd = transport_fd(c->t), .events = POLLIN };

	(void)poll(&pfd, 1, (int)(ns / NTPX_NS_PER_MS));
}

/*
 * Exchanges until one returns @want (1, or a send's -errno), for at most
 * WAIT_NS: a resolution or a rebuild that goes on behind the sends
 * finishes in its own time.  A request the fabric lost during its send
 * (client_lost()) counts 0 at once; one that arrived is waited for
 * as exchange() does.  A send that returned EINPROGRESS already waited
 * for the resolver and is retried at once; after another outcome the
 * retry waits for an event on the client's fd, at most 10 ms: that bound
 * only paces the retries through a backoff (lib/peer.c) or a rebuild
 * that no fd of the client's announces, and no outcome depends on its
 * length.  Returns the last.
 */
static int exchange_until(struct client *c, int want)
{
	int64_t end = clock_monotonic_ns() + WAIT_NS;
	int rc;

	for (;;) {
		uint64_t nonce;
		int lost = client_lost();

		rc = request(c, &nonce);
		if (rc == 0)
			rc = client_lost() != lost ? 0 :
			     reply_by(c, nonce, clock_monotonic_ns() + WAIT_NS,
				      TRANSPORT_POLL_BLOCK);
		if (rc == want || clock_monotonic_ns() >= end)
			return rc;
		if (rc != -EINPROGRESS)
			client_pace(c, 10 * NTPX_NS_PER_MS);
	}
}

/* The value of "name=" in the transport's counters line. */
static unsigned long long counter(struct transport *t, const char *name)
{
	char line[512], key[40];
	const char *p;

	transport_counters(t, line, sizeof(line));
	snprintf(key, sizeof(key), "%s=", name);
	for (p = line; (p = strstr(p, key)); p++)
		if (p == line || p[-1] == ' ')
			return strtoull(p + strlen(key), NULL, 10);
	fail_msg("no counter %s in '%s'", name, line);
	return 0;
}

/* ---- tests ---------------------------------------------------------- */

/* Every device has a PHC, ptp0..2 (support/phc_mock.h). */
static int group_setup(void **state)
{
	char d[300];
	int i;

	mock_phc_init();
	for (i = 0; i < NDEV; i++) {
		snprintf(d, sizeof(d), "%s/ib/fake%d", mock_phc_root(), i);
		mock_phc_add(d, i);
	}
	return 0;
}

static int group_teardown(void **state)
{
	mock_phc_cleanup();
	return 0;
}

static int setup(void **state)
{
	fab_reset();
	return 0;
}

static int teardown(void **state)
{
	assert_null(qps);
	assert_null(ids);
	assert_int_equal(ah_live, 0);
	return 0;
}

static void test_exchange(void **state)
{
	struct server s;
	struct client c;
	int64_t before;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	before = clock_realtime_ns();
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_true(c.t1 >= before && c.t4 >= c.t1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BUSY), 1);
	assert_int_equal(transport_peer_reset(c.t), 0);
	assert_int_equal(counter(c.t, "replies"), 2);
	assert_int_equal(counter(c.t, "resolutions"), 1);
	client_close(&c);
	server_halt(&s);
	assert_int_equal(counter(s.t, "sidr_accept"), 1);
	assert_int_equal(counter(s.t, "ah_new"), 1);	/* one client, one AH */
	server_stop(&s);
}

/*
 * NTS over ib: NTS protects the payload, whatever the path.  The client's
 * cookies come from the server's own keys (NTS-KE is TCP through the
 * kernel, tested in tests/cli/nts.t); each request carries its NTS fields
 * over the fabric, the server checks them and answers sealed, and the
 * client accepts only the authentic reply; a tampered request is dropped.
 */
static void test_nts(void **state)
{
	static const struct nts_keys keys = {
		.c2s = "0123456789abcdef0123456789abcde",
		.s2c = "fedcba9876543210fedcba987654321",
	};
	static struct nts_ke_msg m;
	unsigned char req[2048], buf[4096];
	struct nts_client *nc = nts_client_new();
	struct server s;
	struct client c;
	char err[256];
	int i, ok = 0;

	server_start(&s);
	s.nts = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err));
	assert_non_null(s.nts);
	nts_ke_msg_init(&m);
	/* A full jar: no placeholders, so that a request (228 bytes) fits
	   the mock's 256-byte send slots. */
	for (i = 0; i < NTS_COOKIES_MAX; i++) {
		assert_int_equal(nts_server_cookie(s.nts, &keys, m.cookie[i]), 0);
		m.cookie_len[i] = NTS_SERVER_COOKIE_LEN;
	}
	m.ncookies = NTS_COOKIES_MAX;
	assert_int_equal(nts_client_set(nc, &keys, &m, err, sizeof(err)), 0);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	for (i = 0; i < 3; i++) {
		size_t len = NTP_HEADER_LEN;
		uint64_t nonce = htobe64(++c.seq);
		int64_t deadline;

		memset(req, 0, NTP_HEADER_LEN);
		req[0] = 0xe3;
		memcpy(req + 40, &nonce, 8);
		assert_int_equal(nts_client_request(nc, req, sizeof(req), &len), 0);
		if (i == 2)
			req[len - 1] ^= 1;	/* the last one tampered with */
		assert_int_equal(dg_send(c.t, req, len, NULL, c.clk, 0, &c.t1), 0);
		deadline = clock_monotonic_ns() + WAIT_NS;
		if (i == 2) {
			/* Settled once the server dropped it: whatever it
			   answered is queued by then, nothing needs waiting. */
			wait_count(&s, &s.nts_dropped, 1, "dropped");
			deadline = clock_monotonic_ns();
		}
		for (;;) {
			const char *why;
			size_t covered;
			ssize_t n = dg_recv_wait(c.t, buf, sizeof(buf), NULL, c.clk, &c.t4,
							deadline, TRANSPORT_POLL_BLOCK);

			if (n == -ETIMEDOUT)
				break;
			if (n >= NTP_HEADER_LEN && memcmp(buf + 24, &nonce, 8) == 0) {
				assert_int_equal(nts_client_reply(nc, buf, (size_t)n, &covered, &why), NTS_REPLY_OK);
				ok++;
				break;
			}
		}
	}
	/* Two authentic replies, each with the cookie that replaces the one
	   spent; the tampered request spent one for nothing. */
	assert_int_equal(ok, 2);
	assert_int_equal(nts_client_cookies(nc), NTS_COOKIES_MAX - 1);
	wait_received(&s, 3);
	client_close(&c);
	server_halt(&s);
	assert_int_equal(s.answered, 2);
	assert_int_equal(s.nts_dropped, 1);
	nts_server_free(s.nts);
	nts_client_free(nc);
	server_stop(&s);
}

/* TRANSPORT_STAMP_XMT: T1 is in the packet the server received. */
static void test_stamp_xmt(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, want[8];
	struct server s;
	struct client c;
	uint64_t ts;
	int64_t t1;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk,
					TRANSPORT_STAMP_XMT, &t1), 0);
	ts = ntp_ts_from_ns(t1);
	for (i = 7; i >= 0; i--, ts >>= 8)
		want[i] = (unsigned char)ts;
	assert_memory_equal(req + 40, want, 8);		/* the caller's copy */
	wait_answered(&s, 1);
	server_halt(&s);
	assert_memory_equal(s.last_req + 40, want, 8);	/* what went on the wire */
	client_close(&c);
	server_stop(&s);
}

/* The study's defect: the server restarts with a new QPN. */
static void test_server_restart(void **state)
{
	struct server s;
	struct client c;
	uint32_t old;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	old = s.qpn;
	server_stop(&s);
	server_start(&s);
	assert_int_not_equal(s.qpn, old);
	/* The stale address gets nothing, exactly miss-limit times... */
	for (i = 0; i < PEER_MISS_LIMIT_DEFAULT; i++)
		assert_int_equal(exchange_dropped(&c), 0);
	assert_int_equal(transport_peer_reset(c.t), 0);
	/* ...then the next request finds the new server (behind the sends). */
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	assert_int_equal(transport_peer_reset(c.t), 0);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(counter(c.t, "losses"), 1);
	assert_int_equal(counter(c.t, "resolutions"), 2);
	assert_int_equal(counter(c.t, "resets"), 1);
	client_close(&c);
	server_stop(&s);
}

/* A restarted server that got the same QPN: only the epoch tells. */
static void test_epoch_change(void **state)
{
	struct server s;
	struct client c;
	uint32_t old;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	old = s.qpn;
	server_stop(&s);
	force_qpn = old;
	server_start(&s);
	assert_int_equal(s.qpn, old);
	/* Answered, but by another instance: dropped, and found again. */
	assert_int_equal(exchange_lost(&c, &s, &s.answered, 1), 0);
	assert_int_equal(counter(c.t, "epoch"), 1);
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	assert_int_equal(counter(c.t, "resolutions"), 2);
	client_close(&c);
	server_stop(&s);
}

/* Requests faster than replies (loadgen --ntp): no false loss. */
static void test_request_flood(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[256];
	struct server s;
	struct client c;
	int64_t t, deadline;
	int i, got = 0;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	for (i = 0; i < 50; i++)
		assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	deadline = clock_monotonic_ns() + WAIT_NS;
	while (got < 50 && dg_recv_wait(c.t, buf, sizeof(buf), NULL, c.clk, &t, deadline,
					       TRANSPORT_POLL_BLOCK) > 0)
		got++;
	assert_int_equal(got, 50);
	assert_int_equal(counter(c.t, "losses"), 0);
	assert_int_equal(counter(c.t, "resolutions"), 1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	client_close(&c);
	server_stop(&s);
}

/*
 * transport_fd()'s promise, as a caller that polls before it receives
 * relies on it: whenever a datagram waits, the fd is readable.  Five
 * replies queue up at once; each must be announced by the fd.
 */
static void test_fd_contract(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[256];
	struct server s;
	struct client c;
	int64_t t;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	for (i = 0; i < 5; i++)
		assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	wait_answered(&s, 5);
	for (i = 0; i < 5; i++) {
		struct pollfd pfd = { .fd = transport_fd(c.t), .events = POLLIN };
		ssize_t n = -EAGAIN;

		/* A readable fd may still yield -EAGAIN (an event to consume),
		   but never sleeps through a datagram that is there. */
		while (n == -EAGAIN) {
			if (poll(&pfd, 1, 1000) != 1)
				fail_msg("reply %d waits but the fd is not readable", i + 1);
			n = dg_recv(c.t, buf, sizeof(buf), NULL, c.clk, &t);
		}
		assert_int_equal(n, NTP_HEADER_LEN);
	}
	client_close(&c);
	server_stop(&s);
}

/* No server yet: refused, like UDP, until one listens. */
static void test_server_absent(void **state)
{
	struct server s;
	struct client c;

	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), -ECONNREFUSED);
	server_start(&s);
	/* Resolution retries on the backoff, until one finds the server. */
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_true(counter(c.t, "resolve_failures") >= 1);
	client_close(&c);
	server_stop(&s);
}

/* Injects @n datagrams (NTP mode @mode) into @qpn as if they had arrived. */
static void inject(uint32_t qpn, int n, const struct ibv_wc *tmpl, int mode)
{
	unsigned char pkt[NTP_HEADER_LEN] = { (unsigned char)(0x20 | mode) };
	struct fqp *q;
	int i;

	pthread_mutex_lock(&fab);
	q = fab_qp(qpn);
	assert_non_null(q);
	for (i = 0; i < n; i++)
		deliver(q, tmpl, NULL, 0, pkt, sizeof(pkt));
	pthread_mutex_unlock(&fab);
}

static void test_bad_input(void **state)
{
	struct server s;
	struct client c;
	uint32_t cqpn;
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	pthread_mutex_lock(&fab);
	cqpn = fab_qp_on(1)->qp.qp_num;
	pthread_mutex_unlock(&fab);

	/*
	 * 200 in all, three times the receive pool: each buffer must be
	 * posted again after its datagram is dropped.
	 */
	wc.src_qp = s.qpn;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.byte_len = IB_GRH_LEN + 20;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* short */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	wc.byte_len = 0;
	wc.wc_flags = 0;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* no epoch */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BUSY), 1);
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.src_qp = 0xdead;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* stray */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	wc.src_qp = s.qpn;
	wc.opcode = IBV_WC_SEND;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* opcode */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	wc.opcode = IBV_WC_RECV;
	wc.imm_data = htobe32(0x5eed);
	wc.status = IBV_WC_LOC_LEN_ERR;
	inject(cqpn, 40, &wc, NTP_MODE_SERVER);					/* error status */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);

	assert_int_equal(counter(c.t, "short"), 40);
	assert_int_equal(counter(c.t, "no_imm"), 40);
	assert_int_equal(counter(c.t, "stray"), 40);
	assert_int_equal(counter(c.t, "opcode"), 40);
	assert_int_equal(counter(c.t, "wc_error"), 40);
	assert_int_equal(counter(c.t, "losses"), 0);	/* none of it was a loss */
	assert_int_equal(transport_peer_reset(c.t), 0);

	/* A server drops requests that carry immediate data. */
	wc.status = IBV_WC_SUCCESS;
	wc.src_qp = cqpn;
	server_halt(&s);
	inject(s.qpn, 3, &wc, NTP_MODE_CLIENT);
	s.stop = 0;
	assert_int_equal(pthread_create(&s.th, NULL, server_main, &s), 0);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	server_halt(&s);
	assert_int_equal(counter(s.t, "imm"), 3);
	client_close(&c);
	server_stop(&s);
}

/* A wrong QKey: the HCA drops the datagram; nobody answers. */
static void test_wrong_qkey(void **state)
{
	struct server s;
	struct client c;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123?qkey=0x1");
	for (i = 0; i < 2; i++)
		assert_int_equal(exchange_dropped(&c), 0);
	server_halt(&s);
	assert_int_equal(s.answered, 0);
	client_close(&c);
	server_stop(&s);
}

/* Port down, then up: dropped at once, found again at once. */
/*
 * Issue 35 (3): the client's device goes away (DEVICE_FATAL: a firmware
 * reset, a health recovery, a rebind).  A client waiting for a reply is
 * woken by the async event and told ENODEV at once, not after its
 * deadline, and so is every send after: the tools end with one line.
 */
static void test_device_fatal(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[512];
	struct ibv_async_event ev = { .event_type = IBV_EVENT_DEVICE_FATAL };
	struct server s;
	struct client c;
	int64_t t, start;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	server_halt(&s);
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	pthread_mutex_lock(&fab);
	fab_event(&devs[fab_client_dev], &ev);
	pthread_mutex_unlock(&fab);
	start = clock_monotonic_ns();
	assert_int_equal(dg_recv_wait(c.t, buf, sizeof(buf), NULL, c.clk, &t,
					     start + WAIT_NS, TRANSPORT_POLL_BLOCK), -ENODEV);
	assert_true(clock_monotonic_ns() - start < WAIT_NS);
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), -ENODEV);
	client_close(&c);
	transport_close(s.t);
	clock_close(s.clk);
}

static void test_port_flap(void **state)
{
	struct server s;
	struct client c;
	int rc;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	fab_async(1, 1, IBV_EVENT_PORT_ERR, 1);
	/* Told at once, not after a miss run: no route while it is down. */
	rc = exchange(&c, TRANSPORT_POLL_BLOCK);
	assert_true(rc == -ENETUNREACH || rc == -EINPROGRESS);
	assert_int_equal(counter(c.t, "losses"), 1);
	assert_int_equal(exchange_until(&c, -ENETUNREACH), -ENETUNREACH);
	fab_async(1, 1, IBV_EVENT_PORT_ACTIVE, 0);
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	assert_int_equal(counter(c.t, "async"), 2);
	client_close(&c);
	server_stop(&s);
}

/* Many clients: the server's address handles stay at the bound. */
static void test_ah_cache_bounded(void **state)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };
	struct server s;
	int i;

	server_start(&s);
	for (i = 0; i < 100; i++) {
		wc.slid = (uint16_t)(100 + i);
		wc.src_qp = 0x7000 + (uint32_t)i;
		inject(s.qpn, 1, &wc, NTP_MODE_CLIENT);
		wait_answered(&s, i + 1);
	}
	server_halt(&s);
	assert_int_equal(counter(s.t, "ah_new"), 100);
	assert_int_equal(counter(s.t, "ah_evict"), 100 - 64);
	assert_true(ah_live <= 64);
	server_stop(&s);
}


/* ---- RoCE, and what the review of issue 15 found ----------------- */

static struct fqp *qp_of(uint32_t qpn)
{
	struct fqp *q;

	pthread_mutex_lock(&fab);
	q = fab_qp(qpn);
	pthread_mutex_unlock(&fab);
	assert_non_null(q);
	return q;
}

static int gid_eq(const union ibv_gid *g, const char *ip6)
{
	union ibv_gid want;

	assert_int_equal(inet_pton(AF_INET6, ip6, want.raw), 1);
	return memcmp(g, &want, sizeof(want)) == 0;
}

/* RoCE: SIDR gives a global address; replies come as RoCE v2 over IPv4. */
static void test_roce_exchange(void **state)
{
	struct server s;
	struct client c;

	fab_link(1);
	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BUSY), 1);
	assert_int_equal(qp_of(c.qpn)->rx_type, IBV_GID_TYPE_ROCE_V2);
	assert_true(gid_eq(&qp_of(c.qpn)->rx_sgid, "::ffff:10.9.0.1"));
	assert_int_equal(qp_of(s.qpn)->rx_type, IBV_GID_TYPE_ROCE_V2);
	client_close(&c);
	server_halt(&s);
	assert_int_equal(counter(s.t, "ah_new"), 1);
	server_stop(&s);
}

/*
 * RoCE v2 over IPv6: a request from a client's link-local GID is answered
 * from the server's link-local RoCE v2 GID, with an IPv6 header.
 */
static void test_roce_v2_ipv6(void **state)
{
	unsigned char pkt[NTP_HEADER_LEN] = { 0x23 }, hdr[IB_GRH_LEN];
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			     .wc_flags = IBV_WC_GRH };
	struct server s;
	struct client c;
	struct fqp *q;

	fab_link(1);
	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");	/* a QP to answer to */
	pthread_mutex_lock(&fab);
	assert_int_equal(devs[1].gid[1].type, IBV_GID_TYPE_ROCE_V2);	/* fe80::2 */
	assert_int_equal(fab_header(hdr, IBV_GID_TYPE_ROCE_V2, &devs[1].gid[1].gid,
				    &devs[0].gid[1].gid, sizeof(pkt), 255, 0), 0);
	wc.src_qp = c.qpn;
	q = fab_qp(s.qpn);
	deliver(q, &wc, hdr, 0, pkt, sizeof(pkt));
	pthread_mutex_unlock(&fab);
	wait_answered(&s, 1);
	server_halt(&s);
	q = qp_of(c.qpn);
	assert_int_equal(q->rx_type, IBV_GID_TYPE_ROCE_V2);
	assert_true(gid_eq(&q->rx_sgid, "fe80::1"));
	assert_true(gid_eq(&q->rx_dgid, "fe80::2"));
	assert_int_equal(counter(s.t, "ah_new"), 1);
	client_close(&c);
	server_stop(&s);
}

/*
 * A datagram longer than the receive buffer completes in error
 * (IBV_WC_LOC_LEN_ERR), as on an HCA: counted, and the buffer goes back.
 */
static void test_oversized(void **state)
{
	static unsigned char big[IB_GRH_LEN + 4096];
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			     .wc_flags = IBV_WC_WITH_IMM };
	struct server s;
	struct client c;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	wc.src_qp = s.qpn;
	big[0] = 0x24;
	pthread_mutex_lock(&fab);
	for (i = 0; i < 40; i++)
		deliver(fab_qp(c.qpn), &wc, NULL, 0, big, 2048 + 1);
	pthread_mutex_unlock(&fab);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(counter(c.t, "wc_error"), 40);
	for (i = 0; i < 3; i++)			/* the pool went back whole */
		assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(qp_of(c.qpn)->rn, 64);
	client_close(&c);
	server_stop(&s);
}

/*
 * Issue 15 (2): RoCE v2 over IPv4 leaves the first 20 bytes of the GRH
 * area unwritten; what they hold may start with a 6.  Two clients on two
 * hosts must still get their own replies.
 */
static void test_roce_v4_stale_bytes(void **state)
{
	struct server s;
	struct client a, b;

	fab_link(1);
	fab_garbage = 0x60;		/* as a stale IPv6 header would leave them */
	server_start(&s);
	fab_client_dev = 1;
	client_open(&a, "ib://" SERVER_ADDR ":123");
	fab_client_dev = 2;
	client_open(&b, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&b, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	assert_true(gid_eq(&qp_of(b.qpn)->rx_dgid, "::ffff:10.9.0.3"));
	client_close(&a);
	client_close(&b);
	server_halt(&s);
	assert_int_equal(counter(s.t, "ah_new"), 2);
	server_stop(&s);
}

/*
 * Issue 15 (3): a RoCE v1 and a RoCE v2 client on one IP address are two
 * destinations; each gets its replies in the type it asked with.
 */
static void test_roce_v1_v2_one_ip(void **state)
{
	struct server s;
	struct client v1, v2;

	fab_link(1);
	server_start(&s);
	client_open(&v1, "ib://" SERVER_ADDR ":123?gid=2");	/* ::ffff:10.9.0.2, v1 */
	client_open(&v2, "ib://" SERVER_ADDR ":123?gid=3");	/* the same GID, v2 */
	assert_int_equal(exchange(&v1, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(qp_of(v1.qpn)->rx_type, IBV_GID_TYPE_ROCE_V1);
	assert_int_equal(exchange(&v2, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(qp_of(v2.qpn)->rx_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(exchange(&v1, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(qp_of(v1.qpn)->rx_type, IBV_GID_TYPE_ROCE_V1);
	client_close(&v1);
	client_close(&v2);
	server_halt(&s);
	assert_int_equal(counter(s.t, "ah_new"), 2);
	server_stop(&s);
}

/*
 * Issue 15 (3): one client host asking two of the server's addresses is
 * answered from each address it asked (the local destination GID picks
 * the source GID, as ibv_init_ah_from_wc derives it).
 */
static void test_local_dest_gid(void **state)
{
	struct server s;
	struct client a, b;

	fab_link(1);
	server_start_url(&s, "ib://*:123?dev=fake0");
	client_open(&a, "ib://10.9.0.1:123");
	client_open(&b, "ib://10.9.0.11:123");
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	assert_true(gid_eq(&qp_of(a.qpn)->rx_sgid, "::ffff:10.9.0.1"));
	assert_int_equal(exchange(&b, TRANSPORT_POLL_BLOCK), 1);
	assert_true(gid_eq(&qp_of(b.qpn)->rx_sgid, "::ffff:10.9.0.11"));
	client_close(&a);
	client_close(&b);
	server_stop(&s);
}

/*
 * Issue 15 (4), the server: with a provider that finds the address
 * handle when it transmits (rxe), evicting a handle whose reply still
 * waits in the send queue must not break that reply.
 */
static void test_ah_evict_in_flight(void **state)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV };
	struct server s;
	int i;

	fab_ah_by_ref = 1;
	server_start(&s);
	for (i = 0; i < 64; i++) {		/* a full cache, every reply gone */
		wc.slid = (uint16_t)(100 + i);
		wc.src_qp = 0x7000 + (uint32_t)i;
		inject(s.qpn, 1, &wc, NTP_MODE_CLIENT);
		wait_answered(&s, i + 1);
	}
	pthread_mutex_lock(&fab);
	fab_hold = 1;				/* now the send queue backs up */
	pthread_mutex_unlock(&fab);
	for (i = 0; i < 64; i++) {
		wc.slid = (uint16_t)(200 + i);
		wc.src_qp = 0x8000 + (uint32_t)i;
		inject(s.qpn, 1, &wc, NTP_MODE_CLIENT);
		wait_received(&s, 64 + i + 1);
	}
	/* One more client: its handle evicts one whose reply is queued. */
	wc.slid = 300;
	wc.src_qp = 0x9000;
	inject(s.qpn, 1, &wc, NTP_MODE_CLIENT);
	wait_received(&s, 129);
	fab_release();
	wc.slid = 301;				/* the server reaps and goes on */
	inject(s.qpn, 1, &wc, NTP_MODE_CLIENT);
	wait_received(&s, 130);
	server_halt(&s);
	assert_int_equal(fab_stale, 0);
	assert_int_equal(counter(s.t, "send_err"), 0);
	assert_true(ah_live <= 64 + 1);
	server_stop(&s);
}

/* Issue 15 (4), the client: the handle goes (port down) with a request queued. */
/*
 * Issue 35 (7), over ib: a UD send that fails on its own (not a flush)
 * leaves the send queue in SQE.  Receives go on and every later send is
 * flushed, so the client would time out forever; the reaping of that
 * completion brings the QP back to RTS and the next exchange is answered.
 */
static void test_send_queue_error(void **state)
{
	struct server s;
	struct client c;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	pthread_mutex_lock(&fab);
	fab_send_fail = 1;
	pthread_mutex_unlock(&fab);
	assert_int_equal(exchange_dropped(&c), 0);	/* its request failed */
	assert_int_equal(exchange_until(&c, 1), 1);	/* flushed for ever without */
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(qp_of(c.qpn)->qp.state, IBV_QPS_RTS);
	assert_int_equal(counter(c.t, "send_err"), 1);
	client_close(&c);
	server_stop(&s);
}

static void test_ah_drop_in_flight(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 };
	struct server s;
	struct client c;
	int64_t t;

	fab_ah_by_ref = 1;
	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	server_halt(&s);
	pthread_mutex_lock(&fab);
	fab_hold = 1;
	pthread_mutex_unlock(&fab);
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	fab_async(1, 1, IBV_EVENT_PORT_ERR, 1);
	assert_true(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t) < 0);
	fab_release();
	assert_int_equal(fab_stale, 0);
	fab_async(1, 1, IBV_EVENT_PORT_ACTIVE, 0);
	server_resume(&s);
	assert_int_equal(exchange_until(&c, 1), 1);
	client_close(&c);
	server_stop(&s);
}

/*
 * Issue 15 (5): a wildcard server reached over an IPoIB child partition
 * (P_Key index 1) answers in that partition; the default one still works.
 */
static void test_wildcard_partition(void **state)
{
	struct server s;
	struct client a, b;

	server_start_url(&s, "ib://*:123?dev=fake0");
	client_open(&a, "ib://10.9.0.21:123");
	client_open(&b, "ib://10.9.0.1:123");
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&b, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	client_close(&a);
	client_close(&b);
	server_stop(&s);
}

/*
 * Issue 22 (3): a wildcard server on a dual-port HCA (mlx4, Connect-IB)
 * serves both ports: a QP on each, SIDR requests arriving on port 2
 * accepted, and the replies leave by port 2.
 */
static void test_wildcard_dual_port(void **state)
{
	struct server s;
	struct client a, b;

	server_start_url(&s, "ib://*:123?dev=fake0");
	client_open(&a, "ib://10.9.0.1:123");
	client_open(&b, "ib://10.9.0.12:123");
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange_until(&b, 1), 1);
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&b, TRANSPORT_POLL_BLOCK), 1);
	client_close(&a);
	client_close(&b);
	server_halt(&s);
	assert_int_equal(counter(s.t, "sidr_reject"), 0);
	assert_int_equal(counter(s.t, "sidr_accept"), 2);
	server_stop(&s);
	/* port=1 keeps it to port 1: port 2's requests are refused */
	server_start_url(&s, "ib://*:123?dev=fake0&port=1");
	client_open(&b, "ib://10.9.0.12:123");
	assert_true(exchange(&b, TRANSPORT_POLL_BLOCK) <= 0);
	client_close(&b);
	server_halt(&s);
	assert_true(counter(s.t, "sidr_reject") >= 1);
	server_stop(&s);
}

/*
 * Issue 35: each port of a ConnectX-4 or later is a device of its own
 * (fake0 and fake3 here, two ports of the server's card), beside the
 * clients' fake1 and fake2.  A wildcard server without dev= refused to
 * open on a host with several devices; it serves every device, each
 * request answered from the device it came in on.
 */
static void test_wildcard_two_devices(void **state)
{
	struct server s;
	struct client a, b;

	pthread_mutex_lock(&fab);
	ndevs = NDEV;
	pthread_mutex_unlock(&fab);
	server_start_url(&s, "ib://*:123");
	client_open(&a, "ib://10.9.0.1:123");
	client_open(&b, "ib://10.9.0.4:123");
	assert_int_equal(exchange_until(&a, 1), 1);
	assert_int_equal(exchange_until(&b, 1), 1);
	assert_int_equal(exchange_until(&a, 1), 1);
	assert_int_equal(exchange_until(&b, 1), 1);
	/* b's server is on fake3: its QP took b's requests, a's went to fake0 */
	pthread_mutex_lock(&fab);
	assert_true(fab_qp_on(3)->rx_n >= 2);
	pthread_mutex_unlock(&fab);
	client_close(&a);
	client_close(&b);
	server_halt(&s);
	assert_int_equal(counter(s.t, "sidr_accept"), 2);
	assert_int_equal(counter(s.t, "sidr_reject"), 0);
	transport_close(s.t);
	clock_close(s.clk);
}

/* The server's QP on fake0's port 2. */
static struct fqp *server_port2_qp(void)
{
	struct fqp *q;

	pthread_mutex_lock(&fab);
	for (q = qps; q && !(q->dev == &devs[0] && q->port == 2); q = q->next)
		;
	pthread_mutex_unlock(&fab);
	assert_non_null(q);
	return q;
}

/*
 * Issue 35: a wildcard server's ports may differ in MTU.  Port 2's
 * receive buffers hold what its MTU lets in (they were sized from port
 * 1's: a datagram longer than a buffer errors the receive), and a reply
 * there is bounded by port 2's MTU, not port 1's.
 */
static void test_wildcard_port_mtu(void **state)
{
	static unsigned char big[3000] = { 0x23 }, reply[300];
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .slid = 7,
			     .src_qp = 0x7007 };
	struct transport_addr from;
	struct server s;
	struct fqp *q2;
	int64_t t;
	int n;

	devs[0].mtu[2] = IBV_MTU_4096;
	server_start_url(&s, "ib://*:123?dev=fake0");
	n = __atomic_load_n(&s.received, __ATOMIC_SEQ_CST);
	q2 = server_port2_qp();
	pthread_mutex_lock(&fab);
	deliver(q2, &wc, NULL, 0, big, sizeof(big));
	pthread_mutex_unlock(&fab);
	wait_received(&s, n + 1);
	server_halt(&s);
	assert_int_equal(counter(s.t, "wc_error"), 0);
	transport_close(s.t);
	clock_close(s.clk);

	devs[0].mtu[2] = IBV_MTU_256;
	server_start_url(&s, "ib://*:123?dev=fake0");
	server_halt(&s);
	q2 = server_port2_qp();
	pthread_mutex_lock(&fab);
	deliver(q2, &wc, NULL, 0, big, NTP_HEADER_LEN);
	pthread_mutex_unlock(&fab);
	assert_int_equal(dg_recv_wait(s.t, reply, sizeof(reply), &from, s.clk, &t,
					     clock_monotonic_ns() + WAIT_NS,
					     TRANSPORT_POLL_BLOCK), NTP_HEADER_LEN);
	assert_int_equal(dg_send(s.t, reply, 256, &from, s.clk, 0, &t), 0);
	assert_int_equal(dg_send(s.t, reply, 257, &from, s.clk, 0, &t), -EMSGSIZE);
	transport_close(s.t);
	clock_close(s.clk);
}

/*
 * Issue 15 (8): the GID table changes with any address change on the
 * interface.  An unrelated one costs nothing; the client's own GID
 * moving is a loss, found again.
 */
/*
 * Issue 35: a wildcard server's QPs (a port each here) share one send CQ,
 * and completions come back in any order across them.  A reply held on
 * port 2's QP keeps its slot while port 1's replies come and go: with a
 * ring of slots the 64th send took that slot again, its buffer, handle
 * and stamp tag, while the first was still in flight.  Slots are keyed by
 * wr_id and taken back as each completes.
 */
static void test_wildcard_send_slots(void **state)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .slid = 7,
			     .src_qp = 0x7007 };
	struct server s;
	struct client b;
	struct fqp *q2;
	int i, n;

	server_start_url(&s, "ib://*:123?dev=fake0");
	client_open(&b, "ib://10.9.0.12:123");		/* port 2: a QP there */
	assert_int_equal(exchange_until(&b, 1), 1);
	pthread_mutex_lock(&fab);
	fab_hold = 1;
	pthread_mutex_unlock(&fab);
	pthread_mutex_lock(&fab);
	for (q2 = qps; q2 && !(q2->dev == &devs[0] && q2->port == 2); q2 = q2->next)
		;
	pthread_mutex_unlock(&fab);
	assert_non_null(q2);
	n = __atomic_load_n(&s.answered, __ATOMIC_SEQ_CST);
	inject(q2->qp.qp_num, 1, &wc, NTP_MODE_CLIENT);
	wait_answered(&s, ++n);				/* held on port 2's QP */
	for (i = 0; i < 100; i++) {			/* port 1's, each completed */
		inject(s.qpn, 1, &wc, NTP_MODE_CLIENT);
		wait_answered(&s, ++n);
		fab_release_qp(s.qpn);
	}
	fab_release();
	server_halt(&s);
	assert_int_equal(fab_dup_wr, 0);
	assert_int_equal(counter(s.t, "send_err"), 0);
	client_close(&b);
	server_stop(&s);
}

static void test_gid_change(void **state)
{
	struct server s;
	struct client c;

	fab_link(1);
	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	fab_set_gid(1, 6, "2001:db8::99", IBV_GID_TYPE_ROCE_V1);	/* a temporary address */
	fab_set_gid(1, 7, "2001:db8::99", IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(counter(c.t, "losses"), 0);
	assert_int_equal(transport_peer_reset(c.t), 0);
	/* The client's own address moves to another index. */
	fab_set_gid(1, 3, "fe80::77", IBV_GID_TYPE_ROCE_V2);
	fab_set_gid(1, 7, "::ffff:10.9.0.2", IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(counter(c.t, "losses"), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	client_close(&c);
	server_stop(&s);
}

/*
 * Issue 15 (9): async events name their element.  Two clients share the
 * device's context; one's QP failing is not the other's, whichever reads
 * the event.  Port events carry their port: port 2 is not ours.
 */
static void test_async_element(void **state)
{
	struct server s;
	struct client a, b;

	server_start(&s);
	client_open(&a, "ib://" SERVER_ADDR ":123");
	client_open(&b, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(exchange(&b, TRANSPORT_POLL_BLOCK), 1);
	fab_async(1, 2, IBV_EVENT_PORT_ERR, 1);
	fab_qp_error(a.qpn);
	assert_int_equal(exchange(&b, TRANSPORT_POLL_BLOCK), 1);	/* b reads both */
	assert_int_equal(exchange(&b, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(counter(b.t, "losses"), 0);
	assert_int_equal(counter(b.t, "qp_rebuilds"), 0);
	assert_int_equal(exchange(&a, TRANSPORT_POLL_BLOCK), 1);	/* a's rebuilt */
	assert_int_equal(counter(a.t, "qp_rebuilds"), 1);
	client_close(&a);
	client_close(&b);
	server_stop(&s);
}

/*
 * Issue 22 (4): a QP in the error state is rebuilt (RESET to RTS, the
 * receives posted again), counted, and the client's stream marked as a
 * restart; the server's QP too, with its clients none the wiser.
 */
static void test_qp_rebuild(void **state)
{
	struct server s;
	struct client c;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(transport_peer_reset(c.t), 0);
	fab_qp_error(c.qpn);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	assert_int_equal(qp_of(c.qpn)->qp.state, IBV_QPS_RTS);
	assert_int_equal(counter(c.t, "qp_rebuilds"), 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	assert_int_equal(transport_peer_reset(c.t), 0);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	/* the server's QP: rebuilt when its thread next receives */
	fab_qp_error(s.qpn);
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	client_close(&c);
	server_halt(&s);
	assert_int_equal(counter(s.t, "qp_rebuilds"), 1);
	server_stop(&s);
}

/*
 * Issue 15 (10): busy polling polls the CQ and nothing else: no read of
 * the completion channel while it spins.
 */
static void test_busy_polls_cq_only(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[256];
	struct server s;
	struct client c;
	int64_t t;
	int reads;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	server_halt(&s);
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	reads = __atomic_load_n(&mock_chan_reads, __ATOMIC_SEQ_CST);
	assert_int_equal(dg_recv_wait(c.t, buf, sizeof(buf), NULL, c.clk, &t,
					     clock_monotonic_ns() + 5 * NTPX_NS_PER_MS,
					     TRANSPORT_POLL_BUSY), -ETIMEDOUT);
	assert_int_equal(__atomic_load_n(&mock_chan_reads, __ATOMIC_SEQ_CST), reads);
	server_resume(&s);
	/* The reply that comes now is found spinning, and then blocking. */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BUSY), 1);
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	client_close(&c);
	server_stop(&s);
}

/*
 * Issue 15 (11): waiting blocked, an rdma_cm or async event is taken in
 * when its fd is readable, not spun on until the next periodic check.
 */
static void test_block_takes_events(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[256];
	struct server s;
	struct client c;
	struct fid *f;
	int64_t t;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	server_halt(&s);
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, 0, &t), 0);
	pthread_mutex_lock(&fab);
	for (f = ids; f && !(f->id.verbs == &devs[1].vctx.context && f->state == FID_DONE); f = f->next)
		;
	assert_non_null(f);
	cm_event(f, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);	/* nothing to act on */
	fab_idle_polls = 0;
	pthread_mutex_unlock(&fab);
	fab_async(1, 2, IBV_EVENT_SM_CHANGE, 0);	/* another port's */
	assert_int_equal(dg_recv_wait(c.t, buf, sizeof(buf), NULL, c.clk, &t,
					     clock_monotonic_ns() + 20 * NTPX_NS_PER_MS,
					     TRANSPORT_POLL_BLOCK), -ETIMEDOUT);
	assert_int_equal(cm_pending, 0);
	assert_int_equal(devs[1].an, 0);
	/*
	 * An empty look, then one more after arming, before the events are
	 * seen; then sleep.  Not a spin until a periodic check.
	 */
	if (fab_idle_polls > 2)
		fail_msg("%d empty looks at the CQ while events waited", fab_idle_polls);
	client_close(&c);
	server_stop(&s);
}

/*
 * Issue 15 (12): a lost SIDR reply does not hold the send that finds the
 * server gone: it returns at once, and the resolution goes on behind,
 * retried, until the server answers.
 */
static void test_sidr_reply_lost(void **state)
{
	struct server s;
	struct client c;
	int i;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), 1);
	server_stop(&s);
	server_start(&s);
	fab_sidr_drop = 1;
	for (i = 0; i < PEER_MISS_LIMIT_DEFAULT; i++)
		assert_int_equal(exchange_dropped(&c), 0);
	/* The old code waited here for a second, then said ETIMEDOUT. */
	assert_int_equal(exchange(&c, TRANSPORT_POLL_BLOCK), -EINPROGRESS);
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(fab_sidr_drop, 0);
	assert_int_equal(counter(c.t, "resolutions"), 2);
	assert_true(counter(c.t, "sidr_retries") >= 1);
	assert_int_equal(transport_peer_reset(c.t), 1);
	client_close(&c);
	server_stop(&s);
}

static void test_no_device(void **state)
{
	struct client c;
	char err[256];

	assert_null(client_open_url(&c, "ib://" SERVER_ADDR ":123?dev=fake7", err, sizeof(err)));
	assert_string_equal(err, "ib://" SERVER_ADDR ":123?dev=fake7: no RDMA device "
			    "(asked for fake7, found fake0, fake1, fake2)");
	clock_close(c.clk);
	ndevs = 0;
	assert_null(client_open_url(&c, "ib://" SERVER_ADDR ":123", err, sizeof(err)));
	assert_string_equal(err, "ib://" SERVER_ADDR ":123: no RDMA device "
			    "(asked for any, found none)");
	clock_close(c.clk);
}

static void test_no_route(void **state)
{
	struct client c;
	char err[256];

	assert_null(client_open_url(&c, "ib://10.9.9.9:123", err, sizeof(err)));
	assert_non_null(strstr(err, "cannot resolve a route to 10.9.9.9"));
	clock_close(c.clk);
	/* The route leaves by fake1: asking for fake0 is refused clearly. */
	assert_null(client_open_url(&c, "ib://" SERVER_ADDR ":123?dev=fake0", err, sizeof(err)));
	assert_non_null(strstr(err, "leaves by fake1, not by dev=fake0"));
	clock_close(c.clk);
}

/* An argument runs only the tests it matches (cmocka's filter: test_gid*). */
/*
 * Completion stamps (lib/verbs_stamp.h): the client's send and receive
 * completions give t1h and t4h, each the moment the mock HCA queued the
 * completion.  The conversion's error is at most half a bracket of two
 * clock readings around ibv_query_rt_values_ex, all within the exchange.
 */
static void hca_stamps(const char *src, const char *mode)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 }, buf[4096];
	struct transport_stamps tx, rx;
	struct mock_cq *scq, *rcq;
	struct server s;
	struct client c;
	char err[256], line[512];
	int64_t a, b, t1, t4;
	struct fqp *q;
	uint32_t id;
	ssize_t n;
	int l;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(transport_stamps_enable(c.t, err, sizeof(err)), 0);
	assert_string_equal(transport_stamp_source(c.t, 1, TRANSPORT_LAYER_H), src);
	assert_string_equal(transport_stamp_source(c.t, 0, TRANSPORT_LAYER_H), src);
	assert_null(transport_stamp_source(c.t, 1, TRANSPORT_LAYER_K));
	assert_int_equal(exchange_until(&c, 1), 1);	/* resolved */

	a = clock_realtime_ns();
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk,
					TRANSPORT_STAMP_SEND, &t1), 0);
	id = dg_tx.tx_id;
	do
		n = dg_recv_wait(c.t, buf, sizeof(buf), NULL, c.clk, &t4,
					clock_monotonic_ns() + WAIT_NS, TRANSPORT_POLL_BLOCK);
	while (n == -EINTR);
	assert_true(n >= NTP_HEADER_LEN);
	rx = dg_rx.rx;
	assert_int_equal(transport_tx_stamps(c.t, id, c.clk, &tx,
					     clock_monotonic_ns() + WAIT_NS), 1);
	b = clock_realtime_ns();

	pthread_mutex_lock(&fab);
	q = fab_qp(c.qpn);
	assert_non_null(q);
	scq = (struct mock_cq *)q->qp.send_cq;
	rcq = (struct mock_cq *)q->qp.recv_cq;
	assert_true(scq->ex && rcq->ex);
	if (llabs(tx.at[TRANSPORT_LAYER_H] - scq->last_true) > b - a ||
	    llabs(rx.at[TRANSPORT_LAYER_H] - rcq->last_true) > b - a)
		fail_msg("t1h %lld ns and t4h %lld ns from the truth, exchange %lld ns",
			 (long long)(tx.at[TRANSPORT_LAYER_H] - scq->last_true),
			 (long long)(rx.at[TRANSPORT_LAYER_H] - rcq->last_true),
			 (long long)(b - a));
	pthread_mutex_unlock(&fab);
	/* the HCA's send stamp after T1, its receive stamp before T4 */
	assert_true(tx.at[TRANSPORT_LAYER_H] > t1 - (b - a));
	assert_true(rx.at[TRANSPORT_LAYER_H] < t4 + (b - a));
	for (l = 0; l < TRANSPORT_LAYER_H; l++) {
		assert_true(tx.at[l] == TRANSPORT_NO_STAMP);
		assert_true(rx.at[l] == TRANSPORT_NO_STAMP);
	}
	transport_counters(c.t, line, sizeof(line));
	assert_non_null(strstr(line, mode));
	assert_int_equal(counter(c.t, "stamp_errors"), 0);
	/* A send that names only a layer the HCA does not stamp (t1k) goes
	   unstamped; one that names t1h is stamped. */
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, TRANSPORT_STAMP_SEND |
					TRANSPORT_STAMP_ONLY(1u << TRANSPORT_LAYER_K), &t1), 0);
	assert_int_equal(dg_tx.tx_id, 0);	/* no id: unstamped */
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk, TRANSPORT_STAMP_SEND |
					TRANSPORT_STAMP_ONLY(1u << TRANSPORT_LAYER_H), &t1), 0);
	assert_int_not_equal(dg_tx.tx_id, id);
	assert_int_equal(transport_tx_stamps(c.t, dg_tx.tx_id, c.clk, &tx,
					     clock_monotonic_ns() + WAIT_NS), 1);
	assert_true(tx.at[TRANSPORT_LAYER_H] != TRANSPORT_NO_STAMP);
	client_close(&c);
	server_stop(&s);
}

static void test_hca_stamps(void **state)
{
	fab_stamps_on();
	hca_stamps("verbs:cqe_ts+rt_values", " stamps=raw");
}

/*
 * Issue 22 (2): mlx5 in real-time mode gives the CQE's value, seconds
 * << 32 | ns, on its PHC: TAI under ptp4l (here CLOCK_REALTIME + 37 s).
 * Decoded and converted through the PHC, t1h and t4h are near the truth.
 * start_poll's EBUSY is transient: the receive goes on.
 */
static void test_hca_wallclock_stamps(void **state)
{
	fab_rt_on();
	mock_start_busy = 3;
	hca_stamps("verbs:cqe_wallclock+phc", " stamps=wallclock");
	assert_int_equal(mock_start_busy, 0);
	assert_true(mock_phc.calls_precise + mock_phc.calls_extended > 0);
}

/* A wall clock without a PHC to convert it: no stamps, and #stamps says so. */
static void test_hca_wallclock_no_phc(void **state)
{
	struct server s;
	struct client c;
	char err[256];
	int i;

	fab_rt_on();
	for (i = 0; i < NDEV; i++)
		devs[i].dev.ibdev_path[0] = 0;
	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(transport_stamps_enable(c.t, err, sizeof(err)), 0);
	assert_string_equal(transport_stamp_source(c.t, 1, TRANSPORT_LAYER_H),
			    "-:wallclock_without_phc");
	assert_int_equal(exchange_until(&c, 1), 1);
	client_close(&c);
	server_stop(&s);
}

/*
 * No extended verbs: plain CQs, no 'h' layer offered, '-' in the record.  As
 * libibverbs gives such a provider stand-ins that fail, the CQ says so.
 */
static void test_hca_no_stamps(void **state)
{
	unsigned char req[NTP_HEADER_LEN] = { 0xe3 };
	struct transport_stamps tx;
	struct server s;
	struct client c;
	char err[256], line[512];
	int64_t t1;

	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(transport_stamps_enable(c.t, err, sizeof(err)), 0);
	/* #stamps says why there are none */
	assert_string_equal(transport_stamp_source(c.t, 1, TRANSPORT_LAYER_H),
			    "-:cq_refused_stamps");
	assert_string_equal(transport_stamp_source(c.t, 0, TRANSPORT_LAYER_H),
			    "-:cq_refused_stamps");
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(dg_send(c.t, req, sizeof(req), NULL, c.clk,
					TRANSPORT_STAMP_SEND, &t1), 0);
	assert_int_equal(transport_tx_stamps(c.t, dg_tx.tx_id, c.clk, &tx, 0), 1);
	assert_true(tx.at[TRANSPORT_LAYER_H] == TRANSPORT_NO_STAMP);
	transport_counters(c.t, line, sizeof(line));
	assert_non_null(strstr(line, " stamps=none"));
	client_close(&c);
	server_stop(&s);
}

/*
 * Issue 22 (1): mlx5 in real-time mode.  The old probe asked for raw
 * stamps, the kernel refused the QP, and neither end could open.  Now
 * wall-clock stamps are asked for at once; and a QP refused for its
 * stamp format costs the stamps, never the transport.
 */
static void test_hca_realtime_opens(void **state)
{
	struct server s;
	struct client c;
	char err[256], line[512];
	int i;

	fab_rt_on();
	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(transport_stamps_enable(c.t, err, sizeof(err)), 0);
	transport_counters(c.t, line, sizeof(line));
	assert_non_null(strstr(line, " stamps=wallclock"));
	client_close(&c);
	server_stop(&s);
	/*
	 * A libmlx5 that does not say so (mlx5dv_query_device without the
	 * flag): raw asked for, the QP refused, a step down to wall clock.
	 */
	mock_mlx5_rt = 0;
	for (i = 0; i < NDEV; i++)	/* no PHC: raw asked for first */
		devs[i].dev.ibdev_path[0] = 0;
	server_start(&s);
	client_open(&c, "ib://" SERVER_ADDR ":123");
	assert_int_equal(exchange_until(&c, 1), 1);
	assert_int_equal(transport_stamps_enable(c.t, err, sizeof(err)), 0);
	transport_counters(c.t, line, sizeof(line));
	/* ... and wall clock without a PHC is no use: none, and why */
	assert_non_null(strstr(line, " stamps=none"));
	assert_string_equal(transport_stamp_source(c.t, 1, TRANSPORT_LAYER_H),
			    "-:wallclock_without_phc");
	client_close(&c);
	server_stop(&s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exchange, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamp_xmt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_epoch_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_contract, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_qkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_flap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_fatal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ah_cache_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roce_exchange, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roce_v2_ipv6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roce_v4_stale_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roce_v1_v2_one_ip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_dest_gid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ah_evict_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ah_drop_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_queue_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wildcard_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wildcard_dual_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wildcard_send_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wildcard_two_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wildcard_port_mtu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gid_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_async_element, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qp_rebuild, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_polls_cq_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_takes_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sidr_reply_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_route, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hca_stamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hca_no_stamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hca_realtime_opens, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hca_wallclock_stamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hca_wallclock_no_phc, setup, teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
