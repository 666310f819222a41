/* SPDX-License-Identifier: ISC */
/*
 * hwts.c - hardware time stamping, shared (hwts.h).
 */
#include <errno.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "hwts.h"

static int tx_stamps(int tx_type)
{
	return tx_type == HWTSTAMP_TX_ON || tx_type == HWTSTAMP_TX_ONESTEP_SYNC ||
	       tx_type == HWTSTAMP_TX_ONESTEP_P2P;
}

static int rx_covers_ntp(int filter)
{
	return filter == HWTSTAMP_FILTER_ALL || filter == HWTSTAMP_FILTER_NTP_ALL;
}

static const char *tx_name(int t)
{
	static const char *const n[] = { "off", "on", "onestep_sync", "onestep_p2p" };

	return t >= 0 && t < 4 ? n[t] : "other";
}

static const char *rx_name(int f)
{
	switch (f) {
	case HWTSTAMP_FILTER_NONE: return "none";
	case HWTSTAMP_FILTER_ALL: return "all";
	case HWTSTAMP_FILTER_NTP_ALL: return "ntp_all";
	case HWTSTAMP_FILTER_SOME: return "some";
	default: return "ptp";
	}
}

static int cfg_io(struct hwts *h, unsigned long req, struct hwtstamp_config *c)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", h->dev);
	ifr.ifr_data = (void *)c;
	return ioctl(h->fd, req, &ifr) ? -errno : 0;
}

int hwts_acquire(struct hwts *h, int fd, const char *dev, int want)
{
	struct hwtstamp_config c;
	int rc;

	memset(h, 0, sizeof(*h));
	h->fd = fd;
	snprintf(h->dev, sizeof(h->dev), "%s", dev);
	memset(&h->found, 0, sizeof(h->found));
	h->readable = cfg_io(h, SIOCGHWTSTAMP, &h->found) == 0;
	if (!h->readable) {
		h->found.tx_type = HWTSTAMP_TX_OFF;
		h->found.rx_filter = HWTSTAMP_FILTER_NONE;
	}
	c = h->found;
	c.flags = 0;
	if ((want & HWTS_TX) && !tx_stamps(c.tx_type))
		c.tx_type = HWTSTAMP_TX_ON;
	if ((want & HWTS_RX) && !rx_covers_ntp(c.rx_filter))
		c.rx_filter = HWTSTAMP_FILTER_ALL;
	if (h->readable && c.tx_type == h->found.tx_type && c.rx_filter == h->found.rx_filter) {
		h->tx = tx_stamps(c.tx_type);
		h->rx = rx_covers_ntp(c.rx_filter);
		return (h->tx ? HWTS_TX : 0) | (h->rx ? HWTS_RX : 0);
	}
	rc = cfg_io(h, SIOCSHWTSTAMP, &c);
	/*
	 * i40e refuses to stamp every received packet (ERANGE for
	 * HWTSTAMP_FILTER_ALL) but stamps sends: the receive filter is
	 * left as found, and the send stamps asked for alone.
	 */
	if (rc == -ERANGE && c.rx_filter != h->found.rx_filter) {
		c.rx_filter = h->found.rx_filter;
		if (c.tx_type == h->found.tx_type)
			return rc;	/* nothing else was asked */
		rc = cfg_io(h, SIOCSHWTSTAMP, &c);
	}
	if (rc)
		return rc;
	/* The driver writes back what it did: it may give more, or less. */
	h->changed = 1;
	h->set = c;
	h->tx = tx_stamps(c.tx_type);
	h->rx = rx_covers_ntp(c.rx_filter);
	if (h->readable)
		snprintf(h->note, sizeof(h->note),
			 "%s: hardware stamping changed from tx %s rx %s (%d) to tx %s rx %s (%d);"
			 " put back at exit", h->dev, tx_name(h->found.tx_type),
			 rx_name(h->found.rx_filter), h->found.rx_filter, tx_name(c.tx_type),
			 rx_name(c.rx_filter), c.rx_filter);
	else
		snprintf(h->note, sizeof(h->note),
			 "%s: hardware stamping set to tx %s rx %s (%d); the driver cannot say "
			 "what it was (SIOCGHWTSTAMP), so it is put back to off at exit", h->dev,
			 tx_name(c.tx_type), rx_name(c.rx_filter), c.rx_filter);
	return (h->tx ? HWTS_TX : 0) | (h->rx ? HWTS_RX : 0);
}

int hwts_release(struct hwts *h)
{
	struct hwtstamp_config c;
	int rc;

	if (!h->changed)
		return 0;
	h->changed = 0;
	/* Ours still?  A driver that cannot say is put back regardless. */
	if (h->readable && cfg_io(h, SIOCGHWTSTAMP, &c) == 0 &&
	    (c.tx_type != h->set.tx_type || c.rx_filter != h->set.rx_filter)) {
		snprintf(h->note, sizeof(h->note),
			 "%s: hardware stamping was changed meanwhile (now tx %s rx %s), by "
			 "another program: left as it is", h->dev, tx_name(c.tx_type),
			 rx_name(c.rx_filter));
		return 1;
	}
	c = h->found;
	c.flags = 0;
	rc = cfg_io(h, SIOCSHWTSTAMP, &c);
	if (rc)
		snprintf(h->note, sizeof(h->note),
			 "%s: cannot put hardware stamping back (tx %s rx %s): %s", h->dev,
			 tx_name(c.tx_type), rx_name(c.rx_filter), strerror(-rc));
	return rc;
}
