/* SPDX-License-Identifier: ISC */
/*
 * xleave.h - interleaved client/server mode (RFC 9769) as ntpreflect and
 * ntpprobe speak it, after chrony's implementation:
 *
 *   client request n:  org = the receive timestamp of reply n-1,
 *                      rec = a nonce, xmt = a nonce (never equal)
 *   server:            interleaved when it holds state for the client's
 *                      address whose last reply carried exactly that org;
 *                      then reply org = request rec, rec = its receive
 *                      stamp of request n, xmt = the best transmit stamp
 *                      (kernel, else user) of reply n-1.  Anything else
 *                      gets a basic reply (org = request xmt).
 *
 * The ntpx extension field carries every server-side stamp of the
 * exchange whose transmit stamp the reply holds (t2 t2k t2h t3 t3q t3k t3h), so
 * that ntpprobe --xleave can fill its columns.  A client that wants it
 * sends the field zeroed; the reply is then as long as the request, never
 * longer.  Type 0xF5E7 (in the range RFC 7822 leaves unassigned), 68
 * bytes: type, length, "NTPX", a bit per present stamp, seven stamps in
 * integer ns since 1970 (big-endian, two's complement): t2 t2k t3 t3q
 * t3k t2h t3h.
 *
 * The server's state (struct xleave_table) is one slot per client host
 * (its address without the port, as chrony keys its client log) in a table of fixed size, four slots to a bucket as chrony's
 * client log keeps them.  At the bound a new client takes the slot of the
 * least recently seen client of its bucket; that client's next request
 * then gets a basic reply, and its state is rebuilt from it.
 */
#ifndef NTPX_XLEAVE_H
#define NTPX_XLEAVE_H

#include <stddef.h>
#include <stdint.h>

#define XLEAVE_EF_TYPE		0xF5E7
#define XLEAVE_EF_LEN		68

enum xleave_ef_stamp { XEF_T2, XEF_T2K, XEF_T3, XEF_T3Q, XEF_T3K, XEF_T2H, XEF_T3H, XEF_N };

struct xleave_ef {
	int64_t at[XEF_N];		/* ns on the server's clock */
	unsigned have;			/* bit i: at[i] present */
};

/* Writes the field (XLEAVE_EF_LEN bytes) at @buf. */
void xleave_ef_put(void *buf, const struct xleave_ef *e);

/*
 * Finds the ntpx field among the extension fields of the NTP packet @pkt
 * of @len bytes (already checked by ntp_check_trailer()).  Returns 1 with
 * *e filled, 0 when it has none.
 */
int xleave_ef_find(const void *pkt, size_t len, struct xleave_ef *e);

struct xleave_client {
	uint32_t addrlen;
	unsigned char addr[124];	/* the client's key (transport_dgram's key) */
	uint64_t seen;			/* when last seen: the table's counter */
	uint64_t rec_sent;		/* the receive timestamp of our last reply */
	uint32_t tx_id;			/* that reply's transport id */
	int tx_wanted;			/* its send stamps are still to be read */
	struct xleave_ef last;		/* that exchange's stamps */
};

struct xleave_table;

/* A table of @nslots (rounded up to a power of two, at least 4); NULL when out of memory. */
struct xleave_table *xleave_table_new(size_t nslots);
void xleave_table_free(struct xleave_table *x);
size_t xleave_table_slots(const struct xleave_table *x);
/* Clients whose slot was taken by another. */
uint64_t xleave_table_evictions(const struct xleave_table *x);

/*
 * The slot of the client whose key is @addr (@len bytes), made if none: a fresh one
 * has rec_sent 0 (no reply yet), so its request gets a basic reply.
 */
struct xleave_client *xleave_client_get(struct xleave_table *x, const void *addr, size_t len);

#endif
