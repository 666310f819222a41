/* SPDX-License-Identifier: ISC */
/*
 * frame.h - Ethernet II + IPv4 + UDP frames, built and checked in the
 * program's own memory (no I/O).
 *
 * The userspace UDP transport (uudp.c) hands these frames to a frame port
 * that puts them on the wire unchanged, so on the wire they must be what a
 * kernel UDP socket would have sent: an Ethernet II header, an IPv4 header
 * without options (version 4, IHL 5, DF set, our own ID and TTL, a correct
 * header checksum), and a UDP header whose checksum covers the RFC 768
 * pseudo-header.
 *
 *   0        6        12   14                 34        42
 *   +--------+--------+----+------------------+---------+---------...
 *   | dst MAC| src MAC|0800| IPv4 (20 bytes)  | UDP (8) | payload
 *   +--------+--------+----+------------------+---------+---------...
 *
 * frame_check() is the receive side's gate: it refuses anything a kernel
 * UDP socket bound to the same address would not have delivered, and says
 * why with one of enum frame_reason, so that a port can count refusals by
 * cause.  It never reads beyond the length it is given.
 *
 * Addresses and ports in these structs are in host byte order; MACs are
 * the six bytes as on the wire.
 */
#ifndef NTPX_FRAME_H
#define NTPX_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_ETH_LEN		14
#define FRAME_IP_LEN		20	/* we send no IP options */
#define FRAME_UDP_LEN		8
#define FRAME_HDR_LEN		(FRAME_ETH_LEN + FRAME_IP_LEN + FRAME_UDP_LEN)
#define FRAME_ETH_MIN		60	/* without the FCS; shorter is padded */
#define FRAME_TTL_DEFAULT	64

struct frame_addr {
	uint8_t mac[6];
	uint32_t ip;		/* IPv4, host order */
	uint16_t port;		/* host order */
};

/* frame_build() flags */
#define FRAME_NO_UDP_CSUM	0x1	/* leave the UDP checksum 0 (the port
					   or the NIC fills it, or none) */
#define FRAME_NO_IP_CSUM	0x2	/* leave the IP header checksum 0 (the
					   NIC computes it: IBV_SEND_IP_CSUM) */

/*
 * Writes the Ethernet, IPv4 and UDP headers for @len bytes of payload from
 * @src to @dst into @buf, copies @payload (when not NULL; otherwise the
 * payload is expected in place at buf + FRAME_HDR_LEN), pads to the
 * Ethernet minimum with zeros, and fills the checksums unless @flags says
 * otherwise.  @id is the IPv4 identification, @ttl the time to live (0:
 * FRAME_TTL_DEFAULT).  Returns the frame length in bytes, or 0 when it
 * does not fit in @cap or the payload is too large for one datagram.
 */
size_t frame_build(void *buf, size_t cap, const struct frame_addr *src,
		   const struct frame_addr *dst, uint16_t id, uint8_t ttl,
		   const void *payload, size_t len, int flags);

/*
 * Recomputes the UDP checksum of a frame frame_build() made (after the
 * payload was changed in place, e.g. a transmit timestamp written into
 * it).  @frame_len as frame_build() returned it.
 */
void frame_udp_csum_fill(void *buf, size_t frame_len);

/*
 * For a NIC that completes the UDP checksum (IBV_SEND_IP_CSUM): writes
 * the folded sum of the pseudo-header alone into the UDP checksum field,
 * as Linux leaves it for CHECKSUM_PARTIAL, so that the result is right
 * whether the NIC seeds its sum with the field or recomputes it all.
 */
void frame_udp_csum_partial(void *buf);

/*
 * A sender's headers, built once per socket (a reply path's hot loop
 * then writes only what varies): the Ethernet type, the IPv4 version,
 * IHL, DF, TTL and protocol, our MAC and UDP port, the source address
 * the socket usually sends from, and the unfolded sums of the constant
 * words of the IPv4 header and of the UDP pseudo-header, so that the
 * checksums are finished incrementally (RFC 1071 section 2, RFC 1624).
 */
struct frame_tmpl {
	uint8_t hdr[FRAME_HDR_LEN];	/* the constant fields; the others 0 */
	uint32_t src_ip;	/* the source address in hdr, host order */
	uint32_t ip_sum;	/* IPv4 header's constant words, src_ip's included */
	uint32_t ph_sum;	/* pseudo-header's: src_ip and the protocol */
};

/* Fills @t for frames from @src with time to live @ttl (0: FRAME_TTL_DEFAULT). */
void frame_tmpl_init(struct frame_tmpl *t, const struct frame_addr *src, uint8_t ttl);

/*
 * The frame frame_build(buf, cap, src, dst, id, ttl, payload, len,
 * FRAME_NO_UDP_CSUM) followed by frame_udp_csum_partial() would make,
 * byte for byte, with @src (MAC, port, TTL) from @t and source address
 * @src_ip (when it is not t->src_ip, the sums are corrected as RFC 1624
 * does): the IPv4 checksum complete, the UDP checksum field holding the
 * pseudo-header's sum alone, for a NIC to complete or for
 * frame_udp_csum_finish().  Returns the frame length, or 0 as
 * frame_build().
 */
size_t frame_tmpl_build(void *buf, size_t cap, const struct frame_tmpl *t, uint32_t src_ip,
			const struct frame_addr *dst, uint16_t id, const void *payload,
			size_t len);

/*
 * Completes the UDP checksum of a frame whose checksum field holds the
 * pseudo-header's sum (frame_tmpl_build(), frame_udp_csum_partial()),
 * summing the UDP header and payload alone, as a NIC completes
 * CHECKSUM_PARTIAL.  The result is frame_udp_csum_fill()'s.
 */
void frame_udp_csum_finish(void *buf, size_t frame_len);

/* Recomputes the IPv4 header checksum of a frame frame_build() made. */
void frame_ip_csum_fill(void *buf);

/* RFC 1071 checksum of @len bytes, folded and complemented, network order. */
uint16_t frame_csum(const void *buf, size_t len);

/* Why frame_check() refused a frame.  Order matters: it is the check order. */
enum frame_reason {
	FRAME_OK = 0,
	FRAME_SHORT,		/* shorter than the headers it claims */
	FRAME_DST_MAC,		/* not our unicast MAC */
	FRAME_ETHERTYPE,	/* not IPv4 (ARP, VLAN, IPv6...) */
	FRAME_IP_VERSION,	/* version is not 4 */
	FRAME_IP_IHL,		/* header length below 20 bytes */
	FRAME_IP_LENGTH,	/* total length below the header or past the frame */
	FRAME_IP_CSUM,		/* IPv4 header checksum wrong */
	FRAME_FRAGMENT,		/* MF set or a fragment offset: never reassembled */
	FRAME_PROTO,		/* not UDP */
	FRAME_UDP_LENGTH,	/* UDP length disagrees with the IP length */
	FRAME_DST_IP,		/* not one of our addresses */
	FRAME_DST_PORT,		/* not our port */
	FRAME_UDP_CSUM,		/* UDP checksum wrong (0 means none: accepted;
				   a partial one only when the filter says) */
	FRAME_NREASONS
};

/* A short lowercase name for @r ("udp_csum"), for counters and logs. */
const char *frame_reason_name(enum frame_reason r);

/* What a frame must be addressed to, to be ours. */
struct frame_filter {
	uint8_t mac[6];		/* our MAC */
	uint16_t port;		/* our UDP port, host order */
	int nip;		/* 0: any destination address */
	uint32_t ip[8];		/* our IPv4 addresses, host order */
	/*
	 * Nonzero: also accept a UDP checksum left partial, the field
	 * holding the pseudo-header sum alone, as frame_udp_csum_partial()
	 * writes it.  That is what a kernel socket on this host sends when
	 * it leaves the checksum to a device that never completes it (veth
	 * with tx checksum offload on), and what the receiving kernel
	 * accepts without a check, since the frame never left memory.  Only
	 * for such devices: from a wire it is a sender's fault.
	 */
	int udp_csum_partial;
};

/* What frame_check() found in an accepted frame. */
struct frame_info {
	struct frame_addr src;	/* sender's MAC, IP and port */
	struct frame_addr dst;	/* ours, as the sender addressed it */
	uint8_t ttl;
	uint16_t id;
	int udp_csum_partial;	/* accepted with a partial UDP checksum */
	size_t payload_off;	/* UDP payload at buf + payload_off */
	size_t payload_len;	/* in bytes; Ethernet padding excluded */
};

/*
 * Checks the @len bytes at @buf as a frame for @want and fills @info.
 * Returns FRAME_OK or the first reason it is refused for (@info then is
 * unspecified).
 */
enum frame_reason frame_check(const void *buf, size_t len, const struct frame_filter *want,
			      struct frame_info *info);

/* Refusal counters, indexed by enum frame_reason (FRAME_OK: accepted). */
struct frame_counters {
	uint64_t n[FRAME_NREASONS];
};

/*
 * "rx_ok=5 rx_short=0 ..." into @buf (every reason, in order).  Returns
 * the length that snprintf would have written.
 */
int frame_counters_str(const struct frame_counters *c, char *buf, size_t len);

/* Parses "aa:bb:cc:dd:ee:ff" into @mac; 0 or -1. */
int frame_mac_parse(const char *s, uint8_t mac[6]);

#endif
