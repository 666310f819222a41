/* SPDX-License-Identifier: ISC */
/*
 * lib/udp_stamp.c's hardware stamping (dev=, for lib/udp.c) against a mock NIC and PHC
 * (support/phc_mock.h; THIS IS A MOCK: no NIC here stamps).  The real
 * socket is bound to lo; the mock answers the interface's ETHTOOL and
 * HWTSTAMP ioctls as a NIC with a PHC would, with ptp4l's setting on it
 * (one-step sync, a PTP receive filter).  What linuxptp's hwts_init does,
 * ntpx must too: read first, never weaken another program's setting,
 * check what the driver accepted, put it back at close.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "transport.h"
#include "support/phc_mock.h"

static int group_setup(void **state)
{
	char d[300];

	mock_phc_init();
	snprintf(d, sizeof(d), "%s/net/lo", mock_phc_root());
	mock_phc_add(d, 5);
	return 0;
}

static int group_teardown(void **state)
{
	mock_phc_cleanup();
	memset(&mock_nic, 0, sizeof(mock_nic));
	return 0;
}

static int setup(void **state)
{
	memset(&mock_nic, 0, sizeof(mock_nic));
	snprintf(mock_nic.name, sizeof(mock_nic.name), "lo");
	mock_nic.phc_index = 5;
	mock_nic.cfg.tx_type = HWTSTAMP_TX_ONESTEP_SYNC;	/* ptp4l's */
	mock_nic.cfg.rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;
	memset(&mock_phc, 0, sizeof(mock_phc));
	return 0;
}

static struct transport *open_lo(void)
{
	struct endpoint ep;
	struct transport *t;
	char err[256];

	assert_int_equal(transport_parse_endpoint("udp://127.0.0.1:9?dev=lo", &ep, err, sizeof(err)), 0);
	t = transport_open(&ep, TRANSPORT_CLIENT, err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	assert_int_equal(transport_stamps_enable(t, err, sizeof(err)), 0);
	return t;
}

/* ptp4l's one-step sync stays; its PTP filter widens to ALL; both come back. */
static void test_ptp4l_setting_kept(void **state)
{
	struct transport *t = open_lo();

	assert_true(mock_nic.gets >= 1);	/* read before it was set */
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ONESTEP_SYNC);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_ALL);
	assert_string_equal(transport_stamp_source(t, 0, TRANSPORT_LAYER_H),
			    "so_timestamping:rx_hardware+phc");
	/* the change, for the tool to print: the library printed nothing */
	assert_string_equal(transport_warnings(t),
			    "lo: hardware stamping changed from tx onestep_sync rx ptp (12) "
			    "to tx onestep_sync rx all (1); put back at exit\n");
	transport_close(t);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ONESTEP_SYNC);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_PTP_V2_EVENT);
}

/*
 * A driver that cannot stamp every packet answers with a PTP filter: no
 * receive 'h' layer is claimed and #stamps says why; the send stamps it
 * does give are kept (issue 35); the setting is put back at close.
 */
static void test_driver_answer_checked(void **state)
{
	struct transport *t;

	mock_nic.no_filter_all = 1;
	mock_nic.cfg.tx_type = HWTSTAMP_TX_OFF;
	mock_nic.cfg.rx_filter = HWTSTAMP_FILTER_NONE;
	t = open_lo();
	assert_string_equal(transport_stamp_source(t, 0, TRANSPORT_LAYER_H),
			    "-:driver_cannot_stamp_all_rx");
	assert_string_equal(transport_stamp_source(t, 1, TRANSPORT_LAYER_H),
			    "so_timestamping:tx_hardware+phc");
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ON);
	transport_close(t);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_OFF);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_NONE);
}

/*
 * Issue 35: i40e refuses HWTSTAMP_FILTER_ALL with ERANGE.  Its send
 * stamps (t1h) are kept: the receive filter is left as found, the send
 * stamps asked for alone, and the change said and put back.
 */
static void test_i40e_erange(void **state)
{
	struct transport *t;

	mock_nic.erange_all = 1;
	mock_nic.cfg.tx_type = HWTSTAMP_TX_OFF;
	mock_nic.cfg.rx_filter = HWTSTAMP_FILTER_NONE;
	t = open_lo();
	assert_string_equal(transport_stamp_source(t, 1, TRANSPORT_LAYER_H),
			    "so_timestamping:tx_hardware+phc");
	assert_string_equal(transport_stamp_source(t, 0, TRANSPORT_LAYER_H),
			    "-:driver_cannot_stamp_all_rx");
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_ON);
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_NONE);
	assert_string_equal(transport_warnings(t),
			    "lo: hardware stamping changed from tx off rx none (0) "
			    "to tx on rx none (0); put back at exit\n");
	transport_close(t);
	assert_int_equal(mock_nic.cfg.tx_type, HWTSTAMP_TX_OFF);
}

/*
 * Put back before the close, so that a driver that refuses is said by
 * the tool: the line is in transport_warnings(), and nothing is printed.
 */
static void test_put_back_refused(void **state)
{
	struct transport *t = open_lo();

	mock_nic.refuse_set = 1;
	transport_stamps_release(t);
	assert_string_equal(transport_warnings(t),
			    "lo: cannot put hardware stamping back (tx onestep_sync rx ptp): "
			    "Operation not permitted\n");
	mock_nic.refuse_set = 0;
	transport_close(t);
	/* tried once: the close leaves the NIC as the refusal did */
	assert_int_equal(mock_nic.cfg.rx_filter, HWTSTAMP_FILTER_ALL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_ptp4l_setting_kept, setup),
		cmocka_unit_test_setup(test_driver_answer_checked, setup),
		cmocka_unit_test_setup(test_i40e_erange, setup),
		cmocka_unit_test_setup(test_put_back_refused, setup),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
