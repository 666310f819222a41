/* SPDX-License-Identifier: ISC */
/*
 * fence.h - what udpq and ntsq share: a socket connected to a UDP
 * server, and the fence that ends their datagrams.  The fence is a plain
 * NTP client request with a random transmit field; a server answers in
 * order, so once the fence's reply has come, every reply to what went
 * before it has come too: "nothing else came" is then a fact, not a
 * guess after a sleep.
 */
#ifndef NTPX_TESTS_FENCE_H
#define NTPX_TESTS_FENCE_H

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

/* A UDP socket connected to HOST PORT, or -1 with one line on stderr. */
static int fence_connect(const char *prog, const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	int fd;

	if (getaddrinfo(host, port, &hints, &ai)) {
		fprintf(stderr, "%s: cannot resolve %s\n", prog, host);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror(prog);
		return -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/*
 * Sends the fence on @fd, then hands each reply that comes before the
 * fence's to @reply and prints "fence LEN" for the fence's.  Returns 0
 * when the fence was answered within 3 s, 1 when not (or a receive
 * failed), 2 when the fence could not be sent.
 */
static int fence_wait(const char *prog, int fd,
		      void (*reply)(const unsigned char *buf, size_t n, void *ctx), void *ctx)
{
	unsigned char buf[4096], fence[48] = { 0x23 };

	if (getrandom(fence + 40, 8, 0) != 8 || send(fd, fence, sizeof(fence), 0) != 48) {
		fprintf(stderr, "%s: fence: %s\n", prog, strerror(errno));
		return 2;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 3000) <= 0)
			return 1;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			fprintf(stderr, "%s: recv: %s\n", prog, strerror(errno));
			return 1;
		}
		if (n >= 48 && memcmp(buf + 24, fence + 40, 8) == 0) {
			printf("fence %zd\n", n);
			return 0;
		}
		reply(buf, (size_t)n, ctx);
	}
}

#endif
