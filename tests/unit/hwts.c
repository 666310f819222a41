/* SPDX-License-Identifier: ISC */
/*
 * lib/hwts.c against a mock NIC (support/phc_mock.h: THIS IS A MOCK, no
 * NIC here stamps): the setting is read first, only what is missing is
 * switched on, nothing another program (ptp4l) set is weakened, the
 * driver's answer is what counts, and the setting is put back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "hwts.h"
#include "support/phc_mock.h"

static int fd;

static int setup(void **state)
{
	memset(&mock_nic, 0, sizeof(mock_nic));
	snprintf(mock_nic.name, sizeof(mock_nic.name), "mock0");
	mock_nic.phc_index = -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	return 0;
}

static int teardown(void **state)
{
	close(fd);
	return 0;
}

/* Off: switched on, and put back off. */
static void test_off_on_back(void **state)
{
	struct hwts h;

	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX | HWTS_RX), HWTS_TX | HWTS_RX);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ON);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_ALL);
	/* the change is the caller's to say, word for word what it was */
	assert_string_equal(h.note, "mock0: hardware stamping changed from tx off rx none (0) "
			     "to tx on rx all (1); put back at exit");
	hwts_release(&h);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_OFF);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_NONE);
}

/* ptp4l's one-step sync and PTP filter: tx kept, rx widened to ALL, put back. */
static void test_ptp4l_not_weakened(void **state)
{
	struct hwts h;

	mock_nic.cfg.tx_type = HWTSTAMP_TX_ONESTEP_SYNC;
	mock_nic.cfg.rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;
	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX | HWTS_RX), HWTS_TX | HWTS_RX);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ONESTEP_SYNC);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_ALL);
	hwts_release(&h);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ONESTEP_SYNC);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_PTP_V2_EVENT);
}

/* Already enough: not set at all (so nothing to put back). */
static void test_enough_untouched(void **state)
{
	struct hwts h;

	mock_nic.cfg.tx_type = HWTSTAMP_TX_ON;
	mock_nic.cfg.rx_filter = HWTSTAMP_FILTER_NTP_ALL;
	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX | HWTS_RX), HWTS_TX | HWTS_RX);
	assert_int_equal(mock_nic.sets, 0);
	assert_string_equal(h.note, "");	/* nothing changed, nothing to say */
	hwts_release(&h);
	assert_int_equal(mock_nic.sets, 0);
	/* send stamps only (AF_XDP): the receive filter is none of ours */
	mock_nic.cfg.rx_filter = HWTSTAMP_FILTER_NONE;
	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX), HWTS_TX);
	assert_int_equal(mock_nic.sets, 0);
}

/* The driver cannot stamp everything: its answer says so; no rx claimed. */
static void test_driver_answer_counts(void **state)
{
	struct hwts h;

	mock_nic.no_filter_all = 1;
	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX | HWTS_RX), HWTS_TX);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_PTP_V2_EVENT);
	hwts_release(&h);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_NONE);
}

/* No SIOCGHWTSTAMP: set, and put back to off. */
static void test_unreadable(void **state)
{
	struct hwts h;

	mock_nic.no_get = 1;
	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX), HWTS_TX);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ON);
	assert_string_equal(h.note, "mock0: hardware stamping set to tx on rx none (0); the "
			     "driver cannot say what it was (SIOCGHWTSTAMP), so it is put back "
			     "to off at exit");
	hwts_release(&h);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_OFF);
	memset(&h, 0, sizeof(h));
	hwts_release(&h);	/* a zeroed one: nothing */
	assert_int_equal(mock_nic.sets, 2);
}

/* The driver will not take the old setting back: said to the caller, not printed. */
static void test_put_back_refused(void **state)
{
	struct hwts h;

	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX), HWTS_TX);
	mock_nic.refuse_set = 1;
	assert_int_equal(hwts_release(&h), -EPERM);
	assert_string_equal(h.note, "mock0: cannot put hardware stamping back (tx off rx none): "
			     "Operation not permitted");
	assert_int_equal(hwts_release(&h), 0);	/* tried once */
}

/*
 * Issue 35: a ptp4l started (or reconfigured) while ntpx ran set the NIC
 * its own way: that is left as it is, and said, not clobbered with what
 * was there before ntpx.
 */
static void test_changed_meanwhile(void **state)
{
	struct hwts h;

	assert_int_equal(hwts_acquire(&h, fd, "mock0", HWTS_TX | HWTS_RX), HWTS_TX | HWTS_RX);
	mock_nic.cfg.tx_type = HWTSTAMP_TX_ONESTEP_SYNC;	/* ptp4l, meanwhile */
	mock_nic.cfg.rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;
	assert_int_equal(hwts_release(&h), 1);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ONESTEP_SYNC);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_PTP_V2_EVENT);
	assert_string_equal(h.note, "mock0: hardware stamping was changed meanwhile (now tx "
			     "onestep_sync rx ptp), by another program: left as it is");
	assert_int_equal(hwts_release(&h), 0);	/* once */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_off_on_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ptp4l_not_weakened, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enough_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_driver_answer_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_back_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_meanwhile, setup, teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
