/* SPDX-License-Identifier: ISC */
/*
 * loadproto.c - loadgen's header and report, encoded and decoded
 * (loadproto.h).
 */
#include <string.h>

#include "loadproto.h"
#include "util_private.h"

void load_hdr_put(void *p, enum load_kind kind, uint32_t run, uint64_t seq)
{
	unsigned char *b = p;

	put32(b, kind == LOAD_FIN ? LOAD_MAGIC_FIN : LOAD_MAGIC_DATA);
	put32(b + 4, run);
	put64(b + 8, seq);
}

enum load_kind load_hdr_get(const void *p, size_t len, struct load_hdr *h)
{
	const unsigned char *b = p;
	uint32_t magic = len >= LOAD_HDR_LEN ? get32(b) : 0;

	if (magic == LOAD_MAGIC_DATA)
		h->kind = LOAD_DATA;
	else if (magic == LOAD_MAGIC_FIN)
		h->kind = LOAD_FIN;
	else
		return h->kind = LOAD_FOREIGN;
	h->run = get32(b + 4);
	h->seq = get64(b + 8);
	return h->kind;
}

void load_report_put(void *p, const struct load_report *r)
{
	unsigned char *b = p;

	memset(b, 0, LOAD_REPORT_LEN);
	put32(b, LOAD_MAGIC_REPORT);
	put32(b + 4, r->run);
	put64(b + 8, r->elapsed);
	put64(b + 16, r->bytes);
	put64(b + 24, r->packets);
	put64(b + 32, r->lost);
}

int load_report_get(const void *p, size_t len, struct load_report *r)
{
	const unsigned char *b = p;

	if (len < LOAD_REPORT_LEN || get32(b) != LOAD_MAGIC_REPORT)
		return -1;
	r->run = get32(b + 4);
	r->elapsed = get64(b + 8);
	r->bytes = get64(b + 16);
	r->packets = get64(b + 24);
	r->lost = get64(b + 32);
	return 0;
}
