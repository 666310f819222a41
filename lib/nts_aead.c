/* SPDX-License-Identifier: ISC */
/*
 * nts_aead.c - AES-SIV-CMAC-256 through GnuTLS's AEAD interface; see
 * nts_aead.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "nts_aead.h"

#define TAG_LEN 16

struct nts_aead {
	gnutls_aead_cipher_hd_t h;
};

struct nts_aead *nts_aead_new(const unsigned char *key, size_t len, char *err, size_t errlen)
{
	struct nts_aead *a = calloc(1, sizeof(*a));
	gnutls_datum_t k = { .data = (unsigned char *)key, .size = (unsigned)len };
	int rc;

	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rc = gnutls_aead_cipher_init(&a->h, GNUTLS_CIPHER_AES_128_SIV, &k);
	if (rc < 0) {
		snprintf(err, errlen, "AES-SIV-CMAC-256: %s", gnutls_strerror(rc));
		free(a);
		return NULL;
	}
	return a;
}

void nts_aead_free(struct nts_aead *a)
{
	if (!a)
		return;
	gnutls_aead_cipher_deinit(a->h);
	free(a);
}

int nts_aead_nonce(void *nonce, size_t len)
{
	return gnutls_rnd(GNUTLS_RND_NONCE, nonce, len) < 0 ? -1 : 0;
}

int nts_aead_set_key(struct nts_aead *a, const unsigned char *key, size_t len)
{
	gnutls_datum_t k = { .data = (unsigned char *)key, .size = (unsigned)len };

	return gnutls_aead_cipher_set_key(a->h, &k) < 0 ? -1 : 0;
}

/* Nettle's SIV asserts a nonce of at least one byte (GnuTLS 3.7.9 passes
   an empty one on, and the process aborts): refused here instead. */
long nts_aead_seal(struct nts_aead *a, const void *nonce, size_t nlen, const void *aad, size_t alen,
		   const void *plain, size_t plen, void *ct)
{
	size_t out = plen + TAG_LEN;

	if (nlen == 0)
		return -1;
	if (gnutls_aead_cipher_encrypt(a->h, nonce, nlen, aad, alen, TAG_LEN, plain, plen, ct, &out) < 0)
		return -1;
	return (long)out;
}

long nts_aead_open(struct nts_aead *a, const void *nonce, size_t nlen, const void *aad, size_t alen,
		   const void *ct, size_t clen, void *plain)
{
	size_t out;

	if (clen < TAG_LEN || nlen == 0)
		return -1;
	out = clen - TAG_LEN;
	if (gnutls_aead_cipher_decrypt(a->h, nonce, nlen, aad, alen, TAG_LEN, ct, clen, plain, &out) < 0)
		return -1;
	return (long)out;
}
