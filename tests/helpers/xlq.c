/* SPDX-License-Identifier: ISC */
/*
 * xlq - test helper: one NTP client request with the origin, receive and
 * transmit timestamps given, from a given local address and port, and what
 * the reply says about interleaved mode.
 *
 *     xlq HOST PORT SRCADDR SRCPORT ORG REC XMT
 *
 * ORG, REC and XMT are 16 hex digits.  Prints one line:
 *
 *     MODE LEN ORG REC XMT
 *
 * MODE is "basic" when the reply's origin is our XMT, "interleaved" when
 * it is our REC (and differs from XMT), "other" otherwise; the reply's
 * three timestamps follow in hex.  Exit 0 with a reply, 1 when none came
 * within 3 s, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util_private.h"

static int hex64(const char *s, uint64_t *v)
{
	char *end;

	if (strlen(s) != 16)
		return -1;
	*v = strtoull(s, &end, 16);
	return *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_family = AF_INET }, *ai;
	struct sockaddr_in local = { .sin_family = AF_INET };
	unsigned char req[48] = { 0x23 }, buf[2048];
	uint64_t org, rec, xmt;
	struct pollfd p;
	ssize_t n;
	int fd, one = 1;

	if (argc != 8 || hex64(argv[5], &org) || hex64(argv[6], &rec) || hex64(argv[7], &xmt) ||
	    inet_pton(AF_INET, argv[3], &local.sin_addr) != 1) {
		fprintf(stderr, "usage: xlq HOST PORT SRCADDR SRCPORT ORG REC XMT (16 hex digits each)\n");
		return 2;
	}
	if (getaddrinfo(argv[1], argv[2], &hints, &ai)) {
		fprintf(stderr, "xlq: cannot resolve %s\n", argv[1]);
		return 2;
	}
	local.sin_port = htons((uint16_t)atoi(argv[4]));
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&local, sizeof(local)) ||
	    connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("xlq");
		return 2;
	}
	freeaddrinfo(ai);
	put64(req + 24, org);
	put64(req + 32, rec);
	put64(req + 40, xmt);
	if (send(fd, req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
		perror("xlq: send");
		return 2;
	}
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&p, 1, 3000) <= 0)
		return 1;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 48) {
		fprintf(stderr, "xlq: short reply\n");
		return 1;
	}
	printf("%s %zd %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\n",
	       get64(buf + 24) == xmt ? "basic" :
	       get64(buf + 24) == rec && rec != xmt ? "interleaved" : "other",
	       n, get64(buf + 24), get64(buf + 32), get64(buf + 40));
	return 0;
}
