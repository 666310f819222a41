/* SPDX-License-Identifier: ISC */
/*
 * wiredelay.h - what wiredelay's files share: a port (one interface's
 * packet socket, port.c), a direction (the frames from one port held and
 * sent out of the other, relay.c) and the report (main.c).
 */
#ifndef NTPX_WIREDELAY_H
#define NTPX_WIREDELAY_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hist.h"
#include "pktq.h"

/* The largest frame taken whole: a 64 KiB GSO frame, its Ethernet and
   VLAN headers and the virtio-net header in front (port.c). */
#define WD_FRAME_MAX	(65536 + 64)
/* Sends awaiting their transmit stamp, per direction (a power of two). */
#define WD_TXRING	4096
/* The timer's recent lateness, from which the spin margin is learned. */
#define WD_LATE_N	256

struct wd_port {
	const char *ifname;
	int ifindex;
	int fd;				/* takes what arrives */
	int txfd;			/* sends, and has their stamps */
};

/*
 * The frames that arrive on @in, held and sent out of @out, by a thread
 * of their own (relay.c): one direction's hold never waits on the
 * other's.
 */
struct wd_dir {
	const char *name;		/* "ab" or "ba" */
	struct wd_port *in, *out;
	int64_t delay;			/* ns */
	int64_t spin_max;		/* ns a send may be spun for, 0: never */
	struct pktq q;
	/* Sends by stamp id (the kernel counts a socket's sends from 0),
	   each's due time and the clock just before it, until its
	   transmit stamp comes. */
	int64_t txdue[WD_TXRING];
	int64_t txat[WD_TXRING];
	uint64_t txid;			/* the id of the next send */
	int txsync;			/* ids still match the kernel's */
	/* How late the timer fires (ns), the last WD_LATE_N times, and
	   the margin learned from them: the timer is set that much before
	   a frame's due time, and the rest spun. */
	int64_t late[WD_LATE_N];
	uint64_t nlate;
	int64_t margin;
	int64_t credit;			/* ns of spinning still allowed */
	int64_t credit_at;		/* when it was last topped up */
	/* What the report says. */
	uint64_t frames, bytes;
	uint64_t drop_full, drop_big, send_errors, unstamped;
	uint64_t stamped, stamps_lost;
	struct hist hold;		/* tx stamp - due (ns) */
	int64_t hold_max, hold_min;
	struct hist wake;		/* the clock just before the send - due */
	int64_t wake_max;
	struct hist send;		/* tx stamp - the clock just before the send */
	int64_t send_max;
	struct hist deliver;		/* read - receive stamp */
	int64_t deliver_max;
	uint64_t late_in;		/* frames read after their due time */
	struct hist timer;		/* how late the timer fired */
	int64_t timer_max;
	int64_t spun;			/* ns spent spinning */
	uint64_t spins;			/* sends that were spun for */
	uint64_t max_frames;		/* the most held at once */
	size_t max_bytes;
	/* The thread. */
	pthread_t thread;
	int stopfd;			/* readable: stop */
	int rc;				/* 0, or -1 with err */
	char err[256];
	unsigned char scratch[WD_FRAME_MAX];	/* a frame with no room */
};

/* port.c */
int wd_port_open(struct wd_port *p, const char *ifname, size_t rcvbuf,
		 char *err, size_t errlen);
void wd_port_close(struct wd_port *p);
/*
 * One frame from @p into @buf (@cap bytes): its length (virtio-net header
 * included), 0 when none is waiting, -1 with errno on an error.  *@rx is
 * the kernel's software receive stamp (CLOCK_REALTIME ns), 0 when it
 * gave none; *@trunc is set when the frame was longer than @cap.
 */
ssize_t wd_port_recv(struct wd_port *p, unsigned char *buf, size_t cap,
		     int64_t *rx, int *trunc);
/* Sends @len bytes (virtio-net header first): 0, or -1 with errno. */
int wd_port_send(struct wd_port *p, const unsigned char *buf, size_t len);
/*
 * One transmit stamp from @p's error queue: 1 with its id and stamp
 * (CLOCK_REALTIME ns), 0 when none is waiting, -1 with errno.
 */
int wd_port_txstamp(struct wd_port *p, uint32_t *id, int64_t *ts);
/* Frames the kernel dropped for @p's socket since the last call. */
uint64_t wd_port_drops(struct wd_port *p);

/* relay.c */
extern volatile sig_atomic_t wd_stop;
/* @spin_max: the most ns a frame's send is spun for (0: never spin). */
int wd_dir_init(struct wd_dir *d, const char *name, struct wd_port *in,
		struct wd_port *out, int64_t delay, int64_t spin_max, size_t qbytes);
void wd_dir_free(struct wd_dir *d);
/*
 * Bridges until a signal sets wd_stop (SIGINT and SIGTERM blocked in the
 * caller but while it waits): 0, or -1 with @err set (an interface gone,
 * a poll that failed).  Socket drops are added to each direction's drop
 * counts through @sockdrops[0] (a->b) and [1].
 */
int wd_relay(struct wd_dir *ab, struct wd_dir *ba, uint64_t sockdrops[2],
	     char *err, size_t errlen);

#endif
