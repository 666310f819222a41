/* SPDX-License-Identifier: ISC */
/*
 * tests/fuzz/frame.c - libFuzzer target for frame_check(): any bytes, any
 * length, never a read past the end; an accepted frame's payload lies
 * inside the input, and a frame rebuilt from what was accepted is
 * accepted again with the same addresses and payload, and a complete
 * checksum; rebuilt from a template of its sender (frame_tmpl_build(),
 * then frame_udp_csum_finish()) it is the same bytes.  Half the inputs
 * are checked as on veth, where a partial UDP checksum is accepted too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_filter f = { .port = 123, .nip = 0 };
	struct frame_info fi, fi2;
	struct frame_counters c = { { 0 } };
	enum frame_reason r;
	struct frame_tmpl t;
	static uint8_t out[65536 + 64], out2[65536 + 64];
	uint8_t *copy;
	size_t n;

	/* An exact-size copy, so that ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 6)
		memcpy(f.mac, copy, 6);	/* often ours, to reach deeper checks */
	f.udp_csum_partial = size & 1;
	r = frame_check(copy, size, &f, &fi);
	c.n[r]++;
	if (r == FRAME_OK) {
		if (fi.payload_off + fi.payload_len > size)
			abort();
		n = frame_build(out, sizeof(out), &fi.src, &fi.dst, fi.id, fi.ttl,
				copy + fi.payload_off, fi.payload_len, 0);
		if (!n || frame_check(out, n, &f, &fi2) != FRAME_OK)
			abort();
		if (fi2.payload_len != fi.payload_len ||
		    memcmp(out + fi2.payload_off, copy + fi.payload_off, fi.payload_len) ||
		    fi2.src.ip != fi.src.ip || fi2.src.port != fi.src.port ||
		    fi2.udp_csum_partial)
			abort();
		/* From a template whose address is not the source's half the time. */
		fi2.src = fi.src;
		fi2.src.ip ^= (uint32_t)(size & 2) << 7;
		frame_tmpl_init(&t, &fi2.src, fi.ttl);
		if (frame_tmpl_build(out2, sizeof(out2), &t, fi.src.ip, &fi.dst, fi.id,
				     copy + fi.payload_off, fi.payload_len) != n)
			abort();
		frame_udp_csum_finish(out2, n);
		if (memcmp(out, out2, n))
			abort();
	}
	free(copy);
	return 0;
}
