#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over AF_XDP in zero-copy mode: the driver's send stamps from AF_XDP
# TX metadata, on the NIC's PTP hardware clock (t1h, "xdp:tx_metadata+phc").
# veth has no zero-copy mode (tests/net/uudp-stamps.t covers copy mode
# there), so this needs a NIC whose driver fills the stamp (mlx5, igc,
# stmmac) and a peer.  Set NTPX_XDP_DEV to the interface and NTPX_XDP_PEER
# to a host running ntpreflect on port ${NTPX_XDP_PORT:-123}.  Where there
# is none this test skips with the reason; NTPX_REQUIRE_HW=1 turns that
# skip into a failure.
. "$(dirname "$0")/../lib.sh"
need ntpprobe ethtool

hw_missing() {
	if [ "${NTPX_REQUIRE_HW:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - zero-copy AF_XDP hardware required (NTPX_REQUIRE_HW=1): $*"
		exit 1
	fi
	skip_all "$*"
}

dev=${NTPX_XDP_DEV:-}
[ -n "$dev" ] || hw_missing "NTPX_XDP_DEV (a NIC with zero-copy AF_XDP and a PHC) is not set"
[ -d "/sys/class/net/$dev" ] || hw_missing "no interface $dev"
ethtool -T "$dev" 2>/dev/null | grep -Eq 'PTP Hardware Clock: [0-9]' ||
	hw_missing "$dev has no PTP hardware clock (ethtool -T $dev)"
[ -n "${NTPX_XDP_PEER:-}" ] || hw_missing "NTPX_XDP_PEER (a host running ntpreflect) is not set"
need_root
plan 5

ep="uudp://$NTPX_XDP_PEER:${NTPX_XDP_PORT:-123}?dev=$dev&via=xdp&xdpmode=zerocopy"
ntpprobe -i 20ms -c 100 "$ep" >"$TMP/rec" 2>"$TMP/err"
is "$?" 0 "ntpprobe over $dev in zero-copy mode exits 0"
diag "$(tail -1 "$TMP/err")"
ok "the port ran drv-zerocopy" grep -q 'mode=drv-zerocopy' "$TMP/err"
ok "#stamps names the driver's TX metadata stamp" \
	grep -q '^#stamps .*t1h=xdp:tx_metadata+phc ' "$TMP/rec"
set -- $(awk '/^#fields/ { for (i = 2; i <= NF; i++) c[$i] = i - 1; next } /^#/ { next }
	$(c["status"]) == "ok" && $(c["t1h"]) != "-" { n++
		if (!($(c["t1"]) "" <= $(c["t1h"]) "" && $(c["t1h"]) "" <= $(c["t4"]) "")) b++ }
	END { print n + 0, b + 0 }' "$TMP/rec")
ok "t1h on nearly every ok record ($1)" test "$1" -ge 90
is "$2" 0 "t1 <= t1h <= t4 on every one"
done_testing
