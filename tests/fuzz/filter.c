/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: the clock filter driven by arbitrary event streams
 * (replies with any off2/delay, losses, corrections, any window), and the
 * discipline's parameter parser.  Invariants checked on every event: the
 * window never holds more than its size, trust stays in OpenNTPD's range,
 * the jitters are finite and non-negative, an update only from a valid
 * peer with a full window, and the best delay is the window's least.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "discipline.h"
#include "filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t take(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	int i;

	for (i = 0; i < 8 && *p < end; i++)
		v = (int64_t)((uint64_t)v << 8 | *(*p)++);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct discipline_params dp;
	struct filter f;
	struct filter_out o;
	char err[256], *s;

	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	discipline_defaults(&dp);
	if (discipline_parse(&dp, s, err, sizeof(err)) < 0 && strchr(err, '\n'))
		__builtin_trap();
	free(s);

	if (p == end)
		return 0;
	filter_init(&f, *p++ % 70);	/* also out of range: clamped */
	while (p < end) {
		uint8_t op = *p++;
		int64_t a = take(&p, end), b = take(&p, end);
		int i, min = -1;

		/* off2 and delay within what 64-bit ns records can hold */
		a /= 4;
		b /= 4;
		switch (op % 4) {
		case 0:
		case 1:
			filter_add(&f, a, b, &o);
			break;
		case 2:
			filter_miss(&f, &o);
			break;
		default:
			filter_correct(&f, a / 1024);
			filter_peek(&f, &o);
			break;
		}
		if (o.n < 0 || o.n > f.window || o.trust < 0 || o.trust > FILTER_TRUST_MAX)
			__builtin_trap();
		if (!(o.jitter >= 0) || !(o.djitter >= 0))
			__builtin_trap();
		if (o.update && (!o.valid || o.n != f.window))
			__builtin_trap();
		for (i = 0; i < f.window; i++)
			if (f.s[i].arrival && (min < 0 || f.s[i].delay < f.s[min].delay))
				min = i;
		if (o.n && !o.update && o.delay != f.s[min].delay)
			__builtin_trap();
		filter_format(err, sizeof(err), &o);
	}
	return 0;
}
