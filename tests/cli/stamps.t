#!/bin/sh
# SPDX-License-Identifier: ISC
# Per-layer stamps on loopback (kernel UDP, SO_TIMESTAMPING): the columns
# and their #stamps sources, the order of every stamp within an exchange
# in basic and interleaved mode, stamps on a sim: clock converted so that
# they stay on it, and --no-stamps.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/stamps.sh"
plan 16

start_reflector --log "$TMP/log"
ep=udp://127.0.0.1:$REFLECT_PORT

ntpprobe -i 20ms -c 50 "$ep" >"$TMP/basic.rec" 2>/dev/null
is "$?" 0 "ntpprobe with stamps: exit 0"
is "$(grep '^#fields' "$TMP/basic.rec")" \
	"#fields seq t1 t2 t3 t4 delay off2 status t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h" \
	"the stamp columns follow the base columns"
is "$(grep '^#stamps' "$TMP/basic.rec")" \
	"#stamps t1q=so_timestamping:tx_sched t1k=so_timestamping:tx_software t1h=- t2k=- t2h=- t3q=- t3k=- t3h=- t4k=so_timestamping:rx_software t4h=-" \
	"#stamps names the source of each column"

ntpprobe -i 20ms -c 50 --xleave "$ep" >"$TMP/xl.rec" 2>"$TMP/xl.err"
is "$?" 0 "ntpprobe --xleave: exit 0"
nok=$(count_status "$TMP/xl.rec" ok)
ok "--xleave: nearly every record ok ($nok of 50)" test "$nok" -ge 45
ok "every reply after the first was interleaved ($(cat "$TMP/xl.err"))" \
	grep -q "interleaved $((nok))," "$TMP/xl.err"

kill -TERM "$REFLECT_PID"
wait "$REFLECT_PID"
is "$(grep '^#fields' "$TMP/log")" "#fields seq t2 t3 t2k t2h t3q t3k t3h mode peer version status" \
	"ntpreflect --log has the server's stamp columns"
is "$(awk '!/^#/ && $12 == "ok" && ($4 == "-" || $6 == "-" || $7 == "-")' "$TMP/log" | wc -l)" 0 \
	"every answered request's log line has t2k, t3q and t3k"
ok "the log says which requests were interleaved" \
	test "$(awk '!/^#/ && $9 == "interleaved"' "$TMP/log" | wc -l)" -ge $((nok - 1))

set -- $(stamp_order "$TMP/basic.rec" "$TMP/log")
diag "basic: $1 ok records, $2 out of order, $3 lacking a stamp"
ok "basic mode, with the server's stamps from its log: every stamp in order ($2 of $1 not)" \
	test "$1" -ge 45 -a "$2" = 0 -a "$3" = 0
set -- $(stamp_order "$TMP/xl.rec")
diag "interleaved: $1 ok records, $2 out of order, $3 lacking a stamp"
ok "interleaved mode, the server's stamps from the replies: every stamp in order ($2 of $1 not)" \
	test "$1" -ge 45 -a "$2" = 0 -a "$3" = 0

# A sim: clock 1.5 s ahead and 40 ppm fast: the kernel's stamps move to it.
start_reflector
clockstep -c "sim:$TMP/off" --create --offset 1.5s --freq 40ppm
ntpprobe -i 20ms -c 30 --xleave --clock "sim:$TMP/off" "udp://127.0.0.1:$REFLECT_PORT" \
	>"$TMP/sim.rec" 2>/dev/null
is "$?" 0 "ntpprobe --xleave on a sim clock: exit 0"
# The client's own stages are on its clock: t1 <= t1q <= t1k, t4k <= t4.
bad=0 n=0
while read -r seq t1 t2 t3 t4 delay off2 status true2 t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h; do
	case $seq in \#*) continue ;; esac
	[ "$status" = ok ] || continue
	n=$((n + 1))
	[ "$t1" -le "$t1q" ] && [ "$t1q" -le "$t1k" ] && [ "$t4k" -le "$t4" ] || bad=$((bad + 1))
	# On the kernel layer the offset is as true as on the user layer:
	# within the kernel layer's round trip of the exact true2.
	dk=$(( (t4k - t1k) - (t3k - t2k) ))
	ok2=$(( (t2k - t1k) + (t3k - t4k) - true2 ))
	[ "${ok2#-}" -le "$dk" ] || bad=$((bad + 1))
done <"$TMP/sim.rec"
ok "sim clock: client stamps in order on its clock, kernel-layer off2 within its round trip of true2 ($bad bad of $n)" \
	test "$n" -ge 25 -a "$bad" = 0

ntpprobe -i 20ms -c 3 --no-stamps "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/off.rec" 2>/dev/null
is "$(grep '^#fields' "$TMP/off.rec")" "#fields seq t1 t2 t3 t4 delay off2 status" \
	"--no-stamps: the base columns only"
ok "--no-stamps: no #stamps line" sh -c "! grep -q '^#stamps' '$TMP/off.rec'"
offsetfit "$TMP/xl.rec" >/dev/null
is "$?" 0 "offsetfit reads records with stamp columns"
done_testing
