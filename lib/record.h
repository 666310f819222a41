/*
 * record.h - the record format (doc/ntpx-record.5): one exchange per text
 * line, fields separated by one space, '#' lines for headers.
 *
 *     #ntpx-record 1
 *     #tool ntpprobe 0.1.0
 *     #endpoint udp://127.0.0.1:12300
 *     #clock realtime
 *     #fields seq t1 t2 t3 t4 delay off2 status
 *     1 1764455329000000000 1764455329000062000 ... 131000 -14000 ok
 *
 * Readers find columns by name from the latest #fields line, never by
 * position, and pass columns they do not know through untouched.
 */
#ifndef NTPX_RECORD_H
#define NTPX_RECORD_H

#include <stdint.h>
#include <stdio.h>

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

/* delay = (t4 - t1) - (t3 - t2); off2 = (t2 - t1) + (t3 - t4) */
static inline int64_t record_delay(const int64_t t[4])
{
	return (t[3] - t[0]) - (t[2] - t[1]);
}

static inline int64_t record_off2(const int64_t t[4])
{
	return (t[1] - t[0]) + (t[2] - t[3]);
}

/* Writes the header lines: version, tool, endpoint, clock (each skipped
   when NULL), then "#fields FIELDS". */
void record_write_header(FILE *f, const char *tool, const char *endpoint,
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
	char colbuf[RECORD_MAX_LINE];
	unsigned long generation;	/* bumped on each #fields */

	/* the current data line */
	char *line;			/* NUL-terminated, fields split by NULs */
	size_t linelen;			/* before splitting */
	int nf;
	char *field[RECORD_MAX_FIELDS];

	/* called with each '#' line (without its newline) when set */
	void (*on_comment)(void *ctx, const char *line);
	void *ctx;

	char err[320];			/* "NAME:LINE: reason" after -1 */
};

int record_reader_init(struct record_reader *r, int fd, const char *name);
void record_reader_free(struct record_reader *r);

/*
 * Reads up to the next data line.  Returns 1 with r->field[] set, 0 at the
 * end of the input, -1 with r->err set: a malformed header, a data line
 * before #fields, a field count unlike the header's, an empty field, a line
 * too long or cut short at the end of the input, or a read error.
 */
int record_next(struct record_reader *r);

/* The index of column @name in the current header, or -1. */
int record_col(const struct record_reader *r, const char *name);

/*
 * Parses an integer field.  Returns 1 with *v set, 0 for "-" (no value),
 * -1 for anything else.
 */
int record_parse_i64(const char *s, int64_t *v);

/* Sets r->err to "NAME:LINE: reason" and returns -1. */
int record_error(struct record_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
