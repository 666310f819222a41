/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/nts_client.c: a client's request fields and its
   checks of replies built here as a server would build them (the AEAD
   itself: tests/unit/nts_aead.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nts_aead.h"
#include "nts_client.h"
#include "nts_ef.h"
#include "ntp.h"
#include "util_private.h"

/* How much of a reply its authenticator covered (nts_client_reply). */
static size_t covered;

static const struct nts_keys keys = {
	.c2s = "0123456789abcdef0123456789abcde",
	.s2c = "fedcba9876543210fedcba987654321",
};

/* A client with @n cookies of 100 bytes, each filled with its index. */
static struct nts_client *client(unsigned n)
{
	static struct nts_ke_msg m;
	struct nts_client *c = nts_client_new();
	char err[128];
	unsigned i;

	nts_ke_msg_init(&m);
	m.ncookies = n;
	for (i = 0; i < n; i++) {
		m.cookie_len[i] = 100;
		memset(m.cookie[i], (int)i + 1, 100);
	}
	assert_non_null(c);
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

/* The server's reply to @req: the uid echoed, @ncookies new cookies
   sealed under S2C (@stratum 0 and no authenticator: an NTSN kiss). */
static size_t reply(const unsigned char *req, size_t reqlen, unsigned ncookies, int nak,
		    unsigned char *pkt, size_t cap)
{
	struct nts_ef_view v;
	const char *why;
	unsigned char inner[1024], *nonce, *ct;
	size_t off = NTP_HEADER_LEN, ilen = 0;
	char err[128];
	struct nts_aead *s2c;
	unsigned i;

	assert_int_equal(nts_ef_parse(req, reqlen, &v, &why), 0);
	memset(pkt, 0, NTP_HEADER_LEN);
	pkt[0] = 0x24;
	if (nak)
		put32(pkt + 12, 0x4e54534eu);	/* stratum 0, "NTSN" */
	else
		pkt[1] = 1;
	assert_int_equal(nts_ef_put(pkt, cap, &off, NTS_EF_UID, v.uid.p, v.uid.len), 0);
	if (nak)
		return off;
	for (i = 0; i < ncookies; i++)
		assert_int_equal(nts_ef_put(inner, sizeof(inner), &ilen, NTS_EF_COOKIE, req, 100), 0);
	assert_int_equal(nts_ef_put_auth(pkt, cap, &off, NTS_NONCE_LEN, ilen + NTS_TAG_LEN, &nonce, &ct), 0);
	memset(nonce, 7, NTS_NONCE_LEN);
	s2c = nts_aead_new(keys.s2c, NTS_KEY_LEN, err, sizeof(err));
	assert_int_equal(nts_aead_seal(s2c, nonce, NTS_NONCE_LEN, pkt, (size_t)(nonce - 8 - pkt),
				       inner, ilen, ct), (long)(ilen + NTS_TAG_LEN));
	nts_aead_free(s2c);
	return off;
}

static void request_fields(void **state)
{
	struct nts_client *c = client(3);
	unsigned char pkt[2048], pt[16];
	struct nts_ef_view v;
	const char *why;
	char err[128];
	struct nts_aead *c2s = nts_aead_new(keys.c2s, NTS_KEY_LEN, err, sizeof(err));
	size_t len;

	(void)state;
	len = request(c, pkt, sizeof(pkt));
	assert_int_equal(nts_client_cookies(c), 2);
	assert_int_equal(nts_ef_parse(pkt, len, &v, &why), 0);
	assert_int_equal(v.uid.len, NTS_UID_LEN);
	/* The last cookie, once; placeholders to bring the jar back to 8. */
	assert_int_equal(v.ncookies, 1);
	assert_int_equal(v.cookie[0].p[0], 3);
	assert_int_equal(v.nplaceholders, 8 - 2 - 1);
	assert_int_equal(v.placeholder_min, 100);
	assert_int_equal(v.placeholder_max, 100);
	/* Sealed under C2S over all before it, with nothing inside. */
	assert_true(v.have_auth);
	assert_int_equal(nts_aead_open(c2s, v.nonce.p, v.nonce.len, pkt, v.aad_len, v.ct.p, v.ct.len, pt), 0);
	assert_true(nts_client_seal_ns(c) >= 0);
	/* No room for the fields: refused, the cookie kept. */
	{
		size_t short_len = NTP_HEADER_LEN;

		assert_int_equal(nts_client_request(c, pkt, 300, &short_len), -1);
		assert_int_equal(short_len, NTP_HEADER_LEN);
		assert_int_equal(nts_client_cookies(c), 2);
	}
	nts_aead_free(c2s);
	nts_client_free(c);
}

static void reply_ok_adds_cookies(void **state)
{
	struct nts_client *c = client(1);
	unsigned char req[2048], rep[2048];
	const char *why = NULL;
	size_t qlen, rlen;

	(void)state;
	qlen = request(c, req, sizeof(req));
	assert_int_equal(nts_client_cookies(c), 0);
	rlen = reply(req, qlen, 8, 0, rep, sizeof(rep));
	assert_int_equal(nts_client_reply(c, rep, rlen, &covered, &why), NTS_REPLY_OK);
	assert_int_equal(nts_client_cookies(c), 8);
	assert_true(nts_client_open_ns(c) > 0);
	/* The same reply again: nothing of ours is waiting. */
	assert_int_equal(nts_client_reply(c, rep, rlen, &covered, &why), NTS_REPLY_BOGUS);
	assert_string_equal(why, "no request of ours is waiting");
	nts_client_free(c);
}

static void reply_bogus(void **state)
{
	struct nts_client *c = client(8);
	unsigned char req[2048], rep[2048], old[2048];
	const char *why = NULL;
	size_t qlen, rlen, olen;

	(void)state;
	/* A reply to an earlier request (a replay): its uid is not this one's. */
	qlen = request(c, req, sizeof(req));
	olen = reply(req, qlen, 1, 0, old, sizeof(old));
	qlen = request(c, req, sizeof(req));
	assert_int_equal(nts_client_reply(c, old, olen, &covered, &why), NTS_REPLY_BOGUS);
	assert_string_equal(why, "unique identifier does not match the request's");

	rlen = reply(req, qlen, 1, 0, rep, sizeof(rep));
	/* A tampered authenticator. */
	rep[rlen - 1] ^= 1;
	assert_int_equal(nts_client_reply(c, rep, rlen, &covered, &why), NTS_REPLY_BOGUS);
	assert_string_equal(why, "authenticator does not verify");
	rep[rlen - 1] ^= 1;
	/* A tampered header: the associated data. */
	rep[40] ^= 1;
	assert_int_equal(nts_client_reply(c, rep, rlen, &covered, &why), NTS_REPLY_BOGUS);
	assert_string_equal(why, "authenticator does not verify");
	rep[40] ^= 1;
	/* Truncated inside the authenticator. */
	assert_int_equal(nts_client_reply(c, rep, rlen - 4, &covered, &why), NTS_REPLY_BOGUS);
	assert_non_null(strstr(why, "runs past the end"));
	/* None of that was used: the genuine reply still is. */
	assert_int_equal(nts_client_reply(c, rep, rlen, &covered, &why), NTS_REPLY_OK);
	nts_client_free(c);
}

/* RFC 8915 section 5.7: a NAK is unauthenticated, so anyone who saw the
   request can send one; it neither ends the wait for the authentic
   reply nor empties the jar. */
static void reply_nak(void **state)
{
	struct nts_client *c = client(2);
	unsigned char req[2048], nak[2048], rep[2048];
	const char *why;
	size_t qlen, nlen, rlen;

	(void)state;
	qlen = request(c, req, sizeof(req));
	nlen = reply(req, qlen, 0, 1, nak, sizeof(nak));
	assert_int_equal(nts_client_reply(c, nak, nlen, &covered, &why), NTS_REPLY_NAK);
	assert_int_equal(covered, 0);
	assert_int_equal(nts_client_cookies(c), 1);
	/* The authentic reply that follows is still taken. */
	rlen = reply(req, qlen, 1, 0, rep, sizeof(rep));
	assert_int_equal(nts_client_reply(c, rep, rlen, &covered, &why), NTS_REPLY_OK);
	assert_int_equal(nts_client_cookies(c), 2);
	/* A NAK with no reply after it: the cookies are kept for the next
	   request (until NTS-KE succeeds). */
	qlen = request(c, req, sizeof(req));
	nlen = reply(req, qlen, 0, 1, nak, sizeof(nak));
	assert_int_equal(nts_client_reply(c, nak, nlen, &covered, &why), NTS_REPLY_NAK);
	assert_int_equal(nts_client_cookies(c), 1);
	qlen = request(c, req, sizeof(req));
	assert_true(qlen > NTP_HEADER_LEN);
	nts_client_free(c);
}

/* Only the part of a reply its authenticator covers may be read: a field
   after it is not counted in what the reply covers. */
static void covered_part(void **state)
{
	struct nts_client *c = client(2);
	unsigned char req[2048], rep[2048];
	const char *why;
	struct nts_ef_view v;
	size_t qlen, rlen;

	(void)state;
	qlen = request(c, req, sizeof(req));
	rlen = reply(req, qlen, 1, 0, rep, sizeof(rep));
	assert_int_equal(nts_ef_parse(rep, rlen, &v, &why), 0);
	assert_int_equal(nts_ef_put(rep, sizeof(rep), &rlen, 0xf5e7, NULL, 64), 0);
	assert_int_equal(nts_client_reply(c, rep, rlen, &covered, &why), NTS_REPLY_OK);
	assert_int_equal(covered, v.aad_len);
	assert_int_equal(covered, NTP_HEADER_LEN + 4 + NTS_UID_LEN);
	nts_client_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_fields),
		cmocka_unit_test(reply_ok_adds_cookies),
		cmocka_unit_test(reply_bogus),
		cmocka_unit_test(reply_nak),
		cmocka_unit_test(covered_part),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
