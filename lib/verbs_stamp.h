/* SPDX-License-Identifier: ISC */
/*
 * verbs_stamp.h - completion-queue timestamps for the verbs paths (uudp
 * via=verbs in port_verbs.c, ib:// in ib.c): the 'h' layer of
 * doc/ntpx-record.5.
 *
 * mlx5 with its clock in real-time mode (mlx5dv_query_device says
 * MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS) is asked for wall-clock stamps only:
 * it reports a timestamp mask and a core clock too, but the kernel
 * refuses the QP whose CQs ask for the free-running format.  Any other
 * device that reports a completion timestamp mask and a core clock
 * (ibv_query_device_ex) gets its CQs from ibv_create_cq_ex with
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: raw HCA clock cycles, converted to
 * CLOCK_REALTIME by a cross-reading (ibv_query_rt_values_ex bracketed by
 * two clock_gettime(CLOCK_REALTIME) calls, the narrowest of a few) taken
 * when the stamp is converted, at most a second from it, at the rate
 * measured between cross-readings (the nominal hca_core_clock until
 * that is known to 5 ppm).  Raw mode needs ibv_query_rt_values_ex; a
 * device with a PHC is asked for wall-clock stamps first (below).  A device that refuses raw stamps but
 * offers IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK gets those: the
 * time of the HCA's PTP hardware clock, which libmlx5 gives in ns
 * (mlx5dv_ts_to_ns) or, in real-time mode, as the CQE holds it (seconds
 * << 32 | nanoseconds).  PHC time is TAI under ptp4l, or whatever the
 * PHC runs at: it is converted through the PHC that sysfs shows under
 * the device (lib/phc.h), and without one there are no stamps.  A
 * refused QP steps down as a refused CQ does.  Anything else, or
 * a provider without the extended verbs, gets plain CQs and no stamps.
 *
 * Either way the CQ is polled through verbs_cq_poll(), which takes the
 * extended path (ibv_start_poll, ibv_next_poll, ibv_end_poll) for an
 * extended CQ and ibv_poll_cq otherwise.
 */
#ifndef NTPX_VERBS_STAMP_H
#define NTPX_VERBS_STAMP_H

#include <stdint.h>

#include <infiniband/verbs.h>

struct phc;

enum verbs_stamp_mode {
	VERBS_STAMP_NONE,	/* plain CQs, no stamps */
	VERBS_STAMP_RAW,	/* HCA cycles, converted by cross-reading */
	VERBS_STAMP_WALLCLOCK,	/* the HCA's real-time clock, ns */
};

struct verbs_clock {
	struct ibv_context *ctx;
	enum verbs_stamp_mode mode;
	uint64_t mask;		/* completion_timestamp_mask */
	uint64_t khz;		/* hca_core_clock */
	uint64_t errors;	/* stamps that could not be converted */
	int realtime;		/* mlx5 with its clock in real-time mode */
	int raw_ok;		/* mask, clock rate and ibv_query_rt_values_ex */
	unsigned tried;		/* modes refused (bit per mode) */
	/* raw: the rate between cross-readings (verbs_stamp.c) */
	int anchored;
	uint64_t anchor_hca;
	int64_t anchor_rt, anchor_w;
	double ns_per_cyc;	/* 0: not measured yet, the nominal khz */
	uint64_t rate_measured;	/* times it was */
	struct phc *phc;	/* WALLCLOCK: the device's PHC (lib/phc.h) */
	const char *why;	/* mode NONE: why, as #stamps says it ("-:...") */
};

struct verbs_cq {
	struct ibv_cq *cq;	/* for the QP, notify, destroy */
	struct ibv_cq_ex *cqx;	/* NULL: a plain CQ */
	enum verbs_stamp_mode mode;
	uint64_t poll_errors;	/* polls that failed (a completion lost) */
	uint64_t busy;		/* start_poll's EBUSY, polled again */
};

/* One completion, as far as the verbs paths read them. */
struct verbs_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned wc_flags;
	uint32_t imm_data;	/* network order, as ibv_wc has it */
	uint32_t slid;
	uint8_t sl, dlid_path_bits;
	uint64_t ts;		/* raw stamp (see the CQ's mode); 0: none */
};

/*
 * What @ctx offers: sets vc->mode to the best the device reports
 * (NONE when it reports nothing).  Never fails.
 */
void verbs_clock_probe(struct verbs_clock *vc, struct ibv_context *ctx);

/*
 * Creates a CQ of @cqe entries on @ch (NULL: none) with stamps as vc->mode
 * says.  A refusal of the stamps steps vc->mode down (RAW, then
 * WALLCLOCK, then NONE) and tries again, so later CQs are not asked for
 * what the device refused.  0, or -1 with errno set.
 */
int verbs_cq_create(struct verbs_clock *vc, struct verbs_cq *c, int cqe, void *cq_context,
		    struct ibv_comp_channel *ch);
void verbs_cq_destroy(struct verbs_cq *c);

/* What verbs_clock_probe and verbs_cq_create opened (the PHC). */
void verbs_clock_close(struct verbs_clock *vc);

/*
 * Creating a QP on CQs made with vc->mode failed with @e.  When that is a
 * refusal of the stamp format (mlx5 in real-time mode refuses raw stamps
 * only here, EOPNOTSUPP), steps vc->mode down and returns 1: the caller
 * destroys the CQs, makes them again and retries.  0: not ours to fix.
 * Stamps are never a reason for a transport not to open.
 */
int verbs_qp_refused(struct verbs_clock *vc, int e);

/*
 * Up to @max completions into @wc.  Returns how many (0: none waiting), or
 * -errno (-EIO: the provider could not parse a completion, which is
 * gone; counted in c->poll_errors).  A completion in error carries only
 * wr_id and status.
 */
int verbs_cq_poll(struct verbs_cq *c, struct verbs_wc *wc, int max);

/* @w as the struct ibv_wc ibv_poll_cq would have filled (the fields above). */
void verbs_wc_ibv(const struct verbs_wc *w, struct ibv_wc *wc);

/*
 * The CLOCK_REALTIME ns of stamp @ts from a CQ in @mode: 1 with *ns set,
 * 0 when there is none (no stamp, or the cross-reading failed: counted
 * in vc->errors).
 */
int verbs_clock_realtime(struct verbs_clock *vc, enum verbs_stamp_mode mode, uint64_t ts,
			 int64_t *ns);

/* "verbs:cqe_ts" and the like, for #stamps; NULL for NONE. */
const char *verbs_stamp_source(enum verbs_stamp_mode mode);

#endif
