/* SPDX-License-Identifier: ISC */
/*
 * discipline.h - OpenNTPD's control loop for one peer, acting on a clock
 * through clock.h (a sim: clock in every test).
 *
 * Each exchange goes through the clock filter (filter.h).  An optional
 * start-up step: the first accepted reply, when its offset exceeds the
 * threshold, steps the clock (ntpd -s).  Otherwise, each filter update
 * slews the clock by the best sample's offset with adjtime semantics (the
 * new slew replaces the one in progress, at CLOCK_SLEW_PPM).  Once the
 * clock is "synced" (the previous slew had finished when the next one was
 * issued), the corrections are summed, and every freq_samples of them a
 * least-squares slope of the running sum against time becomes a relative
 * frequency correction, clamped to max_freq_ppm.
 *
 * Signs: offsets and off2 are reference minus client (+ve => the clock is
 * behind); a correction of +X ns moves the clock forward; a frequency
 * correction of +Y ppm makes the clock faster.
 */
#ifndef NTPX_DISCIPLINE_H
#define NTPX_DISCIPLINE_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "filter.h"
#include "record.h"

struct discipline_params {
	int64_t step_threshold;	/* ns; 0: never step */
	int window;		/* filter window (FILTER_WINDOW, OFFSET_ARRAY_SIZE) */
	int freq_samples;	/* corrections per frequency estimate (FREQUENCY_SAMPLES, 8) */
	double max_freq_ppm;	/* clamp per estimate (MAX_FREQUENCY_ADJUST, 1280 ppm) */
	int64_t synced_ns;	/* a slew left below this counts as finished (adjtime's
				   microsecond: 1000) */
};

/* OpenNTPD's values (ntpd.h). */
void discipline_defaults(struct discipline_params *p);

/*
 * Parses "key=value,..." into @p: window=N, freq-samples=N,
 * max-freq=PPM, step-threshold=DUR.  Returns 0, or -1 with a line in @err.
 */
int discipline_parse(struct discipline_params *p, const char *s, char *err, size_t errlen);

enum discipline_action {
	DISCIPLINE_NONE,
	DISCIPLINE_STEP,
	DISCIPLINE_SLEW,
};

struct discipline_out {
	struct filter_out f;
	enum discipline_action action;
	int64_t corr;		/* ns applied (step amount, or the new slew), +ve => forward */
	int freq_adjusted;
	double dfreq_ppm;	/* the relative frequency correction made now, +ve => faster */
};

/* The columns ntpprobe --discipline adds after the filter's. */
#define DISCIPLINE_FIELDS	FILTER_FIELDS " corr adj dfreq"

struct discipline;

struct discipline *discipline_create(struct clock *c, const struct discipline_params *p,
				     char *err, size_t errlen);
void discipline_free(struct discipline *d);

/*
 * Forgets the filter's samples and trust: the transport has found its peer
 * again (transport_peer_reset() returned 1) and the old peer's samples
 * must not mix with the new one's.  The clock's corrections stay.
 */
void discipline_peer_reset(struct discipline *d);

/*
 * One exchange: @status, and for RECORD_OK its @off2 and @delay (ns).
 * Acts on the clock when the loop says so and fills @out.  Returns 0, or
 * -errno with a line in @err when the clock refused.
 */
int discipline_sample(struct discipline *d, enum record_status status, int64_t off2,
		      int64_t delay, struct discipline_out *out, char *err, size_t errlen);

/* Formats @o as the DISCIPLINE_FIELDS columns (no newline); as snprintf. */
int discipline_format(char *buf, size_t len, const struct discipline_out *o);

#endif
