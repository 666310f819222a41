/* SPDX-License-Identifier: ISC */
/*
 * udpq - test helper: sends raw datagrams to a UDP server, then an NTP
 * client request as a fence, and prints every reply until the fence's.
 *
 *     udpq HOST PORT [HEX...]
 *
 * Each HEX argument is one datagram.  A server answers in order, so when
 * the fence's reply has arrived, any reply to the datagrams before it has
 * arrived too: "nothing else came" is then a fact, not a guess after a
 * sleep.  Output, one line per reply: "reply LEN" or "fence LEN".  Exit 0
 * when the fence was answered within 3 s, 1 otherwise, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	unsigned char buf[4096], fence[48] = { 0x23 };
	int fd, i;

	if (argc < 3) {
		fprintf(stderr, "usage: udpq HOST PORT [HEX...]\n");
		return 2;
	}
	if (getaddrinfo(argv[1], argv[2], &hints, &ai)) {
		fprintf(stderr, "udpq: cannot resolve %s\n", argv[1]);
		return 2;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("udpq");
		return 2;
	}
	freeaddrinfo(ai);
	for (i = 3; i < argc; i++) {
		size_t n = strlen(argv[i]) / 2, k;

		if (strlen(argv[i]) % 2 || n > sizeof(buf)) {
			fprintf(stderr, "udpq: bad hex '%s'\n", argv[i]);
			return 2;
		}
		for (k = 0; k < n; k++) {
			int hi = hexval(argv[i][2 * k]), lo = hexval(argv[i][2 * k + 1]);

			if (hi < 0 || lo < 0) {
				fprintf(stderr, "udpq: bad hex '%s'\n", argv[i]);
				return 2;
			}
			buf[k] = (unsigned char)(hi << 4 | lo);
		}
		if (send(fd, buf, n, 0) != (ssize_t)n) {
			perror("udpq: send");
			return 2;
		}
	}
	if (getrandom(fence + 40, 8, 0) != 8 || send(fd, fence, sizeof(fence), 0) != 48) {
		perror("udpq: fence");
		return 2;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 3000) <= 0)
			return 1;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			perror("udpq: recv");
			return 1;
		}
		if (n >= 48 && memcmp(buf + 24, fence + 40, 8) == 0) {
			printf("fence %zd\n", n);
			return 0;
		}
		printf("reply %zd\n", n);
	}
}
