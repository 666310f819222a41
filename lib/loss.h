/* SPDX-License-Identifier: ISC */
/*
 * loss.h - deliberate loss: which sends the library drops before they
 * reach the transport, the same way on every backend.
 *
 * A schedule travels as text in the environment variable NTPX_LOSS, set by
 * lossinject(1) for the command it runs:
 *
 *     every:N:K       drop send s (numbered from 1) when s mod N == K,
 *                     0 <= K < N: "every:10:0" drops sends 10, 20, 30...
 *     rate:P:SEED     drop send s when hash(SEED, s) < P, 0 < P <= 1
 *
 * Whether send s is dropped depends on the schedule and s alone (a
 * counter-based hash, not a generator's state), so the same schedule drops
 * the same positions on every run, every backend and every machine.
 * Each transport counts its own sends.
 */
#ifndef NTPX_LOSS_H
#define NTPX_LOSS_H

#include <stddef.h>
#include <stdint.h>

#define LOSS_ENV	"NTPX_LOSS"

enum loss_kind {
	LOSS_NONE,
	LOSS_EVERY,
	LOSS_RATE,
};

struct loss {
	enum loss_kind kind;
	uint64_t every;		/* LOSS_EVERY: N >= 1 */
	uint64_t phase;		/* LOSS_EVERY: K, 0 <= K < N */
	double rate;		/* LOSS_RATE: P, the probability of a drop */
	uint64_t seed;		/* LOSS_RATE */
	uint64_t sends;		/* sends counted so far by loss_next() */
	uint64_t drops;		/* of which dropped */
};

/*
 * Parses a schedule ("every:N:K", "rate:P:SEED", or "" for none) into @l
 * with its counters at zero.  Returns 0, or -1 with one line in @err.
 */
int loss_parse(const char *spec, struct loss *l, char *err, size_t errlen);

/* Writes @l as text loss_parse() reads back exactly.  Returns the length
   snprintf would have written. */
int loss_format(const struct loss *l, char *buf, size_t len);

/* 1 when send @s (numbered from 1) is dropped by @l, else 0. */
int loss_drops(const struct loss *l, uint64_t s);

/* Counts one more send; 1 when it is to be dropped. */
static inline int loss_next(struct loss *l)
{
	int d;

	if (l->kind == LOSS_NONE)
		return 0;
	d = loss_drops(l, ++l->sends);
	l->drops += (uint64_t)d;
	return d;
}

#endif
