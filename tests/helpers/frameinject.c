/* SPDX-License-Identifier: ISC */
/*
 * frameinject - test helper: puts hand-made Ethernet frames on an
 * interface through an AF_PACKET socket, each an NTP client request that
 * would be answered if it were well formed, spoilt in one way.
 *
 *     frameinject IF DSTMAC SRCIP DSTIP DSTPORT SRCPORT KIND...
 *
 * KIND: good, ip_csum, udp_csum, fragment (MF set), fragment_tail (offset
 * 8, no UDP header), ip_length (total length past the frame), udp_length,
 * dst_ip (DSTIP + 1), dst_mac (a unicast MAC not the destination's),
 * dst_port (DSTPORT + 1), short (cut inside the UDP header), ip_version
 * (6), ethertype (0x88b5, local experimental).  The source MAC is IF's.
 * Exit 0 when every frame was sent, 1 on failure, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "neigh.h"

static void put16(unsigned char *b, unsigned v)
{
	b[0] = (unsigned char)(v >> 8);
	b[1] = (unsigned char)v;
}

int main(int argc, char **argv)
{
	struct frame_addr src = { 0 }, dst = { 0 };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_halen = 6 };
	unsigned char f[256], ntp[48] = { 0x23 };
	struct in_addr a;
	char err[256];
	int fd, i, ifindex;

	if (argc < 8) {
		fprintf(stderr, "usage: frameinject IF DSTMAC SRCIP DSTIP DSTPORT SRCPORT KIND...\n");
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
	for (i = 7; i < argc; i++) {
		const char *k = argv[i];
		struct frame_addr d = dst;
		size_t n;

		ntp[40] = (unsigned char)i;	/* a distinct transmit timestamp */
		if (strcmp(k, "dst_ip") == 0)
			d.ip++;
		if (strcmp(k, "dst_port") == 0)
			d.port++;
		if (strcmp(k, "dst_mac") == 0)
			d.mac[5] ^= 0x55;
		n = frame_build(f, sizeof(f), &src, &d, (uint16_t)(1000 + i), 64, ntp, sizeof(ntp), 0);
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
			   strcmp(k, "dst_mac")) {
			fprintf(stderr, "frameinject: unknown kind '%s'\n", k);
			close(fd);
			return 2;
		}
		if (sendto(fd, f, n, 0, (struct sockaddr *)&sll, sizeof(sll)) != (ssize_t)n) {
			perror("frameinject: sendto");
			close(fd);
			return 1;
		}
	}
	close(fd);
	return 0;
}
