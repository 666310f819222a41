/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: a server's check of an NTS request (lib/nts_server.c)
 * on any input, as ntpreflect --nts-cert runs it on every datagram with
 * NTS fields, and its NAK and reply to what passes.
 *
 * The server key is fixed (nts_server_set_key), and so are the keys in
 * the cookies of the committed inputs (tests/fuzz/corpus/nts_server):
 * their cookies open in every run.  An input whose authenticator's nonce
 * starts with an odd byte is sealed anew under those keys before the
 * check, what its ciphertext holds after the tag taken as the plaintext,
 * so that its mutations stay authentic and reach the reply; the others
 * test the refusals.  A reply must be no longer than the request and
 * open under the server-to-client key.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nts_aead.h"
#include "nts_ef.h"
#include "nts_server.h"
#include "ntp.h"
#include "opt_units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEY_ID	0x6e747066u	/* "ntpf" */
static const unsigned char server_key[NTS_KEY_LEN] = "ntpx fuzz nts_server server key";
static const struct nts_keys keys = {
	.c2s = "ntpx fuzz nts_server client2srv",
	.s2c = "ntpx fuzz nts_server srv2client",
};

static struct nts_server *srv;
static struct nts_aead *c2s, *s2c;

static void setup(void)
{
	char err[128];

	srv = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err));
	c2s = nts_aead_new(keys.c2s, NTS_KEY_LEN, err, sizeof(err));
	s2c = nts_aead_new(keys.s2c, NTS_KEY_LEN, err, sizeof(err));
	if (!srv || !c2s || !s2c || nts_server_set_key(srv, KEY_ID, server_key) < 0)
		__builtin_trap();
}

/* Sealed anew under C2S, when its nonce's first byte is odd. */
static void reseal(unsigned char *buf, size_t size)
{
	struct nts_ef_view v;
	const char *why;
	unsigned char plain[2048];
	size_t plen;

	if (nts_ef_parse(buf, size, &v, &why) < 0 || !v.have_auth || !(v.nonce.p[0] & 1) ||
	    v.ct.len - NTS_TAG_LEN > sizeof(plain))
		return;
	plen = v.ct.len - NTS_TAG_LEN;
	memcpy(plain, v.ct.p + NTS_TAG_LEN, plen);
	if (nts_aead_seal(c2s, v.nonce.p, v.nonce.len, buf, v.aad_len, plain, plen,
			  (unsigned char *)v.ct.p) != (long)(plen + NTS_TAG_LEN))
		__builtin_trap();
}

/* The reply of @len bytes to a request of @reqlen: no longer, and
   authentic under S2C. */
static void check_reply(const unsigned char *out, size_t len, size_t reqlen)
{
	struct nts_ef_view v;
	const char *why;
	unsigned char plain[2048];

	if (len > reqlen || nts_ef_parse(out, len, &v, &why) < 0 || !v.have_auth ||
	    v.ct.len - NTS_TAG_LEN > sizeof(plain) ||
	    nts_aead_open(s2c, v.nonce.p, v.nonce.len, out, v.aad_len, v.ct.p, v.ct.len, plain) < 0)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nts_server_req req;
	const char *why = NULL;
	int64_t ns;
	unsigned char out[4096];
	size_t len = NTP_HEADER_LEN;
	unsigned char *buf = size ? __builtin_alloca(size) : NULL;

	if (!srv)
		setup();
	if (size)
		memcpy(buf, data, size);
	reseal(buf, size);
	switch (nts_server_check(srv, buf, size, &req, &why, &ns)) {
	case NTS_SERVER_OK:
		memset(out, 0, NTP_HEADER_LEN);
		if (size <= sizeof(out) && nts_server_reply(srv, &req, out, size, &len, &ns) == 0)
			check_reply(out, len, size);
		break;
	case NTS_SERVER_NAK:
		if (!why || !why[0] || req.uid_len < NTS_UID_LEN || req.uid_len > sizeof(req.uid))
			__builtin_trap();
		memset(out, 0, NTP_HEADER_LEN);
		if (nts_server_nak(&req, out, sizeof(out), &len) < 0)
			__builtin_trap();
		break;
	default:
		if (!why || !why[0])
			__builtin_trap();
	}
	return 0;
}
