/* SPDX-License-Identifier: ISC */
/*
 * tests/unit/frame.c - frame.c against frames the kernel's own stack sent
 * (tests/unit/frame_vectors.h, captured by frame_vectors.sh on a veth
 * between two namespaces: 10.99.0.1 02:00:00:00:00:01 -> 10.99.0.2
 * 02:00:00:00:00:02), and against each way a frame can be wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "frame.h"
#include "frame_vectors.h"

#define IP_A 0x0a630001u	/* 10.99.0.1 */
#define IP_B 0x0a630002u	/* 10.99.0.2 */
static const uint8_t MAC_A[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t MAC_B[6] = { 2, 0, 0, 0, 0, 2 };

static uint16_t be16(const unsigned char *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* The filter of host @to (A or B) listening on @port. */
static struct frame_filter filter_for(int to_b, uint16_t port)
{
	struct frame_filter f = { .port = port, .nip = 1 };

	memcpy(f.mac, to_b ? MAC_B : MAC_A, 6);
	f.ip[0] = to_b ? IP_B : IP_A;
	return f;
}

static void test_kernel_ntp_request(void **state)
{
	struct frame_filter f = filter_for(1, 123);
	struct frame_info fi;

	assert_int_equal(frame_check(vec_ntp_request, sizeof(vec_ntp_request), &f, &fi),
			 FRAME_OK);
	assert_memory_equal(fi.src.mac, MAC_A, 6);
	assert_int_equal(fi.src.ip, IP_A);
	assert_int_equal(fi.dst.ip, IP_B);
	assert_int_equal(fi.src.port, be16(vec_ntp_request + 34));
	assert_int_equal(fi.dst.port, 123);
	assert_int_equal(fi.payload_off, 42);
	assert_int_equal(fi.payload_len, 48);
	assert_int_equal(vec_ntp_request[42] & 7, 3);	/* client mode */
	assert_int_equal(fi.ttl, 64);
}

static void test_kernel_ntp_reply(void **state)
{
	struct frame_filter f = filter_for(0, be16(vec_ntp_reply + 36));
	struct frame_info fi;

	assert_int_equal(frame_check(vec_ntp_reply, sizeof(vec_ntp_reply), &f, &fi), FRAME_OK);
	assert_int_equal(fi.src.port, 123);
	assert_int_equal(fi.payload_len, 48);
	/* Any address: nip 0. */
	f.nip = 0;
	assert_int_equal(frame_check(vec_ntp_reply, sizeof(vec_ntp_reply), &f, &fi), FRAME_OK);
}

/*
 * Built from the fields the kernel chose (ID, ports, payload), our frame
 * is byte for byte the kernel's: headers, DF, TTL and both checksums.
 */
static void rebuild(const unsigned char *vec, size_t len, const uint8_t *smac,
		    const uint8_t *dmac, uint32_t sip, uint32_t dip)
{
	struct frame_addr src = { .ip = sip, .port = be16(vec + 34) };
	struct frame_addr dst = { .ip = dip, .port = be16(vec + 36) };
	unsigned char out[2048];
	size_t n;

	memcpy(src.mac, smac, 6);
	memcpy(dst.mac, dmac, 6);
	n = frame_build(out, sizeof(out), &src, &dst, be16(vec + 18), vec[22], vec + 42,
			len - 42, 0);
	assert_int_equal(n, len < FRAME_ETH_MIN ? FRAME_ETH_MIN : len);
	assert_memory_equal(out, vec, len);
}

static void test_build_equals_kernel(void **state)
{
	rebuild(vec_ntp_request, sizeof(vec_ntp_request), MAC_A, MAC_B, IP_A, IP_B);
	rebuild(vec_ntp_reply, sizeof(vec_ntp_reply), MAC_B, MAC_A, IP_B, IP_A);
	/* 47 bytes on the veth; we pad to 60 with zeros, the rest equal. */
	rebuild(vec_udp_small, sizeof(vec_udp_small), MAC_A, MAC_B, IP_A, IP_B);
}

static void test_kernel_small_udp(void **state)
{
	struct frame_filter f = filter_for(1, 4001);
	struct frame_info fi;
	unsigned char padded[FRAME_ETH_MIN] = { 0 };

	assert_int_equal(frame_check(vec_udp_small, sizeof(vec_udp_small), &f, &fi), FRAME_OK);
	assert_int_equal(fi.payload_len, 5);
	assert_memory_equal(vec_udp_small + fi.payload_off, "hello", 5);
	/* Ethernet padding after the IP datagram is not payload. */
	memcpy(padded, vec_udp_small, sizeof(vec_udp_small));
	assert_int_equal(frame_check(padded, sizeof(padded), &f, &fi), FRAME_OK);
	assert_int_equal(fi.payload_len, 5);
}

static void test_kernel_refusals(void **state)
{
	struct frame_filter f = filter_for(1, 4000);
	struct frame_filter fa = filter_for(0, 4000);
	struct frame_info fi;

	assert_int_equal(frame_check(vec_frag_first, sizeof(vec_frag_first), &f, &fi),
			 FRAME_FRAGMENT);
	assert_int_equal(frame_check(vec_frag_last, sizeof(vec_frag_last), &f, &fi),
			 FRAME_FRAGMENT);
	assert_int_equal(frame_check(vec_arp, sizeof(vec_arp), &fa, &fi), FRAME_ETHERTYPE);
	assert_int_equal(frame_check(vec_icmp_unreach, sizeof(vec_icmp_unreach), &fa, &fi),
			 FRAME_PROTO);
	/* The request is not for host A, nor for B's other addresses or ports. */
	assert_int_equal(frame_check(vec_ntp_request, sizeof(vec_ntp_request), &fa, &fi),
			 FRAME_DST_MAC);
	f.port = 124;
	assert_int_equal(frame_check(vec_ntp_request, sizeof(vec_ntp_request), &f, &fi),
			 FRAME_DST_PORT);
	f.port = 123;
	f.ip[0] = IP_B + 1;
	assert_int_equal(frame_check(vec_ntp_request, sizeof(vec_ntp_request), &f, &fi),
			 FRAME_DST_IP);
	f.ip[1] = IP_B;
	f.nip = 2;
	assert_int_equal(frame_check(vec_ntp_request, sizeof(vec_ntp_request), &f, &fi),
			 FRAME_OK);
}

/* Every truncation of a good frame is refused, never read past. */
static void test_truncated(void **state)
{
	struct frame_filter f = filter_for(1, 123);
	struct frame_info fi;
	enum frame_reason r;
	size_t n;

	for (n = 0; n < sizeof(vec_ntp_request); n++) {
		unsigned char *copy = test_malloc(n ? n : 1);

		memcpy(copy, vec_ntp_request, n);
		r = frame_check(copy, n, &f, &fi);
		if (n < 34)
			assert_int_equal(r, FRAME_SHORT);
		else
			assert_int_equal(r, FRAME_IP_LENGTH);
		test_free(copy);
	}
}

static void mutate_expect(size_t off, uint8_t xor_mask, int fix_ip, enum frame_reason want)
{
	struct frame_filter f = filter_for(1, 123);
	struct frame_info fi;
	unsigned char b[sizeof(vec_ntp_request)];

	memcpy(b, vec_ntp_request, sizeof(b));
	b[off] ^= xor_mask;
	if (fix_ip)
		frame_ip_csum_fill(b);
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), want);
}

static void test_mutations(void **state)
{
	mutate_expect(0, 0x01, 0, FRAME_DST_MAC);	/* multicast bit */
	mutate_expect(12, 0x80, 0, FRAME_ETHERTYPE);	/* 0x8800 */
	mutate_expect(14, 0x20, 0, FRAME_IP_VERSION);	/* version 6 */
	mutate_expect(14, 0x01, 0, FRAME_IP_IHL);	/* IHL 4 */
	mutate_expect(17, 0x80, 1, FRAME_IP_LENGTH);	/* total 204 > frame */
	mutate_expect(24, 0x01, 0, FRAME_IP_CSUM);	/* checksum itself */
	mutate_expect(26, 0x10, 0, FRAME_IP_CSUM);	/* source address */
	mutate_expect(20, 0x20, 1, FRAME_FRAGMENT);	/* MF */
	mutate_expect(21, 0x01, 1, FRAME_FRAGMENT);	/* offset 8 */
	mutate_expect(20, 0x40, 1, FRAME_OK);		/* DF cleared: fine */
	mutate_expect(23, 0x01, 1, FRAME_PROTO);	/* 16 */
	mutate_expect(39, 0x04, 0, FRAME_UDP_LENGTH);
	mutate_expect(40, 0x01, 0, FRAME_UDP_CSUM);
	mutate_expect(60, 0x80, 0, FRAME_UDP_CSUM);	/* a payload bit */
	mutate_expect(89, 0x01, 0, FRAME_UDP_CSUM);	/* the last byte */
	mutate_expect(34, 0x01, 0, FRAME_UDP_CSUM);	/* source port */
}

static void test_udp_csum_zero_means_none(void **state)
{
	struct frame_filter f = filter_for(1, 123);
	struct frame_info fi;
	unsigned char b[sizeof(vec_ntp_request)];

	memcpy(b, vec_ntp_request, sizeof(b));
	b[40] = b[41] = 0;
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), FRAME_OK);
	/* frame_build(FRAME_NO_UDP_CSUM) leaves it so; filling restores it. */
	frame_udp_csum_fill(b, sizeof(b));
	assert_memory_equal(b, vec_ntp_request, sizeof(b));
}

/* A checksum that computes to 0 goes on the wire as 0xffff (RFC 768). */
static void test_udp_csum_ffff(void **state)
{
	struct frame_addr s = { .mac = { 2, 0, 0, 0, 0, 1 }, .ip = IP_A, .port = 1000 };
	struct frame_addr d = { .mac = { 2, 0, 0, 0, 0, 2 }, .ip = IP_B, .port = 2000 };
	struct frame_filter f = filter_for(1, 2000);
	struct frame_info fi;
	unsigned char b[128], pl[2] = { 0, 0 };
	uint16_t c;
	size_t n;

	/* Choose the payload word so that the sum comes out as 0xffff. */
	n = frame_build(b, sizeof(b), &s, &d, 7, 0, pl, 2, 0);
	c = be16(b + 40);
	/* Adding ~c... to the payload makes the complemented sum 0. */
	pl[0] = (uint8_t)(c >> 8);
	pl[1] = (uint8_t)c;
	n = frame_build(b, sizeof(b), &s, &d, 7, 0, pl, 2, 0);
	assert_int_equal(be16(b + 40), 0xffff);
	assert_int_equal(frame_check(b, n, &f, &fi), FRAME_OK);
}

/*
 * With checksum offload the field holds the pseudo-header sum; a NIC that
 * sums the UDP header and payload onto it gets the kernel's checksum.
 */
static void test_udp_csum_partial(void **state)
{
	unsigned char b[sizeof(vec_ntp_request)];
	uint16_t want = be16(vec_ntp_request + 40);

	memcpy(b, vec_ntp_request, sizeof(b));
	frame_udp_csum_partial(b);
	assert_int_not_equal(be16(b + 40), want);
	assert_int_equal(frame_csum(b + 34, sizeof(b) - 34), want);
}

/*
 * A kernel socket over veth with tx offload on sends the field so: the
 * check accepts it only when the filter allows it (veth), says so in the
 * info, and still refuses any other wrong value.
 */
static void test_udp_csum_partial_received(void **state)
{
	struct frame_filter f = filter_for(1, 123);
	struct frame_info fi;
	unsigned char b[sizeof(vec_ntp_request)];

	memcpy(b, vec_ntp_request, sizeof(b));
	frame_udp_csum_partial(b);
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), FRAME_UDP_CSUM);
	f.udp_csum_partial = 1;
	fi.udp_csum_partial = 0;
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), FRAME_OK);
	assert_int_equal(fi.udp_csum_partial, 1);
	assert_int_equal(fi.payload_len, 48);
	/* One off, in the field or in what the pseudo-header covers. */
	b[41] ^= 0x01;
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), FRAME_UDP_CSUM);
	b[41] ^= 0x01;
	b[29] ^= 0x01;		/* the source address */
	frame_ip_csum_fill(b);
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), FRAME_UDP_CSUM);
	/* A complete checksum is not partial. */
	memcpy(b, vec_ntp_request, sizeof(b));
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), FRAME_OK);
	assert_int_equal(fi.udp_csum_partial, 0);
}

static void test_ip_options_accepted(void **state)
{
	struct frame_filter f = filter_for(1, 123);
	struct frame_info fi;
	unsigned char b[sizeof(vec_ntp_request) + 4];

	/* IHL 6 with a NOP/EOL option word: kernel sockets accept it. */
	memcpy(b, vec_ntp_request, 34);
	memcpy(b + 34, "\x01\x00\x00\x00", 4);
	memcpy(b + 38, vec_ntp_request + 34, sizeof(vec_ntp_request) - 34);
	b[14] = 0x46;
	b[17] += 4;
	b[24] = b[25] = 0;
	{
		uint16_t c = frame_csum(b + 14, 24);

		b[24] = (uint8_t)(c >> 8);
		b[25] = (uint8_t)c;
	}
	assert_int_equal(frame_check(b, sizeof(b), &f, &fi), FRAME_OK);
	assert_int_equal(fi.payload_off, 46);
	assert_int_equal(fi.payload_len, 48);
}

static void test_build_limits(void **state)
{
	struct frame_addr s = { .ip = IP_A, .port = 1 }, d = { .ip = IP_B, .port = 2 };
	unsigned char b[100];

	assert_int_equal(frame_build(b, 59, &s, &d, 0, 0, NULL, 0, 0), 0);
	assert_int_equal(frame_build(b, 60, &s, &d, 0, 0, NULL, 0, 0), 60);
	assert_int_equal(frame_build(b, sizeof(b), &s, &d, 0, 0, NULL, 59, 0), 0);
	assert_int_equal(frame_build(b, sizeof(b), &s, &d, 0, 0, NULL, 58, 0), 100);
	assert_int_equal(frame_build(b, SIZE_MAX, &s, &d, 0, 0, NULL, 65508, 0), 0);
	/* No checksums asked: both stay zero. */
	frame_build(b, sizeof(b), &s, &d, 0, 0, NULL, 10, FRAME_NO_IP_CSUM | FRAME_NO_UDP_CSUM);
	assert_int_equal(be16(b + 24), 0);
	assert_int_equal(be16(b + 40), 0);
}

/* xorshift64*: the same peers on every run, no libc state. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dull;
}

/* A field of @bits bits: often all zeros or all ones, the checksums' edges. */
static uint32_t rnd_field(int bits)
{
	uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1;

	switch (rnd() % 8) {
	case 0:
		return 0;
	case 1:
		return mask;
	default:
		return (uint32_t)rnd() & mask;
	}
}

static void rnd_addr(struct frame_addr *a)
{
	int i;

	for (i = 0; i < 6; i++)
		a->mac[i] = (uint8_t)rnd_field(8);
	a->ip = rnd_field(32);
	a->port = (uint16_t)rnd_field(16);
}

/*
 * A frame from the template is byte for byte frame_build()'s, over many
 * random senders and peers: the IPv4 checksum finished incrementally
 * (with the source address changed as RFC 1624 does, as a server on "*"
 * answers from the address each request was sent to), the UDP field left
 * as frame_udp_csum_partial() leaves it, and once completed by
 * frame_udp_csum_finish() after the payload changed (a stamp written
 * in), what frame_udp_csum_fill() and a full frame_build() give.
 */
static void test_tmpl_equals_build(void **state)
{
	static unsigned char pl[1600], ref[1700], got[1700], full[1700];
	struct frame_filter f = { .nip = 0 };
	struct frame_info fi;
	struct frame_tmpl t;
	struct frame_addr src, dst;
	size_t len, cap, nr, ng, i;
	uint16_t id;
	uint8_t ttl = 0;
	int k;

	for (k = 0; k < 200000; k++) {
		if (k % 16 == 0) {
			rnd_addr(&src);
			ttl = (uint8_t)rnd_field(8);
			frame_tmpl_init(&t, &src, ttl);
		}
		rnd_addr(&dst);
		src.ip = rnd() % 2 ? t.src_ip : rnd_field(32);
		id = (uint16_t)rnd_field(16);
		len = rnd() % 4 ? 48 + rnd() % 3 * 20 : rnd() % sizeof(pl);
		cap = rnd() % 64 ? sizeof(ref) : rnd() % (FRAME_HDR_LEN + len + 2);
		for (i = 0; i < len; i++)
			pl[i] = (uint8_t)rnd();
		memset(ref, 0xa5, sizeof(ref));
		memset(got, 0x5a, sizeof(got));	/* a byte left unwritten differs */
		nr = frame_build(ref, cap, &src, &dst, id, ttl, pl, len, FRAME_NO_UDP_CSUM);
		ng = frame_tmpl_build(got, cap, &t, src.ip, &dst, id, pl, len);
		assert_int_equal(ng, nr);
		if (!nr)
			continue;
		frame_udp_csum_partial(ref);
		assert_memory_equal(got, ref, nr);
		/* A stamp written into the payload, then the checksum completed. */
		for (i = 40; i < 48 && i < len; i++)
			got[FRAME_HDR_LEN + i] = ref[FRAME_HDR_LEN + i] = pl[i] = (uint8_t)rnd();
		frame_udp_csum_fill(ref, nr);
		frame_udp_csum_finish(got, ng);
		assert_memory_equal(got, ref, nr);
		assert_int_equal(frame_build(full, sizeof(full), &src, &dst, id, ttl, pl, len, 0),
				 nr);
		assert_memory_equal(got, full, nr);
		memcpy(f.mac, dst.mac, 6);
		f.port = dst.port;
		assert_int_equal(frame_check(got, ng, &f, &fi), FRAME_OK);
	}
}

/* Finished to a sum of 0, the template's frame carries 0xffff, as frame_build()'s. */
static void test_tmpl_csum_ffff(void **state)
{
	struct frame_addr s = { .mac = { 2, 0, 0, 0, 0, 1 }, .ip = IP_A, .port = 1000 };
	struct frame_addr d = { .mac = { 2, 0, 0, 0, 0, 2 }, .ip = IP_B, .port = 2000 };
	unsigned char b[128], r[128], pl[2] = { 0, 0 };
	struct frame_tmpl t;
	uint16_t c;
	size_t n;

	frame_tmpl_init(&t, &s, 0);
	frame_build(r, sizeof(r), &s, &d, 7, 0, pl, 2, 0);
	c = be16(r + 40);
	pl[0] = (uint8_t)(c >> 8);
	pl[1] = (uint8_t)c;
	n = frame_build(r, sizeof(r), &s, &d, 7, 0, pl, 2, 0);
	assert_int_equal(be16(r + 40), 0xffff);
	assert_int_equal(frame_tmpl_build(b, sizeof(b), &t, IP_A, &d, 7, pl, 2), n);
	frame_udp_csum_finish(b, n);
	assert_memory_equal(b, r, n);
}

static void test_reason_names_and_counters(void **state)
{
	struct frame_counters c = { { 0 } };
	char buf[512];
	int i, n;

	for (i = 0; i < FRAME_NREASONS; i++)
		assert_string_not_equal(frame_reason_name(i), "unknown");
	assert_string_equal(frame_reason_name(FRAME_NREASONS), "unknown");
	c.n[FRAME_OK] = 5;
	c.n[FRAME_UDP_CSUM] = 2;
	n = frame_counters_str(&c, buf, sizeof(buf));
	assert_int_equal((size_t)n, strlen(buf));
	assert_non_null(strstr(buf, "rx_ok=5 "));
	assert_non_null(strstr(buf, " rx_udp_csum=2"));
	assert_non_null(strstr(buf, " rx_fragment=0"));
	/* Truncated output is still terminated, and the full length returned. */
	assert_int_equal(frame_counters_str(&c, buf, 10), n);
	assert_int_equal(strlen(buf), 9);
}

static void test_mac_parse(void **state)
{
	uint8_t m[6] = { 9, 9, 9, 9, 9, 9 };

	assert_int_equal(frame_mac_parse("02:00:0a:FF:10:01", m), 0);
	assert_memory_equal(m, "\x02\x00\x0a\xff\x10\x01", 6);
	assert_int_equal(frame_mac_parse("02:00:0a:ff:10", m), -1);
	assert_int_equal(frame_mac_parse("02:00:0a:ff:10:01:", m), -1);
	assert_int_equal(frame_mac_parse("02-00-0a-ff-10-01", m), -1);
	assert_int_equal(frame_mac_parse("0x:00:0a:ff:10:01", m), -1);
	assert_int_equal(frame_mac_parse("", m), -1);
	assert_memory_equal(m, "\x02\x00\x0a\xff\x10\x01", 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_ntp_request),
		cmocka_unit_test(test_kernel_ntp_reply),
		cmocka_unit_test(test_build_equals_kernel),
		cmocka_unit_test(test_kernel_small_udp),
		cmocka_unit_test(test_kernel_refusals),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_udp_csum_zero_means_none),
		cmocka_unit_test(test_udp_csum_ffff),
		cmocka_unit_test(test_udp_csum_partial),
		cmocka_unit_test(test_udp_csum_partial_received),
		cmocka_unit_test(test_ip_options_accepted),
		cmocka_unit_test(test_build_limits),
		cmocka_unit_test(test_tmpl_equals_build),
		cmocka_unit_test(test_tmpl_csum_ffff),
		cmocka_unit_test(test_reason_names_and_counters),
		cmocka_unit_test(test_mac_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
