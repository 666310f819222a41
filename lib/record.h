/* SPDX-License-Identifier: ISC */
/*
 * record.h - the record format (doc/ntpx-record.5): one exchange per text
 * line, fields separated by one space, '#' lines for headers.
 *
 *     #ntpx-record 1
 *     #tool ntpprobe 0.1.0
 *     #endpoint udp://127.0.0.1:12300
 *     #clock realtime
 *     #fields seq t1 t2 t3 t4 delay off2 status
 *     1 1764455329000000000 1764455329000062000 ... 131000 -7000 ok
 *
 * Readers find columns by name from the latest #fields line, never by
 * position, and pass columns they do not know through untouched.
 */
#ifndef NTPX_RECORD_H
#define NTPX_RECORD_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RECORD_VERSION		1
#define RECORD_MAX_FIELDS	64
#define RECORD_MAX_LINE		4096

/* The columns every exchange record has, in this order. */
#define RECORD_BASE_FIELDS	"seq t1 t2 t3 t4 delay off2 status"

enum record_status {
	RECORD_OK,		/* a valid reply; delay and off2 are meaningful */
	RECORD_TIMEOUT,		/* no reply before the timeout */
	RECORD_DROPPED,		/* dropped on purpose before submission (lossinject) */
	RECORD_BOGUS,		/* replies came, none answered this request */
	RECORD_KOD,		/* kiss-o'-death (stratum 0) */
	RECORD_UNSYNCED,	/* leap alarm or stratum 16 */
	RECORD_REFUSED,		/* the peer's port is closed (ICMP) */
	RECORD_ERROR,		/* local send or receive failure */
	RECORD_NSTATUS
};

const char *record_status_name(enum record_status s);
/* Returns the status for @word, or -1 when it is not one. */
int record_status_parse(const char *word);

/* One exchange.  A timestamp is present when its bit is set in @have. */
struct record_exchange {
	uint64_t seq;
	int64_t t[4];		/* t1..t4, ns since the Unix epoch */
	unsigned have;		/* bit i: t[i] present */
	enum record_status status;
};

#define RECORD_HAVE_ALL	0xfu

/*
 * delay = (t4 - t1) - (t3 - t2); off2 = (t2 - t1) + (t3 - t4), modulo
 * 2^64: a reader computes them from whatever a file holds, and a
 * timestamp near INT64_MIN must give a mismatch line, not undefined
 * behaviour (unsigned arithmetic wraps; the conversion back is GCC's and
 * clang's modulo).
 */
static inline int64_t record_delay(const int64_t t[4])
{
	return (int64_t)(((uint64_t)t[3] - (uint64_t)t[0]) - ((uint64_t)t[2] - (uint64_t)t[1]));
}

static inline int64_t record_off2(const int64_t t[4])
{
	return (int64_t)(((uint64_t)t[1] - (uint64_t)t[0]) + ((uint64_t)t[2] - (uint64_t)t[3]));
}

/* Writes the header lines: version, tool, endpoint, clock (each skipped
   when NULL), then "#fields FIELDS".  Returns 0, or -1 with errno that
   of the first write that failed. */
int record_write_header(FILE *f, const char *tool, const char *endpoint,
			const char *clock, const char *fields);

/*
 * Formats the RECORD_BASE_FIELDS columns of @x into @buf without a newline;
 * delay and off2 are written when all four timestamps are present.
 * Returns the length.
 */
int record_format(char *buf, size_t len, const struct record_exchange *x);

/*
 * The reader.  It owns a buffer over a file descriptor and hands out one
 * data line at a time, split into fields that point into its buffer (valid
 * until the next call).
 */
struct record_reader {
	int fd;
	const char *name;		/* for error lines */
	unsigned long lineno;
	char *buf;
	size_t cap, pos, end;
	int eof;

	int version;			/* 0 until #ntpx-record */
	int ncols;			/* 0 until #fields */
	char *colnames[RECORD_MAX_FIELDS];
	char colbuf[RECORD_MAX_LINE + 16];	/* +16: see split() */
	unsigned long generation;	/* bumped on each #fields */

	/* the current data line */
	char *line;			/* NUL-terminated, fields split by NULs */
	size_t linelen;			/* before splitting */
	int nf;
	/* +16: fast_line() counts the fields of 16 bytes before it checks */
	char *field[RECORD_MAX_FIELDS + 16];
	uint16_t flen[RECORD_MAX_FIELDS + 16];	/* strlen(field[i]) */

	/* called with each '#' line (without its newline) when set */
	void (*on_comment)(void *ctx, const char *line);
	void *ctx;

	char err[320];			/* "NAME:LINE: reason" after -1 */
	/*
	 * The line of a last line cut short (no newline: its writer was
	 * killed mid-line), which record_next() dropped, or 0; then
	 * r->warn is "NAME:LINE: last line cut short (no newline): dropped".
	 */
	unsigned long cut;
	char warn[320];
};

int record_reader_init(struct record_reader *r, int fd, const char *name);
void record_reader_free(struct record_reader *r);

/*
 * Reads up to the next data line.  Returns 1 with r->field[] set, 0 at the
 * end of the input (a last line cut short is dropped there: r->cut), -1
 * with r->err set: a malformed header, a data line before #fields, a
 * field count unlike the header's, an empty field, a NUL byte, a line too
 * long, or a read error.
 */
int record_next(struct record_reader *r);

/*
 * SIGINT as the end of the input, not of the tool (doc/ntpx.7), for every
 * tool that reads records: in "ntpprobe | offsetfit" a ^C reaches both,
 * the probe finishes its last line and closes the pipe, and the reader
 * prints what it read.  When standard input is not a terminal this
 * catches SIGINT; after one, a reader takes what its input still holds
 * and whatever comes while it keeps coming, and its input ends at the end
 * of file, after RECORD_SIGINT_QUIET_MS with nothing new (a writer that
 * ignores the ^C), or at a second SIGINT.  When standard input is a
 * terminal, SIGINT keeps its default action: the tool stops at once.
 */
#define RECORD_SIGINT_QUIET_MS	1000
void record_sigint_ends_input(void);

/*
 * For a reader that walks a line its own way (lib/exchange.c): the bytes
 * in the buffer from the next line on, without reading more, and their
 * count in *avail, at most RECORD_MAX_LINE (a line must end with a
 * newline within them); readable RECORD_SLACK bytes past that.  NULL
 * before #fields or with nothing in the buffer: record_next() then.
 */
#define RECORD_SLACK	16
static inline char *record_peek(const struct record_reader *r, size_t *avail)
{
	size_t n = r->end - r->pos;

	if (!r->ncols || !n)
		return NULL;
	*avail = n < RECORD_MAX_LINE ? n : RECORD_MAX_LINE;
	return r->buf + r->pos;
}

/*
 * Takes the data line of @len bytes (its newline not counted) that starts
 * at record_peek(), as record_next() would have: the line count and the
 * position move on.  The line is not split: r->line and r->field[] are
 * not set (r->nf is 0).
 */
static inline void record_take(struct record_reader *r, size_t len)
{
	r->lineno++;
	r->pos += len + 1;
	r->line = NULL;
	r->linelen = len;
	r->nf = 0;
}

/* The index of column @name in the current header, or -1. */
int record_col(const struct record_reader *r, const char *name);

/*
 * Parses an integer field: an optional '-' and 1 to 19 decimal digits
 * that fit int64.  Returns 1 with *v set, 0 for "-" (no value), -1 for
 * anything else.
 */
int record_parse_i64(const char *s, int64_t *v);

/*
 * The value of eight decimal digits in @w, the first in the lowest byte,
 * unchecked; a NUL byte counts as a '0' (Lemire's SWAR method).
 */
static inline uint64_t record_eight_value(uint64_t w)
{
	w = (w & 0x0f0f0f0f0f0f0f0fULL) * 2561 >> 8;
	w = (w & 0x00ff00ff00ff00ffULL) * 6553601 >> 16;
	return (w & 0x0000ffff0000ffffULL) * 42949672960001ULL >> 32;
}

/* Eight ASCII digits in @w, the first in the lowest byte: 1 when they
   all are digits, their value in *v. */
static inline int record_eight_digits(uint64_t w, uint64_t *v)
{
	if (((w & 0xf0f0f0f0f0f0f0f0ULL) |
	     (((w + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) >> 4)) !=
	    0x3333333333333333ULL)
		return 0;
	*v = record_eight_value(w);
	return 1;
}

#ifdef __SSE2__
#include <emmintrin.h>

/*
 * The value of sixteen digits, 0 to 9 each, in the bytes of @d, unchecked.
 * SSE2 only: bytes to 16-bit lanes, then pairs, quads and octets summed
 * with pmaddwd (10, 100, 10000 as the multipliers).
 */
static inline uint64_t record_sixteen_value(__m128i d)
{
	const __m128i zero = _mm_setzero_si128();
	__m128i lo, hi, p;

	lo = _mm_madd_epi16(_mm_unpacklo_epi8(d, zero), _mm_setr_epi16(10, 1, 10, 1, 10, 1, 10, 1));
	hi = _mm_madd_epi16(_mm_unpackhi_epi8(d, zero), _mm_setr_epi16(10, 1, 10, 1, 10, 1, 10, 1));
	p = _mm_madd_epi16(_mm_packs_epi32(lo, hi),
			   _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
	p = _mm_madd_epi16(_mm_packs_epi32(p, p),
			   _mm_setr_epi16(10000, 1, 10000, 1, 0, 0, 0, 0));
	return (uint64_t)(uint32_t)_mm_cvtsi128_si32(p) * 100000000 +
	       (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(p, 4));
}

/* Which of the 16 bytes at @s are ASCII digits: bit i for s[i]. */
static inline unsigned record_digit_mask(const char *s)
{
	const __m128i nine = _mm_set1_epi8(9);
	__m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)s),
				 _mm_set1_epi8('0'));

	/* Unsigned: anything below '0' wrapped above 9 too. */
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(d, nine), nine));
}

/* Sixteen ASCII digits at @s: 1 when they all are digits, their value in *v. */
static inline int record_sixteen_digits(const char *s, uint64_t *v)
{
	if (record_digit_mask(s) != 0xffff)
		return 0;
	*v = record_sixteen_value(_mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)s),
					       _mm_set1_epi8('0')));
	return 1;
}
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * record_parse_i64() of the @len bytes at @s (not NUL-terminated; len >=
 * 1).  Inline and eight digits at a time: offsetfit calls it seven times
 * a line, tens of millions of times.  The bytes are read as whole words:
 * up to 15 past s + len must be readable (the reader's buffer has them).
 */
#define RECORD_HAVE_I64	1
static inline __attribute__((always_inline)) int
record_i64(const char *s, size_t len, int64_t *v)
{
	static const uint64_t pow10[8] = { 1, 10, 100, 1000, 10000, 100000, 1000000,
					   10000000 };
	size_t n = 0, rem;
	uint64_t u = 0, w, x;
	int neg = 0;

	if (s[0] == '-') {
		if (len == 1)
			return 0;
		neg = 1;
		s++;
		len--;
	}
	/* 19 digits never overflow 64 bits (10^19 - 1 < 2^64): check once. */
	if (len == 0 || len > 19)
		return -1;
	/* Up to seven digits (seq, delay, most off2): one word, no overflow. */
	if (len < 8) {
		memcpy(&w, s, 8);
		w = w << (8 - len) * 8 | 0x3030303030303030ULL >> len * 8;
		if (!record_eight_digits(w, &x))
			return -1;
		*v = neg ? -(int64_t)x : (int64_t)x;
		return 1;
	}
#ifdef __SSE2__
	/*
	 * Timestamps in ns since 1970 have 19 digits (from 2001 to 2286):
	 * the last sixteen at once, the first three by hand (each a digit,
	 * tested without a branch of its own), no shift to compute.
	 */
	if (len == 19) {
		unsigned d0 = (unsigned char)s[0] - '0', d1 = (unsigned char)s[1] - '0',
			 d2 = (unsigned char)s[2] - '0';

		if ((d0 > 9) | (d1 > 9) | (d2 > 9) || !record_sixteen_digits(s + 3, &x))
			return -1;
		u = (d0 * 100 + d1 * 10 + d2) * 10000000000000000ULL + x;
		if (u > (uint64_t)INT64_MAX + (uint64_t)neg)
			return -1;
		*v = neg ? (int64_t)(0 - u) : (int64_t)u;
		return 1;
	}
	if (len >= 16) {
		if (!record_sixteen_digits(s, &u))
			return -1;
		n = 16;
	}
#endif
	for (; n + 8 <= len; n += 8) {
		memcpy(&w, s + n, 8);
		if (!record_eight_digits(w, &x))
			return -1;
		u = u * 100000000 + x;
	}
	rem = len - n;
	if (rem) {
		/* The rem digits move to the top; '0's fill in below them. */
		memcpy(&w, s + n, 8);
		w = w << (8 - rem) * 8 | 0x3030303030303030ULL >> rem * 8;
		if (!record_eight_digits(w, &x))
			return -1;
		u = u * pow10[rem] + x;
	}
	if (u > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -1;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 1;
}
#endif

/* record_parse_i64() of field @i of the current line (record_i64()). */
static inline __attribute__((always_inline)) int
record_field_i64(const struct record_reader *r, int i, int64_t *v)
{
#ifdef RECORD_HAVE_I64
	return record_i64(r->field[i], r->flen[i], v);
#else
	return record_parse_i64(r->field[i], v);
#endif
}

/* Sets r->err to "NAME:LINE: reason" and returns -1. */
int record_error(struct record_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
