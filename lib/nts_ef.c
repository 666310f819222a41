/* SPDX-License-Identifier: ISC */
/*
 * nts_ef.c - the NTS extension fields (RFC 8915 section 5.7), placed and
 * found; see nts_ef.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nts_ef.h"
#include "ntp.h"
#include "util_private.h"

#define EF_HDR 4

static __thread char why_buf[112];

static const char *type_name(unsigned type)
{
	switch (type) {
	case NTS_EF_UID: return "unique identifier";
	case NTS_EF_COOKIE: return "cookie";
	case NTS_EF_PLACEHOLDER: return "cookie placeholder";
	case NTS_EF_AUTH: return "authenticator";
	default: return "other";
	}
}

__attribute__((format(printf, 3, 4)))
static const char *whyf(unsigned idx, unsigned type, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(why_buf, sizeof(why_buf), "extension field %u (%s): ", idx, type_name(type));
	va_start(ap, fmt);
	vsnprintf(why_buf + n, sizeof(why_buf) - (size_t)n, fmt, ap);
	va_end(ap);
	return why_buf;
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static size_t field_len(size_t body)
{
	size_t n = EF_HDR + pad4(body);

	return n < NTS_EF_MIN ? NTS_EF_MIN : n;
}

int nts_ef_put(void *pkt, size_t cap, size_t *off, uint16_t type, const void *body, size_t len)
{
	unsigned char *p = pkt;
	size_t n = field_len(len);

	if (len > 0xffff - EF_HDR - 3 || *off > cap || cap - *off < n)
		return -1;
	memset(p + *off, 0, n);
	put16(p + *off, type);
	put16(p + *off + 2, (uint16_t)n);
	if (body)
		memcpy(p + *off + EF_HDR, body, len);
	*off += n;
	return 0;
}

int nts_ef_put_auth(void *pkt, size_t cap, size_t *off, size_t nlen, size_t clen,
		    unsigned char **nonce, unsigned char **ct)
{
	unsigned char *p = pkt;
	size_t body = 4 + pad4(nlen) + pad4(clen);
	size_t at = *off;

	if (nlen > 0xffff || clen > 0xffff || nts_ef_put(pkt, cap, off, NTS_EF_AUTH, NULL, body) < 0)
		return -1;
	put16(p + at + EF_HDR, (uint16_t)nlen);
	put16(p + at + EF_HDR + 2, (uint16_t)clen);
	*nonce = p + at + EF_HDR + 4;
	*ct = *nonce + pad4(nlen);
	return 0;
}

/* The authenticator's body: lengths first, then what they say, within it. */
static int parse_auth(const unsigned char *b, size_t blen, unsigned idx, struct nts_ef_view *v,
		      const char **why)
{
	size_t nlen, clen;

	if (blen < 4) {
		*why = whyf(idx, NTS_EF_AUTH, "body of %zu bytes has no lengths", blen);
		return -1;
	}
	nlen = get16(b);
	clen = get16(b + 2);
	if (nlen < NTS_NONCE_LEN) {
		*why = whyf(idx, NTS_EF_AUTH, "nonce length %zu, less than %d", nlen, NTS_NONCE_LEN);
		return -1;
	}
	if (clen < NTS_TAG_LEN) {
		*why = whyf(idx, NTS_EF_AUTH, "ciphertext length %zu, less than %d", clen, NTS_TAG_LEN);
		return -1;
	}
	if (4 + pad4(nlen) + pad4(clen) > blen) {
		*why = whyf(idx, NTS_EF_AUTH, "nonce %zu and ciphertext %zu run past its body of %zu",
			    nlen, clen, blen);
		return -1;
	}
	v->nonce.p = b + 4;
	v->nonce.len = nlen;
	v->ct.p = b + 4 + pad4(nlen);
	v->ct.len = clen;
	return 0;
}

/* The fields of @p from @start to @len; @outer: a packet's, where the
   authenticator ends what is read, else a plaintext's (cookies only). */
static int walk(const unsigned char *p, size_t start, size_t len, struct nts_ef_view *v, int outer,
		const char **why)
{
	size_t off = start;
	unsigned idx;

	for (idx = 1; off < len; idx++) {
		unsigned type;
		size_t flen;
		const unsigned char *body;
		size_t blen;

		if (len - off < EF_HDR) {
			*why = whyf(idx, 0, "%zu bytes left, shorter than a field's header", len - off);
			return -1;
		}
		type = get16(p + off);
		flen = get16(p + off + 2);
		if (flen < NTS_EF_MIN || flen % 4) {
			*why = whyf(idx, type, "length %zu, not a multiple of 4 of at least %d", flen,
				    NTS_EF_MIN);
			return -1;
		}
		if (flen > len - off) {
			*why = whyf(idx, type, "length %zu runs past the end (%zu bytes left)", flen,
				    len - off);
			return -1;
		}
		body = p + off + EF_HDR;
		blen = flen - EF_HDR;
		/* A field of sound length and one of NTS's types: the packet
		   means to be NTS, whatever its body says. */
		if (type == NTS_EF_UID || type == NTS_EF_COOKIE || type == NTS_EF_PLACEHOLDER ||
		    type == NTS_EF_AUTH)
			v->nts_fields++;
		switch (type) {
		case NTS_EF_UID:
			if (!outer)
				goto other;
			if (v->uid.len) {
				*why = whyf(idx, type, "a second one");
				return -1;
			}
			if (blen < NTS_UID_LEN) {
				*why = whyf(idx, type, "body of %zu bytes, less than %d", blen, NTS_UID_LEN);
				return -1;
			}
			v->uid.p = body;
			v->uid.len = blen;
			break;
		case NTS_EF_COOKIE:
			if (v->ncookies < NTS_EF_COOKIES_MAX) {
				v->cookie[v->ncookies].p = body;
				v->cookie[v->ncookies].len = blen;
			}
			v->ncookies++;
			break;
		case NTS_EF_PLACEHOLDER:
			if (!outer)
				goto other;
			if (!v->nplaceholders || blen < v->placeholder_min)
				v->placeholder_min = blen;
			if (blen > v->placeholder_max)
				v->placeholder_max = blen;
			v->nplaceholders++;
			break;
		case NTS_EF_AUTH:
			if (!outer)
				goto other;
			v->aad_len = off;
			if (parse_auth(body, blen, idx, v, why) < 0)
				return -1;
			v->have_auth = 1;
			v->auth_end = off + flen;
			/* What follows is not authenticated: not ours to read. */
			return 0;
		default:
		other:
			v->nother++;
			break;
		}
		off += flen;
	}
	return 0;
}

int nts_ef_parse(const void *pkt, size_t len, struct nts_ef_view *v, const char **why)
{
	memset(v, 0, sizeof(*v));
	if (len < NTP_HEADER_LEN) {
		*why = "shorter than an NTP header";
		return -1;
	}
	return walk(pkt, NTP_HEADER_LEN, len, v, 1, why);
}

int nts_ef_parse_inner(const void *buf, size_t len, struct nts_ef_view *v, const char **why)
{
	memset(v, 0, sizeof(*v));
	return walk(buf, 0, len, v, 0, why);
}
