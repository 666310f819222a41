/* SPDX-License-Identifier: ISC */
/*
 * ntp.h - the NTPv4 packet header (RFC 5905) and 64-bit NTP timestamps.
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |LI | VN  |Mode |    Stratum     |     Poll      |  Precision   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         Root Delay                            |
 * |                         Root Dispersion                       |
 * |                          Reference ID                         |
 * |                     Reference Timestamp (64)                  |
 * |                        Origin Timestamp (64)                  |
 * |                        Receive Timestamp (64)                 |
 * |                        Transmit Timestamp (64)                |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * .    Extension fields (RFC 7822) and a MAC may follow            .
 *
 * A timestamp is 32 bits of seconds since 1900-01-01 and 32 bits of
 * fraction.  The seconds wrap every 2^32 s (era 0 ends 2036-02-07); the
 * packet does not carry the era, so a timestamp is turned back into Unix
 * time relative to a pivot known to be close (the local clock), and the
 * nearest candidate is taken (RFC 5905 section 6).
 */
#ifndef NTPX_NTP_H
#define NTPX_NTP_H

#include <stddef.h>
#include <stdint.h>

#include "opt_units.h"

#define NTP_HEADER_LEN		48
#define NTP_UNIX_EPOCH		2208988800LL	/* 1970 - 1900, in seconds */

enum ntp_mode {
	NTP_MODE_SYMACTIVE = 1,
	NTP_MODE_SYMPASSIVE = 2,
	NTP_MODE_CLIENT = 3,
	NTP_MODE_SERVER = 4,
	NTP_MODE_BROADCAST = 5,
	NTP_MODE_CONTROL = 6,
	NTP_MODE_PRIVATE = 7,
};

enum ntp_leap {
	NTP_LEAP_NONE = 0,
	NTP_LEAP_INSERT = 1,
	NTP_LEAP_DELETE = 2,
	NTP_LEAP_ALARM = 3,	/* clock unsynchronised */
};

#define NTP_STRATUM_KOD		0	/* kiss-o'-death; refid is the code */
#define NTP_KISS_RATE		0x52415445u	/* "RATE": ask less often (RFC 5905 7.4) */
#define NTP_STRATUM_UNSYNC	16

/* RFC 5905 MAXPOLL: 2^17 s, the longest poll interval, in ns. */
#define NTP_MAXPOLL_NS		(131072LL * NTPX_NS_PER_SEC)

struct ntp_packet {
	uint8_t leap;		/* 0..3 */
	uint8_t version;	/* 0..7 */
	uint8_t mode;		/* 0..7 */
	uint8_t stratum;
	int8_t poll;		/* log2 s */
	int8_t precision;	/* log2 s */
	uint32_t root_delay;	/* NTP short format, 16.16 s */
	uint32_t root_disp;	/* NTP short format, 16.16 s */
	uint32_t refid;		/* host order; ASCII codes read big-endian */
	uint64_t ref;		/* NTP timestamps, 32.32 */
	uint64_t org;
	uint64_t rec;
	uint64_t xmt;
};

/*
 * Decodes a received datagram.  @len must be at least NTP_HEADER_LEN;
 * what follows the header (extension fields, a MAC) is left alone: the
 * decoder reads exactly the header and never past @len.
 * Returns 0, or -1 for a datagram shorter than a header.
 */
int ntp_decode(const void *buf, size_t len, struct ntp_packet *p);

/*
 * Checks what follows the header: nothing, extension fields (RFC 7822:
 * each a 16-bit type, a 16-bit length that counts the whole field, is a
 * multiple of 4 and at least 16), then optionally a MAC of 20 or 24 bytes.
 * Returns 0 when the datagram is well formed, -1 when a field runs past
 * the end or the trailer has no valid shape.
 */
int ntp_check_trailer(const void *buf, size_t len);

/* Writes the 48-byte header; fields are masked to their widths. */
void ntp_encode(const struct ntp_packet *p, void *buf);

/*
 * Unix nanoseconds to an NTP timestamp.  The fraction is the smallest one
 * that is not below the exact value, so that ntp_ts_to_ns() gives back the
 * same nanosecond for every input: frac = ceil(ns * 2^32 / 10^9).
 */
uint64_t ntp_ts_from_ns(int64_t unix_ns);

/*
 * An NTP timestamp to Unix nanoseconds (fraction truncated to the
 * nanosecond), in the era that puts it nearest to @pivot_ns.
 */
int64_t ntp_ts_to_ns(uint64_t ts, int64_t pivot_ns);

/*
 * Writes @unix_ns as the transmit timestamp of the NTP header at @buf (48
 * bytes at least), in place: what a transport writes into a request or
 * reply immediately before it goes.
 */
void ntp_put_xmt(void *buf, int64_t unix_ns);

/*
 * What a server's reply says about its clock (RFC 5905 sections 7.3, 7.4,
 * 8), judged on the header alone, in this order:
 *   KISS      stratum 0 and a kiss code in the reference ID: one to four
 *             printable ASCII characters (0x21..0x7e), zero-filled on the
 *             right ("RATE", "DENY", "RSTR", "INIT", ...); the
 *             timestamps carry nothing.  One exception: a code that asks
 *             nothing of the client (not RATE, DENY or RSTR) under leap 3
 *             is a server saying it is unsynchronised and why (ntpsec
 *             before its first sync: leap 3, stratum 0, "INIT"), which is
 *             UNSYNCED, as chronyd and ntpsec's own client take it;
 *   UNSYNCED  leap 3 (alarm), stratum 16 or above, or stratum 0 without a
 *             kiss code (OpenNTPD 6.2 while unsynchronised: leap 3,
 *             stratum 0, reference ID 0): the server answered, its
 *             timestamps are its own but its clock is not synchronised;
 *   BOGUS     a zero receive or transmit timestamp;
 *   OK        a reply to use.
 */
enum ntp_verdict {
	NTP_VERDICT_OK,
	NTP_VERDICT_KISS,
	NTP_VERDICT_UNSYNCED,
	NTP_VERDICT_BOGUS,
};

enum ntp_verdict ntp_judge(const struct ntp_packet *p);

/*
 * The kiss code of a stratum 0 reply into @code (NUL-terminated, up to 4
 * characters): returns 1, or 0 when @p is not a kiss-o'-death (another
 * stratum, or a reference ID that is no code) and @code is "".
 */
int ntp_kiss_code(const struct ntp_packet *p, char code[5]);

/*
 * A reference ID as a server announces it (RFC 5905 7.3: up to four
 * ASCII characters, left justified and zero filled) from @s, 1 to 4
 * printable ASCII characters (space included): 0 and *@refid set (host
 * order, as struct ntp_packet holds it), or -1 for anything else.
 */
int ntp_refid_parse(const char *s, uint32_t *refid);

/*
 * The poll interval after a RATE kiss (RFC 5905 7.4: the client reduces
 * its rate at each one), ns: twice @interval_ns and at least 2^@poll s
 * (the kiss's poll field, what the server asks for), at most
 * NTP_MAXPOLL_NS, and never below @interval_ns.
 */
int64_t ntp_backoff_ns(int64_t interval_ns, int8_t poll);

/* Signed NTP short format (16.16 seconds) from nanoseconds, saturating. */
uint32_t ntp_short_from_ns(int64_t ns);

#endif
