/* SPDX-License-Identifier: ISC */
/*
 * ntsforge - test helper: an NTS server (NTS-KE and NTP on 127.0.0.1)
 * that does one thing wrong on purpose, as a server with odd records or
 * an on-path attacker would, for ntpprobe --nts and loadgen --nts to
 * face:
 *
 *     ntsforge CERT KEY KE-PORT NTP-PORT MODE
 *
 * NTS-KE through lib/nts_tls.c, one session at a time, cookies and
 * replies through lib/nts_server.c: every reply it calls authentic is
 * (basic mode, stratum 1, its own clock).  MODE:
 *
 *   ok            nothing wrong
 *   ntpx-after    each reply with an ntpx field (lib/xleave.h) appended
 *                 after the authenticator, every stamp in it 424242 ns:
 *                 what an attacker on the path can add
 *   nak-first     before each authentic reply, an NTS NAK (the kiss
 *                 NTSN, the identifier echoed, nothing sealed), as an
 *                 attacker who saw the request can send
 *   nak-once      the first request gets an NTS NAK and nothing else,
 *                 every later one its authentic reply; and only the
 *                 first NTS-KE session is served (later ones are closed
 *                 at once)
 *   warning       the NTS-KE response carries a Warning record (code 7)
 *   port=N        the NTS-KE response names NTP port N
 *   server=NAME   ... and NTP server NAME
 *
 * One line on stderr per NTS-KE session that failed.  Runs until a
 * signal ends it.
 */
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock_read.h"
#include "nts_server.h"
#include "nts_tls.h"
#include "ntp.h"
#include "opt_units.h"
#include "xleave.h"

struct forge {
	const char *mode;
	struct nts_server *srv;
	int port;			/* port=N, else -1 */
	const char *server;		/* server=NAME, else NULL */
	unsigned sessions, requests;
};

static int ke_cookies(void *arg, const struct nts_keys *keys, struct nts_ke_msg *resp)
{
	struct forge *f = arg;

	if (nts_server_ke_cookies(f->srv, keys, resp) < 0)
		return -1;
	if (strcmp(f->mode, "warning") == 0)
		resp->warning = 7;
	if (f->port >= 0)
		resp->port = f->port;
	if (f->server)
		snprintf(resp->server, sizeof(resp->server), "%s", f->server);
	return 0;
}

static int listen_on(int type, const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || (type == SOCK_STREAM && listen(fd, 16))) {
		perror("ntsforge: bind");
		exit(2);
	}
	return fd;
}

/* The header of a reply to @q, received at @t2: basic mode, stratum 1
   (or the kiss NTSN). */
static void header(unsigned char *buf, const struct ntp_packet *q, int64_t t2, int nak)
{
	struct ntp_packet r = {
		.leap = nak ? NTP_LEAP_ALARM : NTP_LEAP_NONE,
		.version = q->version,
		.mode = NTP_MODE_SERVER,
		.stratum = nak ? NTP_STRATUM_KOD : 1,
		.poll = q->poll,
		.precision = -20,
		.org = q->xmt,
		.rec = ntp_ts_from_ns(t2),
		.xmt = ntp_ts_from_ns(clock_realtime_ns()),
	};

	ntp_refid_parse(nak ? "NTSN" : "FRGE", &r.refid);
	if (nak)
		r.rec = r.xmt = 0;
	ntp_encode(&r, buf);
}

static void serve_ntp(struct forge *f, int fd)
{
	unsigned char req[2048], out[2048];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct nts_server_req nreq;
	struct ntp_packet q;
	const char *why;
	int64_t ns, t2;
	ssize_t n = recvfrom(fd, req, sizeof(req), 0, (struct sockaddr *)&from, &fl);
	size_t len = NTP_HEADER_LEN;
	int first = f->requests++ == 0;
	enum nts_server_verdict v;

	t2 = clock_realtime_ns();
	if (n < NTP_HEADER_LEN || ntp_decode(req, (size_t)n, &q) < 0)
		return;
	v = nts_server_check(f->srv, req, (size_t)n, &nreq, &why, &ns);
	if (v == NTS_SERVER_DROP) {
		fprintf(stderr, "ntsforge: request dropped: %s\n", why);
		return;
	}
	if (v == NTS_SERVER_NAK || strcmp(f->mode, "nak-first") == 0 ||
	    (first && strcmp(f->mode, "nak-once") == 0)) {
		header(out, &q, t2, 1);
		if (nts_server_nak(&nreq, out, sizeof(out), &len) == 0)
			sendto(fd, out, len, 0, (struct sockaddr *)&from, fl);
		if (v == NTS_SERVER_NAK || strcmp(f->mode, "nak-first") != 0)
			return;
		/* nts_server_nak wiped the keys: check again for the reply. */
		nts_server_check(f->srv, req, (size_t)n, &nreq, &why, &ns);
	}
	len = NTP_HEADER_LEN;
	header(out, &q, t2, 0);
	if (nts_server_reply(f->srv, &nreq, out, (size_t)n, &len, &ns) < 0) {
		fprintf(stderr, "ntsforge: cannot seal a reply\n");
		return;
	}
	if (strcmp(f->mode, "ntpx-after") == 0) {
		struct xleave_ef e = { .have = (1u << XEF_N) - 1 };
		int i;

		for (i = 0; i < XEF_N; i++)
			e.at[i] = 424242;
		xleave_ef_put(out + len, &e);
		len += XLEAVE_EF_LEN;
	}
	sendto(fd, out, len, 0, (struct sockaddr *)&from, fl);
}

int main(int argc, char **argv)
{
	struct forge f = { .port = -1 };
	struct nts_tls_server *tls;
	struct pollfd pfd[2];
	char err[512];

	if (argc != 6) {
		fprintf(stderr, "usage: ntsforge CERT KEY KE-PORT NTP-PORT MODE\n");
		return 2;
	}
	f.mode = argv[5];
	if (strncmp(f.mode, "port=", 5) == 0)
		f.port = atoi(f.mode + 5);
	else if (strncmp(f.mode, "server=", 7) == 0)
		f.server = f.mode + 7;
	else if (strcmp(f.mode, "ok") && strcmp(f.mode, "ntpx-after") && strcmp(f.mode, "nak-first") &&
		 strcmp(f.mode, "nak-once") && strcmp(f.mode, "warning")) {
		fprintf(stderr, "ntsforge: bad mode '%s'\n", f.mode);
		return 2;
	}
	tls = nts_tls_server_new(argv[1], argv[2], err, sizeof(err));
	f.srv = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err));
	if (!tls || !f.srv) {
		fprintf(stderr, "ntsforge: %s\n", err);
		return 2;
	}
	pfd[0] = (struct pollfd){ .fd = listen_on(SOCK_STREAM, argv[3]), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = listen_on(SOCK_DGRAM, argv[4]), .events = POLLIN };
	for (;;) {
		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(pfd[0].fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0 && (f.sessions++ == 0 || strcmp(f.mode, "nak-once") != 0) &&
			    nts_tls_serve(tls, fd, 2 * NTPX_NS_PER_SEC, ke_cookies, &f, err, sizeof(err)) < 0)
				fprintf(stderr, "ntsforge: %s\n", err);
			if (fd >= 0)
				close(fd);
		}
		if (pfd[1].revents & POLLIN)
			serve_ntp(&f, pfd[1].fd);
	}
}
