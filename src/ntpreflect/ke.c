/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect --nts-cert: the NTS-KE server (RFC 8915 section 4) on a TCP
 * socket of the endpoint's address (--nts-port, 4460), which no client
 * can hold shut for the others.
 *
 * Sessions run side by side, one to a thread of a pool of KE_SESSIONS,
 * each ending KE_DEADLINE_NS after its connection was accepted whatever
 * the client sends or holds back (lib/nts_tls.c waits on the socket only
 * for the time left).  An acceptor thread does nothing but accept: it
 * hands a connection to a free thread at once, or resets it at once when
 * every thread is busy or KE_PER_ADDR sessions of the client's address
 * (an IPv6 client's /64) are running; a connection that sends nothing
 * reaches it only after 2 s (TCP_DEFER_ACCEPT), so that an idle flood
 * stays in the kernel.  So one address holds at most KE_PER_ADDR of the
 * KE_SESSIONS for at most KE_DEADLINE_NS each, and a client from
 * elsewhere finds a free thread as long as fewer than KE_SESSIONS /
 * KE_PER_ADDR addresses are busy at once; memory and descriptors are
 * bounded by the pool, whatever comes.  Threads rather
 * than an event loop: GnuTLS's blocking calls stay as they are, with the
 * deadline in the transport under them, and sessions use both cores
 * (doc/design-notes.md).  None of it touches the NTP thread but through
 * lib/nts_server.c's lock on the cookie keys, held to seal one cookie.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "nts_server.h"
#include "nts_tls.h"
#include "opt_units.h"
#include "ntpreflect.h"

struct ke_slot {
	struct reflector *r;
	pthread_t thread;
	pthread_cond_t go;
	int fd;				/* the session's socket; -1: free */
	unsigned char addr[16];		/* its client's address (the /64 of IPv6) */
	char peer[NI_MAXHOST + NI_MAXSERV + 4];
};

struct reflect_ke {
	pthread_mutex_t lock;		/* the slots' fd, addr and peer */
	struct ke_slot slot[KE_SESSIONS];
	pthread_t acceptor;
	int fd;				/* the listening socket */
	int stop;
};

/* The cookies of a KE response: 8, sealed under the current key. */
static int ke_cookies(void *arg, const struct nts_keys *keys, struct nts_ke_msg *resp)
{
	struct reflector *r = arg;

	if (nts_server_ke_cookies(r->nts, keys, resp) < 0)
		return -1;
	/* The NTP port, when it is not 123 (section 4.1.8). */
	if (r->cfg->ep.port != 123)
		resp->port = r->cfg->ep.port;
	return 0;
}

/* A pool thread: one session after another, as the acceptor hands them. */
static void *ke_worker(void *arg)
{
	struct ke_slot *sl = arg;
	struct reflector *r = sl->r;
	struct reflect_ke *ke = r->ke;

	pthread_mutex_lock(&ke->lock);
	for (;;) {
		char err[512];
		int fd;

		while (sl->fd < 0 && !ke->stop)
			pthread_cond_wait(&sl->go, &ke->lock);
		if (sl->fd < 0)
			break;
		fd = sl->fd;
		pthread_mutex_unlock(&ke->lock);
		if (nts_tls_serve(r->tls, fd, KE_DEADLINE_NS, ke_cookies, r, err, sizeof(err)) == 0) {
			__atomic_add_fetch(&r->ke_ok, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&r->ke_failed, 1, __ATOMIC_RELAXED);
			reflect_nts_line(r, sl->peer, "nts-ke", err + strlen("nts-ke: "));
		}
		pthread_mutex_lock(&ke->lock);
		sl->fd = -1;
		close(fd);
	}
	pthread_mutex_unlock(&ke->lock);
	return NULL;
}

/* What the per-address limit counts by: an IPv4 address (also mapped
   into IPv6), an IPv6 address's first 64 bits. */
static void addr_key(const struct sockaddr_storage *ss, unsigned char key[16])
{
	memset(key, 0, 16);
	if (ss->ss_family == AF_INET) {
		memcpy(key, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const unsigned char *a = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a))
			memcpy(key, a + 12, 4);
		else
			memcpy(key + 4, a, 8);
	}
}

/*
 * Under the lock: a free slot for a client whose key is @key, or NULL
 * with *@why: every thread busy, or KE_PER_ADDR of them serving it.
 */
static struct ke_slot *take_slot(struct reflect_ke *ke, const unsigned char key[16],
				 const char **why)
{
	struct ke_slot *free_slot = NULL;
	unsigned i, same = 0;

	for (i = 0; i < KE_SESSIONS; i++) {
		if (ke->slot[i].fd < 0 && !free_slot)
			free_slot = &ke->slot[i];
		else if (ke->slot[i].fd >= 0 && memcmp(ke->slot[i].addr, key, 16) == 0)
			same++;
	}
	if (same >= KE_PER_ADDR) {
		*why = "refused: " KE_PER_ADDR_STR " sessions of this address running";
		return NULL;
	}
	if (!free_slot)
		*why = "refused: all " KE_SESSIONS_STR " sessions busy";
	return free_slot;
}

static void peer_name(const struct sockaddr_storage *ss, socklen_t sl, char *peer, size_t len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo((const struct sockaddr *)ss, sl, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(peer, len, "?");
	else
		snprintf(peer, len, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, serv);
}

/*
 * One connection accepted: to a free thread, or refused.  A refused one is
 * reset (SO_LINGER 0), not closed: no FIN exchange and no TIME_WAIT, the
 * least work a flood of them can make the kernel do.
 */
static void ke_take(struct reflector *r, int fd, const struct sockaddr_storage *ss, socklen_t sl)
{
	static const struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	struct reflect_ke *ke = r->ke;
	unsigned char key[16];
	char peer[sizeof(ke->slot[0].peer)];
	struct ke_slot *slot;
	const char *why = NULL;

	addr_key(ss, key);
	peer_name(ss, sl, peer, sizeof(peer));
	pthread_mutex_lock(&ke->lock);
	slot = take_slot(ke, key, &why);
	if (slot) {
		memcpy(slot->addr, key, 16);
		memcpy(slot->peer, peer, sizeof(peer));
		slot->fd = fd;
		pthread_cond_signal(&slot->go);
	}
	pthread_mutex_unlock(&ke->lock);
	if (slot)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	close(fd);
	__atomic_add_fetch(&r->ke_refused, 1, __ATOMIC_RELAXED);
	reflect_nts_line(r, peer, "nts-ke", why);
}

/* The acceptor: every connection waiting taken in turn, then a wait for
   more (now and then a look at the end coming). */
static void *ke_accept(void *arg)
{
	struct reflector *r = arg;
	struct reflect_ke *ke = r->ke;

	while (!reflect_stopping) {
		struct pollfd pfd = { .fd = ke->fd, .events = POLLIN };
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		while (!reflect_stopping &&
		       (fd = accept4(ke->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC)) >= 0) {
			ke_take(r, fd, &ss, sl);
			sl = sizeof(ss);
		}
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
	int fd, one = 1, rc, defer = (int)(KE_DEADLINE_NS / NTPX_NS_PER_SEC);

	snprintf(port, sizeof(port), "%u", (unsigned)cfg->nts_port);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "nts-ke %s: %s", host ? host : "*", gai_strerror(rc));
		return -1;
	}
	/*
	 * A long queue: a flood of connections waits there a moment for the
	 * acceptor, never in SYNs dropped, which a client would send again
	 * only after a second.  TCP_DEFER_ACCEPT: a connection reaches the
	 * queue when its first bytes do (a client's ClientHello comes with
	 * its handshake's last ACK); one that sends nothing waits in the
	 * kernel until the time given, and only then takes a session to be
	 * ended at its deadline.  An idle flood then costs the acceptor
	 * nothing for that long, and a legitimate client's connection is not
	 * queued behind it.
	 */
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer, sizeof(defer)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, SOMAXCONN)) {
		snprintf(err, errlen, "nts-ke %s port %s: %s", host ? host : "*", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* A private key others than its owner can read is worth a line (the
   server runs anyway: the file is the operator's). */
static void key_file_check(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && st.st_mode & (S_IRGRP | S_IROTH))
		ntpx_err("warning: %s: private key readable by %s (mode %04o)", path,
			 st.st_mode & S_IROTH ? "others" : "its group",
			 (unsigned)(st.st_mode & 07777));
}

void reflect_nts_start(struct reflector *r)
{
	const struct reflect_config *cfg = r->cfg;
	struct reflect_ke *ke;
	sigset_t all, old;
	char err[512];
	unsigned i;
	int rc = 0;

	pthread_mutex_init(&r->line_lock, NULL);
	r->lines = (struct log_limit){ .window = 60 * NTPX_NS_PER_SEC, .max = NTS_LINES_PER_MIN };
	key_file_check(cfg->nts_key);
	r->tls = nts_tls_server_new(cfg->nts_cert, cfg->nts_key, err, sizeof(err));
	if (!r->tls)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	r->nts = nts_server_new(cfg->nts_rotate, err, sizeof(err));
	if (!r->nts)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	ke = r->ke = calloc(1, sizeof(*ke));
	if (!ke)
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	ke->fd = ke_listen(cfg, err, sizeof(err));
	if (ke->fd < 0)
		ntpx_die(NTPX_EXIT_FAIL, "%s", err);
	pthread_mutex_init(&ke->lock, NULL);
	/* Signals go to the NTP loop, whose receive they must wake. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < KE_SESSIONS && !rc; i++) {
		ke->slot[i] = (struct ke_slot){ .r = r, .fd = -1 };
		pthread_cond_init(&ke->slot[i].go, NULL);
		rc = pthread_create(&ke->slot[i].thread, NULL, ke_worker, &ke->slot[i]);
		if (!rc)
			pthread_setname_np(ke->slot[i].thread, "nts-ke");
	}
	if (!rc)
		rc = pthread_create(&ke->acceptor, NULL, ke_accept, r);
	if (!rc)
		pthread_setname_np(ke->acceptor, "nts-ke-accept");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		ntpx_die(NTPX_EXIT_FAIL, "nts-ke: cannot start its threads: %s", strerror(rc));
}

void reflect_nts_stop(struct reflector *r)
{
	struct reflect_ke *ke = r->ke;
	unsigned i;

	if (!ke)
		return;
	reflect_stopping = 1;
	pthread_join(ke->acceptor, NULL);
	/* Sessions still running end now, not at their deadlines. */
	pthread_mutex_lock(&ke->lock);
	ke->stop = 1;
	for (i = 0; i < KE_SESSIONS; i++) {
		if (ke->slot[i].fd >= 0)
			shutdown(ke->slot[i].fd, SHUT_RDWR);
		pthread_cond_signal(&ke->slot[i].go);
	}
	pthread_mutex_unlock(&ke->lock);
	for (i = 0; i < KE_SESSIONS; i++) {
		pthread_join(ke->slot[i].thread, NULL);
		pthread_cond_destroy(&ke->slot[i].go);
	}
	close(ke->fd);
	pthread_mutex_destroy(&ke->lock);
	free(ke);
	r->ke = NULL;
	reflect_nts_lines_end(r);
	nts_tls_server_free(r->tls);
	nts_server_free(r->nts);
}
