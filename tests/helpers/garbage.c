/* SPDX-License-Identifier: ISC */
/*
 * garbage - test helper: floods a UDP server with datagrams it must not
 * answer, as fast as this sender can, and checks what comes back.
 *
 *     garbage HOST PORT SECONDS [SRCADDR]
 *
 * Kinds, in turn: random (1 to 600 random bytes), short (1 to 47 bytes
 * of a client request), control (a mode 6 query, 12 bytes), private (mode
 * 7, 8 bytes), version (a 48-byte request of version 0, 5, 6 or 7), mode
 * (48 bytes, version 4, modes 0, 1, 2, 4, 5), truncated (a 3000-byte
 * request), malformed (a request with 4 bytes of no extension field's
 * shape).  Every datagram of 48 bytes or more carries its sequence number
 * where a request's transmit timestamp goes, so that a reply, which
 * echoes it as origin, names the datagram it answers.
 *
 * Output, one line: "sent N random N short N control N private N version N
 * mode N truncated N malformed N replies N unmatched N larger N", where
 * unmatched counts replies that name no datagram sent and larger those
 * longer than the datagram they answer.  Exit 0, 1 on a socket error, 2
 * on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "opt_units.h"

#define BATCH	64
#define MAXLEN	3000
#define RING	(1u << 20)

enum kind { K_RANDOM, K_SHORT, K_CONTROL, K_PRIVATE, K_VERSION, K_MODE, K_TRUNCATED,
	    K_MALFORMED, K_N };
static const char *const kind_name[K_N] = {
	"random", "short", "control", "private", "version", "mode", "truncated", "malformed",
};

static uint16_t lens[RING];	/* the length of datagram seq, by seq % RING */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NTPX_NS_PER_SEC + ts.tv_nsec;
}

/* xorshift: random bytes fast; getrandom() only seeds it. */
static uint64_t rs;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static size_t make(unsigned char *b, enum kind k, uint64_t seq)
{
	size_t n, i;

	for (i = 0; i < 64; i += 8) {
		uint64_t v = rnd();

		memcpy(b + i, &v, 8);
	}
	switch (k) {
	case K_RANDOM:
		n = 1 + rnd() % 600;
		for (i = 64; i < n; i += 8) {
			uint64_t v = rnd();

			memcpy(b + i, &v, 8);
		}
		break;
	case K_SHORT:
		n = 1 + rnd() % 47;
		b[0] = 0x23;
		break;
	case K_CONTROL:
		n = 12;
		b[0] = 0x16;	/* version 2, mode 6 */
		break;
	case K_PRIVATE:
		n = 8;
		b[0] = 0x17;
		break;
	case K_VERSION: {
		static const unsigned char v[] = { 0, 5, 6, 7 };

		n = 48;
		b[0] = (unsigned char)(v[seq % 4] << 3 | 3);
		break;
	}
	case K_MODE: {
		static const unsigned char m[] = { 0, 1, 2, 4, 5 };

		n = 48;
		b[0] = (unsigned char)(4 << 3 | m[seq % 5]);
		break;
	}
	case K_TRUNCATED:
		n = MAXLEN;
		b[0] = 0x23;
		break;
	default:
		n = 52;
		b[0] = 0x23;
		memset(b + 48, 0xff, 4);
		break;
	}
	if (n >= 48)
		memcpy(b + 40, &seq, 8);
	return n;
}

int main(int argc, char **argv)
{
	static unsigned char buf[BATCH][MAXLEN];
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM }, *ai;
	uint64_t sent = 0, per[K_N] = { 0 }, replies = 0, unmatched = 0, larger = 0, seq = 1;
	int64_t end, drain;
	unsigned char r[4096];
	int fd, i;

	if (argc < 4 || argc > 5 || atof(argv[3]) <= 0) {
		fprintf(stderr, "usage: garbage HOST PORT SECONDS [SRCADDR]\n");
		return 2;
	}
	if (getaddrinfo(argv[1], argv[2], &hints, &ai)) {
		fprintf(stderr, "garbage: cannot resolve %s\n", argv[1]);
		return 2;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		perror("garbage: socket");
		return 1;
	}
	if (argc == 5) {
		struct addrinfo *sa;

		if (getaddrinfo(argv[4], NULL, &hints, &sa) ||
		    bind(fd, sa->ai_addr, sa->ai_addrlen)) {
			fprintf(stderr, "garbage: cannot bind %s\n", argv[4]);
			return 1;
		}
		freeaddrinfo(sa);
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("garbage: connect");
		return 1;
	}
	freeaddrinfo(ai);
	if (getrandom(&rs, sizeof(rs), 0) != sizeof(rs) || !rs)
		rs = 88172645463325252ull;

	end = now_ns() + (int64_t)ntpx_sec_to_ns(atof(argv[3]));
	drain = end + 200000000;
	for (;;) {
		int64_t t = now_ns();
		ssize_t n;

		if (t < end) {
			int m;

			for (i = 0; i < BATCH; i++) {
				enum kind k = (enum kind)((seq + (uint64_t)i) % K_N);

				iov[i].iov_base = buf[i];
				iov[i].iov_len = make(buf[i], k, seq + (uint64_t)i);
				memset(&msg[i], 0, sizeof(msg[i]));
				msg[i].msg_hdr.msg_iov = &iov[i];
				msg[i].msg_hdr.msg_iovlen = 1;
			}
			m = sendmmsg(fd, msg, BATCH, 0);
			if (m < 0 && errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED) {
				perror("garbage: sendmmsg");
				return 1;
			}
			for (i = 0; i < m; i++) {
				uint64_t s = seq + (uint64_t)i;

				per[s % K_N]++;
				lens[s % RING] = (uint16_t)iov[i].iov_len;
			}
			if (m > 0) {
				sent += (uint64_t)m;
				seq += (uint64_t)m;
			}
		} else if (t > drain) {
			break;
		}
		while ((n = recv(fd, r, sizeof(r), 0)) >= 0 || errno == ECONNREFUSED) {
			uint64_t org;

			if (n < 0)
				continue;
			replies++;
			if (n < 32) {
				unmatched++;
				continue;
			}
			memcpy(&org, r + 24, 8);
			if (org == 0 || org >= seq || seq - org > RING) {
				unmatched++;
				continue;
			}
			if ((size_t)n > lens[org % RING])
				larger++;
		}
		if (t >= end)
			usleep(1000);
	}
	printf("sent %llu", (unsigned long long)sent);
	for (i = 0; i < K_N; i++)
		printf(" %s %llu", kind_name[i], (unsigned long long)per[i]);
	printf(" replies %llu unmatched %llu larger %llu\n", (unsigned long long)replies,
	       (unsigned long long)unmatched, (unsigned long long)larger);
	close(fd);
	return 0;
}
