/* SPDX-License-Identifier: ISC */
/*
 * nts_tls.c - NTS-KE sessions over TLS 1.3 with GnuTLS; see nts_tls.h.
 * GnuTLS does all of TLS: the handshake, the certificate's check against
 * the trusted file and the name asked for, ALPN, the exporter.  What is
 * ours is the transport under it, which holds every session to one
 * deadline.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
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
 * A session's transport: its socket and its one deadline
 * (CLOCK_MONOTONIC ns) for the whole session, handshake and records
 * alike.  GnuTLS reads and writes through io_pull() and io_push(), which
 * never block in the socket and wait on it only for the time left, so
 * that no peer can stretch a session past its deadline however it
 * trickles its bytes (a per-read timeout such as SO_RCVTIMEO starts
 * afresh at every byte that arrives, and so holds nothing).
 */
struct io {
	int fd;
	int64_t deadline;
	int timed_out;			/* a wait reached the deadline */
};

/* The time left, as ppoll takes it; 0 when none is. */
static struct timespec io_left(const struct io *io, int64_t at_most)
{
	int64_t left = io->deadline - clock_monotonic_ns();

	if (left > at_most)
		left = at_most;
	if (left < 0)
		left = 0;
	return (struct timespec){ .tv_sec = left / NTPX_NS_PER_SEC, .tv_nsec = left % NTPX_NS_PER_SEC };
}

/*
 * Waits until @io's socket is ready for @events or the deadline passes:
 * 0, or -1 with errno (ETIMEDOUT at the deadline, which makes GnuTLS fail
 * the call with GNUTLS_E_PULL_ERROR or GNUTLS_E_PUSH_ERROR).
 */
static int io_wait(struct io *io, short events)
{
	for (;;) {
		struct pollfd pfd = { .fd = io->fd, .events = events };
		struct timespec ts = io_left(io, INT64_MAX);
		int rc;

		if (ts.tv_sec == 0 && ts.tv_nsec == 0) {
			io->timed_out = 1;
			errno = ETIMEDOUT;
			return -1;
		}
		rc = ppoll(&pfd, 1, &ts, NULL);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

static ssize_t io_pull(gnutls_transport_ptr_t ptr, void *buf, size_t len)
{
	struct io *io = ptr;

	for (;;) {
		ssize_t n = recv(io->fd, buf, len, MSG_DONTWAIT);

		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return n;
		if (io_wait(io, POLLIN) < 0)
			return -1;
	}
}

/* Whether data comes within @ms (GnuTLS asks): the time left at most. */
static int io_pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms)
{
	struct io *io = ptr;
	struct pollfd pfd = { .fd = io->fd, .events = POLLIN };
	int64_t wait = ms == GNUTLS_INDEFINITE_TIMEOUT ? INT64_MAX : (int64_t)ms * NTPX_NS_PER_MS;
	struct timespec ts = io_left(io, wait);
	int rc = ppoll(&pfd, 1, &ts, NULL);

	if (rc == 0 && clock_monotonic_ns() >= io->deadline)
		io->timed_out = 1;
	return rc;
}

static ssize_t io_push(gnutls_transport_ptr_t ptr, const void *buf, size_t len)
{
	struct io *io = ptr;

	for (;;) {
		/* MSG_NOSIGNAL: a peer gone is an error, not SIGPIPE. */
		ssize_t n = send(io->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return n;
		if (io_wait(io, POLLOUT) < 0)
			return -1;
	}
}

/*
 * @s reads and writes @io's socket, within its deadline.  TCP_NODELAY:
 * each side writes a flight of small records and then waits for the
 * other's, which Nagle's algorithm would hold back for the peer's delayed
 * ACK (40 ms here, for every session).
 */
static void io_attach(gnutls_session_t s, struct io *io)
{
	int one = 1;

	(void)setsockopt(io->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	gnutls_transport_set_ptr(s, io);
	gnutls_transport_set_pull_function(s, io_pull);
	gnutls_transport_set_pull_timeout_function(s, io_pull_timeout);
	gnutls_transport_set_push_function(s, io_push);
	/* No timer of GnuTLS's own: the session's deadline is the one. */
	gnutls_handshake_set_timeout(s, GNUTLS_INDEFINITE_TIMEOUT);
}

/*
 * Whether a call that failed with @rc may be made again before @io's
 * deadline: a signal; GNUTLS_E_AGAIN, which GnuTLS returns after a record
 * that carried no data for us (a TLS 1.3 NewSessionTicket, as OpenSSL
 * servers send after the handshake); a handshake's non-fatal error (a
 * warning alert).  Never once the deadline has passed.
 */
static int again(int rc, const struct io *io)
{
	return !gnutls_error_is_fatal(rc) && !io->timed_out && clock_monotonic_ns() < io->deadline;
}

/* A TCP connection to @host @port before @deadline, or -1 with a line in
   @err. */
static int tcp_connect(const char *host, const char *port, int family, int64_t deadline,
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
		struct io io = { .deadline = deadline };
		socklen_t sl = sizeof(saved);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		io.fd = fd;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		saved = errno;
		if (saved == EINPROGRESS) {
			if (io_wait(&io, POLLOUT) < 0)
				saved = errno;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &saved, &sl) < 0)
				saved = errno;
			if (saved == 0)
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "connect: %s", strerror(saved));
	return fd;
}

/* What a failed GnuTLS call says; a failed certificate check, why. */
static void tls_err(gnutls_session_t s, const struct io *io, int rc, const char *what, char *err,
		    size_t errlen)
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
	if (io->timed_out || rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_TIMEDOUT)
		snprintf(err, errlen, "%s: timed out", what);
	else if (rc == GNUTLS_E_FATAL_ALERT_RECEIVED)
		snprintf(err, errlen, "%s: the peer sent alert '%s'", what,
			 gnutls_alert_get_name(gnutls_alert_get(s)));
	else if (rc == GNUTLS_E_PULL_ERROR || rc == GNUTLS_E_PREMATURE_TERMINATION)
		snprintf(err, errlen, "%s: the peer closed the connection", what);
	else
		snprintf(err, errlen, "%s: %s", what, gnutls_strerror(rc));
}

static int handshake(gnutls_session_t s, struct io *io, char *err, size_t errlen)
{
	static const gnutls_datum_t alpn = { .data = (unsigned char *)NTS_KE_ALPN,
					     .size = sizeof(NTS_KE_ALPN) - 1 };
	gnutls_datum_t got;
	int rc;

	rc = gnutls_alpn_set_protocols(s, &alpn, 1, GNUTLS_ALPN_MANDATORY);
	if (rc < 0) {
		tls_err(s, io, rc, "alpn", err, errlen);
		return -1;
	}
	do
		rc = gnutls_handshake(s);
	while (rc < 0 && again(rc, io));
	if (rc < 0) {
		tls_err(s, io, rc, "handshake", err, errlen);
		/* Tell the peer why (a certificate we refuse, say). */
		if (!io->timed_out && rc != GNUTLS_E_PULL_ERROR && rc != GNUTLS_E_PREMATURE_TERMINATION)
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

static int send_all(gnutls_session_t s, struct io *io, const void *buf, size_t len, char *err,
		    size_t errlen)
{
	const unsigned char *b = buf;

	while (len) {
		ssize_t n = gnutls_record_send(s, b, len);

		if (n < 0 && again((int)n, io))
			continue;
		if (n < 0) {
			tls_err(s, io, (int)n, "send", err, errlen);
			return -1;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One message from the peer into @m: 0, or -1 with @err. */
static int recv_msg(gnutls_session_t s, struct io *io, struct nts_ke_msg *m, char *err,
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
		if (n < 0 && again((int)n, io))
			continue;
		if (!io->timed_out && (n == 0 || n == GNUTLS_E_PREMATURE_TERMINATION)) {
			snprintf(err, errlen, "malformed message: truncated after %zu bytes%s", len,
				 len ? "" : " (none)");
			return -1;
		}
		if (n < 0) {
			tls_err(s, io, (int)n, "receive", err, errlen);
			return -1;
		}
		len += (size_t)n;
	}
}

static int export_keys(gnutls_session_t s, const struct io *io, struct nts_keys *k, char *err,
		       size_t errlen)
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
		tls_err(s, io, rc, "key export", err, errlen);
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
	int rc = -1, r;
	struct io io = { .fd = -1, .deadline = clock_monotonic_ns() + timeout_ns };
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
	io.fd = tcp_connect(host, port, family, io.deadline, msg, sizeof(msg));
	if (io.fd < 0)
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
	io_attach(s, &io);
	if (handshake(s, &io, msg, sizeof(msg)) < 0 ||
	    send_all(s, &io, req, (size_t)n, msg, sizeof(msg)) < 0 ||
	    recv_msg(s, &io, resp, msg, sizeof(msg)) < 0)
		goto out;
	if (nts_ke_check_response(resp, &why) < 0) {
		snprintf(msg, sizeof(msg), "%s", why);
		goto out;
	}
	if (export_keys(s, &io, keys, msg, sizeof(msg)) < 0)
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
	if (io.fd >= 0)
		close(io.fd);
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
	struct io io = { .fd = fd, .deadline = clock_monotonic_ns() + timeout_ns };
	ssize_t n;

	msg[0] = 0;
	if ((r = gnutls_init(&s, GNUTLS_SERVER)) < 0 || (r = gnutls_priority_set(s, srv->prio)) < 0 ||
	    (r = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, srv->cred)) < 0) {
		snprintf(msg, sizeof(msg), "%s", gnutls_strerror(r));
		goto out;
	}
	gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
	io_attach(s, &io);
	if (handshake(s, &io, msg, sizeof(msg)) < 0)
		goto out;
	if (recv_msg(s, &io, &req, msg, sizeof(msg)) < 0) {
		/* Section 4.1.3: tell the client, then close (not one that
		   ran out of time: its session is over). */
		nts_ke_msg_init(&resp);
		resp.error = strstr(msg, "critical and unknown") ? NTS_KE_ERR_UNRECOGNIZED
								  : NTS_KE_ERR_BAD_REQUEST;
		n = nts_ke_build(out, sizeof(out), &resp);
		if (n > 0 && !io.timed_out)
			(void)gnutls_record_send(s, out, (size_t)n);
		goto out;
	}
	ok = nts_ke_answer(&req, &resp);
	if (ok && (export_keys(s, &io, &keys, msg, sizeof(msg)) < 0 || fn(arg, &keys, &resp) < 0)) {
		nts_ke_msg_init(&resp);
		resp.error = NTS_KE_ERR_INTERNAL;
		ok = 0;
	}
	/* The keys are in the cookies now, sealed. */
	explicit_bzero(&keys, sizeof(keys));
	n = nts_ke_build(out, sizeof(out), &resp);
	if (n < 0 || send_all(s, &io, out, (size_t)n, msg, sizeof(msg)) < 0)
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
