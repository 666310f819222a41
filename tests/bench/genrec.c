/* SPDX-License-Identifier: ISC */
/*
 * genrec - writes N synthetic exchange records (seed S) on stdout for the
 * offsetfit benchmark: a 25 ppm drift, about 100 us of delay with noise,
 * one timeout in a thousand.  The records obey the format exactly, so
 * offsetfit checks all of them.
 *
 *     genrec N [SEED]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "record.h"

static uint64_t state;

static uint32_t next(void)
{
	/* xorshift64*: fast, seeded, reproducible. */
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return (uint32_t)((state * 2685821657736338717ULL) >> 32);
}

int main(int argc, char **argv)
{
	uint64_t n, i;
	static char out[1 << 16];
	const int64_t base = 1764455329000000000;

	if (argc < 2) {
		fprintf(stderr, "usage: genrec N [SEED]\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	state = argc > 2 ? strtoull(argv[2], NULL, 10) | 1 : 1;
	setvbuf(stdout, out, _IOFBF, sizeof(out));
	record_write_header(stdout, "genrec", "udp://127.0.0.1:12300", "realtime",
			    RECORD_BASE_FIELDS);
	for (i = 0; i < n; i++) {
		struct record_exchange x = { .seq = i + 1, .status = RECORD_OK };
		int64_t t1 = base + (int64_t)i * 100000000;
		int64_t off = 3000 + (int64_t)i * 100000000 / 40000;	/* 25 ppm */
		int64_t up = 50000 + next() % 4000, down = 50000 + next() % 4000;
		char line[256];

		x.t[0] = t1;
		x.t[1] = t1 + up + off;
		x.t[2] = x.t[1] + 2000 + next() % 100;
		x.t[3] = x.t[2] - off + down;
		x.have = RECORD_HAVE_ALL;
		if (next() % 1000 == 0) {
			x.have = 1;
			x.status = RECORD_TIMEOUT;
		}
		record_format(line, sizeof(line), &x);
		fputs(line, stdout);
		putchar('\n');
	}
	return 0;
}
