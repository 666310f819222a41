/* SPDX-License-Identifier: ISC */
/*
 * nts_client.h - the client's side of NTS for NTP (RFC 8915 section 5):
 * the keys and cookies NTS-KE gave, a request's extension fields, and
 * the check of a reply.
 *
 * A request carries a fresh Unique Identifier, one cookie (used once and
 * dropped), a Cookie Placeholder for each further cookie it wants back
 * (the jar holds up to NTS_COOKIES_MAX), and an authenticator sealed
 * under the C2S key over everything before it with an empty plaintext.
 * A reply is used only when it echoes that identifier and its
 * authenticator opens under the S2C key; its plaintext's cookies go into
 * the jar.  A kiss "NTSN" (the server cannot read the cookie) that echoes
 * the identifier is unauthenticated, so anyone who saw the request can
 * send one (RFC 8915 section 5.7): the request stays pending for an
 * authentic reply, and the cookies stay in the jar until the caller has
 * run NTS-KE again and it succeeded (nts_client_set).
 */
#ifndef NTPX_NTS_CLIENT_H
#define NTPX_NTS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "nts_ke.h"
#include "nts_tls.h"

struct nts_client;

struct nts_client *nts_client_new(void);
void nts_client_free(struct nts_client *c);

/* Takes the keys and cookies of a fresh NTS-KE session (the jar is
   emptied first).  0, or -1 with a line in @err. */
int nts_client_set(struct nts_client *c, const struct nts_keys *keys, const struct nts_ke_msg *resp,
		   char *err, size_t errlen);

/* Cookies in the jar: 0 means NTS-KE must run before the next request. */
unsigned nts_client_cookies(const struct nts_client *c);

/*
 * Appends the NTS fields to the request @pkt (its header, and any fields
 * of its own, in the first *@len bytes; capacity @cap) and advances
 * *@len.  Returns 0, or -1 with no cookie or no room (nothing used).
 * The time it took, sealing included, is in nts_client_seal_ns().
 */
int nts_client_request(struct nts_client *c, void *pkt, size_t cap, size_t *len);

enum nts_reply {
	NTS_REPLY_OK,		/* authentic: use it */
	NTS_REPLY_NAK,		/* an NTSN kiss for our request: wait on for an
				   authentic reply; none: run NTS-KE again */
	NTS_REPLY_BOGUS,	/* not ours or not authentic: never use it */
};

/*
 * Judges the reply @pkt (@len bytes, its header already decoded and
 * matched to the request) to the last request; on BOGUS, *@why says why
 * in one line.  On OK, *@covered is how many of its first bytes the
 * authenticator covers (the header and the fields before it): nothing
 * after them may be read, by any code (0 otherwise).  The time it took
 * is in nts_client_open_ns().
 */
enum nts_reply nts_client_reply(struct nts_client *c, const void *pkt, size_t len, size_t *covered,
				const char **why);

/* The last request's sealing and the last reply's opening, ns. */
int64_t nts_client_seal_ns(const struct nts_client *c);
int64_t nts_client_open_ns(const struct nts_client *c);

#endif
