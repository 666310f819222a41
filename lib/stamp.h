/* SPDX-License-Identifier: ISC */
/*
 * stamp.h - the per-layer stamp columns of an exchange record
 * (doc/ntpx-record.5): t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h.
 *
 *   q  the datagram enters the qdisc (send only: SO_TIMESTAMPING TX_SCHED)
 *   k  the kernel at the driver boundary (TX_SOFTWARE, RX_SOFTWARE)
 *   h  the NIC or HCA
 *
 * A '-' where a layer has no stamp for that exchange.  A "#stamps" header
 * line names the source of each column:
 *
 *     #stamps t1q=so_timestamping:tx_sched t1k=so_timestamping:tx_software
 *             t1h=- t2k=server:ntpx-ef ... (one line)
 */
#ifndef NTPX_STAMP_H
#define NTPX_STAMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum stamp_col {
	STAMP_T1Q, STAMP_T1K, STAMP_T1H,
	STAMP_T2K, STAMP_T2H,
	STAMP_T3Q, STAMP_T3K, STAMP_T3H,
	STAMP_T4K, STAMP_T4H,
	STAMP_NCOLS
};

#define STAMP_FIELDS	"t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h"
#define STAMP_NONE	INT64_MIN

extern const char *const stamp_col_names[STAMP_NCOLS];

struct stamp_row {
	int64_t v[STAMP_NCOLS];		/* ns, or STAMP_NONE */
};

void stamp_row_clear(struct stamp_row *r);

/* " v v ..." (a leading space, '-' for STAMP_NONE); returns the length. */
int stamp_format(char *buf, size_t len, const struct stamp_row *r);

/* "#stamps NAME=SOURCE ..." with "-" for a NULL source; -1 on a write error. */
int stamp_write_sources(FILE *f, const char *const src[STAMP_NCOLS]);

#endif
