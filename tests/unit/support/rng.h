/* SPDX-License-Identifier: ISC */
/*
 * rng.h - a fixed-seed generator for the unit tests that need noise, so
 * that such a test draws the same numbers every run (xorshift64, the
 * seed rng_state starts from; a test may set rng_state for a seed of its
 * own).  A header: each test has its own state.
 */
#ifndef NTPX_TEST_RNG_H
#define NTPX_TEST_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* Uniform in (0, 1). */
static inline double rng_uniform(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box and Muller). */
static inline double rng_normal(void)
{
	return sqrt(-2 * log(rng_uniform())) * cos(2 * M_PI * rng_uniform());
}

#endif
