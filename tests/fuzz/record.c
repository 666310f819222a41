/* SPDX-License-Identifier: ISC */
/* libFuzzer target: the record reader and the integer field parsers. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct record_reader r;
	int rc, i;

	if (fd < 0)
		fd = memfd_create("fuzz", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET) != 0)
		return 0;
	if (record_reader_init(&r, fd, "fuzz"))
		return 0;
	while ((rc = record_next(&r)) == 1) {
		for (i = 0; i < r.nf; i++) {
			int64_t a, b;
			int ka = record_field_i64(&r, i, &a), kb = record_parse_i64(r.field[i], &b);

			/* The fast parser and the plain one agree on every field. */
			if (ka != kb || (ka == 1 && a != b))
				__builtin_trap();
			if (strlen(r.field[i]) != r.flen[i])
				__builtin_trap();
		}
		(void)record_col(&r, "t1");
		(void)record_status_parse(r.field[r.nf - 1]);
	}
	record_reader_free(&r);
	return 0;
}
