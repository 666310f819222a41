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

#include "nts_aead.h"
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

static int zeros(const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		if (*b++)
			return 0;
	return 1;
}

static void ms_sleep(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * NTPX_NS_PER_MS };

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
	/* The keys are of no more use once the reply is sealed. */
	assert_true(zeros(&req.keys, sizeof(req.keys)));
	{
		size_t covered;

		assert_int_equal(nts_client_reply(c, pkt, rlen, &covered, &why), NTS_REPLY_OK);
		assert_int_equal(covered, rlen - (4 + 4 + NTS_NONCE_LEN + 7 * 104 + NTS_TAG_LEN));
	}
	assert_int_equal(nts_client_cookies(c), 8);
	nts_client_free(c);
	nts_server_free(s);
}

#define NONCES	1000

/* The nonces of the cookies in the reply @pkt (@len bytes) and of the
   reply itself into @out from *@n on; returns how many it added. */
static unsigned reply_nonces(const unsigned char *pkt, size_t len, unsigned char (*out)[NTS_NONCE_LEN],
			     unsigned *n)
{
	struct nts_ef_view v, in;
	unsigned char plain[1024];
	const char *why;
	char err[128];
	struct nts_aead *a = nts_aead_new(keys.s2c, NTS_KEY_LEN, err, sizeof(err));
	unsigned i, before = *n;

	assert_int_equal(nts_ef_parse(pkt, len, &v, &why), 0);
	assert_true(nts_aead_open(a, v.nonce.p, v.nonce.len, pkt, v.aad_len, v.ct.p, v.ct.len,
				  plain) > 0);
	nts_aead_free(a);
	assert_int_equal(nts_ef_parse_inner(plain, v.ct.len - NTS_TAG_LEN, &in, &why), 0);
	memcpy(out[(*n)++], v.nonce.p, NTS_NONCE_LEN);
	for (i = 0; i < in.ncookies && *n < NONCES; i++)
		memcpy(out[(*n)++], in.cookie[i].p + 4, NTS_NONCE_LEN);
	return *n - before;
}

/*
 * RFC 8915 section 9.1: nobody who sees a client's cookies may tie them
 * together.  Their nonces travel in the clear, so no two may share
 * structure: among 1000 of them (from NTS-KE's cookies and from replies,
 * with the replies' own nonces), no byte position holds the same value
 * in all (a salt, a counter's high bytes), no two agree in 8 or more of
 * their 16 positions (random ones agree in one on average; two under one
 * salt agree in at least 8), and none is a small step from the one made
 * before it (a counter).  A chance failure is below 1e-12.
 */
static void cookie_nonces_unlinked(void **state)
{
	static unsigned char nonce[NONCES][NTS_NONCE_LEN];
	char err[128];
	struct nts_server *s = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err));
	unsigned char cookie[NTS_SERVER_COOKIE_LEN], pkt[2048];
	unsigned n = 0, i, j, k;

	(void)state;
	while (n < NONCES / 2) {
		assert_int_equal(nts_server_cookie(s, &keys, cookie), 0);
		memcpy(nonce[n++], cookie + 4, NTS_NONCE_LEN);
	}
	while (n < NONCES) {
		struct nts_client *c = client_of(s, 1);
		struct nts_server_req req;
		const char *why;
		int64_t ns;
		size_t qlen = request(c, pkt, sizeof(pkt)), rlen = NTP_HEADER_LEN;

		assert_int_equal(nts_server_check(s, pkt, qlen, &req, &why, &ns), NTS_SERVER_OK);
		assert_int_equal(nts_server_reply(s, &req, pkt, qlen, &rlen, &ns), 0);
		assert_int_equal(reply_nonces(pkt, rlen, nonce, &n) > 1, 1);
		nts_client_free(c);
	}
	for (k = 0; k < NTS_NONCE_LEN; k++) {
		for (i = 1; i < NONCES && nonce[i][k] == nonce[0][k]; i++)
			;
		if (i == NONCES)
			fail_msg("byte %u of every nonce is %#x", k, nonce[0][k]);
	}
	for (i = 0; i < NONCES; i++)
		for (j = i + 1; j < NONCES; j++) {
			unsigned same = 0;

			for (k = 0; k < NTS_NONCE_LEN; k++)
				same += nonce[i][k] == nonce[j][k];
			if (same >= 8)
				fail_msg("nonces %u and %u agree in %u of 16 bytes", i, j, same);
		}
	for (i = 1; i < NONCES; i++) {
		uint64_t a = get64(nonce[i - 1] + 8), b = get64(nonce[i] + 8);
		uint64_t step = a > b ? a - b : b - a;

		if (step < (uint64_t)1 << 32)
			fail_msg("nonce %u is %llu from the one before it", i, (unsigned long long)step);
	}
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
	/* A tampered authenticator: what does not authenticate gets a NAK
	   (RFC 8915 section 5.7), and the cookie's keys are not kept. */
	len = request(c, pkt, sizeof(pkt));
	pkt[len - 1] ^= 1;
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_NAK);
	assert_string_equal(why, "authenticator does not verify");
	assert_true(zeros(&req.keys, sizeof(req.keys)));
	/* A tampered header: the associated data. */
	pkt[len - 1] ^= 1;
	pkt[40] ^= 1;
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_NAK);
	assert_string_equal(why, "authenticator does not verify");
	pkt[40] ^= 1;
	assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_OK);
	/* A field after the authenticator, which nothing may read: dropped. */
	{
		size_t more = len;

		assert_int_equal(nts_ef_put(pkt, sizeof(pkt), &more, 0xf5e7, NULL, 64), 0);
		assert_int_equal(nts_server_check(s, pkt, more, &req, &why, &ns), NTS_SERVER_DROP);
		assert_string_equal(why, "extension fields after the authenticator");
	}
	/* Every placeholder as long as the cookie, not only the first: the
	   second cut to 84 bytes (an unknown field of 16 after it keeps the
	   length), the request sealed again, so that only the length is
	   wrong. */
	{
		struct nts_ef_view v;
		unsigned char *second = pkt + NTP_HEADER_LEN + 36 + 104 + 104;
		struct nts_aead *a = nts_aead_new(keys.c2s, NTS_KEY_LEN, err, sizeof(err));
		struct nts_client *two = client_of(s, 2);

		len = request(two, pkt, sizeof(pkt));
		nts_client_free(two);
		assert_int_equal(get16(second), NTS_EF_PLACEHOLDER);
		assert_int_equal(get16(second + 104), NTS_EF_PLACEHOLDER);
		put16(second + 2, 88);
		put16(second + 88, 0x7f00);
		put16(second + 90, 16);
		assert_int_equal(nts_ef_parse(pkt, len, &v, &why), 0);
		assert_int_equal(v.placeholder_min, 84);
		assert_int_equal(nts_aead_seal(a, v.nonce.p, v.nonce.len, pkt, v.aad_len, NULL, 0,
					       (void *)v.ct.p), NTS_TAG_LEN);
		nts_aead_free(a);
		assert_int_equal(nts_server_check(s, pkt, len, &req, &why, &ns), NTS_SERVER_DROP);
		assert_string_equal(why, "cookie placeholder not as long as the cookie");
	}
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
	struct nts_server *s = nts_server_new(200 * NTPX_NS_PER_MS, err, sizeof(err));
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
		cmocka_unit_test(cookie_nonces_unlinked),
		cmocka_unit_test(refused),
		cmocka_unit_test(cookies_expire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
