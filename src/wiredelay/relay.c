/* SPDX-License-Identifier: ISC */
/*
 * relay.c - the two directions: each frame that arrives on one port is
 * queued with its due time, its receive stamp plus the direction's
 * delay, and sent out of the other port when that time comes.
 *
 * A thread per direction, so that one direction's send never waits on
 * the other's (and a burst one way does not delay the other).  Each
 * thread waits on its input socket and a timer (timerfd, CLOCK_REALTIME
 * as the stamps are, absolute, no slack) together: frames keep being
 * taken into the queue while the head waits, so the queue, not the
 * socket's buffer, is what fills and drops.  A queue is FIFO and its due
 * times rise with arrival, so a direction never reorders; a frame that
 * finds its queue full is dropped and counted, as a tail-drop queue does.
 *
 * A timer fires late: tens of microseconds here, idle or not (the wake-up
 * of a sleeping thread).  So the timer is set a margin before the head's
 * due time and the rest is spun, the clock read until it is due.  The
 * margin is learned from the run itself: the 95th percentile of how late
 * the timer fired, its last WD_LATE_N times, so that about one wake in
 * twenty still comes after the due time (the 99th spun about ten times as
 * long, here, for a tail that the machine's other work hid).  Spinning is
 * bounded: at most spin_max per frame (--spin), and at most an eighth of
 * the time per direction (WD_SPIN_SHARE), after which the timer alone
 * waits, set for the due time.  The timer, not clock_nanosleep(), waits,
 * so that frames keep being taken meanwhile; the two woke alike here.
 *
 * How exactly the delay was held is measured per frame: its transmit
 * stamp (port.c) less its due time.  Beside it, split: the clock read
 * just before the send less the due time (how late the send began), the
 * transmit stamp less that clock (the send itself), and for each frame
 * taken, the clock less its receive stamp (how long the kernel took to
 * hand it over: a frame handed over after its due time leaves late
 * whatever the relay does, and is counted).
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "opt_units.h"
#include "wiredelay.h"

volatile sig_atomic_t wd_stop;

/* Frames taken from the socket before the head is looked at again. */
#define WD_BATCH	64
/* The share of the time a direction may spin: 1/WD_SPIN_SHARE. */
#define WD_SPIN_SHARE	8
/* The margin: this percentile of the timer's recent lateness. */
#define WD_MARGIN_PCT	95
/* Spin credit saved up at most: this many of the longest spins. */
#define WD_SPIN_SAVE	8
/* The margin is relearned every this many timer wakes. */
#define WD_LEARN_EVERY	16

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * NTPX_NS_PER_SEC + t.tv_nsec;
}

static void add_max(struct hist *h, int64_t *max, int64_t v)
{
	hist_add(h, v);
	if (v > *max)
		*max = v;
}

int wd_dir_init(struct wd_dir *d, const char *name, struct wd_port *in,
		struct wd_port *out, int64_t delay, int64_t spin_max, size_t qbytes)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->in = in;
	d->out = out;
	d->delay = delay;
	d->spin_max = spin_max;
	d->txsync = 1;
	d->hold_min = INT64_MAX;
	d->hold_max = d->wake_max = d->send_max = d->deliver_max = INT64_MIN;
	d->timer_max = INT64_MIN;
	d->stopfd = -1;
	hist_init(&d->hold);
	hist_init(&d->wake);
	hist_init(&d->send);
	hist_init(&d->deliver);
	hist_init(&d->timer);
	return pktq_init(&d->q, qbytes, WD_FRAME_MAX);
}

void wd_dir_free(struct wd_dir *d)
{
	pktq_free(&d->q);
}

/* Takes what waits on d's input into its queue: 0, or -1 (errno). */
static int dir_take(struct wd_dir *d)
{
	for (int i = 0; i < WD_BATCH; i++) {
		unsigned char *p = pktq_reserve(&d->q, WD_FRAME_MAX);
		int64_t rx, t;
		int trunc;
		ssize_t n;

		if (!p) {
			n = wd_port_recv(d->in, d->scratch, sizeof(d->scratch), &rx, &trunc);
			if (n <= 0)
				return (int)n;
			d->drop_full++;
			continue;
		}
		n = wd_port_recv(d->in, p, WD_FRAME_MAX, &rx, &trunc);
		if (n <= 0)
			return (int)n;
		if (trunc) {
			d->drop_big++;
			continue;
		}
		t = now_ns();
		if (!rx) {
			rx = t;
			d->unstamped++;
		}
		add_max(&d->deliver, &d->deliver_max, t - rx);
		if (t > rx + d->delay)
			d->late_in++;
		pktq_commit(&d->q, (uint32_t)n, rx, rx + d->delay);
		if (d->q.frames > d->max_frames)
			d->max_frames = d->q.frames;
		if (d->q.bytes > d->max_bytes)
			d->max_bytes = d->q.bytes;
	}
	return 0;
}

/* The spin credit at @t: a share of the time since it was last topped
   up, saved up to a bound. */
static void credit_top(struct wd_dir *d, int64_t t)
{
	int64_t cap = WD_SPIN_SAVE * d->spin_max;

	if (t > d->credit_at) {
		d->credit += (t - d->credit_at) / WD_SPIN_SHARE;
		d->credit_at = t;
	}
	if (d->credit > cap)
		d->credit = cap;
}

/* Sends d's frames that are due, spinning for those due within the
   margin while the spin credit lasts. */
static void dir_send(struct wd_dir *d)
{
	struct pktq_frame *f;
	int64_t t = now_ns();

	while ((f = pktq_peek(&d->q))) {
		if (f->due > t) {
			int64_t left = f->due - t, t0 = t;

			credit_top(d, t);
			if (left > d->margin || left > d->credit)
				break;
			while ((t = now_ns()) < f->due)
				;
			d->spun += t - t0;
			d->credit -= t - t0;
			d->spins++;
		}
		if (wd_port_send(d->out, f->data, f->len)) {
			/* The kernel may or may not have numbered it: the
			   stamps can no longer be matched to their sends. */
			d->send_errors++;
			d->txsync = 0;
		} else {
			d->txdue[d->txid & (WD_TXRING - 1)] = f->due;
			d->txat[d->txid & (WD_TXRING - 1)] = t;
			d->txid++;
			add_max(&d->wake, &d->wake_max, t - f->due);
			d->frames++;
			d->bytes += f->len;
		}
		pktq_pop(&d->q);
		t = now_ns();
	}
}

/* The transmit stamps waiting on d's output, each held against its due
   time and against the clock just before its send. */
static void dir_stamps(struct wd_dir *d)
{
	uint32_t id;
	int64_t ts;

	while (wd_port_txstamp(d->out, &id, &ts) == 1) {
		/* Sends ago: 1 for the last one.  Older than the ring holds,
		   or not one of ours, is lost. */
		uint32_t ago = (uint32_t)d->txid - id;
		int64_t e;

		if (!d->txsync || ago == 0 || ago > WD_TXRING) {
			d->stamps_lost++;
			continue;
		}
		e = ts - d->txdue[id & (WD_TXRING - 1)];
		add_max(&d->hold, &d->hold_max, e);
		if (e < d->hold_min)
			d->hold_min = e;
		add_max(&d->send, &d->send_max, ts - d->txat[id & (WD_TXRING - 1)]);
		d->stamped++;
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The timer fired @late ns after it was set for: the margin is
   relearned, now and then, as the WD_MARGIN_PCT percentile of the last
   wakes. */
static void learn(struct wd_dir *d, int64_t late)
{
	int64_t s[WD_LATE_N];
	size_t n;

	add_max(&d->timer, &d->timer_max, late);
	d->late[d->nlate++ % WD_LATE_N] = late;
	if (!d->spin_max || d->nlate % WD_LEARN_EVERY)
		return;
	n = d->nlate < WD_LATE_N ? d->nlate : WD_LATE_N;
	memcpy(s, d->late, n * sizeof(s[0]));
	qsort(s, n, sizeof(s[0]), cmp64);
	d->margin = s[(n - 1) * WD_MARGIN_PCT / 100];
	if (d->margin > d->spin_max)
		d->margin = d->spin_max;
	if (d->margin < 0)
		d->margin = 0;
}

/* A receive failed: an interface that went down comes back; one that is
   gone ends the relay. */
static int take_failed(struct wd_dir *d)
{
	if (errno == ENETDOWN && (int)if_nametoindex(d->in->ifname) == d->in->ifindex)
		return 0;
	if (errno == ENETDOWN || errno == ENXIO || errno == ENODEV)
		snprintf(d->err, sizeof(d->err), "%s: the interface is gone", d->in->ifname);
	else
		snprintf(d->err, sizeof(d->err), "%s: receive: %s", d->in->ifname, strerror(errno));
	return -1;
}

/* One direction, until its stop file descriptor is readable. */
static void *dir_run(void *arg)
{
	struct wd_dir *d = arg;
	struct pollfd pf[4];
	int64_t armed = 0;
	int tfd;

	tfd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (tfd < 0) {
		snprintf(d->err, sizeof(d->err), "timerfd: %s", strerror(errno));
		d->rc = -1;
		goto out;
	}
	d->credit_at = now_ns();
	pf[0] = (struct pollfd){ .fd = d->in->fd, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = d->out->txfd, .events = 0 };	/* POLLERR: stamps */
	pf[2] = (struct pollfd){ .fd = tfd, .events = POLLIN };
	pf[3] = (struct pollfd){ .fd = d->stopfd, .events = POLLIN };
	for (;;) {
		struct pktq_frame *f;
		int64_t next;

		dir_send(d);
		/* A veth stamps the frame as send() hands it over. */
		dir_stamps(d);
		/* Set the margin early when there is credit to spin it
		   off (it only grows meanwhile), else for the due time
		   itself; 0 disarms. */
		f = pktq_peek(&d->q);
		next = 0;
		if (f) {
			credit_top(d, now_ns());
			next = f->due - (d->margin <= d->credit ? d->margin : 0);
		}
		if (next != armed) {
			struct itimerspec its = { .it_value = {
				.tv_sec = next / NTPX_NS_PER_SEC,
				.tv_nsec = next % NTPX_NS_PER_SEC } };

			timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
			armed = next;
		}
		if (poll(pf, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(d->err, sizeof(d->err), "poll: %s", strerror(errno));
			d->rc = -1;
			break;
		}
		if (pf[3].revents)
			break;
		if (pf[2].revents) {
			uint64_t x;

			/* Fired: a one-shot timer is disarmed. */
			if (read(tfd, &x, sizeof(x)) == sizeof(x)) {
				learn(d, now_ns() - armed);
				armed = 0;
			}
		}
		if (pf[1].revents & POLLERR)
			dir_stamps(d);
		if ((pf[0].revents & (POLLIN | POLLERR)) && dir_take(d) && take_failed(d)) {
			d->rc = -1;
			break;
		}
	}
	dir_stamps(d);
	close(tfd);
out:
	if (d->rc) {
		uint64_t one = 1;

		/* The other direction and the caller stop too. */
		if (write(d->stopfd, &one, sizeof(one)) != sizeof(one))
			abort();
	}
	return NULL;
}

int wd_relay(struct wd_dir *ab, struct wd_dir *ba, uint64_t sockdrops[2],
	     char *err, size_t errlen)
{
	struct wd_dir *dirs[2] = { ab, ba };
	struct pollfd pf;
	sigset_t none;
	uint64_t one = 1;
	int stopfd, started = 0, rc = 0;

	stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stopfd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return -1;
	}
	for (; started < 2; started++) {
		int e;

		dirs[started]->stopfd = stopfd;
		/* SIGINT and SIGTERM stay blocked in the threads (they
		   inherit the caller's mask and scheduling). */
		e = pthread_create(&dirs[started]->thread, NULL, dir_run, dirs[started]);
		if (e) {
			snprintf(err, errlen, "thread: %s", strerror(e));
			rc = -1;
			break;
		}
	}
	sigemptyset(&none);
	pf = (struct pollfd){ .fd = stopfd, .events = POLLIN };
	/* The signals are blocked but here, so that one that comes between
	   the check of wd_stop and the wait ends the wait; a direction that
	   fails makes stopfd readable. */
	while (!rc && !wd_stop) {
		int n = ppoll(&pf, 1, NULL, &none);

		if (n > 0)
			break;
		if (n < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			rc = -1;
		}
	}
	if (write(stopfd, &one, sizeof(one)) != sizeof(one))
		abort();
	for (int i = 0; i < started; i++) {
		pthread_join(dirs[i]->thread, NULL);
		if (dirs[i]->rc && !rc) {
			snprintf(err, errlen, "%s", dirs[i]->err);
			rc = -1;
		}
	}
	sockdrops[0] += wd_port_drops(ab->in);
	sockdrops[1] += wd_port_drops(ba->in);
	close(stopfd);
	return rc;
}
