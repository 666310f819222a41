/* SPDX-License-Identifier: ISC */
/*
 * ib_wire.c - the ib transport's rules for what arrives, pure: a receive
 * completion judged (ib_wire.h), the header in front of a datagram told apart
 * (an IB/RoCE v1 GRH, a RoCE v2 IPv6 or IPv4 header) and read as the key
 * of the server's address-handle cache (ib_wire_private.h).  No device, no
 * system call: tests/unit/ib.c holds them.
 */
#include <endian.h>
#include <string.h>

#include "ib_wire.h"
#include "ib_wire_private.h"
#include "ntp.h"

#define IB_NEXT_HDR_BTH	0x1b		/* a GRH's next header: IB transport */

const char *const ib_verdict_names[IB_RECV_NVERDICTS] = {
	[IB_RECV_OK] = "ok",
	[IB_RECV_WC_ERROR] = "wc_error",
	[IB_RECV_OPCODE] = "opcode",
	[IB_RECV_SHORT] = "short",
	[IB_RECV_NO_IMM] = "no_imm",
	[IB_RECV_IMM] = "imm",
	[IB_RECV_STRAY] = "stray",
};

enum ib_verdict ib_check_recv(const struct ibv_wc *wc, enum transport_role role,
			      uint32_t server_qpn)
{
	int imm = !!(wc->wc_flags & IBV_WC_WITH_IMM);

	if (wc->status != IBV_WC_SUCCESS)
		return IB_RECV_WC_ERROR;
	if (wc->opcode != IBV_WC_RECV)
		return IB_RECV_OPCODE;
	if (wc->byte_len < IB_GRH_LEN + NTP_HEADER_LEN)
		return IB_RECV_SHORT;
	if (role == TRANSPORT_SERVER)
		return imm ? IB_RECV_IMM : IB_RECV_OK;
	if (!imm)
		return IB_RECV_NO_IMM;
	if (wc->src_qp != server_qpn)
		return IB_RECV_STRAY;
	return IB_RECV_OK;
}

uint32_t ib_wc_epoch(const struct ibv_wc *wc)
{
	return be32toh(wc->imm_data);
}

int ib_grh_version(const void *grh)
{
	const unsigned char *g = grh, *ip = g + 20;
	unsigned char h[20];
	uint32_t sum = 0;
	unsigned i;

	if (g[0] >> 4 != 6)
		return ip[0] >> 4 == 4 ? 4 : -1;
	if ((ip[0] & 0xf) != 5)
		return 6;	/* RoCE v2 over IPv4 has no options */
	memcpy(h, ip, sizeof(h));
	h[10] = h[11] = 0;
	for (i = 0; i < sizeof(h); i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	return ip[10] == (sum >> 8) && ip[11] == (sum & 0xff) ? 4 : 6;
}

/*
 * The sender as a cache key, read without a system call (unlike
 * ibv_init_ah_from_wc, which searches the GID table), from what that
 * function derives the handle from.  The 40 bytes in front of the payload
 * hold an IB/RoCE v1 GRH or a RoCE v2 IPv6 header (next header UDP), or
 * for RoCE v2 over IPv4 20 bytes the HCA did not write and an IPv4
 * header, whose addresses become IPv4-mapped GIDs; ib_grh_version()
 * tells which as rdma-core does.  -1: a header no handle can be made from.
 */
int ib_key_from_wc(const struct ibv_wc *wc, const unsigned char *grh, struct ib_key *k)
{
	const unsigned char *ip = grh + 20;

	memset(k, 0, sizeof(*k));
	k->slid = wc->slid;
	k->sl = wc->sl;
	k->path_bits = wc->dlid_path_bits;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	k->global = 1;
	switch (ib_grh_version(grh)) {
	case 4:
		k->gid_type = IBV_GID_TYPE_ROCE_V2;
		k->hop_limit = ip[8];
		k->tclass = ip[1];
		k->sgid[10] = k->sgid[11] = k->dgid[10] = k->dgid[11] = 0xff;
		memcpy(k->sgid + 12, ip + 12, 4);
		memcpy(k->dgid + 12, ip + 16, 4);
		return 0;
	case 6:
		if (grh[6] == 17)
			k->gid_type = IBV_GID_TYPE_ROCE_V2;
		else if (grh[6] == IB_NEXT_HDR_BTH)
			k->gid_type = IBV_GID_TYPE_ROCE_V1;	/* or IB: one port, one link */
		else
			return -1;
		k->hop_limit = grh[7];
		k->tclass = (uint8_t)(grh[0] << 4 | grh[1] >> 4);
		k->flow_label = (uint32_t)(grh[1] & 0xf) << 16 | (uint32_t)grh[2] << 8 | grh[3];
		memcpy(k->sgid, grh + 8, 16);
		memcpy(k->dgid, grh + 24, 16);
		return 0;
	default:
		return -1;
	}
}
