/* SPDX-License-Identifier: ISC */
/*
 * nts_server.h - the server's side of NTS for NTP (RFC 8915 sections 5
 * and 6): cookies sealed under a server key that rotates, the check of a
 * request, and the fields of its reply.
 *
 * A cookie is the ID of the server key it is sealed under (4 bytes), a
 * random nonce of its own (16) and AES-SIV-CMAC-256 of the C2S and S2C keys (16 + 64):
 * 100 bytes.  The server key changes every rotation period, and cookies
 * under the current key and the NTS_SERVER_OLD_KEYS before it are
 * accepted, so a cookie lives at least NTS_SERVER_OLD_KEYS periods and
 * at most one more; an older one gets an NTS NAK (the kiss NTSN), after
 * which the client runs NTS-KE again.
 *
 * Safe to share between a thread that runs NTS-KE (nts_server_cookie)
 * and one that answers NTP (nts_server_check, nts_server_reply,
 * nts_server_nak; one thread only, for their AEAD handle is keyed anew
 * for each request): the server keys are behind a lock, held only to
 * use a key.
 */
#ifndef NTPX_NTS_SERVER_H
#define NTPX_NTS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "nts_ef.h"
#include "nts_tls.h"

#define NTS_SERVER_OLD_KEYS	2	/* previous server keys still accepted */
#define NTS_SERVER_COOKIE_LEN	100
#define NTS_SERVER_UID_MAX	256	/* the longest identifier answered */

struct nts_server;

/* A server whose key rotates every @period_ns (> 0); NULL with @err. */
struct nts_server *nts_server_new(int64_t period_ns, char *err, size_t errlen);
void nts_server_free(struct nts_server *s);

/*
 * Makes @key (NTS_KEY_LEN bytes) with ID @id the current server key, its
 * period starting now: a fuzz target's fixed key, under which the
 * cookies of its committed inputs open in every run.  0, or -1.
 */
int nts_server_set_key(struct nts_server *s, uint32_t id, const unsigned char *key);

/* A new cookie for @keys under the current key, with a random nonce,
   into @out (NTS_SERVER_COOKIE_LEN bytes); 0, or -1. */
int nts_server_cookie(struct nts_server *s, const struct nts_keys *keys, unsigned char *out);

/* An NTS-KE response's cookies (@resp's): NTS_COOKIES_MAX of them, for
   @keys; 0, or -1. */
int nts_server_ke_cookies(struct nts_server *s, const struct nts_keys *keys,
			  struct nts_ke_msg *resp);

/* What a request held, for its reply. */
struct nts_server_req {
	unsigned char uid[NTS_SERVER_UID_MAX];	/* a copy: the reply may be
						   built over the request */
	size_t uid_len;
	struct nts_keys keys;		/* from its cookie: wiped by every
					   verdict but OK, and by the reply */
	unsigned cookies;		/* to send back: 1 + placeholders, at most 8 */
};

enum nts_server_verdict {
	NTS_SERVER_OK,		/* authentic: answer with nts_server_reply() */
	NTS_SERVER_NAK,		/* a cookie we cannot open (an expired key): NAK */
	NTS_SERVER_DROP,	/* malformed or not authentic: no answer */
};

/*
 * Checks the request @pkt of @len bytes: one unique identifier, one
 * cookie, placeholders each as long as the cookie, an authenticator last
 * (nothing after it) that opens under the cookie's C2S key.  A request
 * of the wrong shape is dropped; one whose cookie or authenticator does
 * not open gets a NAK (RFC 8915 section 5.7: the server "SHOULD" answer
 * what it cannot validate or authenticate with the kiss NTSN).  On DROP
 * and NAK *@why says why in one line.  @open_ns gets the time it took
 * (opening the cookie and the authenticator), ns.
 */
enum nts_server_verdict nts_server_check(struct nts_server *s, const void *pkt, size_t len,
					 struct nts_server_req *req, const char **why,
					 int64_t *open_ns);

/*
 * Appends to the reply @pkt (header and any fields of its own in *@len
 * bytes, the transmit timestamp already written; capacity @cap) the
 * identifier of @req and an authenticator sealed under its S2C key over
 * all before it, with @req->cookies new cookies inside; fewer when
 * @cap does not hold them all.  Every cookie has a nonce of its own,
 * random (RFC 8915 section 9.1: cookies nobody can link).  Returns 0, or
 * -1.  @seal_ns gets the time it took.  @req's keys are wiped.
 */
int nts_server_reply(struct nts_server *s, struct nts_server_req *req, void *pkt, size_t cap,
		     size_t *len, int64_t *seal_ns);

/*
 * An NTS NAK to @req (its identifier known: nts_server_check() said
 * NAK): @reply's header must already say stratum 0, refid "NTSN"; the
 * identifier is appended.  Returns 0, or -1.  @req's keys are wiped.
 */
int nts_server_nak(struct nts_server_req *req, void *reply, size_t cap, size_t *len);

#endif
