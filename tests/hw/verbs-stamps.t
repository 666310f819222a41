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

# The parts' prerequisites.  IB_ENDPOINT: a device with an ACTIVE port
# and an IPv4 address (rdma_ib_find).  UUDP_VERBS: root, an RDMA-backed
# netdev and NTPX_UUDP_PEER, a host running ntpreflect (rdma_uudp_find).
# IB_CQE_STAMPS, UUDP_CQE_STAMPS: the device reports completion
# timestamps (without, hca_core_clock 0, the columns are '-':
# doc/hardware.md).
test_lazy_prereq IB_ENDPOINT 'rdma_ib_find'
test_lazy_prereq UUDP_VERBS 'test_have_prereq ROOT && rdma_uudp_find'
test_lazy_prereq IB_CQE_STAMPS '! grep -q "^#stamps .*t1h=-" "$TMP/ib.rec"'
test_lazy_prereq UUDP_CQE_STAMPS '! grep -q "^#stamps .*t1h=-" "$TMP/u.rec"'

# Records of REC that are ok and have every column named, and how many of
# those have the order ORDER ("t1 t1h" means t1 <= t1h): "N BAD".
h_order() {
	awk -v cols="$2" "$ntpx_fields"'
	/^#fields/ { fields(); next }
	/^#/ { next }
	field("status") == "ok" {
		k = split(cols, w, " ")
		for (i = 1; i <= k; i++) if (field(w[i]) == "-") next
		n++
		for (i = 1; i < k; i++) if (!(field(w[i]) "" <= field(w[i + 1]) "")) { bad++; break }
	}
	END { print n + 0, bad + 0 }' "$1"
}
ib_ready() { timeout 5 ntpprobe -c 1 -w 200ms "ib://$IB_ADDR:$port" 2>/dev/null | grep -Eq ' ok( |$)'; }

# --- ib:// on one HCA port -------------------------------------------
test_expect_success IB_ENDPOINT 'setup: ntpreflect over ib:// on the device' '
	rdma_ib_find &&
	port=$((20000 + $$ % 20000)) &&
	diag "device $IB_DEV, address $IB_ADDR, port $port" &&
	spawn srv ntpreflect --stratum 1 "ib://$IB_ADDR:$port?dev=$IB_DEV" 2>"$TMP/srv.err" &&
	wait_until 10 ib_ready
'

test_expect_success IB_ENDPOINT 'ntpprobe over ib:// on the device exits 0' '
	test_exit 0 ntpprobe -i 20ms -c 100 --xleave "ib://$IB_ADDR:$port" >"$TMP/ib.rec" 2>"$TMP/ib.err" &&
	diag "$(grep "^#stamps" "$TMP/ib.rec")"
'

test_expect_success IB_ENDPOINT,IB_CQE_STAMPS "ib:// stamps: #stamps names the HCA's completion stamps both ways" '
	test_grep -E "^#stamps .*t1h=verbs:cqe_(ts\+rt_values|wallclock) .*t2h=server:.*t4h=verbs:cqe_" "$TMP/ib.rec"
'

test_expect_success IB_ENDPOINT,IB_CQE_STAMPS 'ib:// stamps: t1h on nearly every ok record (at least 90 of 100)' '
	set -- $(h_order "$TMP/ib.rec" "t1 t1h") &&
	diag "$1 of 100" &&
	test "$1" -ge 90
'

test_expect_success IB_ENDPOINT,IB_CQE_STAMPS "ib:// stamps: the HCA's stamps lie inside the exchange: t1 <= t1h, t4h <= t4" '
	set -- $(h_order "$TMP/ib.rec" "t4h t4") &&
	b4=$2 &&
	set -- $(h_order "$TMP/ib.rec" "t1 t1h") &&
	test_is "$(($2 + b4))" 0
'

# --- uudp via=verbs against a peer -----------------------------------
test_expect_success UUDP_VERBS 'ntpprobe over uudp via=verbs exits 0' '
	rdma_uudp_find &&
	diag "device $UUDP_DEV, peer $NTPX_UUDP_PEER" &&
	test_exit 0 ntpprobe -i 20ms -c 100 "uudp://$NTPX_UUDP_PEER:${NTPX_UUDP_PORT:-123}?dev=$UUDP_DEV&via=verbs" \
		>"$TMP/u.rec" 2>"$TMP/u.err" &&
	diag "$(grep "^#stamps" "$TMP/u.rec")"
'

test_expect_success UUDP_VERBS,UUDP_CQE_STAMPS "uudp via=verbs stamps: #stamps names the HCA's completion stamps" '
	test_grep -E "^#stamps .*t1h=verbs:cqe_.*t4h=verbs:cqe_" "$TMP/u.rec"
'

test_expect_success UUDP_VERBS,UUDP_CQE_STAMPS 'uudp via=verbs stamps: t1h on nearly every ok record (at least 90 of 100)' '
	set -- $(h_order "$TMP/u.rec" "t1 t1h") &&
	diag "$1 of 100" &&
	test "$1" -ge 90
'

test_expect_success UUDP_VERBS,UUDP_CQE_STAMPS "uudp via=verbs stamps: the HCA's stamps lie inside the exchange: t1 <= t1h, t4h <= t4" '
	set -- $(h_order "$TMP/u.rec" "t1 t1h") &&
	b1=$2 &&
	set -- $(h_order "$TMP/u.rec" "t4h t4") &&
	test_is "$(($2 + b1))" 0
'
done_testing
