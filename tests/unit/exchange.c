/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/exchange.c: a tool's columns found by name, every
 * check with its error line, the order of the checks when a line has two
 * faults, and the values of what was read.
 */
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

#include "exchange.h"
#include "util_private.h"

/* offsetfit's columns: the stamps before the status, true2 on ok only. */
static const struct exchange_col fit_cols[] = {
	{ "seq", EXCHANGE_SEQ, 0 },
	{ "t1", EXCHANGE_T1, 0 },
	{ "t2", EXCHANGE_T2, 0 },
	{ "t3", EXCHANGE_T3, 0 },
	{ "t4", EXCHANGE_T4, 0 },
	{ "delay", EXCHANGE_DELAY, 0 },
	{ "off2", EXCHANGE_OFF2, 0 },
	{ "status", EXCHANGE_STATUS, 0 },
	{ "true2", EXCHANGE_INT, EXCHANGE_OK_ONLY },
};
static const struct exchange_spec fit = { fit_cols, ARRAY_SIZE(fit_cols), "ok without t1..t4" };

/* ntpstages' kind: the status first, a stamp between t1 and t2, no delay. */
static const struct exchange_col stage_cols[] = {
	{ "seq", EXCHANGE_SEQ, 0 },
	{ "status", EXCHANGE_STATUS, 0 },
	{ "t1", EXCHANGE_T1, 0 },
	{ "t1k", EXCHANGE_INT, 0 },
	{ "t2", EXCHANGE_T2, 0 },
	{ "t3", EXCHANGE_T3, 0 },
	{ "t4", EXCHANGE_T4, 0 },
};
static const struct exchange_spec stage = { stage_cols, ARRAY_SIZE(stage_cols), "partial" };

#define HDR	"#ntpx-record 1\n#fields seq t1 t2 t3 t4 delay off2 status\n"
#define GOOD	"1 1000 1010 1020 1040 30 -10 ok\n"	/* delay 40 - 10, off2 10 - 20 */

/* A reader over the bytes of @text (a memfd, so that read(2) is real). */
static void open_text(struct exchange_reader *xr, const char *text,
		      const struct exchange_spec *spec)
{
	int fd = memfd_create("records", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(exchange_reader_init(xr, fd, "mem", spec), 0);
}

/* The same over @len bytes that may hold NULs. */
static void open_bytes(struct exchange_reader *xr, const char *bytes, size_t len,
		       const struct exchange_spec *spec)
{
	int fd = memfd_create("records", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(exchange_reader_init(xr, fd, "mem", spec), 0);
}

static void close_text(struct exchange_reader *xr)
{
	close(xr->r.fd);
	exchange_reader_free(xr);
}

/* The first exchange_next() that is not 1: its value and error line. */
static int run(const char *text, const struct exchange_spec *spec, char *err, size_t n)
{
	struct exchange_reader xr;
	int rc;

	open_text(&xr, text, spec);
	while ((rc = exchange_next(&xr)) == 1)
		;
	snprintf(err, n, "%s", rc < 0 ? exchange_err(&xr) : "");
	close_text(&xr);
	return rc;
}

static void refused(const char *text, const struct exchange_spec *spec, const char *want)
{
	char err[400];

	assert_int_equal(run(text, spec, err, sizeof(err)), -1);
	assert_string_equal(err, want);
}

static void values_read(void **state)
{
	struct exchange_reader xr;

	(void)state;
	open_text(&xr, "#ntpx-record 1\n#fields status off2 t4 extra t3 t2 t1 seq delay true2\n"
		  "ok -10 1040 x 1020 1010 1000 7 30 -22\n"
		  "timeout - - y - - 2000 8 - junk\n", &fit);
	assert_int_equal(exchange_next(&xr), 1);
	assert_int_equal(xr.x.seq, 7);
	assert_int_equal(xr.x.status, RECORD_OK);
	assert_int_equal(xr.x.have, RECORD_HAVE_ALL);
	assert_int_equal(xr.x.t[0], 1000);
	assert_int_equal(xr.x.t[3], 1040);
	assert_int_equal(xr.delay, 30);
	assert_int_equal(xr.off2, -10);
	assert_int_equal(xr.v[8], -22);
	assert_true(xr.vhave & 1u << 8);
	/* true2 is read on ok records only: "junk" on a timeout goes by. */
	assert_int_equal(exchange_next(&xr), 1);
	assert_int_equal(xr.x.status, RECORD_TIMEOUT);
	assert_int_equal(xr.x.have, 1);
	assert_int_equal(xr.x.t[0], 2000);
	assert_int_equal(xr.x.t[1], EXCHANGE_NONE);
	assert_int_equal(xr.delay, EXCHANGE_NONE);
	assert_int_equal(xr.v[8], EXCHANGE_NONE);
	assert_false(xr.vhave & (1u << 2 | 1u << 5 | 1u << 8));
	assert_int_equal(exchange_next(&xr), 0);
	assert_int_equal(xr.records, 2);
	assert_int_equal(xr.checked, 1);
	close_text(&xr);
}

/* An optional column not in #fields has no value; a new #fields moves the columns. */
static void columns_per_header(void **state)
{
	struct exchange_reader xr;

	(void)state;
	open_text(&xr, HDR GOOD "#fields off2 delay status t4 t3 t2 t1 seq true2\n"
		  "-10 30 ok 1040 1020 1010 1000 2 5\n", &fit);
	assert_int_equal(exchange_next(&xr), 1);
	assert_int_equal(xr.v[8], EXCHANGE_NONE);
	assert_false(xr.vhave & 1u << 8);
	assert_int_equal(exchange_next(&xr), 1);
	assert_int_equal(xr.x.seq, 2);
	assert_int_equal(xr.x.t[1], 1010);
	assert_int_equal(xr.v[8], 5);
	assert_int_equal(exchange_next(&xr), 0);
	close_text(&xr);
}

static void each_check(void **state)
{
	(void)state;
	refused(HDR GOOD "x 1 2 3 4 - - timeout\n", &fit, "mem:4: bad seq 'x'");
	refused(HDR GOOD "- 1 - - - - - timeout\n", &fit, "mem:4: bad seq '-'");
	refused(HDR "1 1.5 - - - - - timeout\n", &fit, "mem:3: bad t1 '1.5'");
	refused(HDR "1 1 - - 99999999999999999999 - - timeout\n", &fit,
		"mem:3: bad t4 '99999999999999999999'");
	refused(HDR "1 1 2 3 4 0x2 0 ok\n", &fit, "mem:3: bad delay '0x2'");
	refused(HDR "1 1 2 3 4 2 +0 ok\n", &fit, "mem:3: bad off2 '+0'");
	refused(HDR "1 1 - - - - - fine\n", &fit, "mem:3: unknown status 'fine'");
	refused(HDR "1 1000 1010 1020 1040 31 -10 ok\n", &fit,
		"mem:3: delay/off2 31/-10 do not match T1..T4 (30/-10)");
	refused(HDR "1 1000 1010 1020 1040 - -10 ok\n", &fit,
		"mem:3: T1..T4 present but delay or off2 missing");
	refused(HDR "1 1000 - - - 5 - timeout\n", &fit,
		"mem:3: delay or off2 given without all of T1..T4");
	refused(HDR "1 1000 - - - - - ok\n", &fit, "mem:3: ok without t1..t4");
	refused("#ntpx-record 1\n#fields seq t1 t2 t3 t4 delay off2 status true2\n"
		"1 1000 1010 1020 1040 30 -10 ok 1e3\n", &fit, "mem:3: bad true2 '1e3'");
	/* Without delay and off2 in the spec, nothing checks them. */
	refused(HDR "1 1000 - - - - - ok\n", &stage, "mem:3: partial");
	assert_int_equal(run(HDR "1 1000 1010 1020 1040 1 1 ok\n", &stage, NULL, 0), 0);
	/* The record format's own refusals come through. */
	refused(HDR "1 2 3\n", &fit, "mem:3: 3 fields, the header names 8");
	refused("1 2 3\n", &fit, "mem:1: record before '#fields'");
}

/* Two faults on a line: the one the spec lists first. */
static void order_of_the_checks(void **state)
{
	(void)state;
	refused(HDR "1 x - - - - - fine\n", &fit, "mem:3: bad t1 'x'");
	refused(HDR "1 x - - - - - fine\n", &stage, "mem:3: unknown status 'fine'");
	refused("#ntpx-record 1\n#fields seq t1 t2 t1k t3 t4 status\n1 1 x y - - ok\n", &stage,
		"mem:3: bad t1k 'y'");
	refused(HDR "x 1 - - - - - fine\n", &stage, "mem:3: bad seq 'x'");
	refused(HDR "1 1000 1010 1020 1040 31 x ok\n", &fit, "mem:3: bad off2 'x'");
	/* Arithmetic before completeness; the ok-only columns last. */
	refused(HDR "1 1000 1010 1020 - 5 - ok\n", &fit,
		"mem:3: delay or off2 given without all of T1..T4");
	refused("#ntpx-record 1\n#fields seq t1 t2 t3 t4 delay off2 status true2\n"
		"1 1000 1010 1020 - - - ok x\n", &fit, "mem:3: ok without t1..t4");
}

static void header_checks(void **state)
{
	(void)state;
	refused("#ntpx-record 1\n#fields seq t1 t2 t4 delay off2 status\n1 - - - - - timeout\n",
		&fit, "mem:3: no column 't3' in '#fields'");
	refused("#ntpx-record 1\n#fields seq t1 t2 t3 t4 off2 status\n1 - - - - - timeout\n",
		&fit, "mem:3: '#fields' lacks one of seq, delay, off2, status");
	refused("#ntpx-record 1\n#fields t1 t2 t3 t4 status\n- - - - timeout\n",
		&stage, "mem:3: '#fields' lacks seq or status");
	/* Both kinds missing: each spec says which first (where its last grouped column stands). */
	refused("#ntpx-record 1\n#fields t2 t3 t4 delay off2 status\n- - - - - timeout\n",
		&fit, "mem:3: no column 't1' in '#fields'");
	refused("#ntpx-record 1\n#fields t2 t3 t4 delay off2 status\n- - - - - timeout\n",
		&stage, "mem:3: '#fields' lacks seq or status");
	/* A header is checked at its first line, and anew at the next #fields. */
	refused(HDR GOOD "#fields seq t1 t2 t3 t4 delay off2\n1 - - - - - -\n", &fit,
		"mem:5: '#fields' lacks one of seq, delay, off2, status");
	assert_int_equal(run("#ntpx-record 1\n#fields a\n", &fit, NULL, 0), 0);
}

/*
 * What one exchange_next() gave: its value, the error without its
 * "mem:LINE: ", and every value the reader sets.
 */
struct outcome {
	int rc;
	char err[400];
	struct record_exchange x;
	int64_t delay, off2, v[EXCHANGE_MAX_COLS];
	uint32_t vhave;
	uint64_t records, checked;
};

static void outcome_of(struct exchange_reader *xr, int rc, struct outcome *o)
{
	const char *e = strchr(exchange_err(xr), ':');

	memset(o, 0, sizeof(*o));
	o->rc = rc;
	if (rc < 0 && e && (e = strchr(e + 1, ':')))
		snprintf(o->err, sizeof(o->err), "%s", e);
	if (rc == 1) {
		o->x = xr->x;
		o->delay = xr->delay;
		o->off2 = xr->off2;
		memcpy(o->v, xr->v, sizeof(o->v));
		o->vhave = xr->vhave;
	}
	o->records = xr->records;
	o->checked = xr->checked;
}

/*
 * @line read as the first line after its header (the long way: the
 * columns are found at it) and as the second, after a good one (the one
 * walk, or the long way when the walk leaves it): the same outcomes, line
 * after line, the same error, the same values.
 */
static void same_both_ways(const char *hdr, const char *good, const char *line, size_t len,
			   const struct exchange_spec *spec)
{
	size_t h = strlen(hdr), g = strlen(good);
	char *a = malloc(h + len + 1), *b = malloc(h + g + len + 1);
	struct exchange_reader xa, xb;
	struct outcome oa, ob;
	uint64_t records, checked;
	int ra, rb, k = 0;

	memcpy(a, hdr, h);
	memcpy(a + h, line, len);
	memcpy(b, hdr, h);
	memcpy(b + h, good, g);
	memcpy(b + h + g, line, len);
	open_bytes(&xa, a, h + len, spec);
	open_bytes(&xb, b, h + g + len, spec);
	assert_int_equal(exchange_next(&xb), 1);
	records = xb.records;
	checked = xb.checked;
	do {
		ra = exchange_next(&xa);
		rb = exchange_next(&xb);
		outcome_of(&xa, ra, &oa);
		outcome_of(&xb, rb, &ob);
		/* b read one record more: the good one */
		ob.records -= records;
		ob.checked -= checked;
		if (memcmp(&oa, &ob, sizeof(oa)) != 0)
			fail_msg("line %d of '%.*s': long way %d '%s' seq %lld, after a good one %d '%s' seq %lld",
				 k, (int)len, line, oa.rc, oa.err, (long long)oa.x.seq, ob.rc,
				 ob.err, (long long)ob.x.seq);
		/* the good line itself went the one walk: not split (record_take) */
		if (k == 0 && len == g && memcmp(line, good, g) == 0)
			assert_int_equal(xb.r.nf, 0);
		k++;
	} while (ra == 1);
	close_text(&xa);
	close_text(&xb);
	free(a);
	free(b);
}

/*
 * The one walk (exchange.c, walk_line) and the long way agree on every
 * line: a good one, and each byte of it changed, removed, or with
 * another put before it, for two headers (the columns in the usual order
 * with one to pass over, and shuffled) and both kinds of spec.  Breaking
 * any of the walk's checks fails this test.
 */
static void one_walk_agrees(void **state)
{
	static const char *const hdrs[] = {
		"#ntpx-record 1\n#fields seq t1 t2 t3 t4 delay off2 status extra true2\n",
		"#ntpx-record 1\n#fields status off2 t4 extra t3 t2 t1 seq delay true2\n",
	};
	static const char *const goods[] = {
		"12 1764455329000000000 1764455329000053607 1764455329000055685 "
		"1764455329000106548 104470 2744 ok x7 -5\n",
		"ok -10 1040 xyz 1020 1010 1000 7 30 -22\n",
	};
	static const char subst[] = { ' ', '\0', '\r', '-', 'a', '0', '9', '\n', '#', '+' };
	const struct exchange_spec *specs[] = { &fit, &stage };
	char line[256];
	size_t h, sp, i, c, len;

	(void)state;
	/* far more fields than the header names (the walk counts them once for 16 bytes) */
	for (i = 0; i < 100; i++)
		memcpy(line + 2 * i, i < 99 ? "1 " : "1\n", 2);
	same_both_ways(hdrs[0], goods[0], line, 200, &fit);
	for (sp = 0; sp < ARRAY_SIZE(specs); sp++)
		for (h = 0; h < ARRAY_SIZE(hdrs); h++) {
			const char *good = goods[h];

			len = strlen(good);
			same_both_ways(hdrs[h], good, good, len, specs[sp]);
			for (i = 0; i < len; i++) {
				for (c = 0; c < sizeof(subst); c++) {
					memcpy(line, good, len);
					line[i] = subst[c];
					same_both_ways(hdrs[h], good, line, len, specs[sp]);
					memcpy(line, good, i);
					line[i] = subst[c];
					memcpy(line + i + 1, good + i, len - i);
					same_both_ways(hdrs[h], good, line, len + 1, specs[sp]);
				}
				memcpy(line, good, i);
				memcpy(line + i, good + i + 1, len - i - 1);
				same_both_ways(hdrs[h], good, line, len - 1, specs[sp]);
			}
		}
}

/* exchange_read()'s callback: counts, and refuses seq 3 when asked. */
struct seen {
	int n, refuse3;
	char comments[256];
};

static int seen_each(struct exchange_reader *xr, void *ctx)
{
	struct seen *s = ctx;

	if (s->refuse3 && xr->x.seq == 3)
		return exchange_error(xr, "seq 3 refused");
	s->n++;
	return 0;
}

static void seen_comment(void *ctx, const char *line)
{
	struct seen *s = ctx;

	strncat(s->comments, line, sizeof(s->comments) - strlen(s->comments) - 2);
	strcat(s->comments, ";");
}

/* An fd over @text, for exchange_read(). */
static int text_fd(const char *text)
{
	int fd = memfd_create("records", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/*
 * The reader loop: each exchange to the callback, the first #endpoint's
 * URL kept, the tool's own comment hook called too, counts added up over
 * inputs; a last line cut short dropped with its warning (1); the
 * callback's refusal the input's error (-1), the exchanges before it
 * handed on.
 */
static void read_loop(void **state)
{
	struct exchange_input in = { .spec = &fit, .each = seen_each, .on_comment = seen_comment };
	struct seen s = { 0 };
	int fd;

	(void)state;
	in.ctx = &s;
	fd = text_fd("#ntpx-record 1\n#endpoint udp://a:1 127.0.0.1:1\n#endpoint udp://b:2\n"
		     "#fields seq t1 t2 t3 t4 delay off2 status\n" GOOD GOOD);
	assert_int_equal(exchange_read(&in, fd, "one"), 0);
	close(fd);
	assert_int_equal(s.n, 2);
	assert_string_equal(in.endpoint, "udp://a:1");
	assert_non_null(strstr(s.comments, "#endpoint udp://b:2;"));
	assert_int_equal(in.records, 2);
	assert_int_equal(in.checked, 2);

	fd = text_fd(HDR GOOD "2 1000 1010 1020 1040 30 -10 o");
	assert_int_equal(exchange_read(&in, fd, "two"), 1);
	close(fd);
	assert_string_equal(in.msg, "two:4: last line cut short (no newline): dropped");
	assert_int_equal(s.n, 3);
	assert_int_equal(in.records, 3);
	assert_int_equal(in.cut, 1);

	s.refuse3 = 1;
	fd = text_fd(HDR GOOD "3 1000 1010 1020 1040 30 -10 ok\n" GOOD);
	assert_int_equal(exchange_read(&in, fd, "three"), -1);
	close(fd);
	assert_string_equal(in.msg, "three:4: seq 3 refused");
	assert_int_equal(s.n, 4);
}

/* A spec the reader cannot serve is refused at init. */
static void specs_refused(void **state)
{
	static struct exchange_col many[EXCHANGE_MAX_COLS + 1];
	const struct exchange_spec big = { many, EXCHANGE_MAX_COLS + 1, "x" };
	const struct exchange_spec no_t4 = { fit_cols, 4, "x" };	/* seq t1 t2 t3 */
	const struct exchange_spec no_status = { stage_cols + 2, 5, "x" };
	struct exchange_reader xr;

	(void)state;
	assert_int_equal(exchange_reader_init(&xr, 0, "mem", &big), -1);
	assert_int_equal(exchange_reader_init(&xr, 0, "mem", &no_t4), -1);
	assert_int_equal(exchange_reader_init(&xr, 0, "mem", &no_status), -1);
	assert_int_equal(exchange_reader_init(&xr, 0, "mem", &stage), 0);
	exchange_reader_free(&xr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_read),
		cmocka_unit_test(columns_per_header),
		cmocka_unit_test(each_check),
		cmocka_unit_test(order_of_the_checks),
		cmocka_unit_test(header_checks),
		cmocka_unit_test(specs_refused),
		cmocka_unit_test(read_loop),
		cmocka_unit_test(one_walk_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
