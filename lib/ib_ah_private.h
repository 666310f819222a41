/* SPDX-License-Identifier: ISC */
/*
 * ib_ah_private.h - the ib transport's address handles (ib_ah.c): a
 * server's LRU cache of those that answer its clients, and handles given
 * up while a send in flight still uses them (zombies), destroyed once
 * that send has completed.  Its owner (ib.c) says which send uses which
 * handle (send_ah) and reaps the send completions.
 */
#ifndef NTPX_IB_AH_PRIVATE_H
#define NTPX_IB_AH_PRIVATE_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "ib_wire_private.h"

#define IB_SEND_DEPTH	64		/* send slots */
#define IB_AH_CACHE	64		/* server: address handles kept */

struct ib_ah_slot {
	struct ib_key key;
	struct ibv_ah *ah;	/* NULL: free */
	uint64_t used;		/* LRU clock */
};

struct ib_ahs {
	struct ibv_pd *pd;
	struct ibv_ah *send_ah[IB_SEND_DEPTH];	/* by send slot: the handle each send
						   in flight uses (the owner's to fill) */
	struct ibv_ah *zombie[IB_SEND_DEPTH];	/* given up, still used by a send */
	unsigned nzombie;
	struct ib_ah_slot ahc[IB_AH_CACHE];
	uint64_t ahc_clock;
	/* the owner's: takes the send completions in, so that a finished
	   send frees its handle at once (before an eviction) */
	void (*reap)(struct ib_ahs *a);
	uint64_t made, evicted, failed, deferred;	/* counters: ah_new, ah_evict,
							   ah_fail, ah_deferred */
};

/* Gives up @ah: destroyed now when no send in flight uses it, else once none does. */
void ib_ah_put(struct ib_ahs *a, struct ibv_ah *ah);
/* Destroys the handles no send in flight uses any more. */
void ib_zombies_reap(struct ib_ahs *a);
/* Server: gives up every cached handle. */
void ib_ahc_flush(struct ib_ahs *a);
/*
 * Server: the handle that answers @k, from the cache; with @wc and its
 * @grh, one made anew when none is cached.  NULL when none can be.
 */
struct ibv_ah *ib_ahc_get(struct ib_ahs *a, const struct ib_key *k, struct ibv_wc *wc,
			  void *grh);

#endif
