/* SPDX-License-Identifier: ISC */
/*
 * input.c - offsetfit's records into struct series: every record counted
 * by status, the ok ones kept as t, offset, delay (and the truth).
 *
 * Every record's delay and off2 must reproduce the T1..T4 arithmetic
 * exactly; a record that does not is malformed input, like any other, and
 * ends the run with an error naming the file and line before anything is
 * printed (lib/exchange.c checks).
 *
 * Memory: 20 bytes per ok record (28 with true2): t and offset as doubles,
 * the delay as a float (exact to the nanosecond below 16.7 ms, to 6e-8 of
 * itself above: far below what a quantile of delays can tell).  The
 * quantiles are taken by selection in place, in arrays that the fit no
 * longer needs, so nothing else grows with the input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include "opt.h"
#include "offsetfit.h"

static int grow(struct series *s)
{
	/*
	 * Doubling through realloc: glibc moves large blocks with mremap, so
	 * growth copies nothing and only touched pages count as memory.
	 */
	size_t cap = s->cap ? s->cap * 2 : 4096;
	double *t = realloc(s->t, cap * sizeof(double));
	float *d;

	if (!t)
		return -1;
	s->t = t;
	t = realloc(s->off, cap * sizeof(double));
	if (!t)
		return -1;
	s->off = t;
	d = realloc(s->delay, cap * sizeof(float));
	if (!d)
		return -1;
	s->delay = d;
	if (s->truth) {
		t = realloc(s->truth, cap * sizeof(double));
		if (!t)
			return -1;
		s->truth = t;
	}
	s->cap = cap;
	return 0;
}

/* The first true2 column: from now on the series keeps the truth. */
static int want_truth(struct series *s)
{
	size_t i;

	if (s->truth || !s->cap)
		return 0;
	s->truth = malloc(s->cap * sizeof(double));
	if (!s->truth)
		return -1;
	for (i = 0; i < s->n; i++)
		s->truth[i] = NAN;
	return 0;
}

/*
 * A step between ok records i - 1 and i.  Each exchange's true offset
 * lies within half its delay of the measured one (whatever the path's
 * asymmetry), so consecutive exchanges whose intervals, each widened by
 * STEP_RATE_PPM over the time between them, do not overlap cannot be
 * the same clock running on: it was stepped in between.
 */
static int stepped(const struct series *s, size_t i)
{
	double gap = ntpx_sec_to_ns(fabs(s->t[i] - s->t[i - 1]));
	double reach = ((double)s->delay[i] + (double)s->delay[i - 1]) / 2 +
		       STEP_RATE_PPM * 1e-6 * gap;

	return fabs(s->off[i] - s->off[i - 1]) > reach;
}

void series_last_segment(struct series *s)
{
	size_t i, k = s->seg, n = s->n - k;
	double t0;

	if (!k)
		return;
	t0 = s->t[k];
	s->ntruth = 0;
	for (i = 0; i < n; i++) {
		s->t[i] = s->t[k + i] - t0;
		s->off[i] = s->off[k + i];
		s->delay[i] = s->delay[k + i];
		if (s->truth) {
			s->truth[i] = s->truth[k + i];
			s->ntruth += !isnan(s->truth[i]);
		}
	}
	s->before = k;
	s->n = n;
	s->seg = 0;
}

/* A "#reset" line: the server found again may be another clock. */
static void on_comment(void *ctx, const char *line)
{
	struct series *s = ctx;

	if (strncmp(line, "#reset", 6) == 0 && (line[6] == ' ' || !line[6]))
		s->reset = 1;
}

/* Each exchange of an input (lib/exchange.h, exchange_read). */
static int each(struct exchange_reader *xr, void *ctx)
{
	struct series *s = ctx;
	const struct record_exchange *x = &xr->x;

	s->status[x->status]++;
	if ((x->have & 1) && !s->have_t0) {
		s->t0 = x->t[0];
		s->have_t0 = 1;
	}
	if (x->status != RECORD_OK)
		return 0;
	if ((s->n == s->cap && grow(s)) ||
	    (xr->idx[EXCHANGE_OFFSETS_TRUE2] >= 0 && want_truth(s)))
		return exchange_error(xr, "out of memory after %zu records", s->n);
	/* Modulo 2^64, as record_delay(): a T1 is whatever a file holds. */
	s->t[s->n] = ntpx_ns_to_sec((double)(int64_t)((uint64_t)x->t[0] - (uint64_t)s->t0));
	s->off[s->n] = (double)xr->off2 / 2;
	s->delay[s->n] = (float)xr->delay;
	if (s->truth)
		s->truth[s->n] = NAN;
	if (xr->vhave & (1u << EXCHANGE_OFFSETS_TRUE2)) {
		s->truth[s->n] = (double)xr->v[EXCHANGE_OFFSETS_TRUE2] / 2;
		s->ntruth++;
	}
	if (s->n && (s->reset || stepped(s, s->n))) {
		s->steps++;
		s->seg = s->n;
	}
	s->reset = 0;
	s->n++;
	return 0;
}

/*
 * Reads one input; returns 0 (a last line cut short dropped with its
 * warning printed, and counted in s->cut) or -1 with the error printed.
 */
int series_read(int fd, const char *name, struct series *s)
{
	struct exchange_input in = { .spec = &exchange_offsets, .each = each, .ctx = s,
				     .on_comment = on_comment };
	int rc = exchange_read(&in, fd, name);

	s->records += in.records;
	s->checked += in.checked;
	if (!s->endpoint[0])
		memcpy(s->endpoint, in.endpoint, sizeof(s->endpoint));
	if (rc)
		ntpx_err("%s", in.msg);
	s->cut += in.cut;
	return rc < 0 ? -1 : 0;
}
