/* SPDX-License-Identifier: ISC */
/*
 * verbs_stamp.c - completion-queue timestamps for the verbs paths
 * (verbs_stamp.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>

#include "missing.h"
#include "opt_units.h"
#include "phc.h"
#include "verbs_stamp.h"

#define XREAD_TRIES	3	/* cross-readings per conversion, narrowest wins */
#define STALE_NS	NTPX_NS_PER_SEC	/* a stamp further than this from its
					   cross-reading is not trusted */
#define PPB		1000000000LL	/* a ratio in parts per billion */
#define RATE_PPB	5000		/* the measured rate is used once its
					   error bound is below this (5 ppm) */
#define VERBS_BUSY_TRIES 64		/* start_poll's EBUSY: polled again at
					   once this often at most */

/* ibv_query_rt_values_ex gives the raw clock (libibverbs' stand-in fails). */
static int rt_values_work(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	return ibv_query_rt_values_ex(ctx, &v) == 0 && (v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK);
}

void verbs_clock_probe(struct verbs_clock *vc, struct ibv_context *ctx)
{
	struct ibv_device_attr_ex a;
	struct mlx5dv_context dv;

	memset(vc, 0, sizeof(*vc));
	vc->ctx = ctx;
	vc->mode = VERBS_STAMP_NONE;
	/*
	 * libibverbs fills every extended op a provider lacks with one that
	 * fails (EOPNOTSUPP), so asking is how to know: a provider without
	 * the extended verbs answers here, one without extended CQs when
	 * the CQ is made (-:cq_refused_stamps).
	 */
	memset(&a, 0, sizeof(a));
	if (ibv_query_device_ex(ctx, NULL, &a)) {
		vc->why = "-:no_query_device_ex";
		return;
	}
	vc->mask = a.completion_timestamp_mask;
	vc->khz = a.hca_core_clock;
	/*
	 * mlx5 with its clock in real-time mode reports a mask and a core
	 * clock too, but the kernel refuses a QP whose CQs ask for the
	 * free-running format: only wall-clock stamps there.  Elsewhere
	 * raw stamps need a mask and a clock rate to convert with;
	 * without them the wall-clock flavour may still be there (the
	 * create says).
	 */
	memset(&dv, 0, sizeof(dv));
	if (mlx5dv_query_device(ctx, &dv) == 0 && (dv.flags & MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS)) {
		vc->realtime = 1;
		vc->mode = VERBS_STAMP_WALLCLOCK;
		return;
	}
	/*
	 * Raw cycles need a mask, a clock rate and ibv_query_rt_values_ex to
	 * convert with.  A device with a PHC is asked for wall-clock stamps
	 * first: its offset is read with PTP_SYS_OFFSET_PRECISE or
	 * _EXTENDED (lib/phc.h), narrower than a verbs command's bracket.
	 */
	vc->raw_ok = vc->mask && vc->khz && rt_values_work(ctx);
	if (phc_index_of(ctx->device->ibdev_path) >= 0 || !vc->raw_ok)
		vc->mode = VERBS_STAMP_WALLCLOCK;
	else
		vc->mode = VERBS_STAMP_RAW;
}

/* The next mode to try after vc->mode was refused: each once. */
static void step_down(struct verbs_clock *vc, const char *why)
{
	vc->tried |= 1u << vc->mode;
	if (!(vc->tried & 1u << VERBS_STAMP_WALLCLOCK) && !vc->realtime)
		vc->mode = VERBS_STAMP_WALLCLOCK;
	else if (!(vc->tried & 1u << VERBS_STAMP_RAW) && vc->raw_ok && !vc->realtime)
		vc->mode = VERBS_STAMP_RAW;
	else
		vc->mode = VERBS_STAMP_NONE;
	if (vc->mode == VERBS_STAMP_NONE)
		vc->why = why;
}

static int refusal(int e)
{
	return e == EOPNOTSUPP || e == EINVAL || e == ENOSYS || e == EPROTONOSUPPORT;
}

int verbs_qp_refused(struct verbs_clock *vc, int e)
{
	if (vc->mode == VERBS_STAMP_NONE || !refusal(e))
		return 0;
	step_down(vc, "-:qp_refused_stamp_format");
	return 1;
}

static uint64_t mode_flags(enum verbs_stamp_mode m)
{
	switch (m) {
	case VERBS_STAMP_RAW: return IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	case VERBS_STAMP_WALLCLOCK: return IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	default: return 0;
	}
}

/*
 * Wall-clock stamps are PHC time (TAI under ptp4l, or wherever the PHC
 * runs): without the device's PHC to convert them they are no use.
 */
static int wall_ready(struct verbs_clock *vc)
{
	char err[160];
	int index;

	if (vc->phc)
		return 1;
	index = phc_index_of(vc->ctx->device->ibdev_path);
	if (index >= 0)
		vc->phc = phc_open(index, err, sizeof(err));
	return vc->phc != NULL;
}

int verbs_cq_create(struct verbs_clock *vc, struct verbs_cq *c, int cqe, void *cq_context,
		    struct ibv_comp_channel *ch)
{
	memset(c, 0, sizeof(*c));
	while (vc->mode != VERBS_STAMP_NONE) {
		if (vc->mode == VERBS_STAMP_WALLCLOCK && !wall_ready(vc)) {
			step_down(vc, "-:wallclock_without_phc");
			break;
		}
		struct ibv_cq_init_attr_ex ia = {
			.cqe = (uint32_t)cqe,
			.cq_context = cq_context,
			.channel = ch,
			.wc_flags = IBV_WC_STANDARD_FLAGS | mode_flags(vc->mode),
		};

		c->cqx = ibv_create_cq_ex(vc->ctx, &ia);
		if (c->cqx) {
			c->cq = ibv_cq_ex_to_cq(c->cqx);
			c->mode = vc->mode;
			return 0;
		}
		/* Only a refusal of what was asked steps down. */
		if (!refusal(errno))
			return -1;
		step_down(vc, "-:cq_refused_stamps");
	}
	c->cq = ibv_create_cq(vc->ctx, cqe, cq_context, ch, 0);
	return c->cq ? 0 : -1;
}

void verbs_clock_close(struct verbs_clock *vc)
{
	phc_close(vc->phc);
	vc->phc = NULL;
}

void verbs_cq_destroy(struct verbs_cq *c)
{
	if (c->cq)
		ibv_destroy_cq(c->cq);
	memset(c, 0, sizeof(*c));
}

static void read_ex(struct verbs_cq *c, struct verbs_wc *w)
{
	struct ibv_cq_ex *x = c->cqx;

	memset(w, 0, sizeof(*w));
	w->wr_id = x->wr_id;
	w->status = x->status;
	if (w->status != IBV_WC_SUCCESS)
		return;
	w->opcode = ibv_wc_read_opcode(x);
	w->byte_len = ibv_wc_read_byte_len(x);
	w->qp_num = ibv_wc_read_qp_num(x);
	w->src_qp = ibv_wc_read_src_qp(x);
	w->wc_flags = ibv_wc_read_wc_flags(x);
	if (w->wc_flags & IBV_WC_WITH_IMM)
		w->imm_data = (uint32_t)ibv_wc_read_imm_data(x);
	w->slid = ibv_wc_read_slid(x);
	w->sl = ibv_wc_read_sl(x);
	w->dlid_path_bits = ibv_wc_read_dlid_path_bits(x);
	if (c->mode == VERBS_STAMP_RAW)
		w->ts = ibv_wc_read_completion_ts(x);
	else if (c->mode == VERBS_STAMP_WALLCLOCK)
		w->ts = ibv_wc_read_completion_wallclock_ns(x);
}

int verbs_cq_poll(struct verbs_cq *c, struct verbs_wc *wc, int max)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	int n = 0, rc, tries;

	if (max <= 0)
		return 0;
	if (!c->cqx) {
		struct ibv_wc w[16];
		int i;

		if (max > 16)
			max = 16;
		n = ibv_poll_cq(c->cq, max, w);
		if (n < 0) {
			c->poll_errors++;
			return -EIO;
		}
		for (i = 0; i < n; i++) {
			memset(&wc[i], 0, sizeof(wc[i]));
			wc[i].wr_id = w[i].wr_id;
			wc[i].status = w[i].status;
			if (w[i].status != IBV_WC_SUCCESS)
				continue;
			wc[i].opcode = w[i].opcode;
			wc[i].byte_len = w[i].byte_len;
			wc[i].qp_num = w[i].qp_num;
			wc[i].src_qp = w[i].src_qp;
			wc[i].wc_flags = w[i].wc_flags;
			wc[i].imm_data = (uint32_t)w[i].imm_data;
			wc[i].slid = w[i].slid;
			wc[i].sl = w[i].sl;
			wc[i].dlid_path_bits = w[i].dlid_path_bits;
		}
		return n;
	}
	/*
	 * No end_poll after a failed start.  EBUSY: libmlx5 found the
	 * kernel updating the clock information (its own ten tries spent)
	 * and left the completion in the CQ: polled again at once, since a
	 * caller told "empty" would sleep on an armed CQ whose completion
	 * came before the arming and will raise no event.  A negative
	 * value is mlx5's CQ_POLL_ERR (-2): a completion it could not
	 * parse, consumed; an error, never a count.
	 */
	for (tries = 0; (rc = ibv_start_poll(c->cqx, &pa)) == EBUSY && tries < VERBS_BUSY_TRIES;
	     tries++)
		c->busy++;
	if (rc == ENOENT)
		return 0;
	if (rc) {
		c->poll_errors++;
		return rc == EBUSY ? -EBUSY : -EIO;
	}
	for (;;) {
		read_ex(c, &wc[n++]);
		if (n == max)
			break;
		rc = ibv_next_poll(c->cqx);
		if (rc) {
			/* ENOENT: drained; anything else, as above */
			c->poll_errors += rc != ENOENT;
			break;
		}
	}
	ibv_end_poll(c->cqx);
	return n;
}

void verbs_wc_ibv(const struct verbs_wc *w, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = w->status;
	wc->opcode = w->opcode;
	wc->byte_len = w->byte_len;
	wc->qp_num = w->qp_num;
	wc->src_qp = w->src_qp;
	wc->wc_flags = w->wc_flags;
	wc->imm_data = w->imm_data;
	wc->slid = (uint16_t)w->slid;
	wc->sl = w->sl;
	wc->dlid_path_bits = w->dlid_path_bits;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NTPX_NS_PER_SEC + t->tv_nsec;
}

/*
 * HCA cycles @cyc as ns: at the rate measured between cross-readings
 * once it is known well enough, else at the nominal vc->khz (without
 * overflow for any 64-bit count).
 */
static int64_t cyc_ns(const struct verbs_clock *vc, uint64_t cyc)
{
	if (vc->ns_per_cyc > 0)
		return (int64_t)((double)cyc * vc->ns_per_cyc);
	return (int64_t)(cyc / vc->khz * NTPX_NS_PER_MS + cyc % vc->khz * NTPX_NS_PER_MS / vc->khz);
}

/*
 * A new cross-reading (@hca at @rt, bracket @w ns wide) against the
 * anchor, an earlier one: once they are far enough apart that the rate
 * between them is known to RATE_PPB (the two brackets over the span),
 * that rate is the one stamps convert at, and the reading is the next
 * anchor.  An oscillator tens of ppm off its nominal rate then costs
 * nothing, and the conversion follows its drift.
 */
static void rate_update(struct verbs_clock *vc, uint64_t hca, int64_t rt, int64_t w)
{
	int64_t span = rt - vc->anchor_rt;
	uint64_t cyc = (hca - vc->anchor_hca) & vc->mask;

	if (!vc->anchored || span <= 0 || cyc == 0 || span > 64 * STALE_NS) {
		vc->anchored = 1;
		vc->anchor_hca = hca;
		vc->anchor_rt = rt;
		vc->anchor_w = w;
		return;
	}
	if ((vc->anchor_w + w) * PPB / span > RATE_PPB)
		return;		/* not far enough apart yet */
	vc->ns_per_cyc = (double)span / (double)cyc;
	vc->rate_measured++;
	vc->anchor_hca = hca;
	vc->anchor_rt = rt;
	vc->anchor_w = w;
}

/*
 * The HCA clock against CLOCK_REALTIME: *hca cycles read at *rt ns, from
 * the narrowest of XREAD_TRIES brackets.  0 or -errno.
 */
static int cross_read(struct verbs_clock *vc, uint64_t *hca, int64_t *rt, int64_t *w)
{
	int64_t best = INT64_MAX;
	int i, rc = -EIO;

	for (i = 0; i < XREAD_TRIES; i++) {
		struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
		struct timespec a, b;
		int e;

		clock_gettime(CLOCK_REALTIME, &a);
		e = ibv_query_rt_values_ex(vc->ctx, &v);
		clock_gettime(CLOCK_REALTIME, &b);
		if (e) {
			rc = -e;
			continue;
		}
		if (!(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
			return -EOPNOTSUPP;
		if (ts_ns(&b) - ts_ns(&a) < best) {
			best = ts_ns(&b) - ts_ns(&a);
			*rt = ts_ns(&a) + best / 2;
			/* mlx5 puts the cycle count in tv_nsec (tv_sec 0). */
			*hca = (uint64_t)v.raw_clock.tv_sec * NTPX_NS_PER_SEC +
			       (uint64_t)v.raw_clock.tv_nsec;
			*w = best;
			rc = 0;
		}
	}
	return rc;
}

int verbs_clock_realtime(struct verbs_clock *vc, enum verbs_stamp_mode mode, uint64_t ts,
			 int64_t *ns)
{
	uint64_t hca = 0, back;
	int64_t rt = 0, d, w = 0;

	if (!ts || mode == VERBS_STAMP_NONE)
		return 0;
	if (mode == VERBS_STAMP_WALLCLOCK) {
		int64_t phc_ns;

		/*
		 * Real-time mode: the CQE's own value, seconds << 32 |
		 * nanoseconds.  Otherwise libmlx5 gave ns (mlx5dv_ts_to_ns).
		 * Either is the PHC's time, not CLOCK_REALTIME.
		 */
		if (vc->realtime) {
			if ((ts & 0xffffffffu) >= NTPX_NS_PER_SEC)
				goto bad;
			phc_ns = (int64_t)(ts >> 32) * NTPX_NS_PER_SEC + (int64_t)(ts & 0xffffffffu);
		} else {
			if (ts > INT64_MAX)
				goto bad;
			phc_ns = (int64_t)ts;
		}
		if (!vc->phc || phc_to_realtime(vc->phc, phc_ns, ns))
			goto bad;
		return 1;
	}
	if (!vc->khz || !vc->mask || cross_read(vc, &hca, &rt, &w))
		goto bad;
	rate_update(vc, hca, rt, w);
	/*
	 * The stamp is (nearly always) before the reading; the counter is
	 * mask bits wide and may have wrapped in between.
	 */
	back = (hca - ts) & vc->mask;
	if (back <= vc->mask / 2) {
		d = cyc_ns(vc, back);
		if (d > STALE_NS)
			goto bad;
		*ns = rt - d;
	} else {
		d = cyc_ns(vc, (ts - hca) & vc->mask);
		if (d > STALE_NS)
			goto bad;
		*ns = rt + d;
	}
	return 1;
bad:
	vc->errors++;
	return 0;
}

const char *verbs_stamp_source(enum verbs_stamp_mode mode)
{
	switch (mode) {
	case VERBS_STAMP_RAW: return "verbs:cqe_ts+rt_values";
	case VERBS_STAMP_WALLCLOCK: return "verbs:cqe_wallclock+phc";
	default: return NULL;
	}
}
