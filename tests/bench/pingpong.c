/* SPDX-License-Identifier: ISC */
/*
 * pingpong - the noise floor of a kernel UDP path: the least a program can
 * do between the same four boundaries ntpprobe and ntpreflect stamp.
 *
 *     pingpong server PORT [busy] [stamp|stamp-nosched]
 *     pingpong client HOST PORT INTERVAL_US COUNT [busy] [stamp|stamp-nosched] [poll]
 *
 * The client reads CLOCK_REALTIME immediately before send() (T1) and after
 * recv() returns (T4); the server after recvfrom() returns (T2) and before
 * sendto() (T3), and sends T2 and T3 back in a 48-byte datagram.  No NTP
 * encoding, no validation, no records: what is left is the path.  The
 * client prints "median_ns p99_ns n" of delay = (T4 - T1) - (T3 - T2).
 * Both wait asleep in the receive itself (the client's with a 1 s
 * SO_RCVTIMEO), or spinning on it with "busy".
 *
 * With "stamp" both ends ask the kernel for what ntpprobe and ntpreflect
 * ask of it (lib/udp.c) in basic mode: SO_TIMESTAMPING with software
 * receive stamps, OPT_ID and OPT_TSONLY on the socket, receive stamps
 * read from recvmsg()'s control data; the client TX_SCHED and
 * TX_SOFTWARE stamps on every request, asked once on its connected
 * socket, collected from the error queue after the answer.  The server
 * asks no send stamps, as ntpreflect for a basic client without --log.
 * That is the stamped floor: the kernel's price for the stamps, without
 * ntpx.
 * "stamp-nosched" asks for TX_SOFTWARE alone.
 *
 * "poll" is the client of e0bfd10 and before, kept for one release so
 * that the figures measured against it stay comparable: it polls before
 * the receive, asks for the send stamps per request in a control
 * message (which costs the kernel a route lookup on every send) and
 * collects them right after the send.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "opt_units.h"
#include "stats.h"

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

/* 0: no stamps; else the send stamps asked per datagram. */
static uint32_t tx_stamps;
static int tx_ask;		/* ask for them (the client only) */
static int poll_first;		/* "poll": the floor of e0bfd10 */
static uint64_t stamp_sink;	/* the stamps go somewhere, as in ntpx (mod 2^64) */

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NTPX_NS_PER_SEC + ts->tv_nsec;
}

/* The socket's stamping, as lib/udp.c's udp_stamps_enable(). */
static int stamps_on(int fd)
{
	int flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		    SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;

	if (tx_ask && !poll_first)
		flags |= (int)tx_stamps;
	return tx_stamps ? setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) : 0;
}

/* The stamp of each message in @h's control data. */
static void stamps_read(struct msghdr *h)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		struct scm_timestamping tss;

		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
			memcpy(&tss, CMSG_DATA(c), sizeof(tss));
			stamp_sink += (uint64_t)ts_ns(&tss.ts[0]);
		}
	}
}

static ssize_t receive(int fd, void *buf, size_t len, struct sockaddr_in *from, int busy)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };

	for (;;) {
		ssize_t n;

		h.msg_name = from;
		h.msg_namelen = from ? sizeof(*from) : 0;
		h.msg_control = tx_stamps ? ctl.buf : NULL;
		h.msg_controllen = tx_stamps ? sizeof(ctl.buf) : 0;
		n = recvmsg(fd, &h, busy ? MSG_DONTWAIT : 0);
		if (n >= 0 && tx_stamps)
			stamps_read(&h);
		/* Blocking, EAGAIN is SO_RCVTIMEO's: the answer is lost. */
		if (n >= 0 || (errno != EINTR && !(busy && errno == EAGAIN)))
			return n;
	}
}

/* The send stamps waiting in the error queue, as udp_tx_drain(). */
static void tx_collect(int fd)
{
	for (;;) {
		char eb[CMSG_SPACE(sizeof(struct scm_timestamping)) +
			CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6)) + 64];
		struct msghdr e = { .msg_control = eb, .msg_controllen = sizeof(eb) };

		if (recvmsg(fd, &e, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
		stamps_read(&e);
	}
}

/* sendto(), or for "poll" with stamps what e0bfd10's lib/udp.c did: ask
   in a control message, send, and collect. */
static ssize_t transmit(int fd, const void *buf, size_t len, const struct sockaddr_in *to)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr h = {
		.msg_name = (void *)to, .msg_namelen = to ? sizeof(*to) : 0,
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *c;
	ssize_t n;

	if (!tx_ask || !poll_first)
		return to ? sendto(fd, buf, len, 0, (const struct sockaddr *)to, sizeof(*to))
			  : send(fd, buf, len, 0);
	memset(&ctl, 0, sizeof(ctl));
	h.msg_control = ctl.buf;
	h.msg_controllen = sizeof(ctl.buf);
	c = CMSG_FIRSTHDR(&h);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SO_TIMESTAMPING;
	c->cmsg_len = CMSG_LEN(sizeof(tx_stamps));
	memcpy(CMSG_DATA(c), &tx_stamps, sizeof(tx_stamps));
	n = sendmsg(fd, &h, 0);
	if (poll_first)
		tx_collect(fd);
	return n;
}

static int server(int port, int busy)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int64_t buf[6];

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || stamps_on(fd)) {
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
		transmit(fd, buf, sizeof(buf), &from);
	}
}

static int client(const char *host, int port, long interval_us, long count, int busy)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval wait = { .tv_sec = 1 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	double *d = calloc((size_t)count, sizeof(double));
	struct timespec next;
	int64_t buf[6] = { 0 };
	long i, n = 0;
	double q[2];
	static const double ps[2] = { 0.5, 0.99 };

	tx_ask = tx_stamps != 0;
	if (fd < 0 || !d || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) || stamps_on(fd) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait))) {
		perror("pingpong: client");
		free(d);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < count; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t t1, t4;

		next.tv_nsec += interval_us * 1000;
		while (next.tv_nsec >= NTPX_NS_PER_SEC) {
			next.tv_nsec -= NTPX_NS_PER_SEC;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		t1 = now();
		if (transmit(fd, buf, sizeof(buf), NULL) < 0)
			continue;
		if (!busy && poll_first && poll(&p, 1, 1000) <= 0)
			continue;
		if (receive(fd, buf, sizeof(buf), NULL, busy) < 0)
			continue;
		t4 = now();
		if (tx_ask && !poll_first)
			tx_collect(fd);
		d[n++] = (double)((t4 - t1) - (buf[2] - buf[1]));
	}
	if (n)
		stats_quantiles(d, (size_t)n, ps, q, 2);
	free(d);
	close(fd);
	if (!n)
		return 1;
	printf("%.0f %.0f %ld\n", q[0], q[1], n);
	return 0;
}

/* The words after the positional arguments: busy, stamp, stamp-nosched. */
static int words(int argc, char **argv, int from, int *busy)
{
	int i;

	for (i = from; i < argc; i++) {
		if (strcmp(argv[i], "busy") == 0)
			*busy = 1;
		else if (strcmp(argv[i], "stamp") == 0)
			tx_stamps = SOF_TIMESTAMPING_TX_SCHED | SOF_TIMESTAMPING_TX_SOFTWARE;
		else if (strcmp(argv[i], "stamp-nosched") == 0)
			tx_stamps = SOF_TIMESTAMPING_TX_SOFTWARE;
		else if (strcmp(argv[i], "poll") == 0)
			poll_first = 1;
		else
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int busy = 0;

	if (argc >= 3 && strcmp(argv[1], "server") == 0 && !words(argc, argv, 3, &busy))
		return server(atoi(argv[2]), busy);
	if (argc >= 6 && strcmp(argv[1], "client") == 0 && !words(argc, argv, 6, &busy))
		return client(argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]), busy);
	fprintf(stderr, "usage: pingpong server PORT [busy] [stamp|stamp-nosched] | "
		"client HOST PORT INTERVAL_US COUNT [busy] [stamp|stamp-nosched] [poll]\n");
	return 2;
}
