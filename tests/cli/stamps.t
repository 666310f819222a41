#!/bin/sh
# SPDX-License-Identifier: ISC
# Per-layer stamps on loopback (kernel UDP, SO_TIMESTAMPING): the columns
# and their #stamps sources, the order of every stamp within an exchange
# in basic and interleaved mode, stamps on a sim: clock converted so that
# they stay on it, and --no-stamps.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/stamps.sh"

# Lines of ntpreflect's --log LOG for answered requests lacking t2k, t3q
# or t3k.
log_lacking() { awk '!/^#/ && $12 == "ok" && ($4 == "-" || $6 == "-" || $7 == "-")' "$1" | wc -l; }
# sim_order FILE: "BAD N" over the N ok records of FILE (a probe on a sim
# clock): the client's own stages are on its clock, t1 <= t1q <= t1k,
# t4k <= t4; and on the kernel layer the offset is as true as on the user
# layer: within the kernel layer's round trip of the exact true2.
sim_order() {
	bad=0 n=0
	rec_cols "$1" t1 t4 status true2 t1q t1k t2k t3k t4k >"$TMP/sim.cols"
	while read -r t1 t4 status true2 t1q t1k t2k t3k t4k; do
		[ "$status" = ok ] || continue
		n=$((n + 1))
		[ "$t1" -le "$t1q" ] && [ "$t1q" -le "$t1k" ] && [ "$t4k" -le "$t4" ] || bad=$((bad + 1))
		dk=$(( (t4k - t1k) - (t3k - t2k) ))
		ok2=$(( (t2k - t1k) + (t3k - t4k) - true2 ))
		[ "${ok2#-}" -le "$dk" ] || bad=$((bad + 1))
	done <"$TMP/sim.cols"
	echo "$bad $n"
}

test_expect_success 'setup: a reflector with --log' '
	start_reflector --log "$TMP/log" &&
	ep=udp://127.0.0.1:$REFLECT_PORT
'

test_expect_success 'ntpprobe with stamps: exit 0' '
	ntpprobe -i 20ms -w 1s -c 50 "$ep" >"$TMP/basic.rec" 2>/dev/null
'

test_expect_success 'the stamp columns follow the base columns' '
	test_is "$(grep "^#fields" "$TMP/basic.rec")" \
		"#fields seq t1 t2 t3 t4 delay off2 status t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h"
'

test_expect_success '#stamps names the source of each column' '
	test_is "$(grep "^#stamps" "$TMP/basic.rec")" \
		"#stamps t1q=so_timestamping:tx_sched t1k=so_timestamping:tx_software t1h=- t2k=- t2h=- t3q=- t3k=- t3h=- t4k=so_timestamping:rx_software t4h=-"
'

test_expect_success 'ntpprobe --xleave: exit 0' '
	ntpprobe -i 20ms -w 1s -c 50 --xleave "$ep" >"$TMP/xl.rec" 2>"$TMP/xl.err"
'

test_expect_success '--xleave: nearly every record ok (at least 45 of 50)' '
	nok=$(count_status "$TMP/xl.rec" ok) &&
	diag "$nok of 50 ok" &&
	test "$nok" -ge 45
'

test_expect_success 'every reply after the first was interleaved' '
	test_grep "interleaved $((nok))," "$TMP/xl.err"
'

test_expect_success 'ntpreflect --log has the server'\''s stamp columns' '
	kill -TERM "$REFLECT_PID" &&
	wait "$REFLECT_PID" &&
	test_is "$(grep "^#fields" "$TMP/log")" "#fields seq t2 t3 t2k t2h t3q t3k t3h mode peer version status"
'

test_expect_success 'every answered request'\''s log line has t2k, t3q and t3k' '
	test_is "$(log_lacking "$TMP/log")" 0
'

test_expect_success 'the log says which requests were interleaved' '
	test "$(log_interleaved "$TMP/log")" -ge $((nok - 1))
'

test_expect_success 'basic mode, with the server'\''s stamps from its log: every stamp in order' '
	set -- $(stamp_order "$TMP/basic.rec" "$TMP/log") &&
	diag "basic: $1 ok records, $2 out of order, $3 lacking a stamp" &&
	test "$1" -ge 45 -a "$2" = 0 -a "$3" = 0
'

test_expect_success 'interleaved mode, the server'\''s stamps from the replies: every stamp in order' '
	set -- $(stamp_order "$TMP/xl.rec") &&
	diag "interleaved: $1 ok records, $2 out of order, $3 lacking a stamp" &&
	test "$1" -ge 45 -a "$2" = 0 -a "$3" = 0
'

# A sim: clock 1.5 s ahead and 40 ppm fast: the kernel's stamps move to it.
test_expect_success 'setup: a reflector, a sim clock 1.5 s ahead and 40 ppm fast' '
	start_reflector &&
	clockstep --clock "sim:$TMP/off" --create --offset 1.5s --freq 40ppm
'

test_expect_success 'ntpprobe --xleave on a sim clock: exit 0' '
	ntpprobe -i 20ms -w 1s -c 30 --xleave --clock "sim:$TMP/off" "udp://127.0.0.1:$REFLECT_PORT" \
		>"$TMP/sim.rec" 2>/dev/null
'

test_expect_success 'sim clock: client stamps in order on its clock, kernel-layer off2 within its round trip of true2' '
	set -- $(sim_order "$TMP/sim.rec") &&
	diag "$1 bad of $2" &&
	test "$2" -ge 25 -a "$1" = 0
'

test_expect_success '--no-stamps: the base columns only' '
	ntpprobe -i 20ms -c 3 --no-stamps "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/off.rec" 2>/dev/null &&
	test_is "$(grep "^#fields" "$TMP/off.rec")" "#fields seq t1 t2 t3 t4 delay off2 status"
'

test_expect_success '--no-stamps: no #stamps line' '
	test_grep ! "^#stamps" "$TMP/off.rec"
'

test_expect_success 'offsetfit reads records with stamp columns' '
	offsetfit "$TMP/xl.rec" >/dev/null
'
done_testing
