/* SPDX-License-Identifier: ISC */
/*
 * phc_mock.h - a mock PTP hardware clock for the unit tests that convert
 * PHC time (tests/unit/phc.c, the verbs tests).  THIS IS A MOCK: no host
 * here has a PHC.  Its "device nodes" are plain files in a temporary
 * directory that lib/phc.c is pointed at (phc_dev_dir); an ioctl() on one
 * of them answers PTP_SYS_OFFSET_PRECISE, _EXTENDED and the basic
 * PTP_SYS_OFFSET as the kernel's ptp_chardev.c does: EOPNOTSUPP where the
 * driver lacks the callback (getcrosststamp, gettimex64), and EBUSY when
 * told to (a cross-timestamp the hardware could not take this time).
 * Every other ioctl goes to the kernel.
 */
#ifndef NTPX_PHC_MOCK_H
#define NTPX_PHC_MOCK_H

#include <stdint.h>
#include <linux/net_tstamp.h>

struct mock_phc {
	int64_t off;		/* PHC time minus CLOCK_REALTIME, ns */
	int no_precise;		/* no getcrosststamp (most drivers) */
	int no_extended;	/* no gettimex64 (stmmac and others) */
	int busy;		/* EBUSY for this many more offset calls */
	int calls_precise, calls_extended, calls_basic;
};

extern struct mock_phc mock_phc;

/* A temporary root; lib/phc.c opens its "dev/ptpN" from now on. */
void mock_phc_init(void);
void mock_phc_cleanup(void);
const char *mock_phc_root(void);

/*
 * /dev/ptp@index, and the PCI device of the RDMA or network device whose
 * sysfs directory is @sysdir shows it (@sysdir/device/ptp/ptp@index).
 * @sysdir is made; returns its path (static storage per call).
 */
void mock_phc_add(const char *sysdir, int index);

/*
 * A NIC that stamps, as far as SIOCGHWTSTAMP, SIOCSHWTSTAMP and
 * ETHTOOL_GET_TS_INFO see it: an ioctl naming mock_nic.name (when set)
 * is answered here, as a driver's ndo_hwtstamp_get/set do: the set
 * writes back what the driver did (a driver without
 * HWTSTAMP_FILTER_ALL, no_filter_all, gives ptp4l's PTP_V2_EVENT for it,
 * as some do).  Everything else goes to the kernel.
 */
struct mock_nic {
	char name[16];
	struct hwtstamp_config cfg;	/* as the NIC stamps now */
	int no_get;			/* no SIOCGHWTSTAMP (EOPNOTSUPP) */
	int no_filter_all;
	int phc_index;			/* ETHTOOL_GET_TS_INFO's, -1: none */
	int refuse_set;			/* SIOCSHWTSTAMP fails (EPERM) */
	int erange_all;			/* HWTSTAMP_FILTER_ALL refused with ERANGE,
					   as i40e refuses it */
	int gets, sets;			/* calls seen */
};

extern struct mock_nic mock_nic;

#endif
