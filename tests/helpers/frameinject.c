/* SPDX-License-Identifier: ISC */
/*
 * frameinject - test helper: puts hand-made Ethernet frames on an
 * interface through an AF_PACKET socket, each an NTP client request that
 * would be answered if it were well formed, spoilt in one way.
 *
 *     frameinject [-d SECONDS] IF DSTMAC SRCIP DSTIP DSTPORT SRCPORT KIND...
 *
 * KIND: good, ip_csum, udp_csum, fragment (MF set), fragment_tail (offset
 * 8, no UDP header), ip_length (total length past the frame), udp_length,
 * dst_ip (DSTIP + 1), dst_mac (a unicast MAC not the destination's),
 * dst_port (DSTPORT + 1), short (cut inside the UDP header), ip_version
 * (6), ethertype (0x88b5, local experimental); and well-formed frames
 * whose NTP payload is wrong: control (a mode 6 query, 12 bytes), private
 * (mode 7, 8 bytes), version (7), mode (4, a server's).  The source MAC
 * is IF's.  Exit 0 when every frame was sent, 1 on failure, 2 on bad usage.
 *
 * With -d SECONDS the KINDs are sent in turn, again and again, as fast as
 * the socket takes them, for SECONDS (a flood); a full queue (ENOBUFS) is
 * waited out, not an error.  Then one line: "sent N KIND N ...".
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "neigh.h"
#include "opt_units.h"
#include "util_private.h"

#define MAX_KINDS	64

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long per[MAX_KINDS] = { 0 }, total = 0;
	int64_t end = 0;
	int pass;
	struct frame_addr src = { 0 }, dst = { 0 };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_halen = 6 };
	unsigned char f[256], ntp[48] = { 0x23 };
	struct in_addr a;
	char err[256];
	int fd, i, ifindex;

	if (argc > 2 && strcmp(argv[1], "-d") == 0) {
		double sec = atof(argv[2]);

		if (sec <= 0) {
			fprintf(stderr, "frameinject: bad -d '%s'\n", argv[2]);
			return 2;
		}
		end = now_ns() + (int64_t)ntpx_sec_to_ns(sec);
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	if (argc < 8 || argc - 7 > MAX_KINDS) {
		fprintf(stderr, "usage: frameinject [-d SECONDS] IF DSTMAC SRCIP DSTIP DSTPORT SRCPORT KIND...\n");
		return 2;
	}
	if (neigh_link(argv[1], &ifindex, src.mac, err, sizeof(err))) {
		fprintf(stderr, "frameinject: %s\n", err);
		return 1;
	}
	if (frame_mac_parse(argv[2], dst.mac) || inet_pton(AF_INET, argv[3], &a) != 1) {
		fprintf(stderr, "frameinject: bad MAC or source address\n");
		return 2;
	}
	src.ip = ntohl(a.s_addr);
	if (inet_pton(AF_INET, argv[4], &a) != 1) {
		fprintf(stderr, "frameinject: bad destination address\n");
		return 2;
	}
	dst.ip = ntohl(a.s_addr);
	dst.port = (uint16_t)atoi(argv[5]);
	src.port = (uint16_t)atoi(argv[6]);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("frameinject: socket");
		return 1;
	}
	sll.sll_ifindex = ifindex;
	memcpy(sll.sll_addr, dst.mac, 6);
	for (pass = 0; pass == 0 || (end && now_ns() < end); pass++)
	for (i = 7; i < argc; i++) {
		const char *k = argv[i];
		struct frame_addr d = dst;
		size_t n, plen = sizeof(ntp);

		ntp[0] = 0x23;
		ntp[40] = (unsigned char)i;	/* a distinct transmit timestamp */
		if (strcmp(k, "control") == 0) {
			ntp[0] = 0x16;
			plen = 12;
		} else if (strcmp(k, "private") == 0) {
			ntp[0] = 0x17;
			plen = 8;
		} else if (strcmp(k, "version") == 0) {
			ntp[0] = 0x3b;
		} else if (strcmp(k, "mode") == 0) {
			ntp[0] = 0x24;
		}
		if (strcmp(k, "dst_ip") == 0)
			d.ip++;
		if (strcmp(k, "dst_port") == 0)
			d.port++;
		if (strcmp(k, "dst_mac") == 0)
			d.mac[5] ^= 0x55;
		n = frame_build(f, sizeof(f), &src, &d, (uint16_t)(1000 + i), 64, ntp, plen, 0);
		if (strcmp(k, "ip_csum") == 0) {
			f[24] ^= 0x01;
		} else if (strcmp(k, "udp_csum") == 0) {
			f[40] ^= 0x01;
		} else if (strcmp(k, "fragment") == 0) {
			f[20] = 0x20;			/* MF, offset 0 */
			frame_ip_csum_fill(f);
		} else if (strcmp(k, "fragment_tail") == 0) {
			f[20] = 0x00;
			f[21] = 0x01;			/* offset 8 bytes */
			frame_ip_csum_fill(f);
		} else if (strcmp(k, "ip_length") == 0) {
			put16(f + 16, 20 + 8 + 48 + 100);
			frame_ip_csum_fill(f);
		} else if (strcmp(k, "udp_length") == 0) {
			put16(f + 38, 8 + 40);
		} else if (strcmp(k, "short") == 0) {
			n = FRAME_ETH_LEN + FRAME_IP_LEN + 4;
		} else if (strcmp(k, "ip_version") == 0) {
			f[14] = 0x65;
			frame_ip_csum_fill(f);
		} else if (strcmp(k, "ethertype") == 0) {
			put16(f + 12, 0x88b5);
		} else if (strcmp(k, "good") && strcmp(k, "dst_ip") && strcmp(k, "dst_port") &&
			   strcmp(k, "dst_mac") && strcmp(k, "control") && strcmp(k, "private") &&
			   strcmp(k, "version") && strcmp(k, "mode")) {
			fprintf(stderr, "frameinject: unknown kind '%s'\n", k);
			close(fd);
			return 2;
		}
		while (sendto(fd, f, n, 0, (struct sockaddr *)&sll, sizeof(sll)) != (ssize_t)n) {
			if (end && errno == ENOBUFS) {
				usleep(100);
				continue;
			}
			perror("frameinject: sendto");
			close(fd);
			return 1;
		}
		per[i - 7]++;
		total++;
	}
	if (end) {
		printf("sent %llu", total);
		for (i = 7; i < argc; i++)
			printf(" %s %llu", argv[i], per[i - 7]);
		printf("\n");
	}
	close(fd);
	return 0;
}
