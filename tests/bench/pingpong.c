/* SPDX-License-Identifier: ISC */
/*
 * pingpong - the noise floor of a kernel UDP path: the least a program can
 * do between the same four boundaries ntpprobe and ntpreflect stamp.
 *
 *     pingpong server PORT [busy]
 *     pingpong client HOST PORT INTERVAL_US COUNT [busy]
 *
 * The client reads CLOCK_REALTIME immediately before send() (T1) and after
 * recv() returns (T4); the server after recvfrom() returns (T2) and before
 * sendto() (T3), and sends T2 and T3 back in a 48-byte datagram.  No NTP
 * encoding, no validation, no records: what is left is the path.  The
 * client prints "median_ns p99_ns n" of delay = (T4 - T1) - (T3 - T2).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static ssize_t receive(int fd, void *buf, size_t len, struct sockaddr_in *from, int busy)
{
	socklen_t fl = sizeof(*from);

	for (;;) {
		ssize_t n = recvfrom(fd, buf, len, busy ? MSG_DONTWAIT : 0,
				     (struct sockaddr *)from, from ? &fl : NULL);

		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return n;
	}
}

static int server(int port, int busy)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int64_t buf[6];

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("pingpong: server");
		return 1;
	}
	for (;;) {
		struct sockaddr_in from;
		ssize_t n = receive(fd, buf, sizeof(buf), &from, busy);

		buf[1] = now();		/* T2 */
		if (n < 0)
			return 1;
		buf[2] = now();		/* T3 */
		sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, sizeof(from));
	}
}

static int client(const char *host, int port, long interval_us, long count, int busy)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	double *d = calloc((size_t)count, sizeof(double));
	struct timespec next;
	int64_t buf[6] = { 0 };
	long i, n = 0;
	double q[2];
	static const double ps[2] = { 0.5, 0.99 };

	if (fd < 0 || !d || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("pingpong: client");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < count; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t t1, t4;

		next.tv_nsec += interval_us * 1000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		t1 = now();
		if (send(fd, buf, sizeof(buf), 0) < 0)
			continue;
		if (!busy && poll(&p, 1, 1000) <= 0)
			continue;
		if (receive(fd, buf, sizeof(buf), NULL, busy) < 0)
			continue;
		t4 = now();
		d[n++] = (double)((t4 - t1) - (buf[2] - buf[1]));
	}
	if (!n)
		return 1;
	stats_quantiles(d, (size_t)n, ps, q, 2);
	printf("%.0f %.0f %ld\n", q[0], q[1], n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "server") == 0)
		return server(atoi(argv[2]), argc > 3 && strcmp(argv[3], "busy") == 0);
	if (argc >= 6 && strcmp(argv[1], "client") == 0)
		return client(argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]),
			      argc > 6 && strcmp(argv[6], "busy") == 0);
	fprintf(stderr, "usage: pingpong server PORT [busy] | client HOST PORT INTERVAL_US COUNT [busy]\n");
	return 2;
}
