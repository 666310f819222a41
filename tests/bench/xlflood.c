/* SPDX-License-Identifier: ISC */
/*
 * xlflood - bench helper: NTP requests from many clients at a fixed rate,
 * in basic or interleaved mode, against a server on loopback; counts the
 * replies and the interleaved ones.
 *
 *     xlflood PORT NCLIENTS RATE SECONDS basic|xleave
 *
 * Client i is the address 127.1.(i / 256).(i % 256): one socket sends as
 * each of them (IP_PKTINFO), requests in turn at RATE per second.  In
 * xleave mode a request's origin is the receive timestamp of that
 * client's last reply and its receive field carries the client's number
 * (so an interleaved reply, whose origin echoes it, is matched); in basic
 * mode the transmit field carries it.  Prints one line:
 *
 *     sent N replies N interleaved N loss PCT rate N/s
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util_private.h"

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define TAG	0x5854000000000000ULL	/* "XT": our numbers, never a timestamp */

int main(int argc, char **argv)
{
	struct sockaddr_in srv = { .sin_family = AF_INET }, any = { .sin_family = AF_INET };
	unsigned long nclients, rate, secs, i;
	uint64_t sent = 0, replies = 0, inter = 0, *last;
	int64_t start, end, gap;
	int fd, xleave, one = 1;

	if (argc != 6 || (strcmp(argv[5], "basic") && strcmp(argv[5], "xleave"))) {
		fprintf(stderr, "usage: xlflood PORT NCLIENTS RATE SECONDS basic|xleave\n");
		return 2;
	}
	srv.sin_port = htons((uint16_t)atoi(argv[1]));
	srv.sin_addr.s_addr = htonl(0x7f000001);
	nclients = strtoul(argv[2], NULL, 10);
	rate = strtoul(argv[3], NULL, 10);
	secs = strtoul(argv[4], NULL, 10);
	xleave = strcmp(argv[5], "xleave") == 0;
	if (!nclients || nclients > 65536 || !rate || !secs) {
		fprintf(stderr, "xlflood: bad numbers\n");
		return 2;
	}
	last = calloc(nclients, sizeof(*last));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (!last || fd < 0 || setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&any, sizeof(any))) {
		perror("xlflood");
		return 1;
	}
	{
		int buf = 8 << 20;

		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	}
	gap = 1000000000 / (int64_t)rate;
	start = now_ns();
	end = start + (int64_t)secs * 1000000000;
	for (i = 0;; i++) {
		int64_t due = start + (int64_t)i * gap, t;
		unsigned char buf[256];

		/* Replies first, until the next send is due. */
		while ((t = now_ns()) < due || t >= end) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);

			if (n < 0) {
				if (t >= end + 200000000)
					goto done;
				continue;
			}
			if (n < 48)
				continue;
			{
				uint64_t org = get64(buf + 24);
				unsigned long c = (unsigned long)(org & 0xffffffff);

				if ((org & 0xffff000000000000ULL) != TAG || c >= nclients)
					continue;
				replies++;
				if (org & 0x100000000ULL)
					inter++;
				last[c] = get64(buf + 32);
			}
		}
		{
			unsigned long c = i % nclients;
			unsigned char req[48] = { 0x23 };
			struct in_pktinfo pi = { 0 };
			union {
				char b[CMSG_SPACE(sizeof(struct in_pktinfo))];
				struct cmsghdr align;
			} ctl;
			struct iovec iov = { .iov_base = req, .iov_len = sizeof(req) };
			struct msghdr h = {
				.msg_name = &srv, .msg_namelen = sizeof(srv),
				.msg_iov = &iov, .msg_iovlen = 1,
				.msg_control = ctl.b, .msg_controllen = sizeof(ctl.b),
			};
			struct cmsghdr *cm = CMSG_FIRSTHDR(&h);

			/* A basic reply echoes the transmit field, an
			   interleaved one the receive field: the same
			   client number, with the interleaved bit. */
			if (xleave) {
				put64(req + 24, last[c]);
				put64(req + 32, TAG | 0x100000000ULL | c);
			}
			put64(req + 40, TAG | c);
			pi.ipi_spec_dst.s_addr = htonl(0x7f010000 | (uint32_t)c);
			cm->cmsg_level = IPPROTO_IP;
			cm->cmsg_type = IP_PKTINFO;
			cm->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
			if (sendmsg(fd, &h, 0) == (ssize_t)sizeof(req))
				sent++;
		}
	}
done:
	printf("sent %llu replies %llu interleaved %llu loss %.3f%% rate %.0f/s\n",
	       (unsigned long long)sent, (unsigned long long)replies, (unsigned long long)inter,
	       sent ? 100.0 * (double)(sent - replies) / (double)sent : 0.0,
	       (double)sent / (double)secs);
	return 0;
}
