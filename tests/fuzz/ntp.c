/* SPDX-License-Identifier: ISC */
/* libFuzzer target: the NTP packet decoder, the reply judge and the
   trailer check, and the ntpx extension field finder (lib/xleave.c) on
   any input. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ntp.h"
#include "xleave.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ntp_packet p;
	unsigned char out[NTP_HEADER_LEN];

	/* Copy, so that a read past @size lands outside the fuzzer's buffer
	   where ASan sees it. */
	unsigned char *buf = size ? __builtin_alloca(size) : NULL;

	if (size)
		memcpy(buf, data, size);
	if (ntp_decode(buf, size, &p) == 0) {
		ntp_encode(&p, out);
		/* Whatever decodes encodes back to the same header. */
		if (memcmp(out, buf, NTP_HEADER_LEN) != 0)
			__builtin_trap();
		{
			char code[5];
			int kiss = ntp_kiss_code(&p, code);

			/* A kiss is a kiss code, and only at stratum 0; under
			   leap 3 only RATE, DENY and RSTR. */
			int acts = kiss && (strcmp(code, "RATE") == 0 || strcmp(code, "DENY") == 0 ||
					    strcmp(code, "RSTR") == 0);

			if ((ntp_judge(&p) == NTP_VERDICT_KISS) !=
			    (kiss && (acts || p.leap != NTP_LEAP_ALARM)) ||
			    (kiss && (p.stratum != 0 || !code[0] || code[4])) ||
			    (!kiss && code[0]))
				__builtin_trap();
		}
	}
	(void)ntp_check_trailer(buf, size);
	{
		struct xleave_ef e;

		/* Bounded by itself, checked trailer or not. */
		(void)xleave_ef_find(buf, size, &e);
	}
	if (size >= 16) {
		uint64_t ts, pivot;
		int64_t ns;

		memcpy(&ts, data, 8);
		memcpy(&pivot, data + 8, 8);
		/* Keep the pivot where int64 nanoseconds can hold it. */
		ns = ntp_ts_to_ns(ts, (int64_t)(pivot % (1ULL << 61)));
		(void)ns;
	}
	return 0;
}
