/* SPDX-License-Identifier: ISC */
/*
 * nts_client.c - NTS for an NTP client: cookies, request fields, reply
 * checks (RFC 8915 section 5); see nts_client.h.  The AEAD is GnuTLS's
 * (lib/nts_aead.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock_read.h"
#include "nts_aead.h"
#include "nts_client.h"
#include "nts_ef.h"
#include "ntp.h"
#include "util_private.h"

struct nts_client {
	struct nts_aead *c2s, *s2c;
	unsigned ncookies;
	uint16_t cookie_len[NTS_COOKIES_MAX];
	unsigned char cookie[NTS_COOKIES_MAX][NTS_COOKIE_MAX];
	unsigned char uid[NTS_UID_LEN];
	int pending;			/* a request is out: uid is its */
	int64_t seal_ns, open_ns;
	unsigned char plain[2048];	/* a reply's decrypted fields */
};

struct nts_client *nts_client_new(void)
{
	return calloc(1, sizeof(struct nts_client));
}

void nts_client_free(struct nts_client *c)
{
	if (!c)
		return;
	nts_aead_free(c->c2s);
	nts_aead_free(c->s2c);
	free(c);
}

unsigned nts_client_cookies(const struct nts_client *c)
{
	return c->ncookies;
}

int64_t nts_client_seal_ns(const struct nts_client *c)
{
	return c->seal_ns;
}

int64_t nts_client_open_ns(const struct nts_client *c)
{
	return c->open_ns;
}

/* A cookie into the jar; when it is full the oldest goes. */
static void keep(struct nts_client *c, const unsigned char *p, size_t len)
{
	if (len == 0 || len > NTS_COOKIE_MAX)
		return;
	if (c->ncookies == NTS_COOKIES_MAX) {
		memmove(c->cookie[0], c->cookie[1], sizeof(c->cookie[0]) * (NTS_COOKIES_MAX - 1));
		memmove(c->cookie_len, c->cookie_len + 1, sizeof(c->cookie_len[0]) * (NTS_COOKIES_MAX - 1));
		c->ncookies--;
	}
	memcpy(c->cookie[c->ncookies], p, len);
	c->cookie_len[c->ncookies++] = (uint16_t)len;
}

int nts_client_set(struct nts_client *c, const struct nts_keys *keys, const struct nts_ke_msg *resp,
		   char *err, size_t errlen)
{
	unsigned i;

	nts_aead_free(c->c2s);
	nts_aead_free(c->s2c);
	c->s2c = NULL;
	c->ncookies = 0;
	c->pending = 0;
	c->c2s = nts_aead_new(keys->c2s, sizeof(keys->c2s), err, errlen);
	if (!c->c2s)
		return -1;
	c->s2c = nts_aead_new(keys->s2c, sizeof(keys->s2c), err, errlen);
	if (!c->s2c)
		return -1;
	for (i = 0; i < resp->ncookies; i++)
		keep(c, resp->cookie[i], resp->cookie_len[i]);
	return 0;
}

int nts_client_request(struct nts_client *c, void *pkt, size_t cap, size_t *len)
{
	unsigned char rnd[NTS_UID_LEN + NTS_NONCE_LEN], *nonce, *ct;
	int64_t t0 = clock_monotonic_ns();
	size_t off = *len, clen;
	unsigned want, i;

	if (!c->ncookies || !c->c2s)
		return -1;
	/* One call for both (under 256 bytes: never cut short). */
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -1;
	memcpy(c->uid, rnd, NTS_UID_LEN);
	clen = c->cookie_len[c->ncookies - 1];
	/* After this one is spent, enough placeholders to fill the jar. */
	want = NTS_COOKIES_MAX - (c->ncookies - 1) - 1;
	if (nts_ef_put(pkt, cap, &off, NTS_EF_UID, c->uid, sizeof(c->uid)) < 0 ||
	    nts_ef_put(pkt, cap, &off, NTS_EF_COOKIE, c->cookie[c->ncookies - 1], clen) < 0)
		return -1;
	for (i = 0; i < want; i++)
		if (nts_ef_put(pkt, cap, &off, NTS_EF_PLACEHOLDER, NULL, clen) < 0)
			return -1;
	if (nts_ef_put_auth(pkt, cap, &off, NTS_NONCE_LEN, NTS_TAG_LEN, &nonce, &ct) < 0)
		return -1;
	memcpy(nonce, rnd + NTS_UID_LEN, NTS_NONCE_LEN);
	/* The associated data: everything before the authenticator. */
	if (nts_aead_seal(c->c2s, nonce, NTS_NONCE_LEN, pkt,
			  (size_t)(nonce - 8 - (unsigned char *)pkt), NULL, 0, ct) != NTS_TAG_LEN)
		return -1;
	c->ncookies--;
	c->pending = 1;
	*len = off;
	c->seal_ns = clock_monotonic_ns() - t0;
	return 0;
}

enum nts_reply nts_client_reply(struct nts_client *c, const void *pkt, size_t len, size_t *covered,
				const char **why)
{
	struct nts_ef_view v, in;
	struct ntp_packet r;
	int64_t t0 = clock_monotonic_ns();
	long n;
	unsigned i;

	c->open_ns = 0;
	*covered = 0;
	if (!c->pending) {
		*why = "no request of ours is waiting";
		return NTS_REPLY_BOGUS;
	}
	if (ntp_decode(pkt, len, &r) < 0) {
		*why = "shorter than an NTP header";
		return NTS_REPLY_BOGUS;
	}
	if (nts_ef_parse(pkt, len, &v, why) < 0)
		return NTS_REPLY_BOGUS;
	if (v.uid.len != NTS_UID_LEN || memcmp(v.uid.p, c->uid, NTS_UID_LEN) != 0) {
		*why = v.uid.len ? "unique identifier does not match the request's"
				 : "no unique identifier";
		return NTS_REPLY_BOGUS;
	}
	/* Section 5.7: a NAK is a kiss NTSN, unauthenticated, uid echoed.
	   Anyone who saw the request can send one: the request stays
	   pending for the authentic reply, and the cookies stay. */
	if (r.stratum == NTP_STRATUM_KOD && r.refid == 0x4e54534eu && !v.have_auth)
		return NTS_REPLY_NAK;
	if (!v.have_auth) {
		*why = "no authenticator";
		return NTS_REPLY_BOGUS;
	}
	if (v.ct.len - NTS_TAG_LEN > sizeof(c->plain)) {
		*why = "encrypted fields longer than 2048 bytes";
		return NTS_REPLY_BOGUS;
	}
	n = nts_aead_open(c->s2c, v.nonce.p, v.nonce.len, pkt, v.aad_len, v.ct.p, v.ct.len, c->plain);
	c->open_ns = clock_monotonic_ns() - t0;
	if (n < 0) {
		*why = "authenticator does not verify";
		return NTS_REPLY_BOGUS;
	}
	if (nts_ef_parse_inner(c->plain, (size_t)n, &in, why) < 0)
		return NTS_REPLY_BOGUS;
	c->pending = 0;
	for (i = 0; i < in.ncookies && i < NTS_EF_COOKIES_MAX; i++)
		keep(c, in.cookie[i].p, in.cookie[i].len);
	*covered = v.aad_len;
	return NTS_REPLY_OK;
}
