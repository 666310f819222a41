/* SPDX-License-Identifier: ISC */
/*
 * verbs_mock.h - what the mock libibverbs of the verbs unit tests share
 * (tests/unit/port_verbs.c, tests/unit/ib_fabric.c): completion channels
 * that are real pipes, completion queues with the plain and the extended
 * poll, and the mock HCA clock that stamps their completions.  Each test
 * keeps its own devices, QPs and what its fabric does, and says how its
 * CQs behave in a struct mock_cq_config of its own.  The Makefile links
 * build/unit/support/verbs_mock.o into exactly those tests: it defines
 * ibv_* calls (the completion channel's, ibv_destroy_cq, and protection
 * domains, memory regions and async-event acks that do nothing), which
 * take precedence over the shared library's.
 */
#ifndef NTPX_VERBS_MOCK_H
#define NTPX_VERBS_MOCK_H

#include <pthread.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define MOCK_CQ_CAP	2048

/* CLOCK_REALTIME, ns. */
int64_t mock_rt_now(void);

/* One byte into the pipe @fd: an event for whoever polls its other end. */
void mock_poke(int fd);

/*
 * An HCA clock of @khz kHz and @mask bits that runs from CLOCK_REALTIME:
 * at base_rt (ns) it read base_cyc cycles.
 */
struct mock_hca {
	uint64_t khz, mask, base_cyc;
	int64_t base_rt;
	int64_t ppm;		/* how far it runs from khz, as an oscillator does */
};

/* The HCA clock at CLOCK_REALTIME @rt_ns, in cycles. */
uint64_t mock_hca_cycles(const struct mock_hca *h, int64_t rt_ns);

/* A completion channel: a real pipe, so that the waiting is the real one. */
struct mock_chan {
	struct ibv_comp_channel ch;
	int pipe[2];
	struct ibv_cq *cq;
};

extern int mock_chan_reads;		/* ibv_get_cq_event calls (atomic) */

struct mock_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx;	/* starts as struct ibv_cq does */
	};
	struct ibv_wc q[MOCK_CQ_CAP];
	uint64_t ts[MOCK_CQ_CAP];	/* each one's stamp, as the ex poll reads it */
	int head, n, armed;
	struct mock_chan *chan;
	int ex;				/* made by ibv_create_cq_ex */
	uint64_t wc_flags;
	struct ibv_wc cur;		/* the completion the ex poll is on */
	uint64_t cur_ts;
	int polling;			/* between start_poll and end_poll */
	int64_t last_true;		/* CLOCK_REALTIME the latest queued stands for */
};

/* How a test's CQs behave: each test defines mock_cq_config. */
struct mock_cq_config {
	int cap;			/* completions a CQ holds, <= MOCK_CQ_CAP */
	int overrun_drops;		/* a full CQ loses a completion, as an HCA
					   does; 0: the test fails */
	int check_polling;		/* fail on start/next/end_poll out of order */
	pthread_mutex_t *lock;		/* held by the polls and req_notify (NULL:
					   none); mock_cq_push() is called with it */
	void (*on_empty)(struct mock_cq *c);	/* a plain poll of a CQ with a
						   channel found nothing (lock held) */
};

extern const struct mock_cq_config mock_cq_config;

/*
 * mlx5dv_query_device, as libmlx5 has it: EOPNOTSUPP on a device that
 * is not mlx5 (mock_mlx5 0), else MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS when
 * mock_mlx5_rt says the clock is in real-time mode
 * (REAL_TIME_CLOCK_ENABLE).  Each test's setup sets both.
 */
extern int mock_mlx5, mock_mlx5_rt;

/*
 * ibv_start_poll fails with EBUSY this many more times, as mlx5's does
 * while the device clock information is being updated
 * (ibv_create_cq_ex.3): transient, nothing polled.
 */
extern int mock_start_busy;

/*
 * ibv_start_poll returns -2 this many more times on a CQ that has a
 * completion, and consumes it, as mlx5's does with a CQE it cannot parse
 * (CQ_POLL_ERR: an unknown QP or SRQ number, an opcode it does not know).
 * No end_poll after it.
 */
extern int mock_start_err;

/*
 * What libibverbs puts in a context for the extended verbs a provider
 * lacks (its dummy ops): query_device_ex, create_cq_ex and
 * query_rt_values that fail with EOPNOTSUPP.  A mock device without the
 * extended verbs gets these, never NULL, as a real one does.
 */
void mock_dummy_ex(struct verbs_context *v);

/* ibv_create_cq's CQ, and ibv_create_cq_ex's (its readers set). */
struct mock_cq *mock_cq_create(struct ibv_context *context, int cqe, void *cq_context,
			       struct ibv_comp_channel *channel);
struct mock_cq *mock_cq_create_ex(struct ibv_context *context,
				  const struct ibv_cq_init_attr_ex *a);

/*
 * Queues @wc, which stands for CLOCK_REALTIME @true_ns and carries the
 * stamp @ts, and wakes the channel of an armed CQ.  Returns -1 when the
 * CQ is full (overrun_drops; otherwise the test fails).
 */
int mock_cq_push(struct mock_cq *c, const struct ibv_wc *wc, int64_t true_ns, uint64_t ts);

/* The context ops (struct ibv_context_ops). */
int mock_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
int mock_req_notify_cq(struct ibv_cq *cq, int solicited);

#endif
