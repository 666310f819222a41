/* SPDX-License-Identifier: ISC */
/*
 * exchange.c - exchange records read and checked for a tool's columns
 * (exchange.h has the order of the checks and their error lines).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exchange.h"

static const struct exchange_col offsets_cols[EXCHANGE_OFFSETS_NCOLS] = {
	EXCHANGE_OFFSETS_COLS
};

const struct exchange_spec exchange_offsets = {
	offsets_cols, EXCHANGE_OFFSETS_NCOLS, EXCHANGE_OFFSETS_PARTIAL
};

int exchange_reader_init(struct exchange_reader *xr, int fd, const char *name,
			 const struct exchange_spec *spec)
{
	int i;

	memset(xr, 0, sizeof(*xr));
	if (spec->ncols > EXCHANGE_MAX_COLS)
		return -1;
	xr->spec = spec;
	for (i = 0; i < EXCHANGE_INT; i++)
		xr->role_col[i] = -1;
	for (i = 0; i < spec->ncols; i++)
		if (spec->cols[i].role != EXCHANGE_INT)
			xr->role_col[spec->cols[i].role] = i;
	for (i = EXCHANGE_SEQ; i <= EXCHANGE_T4; i++)
		if (xr->role_col[i] < 0)
			return -1;
	xr->arith = xr->role_col[EXCHANGE_DELAY] >= 0 && xr->role_col[EXCHANGE_OFF2] >= 0;
	for (i = EXCHANGE_T1; i <= EXCHANGE_T4; i++)
		if (xr->role_col[i] >= 0)
			xr->tmask |= 1u << xr->role_col[i];
	return record_reader_init(&xr->r, fd, name);
}

void exchange_reader_free(struct exchange_reader *xr)
{
	record_reader_free(&xr->r);
}

int exchange_error(struct exchange_reader *xr, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return record_error(&xr->r, "%s", msg);
}

static void input_comment(void *ctx, const char *line)
{
	struct exchange_input *in = ctx;

	if (!in->endpoint[0] && strncmp(line, "#endpoint ", 10) == 0)
		snprintf(in->endpoint, sizeof(in->endpoint), "%.*s", (int)strcspn(line + 10, " "),
			 line + 10);
	if (in->on_comment)
		in->on_comment(in->ctx, line);
}

int exchange_read(struct exchange_input *in, int fd, const char *name)
{
	struct exchange_reader xr;
	int rc;

	in->msg[0] = 0;
	if (exchange_reader_init(&xr, fd, name, in->spec)) {
		snprintf(in->msg, sizeof(in->msg), "out of memory");
		return -1;
	}
	xr.r.on_comment = input_comment;
	xr.r.ctx = in;
	while ((rc = exchange_next(&xr)) == 1)
		if (in->each(&xr, in->ctx)) {
			rc = -1;
			break;
		}
	in->records += xr.records;
	in->checked += xr.checked;
	if (rc < 0) {
		snprintf(in->msg, sizeof(in->msg), "%s", exchange_err(&xr));
	} else if (xr.r.cut) {
		snprintf(in->msg, sizeof(in->msg), "%s", xr.r.warn);
		in->cut++;
		rc = 1;
	}
	exchange_reader_free(&xr);
	return rc;
}

static int t_role(enum exchange_role role)
{
	return role >= EXCHANGE_T1 && role <= EXCHANGE_T4;
}

/* seq, status, delay, off2: named together when one is missing. */
static int grouped(enum exchange_role role)
{
	return role != EXCHANGE_INT && !t_role(role);
}

/* "'#fields' lacks seq or status", "... lacks one of seq, delay, off2, status" */
static int lacks(struct exchange_reader *xr)
{
	const struct exchange_spec *s = xr->spec;
	char names[200] = "";
	size_t n = 0;
	int i, k = 0, total = 0;

	for (i = 0; i < s->ncols; i++)
		total += grouped(s->cols[i].role);
	for (i = 0; i < s->ncols; i++) {
		if (!grouped(s->cols[i].role))
			continue;
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      !k ? "" : total == 2 ? " or " : ", ", s->cols[i].name);
		if (n >= sizeof(names))
			n = sizeof(names) - 1;
		k++;
	}
	return record_error(&xr->r, "'#fields' lacks %s%s", total > 2 ? "one of " : "", names);
}

/* Where the value of spec column @i goes (exchange.h). */
static int64_t *value_of(struct exchange_reader *xr, int i)
{
	enum exchange_role role = xr->spec->cols[i].role;

	switch (role) {
	case EXCHANGE_SEQ:
		return (int64_t *)(void *)&xr->x.seq;	/* the same bits */
	case EXCHANGE_T1:
	case EXCHANGE_T2:
	case EXCHANGE_T3:
	case EXCHANGE_T4:
		return &xr->x.t[role - EXCHANGE_T1];
	case EXCHANGE_DELAY:
		return &xr->delay;
	case EXCHANGE_OFF2:
		return &xr->off2;
	case EXCHANGE_STATUS:
	case EXCHANGE_INT:
		break;
	}
	return &xr->v[i];
}

/* What a field of a line is to walk_line(). */
enum { WALK_SKIP, WALK_INT, WALK_OK };

/*
 * The spec's columns in the current #fields, checked in spec order; and
 * the plans for its lines: the integer columns there, parsed at once,
 * and what walk_line() does with each field.
 */
static int find_cols(struct exchange_reader *xr)
{
	const struct exchange_spec *s = xr->spec;
	int i, last = -1, missing = 0;

	xr->generation = xr->r.generation;
	xr->nfast = xr->nlate = 0;
	xr->fast_mask = 0;
	for (i = 0; i < s->ncols; i++) {
		const struct exchange_col *c = &s->cols[i];

		xr->idx[i] = record_col(&xr->r, c->name);
		if (c->role != EXCHANGE_STATUS)
			*value_of(xr, i) = EXCHANGE_NONE;
		if (grouped(c->role))
			last = i;
		if (xr->idx[i] < 0 || c->role == EXCHANGE_STATUS)
			continue;
		if (c->flags & EXCHANGE_OK_ONLY) {
			xr->late_col[xr->nlate++] = (uint8_t)i;
		} else {
			xr->fast_dst[xr->nfast] = value_of(xr, i);
			xr->fast_bit[xr->nfast] = 1u << i;
			xr->fast_mask |= 1u << i;
			xr->fast_field[xr->nfast++] = xr->idx[i];
		}
	}
	memset(xr->walk_kind, WALK_SKIP, sizeof(xr->walk_kind));
	xr->walk_vhave = 0;
	for (i = 0; i < s->ncols; i++) {
		int f = xr->idx[i];

		if (f < 0)
			continue;
		if (s->cols[i].role == EXCHANGE_STATUS) {
			xr->walk_kind[f] = WALK_OK;
		} else {
			xr->walk_kind[f] = WALK_INT;
			xr->walk_dst[f] = value_of(xr, i);
			xr->walk_vhave |= 1u << i;
		}
	}
	for (i = 0; i < s->ncols; i++) {
		const struct exchange_col *c = &s->cols[i];

		if (t_role(c->role) && xr->idx[i] < 0)
			return record_error(&xr->r, "no column '%s' in '#fields'", c->name);
		if (grouped(c->role) && xr->idx[i] < 0)
			missing = 1;
		if (i == last && missing)
			return lacks(xr);
	}
	return 0;
}

/* The status word of field @f, or -1. */
static inline int status_of(const struct record_reader *r, int f)
{
	/* "ok" is nearly every line: spare it the table. */
	return r->flen[f] == 2 && r->field[f][0] == 'o' && r->field[f][1] == 'k' ?
	       RECORD_OK : record_status_parse(r->field[f]);
}

/* Spec column @i of the current line into v[i] and vhave: 0, or -1 with the error set. */
static int read_col(struct exchange_reader *xr, int i)
{
	const struct exchange_col *c = &xr->spec->cols[i];
	struct record_reader *r = &xr->r;
	int f = xr->idx[i], k;

	if (c->role == EXCHANGE_STATUS)
		return status_of(r, f) < 0 ?
		       record_error(r, "unknown status '%s'", r->field[f]) : 0;
	int64_t *v = value_of(xr, i);

	*v = EXCHANGE_NONE;
	if (f < 0)
		return 0;
	k = record_field_i64(r, f, v);
	if (k < 0 || (k == 0 && c->role == EXCHANGE_SEQ))
		return record_error(r, "bad %s '%s'", c->name, r->field[f]);
	if (k == 0)
		*v = EXCHANGE_NONE;
	else
		xr->vhave |= 1u << i;
	return 0;
}

/*
 * A line refused by the fast pass: which of its faults the spec names
 * first.  -1 with the error set.
 */
static int first_fault(struct exchange_reader *xr)
{
	int i;

	for (i = 0; i < xr->spec->ncols; i++)
		if (!(xr->spec->cols[i].flags & EXCHANGE_OK_ONLY) && read_col(xr, i))
			return -1;
	return 0;
}

#if defined(__SSE2__) && defined(RECORD_HAVE_I64)
#define WALK	1
/*
 * The field of @len bytes at @p, field @f of its line: 1 when it is as
 * the plan wants it.  A NUL byte is refused here, field by field: an
 * integer or "ok" has none by what it is, so only a field passed over is
 * looked through (16 bytes at a time, up to 15 past it).
 */
static inline int walk_field(struct exchange_reader *xr, const char *p, size_t len, int f)
{
	size_t k;

	if (!len)
		return 0;
	if (xr->walk_kind[f] == WALK_INT)
		return record_i64(p, len, xr->walk_dst[f]) == 1;
	if (xr->walk_kind[f] == WALK_OK)
		return len == 2 && p[0] == 'o' && p[1] == 'k';
	for (k = 0; k < len; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + k));
		unsigned nul = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()));

		if (len - k < 16)
			nul &= (1u << (len - k)) - 1;
		if (nul)
			return 0;
	}
	return 1;
}

/*
 * The one walk.  A line is nearly always an ok record with every value
 * there and right.  record_next() splits a line into fields (a pointer
 * and a length for each, and a NUL after it), and then exchange_next()'s
 * fast pass finds the integer columns among them; walk_line() does both in
 * one go, by a plan made at #fields (find_cols): for each field of the
 * line, an integer column and where its value goes, the status, or a
 * field to pass over.  The ends of the fields come from 16 bytes at a
 * time, at addresses that do not depend on the data, and each field is
 * parsed, or looked at, once, as its end is found.  (Finding each end
 * from the field's own digits instead made every field wait for the one
 * before it, and was slower than the two passes.)
 *
 * It only takes a line it can see is right: the fields the header names,
 * one space between them, the newline within RECORD_MAX_LINE bytes, no
 * NUL (walk_field), no carriage return before the newline, no empty field; each
 * integer column an integer (record_i64(); not "-", no value), the status
 * "ok", and delay and off2 that reproduce T1..T4.  For anything else it
 * returns 0, having taken nothing, and the line goes the long way, which
 * finds its error and says it as ever.  What it wrote into xr by then is
 * all written again on that way.
 */
static int walk_line(struct exchange_reader *xr)
{
	const __m128i spaces = _mm_set1_epi8(' '), nls = _mm_set1_epi8('\n');
	struct record_reader *r = &xr->r;
	size_t avail, base, start = 0, pos;
	const char *s = record_peek(r, &avail);
	int n = 0;

	if (!s || xr->generation != r->generation || s[0] == '#' || s[0] == '\n')
		return 0;
	for (base = 0;; base += 16) {
		__m128i v;
		unsigned sp, nl;

		if (base >= avail)
			return 0;	/* no newline yet, or a line too long */
		v = _mm_loadu_si128((const __m128i *)(const void *)(s + base));
		sp = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, spaces));
		nl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nls));
		if (avail - base < 16) {
			unsigned live = (1u << (avail - base)) - 1;

			sp &= live;
			nl &= live;
		}
		if (nl) {
			/* the bits up to the first newline, and it */
			nl &= -nl;
			sp &= nl - 1;
		}
		/* each field as its end is found (a space, or the newline) */
		for (sp |= nl; sp; sp &= sp - 1) {
			pos = base + (size_t)__builtin_ctz(sp);
			if (n == r->ncols || !walk_field(xr, s + start, pos - start, n))
				return 0;
			n++;
			start = pos + 1;
		}
		if (nl)
			break;
	}
	/* the newline at start - 1, and s[0] is not it: start >= 2 */
	if (n != r->ncols || s[start - 2] == '\r')
		return 0;
	if (xr->arith) {
		if (xr->delay != record_delay(xr->x.t) || xr->off2 != record_off2(xr->x.t))
			return 0;
		xr->checked++;
	}
	xr->x.status = RECORD_OK;
	xr->x.have = RECORD_HAVE_ALL;
	xr->vhave = xr->walk_vhave;
	xr->records++;
	record_take(r, start - 1);
	return 1;
}
#endif

int exchange_next(struct exchange_reader *xr)
{
	const struct exchange_spec *s = xr->spec;
	struct record_reader *r = &xr->r;
	const int *rc_ = xr->role_col;
	const int *ff = xr->fast_field;
	const uint32_t *bit = xr->fast_bit;
	int64_t *const *dst = xr->fast_dst;
	uint32_t vhave = 0;
	int rc, i, j, n, st, hd, ho, acc = 0;

#ifdef WALK
	if (walk_line(xr))
		return 1;
#endif
	rc = record_next(r);
	if (rc != 1)
		return rc;
	if (xr->generation != r->generation && find_cols(xr))
		return -1;
	xr->records++;
	n = xr->nfast;	/* the plan, once the header is known */
	/*
	 * The fast pass: every integer column at once, no branch on the
	 * result (k is -1, 0 or 1: acc goes negative on a bad field, and -k
	 * masks in a value given); only a line that fails it is walked in
	 * the spec's order (first_fault).  The first eight columns each have
	 * a copy of the parser of their own, as they had when offsetfit read
	 * them by hand: the branch predictor then learns each column apart
	 * (19-digit stamps, short delays), where one loop would mix them up
	 * (a tenth of offsetfit's time).
	 */
#define FAST(j) do {								\
		int k = record_field_i64(r, ff[j], dst[j]);			\
										\
		acc |= k;							\
		vhave |= bit[j] & -(uint32_t)k;					\
	} while (0)
	switch (n < 8 ? n : 8) {
	case 8: FAST(7);	/* fall through */
	case 7: FAST(6);	/* fall through */
	case 6: FAST(5);	/* fall through */
	case 5: FAST(4);	/* fall through */
	case 4: FAST(3);	/* fall through */
	case 3: FAST(2);	/* fall through */
	case 2: FAST(1);	/* fall through */
	case 1: FAST(0);	/* fall through */
	default: break;
	}
	for (j = 8; j < n; j++)
		FAST(j);
#undef FAST
	st = status_of(r, xr->idx[rc_[EXCHANGE_STATUS]]);
	if (acc < 0 || st < 0 || !(vhave >> rc_[EXCHANGE_SEQ] & 1)) {
		xr->vhave = 0;
		if (first_fault(xr))
			return -1;
		vhave = xr->vhave;	/* not reached: each fault is found again */
	}
	xr->vhave = vhave;
	xr->x.status = (enum record_status)st;
	/* Nearly every line has a value in every column (t1..t4 among them). */
	if (vhave == xr->fast_mask) {
		xr->x.have = RECORD_HAVE_ALL;
		hd = ho = 1;
	} else {
		for (j = 0; j < n; j++)		/* a '-': no value */
			if (!(vhave & bit[j]))
				*dst[j] = EXCHANGE_NONE;
		xr->x.have = 0;
		for (j = 0; j < 4; j++)
			xr->x.have |= (vhave >> rc_[EXCHANGE_T1 + j] & 1) << j;
		hd = xr->arith && (vhave >> rc_[EXCHANGE_DELAY] & 1);
		ho = xr->arith && (vhave >> rc_[EXCHANGE_OFF2] & 1);
	}
	if (xr->arith) {
		if (xr->x.have == RECORD_HAVE_ALL) {
			if (!hd || !ho)
				return record_error(r, "T1..T4 present but delay or off2 missing");
			if (xr->delay != record_delay(xr->x.t) || xr->off2 != record_off2(xr->x.t))
				return record_error(r, "delay/off2 %lld/%lld do not match T1..T4 "
						    "(%lld/%lld)", (long long)xr->delay,
						    (long long)xr->off2,
						    (long long)record_delay(xr->x.t),
						    (long long)record_off2(xr->x.t));
			xr->checked++;
		} else if (hd || ho) {
			return record_error(r, "delay or off2 given without all of T1..T4");
		}
	}
	if (st == RECORD_OK && xr->x.have != RECORD_HAVE_ALL)
		return record_error(r, "%s", s->ok_partial);
	for (j = 0; j < xr->nlate; j++) {
		i = xr->late_col[j];
		if (st != RECORD_OK)
			xr->v[i] = EXCHANGE_NONE;
		else if (read_col(xr, i))
			return -1;
	}
	return 1;
}
