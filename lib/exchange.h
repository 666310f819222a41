/* SPDX-License-Identifier: ISC */
/*
 * exchange.h - reading exchange records for analysis (offsetfit,
 * ntpstages): the one place that finds a tool's columns by name at each
 * #fields, parses them and checks what doc/ntpx-record.5 asks of an
 * exchange, with one error line "FILE:LINE: reason" for the first thing
 * wrong.
 *
 * A tool lists the columns it reads (struct exchange_spec).  The list is
 * the order of the checks, so that a line with two faults is refused for
 * the one the tool names first:
 *
 *   - at each #fields, in list order, a missing t1..t4 as "no column 'tN'
 *     in '#fields'", and the other required columns (seq, status, delay,
 *     off2) together, where the last of them stands: "'#fields' lacks seq
 *     or status", "... lacks one of seq, delay, off2, status";
 *   - on each line, in list order: "bad NAME 'VALUE'" for a field that is
 *     not an integer (seq must have one, not '-'), "unknown status";
 *   - then, when the tool reads delay and off2, that they are there
 *     exactly when t1..t4 are and reproduce them (record_delay,
 *     record_off2); then that an ok record has all of t1..t4;
 *   - last, on ok records only, the columns marked EXCHANGE_OK_ONLY.
 *
 * Built on lib/record.h's reader; the hot path (offsetfit, tens of
 * millions of lines) allocates nothing and parses eight digits at a time.
 * A common line (an ok record, every value there and right) is read in
 * one walk over its bytes; any other goes through record_next() and the
 * checks above in order, so the errors are the same either way.  After a
 * line read in one walk, xr->r's split fields (r.line, r.field[]) are
 * not set: what a tool reads is in xr.
 */
#ifndef NTPX_EXCHANGE_H
#define NTPX_EXCHANGE_H

#include <stdint.h>

#include "record.h"

#define EXCHANGE_MAX_COLS	32

/* What a column is to the reader. */
enum exchange_role {
	EXCHANGE_SEQ,		/* required, an integer (never '-') */
	EXCHANGE_STATUS,	/* required, a status word */
	EXCHANGE_T1,		/* t1..t4: required columns, integer or '-' */
	EXCHANGE_T2,
	EXCHANGE_T3,
	EXCHANGE_T4,
	EXCHANGE_DELAY,		/* required; checked against t1..t4 with off2 */
	EXCHANGE_OFF2,
	EXCHANGE_INT,		/* optional column, integer or '-' */
};

/* Flags of a column. */
#define EXCHANGE_OK_ONLY	1u	/* an EXCHANGE_INT parsed on ok records only */

struct exchange_col {
	const char *name;
	enum exchange_role role;
	unsigned flags;
};

/* Every spec has seq, status and t1..t4, each once. */
struct exchange_spec {
	const struct exchange_col *cols;	/* in the order of the checks */
	int ncols;				/* at most EXCHANGE_MAX_COLS */
	const char *ok_partial;	/* the reason for an ok record without all of t1..t4 */
};

/*
 * The columns of a tool that fits offsets (offsetfit, ntpmesh): an
 * exchange's, every one checked, and true2 where a sim: clock wrote it,
 * optional and parsed on ok records only.  Each one's index in the spec,
 * for xr->idx[], xr->v[] and xr->vhave.
 */
enum exchange_offsets_col {
	EXCHANGE_OFFSETS_SEQ, EXCHANGE_OFFSETS_T1, EXCHANGE_OFFSETS_T2, EXCHANGE_OFFSETS_T3,
	EXCHANGE_OFFSETS_T4, EXCHANGE_OFFSETS_DELAY, EXCHANGE_OFFSETS_OFF2,
	EXCHANGE_OFFSETS_STATUS, EXCHANGE_OFFSETS_TRUE2, EXCHANGE_OFFSETS_NCOLS
};
extern const struct exchange_spec exchange_offsets;

/*
 * The same columns as initialisers, for a tool that reads them and more
 * (ntpmesh --stamps kernel): its own spec's table starts with
 * EXCHANGE_OFFSETS_COLS and puts its columns from EXCHANGE_OFFSETS_NCOLS
 * on, with EXCHANGE_OFFSETS_PARTIAL as its ok_partial.
 */
#define EXCHANGE_OFFSETS_COLS \
	[EXCHANGE_OFFSETS_SEQ] = { "seq", EXCHANGE_SEQ, 0 }, \
	[EXCHANGE_OFFSETS_T1] = { "t1", EXCHANGE_T1, 0 }, \
	[EXCHANGE_OFFSETS_T2] = { "t2", EXCHANGE_T2, 0 }, \
	[EXCHANGE_OFFSETS_T3] = { "t3", EXCHANGE_T3, 0 }, \
	[EXCHANGE_OFFSETS_T4] = { "t4", EXCHANGE_T4, 0 }, \
	[EXCHANGE_OFFSETS_DELAY] = { "delay", EXCHANGE_DELAY, 0 }, \
	[EXCHANGE_OFFSETS_OFF2] = { "off2", EXCHANGE_OFF2, 0 }, \
	[EXCHANGE_OFFSETS_STATUS] = { "status", EXCHANGE_STATUS, 0 }, \
	[EXCHANGE_OFFSETS_TRUE2] = { "true2", EXCHANGE_INT, EXCHANGE_OK_ONLY }
#define EXCHANGE_OFFSETS_PARTIAL	"ok record without all of T1..T4"

/* The value of a column without one ('-', or not in #fields). */
#define EXCHANGE_NONE	INT64_MIN

/* Points into itself once initialised: not to be copied or moved. */
struct exchange_reader {
	struct record_reader r;
	const struct exchange_spec *spec;
	unsigned long generation;	/* of the #fields idx[] was found in */
	int idx[EXCHANGE_MAX_COLS];	/* each spec column's field, -1: none */
	int arith;			/* the spec reads delay and off2 */
	int role_col[EXCHANGE_INT];	/* the spec column of each role, -1: none */
	uint32_t tmask;			/* the vhave bits of t1..t4 */
	/* the plan for the current #fields (exchange.c) */
	int nfast, nlate;
	int fast_field[EXCHANGE_MAX_COLS];	/* integer columns, every line */
	int64_t *fast_dst[EXCHANGE_MAX_COLS];	/* where their values go */
	uint32_t fast_bit[EXCHANGE_MAX_COLS];	/* their vhave bits */
	uint32_t fast_mask;			/* all of them */
	uint8_t late_col[EXCHANGE_MAX_COLS];	/* EXCHANGE_OK_ONLY ones there */
	/* the one walk's plan (exchange.c, walk_line): each field of a line */
	uint8_t walk_kind[RECORD_MAX_FIELDS];	/* skipped, an integer, the status */
	int64_t *walk_dst[RECORD_MAX_FIELDS];	/* where an integer goes */
	uint32_t walk_vhave;			/* vhave when every column has a value */

	/*
	 * The current exchange, after exchange_next() returned 1: seq,
	 * status, t1..t4 (EXCHANGE_NONE without a value, and a bit in have
	 * with one), delay and off2 (EXCHANGE_NONE without), the other
	 * columns in v[] by their index in the spec.
	 */
	struct record_exchange x;
	int64_t delay, off2;		/* ns */
	int64_t v[EXCHANGE_MAX_COLS];	/* ns, or EXCHANGE_NONE */
	uint32_t vhave;			/* bit i: spec column i had a value */

	uint64_t records;		/* data lines read */
	uint64_t checked;		/* of them, delay/off2 checked against t1..t4 */
};

/*
 * Returns 0, or -1: out of memory, or a spec without seq, status and
 * t1..t4 or with more than EXCHANGE_MAX_COLS columns.
 */
int exchange_reader_init(struct exchange_reader *xr, int fd, const char *name,
			 const struct exchange_spec *spec);
void exchange_reader_free(struct exchange_reader *xr);

/*
 * Reads the next exchange.  Returns 1 with xr->x, delay, off2, v[] and
 * vhave set, 0 at the end of the input, -1 with the line in
 * exchange_err(xr).
 */
int exchange_next(struct exchange_reader *xr);

/* For a tool's own checks: sets the error "NAME:LINE: reason", returns -1. */
int exchange_error(struct exchange_reader *xr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline const char *exchange_err(const struct exchange_reader *xr)
{
	return xr->r.err;
}

/*
 * The reader loop every tool that analyses exchanges runs (offsetfit,
 * ntpstages): one input read whole, each exchange handed to @each, the
 * first "#endpoint URL [ADDRESS]" kept as the run's name, and a last line
 * cut short dropped (lib/record.h).  The caller sets spec, each, ctx and
 * on_comment; the rest adds up over the inputs.
 */
struct exchange_input {
	const struct exchange_spec *spec;
	/* Each exchange: 0, or -1 with exchange_error() set, which ends
	   the input with that error. */
	int (*each)(struct exchange_reader *xr, void *ctx);
	void *ctx;
	/* each '#' line too, when set, after #endpoint is looked at */
	void (*on_comment)(void *ctx, const char *line);

	char endpoint[256];		/* the first #endpoint's URL, or "" */
	uint64_t records;		/* data lines read */
	uint64_t checked;		/* of them, delay/off2 checked */
	unsigned cut;			/* inputs whose cut-short last line was dropped */
	/* The line a read returned with: its error after -1, the warning
	   about a dropped line after 1. */
	char msg[320];
};

/*
 * Reads @fd (named @name in messages) to its end.  Returns 0; 1 when a
 * last line cut short was dropped (in->msg says which), the records
 * before it used; -1 with the error in in->msg (a malformed line, one
 * @each refused, out of memory): the exchanges before it were handed on.
 */
int exchange_read(struct exchange_input *in, int fd, const char *name);

#endif
