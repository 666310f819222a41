/* SPDX-License-Identifier: ISC */
/*
 * xdp_own.c - port_xdp.c's AF_XDP socket with TX metadata, made without
 * libxdp (xdp_own_private.h): the umem registered with tx_metadata_len
 * and XDP_UMEM_TX_METADATA_LEN (Documentation/networking/
 * xsk-tx-metadata.rst), the rings mapped as libxdp maps them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock_read.h"
#include "missing.h"
#include "opt_units.h"
#include "xdp_own_private.h"

_Static_assert(sizeof(struct xsk_tx_metadata) <= PORT_XDP_TXMD_LEN, "TX metadata room");

void xdp_own_close(struct xdp_own *o)
{
	int i;

	for (i = 0; i < 4; i++)
		if (o->ring_map[i]) {
			munmap(o->ring_map[i], o->ring_len[i]);
			o->ring_map[i] = NULL;
		}
	if (o->fd >= 0) {
		close(o->fd);
		o->fd = -1;
	}
}

/*
 * Maps ring @i of the socket (PORT_XDP_RING entries of @esize bytes) and
 * fills libxdp's description of it at @ring (a struct xsk_ring_prod or
 * xsk_ring_cons: the two are the same), as libxdp would.
 */
static int xdp_own_ring(struct xdp_own *o, int i, const struct xdp_ring_offset *ro,
			uint64_t pgoff, size_t esize, void *ring, int prod)
{
	struct xsk_ring_prod rr, *r = &rr;
	void *m;

	o->ring_len[i] = ro->desc + PORT_XDP_RING * esize;
	m = mmap(NULL, o->ring_len[i], PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 o->fd, (off_t)pgoff);
	if (m == MAP_FAILED)
		return -1;
	o->ring_map[i] = m;
	memset(r, 0, sizeof(*r));
	r->mask = PORT_XDP_RING - 1;
	r->size = PORT_XDP_RING;
	r->producer = (void *)((char *)m + ro->producer);
	r->consumer = (void *)((char *)m + ro->consumer);
	r->ring = (char *)m + ro->desc;
	r->flags = (void *)((char *)m + ro->flags);
	r->cached_prod = *r->producer;
	r->cached_cons = *r->consumer + (prod ? PORT_XDP_RING : 0);
	memcpy(ring, r, sizeof(*r));
	return 0;
}

/*
 * The rings of the socket: fill, completion and receive, and transmit
 * when @tx is given.  0, or -1 with @err.
 */
static int xdp_own_rings(struct xdp_own *o, const char *dev, struct xsk_ring_prod *fq,
			 struct xsk_ring_cons *cq, struct xsk_ring_cons *rx,
			 struct xsk_ring_prod *tx, char *err, size_t errlen)
{
	struct xdp_mmap_offsets off;
	socklen_t olen = sizeof(off);
	int n = PORT_XDP_RING;

	if (setsockopt(o->fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) ||
	    setsockopt(o->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) ||
	    setsockopt(o->fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) ||
	    (tx && setsockopt(o->fd, SOL_XDP, XDP_TX_RING, &n, sizeof(n))) ||
	    getsockopt(o->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &olen)) {
		snprintf(err, errlen, "%s: AF_XDP rings: %s", dev, strerror(errno));
		return -1;
	}
	if (xdp_own_ring(o, 0, &off.fr, XDP_UMEM_PGOFF_FILL_RING, sizeof(__u64),
			 fq, 1) ||
	    xdp_own_ring(o, 1, &off.cr, XDP_UMEM_PGOFF_COMPLETION_RING, sizeof(__u64),
			 cq, 0) ||
	    xdp_own_ring(o, 2, &off.rx, XDP_PGOFF_RX_RING, sizeof(struct xdp_desc),
			 rx, 0) ||
	    (tx && xdp_own_ring(o, 3, &off.tx, XDP_PGOFF_TX_RING, sizeof(struct xdp_desc),
				tx, 1))) {
		snprintf(err, errlen, "%s: mapping the AF_XDP rings: %s", dev,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int xdp_own_create(struct xdp_own *o, const char *dev, void *area, size_t len,
		   struct xsk_ring_prod *fq, struct xsk_ring_cons *cq, struct xsk_ring_cons *rx,
		   struct xsk_ring_prod *tx, char *err, size_t errlen)
{
	struct xdp_umem_reg_txmd mr = {
		.addr = (uintptr_t)area,
		.len = len,
		.chunk_size = PORT_XDP_CHUNK,
		.flags = XDP_UMEM_TX_METADATA_LEN,
		.tx_metadata_len = PORT_XDP_TXMD_LEN,
	};
	int rc;

	o->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (o->fd < 0) {
		snprintf(err, errlen, "%s: AF_XDP socket: %s", dev, strerror(errno));
		return -1;
	}
	/*
	 * Linux 6.8-6.10 know no XDP_UMEM_TX_METADATA_LEN (EINVAL) and take
	 * tx_metadata_len without it: tried again so, as xsk-tx-metadata.rst
	 * recommends (a kernel before 6.8 takes it too and ignores the field:
	 * stamps_enable asks the netdev family what the device does).
	 */
	o->txmd_noflag = 0;
	rc = setsockopt(o->fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr));
	if (rc && errno == EINVAL) {
		mr.flags = 0;
		o->txmd_noflag = 1;
		if (setsockopt(o->fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr))) {
			snprintf(o->txmd_why, sizeof(o->txmd_why),
				 "the kernel refused a umem with TX metadata (%s; needs Linux 6.8)",
				 strerror(errno));
			xdp_own_close(o);
			return 1;
		}
		rc = 0;
	}
	/* Not a refusal of the metadata: the memory (RLIMIT_MEMLOCK), say. */
	if (rc) {
		snprintf(err, errlen, "%s: UMEM registration (%zu bytes): %s", dev, len,
			 strerror(errno));
		xdp_own_close(o);
		return -1;
	}
	if (xdp_own_rings(o, dev, fq, cq, rx, tx, err, errlen)) {
		xdp_own_close(o);
		return -1;
	}
	return 0;
}

int xdp_own_create_shared(struct xdp_own *o, const char *dev, struct xsk_ring_prod *fq,
			  struct xsk_ring_cons *cq, struct xsk_ring_cons *rx, char *err,
			  size_t errlen)
{
	o->txmd_why[0] = 0;
	o->txmd_noflag = 0;
	o->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (o->fd < 0) {
		snprintf(err, errlen, "%s: AF_XDP socket: %s", dev, strerror(errno));
		return -1;
	}
	if (xdp_own_rings(o, dev, fq, cq, rx, NULL, err, errlen)) {
		xdp_own_close(o);
		return -1;
	}
	return 0;
}

int xdp_own_bind(struct xdp_own *o, const char *dev, int ifindex, unsigned queue, __u16 how,
		 int share_fd, char *err, size_t errlen)
{
	/* A socket sharing a umem takes its mode from the umem's owner:
	   no flags of its own (xsk_bind). */
	struct sockaddr_xdp sa = {
		.sxdp_family = AF_XDP,
		.sxdp_ifindex = (__u32)ifindex,
		.sxdp_queue_id = queue,
		.sxdp_flags = share_fd >= 0 ? XDP_SHARED_UMEM : how | XDP_USE_NEED_WAKEUP,
		.sxdp_shared_umem_fd = share_fd >= 0 ? (__u32)share_fd : 0,
	};
	struct timespec step = { 0, 10 * NTPX_NS_PER_MS };
	int64_t end = clock_monotonic_ns() + PORT_XDP_BUSY_NS;
	int rc;

	while ((rc = bind(o->fd, (struct sockaddr *)&sa, sizeof(sa))) && errno == EBUSY &&
	       clock_monotonic_ns() < end)
		nanosleep(&step, NULL);
	if (rc) {
		snprintf(err, errlen, "%s: AF_XDP socket on queue %u (%s): %s", dev, queue,
			 how & XDP_ZEROCOPY ? "zero-copy" : "copy", strerror(errno));
		return -1;
	}
	return 0;
}
