/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect --nts-cert/--nts-key: Network Time Security (RFC 8915).
 *
 * NTS-KE runs in a thread of its own on a TCP socket of the endpoint's
 * address (port --nts-port, 4460), one session at a time, each bounded
 * by a timeout, so that a slow or hostile client delays other KE clients
 * at most that long and never the NTP replies.  Its cookies are sealed
 * under the server key of lib/nts_server.c, which rotates every
 * --nts-rotate (default 1 h); cookies under the current key and the two
 * before it are accepted (so a cookie lives 2 to 3 periods), older ones
 * get an NTS NAK.
 *
 * A request with any NTS field must pass every NTS check or it is not
 * answered (nts-bad); one without any is plain NTP and answered as ever.
 * Each refused request is one line on stderr (the first 100; the summary
 * counts them all), and the server goes on serving.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "nts_ef.h"
#include "nts_server.h"
#include "nts_tls.h"
#include "ntp.h"
#include "transport.h"
#include "ntpreflect.h"

#define KE_TIMEOUT_NS	(2 * NTPX_NS_PER_SEC)
#define NTS_LINES_MAX	100

/* One line for a refused request or KE session, up to NTS_LINES_MAX. */
static void nts_line(struct reflector *r, const char *peer, const char *what, const char *why)
{
	uint64_t n = __atomic_add_fetch(&r->nts_lines, 1, __ATOMIC_RELAXED);

	if (n > NTS_LINES_MAX)
		return;
	ntpx_err("%s: %s: %s%s", peer, what, why, n == NTS_LINES_MAX ? " (no more such lines)" : "");
}

/* The cookies of a KE response: 8, sealed under the current key. */
static int ke_cookies(void *arg, const struct nts_keys *keys, struct nts_ke_msg *resp)
{
	struct reflector *r = arg;
	unsigned i;

	for (i = 0; i < NTS_COOKIES_MAX; i++) {
		if (nts_server_cookie(r->nts, keys, resp->cookie[i]) < 0)
			return -1;
		resp->cookie_len[i] = NTS_SERVER_COOKIE_LEN;
	}
	resp->ncookies = NTS_COOKIES_MAX;
	/* The NTP port, when it is not 123 (section 4.1.8). */
	if (r->cfg->ep.port != 123)
		resp->port = r->cfg->ep.port;
	return 0;
}

static void *ke_loop(void *arg)
{
	struct reflector *r = arg;

	while (!reflect_stopping) {
		struct pollfd pfd = { .fd = r->ke_fd, .events = POLLIN };
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char host[NI_MAXHOST], serv[NI_MAXSERV], peer[NI_MAXHOST + NI_MAXSERV + 4], err[512];
		int fd;

		/* Now and then, to see the end coming. */
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept4(r->ke_fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv, sizeof(serv),
				NI_NUMERICHOST | NI_NUMERICSERV))
			snprintf(peer, sizeof(peer), "?");
		else
			snprintf(peer, sizeof(peer), strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, serv);
		if (nts_tls_serve(r->tls, fd, KE_TIMEOUT_NS, ke_cookies, r, err, sizeof(err)) == 0) {
			__atomic_add_fetch(&r->ke_ok, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&r->ke_failed, 1, __ATOMIC_RELAXED);
			nts_line(r, peer, "nts-ke", err + strlen("nts-ke: "));
		}
		close(fd);
	}
	return NULL;
}

/* The KE socket on the endpoint's address, or every address for "*". */
static int ke_listen(const struct reflect_config *cfg, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = cfg->ep.family, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *res;
	const char *host = strcmp(cfg->ep.host, "*") == 0 || !cfg->ep.host[0] ? NULL : cfg->ep.host;
	char port[8];
	int fd, one = 1, rc;

	snprintf(port, sizeof(port), "%u", (unsigned)cfg->nts_port);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "nts-ke %s: %s", host ? host : "*", gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 16)) {
		snprintf(err, errlen, "nts-ke %s port %s: %s", host ? host : "*", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

void reflect_nts_start(struct reflector *r)
{
	const struct reflect_config *cfg = r->cfg;
	sigset_t all, old;
	char err[512];

	r->tls = nts_tls_server_new(cfg->nts_cert, cfg->nts_key, err, sizeof(err));
	if (!r->tls)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	r->nts = nts_server_new(cfg->nts_rotate, err, sizeof(err));
	if (!r->nts)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	r->ke_fd = ke_listen(cfg, err, sizeof(err));
	if (r->ke_fd < 0)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	/* Signals go to the NTP loop, whose receive they must wake. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	errno = pthread_create(&r->ke_thread, NULL, ke_loop, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (errno)
		ntpx_die(NTPX_EXIT_FAIL, "nts-ke: cannot start its thread: %s", strerror(errno));
}

void reflect_nts_stop(struct reflector *r)
{
	if (!r->nts)
		return;
	reflect_stopping = 1;
	pthread_join(r->ke_thread, NULL);
	close(r->ke_fd);
	nts_tls_server_free(r->tls);
	nts_server_free(r->nts);
}

/*
 * @v: what reflect_admit() said so far, V_OK or V_MALFORMED (fields or a
 * MAC of no valid shape).  A malformed request gets its line here, with
 * the field that is wrong; a well formed one without NTS fields (or with
 * a MAC, which NTS never has) is plain NTP; one with any field of NTS's
 * types is NTS, and answered only when it passes every check.
 */
enum verdict reflect_nts_check(struct reflector *r, const struct transport_addr *from,
			       const unsigned char *buf, ssize_t n, enum verdict v)
{
	struct nts_ef_view ef;
	const char *why;
	char peer[128];
	enum nts_server_verdict sv;
	int parsed = nts_ef_parse(buf, (size_t)n, &ef, &why) == 0;

	if (v == V_MALFORMED) {
		transport_addr_str(r->t, from, peer, sizeof(peer));
		nts_line(r, peer, "malformed, dropped", parsed ? "no valid MAC or extension fields" : why);
		return V_MALFORMED;
	}
	/* Not NTS at all: plain NTP. */
	if (!ef.nts_fields)
		return V_OK;
	/* NTS fields of no valid shape (an identifier of 16 bytes): NTS that
	   fails, not plain NTP. */
	if (!parsed) {
		transport_addr_str(r->t, from, peer, sizeof(peer));
		nts_line(r, peer, "nts: dropped", why);
		return V_NTS_BAD;
	}
	sv = nts_server_check(r->nts, buf, (size_t)n, &r->nreq, &why, &r->nts_open);
	if (sv == NTS_SERVER_OK) {
		r->nts_req = 1;
		return V_OK;
	}
	transport_addr_str(r->t, from, peer, sizeof(peer));
	nts_line(r, peer, sv == NTS_SERVER_NAK ? "nts: answered with a NAK" : "nts: dropped", why);
	return sv == NTS_SERVER_NAK ? V_NTS_NAK : V_NTS_BAD;
}

/* Section 5.7: stratum 0, kiss code NTSN, the identifier echoed, no
   authenticator. */
void reflect_nts_nak(struct reflector *r, const struct transport_addr *from,
		     const struct ntp_packet *q, int64_t t2)
{
	unsigned char buf[NTP_HEADER_LEN + 4 + NTS_SERVER_UID_MAX];
	struct ntp_packet k = r->reply;
	size_t len = NTP_HEADER_LEN;
	int64_t t3 = 0;

	k.leap = NTP_LEAP_ALARM;
	k.stratum = NTP_STRATUM_KOD;
	ntp_refid_parse("NTSN", &k.refid);
	k.version = q->version;
	k.poll = q->poll;
	k.ref = 0;
	k.org = q->xmt;
	k.rec = ntp_ts_from_ns(t2);
	ntp_encode(&k, buf);
	if (nts_server_nak(&r->nreq, buf, sizeof(buf), &len) < 0 ||
	    transport_send(r->t, buf, len, from, r->clk, TRANSPORT_STAMP_XMT, &t3) < 0)
		r->send_errors++;
}
