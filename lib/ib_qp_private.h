/* SPDX-License-Identifier: ISC */
/*
 * ib_qp_private.h - the ib transport's UD queue pairs (ib_qp.c): made
 * and brought to RTS, their receives posted, rebuilt in place after the
 * error state, and a wildcard server's QP for each port and IPoIB
 * partition it is reached on.  Every QP shares its owner's PD and CQs.
 */
#ifndef NTPX_IB_QP_PRIVATE_H
#define NTPX_IB_QP_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "verbs_stamp.h"

#define IB_PARTS	8		/* wildcard server: ports and partitions answered */

/* A QP on one port in one IPoIB partition, with its receive pool. */
struct ib_part {
	uint8_t port;
	uint16_t pkey_index;
	uint32_t mtu;		/* bytes, the port's active MTU: a reply's bound */
	struct ibv_qp *qp;	/* NULL: unused */
	struct ibv_mr *mr;
	unsigned char *mem;	/* part 0: the owner's own region */
};

struct ib_qps {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct verbs_cq *rcq, *scq;	/* the owner's, every QP's completions */
	unsigned nrecv;			/* receive buffers per QP */
	unsigned nsend;			/* sends a QP holds: the owner's send slots */
	size_t slot;			/* bytes per buffer: the GRH and buf_mtu */
	uint32_t buf_mtu;		/* bytes, the largest a buffer holds */
	uint32_t qkey;
	uint32_t max_inline;		/* what part 0's QP was given */
	struct ib_part part[IB_PARTS];	/* [0]: the owner's first QP */
};

/* The MTU of @port in bytes: its active one, or with @largest its largest; 0 when unknown. */
uint32_t ib_port_mtu(struct ibv_context *ctx, uint8_t port, int largest);
/* Posts receive buffer @i of partition @part.  0, or an errno value. */
int ib_post_recv(struct ib_qps *q, unsigned part, unsigned i);
/*
 * A UD QP on @port in P_Key index @pkey_index, in RTS, or NULL with errno
 * and *@step the step that failed.
 */
struct ibv_qp *ib_qp_up(struct ib_qps *q, uint8_t port, uint16_t pkey_index,
			const char **step);
/* Which QPs are in the error state (@bad, IB_PARTS of them); nonzero when any is. */
int ib_qps_failed(struct ib_qps *q, int *bad);
/*
 * The receive completions left on the CQ taken (those of the QPs @bad
 * names are flushed; a healthy QP's buffer is posted again).  0, or -EIO
 * when a buffer could not be.
 */
int ib_qps_drain(struct ib_qps *q, const int *bad);
/*
 * The QPs @bad names rebuilt in place: RESET, then to RTS as when made
 * (the QP number stays), their receives posted; each counted in
 * *@rebuilt.  0, or -EIO at the first that cannot be.
 */
int ib_qps_rebuild(struct ib_qps *q, const int *bad, uint64_t *rebuilt);
/*
 * A UD send that fails other than by a flush can leave its QP in SQE:
 * each found there is brought back to RTS.  0, or -EIO when one cannot be.
 */
int ib_qps_sqe_recover(struct ib_qps *q);
/* Wildcard server: the partition whose QP answers on @port in @pkey_index, or -1. */
int ib_part_get(struct ib_qps *q, uint8_t port, uint16_t pkey_index);

#endif
