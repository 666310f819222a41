/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for dg_recv_wait() on the kernel UDP backend, on
 * loopback: it sleeps in the receive itself (lib/udp.c, udp_recv_block),
 * so the send stamps are read after the answer, never before it; it
 * never ends before its deadline, whether the receive's coarse timeout
 * or the precise poll after it ends the wait; a signal ends an
 * endless wait even when its handler asks SA_RESTART, and the wait
 * returns now and then for its caller to look at its flags; datagrams read
 * ahead (transport_recv_ahead) come out one by one, whole, each with its
 * own sender and receive stamp; a client's send stamps, numbered by the
 * kernel, stay with their datagrams after a send that failed; a server's
 * send asks the kernel for the send stamps of the layers it names
 * (TRANSPORT_STAMP_ONLY) and no others, and transport_tx_stamps() waits
 * for those alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "loss.h"
#include "opt_units.h"
#include "transport_private.h"
#include "support/dgram.h"

struct pair {
	struct transport *srv, *cli;
	struct clock *clk;
};

static int pair_open(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	struct endpoint sep, cep;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char err[256], url[64];

	assert_non_null(p);
	unsetenv(LOSS_ENV);
	p->clk = clock_open("realtime", err, sizeof(err));
	assert_non_null(p->clk);
	assert_int_equal(transport_parse_endpoint("udp://127.0.0.1:0", &sep, err, sizeof(err)), 0);
	p->srv = transport_open(&sep, TRANSPORT_SERVER, err, sizeof(err));
	assert_non_null(p->srv);
	assert_int_equal(getsockname(transport_fd(p->srv), (struct sockaddr *)&ss, &len), 0);
	snprintf(url, sizeof(url), "udp://127.0.0.1:%u",
		 ntohs(((struct sockaddr_in *)&ss)->sin_port));
	assert_int_equal(transport_parse_endpoint(url, &cep, err, sizeof(err)), 0);
	p->cli = transport_open(&cep, TRANSPORT_CLIENT, err, sizeof(err));
	assert_non_null(p->cli);
	assert_int_equal(transport_stamps_enable(p->cli, err, sizeof(err)), 0);
	assert_int_equal(transport_stamps_enable(p->srv, err, sizeof(err)), 0);
	*state = p;
	return 0;
}

static int pair_close(void **state)
{
	struct pair *p = *state;

	transport_close(p->cli);
	transport_close(p->srv);
	clock_close(p->clk);
	free(p);
	return 0;
}

/* Whether the ring holds send stamp layer @l of datagram @id yet. */
static int ring_has(const struct transport *t, uint32_t id, enum transport_layer l)
{
	unsigned i = id % TRANSPORT_TX_KEEP;

	return t->st.ring[i].id == id && (t->st.ring[i].got & 1u << l);
}

/*
 * An exchange: the request's send stamps are still in the kernel's
 * error queue when the answer has come (nothing read them inside the
 * exchange), and transport_tx_stamps() finds them there after it.
 */
static void test_stamps_after_answer(void **state)
{
	struct pair *p = *state;
	unsigned char q[48] = { 0x23 }, a[64];
	struct transport_addr from;
	struct transport_stamps ts;
	int64_t t1, t2, t3, t4;
	uint32_t id;

	assert_int_equal(dg_send(p->cli, q, sizeof(q), NULL, p->clk,
					TRANSPORT_STAMP_SEND, &t1), 0);
	id = dg_tx.tx_id;
	assert_int_equal(dg_recv_wait(p->srv, a, sizeof(a), &from, p->clk, &t2,
					     INT64_MAX, TRANSPORT_POLL_BLOCK), (ssize_t)sizeof(q));
	assert_int_equal(dg_send(p->srv, a, sizeof(q), &from, p->clk, 0, &t3), 0);
	assert_int_equal(dg_recv_wait(p->cli, a, sizeof(a), NULL, p->clk, &t4,
					     clock_monotonic_ns() + NTPX_NS_PER_SEC,
					     TRANSPORT_POLL_BLOCK), (ssize_t)sizeof(q));
	assert_true(t1 <= t2 && t2 <= t3 && t3 <= t4);
	assert_false(ring_has(p->cli, id, TRANSPORT_LAYER_K));
	assert_int_equal(transport_tx_stamps(p->cli, id, p->clk, &ts,
					     clock_monotonic_ns() + TRANSPORT_TX_WAIT_NS), 1);
	assert_true(ts.at[TRANSPORT_LAYER_K] >= t1 && ts.at[TRANSPORT_LAYER_K] <= t4);
	assert_true(ts.at[TRANSPORT_LAYER_Q] >= t1 && ts.at[TRANSPORT_LAYER_Q] <=
		    ts.at[TRANSPORT_LAYER_K]);
}

/*
 * The kernel's messages on @fd's error queue up to and including the
 * driver's send stamp (SCM_TSTAMP_SND, the last the kernel queues for a
 * datagram on loopback: the qdisc's, when asked, comes before it); -1
 * when none came within a second.
 */
static int errqueue_until_snd(int fd)
{
	int n = 0;

	for (;;) {
		char ctl[512];
		struct msghdr h = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct pollfd pfd = { .fd = fd, .events = 0 };
		struct cmsghdr *c;

		if (recvmsg(fd, &h, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno != EAGAIN || poll(&pfd, 1, 1000) != 1)
				return -1;
			continue;
		}
		n++;
		for (c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
			struct sock_extended_err ee;

			if (c->cmsg_level != SOL_IP || c->cmsg_type != IP_RECVERR)
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING && ee.ee_info == SCM_TSTAMP_SND)
				return n;
		}
	}
}

/*
 * TRANSPORT_STAMP_ONLY, on the server's socket, which asks for its send
 * stamps per datagram (a connected client's asks once, for every layer):
 * a reply that names t3k puts one message on the error queue, not two as
 * every layer does; transport_tx_stamps() has all it asked for without
 * t3q; a reply that names only layers the path does not offer (t3h on
 * loopback) is not stamped at all.
 */
static void test_stamp_only(void **state)
{
	const int k_only = TRANSPORT_STAMP_SEND | TRANSPORT_STAMP_ONLY(1u << TRANSPORT_LAYER_K);
	struct pair *p = *state;
	unsigned char q[48] = { 0x23 }, a[64];
	struct transport_addr from;
	struct transport_stamps ts;
	int fd = transport_fd(p->srv);
	int64_t t1, t2;
	uint32_t id;

	assert_int_equal(dg_send(p->cli, q, sizeof(q), NULL, p->clk, 0, &t1), 0);
	assert_int_equal(dg_recv_wait(p->srv, a, sizeof(a), &from, p->clk, &t2,
					     INT64_MAX, TRANSPORT_POLL_BLOCK), (ssize_t)sizeof(q));

	assert_int_equal(dg_send(p->srv, q, sizeof(q), &from, p->clk,
					TRANSPORT_STAMP_SEND, &t1), 0);
	assert_int_equal(errqueue_until_snd(fd), 2);
	assert_int_equal(dg_send(p->srv, q, sizeof(q), &from, p->clk, k_only, &t1), 0);
	assert_int_equal(errqueue_until_snd(fd), 1);

	assert_int_equal(dg_send(p->srv, q, sizeof(q), &from, p->clk, k_only, &t1), 0);
	id = dg_tx.tx_id;
	assert_int_equal(transport_tx_stamps(p->srv, id, p->clk, &ts,
					     clock_monotonic_ns() + TRANSPORT_TX_WAIT_NS), 1);
	assert_true(ts.at[TRANSPORT_LAYER_K] >= t1);
	assert_true(ts.at[TRANSPORT_LAYER_Q] == TRANSPORT_NO_STAMP);

	assert_int_equal(dg_send(p->srv, q, sizeof(q), &from, p->clk, TRANSPORT_STAMP_SEND |
					TRANSPORT_STAMP_ONLY(1u << TRANSPORT_LAYER_H), &t1), 0);
	assert_int_equal(dg_tx.tx_id, 0);	/* no id: unstamped */
	/* Nothing of its own on the queue: the next send's stamp is first. */
	assert_int_equal(dg_send(p->srv, q, sizeof(q), &from, p->clk, k_only, &t1), 0);
	assert_int_equal(errqueue_until_snd(fd), 1);
}

/*
 * No answer: the wait ends with -ETIMEDOUT, never before its deadline,
 * for a deadline long enough for a sleep in the receive (its timeout a
 * tick coarse) and for one so short that only the poll serves; with a
 * request's stamps waiting, which must not end the wait either.
 */
static void test_never_early(void **state)
{
	static const int64_t waits[] = { 200 * NTPX_NS_PER_MS, 30 * NTPX_NS_PER_MS, NTPX_NS_PER_MS };
	struct pair *p = *state;
	unsigned char q[48] = { 0x23 }, a[64];
	size_t i;

	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		int64_t t1, t4, deadline;

		assert_int_equal(dg_send(p->cli, q, sizeof(q), NULL, p->clk,
						TRANSPORT_STAMP_SEND, &t1), 0);
		deadline = clock_monotonic_ns() + waits[i];
		assert_int_equal(dg_recv_wait(p->cli, a, sizeof(a), NULL, p->clk, &t4,
						     deadline, TRANSPORT_POLL_BLOCK), -ETIMEDOUT);
		assert_true(clock_monotonic_ns() >= deadline);
	}
}

/* After a second of signals, a datagram: a wait that a signal cannot
   end then fails the test rather than hanging it. */
static volatile sig_atomic_t alarms;
static int kick_fd;
static struct sockaddr_storage kick_to;

static void on_alarm(int sig)
{
	(void)sig;
	if (++alarms == 50 && kick_fd >= 0)
		(void)sendto(kick_fd, "", 1, 0, (struct sockaddr *)&kick_to, sizeof(struct sockaddr_in));
}

/*
 * The server's wait without a deadline, under SIGALRM (handler on_alarm,
 * with @sa_flags) first after @first_us and then every @every_us (0:
 * once); what the wait returned.
 */
static ssize_t endless_wait_timed(struct pair *p, int sa_flags, long first_us, long every_us)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = sa_flags }, old;
	struct itimerval it = {
		.it_value = { .tv_sec = first_us / NTPX_US_PER_SEC,
			      .tv_usec = first_us % NTPX_US_PER_SEC },
		.it_interval = { .tv_sec = every_us / NTPX_US_PER_SEC,
				 .tv_usec = every_us % NTPX_US_PER_SEC },
	}, off = { 0 };
	unsigned char a[64];
	int64_t t;
	ssize_t rc;

	alarms = 0;
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	rc = dg_recv_wait(p->srv, a, sizeof(a), NULL, p->clk, &t, INT64_MAX,
				 TRANSPORT_POLL_BLOCK);
	assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
	return rc;
}

/*
 * A signal ends a wait without a deadline, even when its handler asks
 * SA_RESTART (a receive without a timeout would be restarted).  The
 * timer repeats, so one that fires before the wait began is followed by
 * one during it.
 */
static void test_signal_ends_wait(void **state)
{
	struct pair *p = *state;
	socklen_t len = sizeof(kick_to);

	kick_fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(kick_fd >= 0);
	assert_int_equal(getsockname(transport_fd(p->srv), (struct sockaddr *)&kick_to, &len), 0);
	assert_int_equal(endless_wait_timed(p, SA_RESTART, 20000, 20000), -EINTR);
	close(kick_fd);
}

/*
 * A wait without a deadline, nothing coming, returns -EAGAIN now and
 * then (transport.h), so that its caller can look at a flag a signal set
 * just before the wait.  A timer 5 s on turns a wait that never ends into
 * -EINTR, a failure, not a hang.
 */
static void test_endless_wait_returns(void **state)
{
	kick_fd = -1;
	assert_int_equal(endless_wait_timed(*state, 0, 5000000, 0), -EAGAIN);
}

/*
 * Read ahead: four datagrams waiting, from two senders, one too long;
 * one receive takes them all and they come out in order.
 */
static void test_read_ahead(void **state)
{
	struct pair *p = *state;
	struct transport *cli2;
	struct endpoint ep;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct transport_addr from[4];
	struct transport_stamps rx[4];
	unsigned char big[100] = { 0 }, a[64];
	int64_t t, user[4];
	char err[256], url[64];
	int i;

	assert_int_equal(getsockname(transport_fd(p->srv), (struct sockaddr *)&ss, &len), 0);
	snprintf(url, sizeof(url), "udp://127.0.0.1:%u",
		 ntohs(((struct sockaddr_in *)&ss)->sin_port));
	assert_int_equal(transport_parse_endpoint(url, &ep, err, sizeof(err)), 0);
	cli2 = transport_open(&ep, TRANSPORT_CLIENT, err, sizeof(err));
	assert_non_null(cli2);
	assert_int_equal(transport_recv_ahead(p->srv, 8, sizeof(a), err, sizeof(err)), 0);
	for (i = 0; i < 3; i++) {
		unsigned char q[8] = { (unsigned char)i };

		assert_int_equal(dg_send(i == 1 ? cli2 : p->cli, q, sizeof(q), NULL, p->clk,
						0, &t), 0);
	}
	big[0] = 3;
	assert_int_equal(dg_send(p->cli, big, sizeof(big), NULL, p->clk, 0, &t), 0);
	for (i = 0; i < 4; i++) {
		ssize_t n = dg_recv_wait(p->srv, a, sizeof(a), &from[i], p->clk, &user[i],
						clock_monotonic_ns() + NTPX_NS_PER_SEC,
						TRANSPORT_POLL_BLOCK);

		/* The last is longer than the buffer: its length says so. */
		assert_int_equal(n, i < 3 ? 8 : (ssize_t)sizeof(big));
		assert_int_equal(a[0], i);
		assert_int_equal(transport_pending(p->srv), 3 - i);
		rx[i] = dg_rx.rx;
		assert_true(rx[i].at[TRANSPORT_LAYER_K] != TRANSPORT_NO_STAMP);
		assert_true(rx[i].at[TRANSPORT_LAYER_K] <= user[i]);
	}
	for (i = 1; i < 4; i++) {
		/* Each its own receive stamp, one read for all. */
		assert_true(rx[i].at[TRANSPORT_LAYER_K] >= rx[i - 1].at[TRANSPORT_LAYER_K]);
		assert_true(user[i] == user[0]);
	}
	assert_int_equal(from[0].len, from[2].len);
	assert_memory_equal(from[0].data, from[2].data, from[0].len);
	assert_memory_not_equal(from[0].data, from[1].data, from[0].len);
	/* Nothing is left: the next wait times out. */
	assert_int_equal(dg_recv_wait(p->srv, a, sizeof(a), NULL, p->clk, &t,
					     clock_monotonic_ns() + NTPX_NS_PER_MS,
					     TRANSPORT_POLL_BLOCK), -ETIMEDOUT);
	transport_close(cli2);
}

/*
 * A client asks for its send stamps on the socket, and the kernel
 * numbers them.  A send that fails (here: the ICMP port unreachable that
 * the first request drew, reported on the next send) must not leave the
 * numbers one off: the next request's stamps are still its own.
 */
static void test_stamps_after_failed_send(void **state)
{
	struct pair *p = *state;
	struct transport *cli, *srv;
	struct endpoint ep;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	struct transport_stamps ts;
	struct pollfd pfd = { .events = 0 };
	unsigned char q[48] = { 0x23 }, a[64];
	int64_t t1, t, t4;
	char err[256], url[64];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	/* A port nobody listens on, for now. */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	snprintf(url, sizeof(url), "udp://127.0.0.1:%u", ntohs(sa.sin_port));
	assert_int_equal(transport_parse_endpoint(url, &ep, err, sizeof(err)), 0);
	cli = transport_open(&ep, TRANSPORT_CLIENT, err, sizeof(err));
	assert_non_null(cli);
	assert_int_equal(transport_stamps_enable(cli, err, sizeof(err)), 0);
	assert_int_equal(dg_send(cli, q, sizeof(q), NULL, p->clk, TRANSPORT_STAMP_SEND,
					&t1), 0);
	assert_int_equal(transport_tx_stamps(cli, dg_tx.tx_id, p->clk, &ts,
					     clock_monotonic_ns() + TRANSPORT_TX_WAIT_NS), 1);
	/* The error queue read, POLLERR is the refusal. */
	pfd.fd = transport_fd(cli);
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(dg_send(cli, q, sizeof(q), NULL, p->clk, TRANSPORT_STAMP_SEND,
					&t), -ECONNREFUSED);
	/* Now someone listens there. */
	assert_int_equal(transport_parse_endpoint(url, &ep, err, sizeof(err)), 0);
	srv = transport_open(&ep, TRANSPORT_SERVER, err, sizeof(err));
	assert_non_null(srv);
	assert_int_equal(dg_send(cli, q, sizeof(q), NULL, p->clk, TRANSPORT_STAMP_SEND,
					&t1), 0);
	assert_int_equal(dg_recv_wait(srv, a, sizeof(a), NULL, p->clk, &t4,
					     clock_monotonic_ns() + NTPX_NS_PER_SEC,
					     TRANSPORT_POLL_BLOCK), (ssize_t)sizeof(q));
	assert_int_equal(transport_tx_stamps(cli, dg_tx.tx_id, p->clk, &ts,
					     clock_monotonic_ns() + TRANSPORT_TX_WAIT_NS), 1);
	assert_true(ts.at[TRANSPORT_LAYER_K] >= t1 && ts.at[TRANSPORT_LAYER_K] <= t4);
	transport_close(srv);
	transport_close(cli);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stamps_after_answer, pair_open, pair_close),
		cmocka_unit_test_setup_teardown(test_never_early, pair_open, pair_close),
		cmocka_unit_test_setup_teardown(test_signal_ends_wait, pair_open, pair_close),
		cmocka_unit_test_setup_teardown(test_endless_wait_returns, pair_open, pair_close),
		cmocka_unit_test_setup_teardown(test_read_ahead, pair_open, pair_close),
		cmocka_unit_test_setup_teardown(test_stamps_after_failed_send, pair_open, pair_close),
		cmocka_unit_test_setup_teardown(test_stamp_only, pair_open, pair_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
