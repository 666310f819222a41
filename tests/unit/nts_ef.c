/* SPDX-License-Identifier: ISC */
/* Unit tests for lib/nts_ef.c: the NTS extension fields (RFC 8915 5.7). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nts_ef.h"
#include "ntp.h"
#include "util_private.h"

/* A request as a client sends it: uid, cookie, 2 placeholders, auth. */
static size_t build_request(unsigned char *pkt, size_t cap, unsigned char **nonce, unsigned char **ct)
{
	unsigned char uid[NTS_UID_LEN], cookie[100];
	size_t off = NTP_HEADER_LEN;

	memset(pkt, 0, NTP_HEADER_LEN);
	memset(uid, 0x11, sizeof(uid));
	memset(cookie, 0x22, sizeof(cookie));
	assert_int_equal(nts_ef_put(pkt, cap, &off, NTS_EF_UID, uid, sizeof(uid)), 0);
	assert_int_equal(nts_ef_put(pkt, cap, &off, NTS_EF_COOKIE, cookie, sizeof(cookie)), 0);
	assert_int_equal(nts_ef_put(pkt, cap, &off, NTS_EF_PLACEHOLDER, NULL, sizeof(cookie)), 0);
	assert_int_equal(nts_ef_put(pkt, cap, &off, NTS_EF_PLACEHOLDER, NULL, sizeof(cookie)), 0);
	assert_int_equal(nts_ef_put_auth(pkt, cap, &off, NTS_NONCE_LEN, NTS_TAG_LEN, nonce, ct), 0);
	memset(*nonce, 0x33, NTS_NONCE_LEN);
	memset(*ct, 0x44, NTS_TAG_LEN);
	return off;
}

static void request_round_trip(void **state)
{
	unsigned char pkt[1024], *nonce, *ct;
	struct nts_ef_view v;
	const char *why = NULL;
	size_t len;

	(void)state;
	len = build_request(pkt, sizeof(pkt), &nonce, &ct);
	/* 48 + 36 uid + 104 cookie + 2 * 104 placeholders + 4 + 4 + 16 + 16 auth */
	assert_int_equal(len, 48 + 36 + 104 + 208 + 40);
	assert_int_equal(nts_ef_parse(pkt, len, &v, &why), 0);
	assert_int_equal(v.uid.len, NTS_UID_LEN);
	assert_ptr_equal(v.uid.p, pkt + 52);
	assert_int_equal(v.ncookies, 1);
	assert_int_equal(v.cookie[0].len, 100);
	assert_int_equal(v.nplaceholders, 2);
	assert_int_equal(v.placeholder_min, 100);
	assert_int_equal(v.placeholder_max, 100);
	assert_true(v.have_auth);
	assert_int_equal(v.aad_len, len - 40);
	assert_ptr_equal(v.nonce.p, nonce);
	assert_int_equal(v.nonce.len, NTS_NONCE_LEN);
	assert_ptr_equal(v.ct.p, ct);
	assert_int_equal(v.ct.len, NTS_TAG_LEN);
	/* The authenticator's lengths on the wire. */
	assert_int_equal(get16(pkt + len - 40), NTS_EF_AUTH);
	assert_int_equal(get16(pkt + len - 38), 40);
	assert_int_equal(get16(pkt + len - 36), NTS_NONCE_LEN);
	assert_int_equal(get16(pkt + len - 34), NTS_TAG_LEN);
}

static void short_fields_padded(void **state)
{
	unsigned char pkt[128];
	size_t off = NTP_HEADER_LEN;
	struct nts_ef_view v;
	const char *why;

	(void)state;
	memset(pkt, 0xff, sizeof(pkt));
	/* A 5-byte cookie becomes a 16-byte field, zero padded. */
	assert_int_equal(nts_ef_put(pkt, sizeof(pkt), &off, NTS_EF_COOKIE, "abcde", 5), 0);
	assert_int_equal(off, NTP_HEADER_LEN + 16);
	assert_int_equal(get16(pkt + NTP_HEADER_LEN + 2), 16);
	assert_int_equal(pkt[NTP_HEADER_LEN + 9], 0);
	memset(pkt, 0, NTP_HEADER_LEN);
	assert_int_equal(nts_ef_parse(pkt, off, &v, &why), 0);
	/* The body as the field holds it: padding included. */
	assert_int_equal(v.cookie[0].len, 12);
	/* No room: nothing written, offset kept. */
	off = 120;
	assert_int_equal(nts_ef_put(pkt, sizeof(pkt), &off, NTS_EF_COOKIE, "abcde", 5), -1);
	assert_int_equal(off, 120);
}

/* Each way a packet can be malformed: -1 and the line that says so. */
static void malformed(void **state)
{
	unsigned char pkt[1024], *nonce, *ct;
	struct nts_ef_view v;
	const char *why = NULL;
	size_t len, i;

	(void)state;
	len = build_request(pkt, sizeof(pkt), &nonce, &ct);

	/* Truncated anywhere inside a field: refused, never read past. */
	for (i = NTP_HEADER_LEN + 1; i < len; i++) {
		int field_end = i == 84 || i == 188 || i == 292 || i == 396;

		if (nts_ef_parse(pkt, i, &v, &why) != (field_end ? 0 : -1))
			fail_msg("cut at %zu: %s", i, field_end ? "refused" : "taken");
	}
	assert_int_equal(nts_ef_parse(pkt, len - 1, &v, &why), -1);
	assert_string_equal(why, "extension field 5 (authenticator): length 40 runs past the end (39 bytes left)");
	assert_int_equal(nts_ef_parse(pkt, NTP_HEADER_LEN + 2, &v, &why), -1);
	assert_string_equal(why, "extension field 1 (other): 2 bytes left, shorter than a field's header");

	/* A length that is not a multiple of 4. */
	put16(pkt + NTP_HEADER_LEN + 2, 37);
	assert_int_equal(nts_ef_parse(pkt, len, &v, &why), -1);
	assert_string_equal(why, "extension field 1 (unique identifier): length 37, not a multiple of 4 of at least 16");
	put16(pkt + NTP_HEADER_LEN + 2, 36);

	/* A nonce too short, a ciphertext too long for the field. */
	put16(pkt + len - 36, 8);
	assert_int_equal(nts_ef_parse(pkt, len, &v, &why), -1);
	assert_string_equal(why, "extension field 5 (authenticator): nonce length 8, less than 16");
	put16(pkt + len - 36, NTS_NONCE_LEN);
	put16(pkt + len - 34, 20);
	assert_int_equal(nts_ef_parse(pkt, len, &v, &why), -1);
	assert_string_equal(why, "extension field 5 (authenticator): nonce 16 and ciphertext 20 run past its body of 36");
	put16(pkt + len - 34, NTS_TAG_LEN);
	assert_int_equal(nts_ef_parse(pkt, len, &v, &why), 0);

	/* Two identifiers. */
	{
		unsigned char two[256];
		size_t off = NTP_HEADER_LEN;

		memset(two, 0, NTP_HEADER_LEN);
		assert_int_equal(nts_ef_put(two, sizeof(two), &off, NTS_EF_UID, pkt + 52, 32), 0);
		assert_int_equal(nts_ef_put(two, sizeof(two), &off, NTS_EF_UID, pkt + 52, 32), 0);
		assert_int_equal(nts_ef_parse(two, off, &v, &why), -1);
		assert_string_equal(why, "extension field 2 (unique identifier): a second one");
		/* An identifier of 16 bytes. */
		off = NTP_HEADER_LEN;
		assert_int_equal(nts_ef_put(two, sizeof(two), &off, NTS_EF_UID, pkt + 52, 16), 0);
		assert_int_equal(nts_ef_parse(two, off, &v, &why), -1);
		assert_string_equal(why, "extension field 1 (unique identifier): body of 16 bytes, less than 32");
		/* ... still meant to be NTS: the server's verdict is nts-bad. */
		assert_int_equal(v.nts_fields, 1);
	}
}

/* After the authenticator nothing is read: a broken field there is not
   the packet's fault, and a plaintext holds cookies only. */
static void after_auth_and_inner(void **state)
{
	unsigned char pkt[1024], *nonce, *ct, inner[256];
	struct nts_ef_view v;
	const char *why;
	size_t len, off = 0;

	(void)state;
	len = build_request(pkt, sizeof(pkt), &nonce, &ct);
	memset(pkt + len, 0xee, 6);
	assert_int_equal(nts_ef_parse(pkt, len + 6, &v, &why), 0);
	/* ... but the view says it is there, for the server to refuse. */
	assert_int_equal(v.auth_end, len);
	assert_int_equal(v.aad_len, len - 40);
	assert_int_equal(v.nts_fields, 5);

	assert_int_equal(nts_ef_put(inner, sizeof(inner), &off, NTS_EF_COOKIE, pkt, 100), 0);
	assert_int_equal(nts_ef_put(inner, sizeof(inner), &off, NTS_EF_COOKIE, pkt, 100), 0);
	assert_int_equal(nts_ef_put(inner, sizeof(inner), &off, NTS_EF_UID, pkt, 32), 0);
	assert_int_equal(nts_ef_parse_inner(inner, off, &v, &why), 0);
	assert_int_equal(v.ncookies, 2);
	assert_int_equal(v.nother, 1);
	assert_int_equal(v.uid.len, 0);
	assert_int_equal(nts_ef_parse_inner(inner, off - 1, &v, &why), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_round_trip),
		cmocka_unit_test(short_fields_padded),
		cmocka_unit_test(malformed),
		cmocka_unit_test(after_auth_and_inner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
