/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/pktq.c: frames of random lengths, put in and taken
 * out at random, come out whole, in order, with their times, across many
 * wraps of the ring; a full queue refuses and counts right; the bad sizes
 * are refused.  Held against a model FIFO of the same frames.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pktq.h"

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* The byte i of frame n: a frame that came out is the one that went in. */
static unsigned char byte_of(uint64_t n, size_t i)
{
	return (unsigned char)(n * 131 + i * 7 + (n >> 8));
}

static void test_random_fifo(void **state)
{
	enum { MAX = 1600, CAP = 3 * 1600 + 500, MODEL = 4096 };
	static uint32_t model_len[MODEL];
	uint64_t in = 0, out = 0, refused = 0, wraps = 0;
	struct pktq q;
	size_t last_tail = 0;

	(void)state;
	assert_int_equal(pktq_init(&q, CAP, MAX), 0);
	for (int step = 0; step < 200000; step++) {
		if (rnd() % 100 < 52) {
			size_t len = 1 + rnd() % MAX;
			unsigned char *p = pktq_reserve(&q, MAX);

			if (!p) {
				refused++;
				/* Refused only when less than a largest frame is free. */
				assert_true(q.frames > 0);
				continue;
			}
			for (size_t i = 0; i < len; i++)
				p[i] = byte_of(in, i);
			model_len[in % MODEL] = (uint32_t)len;
			pktq_commit(&q, (uint32_t)len, (int64_t)in, (int64_t)in * 2);
			in++;
		} else {
			struct pktq_frame *f = pktq_peek(&q);

			if (in == out) {
				assert_null(f);
				continue;
			}
			assert_non_null(f);
			assert_int_equal(f->rx, (int64_t)out);
			assert_int_equal(f->due, (int64_t)out * 2);
			assert_int_equal(f->len, model_len[out % MODEL]);
			for (size_t i = 0; i < f->len; i++)
				assert_int_equal(f->data[i], byte_of(out, i));
			if (q.tail < last_tail)
				wraps++;
			last_tail = q.tail;
			pktq_pop(&q);
			out++;
		}
		assert_int_equal(q.frames, in - out);
	}
	/* The run went round the ring many times and met a full queue. */
	assert_true(wraps > 1000);
	assert_true(refused > 0);
	pktq_free(&q);
}

static void test_full(void **state)
{
	struct pktq q;
	int n = 0;

	(void)state;
	assert_int_equal(pktq_init(&q, 4096, 1000), 0);
	while (pktq_reserve(&q, 1000)) {
		pktq_commit(&q, 1000, n, n);
		n++;
	}
	/* A frame of 1000 takes 1024 bytes with its header: 4096 hold four,
	   exactly, and then head == tail is full, not empty. */
	assert_int_equal(n, 4);
	assert_int_equal(q.frames, 4);
	assert_int_equal(q.bytes, 4000);
	pktq_pop(&q);
	assert_non_null(pktq_reserve(&q, 1000));
	pktq_free(&q);
}

static void test_bad_sizes(void **state)
{
	struct pktq q;

	(void)state;
	errno = 0;
	assert_int_equal(pktq_init(&q, 1000, 1000), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pktq_init(&q, 1 << 20, UINT32_MAX), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_fifo),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_bad_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
