/* SPDX-License-Identifier: ISC */
/*
 * xleave.c - the ntpx extension field and the server's bounded client
 * state for interleaved mode (xleave.h).
 */
#include <stdlib.h>
#include <string.h>

#include "xleave.h"
#include "util_private.h"

#define BUCKET	4

struct xleave_table {
	size_t nslots;			/* a power of two */
	uint64_t clock;			/* counts lookups: "seen" */
	uint64_t evictions;
	struct xleave_client *slot;
};

void xleave_ef_put(void *buf, const struct xleave_ef *e)
{
	unsigned char *b = buf;
	int i;

	memset(b, 0, XLEAVE_EF_LEN);
	b[0] = XLEAVE_EF_TYPE >> 8;
	b[1] = XLEAVE_EF_TYPE & 0xff;
	b[2] = 0;
	b[3] = XLEAVE_EF_LEN;
	memcpy(b + 4, "NTPX", 4);
	b[11] = (unsigned char)(e->have & ((1u << XEF_N) - 1));
	for (i = 0; i < XEF_N; i++)
		if (e->have & 1u << i)
			put64(b + 12 + 8 * i, (uint64_t)e->at[i]);
}

int xleave_ef_find(const void *pkt, size_t len, struct xleave_ef *e)
{
	const unsigned char *b = pkt;
	size_t off = 48;

	memset(e, 0, sizeof(*e));
	while (len >= off + 16) {
		size_t flen = (size_t)b[off + 2] << 8 | b[off + 3];
		unsigned type = (unsigned)b[off] << 8 | b[off + 1];
		int i;

		if (flen < 16 || flen % 4 || flen > len - off)
			return 0;
		if (type == XLEAVE_EF_TYPE && flen == XLEAVE_EF_LEN &&
		    memcmp(b + off + 4, "NTPX", 4) == 0) {
			e->have = b[off + 11] & ((1u << XEF_N) - 1);
			for (i = 0; i < XEF_N; i++)
				if (e->have & 1u << i)
					e->at[i] = (int64_t)get64(b + off + 12 + 8 * i);
			return 1;
		}
		off += flen;
	}
	return 0;
}

struct xleave_table *xleave_table_new(size_t nslots)
{
	struct xleave_table *x = calloc(1, sizeof(*x));
	size_t n = BUCKET;

	if (!x)
		return NULL;
	while (n < nslots && n < ((size_t)1 << 30))
		n <<= 1;
	x->nslots = n;
	x->slot = calloc(n, sizeof(*x->slot));
	if (!x->slot) {
		free(x);
		return NULL;
	}
	return x;
}

void xleave_table_free(struct xleave_table *x)
{
	if (!x)
		return;
	free(x->slot);
	free(x);
}

size_t xleave_table_slots(const struct xleave_table *x)
{
	return x->nslots;
}

uint64_t xleave_table_evictions(const struct xleave_table *x)
{
	return x->evictions;
}

/* FNV-1a of the address bytes. */
static uint64_t hash(const unsigned char *a, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ a[i]) * 0x100000001b3ULL;
	return h;
}

struct xleave_client *xleave_client_get(struct xleave_table *x, const void *addr, size_t len)
{
	struct xleave_client *b, *victim;
	size_t i;

	if (len > sizeof(b->addr))
		len = sizeof(b->addr);
	b = x->slot + (hash(addr, len) & (x->nslots - 1) & ~(size_t)(BUCKET - 1));
	x->clock++;
	victim = b;
	for (i = 0; i < BUCKET; i++) {
		if (b[i].seen && b[i].addrlen == len && memcmp(b[i].addr, addr, len) == 0) {
			b[i].seen = x->clock;
			return &b[i];
		}
		if (b[i].seen < victim->seen)
			victim = &b[i];
	}
	if (victim->seen)
		x->evictions++;
	memset(victim, 0, sizeof(*victim));
	victim->addrlen = (uint32_t)len;
	memcpy(victim->addr, addr, len);
	victim->seen = x->clock;
	return victim;
}
