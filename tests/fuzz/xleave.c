/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the interleaved-mode server state (lib/xleave.c), as
 * ntpreflect keeps it, driven by whatever sequence of clients the input
 * names, in a table small enough that they evict each other, and the ntpx
 * extension field's parser on the input itself.
 *
 * Invariant: a client is only ever handed its own state.  The slot for a
 * key always holds that key, and its last reply's receive timestamp is
 * either 0 (fresh, or taken by another and made anew: a basic reply) or
 * the one this client was last given, never another client's.  Evictions
 * only grow.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xleave.h"

#define FUZZ_CLIENTS	64
#define FUZZ_SLOTS	8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t last[FUZZ_CLIENTS] = { 0 }, stamp = 0, ev = 0;
	struct xleave_table *x = xleave_table_new(FUZZ_SLOTS);
	struct xleave_ef e;
	size_t i;

	if (!x)
		return 0;
	(void)xleave_ef_find(data, size, &e);
	for (i = 0; i + 1 < size; i += 2) {
		/* Each client its own key of 1..16 bytes (7 id is distinct
		   mod 256 for every id, so no two keys are equal): keys of
		   different lengths share buckets, never an identity. */
		unsigned id = data[i] % FUZZ_CLIENTS;
		unsigned char key[16];
		size_t len = 1 + id % sizeof(key), k;
		struct xleave_client *c;

		for (k = 0; k < len; k++)
			key[k] = (unsigned char)(id * 7 + k);
		c = xleave_client_get(x, key, len);
		if (c->addrlen != len || memcmp(c->addr, key, len) != 0)
			__builtin_trap();
		if (c->rec_sent != 0 && c->rec_sent != last[id])
			__builtin_trap();
		if (xleave_table_evictions(x) < ev)
			__builtin_trap();
		ev = xleave_table_evictions(x);
		/* Odd bytes answer the request (a new reply's receive
		   timestamp); even ones leave the state as it was. */
		if (data[i + 1] & 1) {
			c->rec_sent = last[id] = ++stamp;
			c->last.have = data[i + 1];
		}
	}
	xleave_table_free(x);
	return 0;
}
