/* SPDX-License-Identifier: ISC */
/*
 * record.c - writing and reading the record format.
 *
 * The reader is on offsetfit's hot path (millions of lines a second), so
 * it reads large blocks with read(2), finds and splits a data line in
 * one scan (fast_line(); memchr and split() for the rest) in place;
 * nothing is copied or allocated per line.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "version.h"

static const char *const status_names[RECORD_NSTATUS] = {
	[RECORD_OK] = "ok",
	[RECORD_TIMEOUT] = "timeout",
	[RECORD_DROPPED] = "dropped",
	[RECORD_BOGUS] = "bogus",
	[RECORD_KOD] = "kod",
	[RECORD_UNSYNCED] = "unsynced",
	[RECORD_REFUSED] = "refused",
	[RECORD_ERROR] = "error",
};

const char *record_status_name(enum record_status s)
{
	return (unsigned)s < RECORD_NSTATUS ? status_names[s] : "error";
}

int record_status_parse(const char *word)
{
	int i;

	/* "ok" first: it is nearly every line. */
	for (i = 0; i < RECORD_NSTATUS; i++)
		if (strcmp(word, status_names[i]) == 0)
			return i;
	return -1;
}

int record_write_header(FILE *f, const char *tool, const char *endpoint,
			const char *clock, const char *fields)
{
	int err = 0;

	/* The first failure's errno is the cause: later writes may change it. */
	if (fprintf(f, "#ntpx-record %d\n", RECORD_VERSION) < 0 && !err)
		err = errno;
	if (tool && fprintf(f, "#tool %s %s\n", tool, NTPX_VERSION) < 0 && !err)
		err = errno;
	if (endpoint && fprintf(f, "#endpoint %s\n", endpoint) < 0 && !err)
		err = errno;
	if (clock && fprintf(f, "#clock %s\n", clock) < 0 && !err)
		err = errno;
	if (fprintf(f, "#fields %s\n", fields) < 0 && !err)
		err = errno;
	if (!err)
		return 0;
	errno = err;
	return -1;
}

static char *put_i64(char *p, int64_t v)
{
	char tmp[24];
	int n = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*p++ = '-';
	while (n)
		*p++ = tmp[--n];
	return p;
}

int record_format(char *buf, size_t len, const struct record_exchange *x)
{
	/* At most 20 + 6 * 21 + 9 characters: never more than 160. */
	char tmp[192], *p = tmp;
	int i;

	p = put_i64(p, (int64_t)x->seq);
	for (i = 0; i < 4; i++) {
		*p++ = ' ';
		if (x->have & (1u << i))
			p = put_i64(p, x->t[i]);
		else
			*p++ = '-';
	}
	if ((x->have & RECORD_HAVE_ALL) == RECORD_HAVE_ALL) {
		*p++ = ' ';
		p = put_i64(p, record_delay(x->t));
		*p++ = ' ';
		p = put_i64(p, record_off2(x->t));
	} else {
		memcpy(p, " - -", 4);
		p += 4;
	}
	*p++ = ' ';
	p = stpcpy(p, record_status_name(x->status));
	*p = 0;
	return snprintf(buf, len, "%s", tmp);
}

#define READ_BLOCK	(1 << 20)

int record_reader_init(struct record_reader *r, int fd, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->name = name;
	r->cap = READ_BLOCK + RECORD_MAX_LINE;
	/*
	 * + RECORD_SLACK: split(), fast_line() and lib/exchange.c's walk
	 * (record_peek()) read 16 bytes at a time, up to 15 past a line or
	 * the data read.
	 */
	r->buf = calloc(1, r->cap + 1 + RECORD_SLACK);
	return r->buf ? 0 : -1;
}

void record_reader_free(struct record_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

int record_error(struct record_reader *r, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, sizeof(r->err), "%s:%lu: %s", r->name, r->lineno, msg);
	return -1;
}

static volatile sig_atomic_t sigints;

static void on_sigint(int sig)
{
	(void)sig;
	if (sigints < 2)
		sigints++;
}

void record_sigint_ends_input(void)
{
	/* No SA_RESTART: a read that waits must return to look. */
	struct sigaction sa = { .sa_handler = on_sigint };

	if (isatty(STDIN_FILENO))
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

/*
 * After a SIGINT: 1 when the input has something to read (or its end)
 * within RECORD_SIGINT_QUIET_MS, 0 when it ends here.
 */
static int more_after_sigint(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	for (;;) {
		if (sigints > 1)
			return 0;
		n = poll(&p, 1, RECORD_SIGINT_QUIET_MS);
		if (n > 0)
			return 1;
		if (n == 0)
			return 0;
		if (errno != EINTR)
			return 1;	/* read() says why */
	}
}

/* Makes room and reads more; returns bytes read, 0 at EOF, -1 on error. */
static ssize_t fill(struct record_reader *r)
{
	ssize_t n;

	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->end -= r->pos;
		r->pos = 0;
	}
	for (;;) {
		if (sigints && !more_after_sigint(r->fd))
			return 0;
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (n >= 0 || errno != EINTR)
			break;
	}
	if (n > 0)
		r->end += (size_t)n;
	return n;
}

/*
 * Splits @s (NUL-terminated at s + len, readable 16 bytes past that) in
 * place at single spaces into out[] and their lengths into lens[]; returns
 * the count, -1 for an empty field (two spaces, or a space at either end)
 * or too many fields, -2 for a NUL byte inside the line.
 *
 * This is most of offsetfit's time, so with SSE2 (every x86-64) it finds
 * the spaces and NULs of 16 bytes at once and walks the bit mask: no
 * branch per byte.
 */
#ifdef __SSE2__
#include <emmintrin.h>

static int split(char *s, size_t len, char **out, uint16_t *lens, int max)
{
	const __m128i spaces = _mm_set1_epi8(' '), zeros = _mm_setzero_si128();
	size_t base, start = 0;
	int n = 0;

	for (base = 0;; base += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + base));
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(v, spaces), _mm_cmpeq_epi8(v, zeros)));

		while (m) {
			size_t pos = base + (size_t)__builtin_ctz(m);

			m &= m - 1;
			if (pos == start || n == max)
				return -1;
			out[n] = s + start;
			lens[n++] = (uint16_t)(pos - start);
			if (pos == len)
				return n;
			if (!s[pos])
				return -2;
			s[pos] = 0;
			start = pos + 1;
		}
	}
}
#else
static int split(char *s, size_t len, char **out, uint16_t *lens, int max)
{
	char *p = s, *e = s + len;
	int n = 0;

	for (;;) {
		char *f = p;

		while (*p != ' ' && *p)
			p++;
		if (p == f || n == max)
			return -1;
		out[n] = f;
		lens[n++] = (uint16_t)(p - f);
		if (!*p)
			return p == e ? n : -2;
		*p++ = 0;
	}
}
#endif

static int header_line(struct record_reader *r, char *line, size_t len)
{
	if (strncmp(line, "#ntpx-record", 12) == 0 && (line[12] == ' ' || !line[12])) {
		char *end;
		long v = strtol(line + 12, &end, 10);

		if (line[12] != ' ' || end == line + 13 || *end)
			return record_error(r, "malformed '#ntpx-record' line");
		if (v != RECORD_VERSION)
			return record_error(r, "record version %ld, this reader knows %d", v,
					    RECORD_VERSION);
		r->version = (int)v;
		r->ncols = 0;
	}
	else if (strncmp(line, "#fields", 7) == 0 && (line[7] == ' ' || !line[7])) {
		int i, j, n;

		if (!r->version)
			return record_error(r, "'#fields' before '#ntpx-record'");
		if (line[7] != ' ' || len - 8 >= RECORD_MAX_LINE)
			return record_error(r, "malformed '#fields' line");
		memcpy(r->colbuf, line + 8, len - 8 + 1);
		n = split(r->colbuf, len - 8, r->colnames, r->flen, RECORD_MAX_FIELDS);
		if (n < 0)
			return record_error(r, "malformed '#fields' line (empty or too many names)");
		for (i = 0; i < n; i++)
			for (j = 0; j < i; j++)
				if (strcmp(r->colnames[i], r->colnames[j]) == 0)
					return record_error(r, "column '%s' named twice",
							    r->colnames[i]);
		r->ncols = n;
		r->generation++;
	}
	if (r->on_comment)
		r->on_comment(r->ctx, line);
	return 0;
}

#ifdef __SSE2__
/*
 * The common line in one pass: a data line after #fields, whole in the
 * buffer, found and split by one 16-byte scan, instead of memchr() for
 * the newline and then split().  Returns 1 or -1 as record_next() does,
 * or 0, having changed nothing, for anything else (a header or an empty
 * line, an empty field, a NUL, a carriage return, too many fields, a line
 * too long or not whole in the buffer yet): record_next()'s own way then
 * takes the line and finds the same error, in the same order, as ever.
 *
 * Each 16 bytes give three masks, spaces, newlines and NULs, cut at the
 * first newline: a NUL anywhere before it refuses the line at once, and
 * only the spaces are walked bit by bit (then the newline), each ending a
 * field with a NUL as it is found.  A refused line gets its spaces back.
 * Written so because this scan is a fifth of offsetfit's time: one
 * branch per field and per 16 bytes, no reread of a byte, no second pass
 * to write the NULs.
 */
static int fast_line(struct record_reader *r)
{
	const __m128i spaces = _mm_set1_epi8(' '), nls = _mm_set1_epi8('\n'),
		      zeros = _mm_setzero_si128();
	char *s = r->buf + r->pos;
	size_t avail = r->end - r->pos, base, start = 0, pos;
	int n = 0, i;

	if (s[0] == '#' || s[0] == '\n')
		return 0;
	if (avail > RECORD_MAX_LINE)
		avail = RECORD_MAX_LINE;	/* a newline past it: too long */
	for (base = 0; base < avail; base += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + base));
		unsigned sp = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, spaces));
		unsigned nl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nls));
		unsigned nul = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zeros));

		if (avail - base < 16) {
			unsigned live = (1u << (avail - base)) - 1;

			sp &= live;
			nl &= live;
			nul &= live;
		}
		if (nl) {
			/* the bits up to the first newline, and it alone */
			unsigned line = nl ^ (nl - 1);

			sp &= line;
			nul &= line;
			nl &= line;
		}
		if (nul)
			goto refuse;
		while (sp) {
			pos = base + (size_t)__builtin_ctz(sp);
			sp &= sp - 1;
			if (pos == start)
				goto refuse;
			r->field[n] = s + start;
			r->flen[n++] = (uint16_t)(pos - start);
			s[pos] = 0;
			start = pos + 1;
		}
		/*
		 * A field past these spaces: too many once they reach the
		 * limit.  Checked once for 16 bytes, so up to 15 fields past
		 * the limit are written first (record.h leaves room).
		 */
		if (n >= RECORD_MAX_FIELDS)
			goto refuse;
		if (!nl)
			continue;
		pos = base + (size_t)__builtin_ctz(nl);
		/* pos > 0: a line that starts with its newline was left above */
		if (pos == start || s[pos - 1] == '\r')
			goto refuse;
		r->field[n] = s + start;
		r->flen[n++] = (uint16_t)(pos - start);
		s[pos] = 0;
		r->lineno++;
		r->pos += pos + 1;
		r->line = s;
		r->linelen = pos;
		r->nf = n;
		if (n != r->ncols)
			return record_error(r, "%d fields, the header names %d", n, r->ncols);
		return 1;
	}
refuse:
	for (i = 0; i < n; i++)
		r->field[i][r->flen[i]] = ' ';
	return 0;
}
#endif

int record_next(struct record_reader *r)
{
#ifdef __SSE2__
	if (r->ncols && r->pos < r->end) {
		int rc = fast_line(r);

		if (rc)
			return rc;
	}
#endif
	for (;;) {
		char *line = r->buf + r->pos, *nl;
		size_t len;

		nl = memchr(line, '\n', r->end - r->pos);
		if (!nl) {
			ssize_t n;

			if (r->end - r->pos >= RECORD_MAX_LINE) {
				r->lineno++;
				return record_error(r, "line longer than %d bytes", RECORD_MAX_LINE);
			}
			if (r->eof)
				goto at_end;
			n = fill(r);
			if (n < 0)
				return record_error(r, "read error: %s", strerror(errno));
			if (n == 0)
				r->eof = 1;
			continue;
		}
		r->lineno++;
		len = (size_t)(nl - line);
		*nl = 0;
		r->pos += len + 1;
		if (len >= RECORD_MAX_LINE)
			return record_error(r, "line longer than %d bytes", RECORD_MAX_LINE);
		if (len && line[len - 1] == '\r')
			return record_error(r, "carriage return at end of line");
		if (line[0] == '#') {
			if (header_line(r, line, len))
				return -1;
			continue;
		}
		if (!len)
			return record_error(r, "empty line");
		if (!r->ncols)
			return record_error(r, "record before '#fields'");
		r->line = line;
		r->linelen = len;
		r->nf = split(line, len, r->field, r->flen, RECORD_MAX_FIELDS);
		if (r->nf == -2)
			return record_error(r, "NUL byte in line");
		if (r->nf < 0)
			return record_error(r, "empty field (fields are separated by one space)");
		if (r->nf != r->ncols)
			return record_error(r, "%d fields, the header names %d", r->nf, r->ncols);
		return 1;
	}
at_end:
	if (r->pos != r->end && !r->cut) {
		/* Dropped, once: the writer was killed mid-line, and the
		   records before it are whole. */
		r->cut = ++r->lineno;
		r->pos = r->end;
		snprintf(r->warn, sizeof(r->warn), "%s:%lu: last line cut short (no newline): dropped",
			 r->name, r->cut);
	}
	return 0;
}

int record_col(const struct record_reader *r, const char *name)
{
	int i;

	for (i = 0; i < r->ncols; i++)
		if (strcmp(r->colnames[i], name) == 0)
			return i;
	return -1;
}

int record_parse_i64(const char *s, int64_t *v)
{
	uint64_t u = 0;
	int neg = 0, n;

	if (s[0] == '-' && !s[1])
		return 0;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	/* 19 digits never overflow 64 bits (10^19 - 1 < 2^64): check once. */
	for (n = 0; n < 20; n++) {
		unsigned d = (unsigned char)s[n] - '0';

		if (d > 9)
			break;
		u = u * 10 + d;
	}
	if (n == 0 || n > 19 || s[n] || u > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -1;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 1;
}
