/* SPDX-License-Identifier: ISC */
/*
 * tests/unit/clock_sim.c - the simulated clock: e(t) follows its
 * parameters exactly, steps and slews (adjtime semantics, 500 ppm) do what
 * they say, the wander is the same for every reader, and readers racing a
 * writer never see a torn state.
 *
 * Every test works on a sim: file in a private temporary directory; none
 * touches the host clock (realtime is only checked to refuse).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "clock_sim_private.h"
#include "opt_units.h"


static char dir[64];
static char name[128];		/* "sim:DIR/clk" */

static int setup(void **state)
{
	strcpy(dir, "/tmp/ntpx-clock-sim.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(name, sizeof(name), "sim:%s/clk", dir);
	return 0;
}

/* The clock file may not have been made (a test of what is refused); the
 * directory must go, which it does only when nothing else is left in it. */
static int teardown(void **state)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/clk", dir);
	if (unlink(path) && errno != ENOENT) {
		print_error("unlink %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (rmdir(dir)) {
		print_error("rmdir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static struct clock *make(int64_t offset, double ppm, double wander, uint64_t seed)
{
	struct clock_sim_params p = { .offset_ns = offset, .freq_ppm = ppm,
				      .wander_ppm = wander, .seed = seed };
	char err[256];
	struct clock *c;

	if (clock_sim_create(name + 4, &p, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	c = clock_open(name, err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	return c;
}

static int64_t e_at(struct clock *c, int64_t ref)
{
	int64_t e;

	assert_int_equal(clock_true_error(c, ref, &e), 0);
	return e;
}

static void test_offset_and_freq(void **state)
{
	struct clock *c = make(-120 * NTPX_NS_PER_SEC, 25, 0, 0);
	int64_t t, r, now = clock_now(c);

	/* Reading: the clock is its reference plus e, e from the parameters. */
	r = clock_last_ref(c);
	assert_true(r > 0);
	assert_int_equal(now - r, e_at(c, r));
	assert_true(llabs(now - r + 120 * NTPX_NS_PER_SEC) < NTPX_NS_PER_MS);	/* 25 ppm for < 40 s */
	/* 25 ppm: exactly 25000 ns per second, 250000 per ten. */
	t = r + 3 * NTPX_NS_PER_SEC;
	assert_true(llabs(e_at(c, t + NTPX_NS_PER_SEC) - e_at(c, t) - 25000) <= 1);
	assert_true(llabs(e_at(c, t + 10 * NTPX_NS_PER_SEC) - e_at(c, t) - 250000) <= 1);
	clock_close(c);
}

/*
 * A kernel stamp (CLOCK_REALTIME) converted to the sim clock is, to the
 * ns, what a reading of the clock at that instant gives: with offset,
 * frequency, wander and a slew under way.  realtime leaves it as it is.
 */
static void test_from_realtime(void **state)
{
	struct clock *c = make(1500 * NTPX_NS_PER_MS, 37.5, 0.02, 11);
	struct clock *rt = clock_open("realtime", (char[64]){0}, 64);
	char err[256];
	int i;

	assert_int_equal(clock_slew(c, 3000000, NULL, err, sizeof(err)), 0);
	for (i = 0; i < 1000; i++) {
		int64_t now = clock_now(c), r = clock_last_ref(c);

		assert_int_equal(clock_from_realtime(c, r), now);
	}
	/* Across the wander's second boundaries too. */
	for (i = 0; i < 50; i++) {
		int64_t r = clock_realtime_ns() + (int64_t)i * 999999937;

		assert_int_equal(clock_from_realtime(c, r), r + e_at(c, r));
	}
	assert_non_null(rt);
	assert_int_equal(clock_from_realtime(rt, 1234567890123456789LL), 1234567890123456789LL);
	clock_close(rt);
	clock_close(c);
}

static void test_step(void **state)
{
	struct clock *c = make(0, 10, 0, 0);
	char err[256];
	int64_t r = clock_realtime_ns(), before = e_at(c, r);

	assert_int_equal(clock_step(c, 1500 * NTPX_NS_PER_MS, err, sizeof(err)), 0);
	assert_true(llabs(e_at(c, r) - before - 1500 * NTPX_NS_PER_MS) <= 1);
	assert_int_equal(clock_step(c, -3 * NTPX_NS_PER_SEC, err, sizeof(err)), 0);
	assert_true(llabs(e_at(c, r) - before + 1500 * NTPX_NS_PER_MS) <= 1);
	clock_close(c);
}

static void test_slew_rate(void **state)
{
	struct clock *c = make(0, 0, 0, 0);
	struct clock_sim_state st;
	char err[256];
	int64_t left, r0, e0;

	assert_int_equal(clock_slew(c, 250 * NTPX_NS_PER_MS, NULL, err, sizeof(err)), 0);
	assert_int_equal(clock_sim_state(c, &st, err, sizeof(err)), 0);
	r0 = st.ref_ns;
	e0 = st.error_ns;
	/* At 500 ppm: 5 ms after 10 s, 250 ms only after 500 s, then no more. */
	assert_true(llabs(e_at(c, r0 + 10 * NTPX_NS_PER_SEC) - e0 - 5000000) <= 1);
	assert_true(llabs(e_at(c, r0 + 2 * NTPX_NS_PER_SEC) - e0 - NTPX_NS_PER_MS) <= 1);
	assert_true(llabs(e_at(c, r0 + 600 * NTPX_NS_PER_SEC) - 250 * NTPX_NS_PER_MS) <= 1);
	assert_int_equal(clock_slew_left(c, &left, err, sizeof(err)), 0);
	assert_true(left <= 250 * NTPX_NS_PER_MS && left > 249 * NTPX_NS_PER_MS);

	/* adjtime semantics: the new slew replaces the rest of the old one. */
	assert_int_equal(clock_slew(c, -2 * NTPX_NS_PER_MS, &left, err, sizeof(err)), 0);
	assert_true(left <= 250 * NTPX_NS_PER_MS && left > 249 * NTPX_NS_PER_MS);
	assert_int_equal(clock_sim_state(c, &st, err, sizeof(err)), 0);
	assert_true(llabs(e_at(c, st.ref_ns + 100 * NTPX_NS_PER_SEC) - (st.error_ns - 2000000)) <= 1);
	assert_true(llabs(st.slew_left_ns + 2000000) <= 1000);
	clock_close(c);
}

static void test_freq_set_add(void **state)
{
	struct clock *c = make(0, 3, 0, 0);
	char err[256];
	double ppm;
	int64_t r;

	assert_int_equal(clock_freq_get(c, &ppm, err, sizeof(err)), 0);
	assert_true(ppm > 2.999999 && ppm < 3.000001);
	assert_int_equal(clock_freq_add(c, -50, err, sizeof(err)), 0);
	assert_int_equal(clock_freq_get(c, &ppm, err, sizeof(err)), 0);
	assert_true(ppm > -47.000001 && ppm < -46.999999);
	r = clock_realtime_ns() + NTPX_NS_PER_SEC;
	assert_true(llabs(e_at(c, r + NTPX_NS_PER_SEC) - e_at(c, r) + 47000) <= 1);
	assert_int_equal(clock_freq_set(c, 500, err, sizeof(err)), 0);
	assert_true(llabs(e_at(c, r + NTPX_NS_PER_SEC) - e_at(c, r) - 500000) <= 1);
	assert_int_equal(clock_freq_set(c, 2e5, err, sizeof(err)), -ERANGE);
	clock_close(c);
}

/* Two handles, any order of reads: the same e(t), to the bit. */
static void test_wander_deterministic(void **state)
{
	struct clock *a = make(0, 0, 0.05, 7);
	struct clock *b = clock_open(name, (char[64]){0}, 64);
	int64_t r = clock_realtime_ns(), ea[4];
	int64_t ts[4] = { r + 3600 * NTPX_NS_PER_SEC, r + 5 * NTPX_NS_PER_SEC,
			   r + 7200 * NTPX_NS_PER_SEC + 17, r + 100 * NTPX_NS_PER_SEC };
	int i;

	assert_non_null(b);
	for (i = 0; i < 4; i++)
		ea[i] = e_at(a, ts[i]);
	for (i = 3; i >= 0; i--)
		assert_int_equal(e_at(b, ts[i]), ea[i]);
	/* It does wander: a random walk of 0.05 ppm/s for an hour is not 0. */
	assert_true(llabs(ea[0]) > 1000);
	clock_close(a);
	clock_close(b);

	/* Another seed, another walk. */
	a = make(0, 0, 0.05, 8);
	assert_true(e_at(a, ts[0]) != ea[0]);
	clock_close(a);
}

static void test_open_errors(void **state)
{
	char err[256], path[160];
	FILE *f;

	assert_null(clock_open("sim:/nonexistent/clk", err, sizeof(err)));
	assert_non_null(strstr(err, "No such file"));
	snprintf(path, sizeof(path), "%s/junk", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not a clock\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "sim:%s/junk", dir);
	assert_null(clock_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "not a sim clock"));
	assert_int_equal(unlink(path + 4), 0);
}

static void test_realtime_refuses(void **state)
{
	char err[256];
	struct clock *c = clock_open("realtime", err, sizeof(err));
	int64_t e;

	assert_non_null(c);
	/* Without clock_allow_system() nothing reaches the kernel. */
	assert_int_equal(clock_step(c, NTPX_NS_PER_SEC, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "refusing"));
	assert_int_equal(clock_slew(c, NTPX_NS_PER_SEC, NULL, err, sizeof(err)), -EPERM);
	assert_int_equal(clock_freq_set(c, 1, err, sizeof(err)), -EPERM);
	assert_int_equal(clock_true_error(c, 0, &e), -ENOTSUP);
	clock_close(c);
}

/*
 * Torn reads.  The clock runs 10% fast (1e5 ppm) so that every re-base
 * moves t0, phase and frac together by a lot; a writer thread steps it by
 * +D and -D as fast as it can.  A consistent read gives e(ref) equal to the
 * model E0 + 0.1 (ref - R0), or that plus D, within rounding; a read that
 * mixed an old t0 with a new phase (or frac) is off by 0.1 times the time
 * between two re-bases, tens of ns, and is counted.
 */
struct torn {
	struct clock *w;
	int64_t e0, r0, d;
	volatile int stop;
	long reads, bad, writes;
	int64_t worst;
};

static void *torn_writer(void *arg)
{
	struct torn *t = arg;
	char err[256];

	while (!t->stop) {
		if (clock_step(t->w, t->d, err, sizeof(err)) ||
		    clock_step(t->w, -t->d, err, sizeof(err)))
			break;
		t->writes += 2;
	}
	return NULL;
}

static void torn_check(struct torn *t, struct clock *c, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		int64_t now = clock_now(c), ref = clock_last_ref(c);
		int64_t dev = (now - ref) - (t->e0 + (ref - t->r0) / 10);

		if (llabs(dev) > 3 && llabs(dev - t->d) > 3) {
			t->bad++;
			if (llabs(dev) < llabs(t->worst) || !t->worst)
				t->worst = dev;
		}
		t->reads++;
	}
}

static void test_no_torn_reads(void **state)
{
	struct torn t = { .d = 1000 * NTPX_NS_PER_SEC };
	struct clock_sim_state st;
	struct clock *r;
	pthread_t th;
	char err[256];
	int64_t end;

	t.w = make(0, 1e5, 0, 0);
	r = clock_open(name, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(clock_sim_state(r, &st, err, sizeof(err)), 0);
	t.e0 = st.error_ns;
	t.r0 = st.ref_ns;
	assert_int_equal(pthread_create(&th, NULL, torn_writer, &t), 0);
	end = clock_monotonic_ns() + NTPX_NS_PER_SEC / 2;
	while (clock_monotonic_ns() < end)
		torn_check(&t, r, 1000);
	t.stop = 1;
	pthread_join(th, NULL);
	print_message("# %ld reads, %ld writes, %ld torn (closest %lld ns)\n",
		      t.reads, t.writes, t.bad, (long long)t.worst);
	/* The race has to have been run for the result to mean anything. */
	assert_true(t.writes > 1000);
	assert_int_equal(t.bad, 0);
	clock_close(r);
	clock_close(t.w);
}


/*
 * The same across processes, as clockstep and a probe run: a forked child
 * steps the clock +D/-D for 0.4 s through its own mapping while this
 * process reads, and nothing but the two states may be read.  That both
 * were read during the race is made sure of, not left to the scheduler
 * (on a busy machine the child can run only while this process does not):
 * after each burst of steps the child leaves the clock at +D until this
 * process has read it there, and at the end at 0 likewise, through a
 * shared word.  (On x86 a reader without the seqlock rarely tears across
 * processes; the threaded test above and the stuck-writer test below are
 * the ones that fail when either side of the seqlock is removed.)
 */
struct handshake {
	atomic_int want;	/* the state the child waits to see read: 1 = +D, 0 = 0 */
	atomic_int seen;	/* set by the reader once it read that state */
};

/* The child: waits (5 s at most) until the reader has read @state. */
static int hold_until_read(struct handshake *h, int state)
{
	int64_t give_up = clock_monotonic_ns() + 5 * NTPX_NS_PER_SEC;

	atomic_store(&h->seen, 0);
	atomic_store(&h->want, state);
	while (!atomic_load(&h->seen))
		if (clock_monotonic_ns() > give_up)
			return -1;
	atomic_store(&h->want, -1);
	return 0;
}

static void test_no_torn_reads_across_processes(void **state)
{
	struct torn t = { .d = 1000 * NTPX_NS_PER_SEC };
	struct clock_sim_state st;
	struct handshake *h;
	struct clock *r;
	char err[256];
	long seen[2] = { 0, 0 };
	int status;
	pid_t pid;

	r = make(0, 1e5, 0, 0);
	assert_int_equal(clock_sim_state(r, &st, err, sizeof(err)), 0);
	t.e0 = st.error_ns;
	t.r0 = st.ref_ns;
	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(h != MAP_FAILED);
	atomic_store(&h->want, -1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct clock *w = clock_open(name, err, sizeof(err));
		int64_t end = clock_monotonic_ns() + 4 * NTPX_NS_PER_SEC / 10;
		int i;

		if (!w)
			_exit(2);
		do {
			for (i = 0; i < 1000; i++)
				if (clock_step(w, t.d, err, sizeof(err)) ||
				    clock_step(w, -t.d, err, sizeof(err)))
					_exit(1);
			if (clock_step(w, t.d, err, sizeof(err)) || hold_until_read(h, 1) ||
			    clock_step(w, -t.d, err, sizeof(err)))
				_exit(3);
		} while (clock_monotonic_ns() < end);
		_exit(hold_until_read(h, 0) ? 3 : 0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		int i;

		for (i = 0; i < 1000; i++) {
			int want = atomic_load(&h->want);
			int64_t now = clock_now(r), ref = clock_last_ref(r);
			int64_t dev = (now - ref) - (t.e0 + (ref - t.r0) / 10);
			int k = llabs(dev) <= 3 ? 0 : llabs(dev - t.d) <= 3 ? 1 : -1;

			if (k < 0) {
				t.bad++;
				continue;
			}
			seen[k]++;
			if (k == want)
				atomic_store(&h->seen, 1);
		}
	}
	print_message("# %ld + %ld reads in the two states, %ld torn\n", seen[0], seen[1], t.bad);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(seen[0] > 0 && seen[1] > 0);
	assert_int_equal(t.bad, 0);
	munmap(h, sizeof(*h));
	clock_close(r);
}

/*
 * A writer stuck inside the seqlock (the test plays it on the file's
 * layout): the sequence is odd and the phase half-written.  A reader must
 * wait rather than return the half-written clock, and then see the state
 * the writer finishes with.
 */
struct stuck {
	struct clock *c;
	int64_t e;
	atomic_int done;
};

static void *stuck_reader(void *arg)
{
	struct stuck *s = arg;
	int64_t now = clock_now(s->c);

	s->e = now - clock_last_ref(s->c);
	atomic_store(&s->done, 1);
	return NULL;
}

static void test_reader_waits_for_writer(void **state)
{
	struct clock *c = make(5 * NTPX_NS_PER_SEC, 0, 0, 0);
	struct stuck s = { .c = c };
	struct sim_shm *m;
	pthread_t th;
	uint64_t seq;
	int64_t phase, spin_end;
	int fd;

	fd = open(name + 4, O_RDWR);
	assert_true(fd >= 0);
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);

	seq = atomic_load(&m->seq);
	atomic_store(&m->seq, seq + 1);
	phase = atomic_load(&m->phase);
	atomic_store(&m->phase, 777 * NTPX_NS_PER_SEC);		/* half-written garbage */
	assert_int_equal(pthread_create(&th, NULL, stuck_reader, &s), 0);
	/* Give the reader every chance to run: it must still be waiting. */
	spin_end = clock_monotonic_ns() + NTPX_NS_PER_SEC / 20;
	while (clock_monotonic_ns() < spin_end)
		sched_yield();
	assert_int_equal(atomic_load(&s.done), 0);
	atomic_store(&m->phase, phase + 2 * NTPX_NS_PER_SEC);	/* what the writer meant */
	atomic_store(&m->seq, seq + 2);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&s.done), 1);
	assert_int_equal(s.e, 7 * NTPX_NS_PER_SEC);
	munmap(m, sizeof(*m));
	clock_close(c);
}

/* Two writers at once (two handles, two threads) lose no update. */
struct adder {
	struct clock *c;
	int n, fails;
};

static void *adder(void *arg)
{
	struct adder *a = arg;
	char err[256];
	int i;

	for (i = 0; i < a->n; i++)
		if (clock_step(a->c, 1, err, sizeof(err)))
			a->fails++;
	return NULL;
}

static void test_writers_exclude(void **state)
{
	struct clock *c = make(0, 0, 0, 0);
	struct adder a[2] = { { .n = 200000 }, { .n = 200000 } };
	pthread_t th[2];
	int i;

	for (i = 0; i < 2; i++) {
		a[i].c = clock_open(name, (char[64]){0}, 64);
		assert_non_null(a[i].c);
		assert_int_equal(pthread_create(&th[i], NULL, adder, &a[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].fails, 0);
		clock_close(a[i].c);
	}
	assert_int_equal(e_at(c, clock_realtime_ns()), 400000);
	clock_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_offset_and_freq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_realtime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slew_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freq_set_add, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wander_deterministic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_realtime_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_torn_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_torn_reads_across_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_waits_for_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writers_exclude, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
