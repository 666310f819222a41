/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: a client's check of an NTS reply (lib/nts_client.c,
 * nts_client_reply) on any input, as ntpprobe --nts runs it on every
 * reply that names its request.
 *
 * A request goes out first (its unique identifier is random), and the
 * input is made to answer it where it has the shape to: an identifier of
 * 32 bytes becomes the request's, and an authenticator whose nonce
 * starts with an odd byte is sealed anew under the server-to-client key,
 * what its ciphertext holds after the tag taken as the plaintext, so
 * that its mutations stay authentic and reach the cookies inside.  What
 * must hold: a reply taken is covered by its authenticator up to where
 * it says, a refused one says why, and the jar never holds more than 8.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nts_aead.h"
#include "nts_client.h"
#include "nts_ef.h"
#include "ntp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct nts_keys keys = {
	.c2s = "ntpx fuzz nts_client client2srv",
	.s2c = "ntpx fuzz nts_client srv2client",
};

static struct nts_client *c;
static struct nts_aead *s2c;
static struct nts_ke_msg jar;

static void setup(void)
{
	char err[128];

	nts_ke_msg_init(&jar);
	jar.ncookies = 1;
	jar.cookie_len[0] = 100;
	memset(jar.cookie[0], 0x5a, 100);
	c = nts_client_new();
	s2c = nts_aead_new(keys.s2c, NTS_KEY_LEN, err, sizeof(err));
	if (!c || !s2c || nts_client_set(c, &keys, &jar, err, sizeof(err)) < 0)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char req[2048], plain[2048];
	unsigned char *buf = size ? __builtin_alloca(size) : NULL;
	struct nts_ef_view q, v;
	const char *why = NULL;
	size_t reqlen = NTP_HEADER_LEN, covered = 1;
	char err[128];

	if (!c)
		setup();
	/* A request of ours waits, with a cookie to spend. */
	if (!nts_client_cookies(c) && nts_client_set(c, &keys, &jar, err, sizeof(err)) < 0)
		__builtin_trap();
	memset(req, 0, NTP_HEADER_LEN);
	if (nts_client_request(c, req, sizeof(req), &reqlen) < 0 ||
	    nts_ef_parse(req, reqlen, &q, &why) < 0)
		__builtin_trap();
	if (size)
		memcpy(buf, data, size);
	if (nts_ef_parse(buf, size, &v, &why) == 0) {
		if (v.uid.len == NTS_UID_LEN)
			memcpy((unsigned char *)v.uid.p, q.uid.p, NTS_UID_LEN);
		if (v.have_auth && (v.nonce.p[0] & 1) && v.ct.len - NTS_TAG_LEN <= sizeof(plain)) {
			size_t plen = v.ct.len - NTS_TAG_LEN;

			memcpy(plain, v.ct.p + NTS_TAG_LEN, plen);
			if (nts_aead_seal(s2c, v.nonce.p, v.nonce.len, buf, v.aad_len, plain, plen,
					  (unsigned char *)v.ct.p) != (long)(plen + NTS_TAG_LEN))
				__builtin_trap();
		}
	}
	switch (nts_client_reply(c, buf, size, &covered, &why)) {
	case NTS_REPLY_OK:
		if (nts_ef_parse(buf, size, &v, &why) < 0 || !v.have_auth || covered != v.aad_len ||
		    covered > size)
			__builtin_trap();
		break;
	case NTS_REPLY_NAK:
		if (covered != 0)
			__builtin_trap();
		break;
	default:
		if (covered != 0 || !why || !why[0])
			__builtin_trap();
	}
	if (nts_client_cookies(c) > NTS_COOKIES_MAX)
		__builtin_trap();
	return 0;
}
