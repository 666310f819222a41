/* SPDX-License-Identifier: ISC */
/*
 * keattack - test helper: the clients that tried to hold an NTS-KE server
 * hostage (tests/cli/nts-ke.t), and the legitimate one they must not
 * stop.
 *
 *     keattack [-b SRC] HOST PORT MODE [ARG]
 *
 *   slowread     a whole TLS 1.3 handshake (ALPN ntske/1, no certificate
 *                check: an attacker needs none), then a record of one
 *                byte every 200 ms, never a whole request
 *   slowhello    a ClientHello sent one byte every 200 ms
 *   idle N       N TCP connections that send nothing, each opened again
 *                as soon as the server closes it; "up" on stdout once
 *                all N have connected (the kernel's handshake: the
 *                server may take them later), and on until a signal
 *                ends it
 *   hold SRC...  one TCP connection from each source address SRC, in
 *                turn, that sends one byte (a ClientHello's first, so
 *                that the server takes it at once: it defers what sends
 *                nothing) and then nothing; once the server has closed
 *                them all, "SRC closed after MS" for each, in order
 *   keys CAFILE  one NTS-KE session as ntpprobe runs it (lib/nts_tls.c,
 *                5 s at most): "keys MS" with the milliseconds from its
 *                start to its keys, or "failed MS: WHY"
 *
 * slowread and slowhello keep on for up to 20 s and print "closed after
 * MS" (exit 0), or "open after 20000" (exit 1).  MS counts from before
 * the connection was made, so that a server's deadline, which starts at
 * its accept, has passed by then.  -b binds every connection to the
 * source address SRC (127.0.0.2 ...: another client address on the
 * loopback).  Exit 2 on bad usage or a failure of its own.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "clock_read.h"
#include "nts_ke.h"
#include "nts_tls.h"
#include "opt_units.h"

#define STEP_MS		200
#define GIVE_UP_MS	20000

static struct addrinfo *dst;
static struct sockaddr_storage src;
static socklen_t srclen;

static void die(const char *what)
{
	fprintf(stderr, "keattack: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* A connection to the server from @from (NULL: any address), blocking
   or not. */
static int dial_from(const struct sockaddr_storage *from, socklen_t fromlen, int nonblock)
{
	int fd = socket(dst->ai_family, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);

	if (fd < 0)
		die("socket");
	if (fromlen && bind(fd, (const struct sockaddr *)from, fromlen) < 0)
		die("bind");
	if (connect(fd, dst->ai_addr, dst->ai_addrlen) < 0 && errno != EINPROGRESS)
		die("connect");
	return fd;
}

/* ... from SRC (-b). */
static int dial(int nonblock)
{
	return dial_from(&src, srclen, nonblock);
}

static void source(const char *name, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;

	if (getaddrinfo(name, NULL, &hints, &ai) != 0) {
		fprintf(stderr, "keattack: bad source '%s'\n", name);
		exit(2);
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
}

static int64_t ms_since(int64_t t0)
{
	return (clock_monotonic_ns() - t0) / 1000000;
}

/* Whether the server closed @fd within @ms: its data (an alert, a
   record) is read and dropped; its end, or a reset, is the answer. */
static int closed_within(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[4096];
	int64_t until = clock_monotonic_ns() + (int64_t)ms * 1000000;

	for (;;) {
		int64_t left = (until - clock_monotonic_ns()) / 1000000;
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return 0;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return 1;
	}
}

/* What slowread and slowhello say at the end: 0 when the server closed
   the connection, 1 when it was still open when they gave up. */
static int verdict(int closed, int64_t t0)
{
	if (closed)
		printf("closed after %lld\n", (long long)ms_since(t0));
	else
		printf("open after %d\n", GIVE_UP_MS);
	return !closed;
}

/* Trickles @len bytes of @buf, one every STEP_MS (then nothing more),
   until the server closes the connection. */
static int trickle(int fd, const unsigned char *buf, size_t len, int64_t t0)
{
	size_t i = 0;

	while (ms_since(t0) < GIVE_UP_MS)
		if ((i < len && send(fd, buf + i++, 1, MSG_NOSIGNAL) < 0) || closed_within(fd, STEP_MS))
			return 1;
	return 0;
}

/* The bytes GnuTLS would send first: a ClientHello, captured. */
static unsigned char hello[4096];
static size_t hello_len;

static ssize_t capture(gnutls_transport_ptr_t p, const void *buf, size_t len)
{
	(void)p;
	if (len > sizeof(hello) - hello_len)
		len = sizeof(hello) - hello_len;
	memcpy(hello + hello_len, buf, len);
	hello_len += len;
	return (ssize_t)len;
}

static ssize_t nothing(gnutls_transport_ptr_t p, void *buf, size_t len)
{
	(void)p;
	(void)buf;
	(void)len;
	errno = EAGAIN;
	return -1;
}

static gnutls_session_t client_session(gnutls_certificate_credentials_t *cred)
{
	static const gnutls_datum_t alpn = { .data = (unsigned char *)NTS_KE_ALPN,
					     .size = sizeof(NTS_KE_ALPN) - 1 };
	gnutls_session_t s;

	if (gnutls_certificate_allocate_credentials(cred) < 0 || gnutls_init(&s, GNUTLS_CLIENT) < 0 ||
	    gnutls_priority_set_direct(s, "NORMAL:-VERS-ALL:+VERS-TLS1.3", NULL) < 0 ||
	    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, *cred) < 0 ||
	    gnutls_alpn_set_protocols(s, &alpn, 1, 0) < 0) {
		fprintf(stderr, "keattack: cannot make a TLS session\n");
		exit(2);
	}
	return s;
}

static int slowhello(void)
{
	gnutls_certificate_credentials_t cred;
	gnutls_session_t s = client_session(&cred);
	int64_t t0;
	int fd, rc;

	gnutls_transport_set_push_function(s, capture);
	gnutls_transport_set_pull_function(s, nothing);
	if (gnutls_handshake(s) != GNUTLS_E_AGAIN || hello_len < 100) {
		fprintf(stderr, "keattack: no ClientHello to send\n");
		return 2;
	}
	t0 = clock_monotonic_ns();
	fd = dial(0);
	rc = verdict(trickle(fd, hello, hello_len, t0), t0);
	close(fd);
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	return rc;
}

static int slowread(void)
{
	gnutls_certificate_credentials_t cred;
	gnutls_session_t s = client_session(&cred);
	int64_t t0 = clock_monotonic_ns();
	int fd = dial(0), rc, closed;
	size_t i;

	gnutls_transport_set_int(s, fd);
	do
		rc = gnutls_handshake(s);
	while (rc < 0 && !gnutls_error_is_fatal(rc));
	if (rc < 0) {
		fprintf(stderr, "keattack: handshake: %s\n", gnutls_strerror(rc));
		return 2;
	}
	for (i = 0, closed = 0; !closed && ms_since(t0) < GIVE_UP_MS; i++) {
		/* A record of one byte at a time of a request that never
		   ends: a Next Protocol record of 1000 bytes, then its body. */
		static const unsigned char start[4] = { 0x80, 0x01, 0x03, 0xe8 };
		const unsigned char *b = i < sizeof(start) ? start + i : (const unsigned char *)"";

		closed = gnutls_record_send(s, b, 1) < 0 || closed_within(fd, STEP_MS);
	}
	rc = verdict(closed, t0);
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	close(fd);
	return rc;
}

static int idle(int n)
{
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	struct rlimit rl;
	int i, up = 0, said = 0;

	if (!pfd)
		die("calloc");
	/* As many descriptors as the flood needs. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 16) {
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_cur < (rlim_t)n + 16 || setrlimit(RLIMIT_NOFILE, &rl) < 0)
			die("setrlimit");
	}
	for (i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = dial(1), .events = POLLOUT };
	for (;;) {	/* until a signal ends the process */
		if (poll(pfd, (nfds_t)n, -1) < 0 && errno != EINTR)
			die("poll");
		for (i = 0; i < n; i++) {
			char c;

			if (!pfd[i].revents)
				continue;
			if (pfd[i].events == POLLOUT && !(pfd[i].revents & (POLLERR | POLLHUP))) {
				/* Connected: now it only waits. */
				pfd[i].events = POLLIN;
				up++;
				continue;
			}
			if (pfd[i].revents & POLLIN && recv(pfd[i].fd, &c, 1, MSG_DONTWAIT) > 0)
				continue;
			/* Closed by the server: at once another. */
			close(pfd[i].fd);
			pfd[i] = (struct pollfd){ .fd = dial(1), .events = POLLOUT };
		}
		if (!said && up >= n) {
			printf("up\n");
			fflush(stdout);
			said = 1;
		}
	}
	return 0;
}

#define HOLD_MAX	64

static int hold(int n, char **srcs)
{
	int64_t t0[HOLD_MAX], closed[HOLD_MAX];
	int fd[HOLD_MAX], i, left = n;

	for (i = 0; i < n; i++) {
		struct sockaddr_storage ss;
		socklen_t sl;

		source(srcs[i], &ss, &sl);
		t0[i] = clock_monotonic_ns();
		fd[i] = dial_from(&ss, sl, 0);
		closed[i] = -1;
		if (send(fd[i], "\x16", 1, MSG_NOSIGNAL) != 1)
			die("send");
	}
	while (left) {
		for (i = 0; i < n; i++)
			if (closed[i] < 0 && closed_within(fd[i], 10)) {
				closed[i] = ms_since(t0[i]);
				left--;
			}
		if (left && ms_since(t0[0]) > GIVE_UP_MS)
			break;
	}
	for (i = 0; i < n; i++)
		if (closed[i] < 0)
			printf("%s open after %d\n", srcs[i], GIVE_UP_MS);
		else
			printf("%s closed after %lld\n", srcs[i], (long long)closed[i]);
	return left ? 1 : 0;
}

static int keys(const char *host, const char *port, const char *ca)
{
	static struct nts_ke_msg resp;
	struct nts_keys k;
	char err[512];
	int64_t t0 = clock_monotonic_ns();
	int rc = nts_tls_client(host, port, ca, AF_UNSPEC, 5 * NTPX_NS_PER_SEC, &resp, &k, err,
				sizeof(err));
	double ms = (double)(clock_monotonic_ns() - t0) / 1e6;

	if (rc < 0) {
		printf("failed %.3f: %s\n", ms, err);
		return 1;
	}
	printf("keys %.3f\n", ms);
	return 0;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	const char *mode;
	int a = 1;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[1], "-b") == 0) {
		source(argv[2], &src, &srclen);
		a = 3;
	}
	if (argc - a < 3) {
		fprintf(stderr, "usage: keattack [-b SRC] HOST PORT slowread|slowhello|idle N|hold SRC...|keys CAFILE\n");
		return 2;
	}
	mode = argv[a + 2];
	if (getaddrinfo(argv[a], argv[a + 1], &hints, &dst) != 0) {
		fprintf(stderr, "keattack: cannot resolve %s\n", argv[a]);
		return 2;
	}
	if (strcmp(mode, "slowread") == 0)
		return slowread();
	if (strcmp(mode, "slowhello") == 0)
		return slowhello();
	if (strcmp(mode, "idle") == 0 && argc - a == 4 && atoi(argv[a + 3]) > 0)
		return idle(atoi(argv[a + 3]));
	if (strcmp(mode, "hold") == 0 && argc - a > 3 && argc - a - 3 <= HOLD_MAX)
		return hold(argc - a - 3, argv + a + 3);
	if (strcmp(mode, "keys") == 0 && argc - a == 4)
		return keys(argv[a], argv[a + 1], argv[a + 3]);
	fprintf(stderr, "keattack: bad mode '%s'\n", mode);
	return 2;
}
