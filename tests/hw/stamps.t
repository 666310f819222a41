#!/bin/sh
# SPDX-License-Identifier: ISC
# Hardware stamps (t1h t4h at the client, t2h t3h at the server with
# --xleave): needs a NIC that stamps in hardware and a peer.  Set
# NTPX_HWTS_DEV to the interface and NTPX_HWTS_PEER to the address of a
# host running ntpreflect (with the same kind of NIC) on port
# ${NTPX_HWTS_PORT:-123}.  Where there is none this test skips with the
# reason; NTPX_REQUIRE_HW=1 turns that skip into a failure.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/stamps.sh"
need ntpprobe ethtool

hw_missing() {
	if [ "${NTPX_REQUIRE_HW:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - hardware timestamping required (NTPX_REQUIRE_HW=1): $*"
		exit 1
	fi
	skip_all "$*"
}

hwts() { ethtool -T "$1" 2>/dev/null | grep -q 'hardware-transmit' &&
	 ethtool -T "$1" 2>/dev/null | grep -Eq 'PTP Hardware Clock: [0-9]'; }
dev=${NTPX_HWTS_DEV:-}
if [ -z "$dev" ]; then
	for d in /sys/class/net/*; do
		d=${d##*/}
		hwts "$d" && { dev=$d; break; }
	done
fi
[ -n "$dev" ] || hw_missing "no interface with hardware timestamping and a PHC (ethtool -T)"
hwts "$dev" || hw_missing "$dev has no hardware timestamping or no PHC (ethtool -T $dev)"
[ -n "${NTPX_HWTS_PEER:-}" ] || hw_missing "no peer: set NTPX_HWTS_PEER to a host running ntpreflect"
need_root
plan 4

ep="udp://$NTPX_HWTS_PEER:${NTPX_HWTS_PORT:-123}?dev=$dev"
ntpprobe -i 20ms -c 100 --xleave "$ep" >"$TMP/rec" 2>/dev/null
is "$?" 0 "ntpprobe over $dev: exit 0"
ok "#stamps names the hardware sources" \
	grep -q '^#stamps .*t1h=so_timestamping:tx_hardware+phc .*t4h=so_timestamping:rx_hardware+phc' "$TMP/rec"
n=$(awk '/^#fields/ { for (i = 2; i <= NF; i++) c[$i] = i - 1; next } /^#/ { next }
	$(c["status"]) == "ok" && $(c["t1h"]) != "-" && $(c["t4h"]) != "-" { n++ } END { print n + 0 }' "$TMP/rec")
ok "hardware stamps on nearly every ok record ($n)" test "$n" -ge 90
# The client's own hardware stages are on its clock (PHC converted):
# t1k <= t1h and t4h <= t4k.
bad=$(awk '/^#fields/ { for (i = 2; i <= NF; i++) c[$i] = i - 1; next } /^#/ { next }
	$(c["status"]) == "ok" && $(c["t1h"]) != "-" && $(c["t4h"]) != "-" &&
	!($(c["t1k"]) "" <= $(c["t1h"]) "" && $(c["t4h"]) "" <= $(c["t4k"]) "") { n++ }
	END { print n + 0 }' "$TMP/rec")
is "$bad" 0 "the NIC's stamps lie between the kernel's: t1k <= t1h, t4h <= t4k"
done_testing
