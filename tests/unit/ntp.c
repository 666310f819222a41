/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/ntp.c: timestamps, eras, the packet codec. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ntp.h"
#include "util_private.h"

/* Every one of the 10^9 nanosecond fractions survives ns -> NTP -> ns. */
static void ns_round_trip_all_fractions(void **state)
{
	const int64_t base = 1764455329LL * NTPX_NS_PER_SEC;
	int64_t ns;

	(void)state;
	for (ns = 0; ns < NTPX_NS_PER_SEC; ns++) {
		uint64_t ts = ntp_ts_from_ns(base + ns);

		if (ntp_ts_to_ns(ts, base) != base + ns)
			fail_msg("fraction %lld does not round trip", (long long)ns);
	}
}

static void known_values(void **state)
{
	(void)state;
	/* 1970-01-01 is 2208988800 s after the NTP epoch. */
	assert_int_equal(ntp_ts_from_ns(0), (uint64_t)2208988800u << 32);
	/* Half a second is exactly 0x80000000. */
	assert_int_equal(ntp_ts_from_ns(500000000), (uint64_t)2208988800u << 32 | 0x80000000u);
	/* 1 ns is ceil(4.294967296) = 5 units; 5 units truncate back to 1 ns. */
	assert_int_equal((uint32_t)ntp_ts_from_ns(1), 5);
	assert_int_equal(ntp_ts_to_ns((uint64_t)2208988800u << 32 | 5, 0), 1);
	/* The largest fraction: 999999999 ns < 2^32 units. */
	assert_true((uint32_t)ntp_ts_from_ns(999999999) <= 0xffffffffu);
	assert_int_equal(ntp_ts_to_ns(ntp_ts_from_ns(999999999), 0), 999999999);
}

/*
 * Era 0 ends 2036-02-07T06:28:16Z, Unix 2085978496.  Timestamps on both
 * sides, read with a pivot on either side, come back to the right era.
 */
static void era_boundary_2036(void **state)
{
	const int64_t wrap = 2085978496LL * NTPX_NS_PER_SEC;
	const int64_t offsets[] = { -3600LL * NTPX_NS_PER_SEC, -1, 0, 1, 123456789,
				    3600LL * NTPX_NS_PER_SEC };
	size_t i, j;

	(void)state;
	/* The seconds field is 0 just after the wrap. */
	assert_int_equal(ntp_ts_from_ns(wrap) >> 32, 0);
	assert_int_equal(ntp_ts_from_ns(wrap - 1) >> 32, 0xffffffffu);
	for (i = 0; i < ARRAY_SIZE(offsets); i++)
		for (j = 0; j < ARRAY_SIZE(offsets); j++) {
			int64_t t = wrap + offsets[i], pivot = wrap + offsets[j];

			assert_int_equal(ntp_ts_to_ns(ntp_ts_from_ns(t), pivot), t);
		}
	/* Far from any wrap, and before 1970 (era 0, 1900..1970). */
	assert_int_equal(ntp_ts_to_ns(ntp_ts_from_ns(-5 * NTPX_NS_PER_SEC), 0), -5 * NTPX_NS_PER_SEC);
	/* Era 1, decades after the wrap. */
	assert_int_equal(ntp_ts_to_ns(ntp_ts_from_ns(wrap + 900000000LL * NTPX_NS_PER_SEC),
				      wrap + 900000000LL * NTPX_NS_PER_SEC),
			 wrap + 900000000LL * NTPX_NS_PER_SEC);
}

static void codec_round_trip(void **state)
{
	struct ntp_packet p = {
		.leap = 3, .version = 4, .mode = 3, .stratum = 2, .poll = -6,
		.precision = -24, .root_delay = 0x00010002, .root_disp = 0x00030004,
		.refid = 0x7f000001, .ref = 0x1122334455667788ULL,
		.org = 0x99aabbccddeeff00ULL, .rec = 1, .xmt = 0xffffffffffffffffULL,
	}, q;
	unsigned char buf[NTP_HEADER_LEN];

	(void)state;
	ntp_encode(&p, buf);
	assert_int_equal(buf[0], 0xe3);	/* 11 100 011 */
	assert_int_equal(buf[2], 0xfa);
	assert_int_equal(ntp_decode(buf, sizeof(buf), &q), 0);
	assert_int_equal(q.leap, p.leap);
	assert_int_equal(q.version, p.version);
	assert_int_equal(q.mode, p.mode);
	assert_int_equal(q.stratum, p.stratum);
	assert_int_equal(q.poll, p.poll);
	assert_int_equal(q.precision, p.precision);
	assert_int_equal(q.root_delay, p.root_delay);
	assert_int_equal(q.root_disp, p.root_disp);
	assert_int_equal(q.refid, p.refid);
	assert_int_equal(q.ref, p.ref);
	assert_int_equal(q.org, p.org);
	assert_int_equal(q.rec, p.rec);
	assert_int_equal(q.xmt, p.xmt);
}

static void decode_rejects_short(void **state)
{
	unsigned char buf[NTP_HEADER_LEN] = { 0x23 };
	struct ntp_packet q;
	size_t n;

	(void)state;
	for (n = 0; n < NTP_HEADER_LEN; n++)
		assert_int_equal(ntp_decode(buf, n, &q), -1);
	assert_int_equal(ntp_decode(buf, NTP_HEADER_LEN, &q), 0);
}

static void put_field(unsigned char *b, unsigned type, unsigned len)
{
	b[0] = (unsigned char)(type >> 8);
	b[1] = (unsigned char)type;
	b[2] = (unsigned char)(len >> 8);
	b[3] = (unsigned char)len;
}

static void trailer_shapes(void **state)
{
	unsigned char b[256] = { 0x23 };

	(void)state;
	assert_int_equal(ntp_check_trailer(b, 48), 0);
	assert_int_equal(ntp_check_trailer(b, 48 + 20), 0);	/* MAC, MD5 */
	assert_int_equal(ntp_check_trailer(b, 48 + 24), 0);	/* MAC, SHA-1 */
	assert_int_equal(ntp_check_trailer(b, 47), -1);
	assert_int_equal(ntp_check_trailer(b, 50), -1);		/* not 4-aligned */
	assert_int_equal(ntp_check_trailer(b, 48 + 16), -1);	/* no valid shape */
	/* One 28-byte field, no MAC. */
	put_field(b + 48, 0x0104, 28);
	assert_int_equal(ntp_check_trailer(b, 48 + 28), 0);
	/* ... and then a MAC. */
	assert_int_equal(ntp_check_trailer(b, 48 + 28 + 20), 0);
	/* Two fields (16 + 28). */
	put_field(b + 48, 0x0104, 16);
	put_field(b + 64, 0x0204, 28);
	assert_int_equal(ntp_check_trailer(b, 48 + 44), 0);
	/* A field that claims to run past the end: truncated. */
	put_field(b + 48, 0x0104, 200);
	assert_int_equal(ntp_check_trailer(b, 48 + 28), -1);
	/* A length below 16, or not a multiple of 4. */
	put_field(b + 48, 0x0104, 12);
	assert_int_equal(ntp_check_trailer(b, 48 + 28), -1);
	put_field(b + 48, 0x0104, 30);
	assert_int_equal(ntp_check_trailer(b, 48 + 32), -1);
	/* A zero length must not loop for ever. */
	put_field(b + 48, 0, 0);
	assert_int_equal(ntp_check_trailer(b, 48 + 32), -1);
}

static void short_format(void **state)
{
	(void)state;
	assert_int_equal(ntp_short_from_ns(0), 0);
	assert_int_equal(ntp_short_from_ns(NTPX_NS_PER_SEC), 0x10000);
	assert_int_equal(ntp_short_from_ns(1), 1);	/* rounded up, never 0 */
	assert_int_equal(ntp_short_from_ns(-5), 0);
	assert_int_equal(ntp_short_from_ns(INT64_MAX), 0xffffffffu);
}

static struct ntp_packet reply(unsigned leap, unsigned stratum, uint32_t refid)
{
	return (struct ntp_packet){
		.leap = (uint8_t)leap, .version = 4, .mode = NTP_MODE_SERVER,
		.stratum = (uint8_t)stratum, .refid = refid,
		.rec = (uint64_t)3973443000u << 32, .xmt = (uint64_t)3973443000u << 32 | 1,
	};
}

#define CODE(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* RFC 5905 7.3/7.4: one to four printable ASCII characters, zero-filled. */
static void kiss_codes(void **state)
{
	static const struct { uint32_t refid; const char *code; } yes[] = {
		{ CODE('R', 'A', 'T', 'E'), "RATE" }, { CODE('D', 'E', 'N', 'Y'), "DENY" },
		{ CODE('R', 'S', 'T', 'R'), "RSTR" }, { CODE('I', 'N', 'I', 'T'), "INIT" },
		{ CODE('X', 0, 0, 0), "X" }, { CODE('A', 'B', 'C', 0), "ABC" },
		{ CODE('!', '~', '0', 'z'), "!~0z" },
	};
	static const uint32_t no[] = {
		0,				/* OpenNTPD 6.2 unsynchronised */
		CODE('R', 0, 'T', 'E'),		/* a character after the fill */
		CODE(0, 'A', 'T', 'E'),
		CODE('R', 'A', 'T', 0x7f),	/* DEL */
		CODE('R', 'A', ' ', 'E'),	/* space */
		CODE('R', 'A', 'T', 0x1b),	/* a control character */
		CODE(0xc3, 0xa9, 0, 0),		/* not ASCII */
		CODE(127, 0, 0, 1),		/* an IPv4 address */
	};
	struct ntp_packet p;
	char code[5];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		p = reply(3, 0, yes[i].refid);
		assert_int_equal(ntp_kiss_code(&p, code), 1);
		assert_string_equal(code, yes[i].code);
		/* Under leap 3 only the codes that ask something of the client
		   are a kiss; the others say why the server is unsynchronised. */
		assert_int_equal(ntp_judge(&p), strcmp(code, "RATE") == 0 ||
				 strcmp(code, "DENY") == 0 || strcmp(code, "RSTR") == 0 ?
				 NTP_VERDICT_KISS : NTP_VERDICT_UNSYNCED);
		/* Under any other leap indicator every code is a kiss. */
		p.leap = 0;
		assert_int_equal(ntp_judge(&p), NTP_VERDICT_KISS);
		/* Nor do the timestamps, which carry nothing. */
		p.rec = p.xmt = 0;
		assert_int_equal(ntp_judge(&p), NTP_VERDICT_KISS);
		/* Above stratum 0 the same reference ID is an identifier. */
		p = reply(0, 1, yes[i].refid);
		assert_int_equal(ntp_kiss_code(&p, code), 0);
		assert_string_equal(code, "");
		assert_int_equal(ntp_judge(&p), NTP_VERDICT_OK);
	}
	for (i = 0; i < ARRAY_SIZE(no); i++) {
		p = reply(3, 0, no[i]);
		assert_int_equal(ntp_kiss_code(&p, code), 0);
		assert_string_equal(code, "");
		/* Stratum 0 without a code: unsynchronised, not a kiss. */
		assert_int_equal(ntp_judge(&p), NTP_VERDICT_UNSYNCED);
		p.leap = 0;
		assert_int_equal(ntp_judge(&p), NTP_VERDICT_UNSYNCED);
	}
}

/* --refid: 1 to 4 printable characters, left justified and zero filled. */
static void refid_parse(void **state)
{
	static const struct { const char *s; uint32_t refid; } yes[] = {
		{ "NTPX", CODE('N', 'T', 'P', 'X') }, { "GPS", CODE('G', 'P', 'S', 0) },
		{ "X", CODE('X', 0, 0, 0) }, { "a b", CODE('a', ' ', 'b', 0) },
		{ " ~!", CODE(' ', '~', '!', 0) },
	};
	static const char *const no[] = {
		"", "TOOLONG", "ABCDE", "a\tb", "RAT\x7f", "\xc3\xa9", "\x1b",
	};
	uint32_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		v = 0;
		assert_int_equal(ntp_refid_parse(yes[i].s, &v), 0);
		assert_int_equal(v, yes[i].refid);
	}
	for (i = 0; i < ARRAY_SIZE(no); i++) {
		v = 12345;
		if (ntp_refid_parse(no[i], &v) != -1)
			fail_msg("'%s' taken as a refid", no[i]);
		assert_int_equal(v, 12345);
	}
}

static void judge_order(void **state)
{
	struct ntp_packet p;

	(void)state;
	/* What OpenNTPD 6.2 sends while unsynchronised. */
	p = reply(NTP_LEAP_ALARM, 0, 0);
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_UNSYNCED);
	/* Leap alarm at any stratum; stratum 16 and above with any leap. */
	p = reply(NTP_LEAP_ALARM, 2, CODE(192, 0, 2, 1));
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_UNSYNCED);
	p = reply(NTP_LEAP_NONE, 16, 0);
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_UNSYNCED);
	p = reply(NTP_LEAP_NONE, 255, 0);
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_UNSYNCED);
	/* Leap second warnings are synchronised servers. */
	p = reply(NTP_LEAP_INSERT, 2, 0);
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_OK);
	p = reply(NTP_LEAP_DELETE, 15, 0);
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_OK);
	/* A synchronised server with a zero timestamp is bogus... */
	p = reply(NTP_LEAP_NONE, 1, CODE('G', 'P', 'S', 0));
	p.rec = 0;
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_BOGUS);
	p = reply(NTP_LEAP_NONE, 1, CODE('G', 'P', 'S', 0));
	p.xmt = 0;
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_BOGUS);
	/* ...an unsynchronised one is unsynchronised first. */
	p.leap = NTP_LEAP_ALARM;
	assert_int_equal(ntp_judge(&p), NTP_VERDICT_UNSYNCED);
}

static void rate_backoff(void **state)
{
	const int64_t s = NTPX_NS_PER_SEC;

	(void)state;
	assert_int_equal(ntp_backoff_ns(1, -30), 2);
	assert_int_equal(ntp_backoff_ns(50 * NTPX_NS_PER_MS, -30), 100 * NTPX_NS_PER_MS);
	assert_int_equal(ntp_backoff_ns(64 * s, -30), 128 * s);
	/* MAXPOLL, 2^17 s, is the cap... */
	assert_int_equal(NTP_MAXPOLL_NS, 131072 * s);
	assert_int_equal(ntp_backoff_ns(65536 * s, -30), NTP_MAXPOLL_NS);
	assert_int_equal(ntp_backoff_ns(100000 * s, -30), NTP_MAXPOLL_NS);
	assert_int_equal(ntp_backoff_ns(NTP_MAXPOLL_NS, -30), NTP_MAXPOLL_NS);
	/* ...but a longer interval asked for is never shortened. */
	assert_int_equal(ntp_backoff_ns(200000 * s, -30), 200000 * s);
	/* The kiss's poll is a floor: 2^-3 s, 2^4 s; 2^17 s at most. */
	assert_int_equal(ntp_backoff_ns(10 * NTPX_NS_PER_MS, -10), 20 * NTPX_NS_PER_MS);
	assert_int_equal(ntp_backoff_ns(10 * NTPX_NS_PER_MS, -3), 125 * NTPX_NS_PER_MS);
	assert_int_equal(ntp_backoff_ns(10 * NTPX_NS_PER_MS, 4), 16 * s);
	assert_int_equal(ntp_backoff_ns(1, 17), NTP_MAXPOLL_NS);
	assert_int_equal(ntp_backoff_ns(1, 127), NTP_MAXPOLL_NS);
	assert_int_equal(ntp_backoff_ns(INT64_MAX / 2, 0), INT64_MAX / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ns_round_trip_all_fractions),
		cmocka_unit_test(known_values),
		cmocka_unit_test(era_boundary_2036),
		cmocka_unit_test(codec_round_trip),
		cmocka_unit_test(decode_rejects_short),
		cmocka_unit_test(trailer_shapes),
		cmocka_unit_test(short_format),
		cmocka_unit_test(kiss_codes),
		cmocka_unit_test(refid_parse),
		cmocka_unit_test(judge_order),
		cmocka_unit_test(rate_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
