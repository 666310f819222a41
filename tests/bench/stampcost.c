/* SPDX-License-Identifier: ISC */
/*
 * stampcost - bench helper: what the kernel charges a UDP server over
 * loopback, per reply, for the send stamps of interleaved mode, in the
 * ways ntpreflect could send (lib/udp.c, lib/udp_stamp.c).
 *
 *     stampcost [ROUNDS]
 *
 * One socket set up as ntpreflect's (SO_TIMESTAMPING: software stamps,
 * OPT_ID, OPT_TSONLY) sends 48-byte datagrams to another on 127.0.0.1,
 * 16 at a time, each way of sending in turn within a round (ROUNDS,
 * default 300), so that the machine's load falls on all of them.  The
 * cost is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID) per datagram:
 * it includes the loopback's delivery to the other socket, which runs in
 * the sender's system call, as it does in ntpreflect's.  Where stamps
 * were asked, the error queue is read after each 16 sends, as ntpreflect
 * reads it (recvmmsg of 32), and that read's time per stamp is printed
 * too.  Prints one line per way: the median and the quartiles, us.
 */
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SCM_TS_OPT_ID
#define SCM_TS_OPT_ID	81	/* asm-generic/socket.h, Linux 6.13 */
#endif

#define LEN	48
#define PER	16		/* sends between reads of the error queue */
#define BURSTS	8		/* of PER, per way and round */
#define BATCH	8		/* the sendmmsg() way's batch */

enum way {
	W_SENDTO,		/* basic mode: no control message */
	W_SENDMSG,		/* sendmsg(), no control message */
	W_CTL_NONE,		/* an SO_TIMESTAMPING message asking for nothing */
	W_STAMP,		/* ... asking TX_SOFTWARE, the socket's count as id */
	W_STAMP_ID,		/* ... and SCM_TS_OPT_ID: ntpreflect's */
	W_MMSG1,		/* the same in a sendmmsg() of one */
	W_MMSG8,		/* ... in a sendmmsg() of BATCH */
	W_READ,			/* the error queue's read of W_STAMP_ID, per stamp */
	W_READ1,		/* ... read after every send */
	NWAYS
};

static const char *const names[NWAYS] = {
	"sendto, no stamp (basic)",
	"sendmsg, no control message",
	"sendmsg, SO_TIMESTAMPING 0",
	"sendmsg, TX_SOFTWARE",
	"sendmsg, TX_SOFTWARE + OPT_ID",
	"sendmmsg of 1, same",
	"sendmmsg of 8, same",
	"error queue, per stamp",
	"error queue read per send",
};

static int srv, sink;
static struct sockaddr_in to;
static uint32_t next_id;

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

union ctl {
	char buf[2 * CMSG_SPACE(sizeof(uint32_t))];
	struct cmsghdr align;
};

/* @h's control messages for @w (its msg_control at @c). */
static void put_ctl(struct msghdr *h, union ctl *c, enum way w)
{
	uint32_t tx = w == W_CTL_NONE ? 0 : SOF_TIMESTAMPING_TX_SOFTWARE;
	struct cmsghdr *m;

	if (w == W_SENDTO || w == W_SENDMSG)
		return;
	memset(c, 0, sizeof(*c));
	h->msg_control = c->buf;
	h->msg_controllen = sizeof(c->buf);
	m = CMSG_FIRSTHDR(h);
	m->cmsg_level = SOL_SOCKET;
	m->cmsg_type = SO_TIMESTAMPING;
	m->cmsg_len = CMSG_LEN(sizeof(tx));
	memcpy(CMSG_DATA(m), &tx, sizeof(tx));
	if (w == W_CTL_NONE || w == W_STAMP) {
		h->msg_controllen = CMSG_SPACE(sizeof(tx));
		return;
	}
	m = CMSG_NXTHDR(h, m);
	m->cmsg_level = SOL_SOCKET;
	m->cmsg_type = SCM_TS_OPT_ID;
	m->cmsg_len = CMSG_LEN(sizeof(next_id));
	memcpy(CMSG_DATA(m), &next_id, sizeof(next_id));
	next_id++;
}

/* PER datagrams the way @w; 0, or -1 when one failed. */
static int send_burst(enum way w)
{
	static unsigned char pkt[BATCH][LEN] = { { 0x24 } };
	struct iovec iov[BATCH];
	union ctl c[BATCH];
	struct mmsghdr m[BATCH];
	int i, k;

	for (i = 0; i < PER; i += k) {
		for (k = 0; k < (w == W_MMSG8 ? BATCH : 1); k++) {
			iov[k] = (struct iovec){ .iov_base = pkt[k], .iov_len = LEN };
			m[k].msg_hdr = (struct msghdr){
				.msg_name = &to, .msg_namelen = sizeof(to),
				.msg_iov = &iov[k], .msg_iovlen = 1,
			};
			put_ctl(&m[k].msg_hdr, &c[k], w);
		}
		if (w == W_SENDTO) {
			if (sendto(srv, pkt[0], LEN, MSG_DONTWAIT, (struct sockaddr *)&to,
				   sizeof(to)) != LEN)
				return -1;
		} else if (w == W_MMSG1 || w == W_MMSG8) {
			if (sendmmsg(srv, m, (unsigned)k, MSG_DONTWAIT) != k)
				return -1;
		} else if (sendmsg(srv, &m[0].msg_hdr, MSG_DONTWAIT) != LEN) {
			return -1;
		}
	}
	return 0;
}

/* Every stamp in the error queue, 32 a call as ntpreflect reads them. */
static int read_stamps(void)
{
	union {
		char buf[256];
		struct cmsghdr align;
	} c[32];
	struct mmsghdr m[32];
	int n, got = 0, i;

	do {
		memset(m, 0, sizeof(m));
		for (i = 0; i < 32; i++) {
			m[i].msg_hdr.msg_control = c[i].buf;
			m[i].msg_hdr.msg_controllen = sizeof(c[i].buf);
		}
		n = recvmmsg(srv, m, 32, MSG_ERRQUEUE | MSG_DONTWAIT, NULL);
		if (n > 0)
			got += n;
	} while (n == 32);
	return got;
}

/* The other socket's datagrams, off the clock. */
static void drain_sink(void)
{
	static unsigned char buf[64][LEN];
	struct mmsghdr m[64];
	struct iovec iov[64];
	int i, n;

	do {
		memset(m, 0, sizeof(m));
		for (i = 0; i < 64; i++) {
			iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = LEN };
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(sink, m, 64, MSG_DONTWAIT, NULL);
	} while (n == 64);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in lo = { .sin_family = AF_INET };
	int flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		    SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	int rounds = argc > 1 ? atoi(argv[1]) : 300, buf = 4 << 20, r, w, b;
	socklen_t len = sizeof(to);
	double *v[NWAYS];

	if (argc > 2 || rounds < 4) {
		fprintf(stderr, "usage: stampcost [ROUNDS >= 4]\n");
		return 2;
	}
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv = socket(AF_INET, SOCK_DGRAM, 0);
	sink = socket(AF_INET, SOCK_DGRAM, 0);
	if (srv < 0 || sink < 0 || bind(srv, (struct sockaddr *)&lo, sizeof(lo)) ||
	    bind(sink, (struct sockaddr *)&lo, sizeof(lo)) ||
	    getsockname(sink, (struct sockaddr *)&to, &len) ||
	    setsockopt(srv, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags))) {
		perror("stampcost");
		return 1;
	}
	(void)setsockopt(sink, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	for (w = 0; w < NWAYS; w++)
		if (!(v[w] = calloc((size_t)rounds, sizeof(double)))) {
			perror("stampcost");
			return 1;
		}
	for (r = 0; r < rounds; r++) {
		for (w = W_SENDTO; w <= W_MMSG8; w++) {
			int64_t sent = 0, read = 0, t0, t1;
			int got = 0;

			for (b = 0; b < BURSTS; b++) {
				t0 = cpu_ns();
				if (send_burst((enum way)w)) {
					perror("stampcost: send");
					return 1;
				}
				t1 = cpu_ns();
				if (w >= W_STAMP)
					got += read_stamps();
				read += cpu_ns() - t1;
				sent += t1 - t0;
			}
			drain_sink();
			v[w][r] = (double)sent / (PER * BURSTS) / 1e3;
			if (w == W_STAMP_ID)
				v[W_READ][r] = got ? (double)read / got / 1e3 : 0;
		}
		{	/* One read per send: a server that reads each stamp alone. */
			int64_t t = 0, t1;
			int got = 0;

			for (b = 0; b < PER; b++) {
				union ctl c;
				struct iovec iov = { .iov_base = &c, .iov_len = LEN };
				struct msghdr h = {
					.msg_name = &to, .msg_namelen = sizeof(to),
					.msg_iov = &iov, .msg_iovlen = 1,
				};
				char pkt[LEN] = { 0x24 };

				iov.iov_base = pkt;
				put_ctl(&h, &c, W_STAMP_ID);
				if (sendmsg(srv, &h, MSG_DONTWAIT) != LEN) {
					perror("stampcost: send");
					return 1;
				}
				t1 = cpu_ns();
				got += read_stamps();
				t += cpu_ns() - t1;
			}
			drain_sink();
			v[W_READ1][r] = got ? (double)t / got / 1e3 : 0;
		}
	}
	for (w = 0; w < NWAYS; w++) {
		qsort(v[w], (size_t)rounds, sizeof(double), cmp);
		printf("%-32s %7.3f us [%.3f-%.3f]\n", names[w], v[w][rounds / 2],
		       v[w][rounds / 4], v[w][3 * rounds / 4]);
		free(v[w]);
	}
	close(srv);
	close(sink);
	return 0;
}
