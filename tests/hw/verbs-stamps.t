#!/bin/sh
# SPDX-License-Identifier: ISC
# Completion-queue stamps (the 'h' layer, lib/verbs_stamp.h) on a real
# RDMA device: ib:// with server and client on one HCA port (t1h t4h at
# the client, t2h t3h at the server with --xleave), and uudp via=verbs
# against a peer (t1h t4h).  The mock fabric (tests/unit/ib_fabric.c,
# tests/unit/port_verbs.c) proves the ex-CQ path, the conversion and the
# fallback; only a device proves that the HCA stamps where we think it
# does and that the cross-reading of its clock is good to a fraction of a
# microsecond.  Each part skips with its reason where nothing here can
# run it; NTPX_REQUIRE_HW=1 turns the missing device into a failure.
#
# Environment: NTPX_IB_DEV, NTPX_IB_ADDR as tests/hw/ib.t; NTPX_UUDP_DEV,
# NTPX_UUDP_PEER, NTPX_UUDP_PORT as tests/hw/uudp-verbs.t.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/rdma.sh"
need ntpprobe ntpreflect timeout

rdma_need_device "${NTPX_IB_DEV:-}"
plan 8

first_active_device() {
	for _d in $(rdma_devices); do
		[ -n "$(rdma_active_ports "$_d")" ] && { echo "$_d"; return; }
	done
}
device_addr() {
	for _n in /sys/class/infiniband/"$1"/device/net/*; do
		[ -e "$_n" ] || continue
		_a=$(ip -4 -o addr show dev "${_n##*/}" 2>/dev/null | awk '{ print $4 }' |
			cut -d/ -f1 | head -1)
		[ -n "$_a" ] && { echo "$_a"; return; }
	done
}
# Records of REC that are ok and have every column named, and how many of
# those have the order ORDER ("t1 t1h" means t1 <= t1h): "N BAD".
h_order() {
	awk -v cols="$2" '
	$1 == "#fields" { delete c; for (i = 2; i <= NF; i++) c[$i] = i - 1; next }
	/^#/ { next }
	$(c["status"]) == "ok" {
		k = split(cols, w, " ")
		for (i = 1; i <= k; i++) if ($(c[w[i]]) == "-") next
		n++
		for (i = 1; i < k; i++) if (!($(c[w[i]]) "" <= $(c[w[i + 1]]) "")) { bad++; break }
	}
	END { print n + 0, bad + 0 }' "$1"
}

# --- ib:// on one HCA port -------------------------------------------
dev=${NTPX_IB_DEV:-$(first_active_device)}
addr=${NTPX_IB_ADDR:-$(device_addr "${dev:-none}")}
if [ -z "$dev" ] || [ -z "$addr" ]; then
	for i in 1 2 3 4; do
		skip "ib:// stamps" "no RDMA device with an ACTIVE port and an IPv4 address"
	done
else
	port=$((20000 + $$ % 20000))
	spawn srv ntpreflect --xleave "ib://$addr:$port?dev=$dev" 2>"$TMP/srv.err"
	wait_until 10 sh -c "timeout 5 ntpprobe -c 1 -w 200ms 'ib://$addr:$port' 2>/dev/null | grep -Eq ' ok( |$)'"
	ntpprobe -i 20ms -c 100 --xleave "ib://$addr:$port" >"$TMP/ib.rec" 2>"$TMP/ib.err"
	is "$?" 0 "ntpprobe over ib:// on $dev exits 0"
	if grep -q '^#stamps .*t1h=-' "$TMP/ib.rec"; then
		diag "$(grep '^#stamps' "$TMP/ib.rec")"
		for i in 1 2 3; do
			skip "ib:// stamps" "$dev reports no completion timestamps (hca_core_clock 0): the columns are '-' (doc/hardware.md)"
		done
	else
		ok "#stamps names the HCA's completion stamps both ways" \
			grep -Eq '^#stamps .*t1h=verbs:cqe_(ts\+rt_values|wallclock) .*t2h=server:.*t4h=verbs:cqe_' "$TMP/ib.rec"
		set -- $(h_order "$TMP/ib.rec" "t1 t1h")
		ok "t1h on nearly every ok record ($1 of 100)" test "$1" -ge 90
		set -- $(h_order "$TMP/ib.rec" "t4h t4")
		b4=$2
		set -- $(h_order "$TMP/ib.rec" "t1 t1h")
		is "$(($2 + b4))" 0 "the HCA's stamps lie inside the exchange: t1 <= t1h, t4h <= t4"
	fi
fi

# --- uudp via=verbs against a peer -----------------------------------
udev=${NTPX_UUDP_DEV:-}
if [ -z "$udev" ]; then
	for d in /sys/class/net/*/device/infiniband; do
		[ -d "$d" ] || continue
		udev=$(basename "$(dirname "$(dirname "$d")")")
		break
	done
fi
if [ -z "$udev" ] || [ -z "${NTPX_UUDP_PEER:-}" ] || [ "$(id -u)" != 0 ]; then
	for i in 1 2 3 4; do
		skip "uudp via=verbs stamps" "needs root, an RDMA-backed netdev and NTPX_UUDP_PEER (a host running ntpreflect)"
	done
else
	ntpprobe -i 20ms -c 100 "uudp://$NTPX_UUDP_PEER:${NTPX_UUDP_PORT:-123}?dev=$udev&via=verbs" \
		>"$TMP/u.rec" 2>"$TMP/u.err"
	is "$?" 0 "ntpprobe over uudp via=verbs on $udev exits 0"
	if grep -q '^#stamps .*t1h=-' "$TMP/u.rec"; then
		for i in 1 2 3; do
			skip "uudp via=verbs stamps" "$udev's device reports no completion timestamps: the columns are '-' (doc/hardware.md)"
		done
	else
		ok "#stamps names the HCA's completion stamps" \
			grep -Eq '^#stamps .*t1h=verbs:cqe_.*t4h=verbs:cqe_' "$TMP/u.rec"
		set -- $(h_order "$TMP/u.rec" "t1 t1h")
		ok "t1h on nearly every ok record ($1 of 100)" test "$1" -ge 90
		b1=$2
		set -- $(h_order "$TMP/u.rec" "t4h t4")
		is "$(($2 + b1))" 0 "the HCA's stamps lie inside the exchange: t1 <= t1h, t4h <= t4"
	fi
fi
done_testing
