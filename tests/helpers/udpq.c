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
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "fence.h"

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

/* Any reply but the fence's. */
static void reply(const unsigned char *buf, size_t n, void *ctx)
{
	(void)buf;
	(void)ctx;
	printf("reply %zu\n", n);
}

int main(int argc, char **argv)
{
	unsigned char buf[4096];
	int fd, i;

	if (argc < 3) {
		fprintf(stderr, "usage: udpq HOST PORT [HEX...]\n");
		return 2;
	}
	fd = fence_connect("udpq", argv[1], argv[2]);
	if (fd < 0)
		return 2;
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
	return fence_wait("udpq", fd, reply, NULL);
}
