/* SPDX-License-Identifier: ISC */
/*
 * The mock completion channels, completion queues and HCA clock that the
 * verbs unit tests share (verbs_mock.h).  THIS IS A MOCK: see the tests
 * that link it for what it models and what it cannot prove.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "opt_units.h"
#include "verbs_mock.h"

int mock_chan_reads;
int mock_mlx5, mock_mlx5_rt;
int mock_start_busy;
int mock_start_err;

int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out)
{
	if (!mock_mlx5)
		return EOPNOTSUPP;
	attrs_out->flags = mock_mlx5_rt ? MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS : 0;
	return 0;
}

int64_t mock_rt_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * NTPX_NS_PER_SEC + t.tv_nsec;
}

void mock_poke(int fd)
{
	char c = 1;

	assert_int_equal(write(fd, &c, 1), 1);
}

uint64_t mock_hca_cycles(const struct mock_hca *h, int64_t rt_ns)
{
	int64_t d = rt_ns - h->base_rt;

	int64_t off = h->ppm ? d / NTPX_NS_PER_US * (int64_t)h->khz / 1000 * h->ppm / 1000000 : 0;

	return (h->base_cyc + (uint64_t)(d / NTPX_NS_PER_MS * (int64_t)h->khz +
					 d % NTPX_NS_PER_MS * (int64_t)h->khz / NTPX_NS_PER_MS +
					 off)) & h->mask;
}

/* ------------------------------ the extended verbs a provider lacks */
static int dummy_query_device_ex(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	return EOPNOTSUPP;
}

static struct ibv_cq_ex *dummy_create_cq_ex(struct ibv_context *context,
					    struct ibv_cq_init_attr_ex *a)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static int dummy_query_rt_values(struct ibv_context *context, struct ibv_values_ex *v)
{
	return EOPNOTSUPP;
}

void mock_dummy_ex(struct verbs_context *v)
{
	v->query_device_ex = dummy_query_device_ex;
	v->create_cq_ex = dummy_create_cq_ex;
	v->query_rt_values = dummy_query_rt_values;
}

/* ------------------------------------ async events, PDs, MRs: nothing */
void ibv_ack_async_event(struct ibv_async_event *event)
{
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	pd->context = context;
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

/* The parentheses keep verbs.h's ibv_reg_mr macro out. */
struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct ibv_mr *mr = calloc(1, sizeof(*mr));

	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = 0x77;
	return mr;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	free(mr);
	return 0;
}

static void lock(void)
{
	if (mock_cq_config.lock)
		pthread_mutex_lock(mock_cq_config.lock);
}

static void unlock(void)
{
	if (mock_cq_config.lock)
		pthread_mutex_unlock(mock_cq_config.lock);
}

/* ---------------------------------------------------------- channels */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct mock_chan *c = calloc(1, sizeof(*c));

	assert_int_equal(pipe2(c->pipe, O_CLOEXEC), 0);
	c->ch.context = context;
	c->ch.fd = c->pipe[0];
	return &c->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct mock_chan *c = (struct mock_chan *)channel;

	close(c->pipe[0]);
	close(c->pipe[1]);
	free(c);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct mock_chan *c = (struct mock_chan *)channel;
	char b;

	__atomic_add_fetch(&mock_chan_reads, 1, __ATOMIC_SEQ_CST);
	if (read(c->pipe[0], &b, 1) != 1)
		return -1;	/* errno: EAGAIN on the non-blocking fd */
	*cq = c->cq;
	*cq_context = c->cq->cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
}

/* ------------------------------------------------- completion queues */

static void chan_attach(struct mock_cq *c, struct ibv_comp_channel *channel)
{
	if (channel) {
		c->chan = (struct mock_chan *)channel;
		c->chan->cq = &c->cq;
	}
}

struct mock_cq *mock_cq_create(struct ibv_context *context, int cqe, void *cq_context,
			       struct ibv_comp_channel *channel)
{
	struct mock_cq *c = calloc(1, sizeof(*c));

	c->cq.context = context;
	c->cq.channel = channel;
	c->cq.cq_context = cq_context;
	c->cq.cqe = cqe;
	chan_attach(c, channel);
	return c;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	free(cq);
	return 0;
}

int mock_cq_push(struct mock_cq *c, const struct ibv_wc *wc, int64_t true_ns, uint64_t ts)
{
	int at = (c->head + c->n) % MOCK_CQ_CAP;

	if (c->n >= mock_cq_config.cap) {
		/* overrun: lost, as on an HCA without CQ room */
		if (!mock_cq_config.overrun_drops)
			fail_msg("a CQ of %d completions overran", mock_cq_config.cap);
		return -1;
	}
	c->last_true = true_ns;
	c->ts[at] = ts;
	c->q[at] = *wc;
	c->n++;
	if (c->armed && c->chan) {
		c->armed = 0;
		mock_poke(c->chan->pipe[1]);
	}
	return 0;
}

int mock_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	struct mock_cq *c = (struct mock_cq *)cq;
	int n = 0;

	lock();
	while (n < num && c->n) {
		wc[n++] = c->q[c->head];
		c->head = (c->head + 1) % MOCK_CQ_CAP;
		c->n--;
	}
	if (!n && c->chan && mock_cq_config.on_empty)
		mock_cq_config.on_empty(c);
	unlock();
	return n;
}

int mock_req_notify_cq(struct ibv_cq *cq, int solicited)
{
	lock();
	((struct mock_cq *)cq)->armed = 1;
	unlock();
	return 0;
}

/* The extended poll: one completion at a time, read field by field. */
static int next_locked(struct mock_cq *c)
{
	if (mock_cq_config.check_polling)
		assert_true(c->polling);
	if (!c->n)
		return ENOENT;
	c->cur = c->q[c->head];
	c->cur_ts = c->ts[c->head];
	c->head = (c->head + 1) % MOCK_CQ_CAP;
	c->n--;
	c->cqx.wr_id = c->cur.wr_id;
	c->cqx.status = c->cur.status;
	return 0;
}

static int next_poll(struct ibv_cq_ex *cq)
{
	int rc;

	lock();
	rc = next_locked((struct mock_cq *)cq);
	unlock();
	return rc;
}

static int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct mock_cq *c = (struct mock_cq *)cq;
	int rc;

	lock();
	if (mock_cq_config.check_polling)
		assert_false(c->polling);
	if (mock_start_busy > 0 && c->n) {
		mock_start_busy--;
		unlock();
		return EBUSY;	/* no end_poll after it */
	}
	if (mock_start_err > 0 && c->n) {
		/* mlx5: a CQE it cannot parse, consumed (CQ_POLL_ERR) */
		mock_start_err--;
		c->head = (c->head + 1) % MOCK_CQ_CAP;
		c->n--;
		unlock();
		return -2;
	}
	c->polling = 1;
	rc = next_locked(c);
	if (rc)
		c->polling = 0;		/* no end_poll after a failed start */
	unlock();
	return rc;
}

static void end_poll(struct ibv_cq_ex *cq)
{
	struct mock_cq *c = (struct mock_cq *)cq;

	if (mock_cq_config.check_polling)
		assert_true(c->polling);
	c->polling = 0;
}

static struct mock_cq *reading(struct ibv_cq_ex *cq, uint64_t flag)
{
	struct mock_cq *c = (struct mock_cq *)cq;

	if (mock_cq_config.check_polling)
		assert_true(c->polling);
	if (flag && !(c->wc_flags & flag))
		fail_msg("read a field the CQ was not created with (0x%llx)",
			 (unsigned long long)flag);
	if (c->cur.status != IBV_WC_SUCCESS)
		fail_msg("read a field of a completion in error");
	return c;
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq)
{
	return reading(cq, 0)->cur.opcode;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_BYTE_LEN)->cur.byte_len;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_QP_NUM)->cur.qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_SRC_QP)->cur.src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cq)
{
	return reading(cq, 0)->cur.wc_flags;
}

static __be32 read_imm_data(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_IMM)->cur.imm_data;
}

static uint32_t read_slid(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_SLID)->cur.slid;
}

static uint8_t read_sl(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_SL)->cur.sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_DLID_PATH_BITS)->cur.dlid_path_bits;
}

static uint64_t read_ts(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)->cur_ts;
}

static uint64_t read_wallclock(struct ibv_cq_ex *cq)
{
	return reading(cq, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)->cur_ts;
}

struct mock_cq *mock_cq_create_ex(struct ibv_context *context,
				  const struct ibv_cq_init_attr_ex *a)
{
	struct mock_cq *c = calloc(1, sizeof(*c));

	c->ex = 1;
	c->wc_flags = a->wc_flags;
	c->cqx.context = context;
	c->cqx.channel = a->channel;
	c->cqx.cq_context = a->cq_context;
	c->cqx.cqe = (int)a->cqe;
	c->cqx.start_poll = start_poll;
	c->cqx.next_poll = next_poll;
	c->cqx.end_poll = end_poll;
	c->cqx.read_opcode = read_opcode;
	c->cqx.read_byte_len = read_byte_len;
	c->cqx.read_qp_num = read_qp_num;
	c->cqx.read_src_qp = read_src_qp;
	c->cqx.read_wc_flags = read_wc_flags;
	c->cqx.read_imm_data = read_imm_data;
	c->cqx.read_slid = read_slid;
	c->cqx.read_sl = read_sl;
	c->cqx.read_dlid_path_bits = read_dlid_path_bits;
	c->cqx.read_completion_ts = read_ts;
	c->cqx.read_completion_wallclock_ns = read_wallclock;
	chan_attach(c, a->channel);
	return c;
}
