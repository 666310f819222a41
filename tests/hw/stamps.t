#!/bin/sh
# SPDX-License-Identifier: ISC
# Hardware stamps (t1h t4h at the client, t2h t3h at the server with
# --xleave): needs a NIC that stamps in hardware and a peer.  Set
# NTPX_HWTS_PEER to the address of a host running ntpreflect (with the
# same kind of NIC), and NTPX_HWTS_DEV to the interface if it is not the
# one the route to the peer leaves by, on port
# ${NTPX_HWTS_PORT:-123}.  Where there is none this test skips with the
# reason; NTPX_REQUIRE_HW=1 turns that skip into a failure.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/hw.sh"
need ntpprobe ethtool

hwts() { ethtool -T "$1" 2>/dev/null | grep -q 'hardware-transmit' &&
	 ethtool -T "$1" 2>/dev/null | grep -Eq 'PTP Hardware Clock: [0-9]'; }
# The whole suite's hardware: a peer, and dev, NTPX_HWTS_DEV or the
# interface the route to the peer leaves by (not the first that stamps:
# an onboard i210 may come before the NIC cabled to the peer), stamping
# in hardware; hw_skip_all with the reason.
hwts_need() {
	[ -n "${NTPX_HWTS_PEER:-}" ] ||
		{ hw_skip_all "no peer: set NTPX_HWTS_PEER to a host running ntpreflect"; return 1; }
	dev=${NTPX_HWTS_DEV:-$(hw_route_dev "$NTPX_HWTS_PEER")}
	[ -n "$dev" ] ||
		{ hw_skip_all "no route to $NTPX_HWTS_PEER (ip route get)"; return 1; }
	hwts "$dev" ||
		{ hw_skip_all "$dev has no hardware timestamping or no PHC (ethtool -T $dev)"; return 1; }
}
hwts_need
need_prereq ROOT

# The ok records with both hardware stamps; of those, the ones where the
# NIC's stamps are not between the kernel's (t1k <= t1h, t4h <= t4k).
hw_stamped() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" && field("t1h") != "-" && field("t4h") != "-" { n++ } END { print n + 0 }' "$1"
}
hw_outside() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" && field("t1h") != "-" && field("t4h") != "-" &&
		!(field("t1k") "" <= field("t1h") "" && field("t4h") "" <= field("t4k") "") { n++ }
		END { print n + 0 }' "$1"
}

test_expect_success "ntpprobe over $dev: exit 0" '
	diag "interface $dev, peer $NTPX_HWTS_PEER" &&
	test_exit 0 ntpprobe -i 20ms -c 100 --xleave "udp://$NTPX_HWTS_PEER:${NTPX_HWTS_PORT:-123}?dev=$dev" \
		>"$TMP/rec" 2>/dev/null
'

test_expect_success '#stamps names the hardware sources' '
	test_grep "^#stamps .*t1h=so_timestamping:tx_hardware+phc .*t4h=so_timestamping:rx_hardware+phc" "$TMP/rec"
'

test_expect_success 'hardware stamps on nearly every ok record (at least 90)' '
	n=$(hw_stamped "$TMP/rec") &&
	diag "$n ok records with both" &&
	test "$n" -ge 90
'

# The client's own hardware stages are on its clock (PHC converted).
test_expect_success "the NIC's stamps lie between the kernel's: t1k <= t1h, t4h <= t4k" '
	test_is "$(hw_outside "$TMP/rec")" 0
'
done_testing
