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

/* The first "#endpoint URL [ADDRESS]" names the series (--openmetrics). */
static void on_comment(void *ctx, const char *line)
{
	struct series *s = ctx;

	if (!s->endpoint[0] && strncmp(line, "#endpoint ", 10) == 0)
		snprintf(s->endpoint, sizeof(s->endpoint), "%.*s", (int)strcspn(line + 10, " "),
			 line + 10);
}

/* Reads one input; returns 0 or -1 with the error printed. */
int series_read(int fd, const char *name, struct series *s)
{
	struct exchange_reader xr;
	int rc;

	if (exchange_reader_init(&xr, fd, name, &exchange_offsets)) {
		ntpx_err("out of memory");
		return -1;
	}
	xr.r.on_comment = on_comment;
	xr.r.ctx = s;
	while ((rc = exchange_next(&xr)) == 1) {
		const struct record_exchange *x = &xr.x;

		s->status[x->status]++;
		if ((x->have & 1) && !s->have_t0) {
			s->t0 = x->t[0];
			s->have_t0 = 1;
		}
		if (x->status != RECORD_OK)
			continue;
		if ((s->n == s->cap && grow(s)) ||
		    (xr.idx[EXCHANGE_OFFSETS_TRUE2] >= 0 && want_truth(s))) {
			ntpx_err("out of memory after %zu records", s->n);
			exchange_reader_free(&xr);
			return -1;
		}
		/* Modulo 2^64, as record_delay(): a T1 is whatever a file holds. */
		s->t[s->n] = ntpx_ns_to_sec((double)(int64_t)((uint64_t)x->t[0] - (uint64_t)s->t0));
		s->off[s->n] = (double)xr.off2 / 2;
		s->delay[s->n] = (float)xr.delay;
		if (s->truth)
			s->truth[s->n] = NAN;
		if (xr.vhave & (1u << EXCHANGE_OFFSETS_TRUE2)) {
			s->truth[s->n] = (double)xr.v[EXCHANGE_OFFSETS_TRUE2] / 2;
			s->ntruth++;
		}
		s->n++;
	}
	s->records += xr.records;
	s->checked += xr.checked;
	if (rc < 0)
		ntpx_err("%s", exchange_err(&xr));
	exchange_reader_free(&xr);
	return rc < 0 ? -1 : 0;
}
