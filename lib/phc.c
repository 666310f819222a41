/* SPDX-License-Identifier: ISC */
/*
 * phc.c - PHC to CLOCK_REALTIME (phc.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ptp_clock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "opt_units.h"
#include "phc.h"

#define EXT_SAMPLES	9
#define BUSY_TRIES	5	/* EBUSY: the cross-timestamp was not taken this time */

enum { PHC_PRECISE, PHC_EXTENDED, PHC_BASIC, PHC_NMETHODS };

struct phc {
	int fd;
	int method;		/* -1 unknown, else PHC_*: the first that worked */
};

const char *phc_dev_dir = "/dev";

struct phc *phc_open(int index, char *err, size_t errlen)
{
	char path[300];
	struct phc *p;

	snprintf(path, sizeof(path), "%s/ptp%d", phc_dev_dir, index);
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(p);
		return NULL;
	}
	p->method = -1;
	return p;
}

int phc_index_of(const char *sysdir)
{
	char path[512];
	struct dirent *e;
	DIR *d;
	int index = -1;

	snprintf(path, sizeof(path), "%s/device/ptp", sysdir);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "ptp%d", &index) == 1)
			break;
	closedir(d);
	return e ? index : -1;
}

void phc_close(struct phc *p)
{
	if (!p)
		return;
	close(p->fd);
	free(p);
}

const char *phc_method(const struct phc *p)
{
	static const char *const n[] = { "precise", "extended", "basic" };

	return p->method >= 0 ? n[p->method] : "unknown";
}

static int64_t pct_ns(const struct ptp_clock_time *t)
{
	return (int64_t)t->sec * NTPX_NS_PER_SEC + t->nsec;
}

/* PHC minus CLOCK_REALTIME by method @m, ns; 0 or -errno. */
static int offset_by(struct phc *p, int m, int64_t *off)
{
	int64_t best = INT64_MAX;
	unsigned i;

	if (m == PHC_PRECISE) {
		struct ptp_sys_offset_precise pr;

		memset(&pr, 0, sizeof(pr));
		if (ioctl(p->fd, PTP_SYS_OFFSET_PRECISE, &pr))
			return -errno;
		*off = pct_ns(&pr.device) - pct_ns(&pr.sys_realtime);
		return 0;
	}
	if (m == PHC_EXTENDED) {
		struct ptp_sys_offset_extended ex;

		memset(&ex, 0, sizeof(ex));
		ex.n_samples = EXT_SAMPLES;
		if (ioctl(p->fd, PTP_SYS_OFFSET_EXTENDED, &ex))
			return -errno;
		for (i = 0; i < ex.n_samples; i++) {
			int64_t s1 = pct_ns(&ex.ts[i][0]), ph = pct_ns(&ex.ts[i][1]);
			int64_t s2 = pct_ns(&ex.ts[i][2]);

			if (s2 - s1 < best) {
				best = s2 - s1;
				*off = ph - (s1 + (s2 - s1) / 2);
			}
		}
	} else {
		/* The basic one: system, PHC, system, PHC, ..., system. */
		struct ptp_sys_offset bs;

		memset(&bs, 0, sizeof(bs));
		bs.n_samples = EXT_SAMPLES;
		if (ioctl(p->fd, PTP_SYS_OFFSET, &bs))
			return -errno;
		for (i = 0; i < bs.n_samples; i++) {
			int64_t s1 = pct_ns(&bs.ts[2 * i]), ph = pct_ns(&bs.ts[2 * i + 1]);
			int64_t s2 = pct_ns(&bs.ts[2 * i + 2]);

			if (s2 - s1 < best) {
				best = s2 - s1;
				*off = ph - (s1 + (s2 - s1) / 2);
			}
		}
	}
	return best == INT64_MAX ? -EIO : 0;
}

static int unsupported(int rc)
{
	return rc == -EOPNOTSUPP || rc == -ENOTTY || rc == -EINVAL;
}

/*
 * PHC minus CLOCK_REALTIME, ns, as linuxptp's sysoff probes it: precise
 * (a cross-timestamp), else extended (gettimex64), else the basic
 * sandwich that every driver has (stmmac has no gettimex64).  The first
 * that works is kept.  EBUSY (no cross-timestamp this time) is tried
 * again a few times, never taken as "unsupported".
 */
static int phc_offset(struct phc *p, int64_t *off)
{
	int m = p->method >= 0 ? p->method : PHC_PRECISE, rc = -EIO, i;

	for (; m < PHC_NMETHODS; m++) {
		for (i = 0; i < BUSY_TRIES; i++)
			if ((rc = offset_by(p, m, off)) != -EBUSY)
				break;
		if (rc == 0) {
			p->method = m;
			return 0;
		}
		if (p->method >= 0 || !unsupported(rc))
			return rc;
	}
	return rc;
}

int phc_to_realtime(struct phc *p, int64_t phc_ns, int64_t *rt_ns)
{
	int64_t off = 0;
	int rc = phc_offset(p, &off);

	if (rc)
		return rc;
	*rt_ns = phc_ns - off;
	return 0;
}
