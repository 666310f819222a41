/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the ib transport that need no RDMA device: the rules a
 * received datagram must pass (built as struct ibv_wc values, as the CQ
 * hands them over), the header in front of it read as the key of the
 * server's address-handle cache (lib/ib_wire.c, pure), the epoch in the
 * immediate data, the endpoint's parameters, and the one-line failure
 * when the device asked for does not exist.  The data path is exercised
 * by tests/unit/ib_fabric.c on a mock and tests/hw/ib.t on hardware.
 */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ib_wire.h"
#include "ib_wire_private.h"
#include "ntp.h"
#include "peer.h"
#include "transport.h"
#include "util_private.h"

#define SERVER_QPN 0x1a2b

/* A good reply as a client's receive CQ returns it. */
static struct ibv_wc reply(void)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = IB_GRH_LEN + NTP_HEADER_LEN;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htobe32(0xcafe0001);
	wc.src_qp = SERVER_QPN;
	return wc;
}

static void test_client_good(void **state)
{
	struct ibv_wc wc = reply();

	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_OK);
	assert_int_equal(ib_wc_epoch(&wc), 0xcafe0001);
	/* Extension fields or a MAC behind the header are fine. */
	wc.byte_len += 24;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_OK);
}

static void test_short(void **state)
{
	struct ibv_wc wc = reply();

	wc.byte_len = IB_GRH_LEN + NTP_HEADER_LEN - 1;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_SHORT);
	wc.byte_len = 0;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_SHORT);
	/* The GRH alone, 40 bytes, is no datagram. */
	wc.byte_len = IB_GRH_LEN;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_SERVER, 0), IB_RECV_SHORT);
}

static void test_opcode(void **state)
{
	struct ibv_wc wc = reply();

	wc.opcode = IBV_WC_SEND;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_OPCODE);
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_SERVER, 0), IB_RECV_OPCODE);
}

static void test_status(void **state)
{
	struct ibv_wc wc = reply();

	wc.status = IBV_WC_LOC_LEN_ERR;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_WC_ERROR);
}

static void test_imm_rules(void **state)
{
	struct ibv_wc wc = reply();

	/* A client needs the epoch; a server takes requests without one. */
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_SERVER, 0), IB_RECV_IMM);
	wc.wc_flags = 0;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_NO_IMM);
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_SERVER, 0), IB_RECV_OK);
	/* A GRH does not count as immediate data. */
	wc.wc_flags = IBV_WC_GRH;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_NO_IMM);
}

static void test_stray(void **state)
{
	struct ibv_wc wc = reply();

	wc.src_qp = SERVER_QPN + 1;
	assert_int_equal(ib_check_recv(&wc, TRANSPORT_CLIENT, SERVER_QPN), IB_RECV_STRAY);
}

static void test_names(void **state)
{
	int v;

	for (v = 0; v < IB_RECV_NVERDICTS; v++)
		assert_non_null(ib_verdict_names[v]);
	assert_string_equal(ib_verdict_names[IB_RECV_SHORT], "short");
}

/* The epoch carried by replies drives lib/peer.c as lib/ib.c does. */
static void test_epoch_through_peer(void **state)
{
	struct ibv_wc wc = reply();
	struct peer p;

	peer_init(&p, NULL);
	peer_resolve_ok(&p, 0, 0xcafe0001);
	assert_int_equal(peer_reply(&p, 1, ib_wc_epoch(&wc)), PEER_OK);
	wc.imm_data = htobe32(0xcafe0002);	/* the server restarted */
	assert_int_equal(peer_reply(&p, 2, ib_wc_epoch(&wc)), PEER_LOST);
}

/* An IPv4 header of 20 bytes with TOS @tos, checksum right, at @ip. */
static void ipv4_header(unsigned char *ip, unsigned char tos)
{
	uint32_t sum = 0;
	int i;

	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[1] = tos;
	ip[3] = 60;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x09\x00\x02\x0a\x09\x00\x01", 8);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (unsigned char)(~sum >> 8);
	ip[11] = (unsigned char)~sum;
}

/*
 * Issue 15 (2): RoCE v2 over IPv4 leaves the first 20 bytes unwritten.
 * What they hold decides nothing unless it is not a 6; with a 6 there,
 * the IPv4 header is believed only with IHL 5 and a good checksum.
 */
static void test_grh_version(void **state)
{
	unsigned char g[IB_GRH_LEN];

	memset(g, 0, sizeof(g));
	ipv4_header(g + 20, 0);
	assert_int_equal(ib_grh_version(g), 4);		/* zeroes in front */
	memset(g, 0x60, 20);				/* a stale IPv6 header's */
	assert_int_equal(ib_grh_version(g), 4);
	memset(g, 0xab, 20);				/* any other garbage */
	assert_int_equal(ib_grh_version(g), 4);
	memset(g, 0x60, 20);
	g[20 + 10] ^= 1;				/* checksum wrong: a GRH */
	assert_int_equal(ib_grh_version(g), 6);
	ipv4_header(g + 20, 0);
	g[20] = 0x46;					/* options: not RoCE v2 */
	assert_int_equal(ib_grh_version(g), 6);
	/* A GRH / IPv6 header whose bytes 20..39 (the GIDs) are anything. */
	memset(g, 0, sizeof(g));
	g[0] = 0x60;
	g[6] = 0x1b;
	memset(g + 8, 0x45, 32);
	assert_int_equal(ib_grh_version(g), 6);
	/* Neither a 6 in front nor an IPv4 header behind. */
	memset(g, 0, sizeof(g));
	assert_int_equal(ib_grh_version(g), -1);
}

/* A receive completion that came with a header in front (IBV_WC_GRH). */
static struct ibv_wc with_grh(void)
{
	struct ibv_wc wc = reply();

	wc.wc_flags |= IBV_WC_GRH;
	wc.slid = 0x12;
	wc.sl = 3;
	wc.dlid_path_bits = 1;
	return wc;
}

/* ib_key_from_wc on @wc and @g into a key that held garbage before. */
static int key_of(const struct ibv_wc *wc, const unsigned char *g, struct ib_key *k)
{
	memset(k, 0xee, sizeof(*k));
	return ib_key_from_wc(wc, g, k);
}

/* @k is a key from a header, with these fields. */
static void assert_global_key(const struct ib_key *k, int type, int hop_limit, int tclass,
			      uint32_t flow_label, const unsigned char *sgid,
			      const unsigned char *dgid)
{
	assert_int_equal(k->global, 1);
	assert_int_equal(k->gid_type, type);
	assert_int_equal(k->hop_limit, hop_limit);
	assert_int_equal(k->tclass, tclass);
	assert_int_equal(k->flow_label, flow_label);
	assert_memory_equal(k->sgid, sgid, 16);
	assert_memory_equal(k->dgid, dgid, 16);
}

/* LID routed: the LID, SL and path bits; the 40 bytes are not read. */
static void test_key_lid(void **state)
{
	struct ibv_wc wc = with_grh();
	unsigned char g[IB_GRH_LEN];
	struct ib_key k, want;

	wc.wc_flags &= ~(unsigned)IBV_WC_GRH;
	memset(g, 0x60, sizeof(g));
	assert_int_equal(key_of(&wc, g, &k), 0);
	memset(&want, 0, sizeof(want));
	want.slid = 0x12;
	want.sl = 3;
	want.path_bits = 1;
	assert_memory_equal(&k, &want, sizeof(k));
}

/*
 * RoCE v2 over IPv4: the addresses become IPv4-mapped GIDs, the TTL the
 * hop limit, the TOS the traffic class; the 20 bytes in front decide
 * nothing, so one sender is one key whatever they held.
 */
static void test_key_ipv4(void **state)
{
	static const unsigned char sgid[16] = { [10] = 0xff, 0xff, 10, 9, 0, 2 };
	static const unsigned char dgid[16] = { [10] = 0xff, 0xff, 10, 9, 0, 1 };
	static const unsigned char front[] = { 0, 0x60, 0xab };
	struct ibv_wc wc = with_grh();
	unsigned char g[IB_GRH_LEN];
	struct ib_key k, first;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(front); i++) {
		memset(g, front[i], 20);
		ipv4_header(g + 20, 0x28);
		assert_int_equal(key_of(&wc, g, &k), 0);
		assert_global_key(&k, IBV_GID_TYPE_ROCE_V2, 64, 0x28, 0, sgid, dgid);
		assert_int_equal(k.slid, 0x12);
		if (i == 0)
			first = k;
		assert_memory_equal(&k, &first, sizeof(k));
	}
}

/* A GRH or an IPv6 header: its next header tells RoCE v2 from IB/RoCE v1. */
static void test_key_ipv6(void **state)
{
	struct ibv_wc wc = with_grh();
	unsigned char g[IB_GRH_LEN];
	struct ib_key k;
	int i;

	memset(g, 0, sizeof(g));
	g[0] = 0x6a;			/* version 6, traffic class 0xab... */
	g[1] = 0xbb;			/* ...and a flow label 0xb4567 */
	g[2] = 0x45;
	g[3] = 0x67;
	g[6] = 17;			/* UDP: RoCE v2 */
	g[7] = 5;
	for (i = 8; i < IB_GRH_LEN; i++)
		g[i] = (unsigned char)(0x10 + i);
	assert_int_equal(key_of(&wc, g, &k), 0);
	assert_global_key(&k, IBV_GID_TYPE_ROCE_V2, 5, 0xab, 0xb4567, g + 8, g + 24);
	g[6] = 0x1b;			/* the IB transport header: a GRH */
	assert_int_equal(key_of(&wc, g, &k), 0);
	assert_global_key(&k, IBV_GID_TYPE_ROCE_V1, 5, 0xab, 0xb4567, g + 8, g + 24);
	g[6] = 6;			/* TCP: no handle can be made from it */
	assert_int_equal(key_of(&wc, g, &k), -1);
	memset(g, 0, sizeof(g));	/* neither IPv6 nor IPv4 */
	assert_int_equal(key_of(&wc, g, &k), -1);
}

static void test_params(void **state)
{
	struct endpoint ep;
	char err[256];

	assert_int_equal(transport_parse_endpoint("ib://10.1.0.2:123?dev=mlx5_0&port=1&gid=3",
					&ep, err, sizeof(err)), 0);
	assert_string_equal(endpoint_param(&ep, "dev"), "mlx5_0");
	assert_int_equal(ep.port, 123);
	assert_int_equal(transport_parse_endpoint("ib://10.1.0.2:123?via=verbs", &ep, err,
						  sizeof(err)), -1);
	assert_non_null(strstr(err, "via"));
}

static void test_bad_values(void **state)
{
	static const char *const bad[] = {
		"ib://10.1.0.2:123?port=0", "ib://10.1.0.2:123?port=256",
		"ib://10.1.0.2:123?gid=x", "ib://10.1.0.2:123?qkey=-1",
	};
	struct endpoint ep;
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(transport_parse_endpoint(bad[i], &ep, err, sizeof(err)), 0);
		err[0] = 0;
		assert_null(transport_open(&ep, TRANSPORT_CLIENT, err, sizeof(err)));
		assert_non_null(strstr(err, "bad "));
	}
	assert_int_equal(transport_parse_endpoint("ib://*:123?gid=1", &ep, err, sizeof(err)), 0);
	assert_null(transport_open(&ep, TRANSPORT_SERVER, err, sizeof(err)));
	assert_non_null(strstr(err, "for clients"));
}

/* A device that exists nowhere: the one clear line, on any host. */
static void test_no_such_device(void **state)
{
	struct endpoint ep;
	char err[256];

	assert_int_equal(transport_parse_endpoint("ib://10.1.0.2:123?dev=ntpxnodev0", &ep, err,
					sizeof(err)), 0);
	assert_null(transport_open(&ep, TRANSPORT_CLIENT, err, sizeof(err)));
	assert_non_null(strstr(err, "no RDMA device"));
	assert_non_null(strstr(err, "asked for ntpxnodev0"));
	assert_non_null(strstr(err, "found "));
	assert_null(strchr(err, '\n'));
	assert_null(transport_open(&ep, TRANSPORT_SERVER, err, sizeof(err)));
	assert_non_null(strstr(err, "no RDMA device (asked for ntpxnodev0"));
}

/* Any device: fails only where there is none, and says "found none". */
static void test_no_device_at_all(void **state)
{
	struct endpoint ep;
	char err[256];

	if (access("/sys/class/infiniband", F_OK) == 0)
		skip();		/* this host has RDMA devices: tests/hw covers it */
	assert_int_equal(transport_parse_endpoint("ib://10.1.0.2:123", &ep, err, sizeof(err)), 0);
	assert_null(transport_open(&ep, TRANSPORT_CLIENT, err, sizeof(err)));
	assert_string_equal(err, "ib://10.1.0.2:123: no RDMA device (asked for any, found none)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_good),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_opcode),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_imm_rules),
		cmocka_unit_test(test_stray),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_epoch_through_peer),
		cmocka_unit_test(test_grh_version),
		cmocka_unit_test(test_key_lid),
		cmocka_unit_test(test_key_ipv4),
		cmocka_unit_test(test_key_ipv6),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_no_such_device),
		cmocka_unit_test(test_no_device_at_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
