/* SPDX-License-Identifier: ISC */
/*
 * relay.c - the two directions: each frame that arrives on one port is
 * queued with its due time, its receive stamp plus the direction's
 * delay, and sent out of the other port when that time comes.
 *
 * One thread, one loop: the frames waiting on either socket are taken
 * into their direction's queue, the oldest frame of each queue is sent
 * when due, and a timer (timerfd, CLOCK_REALTIME as the stamps are, at
 * the earliest due time; a timerfd's hrtimer has no slack) wakes the loop
 * for the next.  A queue is FIFO and its due times rise with arrival, so
 * a direction never reorders; a frame that finds its queue full is
 * dropped and counted, as a tail-drop queue does.
 *
 * How exactly the delay was held is measured per frame: its transmit
 * stamp (port.c) less its due time.  Beside it, the clock read just
 * before the send less the due time: how late the loop woke.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "opt_units.h"
#include "wiredelay.h"

volatile sig_atomic_t wd_stop;

/* Frames taken from one socket before the loop looks at the other. */
#define WD_BATCH	64

/* Where a frame goes that its queue has no room for. */
static unsigned char wd_scratch[WD_FRAME_MAX];

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * NTPX_NS_PER_SEC + t.tv_nsec;
}

int wd_dir_init(struct wd_dir *d, const char *name, struct wd_port *in,
		struct wd_port *out, int64_t delay, size_t qbytes)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->in = in;
	d->out = out;
	d->delay = delay;
	d->txsync = 1;
	d->hold_min = INT64_MAX;
	d->hold_max = INT64_MIN;
	d->wake_max = INT64_MIN;
	hist_init(&d->hold);
	hist_init(&d->wake);
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
		int64_t rx;
		int trunc;
		ssize_t n;

		if (!p) {
			n = wd_port_recv(d->in, wd_scratch, sizeof(wd_scratch), &rx, &trunc);
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
		if (!rx) {
			rx = now_ns();
			d->unstamped++;
		}
		pktq_commit(&d->q, (uint32_t)n, rx, rx + d->delay);
		if (d->q.frames > d->max_frames)
			d->max_frames = d->q.frames;
		if (d->q.bytes > d->max_bytes)
			d->max_bytes = d->q.bytes;
	}
	return 0;
}

/* Sends d's frames that are due. */
static void dir_send(struct wd_dir *d)
{
	struct pktq_frame *f;
	int64_t t = now_ns();

	while ((f = pktq_peek(&d->q)) && f->due <= t) {
		if (wd_port_send(d->out, f->data, f->len)) {
			/* The kernel may or may not have numbered it: the
			   stamps can no longer be matched to their sends. */
			d->send_errors++;
			d->txsync = 0;
		} else {
			int64_t late = t - f->due;

			d->txdue[d->txid & (WD_TXRING - 1)] = f->due;
			d->txid++;
			hist_add(&d->wake, late);
			if (late > d->wake_max)
				d->wake_max = late;
			d->frames++;
			d->bytes += f->len;
		}
		pktq_pop(&d->q);
		t = now_ns();
	}
}

/* The transmit stamps waiting on d's output, each held against its due time. */
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
		hist_add(&d->hold, e);
		if (e > d->hold_max)
			d->hold_max = e;
		if (e < d->hold_min)
			d->hold_min = e;
		d->stamped++;
	}
}

static int64_t head_due(struct wd_dir *d)
{
	struct pktq_frame *f = pktq_peek(&d->q);

	return f ? f->due : INT64_MAX;
}

/* A receive failed: an interface that went down comes back; one that is
   gone ends the relay. */
static int take_failed(struct wd_dir *d, char *err, size_t errlen)
{
	if (errno == ENETDOWN && (int)if_nametoindex(d->in->ifname) == d->in->ifindex)
		return 0;
	if (errno == ENETDOWN || errno == ENXIO || errno == ENODEV)
		snprintf(err, errlen, "%s: the interface is gone", d->in->ifname);
	else
		snprintf(err, errlen, "%s: receive: %s", d->in->ifname, strerror(errno));
	return -1;
}

int wd_relay(struct wd_dir *ab, struct wd_dir *ba, uint64_t sockdrops[2],
	     char *err, size_t errlen)
{
	struct wd_dir *dirs[2] = { ab, ba };
	struct pollfd pf[3];
	int64_t armed = 0;
	sigset_t none;
	int tfd, rc = 0;

	tfd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (tfd < 0) {
		snprintf(err, errlen, "timerfd: %s", strerror(errno));
		return -1;
	}
	sigemptyset(&none);
	pf[0] = (struct pollfd){ .fd = ab->in->fd, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = ba->in->fd, .events = POLLIN };
	pf[2] = (struct pollfd){ .fd = tfd, .events = POLLIN };
	while (!wd_stop) {
		int64_t next;

		dir_send(ab);
		dir_send(ba);
		next = head_due(ab) < head_due(ba) ? head_due(ab) : head_due(ba);
		if (next == INT64_MAX)
			next = 0;
		if (next != armed) {
			struct itimerspec its = { .it_value = {
				.tv_sec = next / NTPX_NS_PER_SEC,
				.tv_nsec = next % NTPX_NS_PER_SEC } };

			/* 0 disarms: nothing is held. */
			timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
			armed = next;
		}
		/* The signals are blocked but here, so that one that comes
		   between the check of wd_stop and the wait ends the wait. */
		if (ppoll(pf, 3, NULL, &none) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			rc = -1;
			break;
		}
		if (pf[2].revents) {
			uint64_t x;

			if (read(tfd, &x, sizeof(x)) == sizeof(x))
				armed = 0;	/* fired: a one-shot timer is disarmed */
		}
		for (int i = 0; i < 2; i++) {
			/* The error queue of a port holds the stamps of the
			   other direction's sends. */
			if (pf[i].revents & POLLERR)
				dir_stamps(dirs[1 - i]);
			if ((pf[i].revents & (POLLIN | POLLERR)) && dir_take(dirs[i]) &&
			    take_failed(dirs[i], err, errlen)) {
				rc = -1;
				break;
			}
		}
		if (rc)
			break;
	}
	/* The last sends' stamps have come by now (they are taken as the
	   frame goes). */
	dir_stamps(ab);
	dir_stamps(ba);
	sockdrops[0] += wd_port_drops(ab->in);
	sockdrops[1] += wd_port_drops(ba->in);
	close(tfd);
	return rc;
}
