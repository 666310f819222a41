/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for what a bulk sender asks of a transport
 * (transport_rcvbuf_set, transport_payload_max): the kernel UDP backend
 * answers on loopback with what the kernel says, and a backend without
 * the operations refuses with -ENOTSUP and one line naming its scheme.
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
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loss.h"
#include "transport_private.h"

static struct transport *udp_client(struct transport **srv)
{
	struct endpoint sep, cep;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct transport *cli;
	char err[256], url[64];

	unsetenv(LOSS_ENV);
	assert_int_equal(transport_parse_endpoint("udp://127.0.0.1:0", &sep, err, sizeof(err)), 0);
	*srv = transport_open(&sep, TRANSPORT_SERVER, err, sizeof(err));
	assert_non_null(*srv);
	assert_int_equal(getsockname(transport_fd(*srv), (struct sockaddr *)&ss, &len), 0);
	snprintf(url, sizeof(url), "udp://127.0.0.1:%u", ntohs(sin->sin_port));
	assert_int_equal(transport_parse_endpoint(url, &cep, err, sizeof(err)), 0);
	cli = transport_open(&cep, TRANSPORT_CLIENT, err, sizeof(err));
	assert_non_null(cli);
	return cli;
}

static void test_udp_answers(void **state)
{
	struct transport *srv, *cli = udp_client(&srv);
	char err[256] = "";
	size_t n = 0;
	int lo_mtu = 0, got = 0, rmem_max = 0;
	socklen_t len = sizeof(got);
	FILE *f;

	(void)state;
	f = fopen("/sys/class/net/lo/mtu", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &lo_mtu), 1);
	fclose(f);
	assert_int_equal(transport_payload_max(cli, &n, err, sizeof(err)), 0);
	/* The path MTU is the device's, at most an IPv4 packet's 65535 bytes,
	   less the IPv4 and UDP headers. */
	assert_int_equal(n, (size_t)(lo_mtu < 65535 ? lo_mtu : 65535) - 28);

	f = fopen("/proc/sys/net/core/rmem_max", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &rmem_max), 1);
	fclose(f);
	assert_int_equal(transport_rcvbuf_set(srv, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(getsockopt(transport_fd(srv), SOL_SOCKET, SO_RCVBUF, &got, &len), 0);
	/* Root (CAP_NET_ADMIN) forces the size past rmem_max; others get
	   rmem_max at most.  The kernel reports twice what it was asked. */
	assert_true(got >= 2 * (geteuid() == 0 || rmem_max >= 1 << 20 ? 1 << 20 : rmem_max));
	transport_close(cli);
	transport_close(srv);
}

/* A backend without the operations, as uudp and ib are. */
static const struct transport_ops bare_ops = { .scheme = "bare" };

static void test_refused(void **state)
{
	struct transport t = { .ops = &bare_ops, .fd = -1 };
	char err[256] = "";
	size_t n = 7;

	(void)state;
	assert_int_equal(transport_payload_max(&t, &n, err, sizeof(err)), -ENOTSUP);
	assert_int_equal(n, 7);
	assert_string_equal(err, "bare://: cannot tell the path's largest payload");
	assert_int_equal(transport_rcvbuf_set(&t, 1 << 20, err, sizeof(err)), -ENOTSUP);
	assert_string_equal(err, "bare://: no socket receive buffer to size");
}

static void test_backends_say(void **state)
{
	(void)state;
	/* The table's other backends keep no kernel socket: they refuse. */
	assert_null(uudp_transport_ops.rcvbuf_set);
	assert_null(uudp_transport_ops.payload_max);
	assert_null(ib_transport_ops.rcvbuf_set);
	assert_null(ib_transport_ops.payload_max);
	assert_non_null(udp_transport_ops.rcvbuf_set);
	assert_non_null(udp_transport_ops.payload_max);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_answers),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_backends_say),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
