/* SPDX-License-Identifier: ISC */
/*
 * peer.h - liveness of a remote endpoint: when a transport must find its
 * peer again, and when the caller must forget what it learnt about it.
 *
 * A transport that holds resolved state about its peer (an InfiniBand
 * address handle and QPN, a neighbour's MAC address) keeps one struct peer
 * and tells it what happens: a resolution succeeded or failed, a reply
 * arrived (with the server's epoch, when the transport carries one), a
 * reply was missed.  The peer answers three questions:
 *
 *   - is the resolved state stale?  After a run of miss_limit consecutive
 *     missed replies, or a reply whose epoch differs from the one known
 *     (the server restarted), the peer is LOST and the transport drops
 *     what it resolved;
 *   - may the transport resolve now?  Attempts since the last good reply
 *     are spaced by a bounded exponential backoff: the first at once, then
 *     backoff_min, 2 backoff_min, 4 backoff_min ... never more than
 *     backoff_max apart.  Only a reply (not a resolution that merely
 *     succeeded) proves the peer alive and rewinds the schedule;
 *   - must the caller reset its per-peer state (the clock filter)?  Once
 *     after every re-resolution: samples before and after may come from
 *     another server instance or another path.
 *
 * Pure logic: no I/O, no clock reads.  Every time is CLOCK_MONOTONIC in
 * nanoseconds, passed in by the caller, so the schedule is testable and
 * the same for every transport (lib/ib.c, lib/uudp.c).
 */
#ifndef NTPX_PEER_H
#define NTPX_PEER_H

#include <stdint.h>

#include "opt_units.h"

#define PEER_MISS_LIMIT_DEFAULT		3
#define PEER_BACKOFF_MIN_DEFAULT	(100 * NTPX_NS_PER_MS)	/* ns: 100 ms */
#define PEER_BACKOFF_MAX_DEFAULT	(8 * NTPX_NS_PER_SEC)	/* ns: 8 s */

/* "This transport carries no epoch"; a server never picks it. */
#define PEER_EPOCH_NONE			0u

struct peer_config {
	unsigned miss_limit;		/* consecutive misses that mean LOST, >= 1 */
	int64_t backoff_min_ns;		/* ns, spacing after the first retry, > 0 */
	int64_t backoff_max_ns;		/* ns, bound on the spacing, >= min */
};

enum peer_state {
	PEER_UNRESOLVED,	/* nothing resolved yet, or it was dropped */
	PEER_RESOLVED,		/* resolved; replies expected */
};

/* What a reply or a miss means to the transport. */
enum peer_event {
	PEER_OK,		/* nothing to do */
	PEER_LOST,		/* drop the resolved state; resolve when due */
};

struct peer_counters {
	uint64_t replies;		/* good replies */
	uint64_t misses;		/* missed replies, all runs */
	uint64_t losses;		/* times the peer was declared lost */
	uint64_t epoch_changes;		/* replies with another epoch */
	uint64_t resolutions;		/* successful resolutions */
	uint64_t resolve_failures;	/* failed resolutions */
	uint64_t resets;		/* resets handed to the caller */
};

struct peer {
	struct peer_config cfg;
	enum peer_state state;
	unsigned misses;	/* current run of consecutive misses */
	unsigned attempts;	/* resolutions tried since the last good reply */
	int64_t next_ns;	/* CLOCK_MONOTONIC ns: no attempt before this */
	uint32_t epoch;		/* PEER_EPOCH_NONE until one is known */
	int resolved_once;	/* a first resolution happened */
	int reset_pending;
	struct peer_counters count;
};

/*
 * Starts @p UNRESOLVED with an attempt due at once.  @cfg NULL means the
 * defaults above; zero fields in @cfg take their default too.
 */
void peer_init(struct peer *p, const struct peer_config *cfg);

/*
 * The spacing, in ns, between resolution attempt @attempt and the one
 * before it (attempt 0 is the first after a good reply: 0 ns, at once).
 * min(backoff_min * 2^(attempt - 1), backoff_max).
 */
int64_t peer_backoff_ns(const struct peer_config *cfg, unsigned attempt);

/* Nonzero when @p is UNRESOLVED and an attempt is allowed at @now_ns. */
int peer_resolve_due(const struct peer *p, int64_t now_ns);

/*
 * CLOCK_MONOTONIC ns of the next allowed attempt (for sleeping until
 * then); meaningful while UNRESOLVED.
 */
int64_t peer_next_attempt_ns(const struct peer *p);

/*
 * A resolution attempt at @now_ns succeeded.  @epoch is the server's epoch
 * if resolution tells it (else PEER_EPOCH_NONE: the first reply will).
 * @p becomes RESOLVED; if this was not the first resolution, a reset is
 * pending for the caller.
 */
void peer_resolve_ok(struct peer *p, int64_t now_ns, uint32_t epoch);

/* A resolution attempt at @now_ns failed; the next waits its backoff. */
void peer_resolve_failed(struct peer *p, int64_t now_ns);

/*
 * A reply arrived at @now_ns carrying @epoch (PEER_EPOCH_NONE when the
 * transport has none).  PEER_OK: the reply is good, the miss run and the
 * backoff are rewound (a late reply while UNRESOLVED rewinds them too, but
 * the state stays UNRESOLVED).  PEER_LOST: its epoch differs from the
 * known one, the server restarted; the caller drops the reply and its
 * resolved state and resolves again, due at once since the server is
 * evidently up.  The first epoch seen is adopted.
 */
enum peer_event peer_reply(struct peer *p, int64_t now_ns, uint32_t epoch);

/*
 * A reply expected from a request was not received.  PEER_LOST when this
 * miss completes a run of miss_limit: drop the resolved state.  Misses
 * while UNRESOLVED are counted but change nothing.
 */
enum peer_event peer_miss(struct peer *p, int64_t now_ns);

/*
 * The transport learnt from elsewhere at @now_ns (a port went down or came
 * up, an address changed) that what it resolved is stale: @p becomes
 * UNRESOLVED and the backoff rewinds, so the next attempt is due at once.
 */
void peer_invalidate(struct peer *p, int64_t now_ns);

/*
 * The caller's side of a reset: nonzero once after each re-resolution,
 * whatever caused it (a miss run, an epoch change), then zero until the
 * next.
 */
int peer_take_reset(struct peer *p);

#endif
