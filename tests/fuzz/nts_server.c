/* SPDX-License-Identifier: ISC */
/* libFuzzer target: a server's check of an NTS request
   (lib/nts_server.c) on any input, as ntpreflect --nts-cert runs it on
   every datagram with NTS fields, and its NAK and reply to what passes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nts_server.h"
#include "ntp.h"
#include "opt_units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct nts_server *srv;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nts_server_req req;
	const char *why = NULL;
	int64_t ns;
	char err[128];
	unsigned char out[4096];
	size_t len = NTP_HEADER_LEN;
	unsigned char *buf = size ? __builtin_alloca(size) : NULL;

	if (!srv && !(srv = nts_server_new(3600 * NTPX_NS_PER_SEC, err, sizeof(err))))
		__builtin_trap();
	if (size)
		memcpy(buf, data, size);
	switch (nts_server_check(srv, buf, size, &req, &why, &ns)) {
	case NTS_SERVER_OK:
		/* Only a request sealed with a cookie of ours gets here. */
		memset(out, 0, NTP_HEADER_LEN);
		(void)nts_server_reply(srv, &req, out, size < sizeof(out) ? size : sizeof(out), &len, &ns);
		break;
	case NTS_SERVER_NAK:
		if (!why || !why[0] || req.uid_len < NTS_UID_LEN || req.uid_len > sizeof(req.uid))
			__builtin_trap();
		memset(out, 0, NTP_HEADER_LEN);
		if (nts_server_nak(&req, out, sizeof(out), &len) < 0)
			__builtin_trap();
		break;
	default:
		if (!why || !why[0])
			__builtin_trap();
	}
	return 0;
}
