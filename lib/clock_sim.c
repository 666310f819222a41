/* SPDX-License-Identifier: ISC */
/*
 * clock_sim.c - the simulated clock "sim:PATH": chrony's sys_null.c idea
 * (a clock that only pretends) kept in a shared-memory file, so that a
 * probe, its discipline loop and clockstep in another process all see one
 * clock.
 *
 *   sim(t) = CLOCK_REALTIME(t) + e(t)
 *   e(t)   = phase + freq (t - t0) + wander(t) + slew done by t
 *
 * The file holds a seqlock and the parameters of e.  Writers (clockstep,
 * the discipline) take the lock by making the sequence odd, re-base the
 * linear part at "now" so that e stays continuous, change what they
 * change and make the sequence even again; readers copy the parameters and
 * retry when the sequence was odd or moved.  A reader never writes the
 * file, so any number of processes read at once.
 *
 * Everything is integer: frequencies are in units of 2^-48 (about 3.6e-9
 * ppm), and the sub-nanosecond remainder of the phase is kept, so that a
 * re-base moves e by nothing and every reader computes bit-identical e(t).
 * The wander is a random walk of frequency in one-second steps from the
 * creation time; each step comes from a counter-based generator indexed
 * by (seed, second), so e(t) is a function of t alone.  A handle caches
 * where it got to in the walk, which makes reading it O(1) as time moves
 * forward.
 *
 * A writer holds the lock for a handful of stores and takes no other lock
 * inside it; a writer killed inside it would leave readers spinning, which
 * is why nothing that can fail or block runs between sim_write_begin()
 * and sim_write_end().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock_private.h"
#include "clock_sim_private.h"
#include "util_private.h"

/* A consistent copy of the changing part. */
struct sim_params {
	int64_t t0, phase, frac, freq, slew_start, slew_total;
};

struct sim_clock {
	struct clock c;
	struct sim_shm *m;
	int writable;
	/* where this handle got to in the wander's walk */
	int64_t wk;			/* seconds since epoch */
	int64_t wf;			/* frequency in step wk, 2^-48 units */
	__int128 wacc;			/* phase at the start of step wk, 2^-48 ns */
};

static int64_t ppm_to_frac(double ppm)
{
	return (int64_t)__builtin_llround(ppm * 1e-6 * (double)(1LL << SIM_FRAC_BITS));
}

static double frac_to_ppm(int64_t f)
{
	return (double)f / (double)(1LL << SIM_FRAC_BITS) * 1e6;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Reads the parameters and, inside the same critical section, CLOCK_REALTIME. */
static inline void sim_read(const struct sim_shm *m, struct sim_params *p, int64_t *ref)
{
	struct sim_shm *w = (struct sim_shm *)m;
	uint64_t s1, s2;

	for (;;) {
		s1 = atomic_load_explicit(&w->seq, memory_order_acquire);
		if (s1 & 1) {
			cpu_relax();
			continue;
		}
		if (ref)
			*ref = clock_realtime_ns();
		p->t0 = atomic_load_explicit(&w->t0, memory_order_relaxed);
		p->phase = atomic_load_explicit(&w->phase, memory_order_relaxed);
		p->frac = atomic_load_explicit(&w->frac, memory_order_relaxed);
		p->freq = atomic_load_explicit(&w->freq, memory_order_relaxed);
		p->slew_start = atomic_load_explicit(&w->slew_start, memory_order_relaxed);
		p->slew_total = atomic_load_explicit(&w->slew_total, memory_order_relaxed);
		/* The loads above must complete before seq is read again. */
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&w->seq, memory_order_relaxed);
		if (s1 == s2)
			return;
	}
}

/* Takes the writers' lock (writers exclude each other with the CAS). */
static uint64_t sim_write_begin(struct sim_shm *m)
{
	uint64_t s;

	for (;;) {
		s = atomic_load_explicit(&m->seq, memory_order_relaxed);
		if (!(s & 1) &&
		    atomic_compare_exchange_weak_explicit(&m->seq, &s, s + 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			break;
		cpu_relax();
	}
	/* The odd sequence must be visible before any field changes. */
	atomic_thread_fence(memory_order_release);
	return s;
}

static void sim_write_end(struct sim_shm *m, uint64_t s)
{
	atomic_store_explicit(&m->seq, s + 2, memory_order_release);
}

static void sim_store(struct sim_shm *m, const struct sim_params *p)
{
	atomic_store_explicit(&m->t0, p->t0, memory_order_relaxed);
	atomic_store_explicit(&m->phase, p->phase, memory_order_relaxed);
	atomic_store_explicit(&m->frac, p->frac, memory_order_relaxed);
	atomic_store_explicit(&m->freq, p->freq, memory_order_relaxed);
	atomic_store_explicit(&m->slew_start, p->slew_start, memory_order_relaxed);
	atomic_store_explicit(&m->slew_total, p->slew_total, memory_order_relaxed);
}

/* The part of the slew done by @t, ns, signed like slew_total. */
static inline int64_t slew_done(const struct sim_params *p, int64_t t)
{
	int64_t dt = t - p->slew_start, done;

	if (!p->slew_total || dt <= 0)
		return 0;
	done = dt / SIM_NS_PER_SLEW;
	if (p->slew_total > 0)
		return done < p->slew_total ? done : p->slew_total;
	return done < -p->slew_total ? -done : p->slew_total;
}

/*
 * One step of the walk: about N(0, 1) * wander, from twelve 16-bit
 * uniforms (Irwin-Hall), drawn with splitmix64 indexed by (seed, k).
 * Integer only, so that every reader gets the same bits.
 */
static int64_t wander_step(uint64_t seed, int64_t k, int64_t wander)
{
	int64_t sum = 0;
	int i, j;

	for (i = 0; i < 3; i++) {
		uint64_t z = seed + (uint64_t)(k * 3 + i + 1) * 0x9e3779b97f4a7c15ULL;

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		for (j = 0; j < 4; j++)
			sum += (int64_t)((z >> (16 * j)) & 0xffff);
	}
	/* The sum of twelve has mean 12 * 65535 / 2 and sd ~65536. */
	return (int64_t)(((__int128)(sum - 393210) * wander) >> 16);
}

/* Moves the handle's walk to step k (from 0 when going back). */
static void wander_seek(struct sim_clock *s, int64_t k)
{
	const struct sim_shm *m = s->m;

	if (k < s->wk) {
		s->wk = 0;
		s->wf = 0;
		s->wacc = 0;
	}
	while (s->wk < k) {
		s->wacc += (__int128)s->wf * SIM_STEP_NS;
		s->wf += wander_step(m->seed, s->wk, m->wander);
		s->wk++;
	}
}

/* The wander's phase at @t, ns (0 before creation). */
static inline int64_t wander_at(struct sim_clock *s, int64_t t)
{
	int64_t dt = t - s->m->epoch, k;

	if (!s->m->wander || dt <= 0)
		return 0;
	k = dt / SIM_STEP_NS;
	wander_seek(s, k);
	return (int64_t)((s->wacc + (__int128)s->wf * (dt - k * SIM_STEP_NS)) >> SIM_FRAC_BITS);
}

/* e(t) without the wander: the linear part and the slew. */
static inline int64_t sim_e_base(const struct sim_params *p, int64_t t)
{
	__int128 lin = (__int128)p->freq * (t - p->t0) + p->frac;

	return p->phase + (int64_t)(lin >> SIM_FRAC_BITS) + slew_done(p, t);
}

static int64_t sim_now(struct clock *c)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);
	struct sim_params p;
	int64_t ref;

	sim_read(s->m, &p, &ref);
	c->last_ref = ref;
	return ref + sim_e_base(&p, ref) + wander_at(s, ref);
}

static int sim_true_error(struct clock *c, int64_t ref_ns, int64_t *e_ns)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);
	struct sim_params p;

	sim_read(s->m, &p, NULL);
	*e_ns = sim_e_base(&p, ref_ns) + wander_at(s, ref_ns);
	return 0;
}

/*
 * Begins a change: takes the lock, reads the parameters and moves the
 * base of the linear part and of the slew to @now, keeping e(now) exactly.
 */
static uint64_t sim_change_begin(struct sim_clock *s, struct sim_params *p, int64_t *now)
{
	uint64_t seq = sim_write_begin(s->m);
	__int128 lin;
	int64_t done;

	p->t0 = atomic_load_explicit(&s->m->t0, memory_order_relaxed);
	p->phase = atomic_load_explicit(&s->m->phase, memory_order_relaxed);
	p->frac = atomic_load_explicit(&s->m->frac, memory_order_relaxed);
	p->freq = atomic_load_explicit(&s->m->freq, memory_order_relaxed);
	p->slew_start = atomic_load_explicit(&s->m->slew_start, memory_order_relaxed);
	p->slew_total = atomic_load_explicit(&s->m->slew_total, memory_order_relaxed);

	*now = clock_realtime_ns();
	lin = (__int128)p->freq * (*now - p->t0) + p->frac;
	done = slew_done(p, *now);
	p->phase += (int64_t)(lin >> SIM_FRAC_BITS) + done;
	p->frac = (int64_t)(lin & SIM_FRAC_MASK);
	p->t0 = *now;
	p->slew_total -= done;
	p->slew_start = *now;
	return seq;
}

static int sim_writable(const struct sim_clock *s, char *err, size_t errlen)
{
	if (s->writable)
		return 0;
	snprintf(err, errlen, "clock '%s' is read-only to this user", s->c.name);
	return -EACCES;
}

static int sim_step(struct clock *c, int64_t ns, char *err, size_t errlen)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);
	struct sim_params p;
	int64_t now;
	uint64_t seq;
	int rc = sim_writable(s, err, errlen);

	if (rc)
		return rc;
	seq = sim_change_begin(s, &p, &now);
	p.phase += ns;
	sim_store(s->m, &p);
	sim_write_end(s->m, seq);
	return 0;
}

static int sim_slew(struct clock *c, int64_t ns, int64_t *old_ns, char *err, size_t errlen)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);
	struct sim_params p;
	int64_t now;
	uint64_t seq;
	int rc = sim_writable(s, err, errlen);

	if (rc)
		return rc;
	seq = sim_change_begin(s, &p, &now);
	if (old_ns)
		*old_ns = p.slew_total;
	p.slew_total = ns;
	sim_store(s->m, &p);
	sim_write_end(s->m, seq);
	return 0;
}

static int sim_slew_left(struct clock *c, int64_t *ns, char *err, size_t errlen)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);
	struct sim_params p;
	int64_t ref;

	sim_read(s->m, &p, &ref);
	*ns = p.slew_total - slew_done(&p, ref);
	return 0;
}

static int sim_freq_get(struct clock *c, double *ppm, char *err, size_t errlen)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);
	struct sim_params p;

	sim_read(s->m, &p, NULL);
	*ppm = frac_to_ppm(p.freq);
	return 0;
}

static int sim_freq_set(struct clock *c, double ppm, int relative, char *err, size_t errlen)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);
	struct sim_params p;
	int64_t now, f;
	uint64_t seq;
	int rc = sim_writable(s, err, errlen);

	if (rc)
		return rc;
	if (!(ppm >= -1e5 && ppm <= 1e5)) {
		snprintf(err, errlen, "frequency %g ppm out of range (+-100000)", ppm);
		return -ERANGE;
	}
	f = ppm_to_frac(ppm);
	seq = sim_change_begin(s, &p, &now);
	p.freq = relative ? p.freq + f : f;
	sim_store(s->m, &p);
	sim_write_end(s->m, seq);
	return 0;
}

int clock_sim_state(struct clock *c, struct clock_sim_state *st, char *err, size_t errlen)
{
	struct sim_clock *s;
	struct sim_params p;
	int64_t ref;

	if (c->ops->now != sim_now) {
		snprintf(err, errlen, "clock '%s' is not a simulated clock", c->name);
		return -ENOTSUP;
	}
	s = container_of(c, struct sim_clock, c);
	sim_read(s->m, &p, &ref);
	memset(st, 0, sizeof(*st));
	st->ref_ns = ref;
	st->error_ns = sim_e_base(&p, ref) + wander_at(s, ref);
	st->slew_left_ns = p.slew_total - slew_done(&p, ref);
	st->freq_ppm = frac_to_ppm(p.freq);
	st->wander_ppm = frac_to_ppm(s->m->wander);
	st->wander_freq_ppm = s->m->wander && ref > s->m->epoch ? frac_to_ppm(s->wf) : 0;
	st->seed = s->m->seed;
	return 0;
}

static void sim_close(struct clock *c)
{
	struct sim_clock *s = container_of(c, struct sim_clock, c);

	munmap(s->m, sizeof(*s->m));
	free(s);
}

static const struct clock_ops sim_ops = {
	.now = sim_now,
	.close = sim_close,
	.step = sim_step,
	.slew = sim_slew,
	.slew_left = sim_slew_left,
	.freq_get = sim_freq_get,
	.freq_set = sim_freq_set,
	.true_error = sim_true_error,
};

struct clock *clock_sim_open(const char *path, char *err, size_t errlen)
{
	struct sim_clock *s;
	struct stat st;
	void *m;
	int fd, writable = 1;

	if (!*path) {
		snprintf(err, errlen, "clock 'sim:' needs a file name (sim:PATH)");
		return NULL;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EROFS)) {
		writable = 0;
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		snprintf(err, errlen, "clock 'sim:%s': %s%s", path, strerror(errno),
			 errno == ENOENT ? " (make it with clockstep --create)" : "");
		goto no_open;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "clock 'sim:%s': %s", path, strerror(errno));
		goto no_map;
	}
	if (st.st_size != (off_t)sizeof(struct sim_shm)) {
		snprintf(err, errlen, "clock 'sim:%s': not a sim clock file (size %lld)", path,
			 (long long)st.st_size);
		goto no_map;
	}
	m = mmap(NULL, sizeof(struct sim_shm), PROT_READ | (writable ? PROT_WRITE : 0),
		 MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "clock 'sim:%s': mmap: %s", path, strerror(errno));
		goto no_map;
	}
	close(fd);
	if (((struct sim_shm *)m)->magic != SIM_MAGIC ||
	    ((struct sim_shm *)m)->version != SIM_VERSION ||
	    ((struct sim_shm *)m)->size != sizeof(struct sim_shm)) {
		snprintf(err, errlen, "clock 'sim:%s': not a sim clock file (bad magic or version)",
			 path);
		goto bad_file;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		goto bad_file;
	}
	s->m = m;
	s->writable = writable;
	s->c.ops = &sim_ops;
	return &s->c;

bad_file:
	munmap(m, sizeof(struct sim_shm));
	return NULL;
no_map:
	close(fd);
no_open:
	return NULL;
}

int clock_sim_create(const char *path, const struct clock_sim_params *p,
		     char *err, size_t errlen)
{
	struct sim_shm *m;
	char *tmp;
	int fd, rc;

	if (!(p->freq_ppm >= -1e5 && p->freq_ppm <= 1e5) ||
	    !(p->wander_ppm >= 0 && p->wander_ppm <= 1e3)) {
		snprintf(err, errlen, "sim clock parameters out of range");
		return -ERANGE;
	}
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		goto no_tmp;
	}
	if (fchmod(fd, 0644) < 0 || ftruncate(fd, sizeof(*m)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot size '%s': %s", tmp, strerror(errno));
		goto no_size;
	}
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		rc = -errno;
		snprintf(err, errlen, "cannot map '%s': %s", tmp, strerror(errno));
		goto no_size;
	}
	m->magic = SIM_MAGIC;
	m->version = SIM_VERSION;
	m->size = sizeof(*m);
	m->wander = ppm_to_frac(p->wander_ppm);
	m->seed = p->seed;
	m->epoch = clock_realtime_ns();
	atomic_store(&m->t0, m->epoch);
	atomic_store(&m->phase, p->offset_ns);
	atomic_store(&m->freq, ppm_to_frac(p->freq_ppm));
	munmap(m, sizeof(*m));
	/* A new inode renamed into place: readers of an old clock keep theirs. */
	if (rename(tmp, path) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		goto no_size;
	}
	close(fd);
	free(tmp);
	return 0;

no_size:
	close(fd);
	unlink(tmp);
no_tmp:
	free(tmp);
	return rc;
}
