/* SPDX-License-Identifier: ISC */
/*
 * ntp.c - NTPv4 header codec and timestamp conversion.
 */
#include <string.h>

#include "ntp.h"
#include "util_private.h"
#include "opt_units.h"

int ntp_decode(const void *buf, size_t len, struct ntp_packet *p)
{
	const unsigned char *b = buf;

	if (len < NTP_HEADER_LEN)
		return -1;
	p->leap = b[0] >> 6;
	p->version = (b[0] >> 3) & 7;
	p->mode = b[0] & 7;
	p->stratum = b[1];
	p->poll = (int8_t)b[2];
	p->precision = (int8_t)b[3];
	p->root_delay = get32(b + 4);
	p->root_disp = get32(b + 8);
	p->refid = get32(b + 12);
	p->ref = get64(b + 16);
	p->org = get64(b + 24);
	p->rec = get64(b + 32);
	p->xmt = get64(b + 40);
	return 0;
}

int ntp_check_trailer(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t off = NTP_HEADER_LEN;

	if (len < NTP_HEADER_LEN || len % 4)
		return -1;
	/*
	 * RFC 7822 section 7.5: with no MAC the last field is at least 28
	 * bytes long, so anything longer than the largest MAC is a field.
	 */
	while (len - off > 24) {
		size_t flen = (size_t)b[off + 2] << 8 | b[off + 3];

		if (flen < 16 || flen % 4 || flen > len - off)
			return -1;
		off += flen;
	}
	if (len - off == 0 || len - off == 20 || len - off == 24)
		return 0;
	return -1;
}

void ntp_encode(const struct ntp_packet *p, void *buf)
{
	unsigned char *b = buf;

	b[0] = (uint8_t)((p->leap & 3) << 6 | (p->version & 7) << 3 | (p->mode & 7));
	b[1] = p->stratum;
	b[2] = (uint8_t)p->poll;
	b[3] = (uint8_t)p->precision;
	put32(b + 4, p->root_delay);
	put32(b + 8, p->root_disp);
	put32(b + 12, p->refid);
	put64(b + 16, p->ref);
	put64(b + 24, p->org);
	put64(b + 32, p->rec);
	put64(b + 40, p->xmt);
}

int ntp_kiss_code(const struct ntp_packet *p, char code[5])
{
	int i, n = 0;

	memset(code, 0, 5);
	if (p->stratum != NTP_STRATUM_KOD)
		return 0;
	/* "a four-character ASCII string, left justified and zero filled"
	   (RFC 5905 7.3): characters first, then only zeros. */
	for (i = 0; i < 4; i++) {
		unsigned c = (p->refid >> (24 - 8 * i)) & 0xff;

		if (c == 0)
			continue;
		if (c < 0x21 || c > 0x7e || n != i) {
			memset(code, 0, 5);
			return 0;
		}
		code[n++] = (char)c;
	}
	return n > 0;
}

int ntp_refid_parse(const char *s, uint32_t *refid)
{
	uint32_t v = 0;
	size_t i, n = strlen(s);

	if (n == 0 || n > 4)
		return -1;
	for (i = 0; i < 4; i++) {
		unsigned char ch = i < n ? (unsigned char)s[i] : 0;

		if (i < n && (ch < 0x20 || ch > 0x7e))
			return -1;
		v = v << 8 | ch;
	}
	*refid = v;
	return 0;
}

enum ntp_verdict ntp_judge(const struct ntp_packet *p)
{
	char code[5];

	if (ntp_kiss_code(p, code)) {
		int acts = strcmp(code, "RATE") == 0 || strcmp(code, "DENY") == 0 ||
			   strcmp(code, "RSTR") == 0;

		return acts || p->leap != NTP_LEAP_ALARM ? NTP_VERDICT_KISS :
							   NTP_VERDICT_UNSYNCED;
	}
	if (p->leap == NTP_LEAP_ALARM || p->stratum == NTP_STRATUM_KOD ||
	    p->stratum >= NTP_STRATUM_UNSYNC)
		return NTP_VERDICT_UNSYNCED;
	if (p->rec == 0 || p->xmt == 0)
		return NTP_VERDICT_BOGUS;
	return NTP_VERDICT_OK;
}

int64_t ntp_backoff_ns(int64_t interval_ns, int8_t poll)
{
	int64_t v, asked;

	if (interval_ns >= NTP_MAXPOLL_NS / 2)
		return interval_ns > NTP_MAXPOLL_NS ? interval_ns : NTP_MAXPOLL_NS;
	v = 2 * interval_ns;
	/* 2^poll s, poll clamped to what a 64-bit count of ns can hold */
	if (poll >= 17)
		return NTP_MAXPOLL_NS;
	asked = poll >= 0 ? ((int64_t)1 << poll) * NTPX_NS_PER_SEC :
			    poll > -30 ? NTPX_NS_PER_SEC >> -poll : 0;
	return asked > v ? asked : v;
}

/* Floor division for a possibly negative dividend. */
static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

uint64_t ntp_ts_from_ns(int64_t unix_ns)
{
	int64_t sec = floordiv(unix_ns, NTPX_NS_PER_SEC);
	uint64_t ns = (uint64_t)(unix_ns - sec * NTPX_NS_PER_SEC);	/* 0 .. 1e9-1 */
	/*
	 * ceil(ns * 2^32 / 1e9).  One nanosecond spans 4.29 fraction units,
	 * so the ceiling still lies inside [ns, ns+1) and truncating back
	 * gives ns exactly.  ns * 2^32 < 2^62: no overflow.
	 */
	uint64_t frac = ((ns << 32) + 999999999) / NTPX_NS_PER_SEC;

	/* The era is dropped here: the packet has no room for it. */
	return (uint64_t)(uint32_t)(sec + NTP_UNIX_EPOCH) << 32 | frac;
}

void ntp_put_xmt(void *buf, int64_t unix_ns)
{
	put64((unsigned char *)buf + 40, ntp_ts_from_ns(unix_ns));
}

int64_t ntp_ts_to_ns(uint64_t ts, int64_t pivot_ns)
{
	int64_t pivot_sec = floordiv(pivot_ns, NTPX_NS_PER_SEC) + NTP_UNIX_EPOCH;
	uint32_t sec = ts >> 32;
	uint64_t frac = (uint32_t)ts;
	/*
	 * The 32-bit difference between the timestamp's seconds and the
	 * pivot's, read as signed, is the nearest distance modulo 2^32: that
	 * places the timestamp within +-68 years of the pivot, in any era.
	 */
	int32_t diff = (int32_t)(sec - (uint32_t)pivot_sec);
	int64_t ntp_sec = pivot_sec + diff;

	return (ntp_sec - NTP_UNIX_EPOCH) * NTPX_NS_PER_SEC +
	       (int64_t)((frac * NTPX_NS_PER_SEC) >> 32);
}

uint32_t ntp_short_from_ns(int64_t ns)
{
	/* 16.16 seconds: 1 unit = 2^-16 s. */
	int64_t units;

	if (ns < 0)
		ns = 0;
	if (ns >= 65536LL * NTPX_NS_PER_SEC)
		return 0xffffffffu;
	units = (ns * 65536 + 999999999) / NTPX_NS_PER_SEC;
	return (uint32_t)units;
}
