/* SPDX-License-Identifier: ISC */
/*
 * missing.h - kernel UAPI definitions newer than the headers Debian 12
 * builds with (linux-libc-dev 6.1, libxdp 1.3), and rdma-core's older
 * releases lack, as linuxptp's missing.h does it: each guarded, so that
 * newer headers win.  Include it after the system headers it completes.
 *
 * AF_XDP TX metadata (Linux 6.8; the umem flag that makes the kernel read
 * tx_metadata_len, 6.11; launch time, 6.14): a umem registered with
 * tx_metadata_len reserves that many bytes in front of each transmit
 * frame for a struct xsk_tx_metadata, which a descriptor with the
 * XDP_TX_METADATA option asks the kernel to read; with
 * XDP_TXMD_FLAGS_TIMESTAMP the kernel writes the completion stamp there.
 */
#ifndef NTPX_MISSING_H
#define NTPX_MISSING_H

/*
 * rdma-core before v36 (Debian 11, Ubuntu 20.04) has no flag for mlx5's
 * real-time clock, an enumerator of mlx5dv.h that no #ifdef sees: the
 * Makefile asks libmlx5's version (scripts/rdma-core-defs).  Include
 * this after <infiniband/mlx5dv.h>.
 */
#ifdef NTPX_MLX5DV_NO_REAL_TIME_TS
#define MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS	(1 << 7)
#endif

#include <linux/if_xdp.h>
#include <linux/types.h>

/* struct xdp_umem_reg's flags */
#ifndef XDP_UMEM_TX_SW_CSUM
#define XDP_UMEM_TX_SW_CSUM		(1 << 1)
#endif

#ifdef XDP_UMEM_TX_METADATA_LEN
/* The headers' struct xdp_umem_reg has tx_metadata_len. */
#define xdp_umem_reg_txmd xdp_umem_reg
#else
#define XDP_UMEM_TX_METADATA_LEN	(1 << 2)
/* struct xdp_umem_reg as from Linux 6.8: tx_metadata_len takes the old
   padding, so the size is what older kernels took too. */
struct xdp_umem_reg_txmd {
	__u64 addr;
	__u64 len;
	__u32 chunk_size;
	__u32 headroom;
	__u32 flags;
	__u32 tx_metadata_len;
};
#endif

/* struct xdp_desc's options */
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA			(1 << 1)
#endif

#ifndef XDP_TXMD_FLAGS_TIMESTAMP
#define XDP_TXMD_FLAGS_TIMESTAMP	(1 << 0)
#define XDP_TXMD_FLAGS_CHECKSUM		(1 << 1)
struct xsk_tx_metadata {
	__u64 flags;
	union {
		struct {
			__u16 csum_start;
			__u16 csum_offset;
			__u64 launch_time;	/* XDP_TXMD_FLAGS_LAUNCH_TIME */
		} request;
		struct {
			__u64 tx_timestamp;	/* XDP_TXMD_FLAGS_TIMESTAMP */
		} completion;
	};
};
#endif

#ifndef XDP_TXMD_FLAGS_LAUNCH_TIME
#define XDP_TXMD_FLAGS_LAUNCH_TIME	(1 << 2)
#endif

/* The netdev generic-netlink family (linux/netdev.h, Linux 6.8: xsk-features). */
#ifndef NETDEV_FAMILY_NAME
#define NETDEV_FAMILY_NAME		"netdev"
#define NETDEV_CMD_DEV_GET		1
#define NETDEV_A_DEV_IFINDEX		1
#endif
#ifndef NETDEV_A_DEV_XSK_FEATURES
#define NETDEV_A_DEV_XSK_FEATURES	6
#define NETDEV_XSK_FLAGS_TX_TIMESTAMP	1
#endif

#endif
