/* SPDX-License-Identifier: ISC */
/*
 * nts_tls.h - NTS Key Establishment over TLS 1.3 (RFC 8915 section 4),
 * through GnuTLS: a TCP connection through the kernel, ALPN "ntske/1",
 * the records of lib/nts_ke.h, and the two keys exported from the
 * session (section 5.1):
 *
 *   key = TLS-Exporter("EXPORTER-network-time-security",
 *                      protocol ID (2 bytes) || AEAD ID (2 bytes) || 0 or 1,
 *                      32 bytes)
 *
 * with 0 for the client-to-server key (C2S) and 1 for server-to-client
 * (S2C).  Blocking: one exchange of one message each way.  A session has
 * one deadline, for the connection, the handshake and the records
 * together: GnuTLS reads and writes through functions of ours that wait
 * on the socket only for the time left, so that a peer that trickles its
 * bytes cannot hold a session longer than that.
 */
#ifndef NTPX_NTS_TLS_H
#define NTPX_NTS_TLS_H

#include <stdint.h>

#include "nts_ke.h"

struct nts_keys {
	unsigned char c2s[NTS_KEY_LEN];
	unsigned char s2c[NTS_KEY_LEN];
};

/*
 * Runs NTS-KE as a client against @host port @port (a name or a number),
 * trusting the certificates in the PEM file @cafile (NULL: the system's)
 * and checking that the server's certificate names @host; @family is
 * AF_UNSPEC, AF_INET or AF_INET6; the whole session, the connection
 * included, ends within @timeout_ns.  On success returns 0 with the
 * server's response, checked (nts_ke_check_response), in @resp and the
 * keys in @keys (the caller wipes them when done); otherwise -1 with one
 * line in @err ("nts-ke 127.0.0.1:4460: certificate: ...").
 */
int nts_tls_client(const char *host, const char *port, const char *cafile, int family,
		   int64_t timeout_ns, struct nts_ke_msg *resp, struct nts_keys *keys,
		   char *err, size_t errlen);

/* A server's credentials and settings, for nts_tls_serve(). */
struct nts_tls_server;

/* Reads the PEM certificate chain @certfile and its key @keyfile; NULL with
   a line in @err. */
struct nts_tls_server *nts_tls_server_new(const char *certfile, const char *keyfile,
					  char *err, size_t errlen);
void nts_tls_server_free(struct nts_tls_server *s);

/*
 * What a server adds to a response it accepted: called with the keys
 * exported for the session, it fills @resp's cookies (and may set
 * server and port).  Returns 0, or -1 to answer with an internal error.
 */
typedef int (*nts_tls_cookie_fn)(void *arg, const struct nts_keys *keys, struct nts_ke_msg *resp);

/*
 * Serves one NTS-KE session on the connected TCP socket @fd (which it
 * does not close): handshake, the client's request, the response with
 * @fn's cookies, all within @timeout_ns of the call, whatever the client
 * sends or does not send ("timed out" when that is why it failed).
 * Returns 0 when a response with cookies went out, -1 with one line in
 * @err otherwise (a failed handshake, a malformed request: to that one
 * an Error record is sent when the session allows).  Thread-safe: one
 * session per thread at a time, many threads at once.
 */
int nts_tls_serve(struct nts_tls_server *s, int fd, int64_t timeout_ns, nts_tls_cookie_fn fn,
		  void *arg, char *err, size_t errlen);

#endif
