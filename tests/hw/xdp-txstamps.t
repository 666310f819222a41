#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over AF_XDP in zero-copy mode: the driver's send stamps from AF_XDP
# TX metadata, on the NIC's PTP hardware clock (t1h, "xdp:tx_metadata+phc").
# veth has no zero-copy mode (tests/net/uudp-stamps.t covers copy mode
# there), so this needs a NIC whose driver fills the stamp (mlx5, igc,
# stmmac) and a peer.  Set NTPX_XDP_PEER to a host running ntpreflect on
# port ${NTPX_XDP_PORT:-123}; the interface is the one the route to it
# leaves by, or NTPX_XDP_DEV.  Where there
# is none this test skips with the reason; NTPX_REQUIRE_HW=1 turns that
# skip into a failure.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/hw.sh"
need ntpprobe ethtool

# The whole suite's hardware; hw_skip_all with the reason.
xdp_need() {
	hw_built xdp || { hw_skip_all "$HW_WHY"; return 1; }
	[ -n "${NTPX_XDP_PEER:-}" ] ||
		{ hw_skip_all "NTPX_XDP_PEER (a host running ntpreflect) is not set"; return 1; }
	dev=${NTPX_XDP_DEV:-$(hw_route_dev "$NTPX_XDP_PEER")}
	[ -n "$dev" ] || { hw_skip_all "no route to $NTPX_XDP_PEER (ip route get)"; return 1; }
	[ -d "/sys/class/net/$dev" ] || { hw_skip_all "no interface $dev"; return 1; }
	ethtool -T "$dev" 2>/dev/null | grep -Eq 'PTP Hardware Clock: [0-9]' ||
		{ hw_skip_all "$dev has no PTP hardware clock (ethtool -T $dev)"; return 1; }
}
xdp_need
need_prereq ROOT

# ntpprobe in zero-copy mode, its last line of stderr shown.
probe_xdp() {
	ntpprobe -i 20ms -c 100 "uudp://$NTPX_XDP_PEER:${NTPX_XDP_PORT:-123}?dev=$dev&via=xdp&xdpmode=zerocopy" \
		>"$TMP/rec" 2>"$TMP/err"
	_rc=$?
	diag "$(tail -1 "$TMP/err")"
	return $_rc
}
# "N B": the ok records with t1h, and those of them where t1 <= t1h <= t4
# does not hold.
t1h_order() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" && field("t1h") != "-" { n++
			if (!(field("t1") "" <= field("t1h") "" && field("t1h") "" <= field("t4") "")) b++ }
		END { print n + 0, b + 0 }' "$1"
}

test_expect_success "ntpprobe over $dev in zero-copy mode exits 0" '
	diag "interface $dev, peer $NTPX_XDP_PEER" &&
	test_exit 0 probe_xdp
'

test_expect_success 'the port ran drv-zerocopy' '
	test_grep "mode=drv-zerocopy" "$TMP/err"
'

test_expect_success "#stamps names the driver's TX metadata stamp" '
	test_grep "^#stamps .*t1h=xdp:tx_metadata+phc " "$TMP/rec"
'

test_expect_success 't1h on nearly every ok record (at least 90)' '
	set -- $(t1h_order "$TMP/rec") &&
	diag "$1 ok records with t1h" &&
	test "$1" -ge 90
'

test_expect_success 't1 <= t1h <= t4 on every one' '
	set -- $(t1h_order "$TMP/rec") &&
	test_is "$2" 0
'
done_testing
