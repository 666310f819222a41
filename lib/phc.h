/* SPDX-License-Identifier: ISC */
/*
 * phc.h - a NIC's PTP hardware clock, for turning hardware stamps (on the
 * PHC's time scale) into CLOCK_REALTIME.
 *
 * The offset between the two clocks is read when a stamp is converted:
 * with PTP_SYS_OFFSET_PRECISE where the driver has a cross-timestamp (both
 * clocks latched by the hardware at one instant), else the narrowest of
 * several PTP_SYS_OFFSET_EXTENDED sandwiches (system, PHC, system), the
 * PHC reading taken as at their midpoint, else the same from the basic
 * PTP_SYS_OFFSET (drivers without gettimex64, stmmac).  EBUSY is tried
 * again, a few times.
 */
#ifndef NTPX_PHC_H
#define NTPX_PHC_H

#include <stddef.h>
#include <stdint.h>

struct phc;

/* Opens /dev/ptp@index; NULL with one line in @err. */
struct phc *phc_open(int index, char *err, size_t errlen);

/*
 * The PHC of the device whose sysfs directory is @sysdir
 * (/sys/class/infiniband/mlx5_0, /sys/class/net/eth0): the N of its
 * device/ptp/ptpN, or -1 when it has none.
 */
int phc_index_of(const char *sysdir);

/* Where phc_open() finds ptpN: "/dev" (the unit tests point it elsewhere). */
extern const char *phc_dev_dir;
void phc_close(struct phc *p);

/* "precise", "extended" or "basic": how the offset is read (after the first call). */
const char *phc_method(const struct phc *p);

/* @phc_ns, a PHC time, as CLOCK_REALTIME ns; 0, or -errno. */
int phc_to_realtime(struct phc *p, int64_t phc_ns, int64_t *rt_ns);

#endif
