/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/nts_server.c: cookies under rotating keys, the
   check of a client's request (lib/nts_client.c builds it) and the reply
   the client then accepts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "nts_client.h"
#include "nts_ef.h"
#include "nts_server.h"
#include "ntp.h"
#include "opt_units.h"
#include "util_private.h"

static const struct nts_keys keys = {
	.c2s = "0123456789abcdef0123456789abcde",
	.s2c = "fedcba9876543210fedcba987654321",
};

/* A client holding @n cookies of server @s, as NTS-KE would give them. */
static struct nts_client *client_of(struct nts_server *s, unsigned n)
{
	static struct nts_ke_msg m;
	struct nts_client *c = nts_client_new();
	char err[128];
	unsigned i;

	nts_ke_msg_init(&m);
	for (i = 0; i < n; i++) {
		assert_int_equal(nts_server_cookie(s, &keys, m.cookie[i]), 0);
		m.cookie_len[i] = NTS_SERVER_COOKIE_LEN;
	}
	m.ncookies = n;
	assert_int_equal(nts_client_set(c, &keys, &m, err, sizeof(err)), 0);
	return c;
}

static size_t request(struct nts_client *c, unsigned char *pkt, size_t cap)
{
	size_t len = NTP_HEADER_LEN;

	memset(pkt, 0, NTP_HEADER_LEN);
	pkt[0] = 0x23;
	assert_int_equal(nts_client_request(c, pkt, cap, &len), 0);
	return len;
}

static void ms_sleep(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	/* The cookies' age is what is tested, not an order of events. */
	nanosleep(&ts, NULL);
}

static void request_reply_round_trip(void **state)
{
	char err[128];
	struct nts_server *s = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err));
	struct nts_client *c = client_of(s, 2);
	struct nts_server_req req;
	unsigned char pkt[2048];
	const char *why = NULL;
	int64_t open_ns, seal_ns;
	size_t qlen, rlen = NTP_HEADER_LEN;

	(void)state;
	qlen = request(c, pkt, sizeof(pkt));
	assert_int_equal(nts_server_check(s, pkt, qlen, &req, &why, &open_ns), NTS_SERVER_OK);
	assert_memory_equal(&req.keys, &keys, sizeof(keys));
	/* One cookie spent, one left: 1 + 6 placeholders brings 8 back. */
	assert_int_equal(req.cookies, 7);
	assert_int_equal(req.uid_len, NTS_UID_LEN);
	assert_true(open_ns > 0);
	/* The reply, built over the request as ntpreflect does, and no
	   longer than it. */
	pkt[0] = 0x24;
	assert_int_equal(nts_server_reply(s, &req, pkt, qlen, &rlen, &seal_ns), 0);
	assert_true(rlen <= qlen);
	assert_int_equal(nts_client_reply(c, pkt, rlen, &why), NTS_REPLY_OK);
	assert_int_equal(nts_client_cookies(c), 8);
	nts_client_free(c);
	nts_server_free(s);
}

static void refused(void **state)
{
	char err[128];
	struct nts_server *s = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err));
	struct nts_server *other = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err));
	struct nts_client *c = client_of(s, 8), *stranger = client_of(other, 1);
	struct nts_server_req req;
	unsigned char pkt[2048];
	const char *why = NULL;
	int64_t ns;
	size_t len;

	(void)state;
	/* A tampered authenticator. */
	len = request(c, pkt, sizeof(pkt));
	pkt[len - 1] ^= 1;
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_DROP);
	assert_string_equal(why, "authenticator does not verify");
	/* A tampered header: the associated data. */
	pkt[len - 1] ^= 1;
	pkt[40] ^= 1;
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_DROP);
	assert_string_equal(why, "authenticator does not verify");
	pkt[40] ^= 1;
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_OK);
	/* Truncated: the field that runs past the end is named. */
	assert_int_equal(nts_server_check(s, pkt, len - 4, &req, &why, &ns), NTS_SERVER_DROP);
	assert_non_null(strstr(why, "(authenticator): length 40 runs past the end"));
	/* A cookie of another server (or an earlier run): a NAK. */
	len = request(stranger, pkt, sizeof(pkt));
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_NAK);
	assert_string_equal(why, "cookie under an expired server key");
	/* ... whose identifier the NAK echoes. */
	{
		unsigned char nak[512];
		size_t nlen = NTP_HEADER_LEN;
		struct nts_ef_view v;

		memset(nak, 0, NTP_HEADER_LEN);
		assert_int_equal(nts_server_nak(&req, nak, sizeof(nak), &nlen), 0);
		assert_int_equal(nts_ef_parse(nak, nlen, &v, &why), 0);
		assert_int_equal(v.uid.len, NTS_UID_LEN);
		assert_memory_equal(v.uid.p, pkt + NTP_HEADER_LEN + 4, NTS_UID_LEN);
	}
	/* A cookie of ours with a byte changed: it does not open. */
	len = request(c, pkt, sizeof(pkt));
	pkt[NTP_HEADER_LEN + 36 + 4 + 30] ^= 1;
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_NAK);
	assert_string_equal(why, "cookie does not open");
	/* No authenticator at all. */
	len = request(c, pkt, sizeof(pkt));
	assert_int_equal(nts_server_check(s, pkt, len - 40, &req, &why, &ns), NTS_SERVER_DROP);
	assert_string_equal(why, "no authenticator");
	nts_client_free(c);
	nts_client_free(stranger);
	nts_server_free(s);
	nts_server_free(other);
}

/* Keys rotate every 200 ms and the 2 before the current one are kept: a
   cookie lives 400 to 600 ms; one just made opens, one 1 s old does not. */
static void cookies_expire(void **state)
{
	char err[128];
	struct nts_server *s = nts_server_new(200 * 1000000, err, sizeof(err));
	struct nts_client *c = client_of(s, 2);
	struct nts_server_req req;
	unsigned char pkt[2048];
	const char *why;
	int64_t ns;
	size_t len;

	(void)state;
	len = request(c, pkt, sizeof(pkt));
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_OK);
	ms_sleep(1000);
	len = request(c, pkt, sizeof(pkt));
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_NAK);
	assert_string_equal(why, "cookie under an expired server key");
	nts_client_free(c);
	/* A fresh cookie under the new key opens. */
	c = client_of(s, 1);
	len = request(c, pkt, sizeof(pkt));
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_OK);
	nts_client_free(c);
	nts_server_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_reply_round_trip),
		cmocka_unit_test(refused),
		cmocka_unit_test(cookies_expire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
