/* SPDX-License-Identifier: ISC */
/*
 * clock_sim_private.h - the layout of a sim: clock file, shared by
 * clock_sim.c and its unit test (which plays a writer stuck inside the
 * seqlock).  Nothing else may depend on it.
 */
#ifndef NTPX_CLOCK_SIM_PRIVATE_H
#define NTPX_CLOCK_SIM_PRIVATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "opt_units.h"

#define SIM_MAGIC	0x316d69737870746eULL	/* "ntpxsim1", little-endian */
#define SIM_VERSION	1
#define SIM_FRAC_BITS	48
#define SIM_FRAC_MASK	((1LL << SIM_FRAC_BITS) - 1)
#define SIM_STEP_NS	NTPX_NS_PER_SEC	/* the wander's step */
#define SIM_NS_PER_SLEW	(1000000 / CLOCK_SLEW_PPM)	/* ns of time per ns slewed */

/*
 * The file.  Fields after seq change only under the seqlock; they are
 * atomics read and written relaxed (plain moves on x86) so that the racing
 * reads the seqlock then discards are not undefined behaviour.  wander,
 * seed and epoch are set before the file is renamed into place and never
 * change.
 */
struct sim_shm {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
	int64_t wander;			/* frequency step, 2^-48 units */
	uint64_t seed;
	int64_t epoch;			/* CLOCK_REALTIME at creation, ns */
	uint64_t pad[3];
	_Atomic uint64_t seq;		/* odd while a writer is inside */
	_Atomic int64_t t0;		/* the linear part is based here, ns */
	_Atomic int64_t phase;		/* e at t0 without wander/slew, ns */
	_Atomic int64_t frac;		/* ... plus frac 2^-48 ns, 0 <= frac < 2^48 */
	_Atomic int64_t freq;		/* 2^-48 units, +ve => fast */
	_Atomic int64_t slew_start;	/* CLOCK_REALTIME the slew began, ns */
	_Atomic int64_t slew_total;	/* ns to slew from slew_start, signed */
};

#endif
