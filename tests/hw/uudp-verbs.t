#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over a raw-packet verbs QP (ConnectX): needs an RDMA-capable NIC
# and a peer.  Set NTPX_UUDP_PEER to the address of a host running a
# kernel-UDP ntpreflect on port ${NTPX_UUDP_PORT:-123}; the interface is
# the one the route to it leaves by, or NTPX_UUDP_DEV.  Where there is none this test skips with the
# reason; NTPX_REQUIRE_HW=1 turns that skip into a failure, for machines
# that should have the hardware.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/rdma.sh"
need ntpprobe
rdma_uudp_find || hw_skip_all "$RDMA_WHY"
need_prereq ROOT

# ntpprobe over the raw-packet QP, its last line of stderr shown.
probe_verbs() {
	ntpprobe -i 100ms -c 20 "uudp://$NTPX_UUDP_PEER:${NTPX_UUDP_PORT:-123}?dev=$UUDP_DEV&via=verbs" \
		>"$TMP/rec" 2>"$TMP/err"
	_rc=$?
	diag "$(tail -1 "$TMP/err")"
	return $_rc
}

test_expect_success 'ntpprobe over via=verbs exits 0' '
	test_exit 0 probe_verbs
'

test_expect_success 'ok records over the raw-packet QP (at least 18 of 20)' '
	n=$(count_status "$TMP/rec" ok) &&
	diag "$n of 20 ok" &&
	test "$n" -ge 18
'

test_expect_success 'the port was verbs' '
	test_grep "transport port=verbs" "$TMP/err"
'
done_testing
