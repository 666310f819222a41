/* SPDX-License-Identifier: ISC */
/* Unit tests for endpoint parsing (lib/endpoint.c) and lib/opt.c. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <sys/socket.h>

#include "opt.h"
#include "transport_private.h"
#include "util_private.h"

static void endpoints_good(void **state)
{
	struct endpoint ep;
	char err[256];

	(void)state;
	assert_int_equal(transport_parse_endpoint("udp://10.0.0.2:123?dev=eth1&src=10.0.0.1", &ep, err,
					sizeof(err)), 0);
	assert_string_equal(ep.scheme, "udp");
	assert_string_equal(ep.host, "10.0.0.2");
	assert_int_equal(ep.port, 123);
	assert_string_equal(endpoint_param(&ep, "dev"), "eth1");
	assert_string_equal(endpoint_param(&ep, "src"), "10.0.0.1");
	assert_null(endpoint_param(&ep, "via"));

	assert_int_equal(transport_parse_endpoint("udp://[::1]:12300", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.host, "::1");
	assert_int_equal(ep.port, 12300);

	/* The port defaults to NTP's. */
	assert_int_equal(transport_parse_endpoint("udp://ntp.example", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.host, "ntp.example");
	assert_int_equal(ep.port, 123);

	assert_int_equal(transport_parse_endpoint("udp://0.0.0.0:0/", &ep, err, sizeof(err)), 0);
	assert_int_equal(ep.port, 0);
	assert_int_equal(transport_parse_endpoint("udp://h:65535?dev=lo", &ep, err, sizeof(err)), 0);
	assert_int_equal(ep.port, 65535);
	assert_int_equal(ep.family, 0);

	/* A scheme is case-insensitive (RFC 3986 3.1), and is spelt as
	   ours in the URL that a record's header shows. */
	assert_int_equal(transport_parse_endpoint("UDP://127.0.0.1:9", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.scheme, "udp");
	assert_string_equal(ep.url, "udp://127.0.0.1:9");
	assert_int_equal(transport_parse_endpoint("Udp://Host.Example?dev=lo", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.url, "udp://Host.Example?dev=lo");
	assert_int_equal(transport_parse_endpoint("uUdP://10.0.0.2:123?dev=eth1", &ep, err,
						  sizeof(err)), 0);
	assert_string_equal(ep.scheme, "uudp");
}

/* Without a scheme: what people type to every NTP client is udp:// to
   port 123, and ep->url is the URL it stands for. */
static void endpoints_bare(void **state)
{
	static const struct {
		const char *in, *host, *url;
		uint16_t port;
	} cases[] = {
		{ "time.example.com", "time.example.com", "udp://time.example.com:123", 123 },
		{ "localhost", "localhost", "udp://localhost:123", 123 },
		{ "127.0.0.1", "127.0.0.1", "udp://127.0.0.1:123", 123 },
		{ "127.0.0.1:12300", "127.0.0.1", "udp://127.0.0.1:12300", 12300 },
		{ "localhost:9", "localhost", "udp://localhost:9", 9 },
		{ "::1", "::1", "udp://[::1]:123", 123 },
		{ "fe80::1%lo", "fe80::1%lo", "udp://[fe80::1%lo]:123", 123 },
		{ "2001:db8::7", "2001:db8::7", "udp://[2001:db8::7]:123", 123 },
		{ "[::1]", "::1", "udp://[::1]:123", 123 },
		{ "[::1]:12300", "::1", "udp://[::1]:12300", 12300 },
		{ "::1?dev=lo", "::1", "udp://[::1]:123?dev=lo", 123 },
		{ "10.0.0.2?dev=eth1&src=10.0.0.1", "10.0.0.2",
		  "udp://10.0.0.2:123?dev=eth1&src=10.0.0.1", 123 },
		{ "*:12300", "*", "udp://*:12300", 12300 },
	};
	struct endpoint ep;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (transport_parse_endpoint(cases[i].in, &ep, err, sizeof(err)))
			fail_msg("'%s': %s", cases[i].in, err);
		assert_string_equal(ep.scheme, "udp");
		assert_string_equal(ep.host, cases[i].host);
		assert_int_equal(ep.port, cases[i].port);
		assert_string_equal(ep.url, cases[i].url);
	}
	/* A URL stays as it was given, for the records' header. */
	assert_int_equal(transport_parse_endpoint("udp://127.0.0.1", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.url, "udp://127.0.0.1");
	assert_int_equal(transport_parse_endpoint("udp://localhost:123", &ep, err, sizeof(err)), 0);
	assert_string_equal(ep.url, "udp://localhost:123");
}

/* Names resolve through getaddrinfo: loopback only, and .invalid fails
   without a question on the network (RFC 6761). */
static void resolve(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256];

	(void)state;
	assert_int_equal(transport_resolve("127.0.0.1", 123, 0, 0, &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(transport_resolve("::1", 123, 0, AF_INET6, &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(transport_resolve("localhost", 123, 0, AF_INET, &ss, &len, err,
					   sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(transport_resolve("127.0.0.1", 123, 0, AF_INET6, &ss, &len, err,
					   sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot resolve '127.0.0.1' (IPv6): "));
	assert_int_equal(transport_resolve("::1", 123, 0, AF_INET, &ss, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot resolve '::1' (IPv4): "));
	assert_int_equal(transport_resolve("ntp.invalid", 123, 0, 0, &ss, &len, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot resolve 'ntp.invalid': Name or service not known");
	/* ... told apart from every other failure to open (opt_open_failed). */
	assert_int_equal(errno, ENXIO);
	assert_int_equal(transport_resolve("A.B.INVALID.", 123, 0, 0, &ss, &len, err, sizeof(err)), -1);
	assert_null(strchr(err, '\n'));
	/* Not under .invalid: "invalidx" would be asked as any name is. */
	assert_int_equal(transport_host_numeric("127.0.0.1"), 1);
	assert_int_equal(transport_host_numeric("::1"), 1);
	assert_int_equal(transport_host_numeric("localhost"), 0);
	assert_int_equal(transport_host_numeric("127.1.x"), 0);
}

struct bad {
	const char *url;
	const char *err;
};

static void endpoints_bad(void **state)
{
	static const struct bad cases[] = {
		{ "", "empty endpoint" },
		{ "10.0.0.2:12x", "endpoint '10.0.0.2:12x': unexpected 'x' after the port" },
		{ ":123", "endpoint ':123' has no host" },
		{ "[::1", "endpoint '[::1': '[' without ']'" },
		{ "[]:1", "endpoint '[]:1': bad address in brackets" },
		{ "h:", "endpoint 'h:': missing port after ':'" },
		{ "h:65536", "endpoint 'h:65536': port out of range" },
		{ "h?via=xdp", "unknown parameter 'via' for udp" },
		{ "h\tx", "endpoint has a control character at position 1" },
		/* What is wrong, said: a port that is no number, a scheme
		   without its slashes. */
		{ "foo:bar", "endpoint 'foo:bar': bad port 'bar' (a number, 0..65535)" },
		{ "h:x1?dev=lo", "endpoint 'h:x1?dev=lo': bad port 'x1' (a number, 0..65535)" },
		{ "udp:/127.0.0.1", "endpoint 'udp:/127.0.0.1': a scheme takes '://' (udp://127.0.0.1)" },
		{ "udp:127.0.0.1:9", "endpoint 'udp:127.0.0.1:9': a scheme takes '://' (udp://127.0.0.1:9)" },
		{ "IB:/h", "endpoint 'IB:/h': a scheme takes '://' (IB://h)" },
		{ "tcp:/h", "endpoint 'tcp:/h': a scheme takes '://' (tcp://h)" },
		{ "://x", "endpoint '://x' has a bad scheme" },
		{ "tcp://x:1", "unknown scheme 'tcp' (this build has: udp" },
		{ "udp://", "endpoint 'udp://' has no host" },
		{ "udp://:123", "endpoint 'udp://:123' has no host" },
		{ "udp://h:", "endpoint 'udp://h:': missing port after ':'" },
		{ "udp://h:65536", "endpoint 'udp://h:65536': port out of range" },
		{ "udp://h:99999999999999999999", "endpoint 'udp://h:99999999999999999999': port out of range" },
		{ "udp://h:12x", "endpoint 'udp://h:12x': unexpected 'x' after the port" },
		{ "udp://[::1", "endpoint 'udp://[::1': '[' without ']'" },
		{ "udp://[]:1", "endpoint 'udp://[]:1': bad address in brackets" },
		{ "udp://h?dev", "bad parameter 'dev' (expected KEY=VALUE)" },
		{ "udp://h?=x", "bad parameter '=x' (expected KEY=VALUE)" },
		{ "udp://h?dev=", "parameter 'dev' has no value" },
		{ "udp://h?via=xdp", "unknown parameter 'via' for udp" },
		{ "udp://h?dev=a&dev=b", "parameter 'dev' given twice" },
		{ "udp://h?dev=a&", "empty parameter after '&'" },
		{ "udp://h\n:1", "endpoint has a control character at position 7" },
	};
	struct endpoint ep;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int rc = transport_parse_endpoint(cases[i].url, &ep, err, sizeof(err));

		if (rc != -1 || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("'%s': rc %d, err '%s', want '%s'", cases[i].url, rc, err,
				 cases[i].err);
		/* One line, always. */
		assert_null(strchr(err, '\n'));
	}
}

static void durations(void **state)
{
	static const struct { const char *s; int64_t ns; } good[] = {
		{ "250ms", 250000000 }, { "2s", 2000000000 }, { "1m", 60000000000 },
		{ "3", 3000000000 }, { "1.5s", 1500000000 }, { "100us", 100000 },
		{ "7ns", 7 }, { "1h", 3600000000000 }, { "0.5", 500000000 },
		{ ".25s", 250000000 }, { "0", 0 },
	};
	static const char *const bad[] = {
		"", "s", "ms", "1x", "1 s", "-1s", "+1s", "1e3", "inf", "nan", "0x10",
		"1.2.3", "1sec", "300000000h",
	};
	int64_t ns;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(opt_duration(good[i].s, 0, &ns), 0);
		assert_int_equal(ns, good[i].ns);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ns = 12345;
		if (opt_duration(bad[i], 0, &ns) != -1)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(ns, 12345);	/* untouched */
	}
	assert_int_equal(opt_duration("-250ms", 1, &ns), 0);
	assert_int_equal(ns, -250000000);
	assert_int_equal(opt_duration("+120s", 1, &ns), 0);
	assert_int_equal(ns, 120000000000);
}

static void ppm_rates_counts(void **state)
{
	double v;
	int frac;
	uint64_t n;

	(void)state;
	assert_int_equal(opt_ppm("+50ppm", &v), 0);
	assert_float_equal(v, 50, 0);
	assert_int_equal(opt_ppm("-3.5ppm", &v), 0);
	assert_float_equal(v, -3.5, 0);
	assert_int_equal(opt_ppm("12", &v), 0);
	assert_float_equal(v, 12, 0);
	assert_int_equal(opt_ppm("50pp", &v), -1);
	assert_int_equal(opt_ppm("ppm", &v), -1);
	assert_int_equal(opt_ppm("200000ppm", &v), -1);

	assert_int_equal(opt_rate("800M", &v, &frac), 0);
	assert_float_equal(v, 800e6, 0);
	assert_int_equal(frac, 0);
	assert_int_equal(opt_rate("6G", &v, &frac), 0);
	assert_float_equal(v, 6e9, 0);
	assert_int_equal(opt_rate("90%", &v, &frac), 0);
	assert_float_equal(v, 0.9, 1e-12);
	assert_int_equal(frac, 1);
	assert_int_equal(opt_rate("0%", &v, &frac), -1);
	assert_int_equal(opt_rate("101%", &v, &frac), -1);
	assert_int_equal(opt_rate("0", &v, &frac), -1);
	assert_int_equal(opt_rate("5X", &v, &frac), -1);
	assert_int_equal(opt_rate("-5M", &v, &frac), -1);

	assert_int_equal(opt_count("200", 1000, &n), 0);
	assert_int_equal(n, 200);
	assert_int_equal(opt_count("18446744073709551615", UINT64_MAX, &n), 0);
	assert_int_equal(n, UINT64_MAX);
	assert_int_equal(opt_count("18446744073709551616", UINT64_MAX, &n), -1);
	assert_int_equal(opt_count("1001", 1000, &n), -1);
	assert_int_equal(opt_count("", 1000, &n), -1);
	assert_int_equal(opt_count("-1", 1000, &n), -1);
	assert_int_equal(opt_count("1k", 1000, &n), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(endpoints_good),
		cmocka_unit_test(endpoints_bad),
		cmocka_unit_test(endpoints_bare),
		cmocka_unit_test(resolve),
		cmocka_unit_test(durations),
		cmocka_unit_test(ppm_rates_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
