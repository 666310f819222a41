/* SPDX-License-Identifier: ISC */
/*
 * xdp_own_private.h - an AF_XDP socket of our own, for port_xdp.c
 * (xdp_own.c): libxdp 1.3 cannot register a umem with TX metadata, so
 * the socket, the umem registration and the four rings' mappings are
 * made here, and libxdp keeps only its rings' inline helpers, which work
 * on the struct xsk_ring_prod / xsk_ring_cons filled in here as libxdp
 * would fill them.
 */
#ifndef NTPX_XDP_OWN_PRIVATE_H
#define NTPX_XDP_OWN_PRIVATE_H

#include <stddef.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "opt_units.h"

/* The UMEM both port_xdp.c and the socket here lay out. */
#define PORT_XDP_CHUNK		XSK_UMEM__DEFAULT_FRAME_SIZE	/* 4096 */
#define PORT_XDP_RING		4096	/* descriptors per ring, power of 2 */
#define PORT_XDP_TXMD_LEN	24	/* tx_metadata_len: struct xsk_tx_metadata
					   as of Linux 6.14 (a multiple of 8) */
#define PORT_XDP_BUSY_NS	(1 * NTPX_NS_PER_SEC)	/* queue still held: wait 1 s */

struct xdp_own {
	int fd;				/* -1: none (libxdp's socket) */
	void *ring_map[4];		/* fill, completion, rx, tx (NULL: none) */
	size_t ring_len[4];
	char txmd_why[128];		/* why there is no TX metadata, or "" */
	int txmd_noflag;		/* the umem took tx_metadata_len without
					   XDP_UMEM_TX_METADATA_LEN (Linux 6.8-6.10) */
};

/*
 * Our own AF_XDP socket on @dev: the umem of @len bytes at @area
 * (PORT_XDP_CHUNK chunks) registered with TX metadata, the four rings
 * mapped and described at @fq, @cq, @rx and @tx.  0; 1 when the kernel
 * refuses TX metadata (o->txmd_why says why: the caller falls back to
 * libxdp); -1 with @err otherwise.  On failure nothing is left open.
 */
int xdp_own_create(struct xdp_own *o, const char *dev, void *area, size_t len,
		   struct xsk_ring_prod *fq, struct xsk_ring_cons *cq, struct xsk_ring_cons *rx,
		   struct xsk_ring_prod *tx, char *err, size_t errlen);

/*
 * A socket that receives on another queue into the umem of an
 * xdp_own_create() socket (bound with XDP_SHARED_UMEM, xdp_own_bind's
 * @share_fd): a fill, a completion and a receive ring of its own, no
 * transmit ring.  0, or -1 with @err; on failure nothing is left open.
 */
int xdp_own_create_shared(struct xdp_own *o, const char *dev, struct xsk_ring_prod *fq,
			  struct xsk_ring_cons *cq, struct xsk_ring_cons *rx, char *err,
			  size_t errlen);

/*
 * Binds the socket to receive queue @queue of @ifindex (@dev, for @err)
 * with @how (XDP_COPY or XDP_ZEROCOPY), or, when @share_fd is a socket's,
 * sharing that socket's umem (and so its mode), waiting out a dying
 * socket's hold on the queue for PORT_XDP_BUSY_NS.  0, or -1 with @err.
 */
int xdp_own_bind(struct xdp_own *o, const char *dev, int ifindex, unsigned queue, __u16 how,
		 int share_fd, char *err, size_t errlen);

/* Unmaps the rings and closes the socket; o->fd is -1 after. */
void xdp_own_close(struct xdp_own *o);

#endif
