/* SPDX-License-Identifier: ISC */
/*
 * ntpx_xdp.bpf.c - the XDP program of the uudp transport (lib/port_xdp.c).
 *
 * It redirects to the AF_XDP socket of its receive queue exactly the IPv4
 * UDP datagrams addressed to one port, and passes everything else to the
 * kernel: ARP, ICMP, other ports, IPv6 and non-first fragments stay with
 * the kernel's stack.  A first fragment of our port is redirected so that
 * the socket's owner counts it (frame.c refuses fragments); the rest of
 * such a datagram goes to the kernel, which discards it when reassembly
 * times out.  Everything else about a redirected frame (addresses,
 * checksums, lengths) is checked in userspace by frame_check(), so that
 * refusals are counted there by reason.
 *
 * ntpx_port (network byte order) is set in .rodata before loading.
 *
 * Once the port asks for receive stamps (ntpx_stamp, set after loading),
 * a frame it redirects carries, in the metadata area just before it, the
 * moment the program saw it (CLOCK_MONOTONIC, bpf_ktime_get_ns) under a
 * magic number: the "k" layer of uudp's receive stamps.  Where the driver
 * or the socket's mode keeps no metadata, the frame goes without it.  Not
 * asked (--no-stamps), the program writes nothing: the stamp and the
 * metadata cost every frame about a tenth of uudp's busy-polled round
 * trip on veth (issue 21).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "ntpx_xdp_meta.h"	/* the metadata: lib/port_xdp.c reads it */

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);	/* set at load: the receive queues */
	__type(key, __u32);
	__type(value, __u32);
} ntpx_xsks SEC(".maps");

volatile const __u16 ntpx_port = 0;
volatile __u32 ntpx_stamp = 0;	/* .bss: lib/port_xdp.c sets it to 1 */

SEC("xdp")
int ntpx_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5)
		return XDP_PASS;
	if (ip->frag_off & bpf_htons(0x1fff))
		return XDP_PASS;	/* no UDP header in it */
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end || udp->dest != ntpx_port)
		return XDP_PASS;
	if (ntpx_stamp) {
		__u64 now = bpf_ktime_get_ns();

		if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct ntpx_meta)) == 0) {
			struct ntpx_meta *m = (void *)(long)ctx->data_meta;

			if ((void *)(m + 1) <= (void *)(long)ctx->data) {
				m->magic = NTPX_META_MAGIC;
				m->mono_ns = now;
			}
		}
	}
	/* No socket on this queue: the kernel gets it (flags = fallback). */
	return bpf_redirect_map(&ntpx_xsks, ctx->rx_queue_index, XDP_PASS);
}

/* Uses no GPL-only helper. */
char _license[] SEC("license") = "Dual BSD/GPL";
