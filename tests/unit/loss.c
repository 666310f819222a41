/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/loss.c and the loss hook in dg_send(): the
 * schedules drop exactly where they say, the same seed drops the same
 * sends, and the kernel UDP backend loses what the schedule says on
 * loopback.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "loss.h"
#include "opt.h"
#include "transport.h"
#include "support/dgram.h"
#include "util_private.h"

static struct loss parse_ok(const char *spec)
{
	struct loss l;
	char err[256] = "";

	assert_int_equal(loss_parse(spec, &l, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	return l;
}

static void test_parse(void **state)
{
	struct loss l = parse_ok("every:10:3");

	assert_int_equal(l.kind, LOSS_EVERY);
	assert_int_equal(l.every, 10);
	assert_int_equal(l.phase, 3);
	l = parse_ok("rate:0.25:7");
	assert_int_equal(l.kind, LOSS_RATE);
	assert_true(l.rate == 0.25);
	assert_int_equal(l.seed, 7);
	assert_int_equal(parse_ok("").kind, LOSS_NONE);
	assert_int_equal(parse_ok(NULL).kind, LOSS_NONE);
}

static void test_parse_bad(void **state)
{
	static const char *const bad[] = {
		"every", "every:10", "every:0:0", "every:10:10", "every:-1:0", "every:10:1:2",
		"every:1x:0", "every::0", "rate:0:1", "rate:1.5:1", "rate:-0.1:1", "rate:nan:1",
		"rate:0.1:", "rate:0.1:-3", "rate::1", "drop:1:1", "every:10:0 ",
		"every:99999999999999999999:0",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct loss l = { .kind = LOSS_RATE, .seed = 42 };
		char err[256] = "";

		assert_int_equal(loss_parse(bad[i], &l, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "loss schedule"));
		/* untouched on failure */
		assert_int_equal(l.kind, LOSS_RATE);
		assert_int_equal(l.seed, 42);
	}
}

static void test_format_round_trip(void **state)
{
	static const char *const specs[] = { "every:10:0", "every:7:6", "rate:0.05:7",
					     "rate:0.3333333333333333:18446744073709551615", "" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(specs); i++) {
		struct loss l = parse_ok(specs[i]), m;
		char buf[128];

		loss_format(&l, buf, sizeof(buf));
		m = parse_ok(buf);
		assert_int_equal(m.kind, l.kind);
		assert_int_equal(m.every, l.every);
		assert_int_equal(m.phase, l.phase);
		assert_true(m.rate == l.rate);
		assert_int_equal(m.seed, l.seed);
	}
	{
		struct loss l = { .kind = LOSS_RATE, .rate = 0.05, .seed = 7 };
		char buf[64];

		loss_format(&l, buf, sizeof(buf));
		assert_string_equal(buf, "rate:0.05:7");
	}
}

static void test_every(void **state)
{
	struct loss l = parse_ok("every:10:0");
	uint64_t s;
	int n = 0;

	for (s = 1; s <= 100; s++) {
		int d = loss_next(&l);

		assert_int_equal(d, s % 10 == 0);
		n += d;
	}
	assert_int_equal(n, 10);
	assert_int_equal(l.sends, 100);
	assert_int_equal(l.drops, 10);

	l = parse_ok("every:4:1");
	for (s = 1; s <= 12; s++)
		assert_int_equal(loss_next(&l), s == 1 || s == 5 || s == 9);

	l = parse_ok("every:1:0");
	for (s = 1; s <= 5; s++)
		assert_int_equal(loss_next(&l), 1);
}

static void positions(const char *spec, uint64_t n, unsigned char *out)
{
	struct loss l = parse_ok(spec);
	uint64_t s;

	for (s = 0; s < n; s++)
		out[s] = (unsigned char)loss_next(&l);
}

static void test_rate_reproducible(void **state)
{
	enum { N = 100000 };
	unsigned char *a = malloc(N), *b = malloc(N), *c = malloc(N);
	size_t i, na = 0, diff = 0;

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	positions("rate:0.05:7", N, a);
	positions("rate:0.05:7", N, b);
	positions("rate:0.05:8", N, c);
	assert_memory_equal(a, b, N);
	for (i = 0; i < N; i++) {
		na += a[i];
		diff += a[i] != c[i];
	}
	/* 5% of 1e5: 5000, standard deviation 69; allow six of them. */
	assert_in_range(na, 5000 - 414, 5000 + 414);
	/* another seed, another schedule: two independent 5% schedules
	   differ in about 9.5% of the positions */
	assert_in_range(diff, 9500 - 600, 9500 + 600);
	/* the schedule is a function of the position: loss_drops agrees */
	{
		struct loss l = parse_ok("rate:0.05:7");

		for (i = 0; i < 1000; i++)
			assert_int_equal(loss_drops(&l, i + 1), a[i]);
	}
	free(a);
	free(b);
	free(c);
}

static void test_rate_bounds(void **state)
{
	struct loss l = parse_ok("rate:1:3");
	int s;

	for (s = 0; s < 100; s++)
		assert_int_equal(loss_next(&l), 1);
	l = parse_ok("rate:1e-9:3");
	for (s = 0; s < 10000; s++)
		assert_int_equal(loss_next(&l), 0);
}

static void test_none(void **state)
{
	struct loss l = parse_ok("");
	int s;

	for (s = 0; s < 100; s++)
		assert_int_equal(loss_next(&l), 0);
	assert_int_equal(l.sends, 0);
}

static void test_env(void **state)
{
	struct loss l;
	char err[256] = "";

	setenv(LOSS_ENV, "every:3:1", 1);
	assert_int_equal(opt_loss_env(&l, err, sizeof(err)), 0);
	assert_int_equal(l.every, 3);
	setenv(LOSS_ENV, "every:3:3", 1);
	assert_int_equal(opt_loss_env(&l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, LOSS_ENV));
	unsetenv(LOSS_ENV);
	assert_int_equal(opt_loss_env(&l, err, sizeof(err)), 0);
	assert_int_equal(l.kind, LOSS_NONE);
}

/* The hook: a UDP client under every:2:0 on loopback. */
static void test_transport_hook(void **state)
{
	struct endpoint sep, cep;
	struct transport *srv, *cli;
	struct clock *clk;
	char err[256], url[64];
	unsigned char buf[48] = { 0x23 }, in[64];
	struct transport_addr from;
	int64_t stamp, prev = 0;
	int i, got = 0, dropped = 0;

	clk = clock_open("realtime", err, sizeof(err));
	assert_non_null(clk);
	assert_int_equal(transport_parse_endpoint("udp://127.0.0.1:0", &sep, err, sizeof(err)), 0);
	unsetenv(LOSS_ENV);
	srv = transport_open(&sep, TRANSPORT_SERVER, err, sizeof(err));
	assert_non_null(srv);
	{
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		assert_int_equal(getsockname(transport_fd(srv), (struct sockaddr *)&ss, &len), 0);
		snprintf(url, sizeof(url), "udp://127.0.0.1:%u", ntohs(sin->sin_port));
	}
	assert_int_equal(transport_parse_endpoint(url, &cep, err, sizeof(err)), 0);
	assert_int_equal(cep.loss.kind, LOSS_NONE);

	/* The caller's schedule, in the endpoint; the environment is the
	   tool's to read (opt_loss_env), never transport_open's. */
	setenv(LOSS_ENV, "every:1:0", 1);
	assert_int_equal(loss_parse("every:2:0", &cep.loss, err, sizeof(err)), 0);
	cli = transport_open(&cep, TRANSPORT_CLIENT, err, sizeof(err));
	unsetenv(LOSS_ENV);
	assert_non_null(cli);
	for (i = 1; i <= 6; i++) {
		int rc = dg_send(cli, buf, sizeof(buf), NULL, clk, TRANSPORT_STAMP_XMT, &stamp);

		/* stamped whether dropped or sent */
		assert_true(stamp >= prev);
		prev = stamp;
		assert_int_equal(rc, i % 2 == 0 ? TRANSPORT_DROPPED : 0);
		dropped += rc == TRANSPORT_DROPPED;
	}
	/* the batch path follows the same schedule: 7 goes, 8 is dropped */
	{
		struct transport_msg m[2] = {
			{ .buf = buf, .len = sizeof(buf) }, { .buf = buf, .len = sizeof(buf) },
		};

		assert_int_equal(transport_send_batch(cli, m, 2), 2);
	}
	for (;;) {
		ssize_t n = dg_recv_wait(srv, in, sizeof(in), &from, clk, &stamp,
						clock_monotonic_ns() + 200000000LL,
						TRANSPORT_POLL_BLOCK);
		if (n == -ETIMEDOUT)
			break;
		assert_int_equal(n, sizeof(buf));
		got++;
	}
	assert_int_equal(dropped, 3);
	assert_int_equal(got, 4);

	transport_close(cli);
	transport_close(srv);
	clock_close(clk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_every),
		cmocka_unit_test(test_rate_reproducible),
		cmocka_unit_test(test_rate_bounds),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_transport_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
