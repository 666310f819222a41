/* SPDX-License-Identifier: ISC */
/*
 * nts_aead.h - AEAD_AES_SIV_CMAC_256 (RFC 5297), the AEAD that NTS uses
 * (RFC 8915 section 5.1), through GnuTLS (GNUTLS_CIPHER_AES_128_SIV: AES
 * in SIV mode with a 256-bit key, two 128-bit halves).  Nothing here is
 * cryptography of our own: this file holds a key and hands buffers to
 * GnuTLS.
 *
 * The ciphertext is the 16-byte SIV tag followed by the encrypted
 * plaintext, as the NTS authenticator carries it.
 */
#ifndef NTPX_NTS_AEAD_H
#define NTPX_NTS_AEAD_H

#include <stddef.h>

struct nts_aead;

/* A cipher under the @len-byte @key (NTS_KEY_LEN); NULL with a line in
   @err when GnuTLS refuses it. */
struct nts_aead *nts_aead_new(const unsigned char *key, size_t len, char *err, size_t errlen);
void nts_aead_free(struct nts_aead *a);

/* Another key for @a (a server's per-request keys without a new
   handle each time: GnuTLS's key schedule, no allocation); 0 or -1. */
int nts_aead_set_key(struct nts_aead *a, const unsigned char *key, size_t len);

/*
 * @len random bytes into @nonce from GnuTLS's generator for nonces
 * (unpredictable, and no structure shared between two draws: RFC 8915
 * section 9.1 wants cookies nobody can link); 0 or -1.
 */
int nts_aead_nonce(void *nonce, size_t len);

/*
 * Seals @plen bytes of @plain (may be 0) under @nonce (@nlen bytes, at
 * least 1) with @alen bytes of associated data @aad into @ct, which has
 * room for @plen + 16 bytes.  Returns the ciphertext's length, or -1 (an
 * empty nonce is refused).
 */
long nts_aead_seal(struct nts_aead *a, const void *nonce, size_t nlen, const void *aad, size_t alen,
		   const void *plain, size_t plen, void *ct);

/*
 * Opens @clen bytes of @ct into @plain (room for @clen - 16 bytes).
 * Returns the plaintext's length, or -1 when it does not authenticate
 * (or is shorter than the tag, or the nonce is empty).
 */
long nts_aead_open(struct nts_aead *a, const void *nonce, size_t nlen, const void *aad, size_t alen,
		   const void *ct, size_t clen, void *plain);

#endif
