/* SPDX-License-Identifier: ISC */
/*
 * ib_qp.c - the ib transport's UD queue pairs: made and brought to RTS
 * (INIT takes the P_Key index, port and QKey), their receive buffers
 * posted, rebuilt in place after the error state, and a wildcard
 * server's QP for each port and IPoIB partition it is reached on, made
 * on first use (ib_cm.c asks, when a SIDR request comes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ib_qp_private.h"
#include "ntp.h"

uint32_t ib_port_mtu(struct ibv_context *ctx, uint8_t port, int largest)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, port, &pa))
		return 0;
	return 128u << (largest ? pa.max_mtu : pa.active_mtu);	/* IBV_MTU_256 is 1 */
}

int ib_post_recv(struct ib_qps *q, unsigned part, unsigned i)
{
	struct ib_part *pt = &q->part[part];
	struct ibv_sge sge = {
		.addr = (uintptr_t)(pt->mem + (size_t)i * q->slot),
		.length = (uint32_t)q->slot,
		.lkey = pt->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)part << 32 | i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(pt->qp, &wr, &bad);
}

/* @qp, in RESET, to RTS on @port in @pkey_index with @qkey.  0 or -1. */
static int ib_qp_ready(struct ibv_qp *qp, uint8_t port, uint16_t pkey_index, uint32_t qkey,
		       const char **step)
{
	struct ibv_qp_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.pkey_index = pkey_index;
	qa.port_num = port;
	qa.qkey = qkey;
	*step = "moving to INIT";
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	*step = "moving to RTR";
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE))
		return -1;
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 0;
	*step = "moving to RTS";
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	return 0;
}

/*
 * A UD QP on @port in P_Key index @pkey_index, in RTS: INIT takes the
 * P_Key index, port and QKey, RTR nothing, RTS the send PSN.
 */
struct ibv_qp *ib_qp_up(struct ib_qps *q, uint8_t port, uint16_t pkey_index,
			const char **step)
{
	struct ibv_qp_init_attr qia;
	struct ibv_qp *qp;

	memset(&qia, 0, sizeof(qia));
	qia.send_cq = q->scq->cq;
	qia.recv_cq = q->rcq->cq;
	qia.qp_type = IBV_QPT_UD;
	qia.sq_sig_all = 1;
	qia.cap.max_send_wr = q->nsend;
	qia.cap.max_recv_wr = q->nrecv;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	qia.cap.max_inline_data = q->part[0].qp ? q->max_inline : NTP_HEADER_LEN + 64;
	*step = "creating";
	qp = ibv_create_qp(q->pd, &qia);
	if (!qp && qia.cap.max_inline_data) {
		/* Some HCAs inline less; ask for none rather than fail. */
		qia.cap.max_inline_data = 0;
		qp = ibv_create_qp(q->pd, &qia);
	}
	if (!qp)
		return NULL;
	if (!q->part[0].qp)
		q->max_inline = qia.cap.max_inline_data;
	if (ib_qp_ready(qp, port, pkey_index, q->qkey, step) == 0)
		return qp;
	{
		int e = errno;

		ibv_destroy_qp(qp);
		errno = e;
	}
	return NULL;
}

/*
 * The QPs in the error state (a fatal QP event, flushed receives) are
 * rebuilt in place: RESET, then INIT, RTR, RTS as at the open (the QP
 * number stays, so a server's clients and a client's server still know
 * it), and their receives posted again.  The owner takes the flushed
 * completions first: the sends' its own way, the receives here (a
 * receive of a healthy QP met while draining is dropped and its buffer
 * posted again).
 */
int ib_qps_failed(struct ib_qps *q, int *bad)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int any = 0;
	unsigned p;

	for (p = 0; p < IB_PARTS; p++) {
		bad[p] = q->part[p].qp && ibv_query_qp(q->part[p].qp, &a, IBV_QP_STATE, &ia) == 0 &&
			 a.qp_state == IBV_QPS_ERR;
		any |= bad[p];
	}
	return any;
}

int ib_qps_drain(struct ib_qps *q, const int *bad)
{
	struct verbs_wc w;
	unsigned p;
	int rc = 0;

	while (verbs_cq_poll(q->rcq, &w, 1) > 0) {
		p = (unsigned)(w.wr_id >> 32);
		if (p < IB_PARTS && q->part[p].qp && !bad[p] &&
		    ib_post_recv(q, p, (unsigned)w.wr_id))
			rc = -EIO;
	}
	return rc;
}

int ib_qps_rebuild(struct ib_qps *q, const int *bad, uint64_t *rebuilt)
{
	struct ibv_qp_attr a;
	unsigned p, i;

	for (p = 0; p < IB_PARTS; p++) {
		const char *step;

		if (!bad[p])
			continue;
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RESET;
		if (ibv_modify_qp(q->part[p].qp, &a, IBV_QP_STATE) ||
		    ib_qp_ready(q->part[p].qp, q->part[p].port, q->part[p].pkey_index, q->qkey,
				&step))
			return -EIO;
		for (i = 0; i < q->nrecv; i++)
			if (ib_post_recv(q, p, i))
				return -EIO;
		(*rebuilt)++;
	}
	return 0;
}

/*
 * A UD send that fails other than by a flush can leave its QP in SQE:
 * each found there is brought back to RTS.  0, or -EIO when one cannot be.
 */
int ib_qps_sqe_recover(struct ib_qps *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int p, rc = 0;

	for (p = 0; p < IB_PARTS; p++) {
		struct ibv_qp *qp = q->part[p].qp;

		if (!qp || ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) || a.qp_state != IBV_QPS_SQE)
			continue;
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			rc = -EIO;
	}
	return rc;
}

/*
 * Wildcard server: the QP that answers a request reached on @port in
 * P_Key index @pkey_index, made on first use.  -1 when none can be.
 */
int ib_part_get(struct ib_qps *q, uint8_t port, uint16_t pkey_index)
{
	struct ib_part *pt = NULL;
	const char *step;
	size_t len = (size_t)q->nrecv * q->slot;
	unsigned i;
	int p;

	for (p = 0; p < IB_PARTS; p++) {
		if (q->part[p].qp && q->part[p].port == port &&
		    q->part[p].pkey_index == pkey_index)
			return p;
		if (!q->part[p].qp && !pt)
			pt = &q->part[p];
	}
	if (!pt)
		return -1;
	pt->mem = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
	if (!pt->mem)
		return -1;
	memset(pt->mem, 0, len);
	pt->mr = ibv_reg_mr(q->pd, pt->mem, len, IBV_ACCESS_LOCAL_WRITE);
	if (pt->mr)
		pt->qp = ib_qp_up(q, port, pkey_index, &step);
	if (!pt->qp)
		goto fail;
	pt->port = port;
	pt->pkey_index = pkey_index;
	pt->mtu = ib_port_mtu(q->ctx, port, 0);
	if (!pt->mtu || pt->mtu > q->buf_mtu)
		pt->mtu = q->buf_mtu;	/* grown since the open: what the buffers hold */
	p = (int)(pt - q->part);
	for (i = 0; i < q->nrecv; i++)
		if (ib_post_recv(q, (unsigned)p, i))
			goto fail;
	return p;

fail:
	if (pt->qp)
		ibv_destroy_qp(pt->qp);
	if (pt->mr)
		ibv_dereg_mr(pt->mr);
	free(pt->mem);
	memset(pt, 0, sizeof(*pt));
	return -1;
}
