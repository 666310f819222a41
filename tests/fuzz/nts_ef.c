/* SPDX-License-Identifier: ISC */
/* libFuzzer target: the NTS extension field parser (lib/nts_ef.c) on any
   input, as a packet and as a decrypted plaintext; every span it points
   at lies inside the input, and the associated data ends where the
   authenticator starts. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nts_ef.h"
#include "util_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const struct nts_span *s, const unsigned char *buf, size_t size)
{
	return !s->len || (s->p >= buf && s->p + s->len <= buf + size);
}

static void check(const struct nts_ef_view *v, const unsigned char *buf, size_t size)
{
	unsigned i;

	if (!inside(&v->uid, buf, size) || !inside(&v->nonce, buf, size) || !inside(&v->ct, buf, size))
		__builtin_trap();
	for (i = 0; i < v->ncookies && i < NTS_EF_COOKIES_MAX; i++)
		if (!inside(&v->cookie[i], buf, size))
			__builtin_trap();
	if (v->have_auth && (v->aad_len + 4 > size || get16(buf + v->aad_len) != NTS_EF_AUTH ||
			     v->nonce.len < NTS_NONCE_LEN || v->ct.len < NTS_TAG_LEN))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nts_ef_view v;
	const char *why = NULL;
	unsigned char *buf = size ? __builtin_alloca(size) : NULL;

	if (size)
		memcpy(buf, data, size);
	if (nts_ef_parse(buf, size, &v, &why) == 0)
		check(&v, buf, size);
	else if (!why || !why[0])
		__builtin_trap();
	why = NULL;
	if (nts_ef_parse_inner(buf, size, &v, &why) == 0)
		check(&v, buf, size);
	else if (!why || !why[0])
		__builtin_trap();
	return 0;
}
