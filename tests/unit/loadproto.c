/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/loadproto.c: loadgen's header and report on the
 * wire, byte for byte (big-endian, the layout of loadproto.h), both
 * directions, and what a sink or a sender must not take for theirs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "loadproto.h"

static void test_hdr_bytes(void **state)
{
	unsigned char b[LOAD_HDR_LEN];
	static const unsigned char want[LOAD_HDR_LEN] = {
		'N', 'T', 'X', 'L', 0xde, 0xad, 0xbe, 0xef,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	};

	(void)state;
	load_hdr_put(b, LOAD_DATA, 0xdeadbeef, 0x0102030405060708ULL);
	assert_memory_equal(b, want, sizeof(b));
	load_hdr_put(b, LOAD_FIN, 1, 2);
	assert_memory_equal(b, "NTXF", 4);
}

static void test_hdr_round_trip(void **state)
{
	unsigned char b[64] = { 0 };
	struct load_hdr h;

	(void)state;
	load_hdr_put(b, LOAD_DATA, 7, 123456789012345ULL);
	assert_int_equal(load_hdr_get(b, sizeof(b), &h), LOAD_DATA);
	assert_int_equal(h.run, 7);
	assert_true(h.seq == 123456789012345ULL);
	load_hdr_put(b, LOAD_FIN, 8, 99);
	assert_int_equal(load_hdr_get(b, LOAD_HDR_LEN, &h), LOAD_FIN);
	assert_int_equal(h.run, 8);
	assert_true(h.seq == 99);
}

static void test_hdr_foreign(void **state)
{
	unsigned char b[LOAD_HDR_LEN];
	struct load_hdr h;

	(void)state;
	load_hdr_put(b, LOAD_DATA, 1, 1);
	/* one byte short */
	assert_int_equal(load_hdr_get(b, LOAD_HDR_LEN - 1, &h), LOAD_FOREIGN);
	/* a report is not load */
	memcpy(b, "NTXR", 4);
	assert_int_equal(load_hdr_get(b, sizeof(b), &h), LOAD_FOREIGN);
	/* an NTP request is not load */
	memset(b, 0, sizeof(b));
	b[0] = 0x23;
	assert_int_equal(load_hdr_get(b, sizeof(b), &h), LOAD_FOREIGN);
}

static void test_report(void **state)
{
	unsigned char b[LOAD_REPORT_LEN + 8];
	struct load_report r = { .run = 0x01020304, .elapsed = 50000000, .bytes = 1ULL << 40,
				 .packets = 12345, .lost = 3 }, got;
	static const unsigned char head[12] = { 'N', 'T', 'X', 'R', 1, 2, 3, 4, 0, 0, 0, 0 };
	unsigned i;

	(void)state;
	memset(b, 0xff, sizeof(b));
	load_report_put(b, &r);
	assert_memory_equal(b, head, sizeof(head));
	for (i = 40; i < LOAD_REPORT_LEN; i++)
		assert_int_equal(b[i], 0);
	assert_int_equal(b[LOAD_REPORT_LEN], 0xff);	/* nothing past the report */
	assert_int_equal(load_report_get(b, LOAD_REPORT_LEN, &got), 0);
	assert_int_equal(got.run, r.run);
	assert_true(got.elapsed == r.elapsed && got.bytes == r.bytes &&
		    got.packets == r.packets && got.lost == r.lost);
	assert_int_equal(load_report_get(b, LOAD_REPORT_LEN - 1, &got), -1);
	load_hdr_put(b, LOAD_DATA, 1, 1);
	assert_int_equal(load_report_get(b, LOAD_REPORT_LEN, &got), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_bytes),
		cmocka_unit_test(test_hdr_round_trip),
		cmocka_unit_test(test_hdr_foreign),
		cmocka_unit_test(test_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
