/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/nts_ke.c: NTS-KE records (RFC 8915 section 4). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nts_ke.h"
#include "util_private.h"

/* A client's request, byte for byte as RFC 8915 section 4 lays it out:
   Next Protocol {0}, AEAD {15}, both critical, then End of Message. */
static const unsigned char request[] = {
	0x80, 0x01, 0x00, 0x02, 0x00, 0x00,
	0x80, 0x04, 0x00, 0x02, 0x00, 0x0f,
	0x80, 0x00, 0x00, 0x00,
};

static void client_request_bytes(void **state)
{
	struct nts_ke_msg m;
	unsigned char buf[64];

	(void)state;
	nts_ke_msg_init(&m);
	m.nprotos = 1;
	m.protos[0] = NTS_PROTO_NTPV4;
	m.naeads = 1;
	m.aeads[0] = NTS_AEAD_SIV_CMAC_256;
	assert_int_equal(nts_ke_build(buf, sizeof(buf), &m), sizeof(request));
	assert_memory_equal(buf, request, sizeof(request));
	/* One byte short of room: refused, not truncated. */
	assert_int_equal(nts_ke_build(buf, sizeof(request) - 1, &m), -1);
}

static void response_round_trip(void **state)
{
	struct nts_ke_msg m, got;
	unsigned char buf[NTS_KE_MSG_MAX];
	const char *why = NULL;
	ssize_t n;
	unsigned i;

	(void)state;
	nts_ke_msg_init(&m);
	m.nprotos = 1;
	m.naeads = 1;
	m.aeads[0] = NTS_AEAD_SIV_CMAC_256;
	m.ncookies = NTS_COOKIES_MAX;
	for (i = 0; i < m.ncookies; i++) {
		m.cookie_len[i] = (uint16_t)(100 + i);
		memset(m.cookie[i], 'a' + (int)i, m.cookie_len[i]);
	}
	strcpy(m.server, "ntp.example.net");
	m.port = 12300;
	m.warning = 7;
	n = nts_ke_build(buf, sizeof(buf), &m);
	assert_true(n > 0);
	assert_int_equal(nts_ke_parse(buf, (size_t)n, &got, &why), n);
	assert_int_equal(got.nprotos, 1);
	assert_int_equal(got.protos[0], 0);
	assert_int_equal(got.naeads, 1);
	assert_int_equal(got.aeads[0], 15);
	assert_int_equal(got.ncookies, NTS_COOKIES_MAX);
	assert_int_equal(got.cookies_seen, NTS_COOKIES_MAX);
	for (i = 0; i < got.ncookies; i++) {
		assert_int_equal(got.cookie_len[i], 100 + i);
		assert_memory_equal(got.cookie[i], m.cookie[i], got.cookie_len[i]);
	}
	assert_string_equal(got.server, "ntp.example.net");
	assert_int_equal(got.port, 12300);
	assert_int_equal(got.warning, 7);
	assert_int_equal(got.error, -1);
	/* Parsed whole, but a warning makes the response unusable. */
	assert_int_equal(nts_ke_check_response(&got, &why), -1);
	assert_string_equal(why, "server sent warning 7 (unrecognised)");

	/* Every prefix is "read more", never an error or a crash. */
	for (i = 0; i < (unsigned)n; i++)
		assert_int_equal(nts_ke_parse(buf, i, &got, &why), 0);
	/* Bytes after End of Message are the caller's. */
	buf[n] = 0x42;
	assert_int_equal(nts_ke_parse(buf, (size_t)n + 1, &got, &why), n);
}

/* Each malformed message: -1 and a line that names the record. */
static void malformed(void **state)
{
	static const struct {
		const char *name;
		unsigned char b[24];
		size_t len;
		const char *why;
	} cases[] = {
		{ "eom with a body", { 0x80, 0, 0, 2, 0, 0 }, 6, "record 1 (end of message): body of 2 bytes, not empty" },
		{ "odd aead list", { 0x80, 4, 0, 3, 0, 15, 0 }, 7, "record 1 (AEAD): odd body length 3" },
		{ "two protocol lists", { 0x80, 1, 0, 2, 0, 0, 0x80, 1, 0, 2, 0, 0, 0x80, 0, 0, 0 }, 16,
		  "record 2 (next protocol): seen twice" },
		{ "port of 3 bytes", { 0x80, 7, 0, 3, 1, 2, 3, 0x80, 0, 0, 0 }, 11, "record 1 (port): body length 3, not 2" },
		{ "error of 1 byte", { 0x80, 2, 0, 1, 1 }, 5, "record 1 (error): body length 1, not 2" },
		{ "empty cookie", { 0, 5, 0, 0, 0x80, 0, 0, 0 }, 8, "record 1 (cookie): cookie length 0, not 1 to 256" },
		{ "server with a space", { 0x80, 6, 0, 3, 'a', ' ', 'b', 0x80, 0, 0, 0 }, 11,
		  "record 1 (server): not printable ASCII at byte 1" },
		{ "unknown critical", { 0x80, 0x40, 0, 0, 0x80, 0, 0, 0 }, 8, "record 1 (type 64): critical and unknown" },
	};
	struct nts_ke_msg m;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *why = NULL;

		if (nts_ke_parse(cases[i].b, cases[i].len, &m, &why) != -1)
			fail_msg("%s: not refused", cases[i].name);
		if (!why || strcmp(why, cases[i].why) != 0)
			fail_msg("%s: '%s', want '%s'", cases[i].name, why ? why : "(null)", cases[i].why);
	}
}

static void unknown_noncritical_skipped(void **state)
{
	static const unsigned char b[] = { 0x00, 0x40, 0x00, 0x03, 1, 2, 3, 0x80, 0, 0, 0 };
	struct nts_ke_msg m;
	const char *why;

	(void)state;
	assert_int_equal(nts_ke_parse(b, sizeof(b), &m, &why), sizeof(b));
	assert_int_equal(m.nprotos, -1);
	assert_int_equal(nts_ke_check_response(&m, &why), -1);
	assert_string_equal(why, "no next protocol record");
}

/* More than 8 cookies: 8 kept, all counted. */
static void extra_cookies_counted(void **state)
{
	unsigned char buf[256];
	size_t off = 0;
	struct nts_ke_msg m;
	const char *why;
	int i;

	(void)state;
	for (i = 0; i < 10; i++)
		assert_int_equal(nts_ke_put(buf, sizeof(buf), &off, NTS_KE_COOKIE, "ck", 2), 0);
	assert_int_equal(nts_ke_put(buf, sizeof(buf), &off, NTS_KE_CRITICAL, NULL, 0), 0);
	assert_int_equal(nts_ke_parse(buf, off, &m, &why), (ssize_t)off);
	assert_int_equal(m.ncookies, NTS_COOKIES_MAX);
	assert_int_equal(m.cookies_seen, 10);
}

/* A message that never ends is refused once it passes the bound. */
static void endless_refused(void **state)
{
	static unsigned char buf[NTS_KE_MSG_MAX + 64];
	size_t off = 0;
	struct nts_ke_msg m;
	const char *why = NULL;

	(void)state;
	while (nts_ke_put(buf, sizeof(buf), &off, 0x4000, NULL, 0) == 0)
		;
	assert_int_equal(nts_ke_parse(buf, off, &m, &why), -1);
	assert_non_null(strstr(why, "message longer than"));
}

static void response_judged(void **state)
{
	struct nts_ke_msg m;
	const char *why;

	(void)state;
	nts_ke_msg_init(&m);
	m.error = NTS_KE_ERR_BAD_REQUEST;
	assert_int_equal(nts_ke_check_response(&m, &why), -1);
	assert_string_equal(why, "server sent error 1 (bad request)");
	nts_ke_msg_init(&m);
	m.nprotos = 0;
	assert_int_equal(nts_ke_check_response(&m, &why), -1);
	assert_string_equal(why, "server refused NTPv4");
	m.nprotos = 1;
	m.naeads = 1;
	m.aeads[0] = 30;
	assert_int_equal(nts_ke_check_response(&m, &why), -1);
	assert_string_equal(why, "server refused AEAD_AES_SIV_CMAC_256");
	m.aeads[0] = NTS_AEAD_SIV_CMAC_256;
	assert_int_equal(nts_ke_check_response(&m, &why), -1);
	assert_string_equal(why, "no cookies");
	m.ncookies = 1;
	m.cookie_len[0] = 100;
	assert_int_equal(nts_ke_check_response(&m, &why), 0);
	/* Section 4.1.4 defines no warning codes: any one is an error. */
	m.warning = 0;
	assert_int_equal(nts_ke_check_response(&m, &why), -1);
	assert_string_equal(why, "server sent warning 0 (unrecognised)");
	m.warning = -1;
	m.port = 0;
	assert_int_equal(nts_ke_check_response(&m, &why), -1);
	assert_string_equal(why, "port record names port 0");
}

/* Sections 4.1.7 and 4.1.8: the response's server and port replace the
   client's defaults where it names them. */
static void ntp_server_negotiated(void **state)
{
	struct nts_ke_msg m;
	char host[16] = "127.0.0.1";
	uint16_t port = 123;

	(void)state;
	nts_ke_msg_init(&m);
	assert_int_equal(nts_ke_ntp_server(&m, host, sizeof(host), &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 123);
	m.port = 4123;
	assert_int_equal(nts_ke_ntp_server(&m, host, sizeof(host), &port), 1);
	assert_int_equal(port, 4123);
	assert_int_equal(nts_ke_ntp_server(&m, host, sizeof(host), &port), 0);
	strcpy(m.server, "Time.Example");
	assert_int_equal(nts_ke_ntp_server(&m, host, sizeof(host), &port), 1);
	assert_string_equal(host, "Time.Example");
	strcpy(host, "time.example");
	assert_int_equal(nts_ke_ntp_server(&m, host, sizeof(host), &port), 0);
	strcpy(m.server, "a.name.longer.than.sixteen");
	assert_int_equal(nts_ke_ntp_server(&m, host, sizeof(host), &port), -1);
	assert_string_equal(host, "time.example");
}

static void server_answers(void **state)
{
	struct nts_ke_msg req, resp;
	const char *why;

	(void)state;
	assert_int_equal(nts_ke_parse(request, sizeof(request), &req, &why), sizeof(request));
	assert_int_equal(nts_ke_answer(&req, &resp), 1);
	assert_int_equal(resp.nprotos, 1);
	assert_int_equal(resp.naeads, 1);
	assert_int_equal(resp.aeads[0], NTS_AEAD_SIV_CMAC_256);
	/* Only AES-128-GCM-SIV offered: an empty AEAD list, no keys. */
	req.aeads[0] = 30;
	assert_int_equal(nts_ke_answer(&req, &resp), 0);
	assert_int_equal(resp.naeads, 0);
	/* Only some other protocol: an empty protocol list. */
	req.protos[0] = 0x8001;
	assert_int_equal(nts_ke_answer(&req, &resp), 0);
	assert_int_equal(resp.nprotos, 0);
	/* No protocol list at all: bad request. */
	req.nprotos = -1;
	assert_int_equal(nts_ke_answer(&req, &resp), 0);
	assert_int_equal(resp.error, NTS_KE_ERR_BAD_REQUEST);
}

static void server_option(void **state)
{
	static const struct {
		const char *arg, *host, *port;
	} ok[] = {
		{ NULL, "ep.example", "4460" },
		{ "", "ep.example", "4460" },
		{ "ke.example", "ke.example", "4460" },
		{ "ke.example:14460", "ke.example", "14460" },
		{ "127.0.0.1:1", "127.0.0.1", "1" },
		{ "[::1]:4461", "::1", "4461" },
		{ "[::1]", "::1", "4460" },
		{ "2001:db8::1", "2001:db8::1", "4460" },
	};
	static const char *const bad[] = { "ke:0", "ke:65536", "ke:", "ke:x1", ":4460", "[::1", "[::1]x", "[]:1" };
	char host[64], port[8];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		if (nts_ke_server_parse(ok[i].arg, "ep.example", host, sizeof(host), port) != 0)
			fail_msg("'%s' refused", ok[i].arg ? ok[i].arg : "(null)");
		assert_string_equal(host, ok[i].host);
		assert_string_equal(port, ok[i].port);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (nts_ke_server_parse(bad[i], "ep.example", host, sizeof(host), port) != -1)
			fail_msg("'%s' taken", bad[i]);
	/* A default host that is an IPv6 address keeps its colons. */
	assert_int_equal(nts_ke_server_parse(NULL, "fe80::1", host, sizeof(host), port), 0);
	assert_string_equal(host, "fe80::1");
}

/* --nts-port: the port alone, and never beside a port of --nts=HOST:PORT. */
static void port_option(void **state)
{
	static const char *const bare[] = { NULL, "", "ke.example", "[::1]", "2001:db8::1" };
	static const char *const ported[] = { "ke.example:14460", "[::1]:4461", "127.0.0.1:1" };
	static const char *const bad[] = { "0", "65536", "", "x", "44 60", "-1", "99999999999999999999" };
	char port[8];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bare); i++) {
		strcpy(port, "4460");
		if (nts_ke_port_parse(bare[i], "14461", port) != 0)
			fail_msg("--nts=%s --nts-port 14461 refused", bare[i] ? bare[i] : "(bare)");
		assert_string_equal(port, "14461");
	}
	for (i = 0; i < ARRAY_SIZE(ported); i++) {
		strcpy(port, "4460");
		assert_int_equal(nts_ke_port_parse(ported[i], "14461", port), -2);
		assert_string_equal(port, "4460");
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		strcpy(port, "4460");
		if (nts_ke_port_parse(NULL, bad[i], port) != -1)
			fail_msg("--nts-port '%s' taken", bad[i]);
		assert_string_equal(port, "4460");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(client_request_bytes),
		cmocka_unit_test(response_round_trip),
		cmocka_unit_test(malformed),
		cmocka_unit_test(unknown_noncritical_skipped),
		cmocka_unit_test(extra_cookies_counted),
		cmocka_unit_test(endless_refused),
		cmocka_unit_test(response_judged),
		cmocka_unit_test(ntp_server_negotiated),
		cmocka_unit_test(server_answers),
		cmocka_unit_test(server_option),
		cmocka_unit_test(port_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
