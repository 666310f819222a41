/* SPDX-License-Identifier: ISC */
/*
 * nts_ke.c - NTS-KE records (RFC 8915 section 4), built and parsed; see
 * nts_ke.h.  Every length is checked before it is read: a record's header
 * before its body, its body against what its type allows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nts_ke.h"
#include "util_private.h"

#define REC_HDR 4

/* The line a failed parse points *why at: one per thread, overwritten
   by the next failure. */
static __thread char why_buf[96];

__attribute__((format(printf, 3, 4)))
static const char *whyf(unsigned idx, unsigned type, const char *fmt, ...)
{
	char name[16];
	va_list ap;
	int n;

	n = snprintf(why_buf, sizeof(why_buf), "record %u (%s): ", idx, nts_ke_type_name(type, name));
	va_start(ap, fmt);
	vsnprintf(why_buf + n, sizeof(why_buf) - (size_t)n, fmt, ap);
	va_end(ap);
	return why_buf;
}

const char *nts_ke_type_name(unsigned type, char buf[16])
{
	static const char *const names[] = {
		[NTS_KE_END] = "end of message",
		[NTS_KE_NEXT_PROTO] = "next protocol",
		[NTS_KE_ERROR] = "error",
		[NTS_KE_WARNING] = "warning",
		[NTS_KE_AEAD] = "AEAD",
		[NTS_KE_COOKIE] = "cookie",
		[NTS_KE_SERVER] = "server",
		[NTS_KE_PORT_REC] = "port",
	};

	type &= ~NTS_KE_CRITICAL;
	if (type < ARRAY_SIZE(names))
		return names[type];
	snprintf(buf, 16, "type %u", type);
	return buf;
}

void nts_ke_msg_init(struct nts_ke_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->nprotos = -1;
	m->naeads = -1;
	m->error = -1;
	m->warning = -1;
	m->port = -1;
}

int nts_ke_put(void *buf, size_t cap, size_t *off, unsigned type, const void *body, size_t len)
{
	unsigned char *b = buf;

	if (len > 0xffff || *off > cap || cap - *off < REC_HDR + len)
		return -1;
	put16(b + *off, (uint16_t)type);
	put16(b + *off + 2, (uint16_t)len);
	if (len)
		memcpy(b + *off + REC_HDR, body, len);
	*off += REC_HDR + len;
	return 0;
}

static int put_list(void *buf, size_t cap, size_t *off, unsigned type, const uint16_t *ids, int n)
{
	unsigned char body[2 * NTS_KE_LIST_MAX];
	int i;

	for (i = 0; i < n; i++)
		put16(body + 2 * i, ids[i]);
	return nts_ke_put(buf, cap, off, type, body, 2 * (size_t)n);
}

static int put_u16(void *buf, size_t cap, size_t *off, unsigned type, int v)
{
	unsigned char body[2];

	put16(body, (uint16_t)v);
	return nts_ke_put(buf, cap, off, type, body, 2);
}

ssize_t nts_ke_build(void *buf, size_t cap, const struct nts_ke_msg *m)
{
	size_t off = 0;
	unsigned i;

	if (m->nprotos >= 0 &&
	    put_list(buf, cap, &off, NTS_KE_CRITICAL | NTS_KE_NEXT_PROTO, m->protos, m->nprotos) < 0)
		return -1;
	if (m->error >= 0 && put_u16(buf, cap, &off, NTS_KE_CRITICAL | NTS_KE_ERROR, m->error) < 0)
		return -1;
	if (m->warning >= 0 && put_u16(buf, cap, &off, NTS_KE_CRITICAL | NTS_KE_WARNING, m->warning) < 0)
		return -1;
	/* The AEAD record may be critical (section 4.1.5); chrony sends it so. */
	if (m->naeads >= 0 &&
	    put_list(buf, cap, &off, NTS_KE_CRITICAL | NTS_KE_AEAD, m->aeads, m->naeads) < 0)
		return -1;
	for (i = 0; i < m->ncookies; i++)
		if (nts_ke_put(buf, cap, &off, NTS_KE_COOKIE, m->cookie[i], m->cookie_len[i]) < 0)
			return -1;
	if (m->server[0] &&
	    nts_ke_put(buf, cap, &off, NTS_KE_CRITICAL | NTS_KE_SERVER, m->server, strlen(m->server)) < 0)
		return -1;
	if (m->port >= 0 && put_u16(buf, cap, &off, NTS_KE_CRITICAL | NTS_KE_PORT_REC, m->port) < 0)
		return -1;
	if (nts_ke_put(buf, cap, &off, NTS_KE_CRITICAL | NTS_KE_END, NULL, 0) < 0)
		return -1;
	return (ssize_t)off;
}

static int get_list(const unsigned char *body, size_t len, uint16_t *ids, int *n)
{
	size_t i;

	*n = 0;
	for (i = 0; i + 1 < len; i += 2)
		if (*n < NTS_KE_LIST_MAX)
			ids[(*n)++] = get16(body + i);
	return 0;
}

ssize_t nts_ke_parse(const void *buf, size_t len, struct nts_ke_msg *m, const char **why)
{
	const unsigned char *b = buf;
	size_t off = 0;
	unsigned idx;

	nts_ke_msg_init(m);
	for (idx = 1;; idx++) {
		unsigned hdr, type;
		size_t blen;
		const unsigned char *body;

		if (off > NTS_KE_MSG_MAX) {
			*why = whyf(idx, 0xffff, "message longer than %d bytes", NTS_KE_MSG_MAX);
			return -1;
		}
		if (len - off < REC_HDR)
			return 0;
		hdr = get16(b + off);
		type = hdr & ~NTS_KE_CRITICAL;
		blen = get16(b + off + 2);
		if (off + REC_HDR + blen > NTS_KE_MSG_MAX) {
			*why = whyf(idx, type, "message longer than %d bytes", NTS_KE_MSG_MAX);
			return -1;
		}
		if (len - off - REC_HDR < blen)
			return 0;
		body = b + off + REC_HDR;
		off += REC_HDR + blen;

		switch (type) {
		case NTS_KE_END:
			if (blen) {
				*why = whyf(idx, type, "body of %zu bytes, not empty", blen);
				return -1;
			}
			return (ssize_t)off;
		case NTS_KE_NEXT_PROTO:
		case NTS_KE_AEAD: {
			int *n = type == NTS_KE_AEAD ? &m->naeads : &m->nprotos;

			if (*n >= 0) {
				*why = whyf(idx, type, "seen twice");
				return -1;
			}
			if (blen % 2) {
				*why = whyf(idx, type, "odd body length %zu", blen);
				return -1;
			}
			get_list(body, blen, type == NTS_KE_AEAD ? m->aeads : m->protos, n);
			break;
		}
		case NTS_KE_ERROR:
		case NTS_KE_WARNING:
		case NTS_KE_PORT_REC: {
			int *v = type == NTS_KE_ERROR ? &m->error :
				 type == NTS_KE_WARNING ? &m->warning : &m->port;

			if (blen != 2) {
				*why = whyf(idx, type, "body length %zu, not 2", blen);
				return -1;
			}
			if (*v >= 0) {
				*why = whyf(idx, type, "seen twice");
				return -1;
			}
			*v = get16(body);
			break;
		}
		case NTS_KE_COOKIE:
			if (blen == 0 || blen > NTS_COOKIE_MAX) {
				*why = whyf(idx, type, "cookie length %zu, not 1 to %d", blen, NTS_COOKIE_MAX);
				return -1;
			}
			m->cookies_seen++;
			if (m->ncookies < NTS_COOKIES_MAX) {
				memcpy(m->cookie[m->ncookies], body, blen);
				m->cookie_len[m->ncookies++] = (uint16_t)blen;
			}
			break;
		case NTS_KE_SERVER: {
			size_t i;

			if (m->server[0]) {
				*why = whyf(idx, type, "seen twice");
				return -1;
			}
			if (blen == 0 || blen >= sizeof(m->server)) {
				*why = whyf(idx, type, "name length %zu, not 1 to 255", blen);
				return -1;
			}
			for (i = 0; i < blen; i++)
				if (body[i] <= 0x20 || body[i] >= 0x7f) {
					*why = whyf(idx, type, "not printable ASCII at byte %zu", i);
					return -1;
				}
			memcpy(m->server, body, blen);
			m->server[blen] = '\0';
			break;
		}
		default:
			if (hdr & NTS_KE_CRITICAL) {
				*why = whyf(idx, type, "critical and unknown");
				return -1;
			}
			break;
		}
	}
}

int nts_ke_server_parse(const char *arg, const char *dflt_host, char *host, size_t hostlen,
			char port[8])
{
	const char *h = arg && *arg ? arg : dflt_host, *p = NULL, *colon;
	unsigned long n = NTS_KE_PORT;
	size_t hlen;

	if (h[0] == '[') {
		const char *close = strchr(h, ']');

		if (!close || (close[1] && close[1] != ':'))
			return -1;
		hlen = (size_t)(close - h - 1);
		h++;
		p = close[1] ? close + 2 : NULL;
	} else if (h == arg && (colon = strchr(h, ':')) && !strchr(colon + 1, ':')) {
		hlen = (size_t)(colon - h);
		p = colon + 1;
	} else {
		hlen = strlen(h);	/* a bare IPv6 address, or the default */
	}
	if (hlen == 0 || hlen >= hostlen)
		return -1;
	if (p) {
		char *end;

		if (!*p || strspn(p, "0123456789") != strlen(p))
			return -1;
		n = strtoul(p, &end, 10);
		if (n == 0 || n > 65535)
			return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	snprintf(port, 8, "%lu", n);
	return 0;
}

int nts_ke_port_parse(const char *arg, const char *port_arg, char port[8])
{
	const char *colon = arg ? strchr(arg, ':') : NULL;
	unsigned long n;
	char *end;

	if (!*port_arg || strspn(port_arg, "0123456789") != strlen(port_arg))
		return -1;
	errno = 0;
	n = strtoul(port_arg, &end, 10);
	if (errno || n == 0 || n > 65535)
		return -1;
	/* As nts_ke_server_parse() reads a port: after "]:", or after the
	   one colon of a host that is not a bare IPv6 address. */
	if (arg && (arg[0] == '[' ? strstr(arg, "]:") != NULL :
		    colon && !strchr(colon + 1, ':')))
		return -2;
	snprintf(port, 8, "%lu", n);
	return 0;
}

int nts_ke_check_response(const struct nts_ke_msg *m, const char **why)
{
	if (m->error >= 0) {
		snprintf(why_buf, sizeof(why_buf), "server sent error %d (%s)", m->error,
			 m->error == NTS_KE_ERR_UNRECOGNIZED ? "unrecognized critical record" :
			 m->error == NTS_KE_ERR_BAD_REQUEST ? "bad request" :
			 m->error == NTS_KE_ERR_INTERNAL ? "internal server error" : "unknown");
		*why = why_buf;
		return -1;
	}
	if (m->nprotos < 0) {
		*why = "no next protocol record";
		return -1;
	}
	if (m->nprotos != 1 || m->protos[0] != NTS_PROTO_NTPV4) {
		*why = "server refused NTPv4";
		return -1;
	}
	if (m->naeads != 1 || m->aeads[0] != NTS_AEAD_SIV_CMAC_256) {
		*why = m->naeads < 0 ? "no AEAD record" : "server refused AEAD_AES_SIV_CMAC_256";
		return -1;
	}
	if (m->ncookies == 0) {
		*why = "no cookies";
		return -1;
	}
	/* Section 4.1.4: no warning codes are defined, and an unrecognised
	   one is treated as an error (as chrony does). */
	if (m->warning >= 0) {
		snprintf(why_buf, sizeof(why_buf), "server sent warning %d (unrecognised)", m->warning);
		*why = why_buf;
		return -1;
	}
	if (m->port == 0) {
		*why = "port record names port 0";
		return -1;
	}
	return 0;
}

int nts_ke_ntp_server(const struct nts_ke_msg *m, char *host, size_t hostlen, uint16_t *port)
{
	int changed = 0;

	if (m->server[0] && strcasecmp(m->server, host) != 0) {
		if (strlen(m->server) >= hostlen)
			return -1;
		strcpy(host, m->server);
		changed = 1;
	}
	if (m->port >= 0 && m->port != *port) {
		*port = (uint16_t)m->port;
		changed = 1;
	}
	return changed;
}

static int has(const uint16_t *ids, int n, uint16_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

int nts_ke_answer(const struct nts_ke_msg *req, struct nts_ke_msg *resp)
{
	nts_ke_msg_init(resp);
	/* Section 4.1.2: a request must offer protocols; 4.1.5: with NTPv4,
	   AEAD algorithms too. */
	if (req->nprotos < 0 || (has(req->protos, req->nprotos, NTS_PROTO_NTPV4) && req->naeads < 0) ||
	    req->error >= 0 || req->ncookies) {
		resp->error = NTS_KE_ERR_BAD_REQUEST;
		return 0;
	}
	/* None we speak: an empty list says so. */
	resp->nprotos = 0;
	if (!has(req->protos, req->nprotos, NTS_PROTO_NTPV4))
		return 0;
	resp->protos[resp->nprotos++] = NTS_PROTO_NTPV4;
	resp->naeads = 0;
	if (!has(req->aeads, req->naeads, NTS_AEAD_SIV_CMAC_256))
		return 0;
	resp->aeads[resp->naeads++] = NTS_AEAD_SIV_CMAC_256;
	return 1;
}
