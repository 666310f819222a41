/* SPDX-License-Identifier: ISC */
/*
 * ntpfake - test helper: an NTP server on loopback that answers every
 * client request with the leap indicator, stratum and reference ID it is
 * given, as a server that is not synchronised or that sends a kiss code
 * would (tests/cli/kiss.t).
 *
 *     ntpfake PORT LEAP STRATUM REFID [zero | offset=NS | late]
 *
 * REFID is up to four ASCII characters ("RATE"), or 0x followed by eight
 * hex digits ("0x00000000").  With "zero" the receive and transmit
 * timestamps are 0; otherwise they are the time of the request's arrival
 * and of the reply (CLOCK_REALTIME), as a real server's, plus NS with
 * "offset=NS": a server whose clock is NS ahead (tests/cli/check.t's
 * falseticker).  With "late" each reply is held until the next request
 * comes, and goes out once that request is read: always late, and
 * always while its client waits for the next one (the last is never
 * sent).  Before
 * each reply goes out, "request N" is written and flushed on stdout, so
 * once a client has its reply the line is there: how many requests came
 * is then a fact, not a guess after a sleep.  The poll field of every
 * reply is -10 (about 1 ms): a RATE kiss from it asks for no interval of
 * its own, so that the client's doubling shows.  Runs until killed; exit 2
 * on bad usage or a socket error.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ntp.h"

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

static int parse_refid(const char *s, uint32_t *refid)
{
	size_t i, n = strlen(s);
	char *end;

	if (strncmp(s, "0x", 2) == 0) {
		unsigned long v = strtoul(s + 2, &end, 16);

		if (n != 10 || *end)
			return -1;
		*refid = (uint32_t)v;
		return 0;
	}
	if (n == 0 || n > 4)
		return -1;
	*refid = 0;
	for (i = 0; i < 4; i++)
		*refid = *refid << 8 | (i < n ? (unsigned char)s[i] : 0);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	unsigned long port, leap, stratum, count = 0;
	uint32_t refid;
	long long offset = 0;
	unsigned char held[NTP_HEADER_LEN];
	struct sockaddr_in held_to;
	int fd, zero = 0, late = 0, holding = 0;
	char *end = NULL;

	if (argc < 5 || argc > 6 || (port = strtoul(argv[1], NULL, 10)) == 0 || port > 65535 ||
	    (leap = strtoul(argv[2], NULL, 10)) > 3 ||
	    (stratum = strtoul(argv[3], NULL, 10)) > 255 || parse_refid(argv[4], &refid) ||
	    (argc == 6 && strcmp(argv[5], "zero") != 0 && strcmp(argv[5], "late") != 0 &&
	     (strncmp(argv[5], "offset=", 7) != 0 ||
	      (offset = strtoll(argv[5] + 7, &end, 10), !end || end == argv[5] + 7 || *end)))) {
		fprintf(stderr, "usage: ntpfake PORT LEAP STRATUM REFID [zero | offset=NS | late]\n");
		return 2;
	}
	zero = argc == 6 && strcmp(argv[5], "zero") == 0;
	late = argc == 6 && strcmp(argv[5], "late") == 0;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("ntpfake");
		return 2;
	}
	for (;;) {
		unsigned char buf[2048];
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		struct ntp_packet q, r;
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		int64_t t2 = now_ns();

		if (n < 0) {
			perror("ntpfake: recvfrom");
			return 2;
		}
		if (ntp_decode(buf, (size_t)n, &q) || q.mode != NTP_MODE_CLIENT)
			continue;
		if (holding && sendto(fd, held, sizeof(held), 0, (struct sockaddr *)&held_to,
				      sizeof(held_to)) < 0)
			perror("ntpfake: sendto");
		holding = 0;
		r = (struct ntp_packet){
			.leap = (uint8_t)leap, .version = q.version, .mode = NTP_MODE_SERVER,
			.stratum = (uint8_t)stratum, .poll = -10, .precision = -20,
			.refid = refid, .org = q.xmt,
			.rec = zero ? 0 : ntp_ts_from_ns(t2 + offset),
		};
		printf("request %lu\n", ++count);
		fflush(stdout);
		r.xmt = zero ? 0 : ntp_ts_from_ns(now_ns() + offset);
		ntp_encode(&r, buf);
		if (late) {
			memcpy(held, buf, sizeof(held));
			held_to = from;
			holding = 1;
		} else if (sendto(fd, buf, NTP_HEADER_LEN, 0, (struct sockaddr *)&from, flen) < 0) {
			perror("ntpfake: sendto");
		}
	}
}
