/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/record.c: the writer, the reader, every malformed form. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "record.h"
#include "util_private.h"

/* A reader over the bytes of @text (a memfd, so that read(2) is real). */
static int text_fd(const char *text)
{
	int fd = memfd_create("records", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

#define HDR "#ntpx-record 1\n#fields " RECORD_BASE_FIELDS "\n"

static void format_ok_and_missing(void **state)
{
	struct record_exchange x = {
		.seq = 1,
		.t = { 1764455329000000000, 1764455329000062000, 1764455329000071000,
		       1764455329000140000 },
		.have = RECORD_HAVE_ALL,
		.status = RECORD_OK,
	};
	char buf[256];

	(void)state;
	record_format(buf, sizeof(buf), &x);
	/*
	 * The example of doc/design.md and doc/ntpx-record.5:
	 * delay = 140000 - 9000 = 131000, off2 = 62000 + (71000 - 140000)
	 * = -7000.
	 */
	assert_string_equal(buf, "1 1764455329000000000 1764455329000062000 "
			    "1764455329000071000 1764455329000140000 131000 -7000 ok");
	x.seq = 2;
	x.have = 1;
	x.status = RECORD_TIMEOUT;
	record_format(buf, sizeof(buf), &x);
	assert_string_equal(buf, "2 1764455329000000000 - - - - - timeout");
}

/* What the writer writes, the reader reads back field for field. */
static void round_trip(void **state)
{
	struct record_exchange x = {
		.seq = 7, .t = { -5, 0, INT64_MAX, INT64_MIN + 1 },
		.have = RECORD_HAVE_ALL, .status = RECORD_UNSYNCED,
	};
	char line[256], *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	struct record_reader r;
	int64_t v;
	int fd, i;

	(void)state;
	x.t[2] = 1000;	/* keep the arithmetic inside int64 */
	x.t[3] = 2000;
	record_write_header(f, "test", "udp://127.0.0.1:1", "realtime", RECORD_BASE_FIELDS);
	record_format(line, sizeof(line), &x);
	fprintf(f, "%s\n", line);
	fclose(f);
	fd = text_fd(text);
	assert_int_equal(record_reader_init(&r, fd, "mem"), 0);
	assert_int_equal(record_next(&r), 1);
	assert_int_equal(r.nf, 8);
	for (i = 0; i < 4; i++) {
		assert_int_equal(record_parse_i64(r.field[1 + i], &v), 1);
		assert_int_equal(v, x.t[i]);
	}
	assert_int_equal(record_parse_i64(r.field[record_col(&r, "delay")], &v), 1);
	assert_int_equal(v, record_delay(x.t));
	assert_int_equal(record_parse_i64(r.field[record_col(&r, "off2")], &v), 1);
	assert_int_equal(v, record_off2(x.t));
	assert_int_equal(record_status_parse(r.field[7]), RECORD_UNSYNCED);
	assert_int_equal(record_next(&r), 0);
	record_reader_free(&r);
	close(fd);
	free(text);
}

static void comment_cb(void *ctx, const char *line)
{
	int *n = ctx;

	(void)line;
	(*n)++;
}

/* Columns are found by name; unknown ones are there, untouched. */
static void columns_by_name_and_unknown(void **state)
{
	const char *text = "#ntpx-record 1\n#tool x 1\n#fields status extra seq\n"
			   "ok abc 1\n#fields seq status\n2 timeout\n";
	struct record_reader r;
	int fd = text_fd(text), comments = 0;

	(void)state;
	record_reader_init(&r, fd, "mem");
	r.on_comment = comment_cb;
	r.ctx = &comments;
	assert_int_equal(record_next(&r), 1);
	assert_int_equal(record_col(&r, "seq"), 2);
	assert_int_equal(record_col(&r, "t1"), -1);
	assert_string_equal(r.field[record_col(&r, "extra")], "abc");
	assert_int_equal(record_next(&r), 1);
	assert_int_equal(record_col(&r, "seq"), 0);
	assert_string_equal(r.field[1], "timeout");
	assert_int_equal(record_next(&r), 0);
	assert_int_equal(comments, 4);	/* every '#' line is handed on */
	record_reader_free(&r);
	close(fd);
}

struct bad {
	const char *text;
	const char *err;	/* expected r.err */
};

static void every_malformed_form(void **state)
{
	static const struct bad cases[] = {
		{ "1 2 3\n", "mem:1: record before '#fields'" },
		{ "\n", "mem:1: empty line" },
		{ "#fields a b\n", "mem:1: '#fields' before '#ntpx-record'" },
		{ "#ntpx-record 2\n", "mem:1: record version 2, this reader knows 1" },
		{ "#ntpx-record x\n", "mem:1: malformed '#ntpx-record' line" },
		{ "#ntpx-record\n", "mem:1: malformed '#ntpx-record' line" },
		{ "#ntpx-record 1\n#fields\n", "mem:2: malformed '#fields' line" },
		{ "#ntpx-record 1\n#fields a  b\n",
		  "mem:2: malformed '#fields' line (empty or too many names)" },
		{ "#ntpx-record 1\n#fields a b a\n", "mem:2: column 'a' named twice" },
		{ "#ntpx-record 1\n#fields a b\n1\n", "mem:3: 1 fields, the header names 2" },
		{ "#ntpx-record 1\n#fields a b\n1 2 3\n", "mem:3: 3 fields, the header names 2" },
		{ "#ntpx-record 1\n#fields a b\n1  2\n",
		  "mem:3: empty field (fields are separated by one space)" },
		{ "#ntpx-record 1\n#fields a b\n1 2 \n",
		  "mem:3: empty field (fields are separated by one space)" },
		{ "#ntpx-record 1\n#fields a b\n 1 2\n",
		  "mem:3: empty field (fields are separated by one space)" },
		{ "#ntpx-record 1\n#fields a b\n\n", "mem:3: empty line" },
		{ "#ntpx-record 1\n#fields a b\n1 2\r\n", "mem:3: carriage return at end of line" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct record_reader r;
		int fd = text_fd(cases[i].text), rc;

		record_reader_init(&r, fd, "mem");
		while ((rc = record_next(&r)) == 1)
			;
		if (rc != -1 || strcmp(r.err, cases[i].err) != 0)
			fail_msg("case %zu: rc %d, err '%s', want '%s'", i, rc, r.err, cases[i].err);
		record_reader_free(&r);
		close(fd);
	}
}

/*
 * A last line cut short (its writer killed mid-line) is dropped with a
 * warning naming it, and is the end of the input; the lines before it
 * come whole.
 */
static void cut_short_last_line_dropped(void **state)
{
	struct record_reader r;
	int fd = text_fd("#ntpx-record 1\n#fields a b\n1 2\n3 4");

	(void)state;
	record_reader_init(&r, fd, "mem");
	assert_int_equal(record_next(&r), 1);
	assert_string_equal(r.field[0], "1");
	assert_int_equal(record_next(&r), 0);
	assert_int_equal(r.cut, 4);
	assert_string_equal(r.warn, "mem:4: last line cut short (no newline): dropped");
	assert_int_equal(record_next(&r), 0);
	record_reader_free(&r);
	close(fd);
}

/* The good lines before a bad one are all delivered first. */
static void good_lines_before_an_error(void **state)
{
	struct record_reader r;
	int fd = text_fd(HDR "1 - - - - - - timeout\n2 - - - - - - timeout\n3 x\n");

	(void)state;
	record_reader_init(&r, fd, "mem");
	assert_int_equal(record_next(&r), 1);
	assert_int_equal(record_next(&r), 1);
	assert_int_equal(record_next(&r), -1);
	assert_int_equal(r.lineno, 5);
	record_reader_free(&r);
	close(fd);
}

static void long_line_refused(void **state)
{
	size_t n = RECORD_MAX_LINE + 10;
	char *text = malloc(strlen(HDR) + n + 2);
	struct record_reader r;
	int fd;

	(void)state;
	strcpy(text, HDR);
	memset(text + strlen(HDR), '1', n);
	strcpy(text + strlen(HDR) + n, "\n");
	fd = text_fd(text);
	record_reader_init(&r, fd, "mem");
	assert_int_equal(record_next(&r), -1);
	assert_non_null(strstr(r.err, "line longer than"));
	record_reader_free(&r);
	close(fd);
	free(text);
}

/* The first error of @len bytes at @text; its line number in *line. */
static const char *first_error(const char *text, size_t len, char *err, size_t size,
			       unsigned long *line)
{
	struct record_reader r;
	int fd = memfd_create("records", 0), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	record_reader_init(&r, fd, "mem");
	while ((rc = record_next(&r)) == 1)
		;
	snprintf(err, size, "%s", rc < 0 ? r.err : r.cut ? r.warn : "");
	*line = r.lineno;
	record_reader_free(&r);
	close(fd);
	return err;
}

/*
 * What the one-pass scan of a data line (lib/record.c, fast_line) hands
 * back to the line-by-line way: a NUL, an empty field, a carriage
 * return, a field too many, a line one byte too long or cut short; and a
 * line of the longest length, which it takes.  The errors are those of
 * the line-by-line way, on the right line.
 */
static void one_pass_edges(void **state)
{
	/* A good line first: the one after the header goes the long way. */
	static const char hdr[] = "#ntpx-record 1\n#fields a b\n1 2\n";
	static const char *const tail[] = { "3\0" "4\n", "3\0 4\n", "3  \0\n", "3 \n", "3 4\r\n" };
	static const size_t tlen[] = { 4, 5, 5, 3, 5 };
	static const char *const want[] = {
		"mem:4: NUL byte in line", "mem:4: NUL byte in line",
		"mem:4: empty field (fields are separated by one space)",
		"mem:4: empty field (fields are separated by one space)",
		"mem:4: carriage return at end of line",
	};
	size_t h = strlen(hdr), k;
	char *text = malloc(h + 2 * RECORD_MAX_LINE + 16), err[400];
	unsigned long line;

	(void)state;
	memcpy(text, hdr, h);
	for (k = 0; k < ARRAY_SIZE(tail); k++) {
		memcpy(text + h, tail[k], tlen[k]);
		assert_string_equal(first_error(text, h + tlen[k], err, sizeof(err), &line), want[k]);
	}
	/* 65 fields: more than RECORD_MAX_FIELDS */
	for (k = 0; k < 65; k++)
		memcpy(text + h + 2 * k, k < 64 ? "1 " : "1\n", 2);
	assert_string_equal(first_error(text, h + 130, err, sizeof(err), &line),
			    "mem:4: empty field (fields are separated by one space)");
	/* RECORD_MAX_LINE - 1 bytes and a newline: taken */
	memset(text + h, '1', RECORD_MAX_LINE - 1);
	text[h + 1] = ' ';
	text[h + RECORD_MAX_LINE - 1] = '\n';
	memcpy(text + h + RECORD_MAX_LINE, "1 2\n", 4);
	assert_string_equal(first_error(text, h + RECORD_MAX_LINE + 4, err, sizeof(err), &line), "");
	assert_int_equal(line, 5);
	/* one byte more: too long */
	memset(text + h, '1', RECORD_MAX_LINE);
	text[h + 1] = ' ';
	text[h + RECORD_MAX_LINE] = '\n';
	assert_string_equal(first_error(text, h + RECORD_MAX_LINE + 1, err, sizeof(err), &line),
			    "mem:4: line longer than 4096 bytes");
	/* a line that ends past the data read: no newline yet, or ever */
	memcpy(text + h, "3 4", 3);
	assert_string_equal(first_error(text, h + 3, err, sizeof(err), &line),
			    "mem:4: last line cut short (no newline): dropped");
	free(text);
}

/* Lines that straddle the reader's 1 MiB blocks come through whole. */
static void many_lines_across_blocks(void **state)
{
	size_t cap = 3 << 20, len;
	char *text = malloc(cap), *p;
	struct record_reader r;
	int64_t v, seq = 0;
	int fd, rc;

	(void)state;
	p = text + sprintf(text, HDR);
	while ((size_t)(p - text) < cap - 200)
		p += sprintf(p, "%lld 1 2 3 4 2 -2 ok\n", (long long)++seq);
	len = (size_t)(p - text);
	(void)len;
	fd = text_fd(text);
	record_reader_init(&r, fd, "mem");
	for (v = 1; (rc = record_next(&r)) == 1; v++) {
		int64_t s;

		assert_int_equal(record_parse_i64(r.field[0], &s), 1);
		assert_int_equal(s, v);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(v - 1, seq);
	record_reader_free(&r);
	close(fd);
	free(text);
}

static void parse_i64_forms(void **state)
{
	static const char *const bad[] = {
		"", "+1", "--1", "1x", "x", "1.5", " 1", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999", "00000000000000000000001",
	};
	int64_t v;
	size_t i;

	(void)state;
	assert_int_equal(record_parse_i64("-", &v), 0);
	assert_int_equal(record_parse_i64("0", &v), 1);
	assert_int_equal(v, 0);
	assert_int_equal(record_parse_i64("-14000", &v), 1);
	assert_int_equal(v, -14000);
	assert_int_equal(record_parse_i64("9223372036854775807", &v), 1);
	assert_int_equal(v, INT64_MAX);
	assert_int_equal(record_parse_i64("-9223372036854775808", &v), 1);
	assert_int_equal(v, INT64_MIN);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (record_parse_i64(bad[i], &v) != -1)
			fail_msg("'%s' accepted", bad[i]);
}

/*
 * The reader's fast integer path (SSE2 sixteen at a time, SWAR eight at a
 * time, 19 digits apart) agrees with the plain one on every length from 1
 * to 21 digits, signed or not, with a non-digit at every position, and at
 * the ends of int64.
 */
static void fast_field_parser_agrees(void **state)
{
	static const char bad[] = { '/', ':', 'a', '.', '+', '-' };
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	struct record_reader r;
	int n, pos, b, sign, fd, lines = 0, rc;

	(void)state;
	len += (size_t)sprintf(text, "#ntpx-record 1\n#fields a\n");
	/* 19 digits (a path of their own) at the ends of int64 and past them */
	len += (size_t)sprintf(text + len, "9223372036854775807\n9223372036854775808\n"
			       "-9223372036854775808\n-9223372036854775809\n"
			       "9999999999999999999\n-9999999999999999999\n"
			       "1000000000000000000\n0000000000000000000\n");
	lines += 8;
	for (sign = 0; sign < 2; sign++)
		for (n = 1; n <= 21; n++)
			for (pos = -1; pos < n; pos++)
				for (b = 0; b < (pos < 0 ? 1 : (int)sizeof(bad)); b++) {
					char *p = text + len;
					int k;

					if (sign)
						*p++ = '-';
					for (k = 0; k < n; k++)
						*p++ = (char)(k == pos ? bad[b] : '0' + (k * 7 + n) % 10);
					*p++ = '\n';
					len = (size_t)(p - text);
					lines++;
				}
	text[len] = 0;
	fd = text_fd(text);
	record_reader_init(&r, fd, "mem");
	while ((rc = record_next(&r)) == 1) {
		int64_t a = 0, c = 0;
		int ka = record_field_i64(&r, 0, &a), kc = record_parse_i64(r.field[0], &c);

		if (ka != kc || (ka == 1 && a != c))
			fail_msg("'%s': fast %d %lld, plain %d %lld", r.field[0], ka, (long long)a,
				 kc, (long long)c);
		lines--;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(lines, 0);
	record_reader_free(&r);
	close(fd);
	free(text);
}

static void status_words(void **state)
{
	static const char *const words[] = {
		"ok", "timeout", "dropped", "bogus", "kod", "unsynced", "refused", "error",
	};
	int i;

	(void)state;
	for (i = 0; i < RECORD_NSTATUS; i++) {
		assert_int_equal(record_status_parse(words[i]), i);
		assert_string_equal(record_status_name(i), words[i]);
	}
	assert_int_equal(record_status_parse("OK"), -1);
	assert_int_equal(record_status_parse(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_ok_and_missing),
		cmocka_unit_test(round_trip),
		cmocka_unit_test(columns_by_name_and_unknown),
		cmocka_unit_test(every_malformed_form),
		cmocka_unit_test(cut_short_last_line_dropped),
		cmocka_unit_test(good_lines_before_an_error),
		cmocka_unit_test(long_line_refused),
		cmocka_unit_test(one_pass_edges),
		cmocka_unit_test(many_lines_across_blocks),
		cmocka_unit_test(parse_i64_forms),
		cmocka_unit_test(fast_field_parser_agrees),
		cmocka_unit_test(status_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
