/* SPDX-License-Identifier: ISC */
/*
 * ib_ah.c - the ib transport's address handles: a server's LRU cache of
 * those that answer its clients, keyed on what ibv_init_ah_from_wc()
 * derives a handle from (ib_wire.c reads that key from the header,
 * without a system call).  A handle given up while a send in flight
 * still uses it is kept (a zombie) until that send completes: some
 * providers (rxe) look the handle up only when they process the send.
 * The owner (ib.c) reaps the send completions and says which send uses
 * which handle.
 */
#include <errno.h>
#include <string.h>

#include "ib_ah_private.h"

void ib_zombies_reap(struct ib_ahs *a)
{
	unsigned z = 0, i;

	while (z < a->nzombie) {
		for (i = 0; i < IB_SEND_DEPTH && a->send_ah[i] != a->zombie[z]; i++)
			;
		if (i < IB_SEND_DEPTH) {
			z++;
			continue;
		}
		ibv_destroy_ah(a->zombie[z]);
		a->zombie[z] = a->zombie[--a->nzombie];
	}
}

/*
 * Gives up @ah: destroyed now when no send in flight uses it, else when
 * the last such send has completed (rxe resolves the handle only when it
 * processes the send).
 */
void ib_ah_put(struct ib_ahs *a, struct ibv_ah *ah)
{
	unsigned i;

	for (i = 0; i < IB_SEND_DEPTH; i++)
		if (a->send_ah[i] == ah) {
			a->zombie[a->nzombie++] = ah;	/* < IB_SEND_DEPTH: each is in flight */
			a->deferred++;
			return;
		}
	ibv_destroy_ah(ah);
}

void ib_ahc_flush(struct ib_ahs *a)
{
	int i;

	for (i = 0; i < IB_AH_CACHE; i++)
		if (a->ahc[i].ah) {
			ib_ah_put(a, a->ahc[i].ah);
			a->ahc[i].ah = NULL;
		}
}

/* Server: the address handle that answers @k, from the cache or new. */
struct ibv_ah *ib_ahc_get(struct ib_ahs *a, const struct ib_key *k, struct ibv_wc *wc,
			  void *grh)
{
	struct ib_ah_slot *s, *victim = &a->ahc[0];
	int i;

	for (i = 0; i < IB_AH_CACHE; i++) {
		s = &a->ahc[i];
		if (s->ah && memcmp(&s->key, k, sizeof(*k)) == 0) {
			s->used = ++a->ahc_clock;
			return s->ah;
		}
		if (!s->ah || (victim->ah && s->used < victim->used))
			victim = s;
	}
	if (!wc)
		return NULL;
	if (victim->ah) {
		a->reap(a);	/* so that a finished send frees it now */
		ib_ah_put(a, victim->ah);
		victim->ah = NULL;
		a->evicted++;
	}
	victim->ah = ibv_create_ah_from_wc(a->pd, wc, grh, k->port);
	if (!victim->ah) {
		a->failed++;
		return NULL;
	}
	a->made++;
	victim->key = *k;
	victim->used = ++a->ahc_clock;
	return victim->ah;
}
