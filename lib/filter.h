/* SPDX-License-Identifier: ISC */
/*
 * filter.h - the clock filter of one peer, with OpenNTPD's semantics, in
 * one place for every transport, for ntpfilter and for the discipline.
 *
 * The window holds the last FILTER_WINDOW (8, OpenNTPD's
 * OFFSET_ARRAY_SIZE) accepted replies; lost and rejected exchanges take no
 * slot.  The best sample is the one with the lowest delay; the filtered
 * offset and delay are the best sample's.  Two jitters, named apart:
 *
 *   jitter  = RMS of the other samples' offsets about the best's offset
 *             (the study's definition);
 *   djitter = RMS of the other samples' delays about the best delay, what
 *             OpenNTPD 6.2's ntpctl -s peers prints as "jitter".
 *
 * Trust follows OpenNTPD: a peer starts at TRUSTLEVEL_PATHETIC (2), each
 * accepted reply adds one up to 10, a reply that does not come halves it
 * when it is at least 6; the peer is valid at 6, i.e. from its fourth
 * reply.  An update (OpenNTPD's client_update + priv_adjtime for a single
 * peer) happens when every slot holds a reply not yet used and the peer is
 * valid; the best sample is then the correction, and it and every older
 * sample are marked used.
 *
 * Offsets are kept as off2 (twice the offset, reference minus client, ns)
 * like the records, so no half nanosecond is lost.
 */
#ifndef NTPX_FILTER_H
#define NTPX_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define FILTER_WINDOW		8	/* OFFSET_ARRAY_SIZE */
#define FILTER_MAX_WINDOW	64

#define FILTER_TRUST_PATHETIC	2	/* a new peer */
#define FILTER_TRUST_BADPEER	6	/* valid from here */
#define FILTER_TRUST_MAX	10

struct filter_sample {
	int64_t off2;		/* ns, reference minus client, twice */
	int64_t delay;		/* ns, >= 0 */
	int64_t corr;		/* ns, off2's corrections a daemon would have made
				   since it came (priv_adjtime) and filter_correct
				   did not apply: the daemon's offset is off2 - corr */
	uint64_t arrival;	/* 1, 2, ...: order of acceptance; 0 = empty slot */
	int fresh;		/* OpenNTPD's "good": not yet used by an update */
};

struct filter {
	int window;
	int shift;		/* the slot the next reply goes to */
	uint64_t arrivals;
	int trust;
	struct filter_sample s[FILTER_MAX_WINDOW];
};

/* What the filter says after an event. */
struct filter_out {
	int n;			/* samples in the window; the rest is meaningless when 0 */
	int64_t off2;		/* the best sample's off2, ns */
	int64_t delay;		/* the best sample's delay, ns */
	double jitter;		/* ns, RMS of the others' offsets (off2/2) about the best's */
	double djitter;		/* ns, ntpctl's: RMS of the others' delays about the best's */
	int trust;
	int valid;		/* trust >= FILTER_TRUST_BADPEER */
	int update;		/* this reply made an update: off2 is the correction */
};

/* The columns a filter adds to records (ntpfilter, ntpprobe --discipline). */
#define FILTER_FIELDS	"foff2 fdelay jitter djitter fcount trust valid update"

/*
 * Formats @o as the FILTER_FIELDS columns, space-separated, no newline:
 * the first four are "-" while the window is empty, jitters are rounded to
 * the ns.  Returns the length (as snprintf).
 */
int filter_format(char *buf, size_t len, const struct filter_out *o);

/* @window: 1 .. FILTER_MAX_WINDOW (FILTER_WINDOW for OpenNTPD). */
void filter_init(struct filter *f, int window);

/*
 * An accepted reply (status ok).  A negative delay is refused as OpenNTPD
 * refuses it (no slot, no trust; returns -1); otherwise returns 0.  @out
 * describes the window with the reply in it, before any update marks
 * samples used.
 */
int filter_add(struct filter *f, int64_t off2, int64_t delay, struct filter_out *out);

/* A reply that did not come (timeout, loss, refused): trust halves from 6 up. */
void filter_miss(struct filter *f, struct filter_out *out);

/* The window as it is (for events that change nothing: kod, unsynced). */
void filter_peek(const struct filter *f, struct filter_out *out);

/*
 * A correction of @off2 (ns, twice the offset) was applied to the clock:
 * every stored offset moves by it, as priv_adjtime() does, so that the
 * window stays comparable with replies to come.
 */
void filter_correct(struct filter *f, int64_t off2);

/*
 * ntpctl -s peers's offset and delay (control.c build_show_peer): the
 * means over the slots with delay > 0 of the daemon's offset (off2 less
 * every update's correction since the sample came, as priv_adjtime
 * subtracts it) and of delay, in ns, rounded.  Returns the number of
 * such slots (0: no means).
 */
int filter_means(const struct filter *f, int64_t *moff2, int64_t *mdelay);

#endif
