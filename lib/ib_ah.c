/* SPDX-License-Identifier: ISC */
/*
 * ib_ah.c - the ib transport's address handles: a client's one, towards
 * its server; a server's LRU cache of those that answer its clients,
 * keyed on what ibv_init_ah_from_wc() derives a handle from (ib_wire.c
 * reads that key from the header, without a system call).  A handle
 * given up while a send in flight still uses it is kept (a zombie) until
 * that send completes: some providers (rxe) look the handle up only when
 * they process the send.  So the send completions are reaped here too,
 * with their stamps noted and a send queue left in SQE brought back.
 */
#include <errno.h>
#include <string.h>

#include "ib_private.h"

/* Destroys the handles no send in flight uses any more. */
void ib_zombies_reap(struct ib_transport *u)
{
	unsigned z = 0, i;

	while (z < u->nzombie) {
		for (i = 0; i < IB_SEND_DEPTH && u->send_ah[i] != u->zombie[z]; i++)
			;
		if (i < IB_SEND_DEPTH) {
			z++;
			continue;
		}
		ibv_destroy_ah(u->zombie[z]);
		u->zombie[z] = u->zombie[--u->nzombie];
	}
}

/*
 * Gives up @ah: destroyed now when no send in flight uses it, else when
 * the last such send has completed (rxe resolves the handle only when it
 * processes the send).
 */
static void ib_ah_put(struct ib_transport *u, struct ibv_ah *ah)
{
	unsigned i;

	for (i = 0; i < IB_SEND_DEPTH; i++)
		if (u->send_ah[i] == ah) {
			u->zombie[u->nzombie++] = ah;	/* < IB_SEND_DEPTH: each is in flight */
			u->n.ah_deferred++;
			return;
		}
	ibv_destroy_ah(ah);
}

void ib_drop_ah(struct ib_transport *u)
{
	if (u->ah) {
		ib_ah_put(u, u->ah);
		u->ah = NULL;
	}
	u->outstanding = 0;
}

void ib_ahc_flush(struct ib_transport *u)
{
	int i;

	for (i = 0; i < IB_AH_CACHE; i++)
		if (u->ahc[i].ah) {
			ib_ah_put(u, u->ahc[i].ah);
			u->ahc[i].ah = NULL;
		}
}

/* Reaps send completions; a UD send error can leave the SQ in SQE state. */
void ib_reap_sends(struct ib_transport *u)
{
	struct verbs_wc wc[16];
	int n, i, sqe = 0;

	while ((n = verbs_cq_poll(&u->scq, wc, 16)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id < IB_SEND_DEPTH && u->nsend_free < IB_SEND_DEPTH) {
				uint32_t tag = u->send_tag[wc[i].wr_id];
				int64_t ns;

				u->send_free[u->nsend_free++] = (unsigned)wc[i].wr_id;
				u->send_ah[wc[i].wr_id] = NULL;
				u->send_tag[wc[i].wr_id] = 0;
				if (tag) {
					if (wc[i].status != IBV_WC_SUCCESS ||
					    verbs_clock_realtime(&u->vclk, u->scq.mode,
								 wc[i].ts, &ns) != 1)
						ns = TRANSPORT_NO_STAMP;
					transport_tx_note(u->top, tag, TRANSPORT_LAYER_H, ns);
				}
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				u->n.send_err++;
				sqe |= wc[i].status != IBV_WC_WR_FLUSH_ERR;
			}
		}
	}
	if (u->nzombie)
		ib_zombies_reap(u);
	if (sqe) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		int p;

		for (p = 0; p < IB_PARTS; p++) {
			struct ibv_qp *qp = u->part[p].qp;

			if (!qp || ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) ||
			    a.qp_state != IBV_QPS_SQE)
				continue;
			memset(&a, 0, sizeof(a));
			a.qp_state = IBV_QPS_RTS;
			if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
				u->dead = -EIO;
		}
	}
}

/* Server: the address handle that answers @k, from the cache or new. */
struct ibv_ah *ib_ahc_get(struct ib_transport *u, const struct ib_key *k,
			  struct ibv_wc *wc, void *grh)
{
	struct ib_ah_slot *s, *victim = &u->ahc[0];
	int i;

	for (i = 0; i < IB_AH_CACHE; i++) {
		s = &u->ahc[i];
		if (s->ah && memcmp(&s->key, k, sizeof(*k)) == 0) {
			s->used = ++u->ahc_clock;
			return s->ah;
		}
		if (!s->ah || (victim->ah && s->used < victim->used))
			victim = s;
	}
	if (!wc)
		return NULL;
	if (victim->ah) {
		ib_reap_sends(u);	/* so that a finished send frees it now */
		ib_ah_put(u, victim->ah);
		victim->ah = NULL;
		u->n.ah_evict++;
	}
	victim->ah = ibv_create_ah_from_wc(u->pd, wc, grh, k->port);
	if (!victim->ah) {
		u->n.ah_fail++;
		return NULL;
	}
	u->n.ah_new++;
	victim->key = *k;
	victim->used = ++u->ahc_clock;
	return victim->ah;
}
