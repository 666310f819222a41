/* SPDX-License-Identifier: ISC */
/*
 * The mock PHC (phc_mock.h).  THIS IS A MOCK.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/ptp_clock.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "opt_units.h"
#include "phc.h"
#include "phc_mock.h"

struct mock_phc mock_phc;
struct mock_nic mock_nic;

static char root[128];
static ino_t inos[8];
static int ninos;

void mock_phc_init(void)
{
	char d[160];

	snprintf(root, sizeof(root), "%s/ntpx-phc.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(root));
	snprintf(d, sizeof(d), "%s/dev", root);
	assert_int_equal(mkdir(d, 0700), 0);
	phc_dev_dir = strdup(d);
	ninos = 0;
	memset(&mock_phc, 0, sizeof(mock_phc));
}

void mock_phc_cleanup(void)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	free((char *)phc_dev_dir);
	phc_dev_dir = "/dev";
}

const char *mock_phc_root(void)
{
	return root;
}

void mock_phc_add(const char *sysdir, int index)
{
	char p[400];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "mkdir -p '%s/device/ptp/ptp%d'", sysdir, index);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/ptp%d", phc_dev_dir, index);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	assert_true(ninos < 8);
	inos[ninos++] = st.st_ino;
}

static int64_t rt_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * NTPX_NS_PER_SEC + t.tv_nsec;
}

static void pct(struct ptp_clock_time *t, int64_t ns)
{
	t->sec = ns / NTPX_NS_PER_SEC;
	t->nsec = (uint32_t)(ns % NTPX_NS_PER_SEC);
}

static int is_phc(int fd)
{
	struct stat st;
	int i;

	if (fstat(fd, &st))
		return 0;
	for (i = 0; i < ninos; i++)
		if (inos[i] == st.st_ino && S_ISREG(st.st_mode))
			return 1;
	return 0;
}

static int efail(int e)
{
	errno = e;
	return -1;
}

static int nic_ioctl(unsigned long req, void *data)
{
	struct hwtstamp_config *c = data;

	if (req == SIOCETHTOOL) {
		struct ethtool_ts_info *i = data;

		if (i->cmd != ETHTOOL_GET_TS_INFO)
			return efail(EOPNOTSUPP);
		i->so_timestamping = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
				     SOF_TIMESTAMPING_RAW_HARDWARE | SOF_TIMESTAMPING_TX_SOFTWARE |
				     SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
		i->phc_index = mock_nic.phc_index;
		i->tx_types = 1u << HWTSTAMP_TX_OFF | 1u << HWTSTAMP_TX_ON |
			      1u << HWTSTAMP_TX_ONESTEP_SYNC;
		i->rx_filters = 1u << HWTSTAMP_FILTER_NONE | 1u << HWTSTAMP_FILTER_PTP_V2_EVENT |
				(mock_nic.no_filter_all ? 0 : 1u << HWTSTAMP_FILTER_ALL);
		return 0;
	}
	if (req == SIOCGHWTSTAMP) {
		mock_nic.gets++;
		if (mock_nic.no_get)
			return efail(EOPNOTSUPP);
		*c = mock_nic.cfg;
		return 0;
	}
	mock_nic.sets++;
	if (mock_nic.refuse_set)
		return efail(EPERM);
	if (c->tx_type > HWTSTAMP_TX_ONESTEP_SYNC || c->rx_filter >= __HWTSTAMP_FILTER_CNT ||
	    (mock_nic.erange_all && c->rx_filter == HWTSTAMP_FILTER_ALL))
		return efail(ERANGE);
	if (c->rx_filter != HWTSTAMP_FILTER_NONE &&
	    (c->rx_filter != HWTSTAMP_FILTER_ALL || mock_nic.no_filter_all))
		c->rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;	/* what it can do */
	mock_nic.cfg = *c;
	return 0;
}

/* The executable's ioctl comes before libc's for every caller in it. */
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	unsigned i;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if ((req == SIOCGHWTSTAMP || req == SIOCSHWTSTAMP || req == SIOCETHTOOL) &&
	    mock_nic.name[0] && strcmp(((struct ifreq *)arg)->ifr_name, mock_nic.name) == 0)
		return nic_ioctl(req, ((struct ifreq *)arg)->ifr_data);
	if (!is_phc(fd))
		return (int)syscall(SYS_ioctl, fd, req, arg);
	if (req == PTP_SYS_OFFSET_PRECISE) {
		struct ptp_sys_offset_precise *p = arg;
		int64_t now = rt_now();

		mock_phc.calls_precise++;
		if (mock_phc.no_precise)
			return efail(EOPNOTSUPP);
		if (mock_phc.busy && mock_phc.busy--)
			return efail(EBUSY);
		pct(&p->device, now + mock_phc.off);
		pct(&p->sys_realtime, now);
		return 0;
	}
	if (req == PTP_SYS_OFFSET_EXTENDED) {
		struct ptp_sys_offset_extended *x = arg;

		mock_phc.calls_extended++;
		if (mock_phc.no_extended)
			return efail(EOPNOTSUPP);
		if (x->n_samples == 0 || x->n_samples > PTP_MAX_SAMPLES)
			return efail(EINVAL);
		if (mock_phc.busy && mock_phc.busy--)
			return efail(EBUSY);
		for (i = 0; i < x->n_samples; i++) {
			int64_t a = rt_now(), b;

			pct(&x->ts[i][1], rt_now() + mock_phc.off);
			b = rt_now();
			pct(&x->ts[i][0], a);
			pct(&x->ts[i][2], b);
		}
		return 0;
	}
	if (req == PTP_SYS_OFFSET) {
		struct ptp_sys_offset *o = arg;

		mock_phc.calls_basic++;
		if (o->n_samples == 0 || o->n_samples > PTP_MAX_SAMPLES)
			return efail(EINVAL);
		if (mock_phc.busy && mock_phc.busy--)
			return efail(EBUSY);
		for (i = 0; i < o->n_samples; i++) {
			pct(&o->ts[2 * i], rt_now());
			pct(&o->ts[2 * i + 1], rt_now() + mock_phc.off);
		}
		pct(&o->ts[2 * o->n_samples], rt_now());
		return 0;
	}
	return efail(ENOTTY);
}
