/* SPDX-License-Identifier: ISC */
/*
 * nts_server.c - NTS for an NTP server: rotating cookie keys, request
 * checks, reply fields (RFC 8915 sections 5 and 6); see nts_server.h.
 * The AEAD is GnuTLS's (lib/nts_aead.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock_read.h"
#include "nts_aead.h"
#include "nts_ef.h"
#include "nts_server.h"
#include "ntp.h"
#include "util_private.h"

#define NKEYS (1 + NTS_SERVER_OLD_KEYS)

struct server_key {
	uint32_t id;
	struct nts_aead *aead;		/* NULL: none yet */
};

struct nts_server {
	pthread_mutex_t lock;
	int64_t period, started;	/* ns of CLOCK_MONOTONIC */
	uint32_t next_id;
	unsigned cur;			/* keys[cur] is the current one */
	struct server_key keys[NKEYS];
	struct nts_aead *req_aead;	/* a request's C2S, then its S2C key: one
					   handle, keyed anew (the NTP thread's) */
};

static int new_key(struct nts_server *s, struct server_key *k)
{
	unsigned char raw[NTS_KEY_LEN];
	char err[128];
	struct nts_aead *a;

	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw))
		return -1;
	a = nts_aead_new(raw, sizeof(raw), err, sizeof(err));
	explicit_bzero(raw, sizeof(raw));
	if (!a)
		return -1;
	nts_aead_free(k->aead);
	k->aead = a;
	k->id = s->next_id++;
	return 0;
}

/* Under the lock: a new key for every period that has ended. */
static void rotate(struct nts_server *s)
{
	int64_t now = clock_monotonic_ns();
	unsigned n = 0;

	while (now - s->started >= s->period && n++ < NKEYS) {
		unsigned next = (s->cur + 1) % NKEYS;

		if (new_key(s, &s->keys[next]) < 0)
			return;
		s->cur = next;
		s->started += s->period;
	}
	/* Idle for longer than every key lives: start afresh from now. */
	if (now - s->started >= s->period)
		s->started = now;
}

struct nts_server *nts_server_new(int64_t period_ns, char *err, size_t errlen)
{
	struct nts_server *s = calloc(1, sizeof(*s));
	uint32_t id;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->period = period_ns;
	s->started = clock_monotonic_ns();
	/* Key IDs start at random: cookies from an earlier run of the
	   server find no key, and get a NAK. */
	if (getrandom(&id, sizeof(id), 0) != sizeof(id) ||
	    (s->next_id = id, new_key(s, &s->keys[0])) < 0 ||
	    !(s->req_aead = nts_aead_new((const unsigned char *)"0123456789abcdef0123456789abcdef",
					 NTS_KEY_LEN, err, errlen))) {
		snprintf(err, errlen, "cannot make a server key");
		nts_server_free(s);
		return NULL;
	}
	return s;
}

int nts_server_set_key(struct nts_server *s, uint32_t id, const unsigned char *key)
{
	char err[128];
	struct nts_aead *a = nts_aead_new(key, NTS_KEY_LEN, err, sizeof(err));

	if (!a)
		return -1;
	pthread_mutex_lock(&s->lock);
	nts_aead_free(s->keys[s->cur].aead);
	s->keys[s->cur].aead = a;
	s->keys[s->cur].id = id;
	s->started = clock_monotonic_ns();
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void nts_server_free(struct nts_server *s)
{
	unsigned i;

	if (!s)
		return;
	for (i = 0; i < NKEYS; i++)
		nts_aead_free(s->keys[i].aead);
	nts_aead_free(s->req_aead);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/*
 * A cookie sealed under a nonce already in @out + 4.  Every cookie's
 * nonce is drawn afresh (nts_aead_nonce): it travels in the clear, and a
 * counter or a salt shared between cookies would let anyone who sees
 * them tie one client's cookies together across networks (RFC 8915
 * section 9.1).
 */
static int seal_cookie(struct nts_server *s, const struct nts_keys *keys, unsigned char *out)
{
	struct server_key *k;
	long n;

	pthread_mutex_lock(&s->lock);
	rotate(s);
	k = &s->keys[s->cur];
	put32(out, k->id);
	n = nts_aead_seal(k->aead, out + 4, NTS_NONCE_LEN, NULL, 0, keys, sizeof(*keys),
			  out + 4 + NTS_NONCE_LEN);
	pthread_mutex_unlock(&s->lock);
	return n == NTS_TAG_LEN + (long)sizeof(*keys) ? 0 : -1;
}

int nts_server_cookie(struct nts_server *s, const struct nts_keys *keys, unsigned char *out)
{
	if (nts_aead_nonce(out + 4, NTS_NONCE_LEN) < 0)
		return -1;
	return seal_cookie(s, keys, out);
}

int nts_server_ke_cookies(struct nts_server *s, const struct nts_keys *keys,
			  struct nts_ke_msg *resp)
{
	unsigned i;

	for (i = 0; i < NTS_COOKIES_MAX; i++) {
		if (nts_server_cookie(s, keys, resp->cookie[i]) < 0)
			return -1;
		resp->cookie_len[i] = NTS_SERVER_COOKIE_LEN;
	}
	resp->ncookies = NTS_COOKIES_MAX;
	return 0;
}

/* The keys inside @cookie: 0, -1 for a key we no longer have, -2 when it
   does not open. */
static int open_cookie(struct nts_server *s, const struct nts_span *c, struct nts_keys *keys)
{
	uint32_t id;
	unsigned i;
	long n = -1;
	int found = 0;

	if (c->len < NTS_SERVER_COOKIE_LEN)
		return -2;
	id = get32(c->p);
	pthread_mutex_lock(&s->lock);
	rotate(s);
	for (i = 0; i < NKEYS; i++)
		if (s->keys[i].aead && s->keys[i].id == id) {
			found = 1;
			n = nts_aead_open(s->keys[i].aead, c->p + 4, NTS_NONCE_LEN, NULL, 0,
					  c->p + 4 + NTS_NONCE_LEN, NTS_TAG_LEN + sizeof(*keys), keys);
			break;
		}
	pthread_mutex_unlock(&s->lock);
	if (!found)
		return -1;
	return n == (long)sizeof(*keys) ? 0 : -2;
}

/* A verdict other than OK: the keys the cookie held, if it opened, are
   of no more use. */
static enum nts_server_verdict refuse(struct nts_server_req *req, enum nts_server_verdict v,
				      const char **why, const char *because)
{
	explicit_bzero(&req->keys, sizeof(req->keys));
	*why = because;
	return v;
}

enum nts_server_verdict nts_server_check(struct nts_server *s, const void *pkt, size_t len,
					 struct nts_server_req *req, const char **why,
					 int64_t *open_ns)
{
	int64_t t0 = clock_monotonic_ns();
	struct nts_ef_view v;
	unsigned char plain[1024];
	long n;
	int rc;

	*open_ns = 0;
	memset(req, 0, sizeof(*req));
	if (nts_ef_parse(pkt, len, &v, why) < 0)
		return NTS_SERVER_DROP;
	if (!v.uid.len)
		return refuse(req, NTS_SERVER_DROP, why, "no unique identifier");
	if (v.uid.len > sizeof(req->uid))
		return refuse(req, NTS_SERVER_DROP, why, "unique identifier longer than 256 bytes");
	memcpy(req->uid, v.uid.p, v.uid.len);
	req->uid_len = v.uid.len;
	if (v.ncookies != 1)
		return refuse(req, NTS_SERVER_DROP, why, v.ncookies ? "more than one cookie" : "no cookie");
	if (!v.have_auth)
		return refuse(req, NTS_SERVER_DROP, why, "no authenticator");
	if (v.auth_end != len)
		return refuse(req, NTS_SERVER_DROP, why, "extension fields after the authenticator");
	/* Every one (section 5.5): the reply grows by what they hold. */
	if (v.nplaceholders &&
	    (v.placeholder_min != v.cookie[0].len || v.placeholder_max != v.cookie[0].len))
		return refuse(req, NTS_SERVER_DROP, why, "cookie placeholder not as long as the cookie");
	/* Section 5.7: what cannot be validated or authenticated gets a NAK. */
	rc = open_cookie(s, &v.cookie[0], &req->keys);
	if (rc == -1)
		return refuse(req, NTS_SERVER_NAK, why, "cookie under an expired server key");
	if (rc < 0)
		return refuse(req, NTS_SERVER_NAK, why, "cookie does not open");
	if (nts_aead_set_key(s->req_aead, req->keys.c2s, sizeof(req->keys.c2s)) < 0)
		return refuse(req, NTS_SERVER_DROP, why, "cannot use the cookie's key");
	n = v.ct.len - NTS_TAG_LEN <= sizeof(plain) ?
	    nts_aead_open(s->req_aead, v.nonce.p, v.nonce.len, pkt, v.aad_len, v.ct.p, v.ct.len, plain) :
	    -1;
	*open_ns = clock_monotonic_ns() - t0;
	if (n < 0)
		return refuse(req, NTS_SERVER_NAK, why, "authenticator does not verify");
	req->cookies = 1 + (v.nplaceholders < NTS_EF_COOKIES_MAX - 1 ? v.nplaceholders
								     : NTS_EF_COOKIES_MAX - 1);
	return NTS_SERVER_OK;
}

int nts_server_reply(struct nts_server *s, struct nts_server_req *req, void *pkt, size_t cap,
		     size_t *len, int64_t *seal_ns)
{
	int64_t t0 = clock_monotonic_ns();
	unsigned char inner[NTS_EF_COOKIES_MAX * (4 + NTS_SERVER_COOKIE_LEN)], *nonce, *ct;
	unsigned char cookie[NTS_SERVER_COOKIE_LEN];
	/* The cookies' nonces and the reply's, in one draw. */
	unsigned char nonces[(NTS_EF_COOKIES_MAX + 1) * NTS_NONCE_LEN];
	size_t off = *len, ilen = 0, fixed;
	unsigned i, n = req->cookies;
	long sealed = -1;

	if (nts_ef_put(pkt, cap, &off, NTS_EF_UID, req->uid, req->uid_len) < 0 ||
	    nts_aead_nonce(nonces, sizeof(nonces)) < 0)
		goto out;
	/* As many cookies as the reply holds: never longer than asked. */
	fixed = 4 + 4 + NTS_NONCE_LEN + NTS_TAG_LEN;
	while (n && (off > cap || cap - off < fixed + n * (4 + NTS_SERVER_COOKIE_LEN)))
		n--;
	for (i = 0; i < n; i++) {
		memcpy(cookie + 4, nonces + (i + 1) * NTS_NONCE_LEN, NTS_NONCE_LEN);
		if (seal_cookie(s, &req->keys, cookie) < 0 ||
		    nts_ef_put(inner, sizeof(inner), &ilen, NTS_EF_COOKIE, cookie, sizeof(cookie)) < 0)
			goto out;
	}
	if (nts_ef_put_auth(pkt, cap, &off, NTS_NONCE_LEN, ilen + NTS_TAG_LEN, &nonce, &ct) < 0)
		goto out;
	memcpy(nonce, nonces, NTS_NONCE_LEN);
	if (nts_aead_set_key(s->req_aead, req->keys.s2c, sizeof(req->keys.s2c)) < 0)
		goto out;
	sealed = nts_aead_seal(s->req_aead, nonce, NTS_NONCE_LEN, pkt,
			       (size_t)(nonce - 8 - (unsigned char *)pkt), inner, ilen, ct);
out:
	explicit_bzero(&req->keys, sizeof(req->keys));
	/* The new cookies went out sealed; their plaintext stays here. */
	explicit_bzero(inner, sizeof(inner));
	if (sealed != (long)(ilen + NTS_TAG_LEN))
		return -1;
	*len = off;
	*seal_ns = clock_monotonic_ns() - t0;
	return 0;
}

int nts_server_nak(struct nts_server_req *req, void *reply, size_t cap, size_t *len)
{
	explicit_bzero(&req->keys, sizeof(req->keys));
	return nts_ef_put(reply, cap, len, NTS_EF_UID, req->uid, req->uid_len);
}
