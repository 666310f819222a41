/* SPDX-License-Identifier: ISC */
/*
 * nts_ef.h - the NTP extension fields of NTS (RFC 8915 section 5.7),
 * built and parsed.  No cryptography: the authenticator's nonce and
 * ciphertext are placed and found here and sealed and opened by
 * lib/nts_aead.c.
 *
 * Every extension field (RFC 7822) is a 16-bit type, a 16-bit length
 * that counts the whole field, and a body padded with zeros to a
 * multiple of 4; a field is at least 16 bytes long.
 *
 *   0x0104 Unique Identifier   at least 32 random bytes, echoed
 *   0x0204 NTS Cookie          one cookie
 *   0x0304 Cookie Placeholder  as long as a cookie, its body ignored
 *   0x0404 NTS Authenticator and Encrypted Extension Fields:
 *
 *  0                   1                   2                   3
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          Nonce Length         |       Ciphertext Length       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * .            Nonce, padded to a multiple of 4                   .
 * .            Ciphertext, padded to a multiple of 4              .
 * .            Additional Padding                                 .
 *
 * The associated data is the packet from its first byte to the start of
 * the authenticator; the plaintext is a run of extension fields (a
 * server's new cookies).  Fields after the authenticator are not
 * authenticated: nothing may read them (a server refuses a request that
 * has any, as chrony does; a client reads only what aad_len covers).
 */
#ifndef NTPX_NTS_EF_H
#define NTPX_NTS_EF_H

#include <stddef.h>
#include <stdint.h>

#define NTS_EF_UID		0x0104
#define NTS_EF_COOKIE		0x0204
#define NTS_EF_PLACEHOLDER	0x0304
#define NTS_EF_AUTH		0x0404

#define NTS_EF_MIN		16	/* the shortest field (RFC 7822) */
#define NTS_UID_LEN		32	/* the identifier we send, bytes */
#define NTS_NONCE_LEN		16	/* the nonce we send (and the least we take) */
#define NTS_TAG_LEN		16	/* AES-SIV's tag, the least ciphertext */
#define NTS_EF_COOKIES_MAX	8	/* cookies and placeholders kept */

/*
 * Appends a field of @type with @len bytes of @body (NULL: zeros, a
 * placeholder's) to the packet @pkt of capacity @cap at *@off, padded to
 * a multiple of 4 and to NTS_EF_MIN, and advances *@off.  Returns 0, or
 * -1 when it does not fit (nothing written).
 */
int nts_ef_put(void *pkt, size_t cap, size_t *off, uint16_t type, const void *body, size_t len);

/*
 * Appends an authenticator for a nonce of @nlen and a ciphertext of @clen
 * bytes at *@off and points *@nonce and *@ct where they go (the padding
 * is zeroed here); the associated data is then @pkt's first *@off bytes
 * as they were before the call.  Returns 0, or -1 when it does not fit.
 */
int nts_ef_put_auth(void *pkt, size_t cap, size_t *off, size_t nlen, size_t clen,
		    unsigned char **nonce, unsigned char **ct);

/* A span of the packet. */
struct nts_span {
	const unsigned char *p;
	size_t len;
};

/* What a packet's NTS fields hold (pointers into the packet). */
struct nts_ef_view {
	struct nts_span uid;			/* len 0: none */
	unsigned ncookies;			/* cookies seen */
	struct nts_span cookie[NTS_EF_COOKIES_MAX];	/* the first ones */
	unsigned nplaceholders;			/* placeholders seen */
	size_t placeholder_min, placeholder_max;	/* their bodies' lengths */
	int have_auth;
	size_t aad_len;				/* bytes before the authenticator */
	size_t auth_end;			/* ... and through it */
	struct nts_span nonce, ct;
	unsigned nother;			/* other fields before it, skipped */
	unsigned nts_fields;			/* fields of NTS's four types (of
						   sound length) met, also by a
						   parse that failed */
};

/*
 * Parses the extension fields after the 48-byte header of the packet
 * @pkt of @len bytes (@len >= 48) into @v.  Returns 0, or -1 with *@why
 * one line saying what is wrong ("extension field 2 (cookie): length 10
 * runs past the end"): a field shorter than NTS_EF_MIN or not a multiple
 * of 4, one that runs past the end, bytes after the last field that are
 * no field, two identifiers or two authenticators, an identifier shorter
 * than 32 bytes, an authenticator whose nonce is shorter than
 * NTS_NONCE_LEN or whose ciphertext is shorter than NTS_TAG_LEN or runs
 * past the field.  Whether the fields a request or reply needs are there
 * is the caller's to judge.  Fields after the authenticator are not
 * parsed (auth_end < @len says there are some).  On failure, nts_fields
 * still says whether the packet meant to be NTS.
 */
int nts_ef_parse(const void *pkt, size_t len, struct nts_ef_view *v, const char **why);

/*
 * Parses decrypted extension fields (@buf, @len bytes: a whole number of
 * fields) into @v's cookies, the only ones a reply's plaintext carries
 * that we use; others are counted in nother.  Returns 0, or -1 with
 * *@why as nts_ef_parse().
 */
int nts_ef_parse_inner(const void *buf, size_t len, struct nts_ef_view *v, const char **why);

#endif
