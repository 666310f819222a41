/* SPDX-License-Identifier: ISC */
/*
 * ntsq - test helper: NTS requests made wrong on purpose.  Runs NTS-KE
 * (lib/nts_tls.c), builds an NTS request as ntpprobe would
 * (lib/nts_client.c), spoils it as MODE says, sends it to the NTP server,
 * then a plain NTP request as a fence (as udpq does), and prints one line
 * per reply until the fence's:
 *
 *     ntsq KE-HOST KE-PORT CAFILE NTP-HOST NTP-PORT MODE
 *
 *   ok        the request as built: "reply ok"
 *   tamper    one bit of the authenticator's tag flipped
 *   truncate  the last extension field cut short by 4 bytes
 *   replay    the same request sent twice: the second reply is
 *             "reply bogus: no request of ours is waiting"
 *   nocookie  the cookie's field made an unknown type
 *   shortuid  the identifier cut to 16 bytes (an unknown field of 16
 *             after it keeps the length)
 *   placeholder  the second placeholder cut to 84 bytes (an unknown
 *             field after it), the request sealed again: only that
 *             length is wrong
 *   trailing  an ntpx field (lib/xleave.h) after the authenticator
 *   cookies   no NTP: one line per cookie NTS-KE gave, "cookie NONCE",
 *             its nonce (bytes 4 to 19) in hex
 *   wait=DUR  (before another MODE, "wait=2s,ok") hold the cookies
 *             DUR before using one (an expired cookie)
 *
 * Each reply is judged by the client's own check: "reply ok", "reply nak"
 * or "reply bogus: WHY"; then "fence LEN".  Exit 0 when the fence was
 * answered within 3 s, 1 otherwise, 2 on bad usage or a failed NTS-KE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nts_aead.h"
#include "nts_client.h"
#include "nts_ef.h"
#include "nts_tls.h"
#include "ntp.h"
#include "opt_units.h"
#include "util_private.h"
#include "xleave.h"
#include "fence.h"

/* Any reply but the fence's, judged by the client's own check. */
static void judge(const unsigned char *buf, size_t n, void *ctx)
{
	struct nts_client *c = ctx;
	const char *why = "";
	size_t covered;

	switch (nts_client_reply(c, buf, n, &covered, &why)) {
	case NTS_REPLY_OK:
		printf("reply ok\n");
		break;
	case NTS_REPLY_NAK:
		printf("reply nak\n");
		break;
	default:
		printf("reply bogus: %s\n", why);
	}
}

int main(int argc, char **argv)
{
	static struct nts_ke_msg resp;
	unsigned char pkt[2048];
	struct nts_keys keys;
	struct nts_client *c;
	struct nts_ef_view v;
	const char *mode, *why;
	size_t len = NTP_HEADER_LEN;
	char err[512];
	int fd, rc, sends = 1;

	if (argc != 7) {
		fprintf(stderr, "usage: ntsq KE-HOST KE-PORT CAFILE NTP-HOST NTP-PORT MODE\n");
		return 2;
	}
	mode = argv[6];
	if (nts_tls_client(argv[1], argv[2], argv[3], AF_UNSPEC, 5 * NTPX_NS_PER_SEC, &resp, &keys,
			   err, sizeof(err)) < 0) {
		fprintf(stderr, "ntsq: %s\n", err);
		return 2;
	}
	if (strcmp(mode, "cookies") == 0) {
		unsigned i, k;

		for (i = 0; i < resp.ncookies; i++) {
			printf("cookie ");
			for (k = 4; k < 20 && k < resp.cookie_len[i]; k++)
				printf("%02x", resp.cookie[i][k]);
			printf("\n");
		}
		return 0;
	}
	c = nts_client_new();
	if (!c || nts_client_set(c, &keys, &resp, err, sizeof(err)) < 0) {
		fprintf(stderr, "ntsq: %s\n", err);
		return 2;
	}
	if (strncmp(mode, "wait=", 5) == 0) {
		const char *comma = strchr(mode, ',');
		char dur[32];
		int64_t ns;
		struct timespec ts;

		if (!comma || (size_t)(comma - mode - 5) >= sizeof(dur)) {
			fprintf(stderr, "ntsq: bad mode '%s'\n", mode);
			return 2;
		}
		memcpy(dur, mode + 5, (size_t)(comma - mode - 5));
		dur[comma - mode - 5] = '\0';
		if (opt_duration(dur, 0, &ns)) {
			fprintf(stderr, "ntsq: bad duration '%s'\n", dur);
			return 2;
		}
		ts.tv_sec = ns / NTPX_NS_PER_SEC;
		ts.tv_nsec = ns % NTPX_NS_PER_SEC;
		/* The cookies' age is the point here, not a synchronisation. */
		nanosleep(&ts, NULL);
		mode = comma + 1;
	}
	memset(pkt, 0, NTP_HEADER_LEN);
	pkt[0] = 0x23;
	/* Placeholders come when the jar is short: spend all but two. */
	while (strcmp(mode, "placeholder") == 0 && nts_client_cookies(c) > 2) {
		size_t scratch = NTP_HEADER_LEN;

		if (nts_client_request(c, pkt, sizeof(pkt), &scratch) < 0)
			return 2;
	}
	if (getrandom(pkt + 40, 8, 0) != 8 || nts_client_request(c, pkt, sizeof(pkt), &len) < 0 ||
	    nts_ef_parse(pkt, len, &v, &why) < 0) {
		fprintf(stderr, "ntsq: cannot build the request\n");
		return 2;
	}
	if (strcmp(mode, "tamper") == 0) {
		pkt[len - 1] ^= 1;
	} else if (strcmp(mode, "truncate") == 0) {
		len -= 4;
	} else if (strcmp(mode, "replay") == 0) {
		sends = 2;
	} else if (strcmp(mode, "nocookie") == 0) {
		put16((unsigned char *)v.cookie[0].p - 4, 0x7f04);
	} else if (strcmp(mode, "shortuid") == 0) {
		put16(pkt + NTP_HEADER_LEN + 2, 20);
		put16(pkt + NTP_HEADER_LEN + 20, 0x7f00);
		put16(pkt + NTP_HEADER_LEN + 22, 16);
	} else if (strcmp(mode, "placeholder") == 0) {
		/* The second placeholder: after the identifier, the cookie
		   and the first placeholder, each 4 + the cookie's length. */
		unsigned char *second = pkt + NTP_HEADER_LEN + 36 + 2 * (4 + v.cookie[0].len);
		struct nts_aead *a = nts_aead_new(keys.c2s, sizeof(keys.c2s), err, sizeof(err));

		if (v.nplaceholders < 2 || !a) {
			fprintf(stderr, "ntsq: no second placeholder to spoil\n");
			return 2;
		}
		put16(second + 2, (uint16_t)(v.cookie[0].len - 12));
		put16(second + v.cookie[0].len - 12, 0x7f00);
		put16(second + v.cookie[0].len - 10, 16);
		nts_aead_seal(a, v.nonce.p, v.nonce.len, pkt, v.aad_len, NULL, 0, (void *)v.ct.p);
		nts_aead_free(a);
	} else if (strcmp(mode, "trailing") == 0) {
		struct xleave_ef none = { .have = 0 };

		xleave_ef_put(pkt + len, &none);
		len += XLEAVE_EF_LEN;
	} else if (strcmp(mode, "ok") != 0) {
		fprintf(stderr, "ntsq: bad mode '%s'\n", mode);
		return 2;
	}

	fd = fence_connect("ntsq", argv[4], argv[5]);
	if (fd < 0)
		return 2;
	while (sends--)
		if (send(fd, pkt, len, 0) != (ssize_t)len) {
			perror("ntsq: send");
			return 2;
		}
	rc = fence_wait("ntsq", fd, judge, c);
	nts_client_free(c);
	return rc;
}
