/* SPDX-License-Identifier: ISC */
/* libFuzzer target: the NTS-KE record parser (lib/nts_ke.c) on any
   input; what parses builds back into a message that parses the same,
   and the client's and server's judges of it run without a crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nts_ke.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct nts_ke_msg m, again, resp;
static unsigned char out[NTS_KE_MSG_MAX + 2048];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	ssize_t n;
	/* Copy, so that a read past @size lands outside the fuzzer's buffer
	   where ASan sees it. */
	unsigned char *buf = size ? __builtin_alloca(size) : NULL;

	if (size)
		memcpy(buf, data, size);
	n = nts_ke_parse(buf, size, &m, &why);
	if (n < 0) {
		/* A refusal always says why. */
		if (!why || !why[0])
			__builtin_trap();
		return 0;
	}
	if (n == 0 || (size_t)n > size)
		return 0;
	(void)nts_ke_check_response(&m, &why);
	(void)nts_ke_answer(&m, &resp);
	n = nts_ke_build(out, sizeof(out), &m);
	if (n <= 0)
		__builtin_trap();
	if (nts_ke_parse(out, (size_t)n, &again, &why) != n)
		__builtin_trap();
	if (again.nprotos != m.nprotos || again.naeads != m.naeads || again.ncookies != m.ncookies ||
	    again.error != m.error || again.warning != m.warning || again.port != m.port ||
	    strcmp(again.server, m.server) != 0 ||
	    (m.nprotos > 0 && memcmp(again.protos, m.protos, sizeof(m.protos[0]) * (size_t)m.nprotos)) ||
	    (m.naeads > 0 && memcmp(again.aeads, m.aeads, sizeof(m.aeads[0]) * (size_t)m.naeads)))
		__builtin_trap();
	return 0;
}
