#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over a raw-packet verbs QP (ConnectX): needs an RDMA-capable NIC
# and a peer.  Set NTPX_UUDP_DEV to the interface and NTPX_UUDP_PEER to the
# address of a host running a kernel-UDP ntpreflect on port
# ${NTPX_UUDP_PORT:-123}.  Where there is none this test skips with the
# reason; NTPX_REQUIRE_HW=1 turns that skip into a failure, for machines
# that should have the hardware.
. "$(dirname "$0")/../lib.sh"
need ntpprobe

hw_missing() {
	if [ "${NTPX_REQUIRE_HW:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - verbs hardware required (NTPX_REQUIRE_HW=1): $*"
		exit 1
	fi
	skip_all "$*"
}

dev=${NTPX_UUDP_DEV:-}
if [ -z "$dev" ]; then
	for d in /sys/class/net/*/device/infiniband; do
		[ -d "$d" ] || continue
		dev=$(basename "$(dirname "$(dirname "$d")")")
		break
	done
fi
[ -n "$dev" ] || hw_missing "no RDMA device behind any network interface"
[ -d "/sys/class/net/$dev/device/infiniband" ] ||
	hw_missing "$dev has no RDMA device behind it"
[ -n "${NTPX_UUDP_PEER:-}" ] ||
	hw_missing "NTPX_UUDP_PEER (a host running ntpreflect) is not set"
need_root

port=${NTPX_UUDP_PORT:-123}
ntpprobe -i 100ms -c 20 "uudp://$NTPX_UUDP_PEER:$port?dev=$dev&via=verbs" \
	>"$TMP/rec" 2>"$TMP/err"
is "$?" 0 "ntpprobe over via=verbs exits 0"
diag "$(tail -1 "$TMP/err")"
n=$(count_status "$TMP/rec" ok)
ok "ok records over the raw-packet QP ($n of 20)" test "$n" -ge 18
ok "the port was verbs" grep -q 'transport port=verbs' "$TMP/err"
done_testing
