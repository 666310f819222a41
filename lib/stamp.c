/* SPDX-License-Identifier: ISC */
/*
 * stamp.c - the per-layer stamp columns (stamp.h).
 */
#include <string.h>

#include "stamp.h"

const char *const stamp_col_names[STAMP_NCOLS] = {
	"t1q", "t1k", "t1h", "t2k", "t2h", "t3q", "t3k", "t3h", "t4k", "t4h",
};

void stamp_row_clear(struct stamp_row *r)
{
	int i;

	for (i = 0; i < STAMP_NCOLS; i++)
		r->v[i] = STAMP_NONE;
}

int stamp_format(char *buf, size_t len, const struct stamp_row *r)
{
	size_t n = 0;
	int i;

	if (len)
		buf[0] = 0;
	for (i = 0; i < STAMP_NCOLS && n < len; i++) {
		if (r->v[i] == STAMP_NONE)
			n += (size_t)snprintf(buf + n, len - n, " -");
		else
			n += (size_t)snprintf(buf + n, len - n, " %lld", (long long)r->v[i]);
	}
	return (int)(n < len ? n : len ? len - 1 : 0);
}

int stamp_write_sources(FILE *f, const char *const src[STAMP_NCOLS])
{
	int i;

	if (fputs("#stamps", f) == EOF)
		return -1;
	for (i = 0; i < STAMP_NCOLS; i++)
		if (fprintf(f, " %s=%s", stamp_col_names[i], src[i] ? src[i] : "-") < 0)
			return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}
