/* SPDX-License-Identifier: ISC */
/*
 * nts.c - loadgen --ntp with --nts: every request of the flood carries
 * NTS fields (RFC 8915) as ntpprobe's would, so that a server's capacity
 * with NTS can be set against its capacity without.
 *
 * One NTS-KE session at the start gives the keys and 8 cookies; the
 * requests use the cookies in turn, over and over (a server keeps no
 * state of which cookies it saw, so each request costs it what a fresh
 * one would), and ask for no more (no placeholders: one cookie back per
 * reply, as a client in its steady state asks).  Each request has its own
 * unique identifier and nonce, both made from its sequence number, and is
 * sealed under the C2S key through GnuTLS.  Replies are counted by their
 * origin timestamp as plain ones are; they are not opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "nts_aead.h"
#include "nts_ef.h"
#include "nts_tls.h"
#include "ntp.h"
#include "util_private.h"
#include "loadgen.h"

struct nts_flood {
	struct nts_aead *c2s;
	struct nts_ke_msg resp;		/* its cookies */
	unsigned char salt[NTS_UID_LEN];	/* makes identifiers unlike another run's */
};

struct nts_flood *nts_flood_new(const struct load_opts *o, char *err, size_t errlen)
{
	struct nts_flood *n = calloc(1, sizeof(*n));
	struct nts_keys keys;
	char host[sizeof(o->ntp_host)];
	uint16_t port = o->ntp_port;
	int v6 = strchr(o->nts_host, ':') != NULL;

	if (!n) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (nts_tls_client(o->nts_host, o->nts_port, o->ca, o->family, 5 * NTPX_NS_PER_SEC, &n->resp,
			   &keys, err, errlen) < 0)
		goto fail;
	/* The flood goes where the endpoint says: a response that sends the
	   client elsewhere (RFC 8915 sections 4.1.7, 4.1.8) is refused. */
	snprintf(host, sizeof(host), "%s", o->ntp_host);
	if (nts_ke_ntp_server(&n->resp, host, sizeof(host), &port) != 0) {
		snprintf(err, errlen, "nts-ke %s%s%s:%s: the response names NTP server %s port %u, "
			 "not the endpoint's %s port %u: give that endpoint", v6 ? "[" : "",
			 o->nts_host, v6 ? "]" : "", o->nts_port,
			 n->resp.server[0] ? n->resp.server : o->ntp_host, port, o->ntp_host,
			 o->ntp_port);
		goto fail;
	}
	if (!(n->c2s = nts_aead_new(keys.c2s, sizeof(keys.c2s), err, errlen)) ||
	    getrandom(n->salt, sizeof(n->salt), 0) != sizeof(n->salt))
		goto fail;
	explicit_bzero(&keys, sizeof(keys));
	return n;
fail:
	explicit_bzero(&keys, sizeof(keys));
	nts_flood_free(n);
	return NULL;
}

void nts_flood_free(struct nts_flood *n)
{
	if (!n)
		return;
	nts_aead_free(n->c2s);
	free(n);
}

size_t nts_flood_request(struct nts_flood *n, unsigned char *pkt, size_t cap, uint64_t seq)
{
	unsigned char uid[NTS_UID_LEN], *nonce, *ct;
	unsigned k = (unsigned)(seq % n->resp.ncookies);
	size_t off = NTP_HEADER_LEN;

	memcpy(uid, n->salt, sizeof(uid));
	put64(uid, get64(uid) ^ seq);
	if (nts_ef_put(pkt, cap, &off, NTS_EF_UID, uid, sizeof(uid)) < 0 ||
	    nts_ef_put(pkt, cap, &off, NTS_EF_COOKIE, n->resp.cookie[k], n->resp.cookie_len[k]) < 0 ||
	    nts_ef_put_auth(pkt, cap, &off, NTS_NONCE_LEN, NTS_TAG_LEN, &nonce, &ct) < 0)
		return 0;
	memcpy(nonce, uid + sizeof(uid) - NTS_NONCE_LEN, NTS_NONCE_LEN);
	put64(nonce, seq);
	if (nts_aead_seal(n->c2s, nonce, NTS_NONCE_LEN, pkt, (size_t)(nonce - 8 - pkt), NULL, 0, ct) !=
	    NTS_TAG_LEN)
		return 0;
	return off;
}
