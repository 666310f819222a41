/* SPDX-License-Identifier: ISC */
/*
 * peer.c - liveness of a remote endpoint: miss runs, resolution backoff,
 * the server's epoch, and the reset handed to the caller (see peer.h).
 *
 * Why the backoff survives a successful resolution: resolving can succeed
 * against a peer that is still dead (a neighbour entry that is merely
 * stale, an rdma_cm answer from a server that then dies), and only a
 * reply shows that the path works end to end.  So each attempt since the
 * last good reply waits twice as long as the one before, up to a bound,
 * and a flapping peer costs a few resolutions per backoff_max at most.
 */
#include <string.h>

#include "peer.h"

void peer_init(struct peer *p, const struct peer_config *cfg)
{
	memset(p, 0, sizeof(*p));
	if (cfg)
		p->cfg = *cfg;
	if (!p->cfg.miss_limit)
		p->cfg.miss_limit = PEER_MISS_LIMIT_DEFAULT;
	if (p->cfg.backoff_min_ns <= 0)
		p->cfg.backoff_min_ns = PEER_BACKOFF_MIN_DEFAULT;
	if (p->cfg.backoff_max_ns <= 0)
		p->cfg.backoff_max_ns = PEER_BACKOFF_MAX_DEFAULT;
	if (p->cfg.backoff_max_ns < p->cfg.backoff_min_ns)
		p->cfg.backoff_max_ns = p->cfg.backoff_min_ns;
	p->state = PEER_UNRESOLVED;
	p->epoch = PEER_EPOCH_NONE;
	p->next_ns = INT64_MIN;
}

int64_t peer_backoff_ns(const struct peer_config *cfg, unsigned attempt)
{
	int64_t d = cfg->backoff_min_ns;
	unsigned i;

	if (attempt == 0)
		return 0;
	/* Doubling stops at the bound, so it cannot overflow. */
	for (i = 1; i < attempt && d < cfg->backoff_max_ns; i++)
		d = d > cfg->backoff_max_ns / 2 ? cfg->backoff_max_ns : d * 2;
	return d < cfg->backoff_max_ns ? d : cfg->backoff_max_ns;
}

int peer_resolve_due(const struct peer *p, int64_t now_ns)
{
	return p->state == PEER_UNRESOLVED && now_ns >= p->next_ns;
}

int64_t peer_next_attempt_ns(const struct peer *p)
{
	return p->next_ns;
}

/* Counts an attempt at @now_ns and schedules the one after it. */
static void peer_attempted(struct peer *p, int64_t now_ns)
{
	if (p->attempts < 64)
		p->attempts++;
	p->next_ns = now_ns + peer_backoff_ns(&p->cfg, p->attempts);
}

void peer_resolve_ok(struct peer *p, int64_t now_ns, uint32_t epoch)
{
	peer_attempted(p, now_ns);
	p->count.resolutions++;
	p->state = PEER_RESOLVED;
	p->misses = 0;
	if (epoch != PEER_EPOCH_NONE)
		p->epoch = epoch;
	if (p->resolved_once) {
		p->reset_pending = 1;
		p->count.resets++;
	}
	p->resolved_once = 1;
}

void peer_resolve_failed(struct peer *p, int64_t now_ns)
{
	peer_attempted(p, now_ns);
	p->count.resolve_failures++;
}

/* Drops the resolved state; the next attempt keeps its schedule. */
static enum peer_event peer_lose(struct peer *p)
{
	p->state = PEER_UNRESOLVED;
	p->misses = 0;
	p->count.losses++;
	return PEER_LOST;
}

enum peer_event peer_reply(struct peer *p, int64_t now_ns, uint32_t epoch)
{
	/* Any reply shows the server up: retry at once, whatever follows. */
	p->attempts = 0;
	p->next_ns = now_ns;
	if (epoch != PEER_EPOCH_NONE) {
		if (p->epoch == PEER_EPOCH_NONE) {
			p->epoch = epoch;
		} else if (epoch != p->epoch) {
			p->count.epoch_changes++;
			p->epoch = epoch;
			if (p->state == PEER_UNRESOLVED)
				return PEER_LOST;
			return peer_lose(p);
		}
	}
	p->count.replies++;
	p->misses = 0;
	return PEER_OK;
}

enum peer_event peer_miss(struct peer *p, int64_t now_ns)
{
	p->count.misses++;
	if (p->state != PEER_RESOLVED)
		return PEER_OK;
	if (++p->misses < p->cfg.miss_limit)
		return PEER_OK;
	return peer_lose(p);
}

void peer_invalidate(struct peer *p, int64_t now_ns)
{
	p->attempts = 0;
	p->next_ns = now_ns;
	if (p->state == PEER_RESOLVED)
		peer_lose(p);
}

int peer_take_reset(struct peer *p)
{
	int r = p->reset_pending;

	p->reset_pending = 0;
	return r;
}
