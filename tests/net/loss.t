#!/bin/sh
# SPDX-License-Identifier: ISC
# lossinject through the real tools: --every 10 over 100 requests drops
# exactly ten, at 10, 20, ... 100, recorded `dropped` (not timeout);
# --rate 5% --seed 7 drops the same positions twice, and another seed
# others; ntpreflect under a schedule drops replies and counts them.
# On loopback: nothing else loses a packet there.
. "$(dirname "$0")/../lib.sh"

need_prereq BUILT

dropped_at() { rec_status "$1" | awk '$2 == "dropped" { print $1 }' | tr '\n' ' '; }
# Dropped records of FILE with a T1 and no T2.
dropped_t1_only() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "dropped" && field("t1") != "-" && field("t2") == "-"' "$1" | wc -l | tr -d ' '
}

test_expect_success 'setup: a reflector on loopback' '
	start_reflector &&
	port=$REFLECT_PORT &&
	ep=udp://127.0.0.1:$REFLECT_PORT
'

test_expect_success '--every 10: exactly 10 dropped, at 10..100' '
	lossinject --every 10 -- ntpprobe -i 2ms -c 100 -w 200ms "$ep" >"$TMP/every.rec" 2>/dev/null &&
	test_is "$(dropped_at "$TMP/every.rec")" "10 20 30 40 50 60 70 80 90 100 "
'

test_expect_success '--every 10: the other 90 answered' '
	test_is "$(count_status "$TMP/every.rec" ok)" 90
'

test_expect_success 'a dropped record has its T1 and nothing after' '
	test_is "$(dropped_t1_only "$TMP/every.rec")" 10
'

test_expect_success '--rate 5% --seed 7 drops something' '
	lossinject --drop 5% --seed 7 -- ntpprobe -i 2ms -c 200 -w 200ms "$ep" >"$TMP/r1.rec" 2>/dev/null &&
	a=$(dropped_at "$TMP/r1.rec") &&
	diag "seed 7 drops: $a" &&
	test -n "$a"
'

test_expect_success '--rate 5% --seed 7 twice: the same positions' '
	lossinject --drop 5% --seed 7 -- ntpprobe -i 2ms -c 200 -w 200ms "$ep" >"$TMP/r2.rec" 2>/dev/null &&
	test_is "$(dropped_at "$TMP/r2.rec")" "$a"
'

test_expect_success '--seed 8 drops other positions' '
	lossinject --drop 5% --seed 8 -- ntpprobe -i 2ms -c 200 -w 200ms "$ep" >"$TMP/r3.rec" 2>/dev/null &&
	test "$(dropped_at "$TMP/r3.rec")" != "$a"
'

test_expect_success 'without lossinject nothing is dropped' '
	ntpprobe -i 2ms -c 50 -w 200ms "$ep" >"$TMP/plain.rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/plain.rec" dropped)" 0
'

# The server side: every 5th reply dropped, counted, and the probe sees
# those as timeouts.
test_expect_success 'setup: ntpreflect under lossinject --every 5, probed' '
	port2=$(free_udp_port) &&
	if [ "$port2" = "$port" ]; then port2=$((port + 1)); fi &&
	spawn rpid lossinject --every 5 -- ntpreflect --stratum 1 "udp://127.0.0.1:$port2" 2>"$TMP/refl2.err" &&
	wait_until 5 udp_listening "$port2" &&
	ntpprobe -i 2ms -c 50 -w 100ms "udp://127.0.0.1:$port2" >"$TMP/srv.rec" 2>/dev/null &&
	stop_pid "$rpid" &&
	diag "$(cat "$TMP/refl2.err")"
'

test_expect_success 'ntpreflect counts the replies it dropped' '
	test_grep "dropped 10" "$TMP/refl2.err"
'

test_expect_success 'the probe sees them as 10 timeouts' '
	test_is "$(count_status "$TMP/srv.rec" timeout)" 10
'
done_testing
