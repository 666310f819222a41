/* SPDX-License-Identifier: ISC */
/*
 * input.c - ntpstages' records: the ok exchanges' stamps, each present or
 * NONE, kept in the order they came.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "ntpstages.h"
#include "util_private.h"

/*
 * What ntpstages reads, in the order of the checks (lib/exchange.h): seq,
 * status, then the stamps in the order of enum st; stamp i is column
 * C_STAMP + i.
 */
#define C_STAMP		2
#define OK_PARTIAL	"an ok record without t1..t4"

static const struct exchange_col cols[C_STAMP + S_N] = {
	{ "seq", EXCHANGE_SEQ, 0 },
	{ "status", EXCHANGE_STATUS, 0 },
	[C_STAMP + S_T1] = { "t1", EXCHANGE_T1, 0 },
	[C_STAMP + S_T1Q] = { "t1q", EXCHANGE_INT, 0 },
	[C_STAMP + S_T1K] = { "t1k", EXCHANGE_INT, 0 },
	[C_STAMP + S_T1H] = { "t1h", EXCHANGE_INT, 0 },
	[C_STAMP + S_T2H] = { "t2h", EXCHANGE_INT, 0 },
	[C_STAMP + S_T2K] = { "t2k", EXCHANGE_INT, 0 },
	[C_STAMP + S_T2] = { "t2", EXCHANGE_T2, 0 },
	[C_STAMP + S_T3] = { "t3", EXCHANGE_T3, 0 },
	[C_STAMP + S_T3Q] = { "t3q", EXCHANGE_INT, 0 },
	[C_STAMP + S_T3K] = { "t3k", EXCHANGE_INT, 0 },
	[C_STAMP + S_T3H] = { "t3h", EXCHANGE_INT, 0 },
	[C_STAMP + S_T4H] = { "t4h", EXCHANGE_INT, 0 },
	[C_STAMP + S_T4K] = { "t4k", EXCHANGE_INT, 0 },
	[C_STAMP + S_T4] = { "t4", EXCHANGE_T4, 0 },
};

static const struct exchange_spec spec = {
	cols, ARRAY_SIZE(cols), OK_PARTIAL
};

const char *st_name(enum st s)
{
	return cols[C_STAMP + s].name;
}

static int keep(struct input *in, uint64_t seq, const int64_t *x)
{
	if (in->n == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 4096;
		void *a = realloc(in->x, cap * sizeof(*in->x));
		void *b;

		if (!a)
			return -1;
		in->x = a;
		b = realloc(in->seq, cap * sizeof(*in->seq));
		if (!b)
			return -1;
		in->seq = b;
		in->cap = cap;
	}
	memcpy(in->x[in->n], x, sizeof(in->x[0]));
	in->seq[in->n++] = seq;
	return 0;
}

/* Each exchange of an input (lib/exchange.h, exchange_read). */
static int each(struct exchange_reader *xr, void *ctx)
{
	struct input *in = ctx;
	/* A stamp without a value is EXCHANGE_NONE, which is NONE. */
	int64_t *x = xr->v + C_STAMP;

	if (xr->x.status != RECORD_OK)
		return 0;
	/* t1..t4 come in xr->x, the other stamps in v[]. */
	x[S_T1] = xr->x.t[0];
	x[S_T2] = xr->x.t[1];
	x[S_T3] = xr->x.t[2];
	x[S_T4] = xr->x.t[3];
	/* NONE marks a missing stamp: one of INT64_MIN reads as one too. */
	if (x[S_T1] == NONE || x[S_T2] == NONE || x[S_T3] == NONE || x[S_T4] == NONE)
		return exchange_error(xr, OK_PARTIAL);
	if (keep(in, xr->x.seq, x))
		return exchange_error(xr, "out of memory");
	return 0;
}

/*
 * Reads one input; returns 0 (a last line cut short dropped with its
 * warning printed, and counted in in->cut) or -1 with the error printed.
 */
int input_read(int fd, const char *name, struct input *in)
{
	struct exchange_input xin = { .spec = &spec, .each = each, .ctx = in };
	int rc = exchange_read(&xin, fd, name);

	in->records += xin.records;
	if (!in->endpoint[0])
		memcpy(in->endpoint, xin.endpoint, sizeof(in->endpoint));
	if (rc)
		ntpx_err("%s", xin.msg);
	in->cut += xin.cut;
	return rc < 0 ? -1 : 0;
}
