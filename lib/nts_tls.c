/* SPDX-License-Identifier: ISC */
/*
 * nts_tls.c - NTS-KE sessions over TLS 1.3 with GnuTLS; see nts_tls.h.
 * GnuTLS does all of TLS: the handshake, the certificate's check against
 * the trusted file and the name asked for, ALPN, the exporter.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "clock_read.h"
#include "nts_ke.h"
#include "nts_tls.h"
#include "opt_units.h"

/* TLS 1.3 only (section 3: NTS-KE MUST NOT be run over older TLS). */
#define PRIORITY "NORMAL:-VERS-ALL:+VERS-TLS1.3"

/*
 * Whether a call that failed with @rc may be made again before
 * @deadline (CLOCK_MONOTONIC ns): a signal, or GNUTLS_E_AGAIN that came
 * before the socket's timeout did.  GnuTLS returns it on a blocking
 * socket too, after a record that carried no data for us (a TLS 1.3
 * NewSessionTicket, as OpenSSL servers send after the handshake).
 */
static int again(int rc, int64_t deadline)
{
	return (rc == GNUTLS_E_INTERRUPTED || rc == GNUTLS_E_AGAIN) && clock_monotonic_ns() < deadline;
}

static void set_timeouts(int fd, int64_t ns)
{
	struct timeval tv = { .tv_sec = ns / NTPX_NS_PER_SEC, .tv_usec = ns % NTPX_NS_PER_SEC / 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int tcp_connect(const char *host, const char *port, int family, int64_t timeout_ns,
		       char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM }, *res, *ai;
	int rc, fd = -1, saved = 0;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "%s", gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		set_timeouts(fd, timeout_ns);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "connect: %s", strerror(saved == EINPROGRESS ? ETIMEDOUT : saved));
	return fd;
}

/* What a failed GnuTLS call says; a failed certificate check, why. */
static void tls_err(gnutls_session_t s, int rc, const char *what, char *err, size_t errlen)
{
	gnutls_datum_t out = { 0 };

	if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR &&
	    gnutls_certificate_verification_status_print(gnutls_session_get_verify_cert_status(s),
							  GNUTLS_CRT_X509, &out, 0) == 0) {
		size_t n;

		snprintf(err, errlen, "certificate: %s", out.data);
		gnutls_free(out.data);
		/* GnuTLS ends its sentences with a space. */
		n = strlen(err);
		while (n && err[n - 1] == ' ')
			err[--n] = '\0';
		return;
	}
	if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_TIMEDOUT)
		snprintf(err, errlen, "%s: timed out", what);
	else if (rc == GNUTLS_E_FATAL_ALERT_RECEIVED)
		snprintf(err, errlen, "%s: the peer sent alert '%s'", what,
			 gnutls_alert_get_name(gnutls_alert_get(s)));
	else if (rc == GNUTLS_E_PULL_ERROR || rc == GNUTLS_E_PREMATURE_TERMINATION)
		snprintf(err, errlen, "%s: the peer closed the connection", what);
	else
		snprintf(err, errlen, "%s: %s", what, gnutls_strerror(rc));
}

static int handshake(gnutls_session_t s, int64_t deadline, char *err, size_t errlen)
{
	static const gnutls_datum_t alpn = { .data = (unsigned char *)NTS_KE_ALPN,
					     .size = sizeof(NTS_KE_ALPN) - 1 };
	gnutls_datum_t got;
	int rc;

	rc = gnutls_alpn_set_protocols(s, &alpn, 1, GNUTLS_ALPN_MANDATORY);
	if (rc < 0) {
		tls_err(s, rc, "alpn", err, errlen);
		return -1;
	}
	do
		rc = gnutls_handshake(s);
	while (rc < 0 && (again(rc, deadline) || (!gnutls_error_is_fatal(rc) && rc != GNUTLS_E_AGAIN)));
	if (rc < 0) {
		tls_err(s, rc, "handshake", err, errlen);
		/* Tell the peer why (a certificate we refuse, say). */
		if (rc != GNUTLS_E_PULL_ERROR && rc != GNUTLS_E_PREMATURE_TERMINATION)
			(void)gnutls_alert_send_appropriate(s, rc);
		return -1;
	}
	if (gnutls_alpn_get_selected_protocol(s, &got) < 0 || got.size != alpn.size ||
	    memcmp(got.data, alpn.data, alpn.size) != 0) {
		snprintf(err, errlen, "handshake: peer did not agree to ALPN %s", NTS_KE_ALPN);
		return -1;
	}
	return 0;
}

static int send_all(gnutls_session_t s, const void *buf, size_t len, int64_t deadline, char *err,
		    size_t errlen)
{
	const unsigned char *b = buf;

	while (len) {
		ssize_t n = gnutls_record_send(s, b, len);

		if (n < 0 && again((int)n, deadline))
			continue;
		if (n < 0) {
			tls_err(s, (int)n, "send", err, errlen);
			return -1;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One message from the peer into @m: 0, or -1 with @err. */
static int recv_msg(gnutls_session_t s, struct nts_ke_msg *m, int64_t deadline, char *err,
		    size_t errlen)
{
	static __thread unsigned char buf[NTS_KE_MSG_MAX];
	size_t len = 0;

	for (;;) {
		const char *why;
		ssize_t n = nts_ke_parse(buf, len, m, &why);

		if (n > 0)
			return 0;
		if (n < 0) {
			snprintf(err, errlen, "malformed message: %s", why);
			return -1;
		}
		if (len == sizeof(buf)) {
			snprintf(err, errlen, "malformed message: longer than %zu bytes", sizeof(buf));
			return -1;
		}
		n = gnutls_record_recv(s, buf + len, sizeof(buf) - len);
		if (n < 0 && again((int)n, deadline))
			continue;
		if (n == 0 || n == GNUTLS_E_PREMATURE_TERMINATION) {
			snprintf(err, errlen, "malformed message: truncated after %zu bytes%s", len,
				 len ? "" : " (none)");
			return -1;
		}
		if (n < 0) {
			tls_err(s, (int)n, "receive", err, errlen);
			return -1;
		}
		len += (size_t)n;
	}
}

static int export_keys(gnutls_session_t s, struct nts_keys *k, char *err, size_t errlen)
{
	char ctx[5] = { NTS_PROTO_NTPV4 >> 8, NTS_PROTO_NTPV4 & 0xff, NTS_AEAD_SIV_CMAC_256 >> 8,
			NTS_AEAD_SIV_CMAC_256 & 0xff, 0 };
	int rc;

	rc = gnutls_prf_rfc5705(s, sizeof(NTS_KE_EXPORTER) - 1, NTS_KE_EXPORTER, sizeof(ctx), ctx,
				sizeof(k->c2s), (char *)k->c2s);
	if (rc == 0) {
		ctx[4] = 1;
		rc = gnutls_prf_rfc5705(s, sizeof(NTS_KE_EXPORTER) - 1, NTS_KE_EXPORTER, sizeof(ctx),
					ctx, sizeof(k->s2c), (char *)k->s2c);
	}
	if (rc < 0) {
		tls_err(s, rc, "key export", err, errlen);
		return -1;
	}
	return 0;
}

int nts_tls_client(const char *host, const char *port, const char *cafile, int family,
		   int64_t timeout_ns, struct nts_ke_msg *resp, struct nts_keys *keys,
		   char *err, size_t errlen)
{
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_session_t s = NULL;
	unsigned char req[64];
	struct nts_ke_msg m;
	const char *why;
	char msg[400];
	int fd = -1, rc = -1, r;
	int64_t deadline = clock_monotonic_ns() + timeout_ns;
	ssize_t n;

	msg[0] = 0;
	nts_ke_msg_init(&m);
	m.nprotos = 1;
	m.protos[0] = NTS_PROTO_NTPV4;
	m.naeads = 1;
	m.aeads[0] = NTS_AEAD_SIV_CMAC_256;
	n = nts_ke_build(req, sizeof(req), &m);

	if ((r = gnutls_certificate_allocate_credentials(&cred)) < 0) {
		snprintf(msg, sizeof(msg), "%s", gnutls_strerror(r));
		goto out;
	}
	r = cafile ? gnutls_certificate_set_x509_trust_file(cred, cafile, GNUTLS_X509_FMT_PEM)
		   : gnutls_certificate_set_x509_system_trust(cred);
	if (r <= 0) {
		snprintf(msg, sizeof(msg), "%s: %s", cafile ? cafile : "system trust",
			 r == 0 ? "no certificates" : gnutls_strerror(r));
		goto out;
	}
	fd = tcp_connect(host, port, family, timeout_ns, msg, sizeof(msg));
	if (fd < 0)
		goto out;
	if ((r = gnutls_init(&s, GNUTLS_CLIENT)) < 0 ||
	    (r = gnutls_priority_set_direct(s, PRIORITY, NULL)) < 0 ||
	    (r = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred)) < 0) {
		snprintf(msg, sizeof(msg), "%s", gnutls_strerror(r));
		goto out;
	}
	/* SNI for a name only (RFC 6066 3); the check takes either. */
	if (strspn(host, "0123456789.") != strlen(host) && !strchr(host, ':'))
		gnutls_server_name_set(s, GNUTLS_NAME_DNS, host, strlen(host));
	gnutls_session_set_verify_cert(s, host, 0);
	gnutls_transport_set_int(s, fd);
	if (handshake(s, deadline, msg, sizeof(msg)) < 0 ||
	    send_all(s, req, (size_t)n, deadline, msg, sizeof(msg)) < 0 ||
	    recv_msg(s, resp, deadline, msg, sizeof(msg)) < 0)
		goto out;
	if (nts_ke_check_response(resp, &why) < 0) {
		snprintf(msg, sizeof(msg), "%s", why);
		goto out;
	}
	if (export_keys(s, keys, msg, sizeof(msg)) < 0)
		goto out;
	gnutls_bye(s, GNUTLS_SHUT_WR);
	rc = 0;
out:
	if (rc) {
		int v6 = strchr(host, ':') != NULL;

		snprintf(err, errlen, "nts-ke %s%s%s:%s: %s", v6 ? "[" : "", host, v6 ? "]" : "", port,
			 msg);
	}
	if (s)
		gnutls_deinit(s);
	if (fd >= 0)
		close(fd);
	if (cred)
		gnutls_certificate_free_credentials(cred);
	return rc;
}

struct nts_tls_server {
	gnutls_certificate_credentials_t cred;
	gnutls_priority_t prio;
};

struct nts_tls_server *nts_tls_server_new(const char *certfile, const char *keyfile,
					  char *err, size_t errlen)
{
	struct nts_tls_server *s = calloc(1, sizeof(*s));
	int r;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((r = gnutls_certificate_allocate_credentials(&s->cred)) < 0 ||
	    (r = gnutls_priority_init(&s->prio, PRIORITY, NULL)) < 0) {
		snprintf(err, errlen, "nts-ke: %s", gnutls_strerror(r));
		nts_tls_server_free(s);
		return NULL;
	}
	r = gnutls_certificate_set_x509_key_file(s->cred, certfile, keyfile, GNUTLS_X509_FMT_PEM);
	if (r < 0) {
		snprintf(err, errlen, "%s, %s: %s", certfile, keyfile, gnutls_strerror(r));
		nts_tls_server_free(s);
		return NULL;
	}
	return s;
}

void nts_tls_server_free(struct nts_tls_server *s)
{
	if (!s)
		return;
	if (s->prio)
		gnutls_priority_deinit(s->prio);
	if (s->cred)
		gnutls_certificate_free_credentials(s->cred);
	free(s);
}

int nts_tls_serve(struct nts_tls_server *srv, int fd, int64_t timeout_ns, nts_tls_cookie_fn fn,
		  void *arg, char *err, size_t errlen)
{
	static __thread struct nts_ke_msg req, resp;
	static __thread unsigned char out[NTS_KE_MSG_MAX];
	gnutls_session_t s = NULL;
	struct nts_keys keys;
	char msg[400];
	int rc = -1, r, ok;
	int64_t deadline = clock_monotonic_ns() + timeout_ns;
	ssize_t n;

	msg[0] = 0;
	set_timeouts(fd, timeout_ns);
	if ((r = gnutls_init(&s, GNUTLS_SERVER)) < 0 || (r = gnutls_priority_set(s, srv->prio)) < 0 ||
	    (r = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, srv->cred)) < 0) {
		snprintf(msg, sizeof(msg), "%s", gnutls_strerror(r));
		goto out;
	}
	gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
	gnutls_transport_set_int(s, fd);
	if (handshake(s, deadline, msg, sizeof(msg)) < 0)
		goto out;
	if (recv_msg(s, &req, deadline, msg, sizeof(msg)) < 0) {
		/* Section 4.1.3: tell the client, then close. */
		nts_ke_msg_init(&resp);
		resp.error = strstr(msg, "critical and unknown") ? NTS_KE_ERR_UNRECOGNIZED
								  : NTS_KE_ERR_BAD_REQUEST;
		n = nts_ke_build(out, sizeof(out), &resp);
		if (n > 0)
			(void)gnutls_record_send(s, out, (size_t)n);
		goto out;
	}
	ok = nts_ke_answer(&req, &resp);
	if (ok && (export_keys(s, &keys, msg, sizeof(msg)) < 0 || fn(arg, &keys, &resp) < 0)) {
		nts_ke_msg_init(&resp);
		resp.error = NTS_KE_ERR_INTERNAL;
		ok = 0;
	}
	n = nts_ke_build(out, sizeof(out), &resp);
	if (n < 0 || send_all(s, out, (size_t)n, deadline, msg, sizeof(msg)) < 0)
		goto out;
	gnutls_bye(s, GNUTLS_SHUT_WR);
	if (!ok) {
		snprintf(msg, sizeof(msg), "refused: %s",
			 resp.error >= 0 ? "bad request" : "no NTPv4 or no AES-SIV-CMAC-256 offered");
		goto out;
	}
	rc = 0;
out:
	if (rc)
		snprintf(err, errlen, "nts-ke: %s", msg);
	if (s)
		gnutls_deinit(s);
	return rc;
}
