/* SPDX-License-Identifier: ISC */
/*
 * hwts.h - a NIC's hardware time stamping (SIOCGHWTSTAMP,
 * SIOCSHWTSTAMP), shared politely with whoever else uses it (ptp4l).
 *
 * hwts_acquire reads the interface's setting first and changes it only
 * where it lacks what ntpx needs, never weakening it: a transmit type
 * that already stamps (ON, or a one-step type, which stamps as ON does)
 * stays; a receive filter that already covers NTP (ALL, NTP_ALL) stays,
 * and one that does not (NONE, or ptp4l's PTP filters) becomes ALL, a
 * superset of each.  The driver's answer is what counts: what it
 * accepted is checked, not assumed, and a driver that refuses the
 * receive filter (i40e: ERANGE for ALL) is asked for the send stamps
 * alone.  A change is said once, in h->note
 * for the caller to show, and hwts_release puts the setting back as it
 * was found, unless another program changed it meanwhile.  A driver that
 * cannot be read (no SIOCGHWTSTAMP, before Linux 4.14 or in some drivers)
 * is set as if it had nothing on, and that is said too.
 */
#ifndef NTPX_HWTS_H
#define NTPX_HWTS_H

#include <linux/net_tstamp.h>
#include <net/if.h>

struct hwts {
	char dev[IFNAMSIZ];
	int fd;				/* a socket for the ioctls */
	struct hwtstamp_config found;	/* as it was (valid when readable) */
	struct hwtstamp_config set;	/* as we left it (the driver's answer) */
	int readable;			/* SIOCGHWTSTAMP answered */
	int changed;			/* we set it: hwts_release puts it back */
	int tx, rx;			/* what it stamps now, for us */
	char note[320];			/* what hwts_acquire changed, or why
					   hwts_release could not put it back,
					   for the caller to say; "" when nothing */
};

#define HWTS_TX	1	/* send stamps wanted */
#define HWTS_RX	2	/* receive stamps of every packet wanted */

/*
 * Makes @dev stamp what @want (HWTS_*) asks, as above, through socket
 * @fd (kept until release).  Returns what it got (HWTS_* bits), 0 when
 * nothing; -errno when the driver refused (the setting is then as found).
 */
int hwts_acquire(struct hwts *h, int fd, const char *dev, int want);

/*
 * Puts back what hwts_acquire changed, if the setting is still ours: one
 * that another program (a ptp4l started or reconfigured meanwhile) has
 * changed since is left as it is.  Safe on a zeroed struct.  Returns 0;
 * 1 when it left the setting, or -errno when the driver refused, each
 * with one line in h->note for the caller to say.
 */
int hwts_release(struct hwts *h);

#endif
