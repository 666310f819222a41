/* SPDX-License-Identifier: ISC */
/*
 * frame.c - Ethernet II + IPv4 + UDP frames: build, checksum, check.
 *
 * Byte order is handled byte by byte (get16/put16) rather than through
 * packed structs, so nothing here depends on the alignment of the buffer a
 * port hands us.
 */
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "util_private.h"

#define ETH_P_IPV4	0x0800
#define IP_PROTO_UDP	17
#define IP_DF		0x4000
#define IP_MF		0x2000
#define IP_OFFMASK	0x1fff

/*
 * RFC 1071: the 16-bit one's complement sum, folded to 16 bits but not
 * complemented (0 only when every word is).  Summed as RFC 1071 section
 * 2 allows: in the machine's byte order (B), swapped once at the end,
 * 32 bits at a time into 64 with the carries folded once (C, D): since
 * 2^16 = 1 modulo 0xffff, a 32-bit word adds as its two halves, and a
 * byte swap, a multiplication by 2^8, maps the nonzero sums one to one.
 */
static uint32_t csum_add(uint32_t sum, const uint8_t *b, size_t len)
{
	uint64_t s = 0;
	uint32_t w;
	uint16_t h;
	uint8_t odd[2];

	for (; len >= 4; b += 4, len -= 4) {
		memcpy(&w, b, 4);
		s += w;
	}
	if (len >= 2) {
		memcpy(&h, b, 2);
		s += h;
		b += 2;
		len -= 2;
	}
	if (len) {			/* odd byte: padded with zero */
		odd[0] = b[0];
		odd[1] = 0;
		memcpy(&h, odd, 2);
		s += h;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	h = (uint16_t)s;
	s = sum + get16(&h);		/* the network order's sum */
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t frame_csum(const void *buf, size_t len)
{
	return csum_fold(csum_add(0, buf, len));
}

/* The RFC 768 pseudo-header's sum, not yet folded; @ip at the IPv4 header. */
static uint32_t pseudo_sum(const uint8_t *ip, size_t ulen)
{
	return csum_add(0, ip + 12, 8) + IP_PROTO_UDP + (uint32_t)ulen;
}

/*
 * The UDP checksum (RFC 768) over the pseudo-header (source, destination,
 * zero, protocol, UDP length), the UDP header and the payload.  @ip points
 * at the IPv4 header, @udp at the UDP header, @ulen is the UDP length.
 */
static uint16_t udp_csum(const uint8_t *ip, const uint8_t *udp, size_t ulen)
{
	return csum_fold(csum_add(pseudo_sum(ip, ulen), udp, ulen));
}

size_t frame_build(void *buf, size_t cap, const struct frame_addr *src,
		   const struct frame_addr *dst, uint16_t id, uint8_t ttl,
		   const void *payload, size_t len, int flags)
{
	uint8_t *b = buf, *ip = b + FRAME_ETH_LEN, *udp = ip + FRAME_IP_LEN;
	size_t flen = FRAME_HDR_LEN + len;

	if (len > 65535 - FRAME_IP_LEN - FRAME_UDP_LEN)
		return 0;
	if (flen < FRAME_ETH_MIN)
		flen = FRAME_ETH_MIN;
	if (flen > cap)
		return 0;

	memcpy(b, dst->mac, 6);
	memcpy(b + 6, src->mac, 6);
	put16(b + 12, ETH_P_IPV4);

	ip[0] = 0x45;			/* version 4, IHL 5 words */
	ip[1] = 0;			/* DSCP/ECN: best effort, as a socket */
	put16(ip + 2, (uint16_t)(FRAME_IP_LEN + FRAME_UDP_LEN + len));
	put16(ip + 4, id);
	put16(ip + 6, IP_DF);		/* no fragments, like PMTU discovery */
	ip[8] = ttl ? ttl : FRAME_TTL_DEFAULT;
	ip[9] = IP_PROTO_UDP;
	put16(ip + 10, 0);
	put32(ip + 12, src->ip);
	put32(ip + 16, dst->ip);

	put16(udp, src->port);
	put16(udp + 2, dst->port);
	put16(udp + 4, (uint16_t)(FRAME_UDP_LEN + len));
	put16(udp + 6, 0);
	if (payload && len)
		memmove(udp + FRAME_UDP_LEN, payload, len);
	if (flen > FRAME_HDR_LEN + len)
		memset(b + FRAME_HDR_LEN + len, 0, flen - FRAME_HDR_LEN - len);

	if (!(flags & FRAME_NO_IP_CSUM))
		frame_ip_csum_fill(buf);
	if (!(flags & FRAME_NO_UDP_CSUM))
		frame_udp_csum_fill(buf, flen);
	return flen;
}

/* The sum of the 16-bit halves of @v, as they lie in a header. */
static uint32_t sum32(uint32_t v)
{
	return (v >> 16) + (v & 0xffff);
}

void frame_tmpl_init(struct frame_tmpl *t, const struct frame_addr *src, uint8_t ttl)
{
	uint8_t *b = t->hdr, *ip = b + FRAME_ETH_LEN, *udp = ip + FRAME_IP_LEN;

	memset(t, 0, sizeof(*t));
	memcpy(b + 6, src->mac, 6);
	put16(b + 12, ETH_P_IPV4);
	ip[0] = 0x45;			/* as frame_build() */
	put16(ip + 6, IP_DF);
	ip[8] = ttl ? ttl : FRAME_TTL_DEFAULT;
	ip[9] = IP_PROTO_UDP;
	put32(ip + 12, src->ip);
	put16(udp, src->port);
	t->src_ip = src->ip;
	/* Every constant word; the length, ID and destination added per frame. */
	t->ip_sum = csum_add(0, ip, FRAME_IP_LEN);
	/* The pseudo-header's source and protocol (RFC 768); the UDP
	   length and destination added per frame. */
	t->ph_sum = sum32(src->ip) + IP_PROTO_UDP;
}

size_t frame_tmpl_build(void *buf, size_t cap, const struct frame_tmpl *t, uint32_t src_ip,
			const struct frame_addr *dst, uint16_t id, const void *payload,
			size_t len)
{
	uint8_t *b = buf, *ip = b + FRAME_ETH_LEN, *udp = ip + FRAME_IP_LEN;
	size_t flen = FRAME_HDR_LEN + len;
	uint32_t ipsum = t->ip_sum, phsum = t->ph_sum, d;
	uint16_t ulen = (uint16_t)(FRAME_UDP_LEN + len), tot = (uint16_t)(FRAME_IP_LEN + ulen);

	if (len > 65535 - FRAME_IP_LEN - FRAME_UDP_LEN)
		return 0;
	if (flen < FRAME_ETH_MIN)
		flen = FRAME_ETH_MIN;
	if (flen > cap)
		return 0;

	memcpy(b, t->hdr, FRAME_HDR_LEN);
	memcpy(b, dst->mac, 6);
	if (src_ip != t->src_ip) {
		/* RFC 1624 eqn. 3: the old address out (adding its one's
		   complement), the new one in. */
		d = (uint16_t)~(t->src_ip >> 16) + (uint16_t)~t->src_ip + sum32(src_ip);
		ipsum += d;
		phsum += d;
		put32(ip + 12, src_ip);
	}
	put16(ip + 2, tot);
	put16(ip + 4, id);
	put32(ip + 16, dst->ip);
	put16(udp + 2, dst->port);
	put16(udp + 4, ulen);
	d = sum32(dst->ip);
	put16(ip + 10, csum_fold(ipsum + tot + id + d));
	/* Left partial, as frame_udp_csum_partial(): folded, not complemented. */
	put16(udp + 6, (uint16_t)~csum_fold(phsum + d + ulen));
	if (payload && len)
		memmove(udp + FRAME_UDP_LEN, payload, len);
	if (flen > FRAME_HDR_LEN + len)
		memset(b + FRAME_HDR_LEN + len, 0, flen - FRAME_HDR_LEN - len);
	return flen;
}

void frame_udp_csum_finish(void *buf, size_t frame_len)
{
	uint8_t *udp = (uint8_t *)buf + FRAME_ETH_LEN + FRAME_IP_LEN;
	size_t ulen = get16(udp + 4);
	uint16_t c;

	if (frame_len < FRAME_HDR_LEN || ulen > frame_len - FRAME_ETH_LEN - FRAME_IP_LEN)
		return;			/* not a frame of ours; leave it */
	/* The field's pseudo-header sum is one more word of the sum. */
	c = csum_fold(csum_add(0, udp, ulen));
	put16(udp + 6, c ? c : 0xffff);	/* 0 on the wire means "none" */
}

void frame_ip_csum_fill(void *buf)
{
	uint8_t *ip = (uint8_t *)buf + FRAME_ETH_LEN;

	put16(ip + 10, 0);
	put16(ip + 10, frame_csum(ip, FRAME_IP_LEN));
}

void frame_udp_csum_fill(void *buf, size_t frame_len)
{
	uint8_t *ip = (uint8_t *)buf + FRAME_ETH_LEN, *udp = ip + FRAME_IP_LEN;
	size_t ulen = get16(udp + 4);
	uint16_t c;

	if (frame_len < FRAME_HDR_LEN || ulen > frame_len - FRAME_ETH_LEN - FRAME_IP_LEN)
		return;			/* not a frame of ours; leave it */
	put16(udp + 6, 0);
	c = udp_csum(ip, udp, ulen);
	put16(udp + 6, c ? c : 0xffff);	/* 0 on the wire means "none" */
}

void frame_udp_csum_partial(void *buf)
{
	uint8_t *ip = (uint8_t *)buf + FRAME_ETH_LEN, *udp = ip + FRAME_IP_LEN;

	/* folded, not complemented */
	put16(udp + 6, (uint16_t)~csum_fold(pseudo_sum(ip, get16(udp + 4))));
}

static const char *const reason_names[FRAME_NREASONS] = {
	[FRAME_OK] = "ok",
	[FRAME_SHORT] = "short",
	[FRAME_DST_MAC] = "dst_mac",
	[FRAME_ETHERTYPE] = "ethertype",
	[FRAME_IP_VERSION] = "ip_version",
	[FRAME_IP_IHL] = "ip_ihl",
	[FRAME_IP_LENGTH] = "ip_length",
	[FRAME_IP_CSUM] = "ip_csum",
	[FRAME_FRAGMENT] = "fragment",
	[FRAME_PROTO] = "proto",
	[FRAME_UDP_LENGTH] = "udp_length",
	[FRAME_DST_IP] = "dst_ip",
	[FRAME_DST_PORT] = "dst_port",
	[FRAME_UDP_CSUM] = "udp_csum",
};

const char *frame_reason_name(enum frame_reason r)
{
	if ((unsigned)r >= FRAME_NREASONS)
		return "unknown";
	return reason_names[r];
}

enum frame_reason frame_check(const void *buf, size_t len, const struct frame_filter *want,
			      struct frame_info *info)
{
	const uint8_t *b = buf, *ip, *udp;
	size_t ihl, tot, ulen;
	uint32_t dip;
	int i, partial = 0;

	if (len < FRAME_ETH_LEN)
		return FRAME_SHORT;
	if (memcmp(b, want->mac, 6) != 0)
		return FRAME_DST_MAC;
	if (get16(b + 12) != ETH_P_IPV4)
		return FRAME_ETHERTYPE;
	ip = b + FRAME_ETH_LEN;
	len -= FRAME_ETH_LEN;
	if (len < FRAME_IP_LEN)
		return FRAME_SHORT;
	if (ip[0] >> 4 != 4)
		return FRAME_IP_VERSION;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	if (ihl < FRAME_IP_LEN)
		return FRAME_IP_IHL;
	tot = get16(ip + 2);
	/* Beyond tot is Ethernet padding; a tot past the frame is a lie. */
	if (tot < ihl || tot > len)
		return FRAME_IP_LENGTH;
	if (frame_csum(ip, ihl) != 0)
		return FRAME_IP_CSUM;
	if (get16(ip + 6) & (IP_MF | IP_OFFMASK))
		return FRAME_FRAGMENT;
	if (ip[9] != IP_PROTO_UDP)
		return FRAME_PROTO;
	udp = ip + ihl;
	if (tot - ihl < FRAME_UDP_LEN)
		return FRAME_SHORT;
	ulen = get16(udp + 4);
	if (ulen != tot - ihl)
		return FRAME_UDP_LENGTH;
	dip = get32(ip + 16);
	if (want->nip) {
		for (i = 0; i < want->nip && i < 8; i++)
			if (want->ip[i] == dip)
				break;
		if (i == want->nip || i == 8)
			return FRAME_DST_IP;
	}
	if (get16(udp + 2) != want->port)
		return FRAME_DST_PORT;
	if (get16(udp + 6) != 0 && udp_csum(ip, udp, ulen) != 0) {
		/* Left partial by a sender on this host (see frame.h)? */
		uint16_t ps = (uint16_t)~csum_fold(pseudo_sum(ip, ulen));

		if (!want->udp_csum_partial || get16(udp + 6) != ps)
			return FRAME_UDP_CSUM;
		partial = 1;
	}

	memcpy(info->src.mac, b + 6, 6);
	memcpy(info->dst.mac, b, 6);
	info->src.ip = get32(ip + 12);
	info->dst.ip = dip;
	info->src.port = get16(udp);
	info->dst.port = get16(udp + 2);
	info->ttl = ip[8];
	info->id = get16(ip + 4);
	info->udp_csum_partial = partial;
	info->payload_off = FRAME_ETH_LEN + ihl + FRAME_UDP_LEN;
	info->payload_len = ulen - FRAME_UDP_LEN;
	return FRAME_OK;
}

int frame_counters_str(const struct frame_counters *c, char *buf, size_t len)
{
	size_t n = 0;
	int i, w;

	if (len)
		buf[0] = 0;
	for (i = 0; i < FRAME_NREASONS; i++) {
		w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "%srx_%s=%llu",
			     i ? " " : "", reason_names[i], (unsigned long long)c->n[i]);
		if (w < 0)
			return w;
		n += (size_t)w;
	}
	return (int)n;
}

int frame_mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t m[6];
	int i, hi, lo;

	for (i = 0; i < 6; i++, s += 3) {
		hi = hexval(s[0]);
		lo = hi < 0 ? -1 : hexval(s[1]);
		if (lo < 0 || s[2] != (i == 5 ? 0 : ':'))
			return -1;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(mac, m, 6);
	return 0;
}
