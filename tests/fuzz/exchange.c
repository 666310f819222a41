/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: lib/exchange.c with offsetfit's kind of spec and
 * ntpstages' kind, on the same input.  Whatever a line holds, a record
 * that comes out obeys the format: an ok record has t1..t4, delay and
 * off2 reproduce them, and a column without a value is EXCHANGE_NONE.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exchange.h"
#include "util_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct exchange_col fit_cols[] = {
	{ "seq", EXCHANGE_SEQ, 0 },
	{ "t1", EXCHANGE_T1, 0 },
	{ "t2", EXCHANGE_T2, 0 },
	{ "t3", EXCHANGE_T3, 0 },
	{ "t4", EXCHANGE_T4, 0 },
	{ "delay", EXCHANGE_DELAY, 0 },
	{ "off2", EXCHANGE_OFF2, 0 },
	{ "status", EXCHANGE_STATUS, 0 },
	{ "true2", EXCHANGE_INT, EXCHANGE_OK_ONLY },
};

static const struct exchange_col stage_cols[] = {
	{ "seq", EXCHANGE_SEQ, 0 },
	{ "status", EXCHANGE_STATUS, 0 },
	{ "t1", EXCHANGE_T1, 0 },
	{ "t1k", EXCHANGE_INT, 0 },
	{ "t2", EXCHANGE_T2, 0 },
	{ "t3", EXCHANGE_T3, 0 },
	{ "t3k", EXCHANGE_INT, 0 },
	{ "t4", EXCHANGE_T4, 0 },
};

static const struct exchange_spec specs[] = {
	{ fit_cols, ARRAY_SIZE(fit_cols), "ok record without all of T1..T4" },
	{ stage_cols, ARRAY_SIZE(stage_cols), "an ok record without t1..t4" },
};

static void check(const struct exchange_reader *xr, const struct exchange_spec *spec)
{
	int i, k;

	for (k = 0; k < 4; k++)
		if (!(xr->x.have & 1u << k) && xr->x.t[k] != EXCHANGE_NONE)
			__builtin_trap();
	if (xr->x.status == RECORD_OK && xr->x.have != RECORD_HAVE_ALL)
		__builtin_trap();
	if (spec->cols == fit_cols && xr->x.have == RECORD_HAVE_ALL &&
	    (xr->delay != record_delay(xr->x.t) || xr->off2 != record_off2(xr->x.t)))
		__builtin_trap();
	for (i = 0; i < spec->ncols; i++) {
		if (spec->cols[i].role != EXCHANGE_INT)
			continue;
		/* No value is EXCHANGE_NONE (a value may be INT64_MIN too). */
		if (!(xr->vhave & 1u << i) && xr->v[i] != EXCHANGE_NONE)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct exchange_reader xr;
	size_t k;

	if (fd < 0)
		fd = memfd_create("fuzz", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	for (k = 0; k < ARRAY_SIZE(specs); k++) {
		if (lseek(fd, 0, SEEK_SET) != 0 || exchange_reader_init(&xr, fd, "fuzz", &specs[k]))
			return 0;
		while (exchange_next(&xr) == 1)
			check(&xr, &specs[k]);
		exchange_reader_free(&xr);
	}
	return 0;
}
