/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/access.c: networks parse and match (IPv4 in its
 * mapped form, IPv6, prefixes on and off byte boundaries), peers as the
 * transports print them, malformed input refused; the rate limiter's
 * buckets on a made-up clock (burst, refill, the kiss bucket), its state
 * bounded under a flood of addresses, and the client's backoff.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "access.h"
#include "opt_units.h"
#include "util_private.h"

static struct access_net net(const char *s)
{
	struct access_net n;
	char err[256] = "";

	assert_int_equal(access_net_parse(s, &n, err, sizeof(err)), 0);
	return n;
}

static int allowed(const char *cidr, const char *peer)
{
	struct access_net n = net(cidr);
	struct access_ip ip;

	assert_int_equal(access_ip_from_peer(peer, &ip), 0);
	return access_allowed(&n, 1, &ip);
}

static void test_match(void **state)
{
	(void)state;
	assert_true(allowed("192.0.2.0/24", "192.0.2.7:123"));
	assert_false(allowed("192.0.2.0/24", "192.0.3.7:123"));
	assert_true(allowed("10.0.0.0/8", "10.255.1.2:5"));
	assert_true(allowed("192.0.2.7", "192.0.2.7:1"));
	assert_false(allowed("192.0.2.7", "192.0.2.6:1"));
	assert_true(allowed("192.0.2.0/25", "192.0.2.127:1"));
	assert_false(allowed("192.0.2.0/25", "192.0.2.128:1"));
	assert_true(allowed("0.0.0.0/0", "198.51.100.1:1"));
	assert_false(allowed("0.0.0.0/0", "[2001:db8::1]:1"));
	assert_true(allowed("2001:db8::/32", "[2001:db8:1::5]:123"));
	assert_false(allowed("2001:db8::/32", "[2001:db9::5]:123"));
	assert_true(allowed("::/0", "[::1]:123"));
	/* An IB GID: IPv6 text without brackets or port. */
	assert_true(allowed("fe80::/64", "fe80::2:c903:1:1"));
	/* IPv4-mapped IPv6 from a dual-stack socket is the IPv4 address. */
	assert_true(allowed("127.0.0.0/8", "[::ffff:127.0.0.1]:40000"));
}

/*
 * A received datagram's host (struct transport_host) is the same address
 * as its text: the networks match it alike, and a path without IP
 * addresses (ib://) has none to match.
 */
static void test_host(void **state)
{
	struct access_net n = net("192.0.2.0/24");
	struct transport_host h = { .has = 1, .a = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 7 } };
	struct access_ip ip, text;

	(void)state;
	assert_int_equal(access_ip_from_host(&h, &ip), 0);
	assert_int_equal(access_ip_from_peer("192.0.2.7:123", &text), 0);
	assert_memory_equal(ip.a, text.a, sizeof(ip.a));
	assert_true(access_allowed(&n, 1, &ip));
	h.a[15] = 0;
	h.a[14] = 3;
	assert_int_equal(access_ip_from_host(&h, &ip), 0);
	assert_false(access_allowed(&n, 1, &ip));
	h.has = 0;
	assert_int_equal(access_ip_from_host(&h, &ip), -1);
}

static void test_bad(void **state)
{
	static const char *const bad[] = {
		"", "/24", "192.0.2.0/", "192.0.2.0/33", "192.0.2.0/-1", "192.0.2.0/24x",
		"192.0.2.1/24", "2001:db8::/129", "host.example", "192.0.2", "1.2.3.4/8",
		"/\n", "192.0.2.0/24\n", "\n\r\t",
	};
	struct access_net n;
	struct access_ip ip;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char err[256] = "";

		assert_int_equal(access_net_parse(bad[i], &n, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "bad network"));
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(access_ip_from_peer("?", &ip), -1);
	assert_int_equal(access_ip_from_peer("[::1:123", &ip), -1);
	assert_int_equal(access_ip_from_peer(":123", &ip), -1);
}

static void test_parse_rate(void **state)
{
	static const char *const bad[] = {
		"", "0", "-1", "x", "10/0", "10/", "10/x", "10/1000001", "nan", "inf", "1e10", "5m",
	};
	double r, b;
	char err[256];
	size_t i;

	(void)state;
	assert_int_equal(ratelimit_parse("10", &r, &b, err, sizeof(err)), 0);
	assert_true(r == 10 && b == 8);
	assert_int_equal(ratelimit_parse("2.5/3", &r, &b, err, sizeof(err)), 0);
	assert_true(r == 2.5 && b == 3);
	assert_int_equal(ratelimit_parse("1k/100", &r, &b, err, sizeof(err)), 0);
	assert_true(r == 1000 && b == 100);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(ratelimit_parse(bad[i], &r, &b, err, sizeof(err)), -1);
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(ratelimit_parse("10\n", &r, &b, err, sizeof(err)), -1);
	assert_null(strchr(err, '\n'));
}

static struct access_ip ip4(uint32_t v)
{
	struct access_ip ip;

	memset(&ip, 0, sizeof(ip));
	ip.a[10] = ip.a[11] = 0xff;
	ip.a[12] = (uint8_t)(v >> 24);
	ip.a[13] = (uint8_t)(v >> 16);
	ip.a[14] = (uint8_t)(v >> 8);
	ip.a[15] = (uint8_t)v;
	return ip;
}

static void test_buckets(void **state)
{
	struct ratelimit *rl = ratelimit_create(10, 3);
	struct access_ip a = ip4(0xc0000201), b = ip4(0xc0000202);
	int64_t t = NTPX_NS_PER_SEC;
	int i;

	(void)state;
	assert_non_null(rl);
	/* A burst of 3, then one kiss, then silence, all at one instant. */
	for (i = 0; i < 3; i++)
		assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_PASS);
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_KISS);
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_DROP);
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_DROP);
	/* Another address has buckets of its own. */
	assert_int_equal(ratelimit_check(rl, &b, t), RATELIMIT_PASS);
	/* 100 ms later one token (10/s) and one kiss are back. */
	t += 100 * NTPX_NS_PER_MS;
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_PASS);
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_KISS);
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_DROP);
	/* At exactly the rate, every request passes. */
	for (i = 0; i < 100; i++) {
		t += 100 * NTPX_NS_PER_MS;
		assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_PASS);
	}
	/* A long silence refills to the burst, no more. */
	t += 3600 * NTPX_NS_PER_SEC;
	for (i = 0; i < 3; i++)
		assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_PASS);
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_KISS);
	assert_int_equal(ratelimit_evictions(rl), 0);
	assert_int_equal(ratelimit_poll(rl), -3);	/* 1/10 s -> 2^-3 s */
	ratelimit_free(rl);
}

static void test_bounded(void **state)
{
	struct ratelimit *rl = ratelimit_create(1, 1);
	struct access_ip a = ip4(0x0a000001);
	int64_t t = 1;
	uint32_t i;

	(void)state;
	/* One address over its limit, then a flood of a million others. */
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_PASS);
	assert_int_equal(ratelimit_check(rl, &a, t), RATELIMIT_KISS);
	for (i = 0; i < 1000000; i++) {
		struct access_ip x = ip4(0xc6120000 + i);

		assert_int_equal(ratelimit_check(rl, &x, ++t), RATELIMIT_PASS);
	}
	/* The table holds RATELIMIT_SLOTS: the rest were evictions. */
	assert_true(ratelimit_evictions(rl) >= 1000000 + 1 - RATELIMIT_SLOTS);
	assert_true(ratelimit_evictions(rl) <= 1000000);
	ratelimit_free(rl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
