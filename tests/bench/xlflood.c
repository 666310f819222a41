/* SPDX-License-Identifier: ISC */
/*
 * xlflood - bench helper: NTP requests from many clients at a fixed rate,
 * in basic or interleaved mode, against a server on loopback (or at
 * SERVER); counts the replies and the interleaved ones.
 *
 *     xlflood PORT NCLIENTS RATE SECONDS basic|xleave [SERVER CLIENTNET]
 *
 * Client i is the address 127.1.(i / 256).(i % 256), or CLIENTNET + i
 * (an IPv4 address: the caller routes that range here, tests/bench/
 * reflect-uudp.sh), and the server 127.0.0.1 or SERVER: one socket sends
 * as each of them (IP_PKTINFO), requests in turn at RATE per second.  In
 * xleave mode a request's origin is the receive timestamp of that
 * client's last reply and its receive field carries the client's number
 * (so an interleaved reply, whose origin echoes it, is matched); in basic
 * mode the transmit field carries it.  Prints one line:
 *
 *     sent N replies N interleaved N loss PCT rate N/s own_drops N
 *     response_us min X mean X max X sd X n N
 *
 * own_drops: replies the kernel dropped at xlflood's own full socket
 * (SO_RXQ_OVFL): a loss of the generator, not of the server.  The
 * response is the server's time from request to reply by its own stamps:
 * in basic mode T3 - T2 of each reply (transmit minus receive field); in
 * interleaved mode t3k - t2k, the previous reply's kernel transmit stamp
 * (this reply's transmit field) minus that reply's kernel receive stamp
 * (its receive field), where both replies were interleaved.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util_private.h"
#include "opt_units.h"

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

#define TAG	0x5854000000000000ULL	/* "XT": our numbers, never a timestamp */

int main(int argc, char **argv)
{
	struct sockaddr_in srv = { .sin_family = AF_INET }, any = { .sin_family = AF_INET };
	unsigned long nclients, rate, secs, i;
	uint64_t sent = 0, replies = 0, inter = 0, *last;
	uint32_t own_drops = 0;
	unsigned char *last_xl;
	double rn = 0, rsum = 0, rsq = 0, rmin = 0, rmax = 0;
	int64_t start, end, gap;
	int fd, xleave, one = 1;
	uint32_t net = 0x7f010000;
	struct in_addr a;

	if ((argc != 6 && argc != 8) || (strcmp(argv[5], "basic") && strcmp(argv[5], "xleave"))) {
		fprintf(stderr, "usage: xlflood PORT NCLIENTS RATE SECONDS basic|xleave [SERVER CLIENTNET]\n");
		return 2;
	}
	srv.sin_port = htons((uint16_t)atoi(argv[1]));
	srv.sin_addr.s_addr = htonl(0x7f000001);
	if (argc == 8) {
		if (inet_pton(AF_INET, argv[6], &srv.sin_addr) != 1 ||
		    inet_pton(AF_INET, argv[7], &a) != 1) {
			fprintf(stderr, "xlflood: bad address\n");
			return 2;
		}
		net = ntohl(a.s_addr);
	}
	nclients = strtoul(argv[2], NULL, 10);
	rate = strtoul(argv[3], NULL, 10);
	secs = strtoul(argv[4], NULL, 10);
	xleave = strcmp(argv[5], "xleave") == 0;
	if (!nclients || nclients > 65536 || !rate || !secs) {
		fprintf(stderr, "xlflood: bad numbers\n");
		return 2;
	}
	last = calloc(nclients, sizeof(*last));
	last_xl = calloc(nclients, 1);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (!last || !last_xl || fd < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&any, sizeof(any))) {
		perror("xlflood");
		return 1;
	}
	{
		int buf = 8 << 20;

		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	}
	gap = NTPX_NS_PER_SEC / (int64_t)rate;
	start = now_ns();
	end = start + (int64_t)secs * NTPX_NS_PER_SEC;
	for (i = 0;; i++) {
		int64_t due = start + (int64_t)i * gap, t;
		unsigned char buf[256];

		/* Replies first, until the next send is due; in xleave mode
		   then those already waiting too, so that a generator
		   behind its schedule (a loaded machine) still names each
		   client's last reply instead of turning basic. */
		for (;;) {
			int late = (t = now_ns()) >= due && t < end;
			union {
				char b[CMSG_SPACE(sizeof(uint32_t))];
				struct cmsghdr align;
			} rctl;
			struct iovec riov = { .iov_base = buf, .iov_len = sizeof(buf) };
			struct msghdr rh = {
				.msg_iov = &riov, .msg_iovlen = 1,
				.msg_control = rctl.b, .msg_controllen = sizeof(rctl.b),
			};
			ssize_t n;
			struct cmsghdr *rc;

			if (late && !xleave)
				break;
			n = recvmsg(fd, &rh, 0);
			if (late && n < 0)
				break;
			if (n < 0) {
				if (t >= end + 200000000)
					goto done;
				continue;
			}
			for (rc = CMSG_FIRSTHDR(&rh); rc; rc = CMSG_NXTHDR(&rh, rc))
				if (rc->cmsg_level == SOL_SOCKET && rc->cmsg_type == SO_RXQ_OVFL)
					memcpy(&own_drops, CMSG_DATA(rc), sizeof(own_drops));
			if (n < 48)
				continue;
			{
				uint64_t org = get64(buf + 24), rec = get64(buf + 32);
				uint64_t xmt = get64(buf + 40);
				unsigned long c = (unsigned long)(org & 0xffffffff);
				int xl = (org & 0x100000000ULL) != 0;
				/* NTP 32.32 stamps: the response, in ns. */
				int64_t d = (int64_t)(xmt - (xl ? last[c] : rec));

				if ((org & 0xffff000000000000ULL) != TAG || c >= nclients)
					continue;
				replies++;
				inter += xl;
				if ((!xl || last_xl[c]) && d >= 0 && d < (1LL << 32)) {
					double us = (double)((d * NTPX_NS_PER_SEC) >> 32) / 1e3;

					if (!rn || us < rmin)
						rmin = us;
					if (!rn || us > rmax)
						rmax = us;
					rn++;
					rsum += us;
					rsq += us * us;
				}
				last[c] = rec;
				last_xl[c] = (unsigned char)xl;
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
			pi.ipi_spec_dst.s_addr = htonl(net + (uint32_t)c);
			cm->cmsg_level = IPPROTO_IP;
			cm->cmsg_type = IP_PKTINFO;
			cm->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
			if (sendmsg(fd, &h, 0) == (ssize_t)sizeof(req))
				sent++;
		}
	}
done:
	{
		double mean = rn ? rsum / rn : 0, var = rn ? rsq / rn - mean * mean : 0;

		printf("sent %llu replies %llu interleaved %llu loss %.3f%% rate %.0f/s own_drops %u"
		       " response_us min %.3f mean %.3f max %.3f sd %.3f n %.0f\n",
		       (unsigned long long)sent, (unsigned long long)replies,
		       (unsigned long long)inter,
		       sent ? 100.0 * (double)(sent - replies) / (double)sent : 0.0,
		       (double)sent / (double)secs, own_drops, rmin, mean, rmax,
		       var > 0 ? sqrt(var) : 0, rn);
	}
	close(fd);
	free(last);
	free(last_xl);
	return 0;
}
