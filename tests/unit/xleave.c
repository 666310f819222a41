/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/xleave.c: the ntpx extension field and the bounded
   client table; and lib/stamp.c's columns. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ntp.h"
#include "stamp.h"
#include "xleave.h"

/* A field written and found again, after the header and another field. */
static void ef_round_trip(void **state)
{
	unsigned char pkt[NTP_HEADER_LEN + 28 + XLEAVE_EF_LEN] = { 0x23 };
	struct xleave_ef e = { .have = 1u << XEF_T2 | 1u << XEF_T3K | 1u << XEF_T3H }, g;

	(void)state;
	e.at[XEF_T2] = 1764455329123456789LL;
	e.at[XEF_T3K] = -5;
	e.at[XEF_T3H] = 1764455329123456999LL;
	/* An unknown 28-byte field first. */
	pkt[48] = 0x01;
	pkt[51] = 28;
	xleave_ef_put(pkt + NTP_HEADER_LEN + 28, &e);
	assert_int_equal(ntp_check_trailer(pkt, sizeof(pkt)), 0);
	assert_int_equal(xleave_ef_find(pkt, sizeof(pkt), &g), 1);
	assert_int_equal(g.have, e.have);
	assert_int_equal(g.at[XEF_T2], e.at[XEF_T2]);
	assert_int_equal(g.at[XEF_T3K], -5);
	assert_int_equal(g.at[XEF_T3H], e.at[XEF_T3H]);
	/* Absent stamps stay absent, whatever the bytes say. */
	assert_int_equal(g.at[XEF_T3], 0);
}

static void ef_absent_or_malformed(void **state)
{
	unsigned char pkt[NTP_HEADER_LEN + XLEAVE_EF_LEN] = { 0x23 };
	struct xleave_ef e = { .have = 0 }, g;

	(void)state;
	assert_int_equal(xleave_ef_find(pkt, NTP_HEADER_LEN, &g), 0);
	xleave_ef_put(pkt + NTP_HEADER_LEN, &e);
	pkt[NTP_HEADER_LEN + 4] = 'X';			/* not our magic */
	assert_int_equal(xleave_ef_find(pkt, sizeof(pkt), &g), 0);
	xleave_ef_put(pkt + NTP_HEADER_LEN, &e);
	pkt[NTP_HEADER_LEN + 3] = 200;			/* runs past the end */
	assert_int_equal(xleave_ef_find(pkt, sizeof(pkt), &g), 0);
	xleave_ef_put(pkt + NTP_HEADER_LEN, &e);
	assert_int_equal(xleave_ef_find(pkt, sizeof(pkt) - 4, &g), 0);	/* cut short */
}

/* One bucket of four: the fifth client takes the least recently seen. */
static void table_bound(void **state)
{
	struct xleave_table *x = xleave_table_new(1);
	struct xleave_client *c[6];
	int i;

	(void)state;
	assert_non_null(x);
	assert_int_equal(xleave_table_slots(x), 4);
	for (i = 0; i < 4; i++) {
		c[i] = xleave_client_get(x, &i, sizeof(i));
		c[i]->rec_sent = (uint64_t)i + 100;
	}
	/* Seen again: the same slot, its state kept. */
	i = 0;
	assert_ptr_equal(xleave_client_get(x, &i, sizeof(i)), c[0]);
	assert_int_equal(c[0]->rec_sent, 100);
	assert_int_equal(xleave_table_evictions(x), 0);
	/* A fifth: client 1 (seen least recently) gives way, fresh. */
	i = 4;
	c[4] = xleave_client_get(x, &i, sizeof(i));
	assert_ptr_equal(c[4], c[1]);
	assert_int_equal(c[4]->rec_sent, 0);
	assert_int_equal(xleave_table_evictions(x), 1);
	/* Client 1 back: a fresh slot again (client 2's). */
	i = 1;
	c[5] = xleave_client_get(x, &i, sizeof(i));
	assert_ptr_equal(c[5], c[2]);
	assert_int_equal(c[5]->rec_sent, 0);
	xleave_table_free(x);
}

static void stamp_columns(void **state)
{
	struct stamp_row r;
	char buf[256];
	FILE *f;
	const char *src[STAMP_NCOLS] = { [STAMP_T1K] = "k", [STAMP_T4K] = "k4" };

	(void)state;
	stamp_row_clear(&r);
	r.v[STAMP_T1K] = 12;
	r.v[STAMP_T4H] = -3;
	stamp_format(buf, sizeof(buf), &r);
	assert_string_equal(buf, " - 12 - - - - - - - -3");
	f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	assert_int_equal(stamp_write_sources(f, src), 0);
	fclose(f);
	assert_string_equal(buf, "#stamps t1q=- t1k=k t1h=- t2k=- t2h=- t3q=- t3k=- t3h=- "
				 "t4k=k4 t4h=-\n");
	assert_string_equal(STAMP_FIELDS, "t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ef_round_trip),
		cmocka_unit_test(ef_absent_or_malformed),
		cmocka_unit_test(table_bound),
		cmocka_unit_test(stamp_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
