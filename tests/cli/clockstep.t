#!/bin/sh
# SPDX-License-Identifier: ISC
# clockstep on sim: clocks, and its refusals for realtime.  Nothing here
# changes the host clock: realtime is only ever refused, or (with
# --system but without CAP_SYS_TIME) asked for --show, which only reads.
. "$(dirname "$0")/../lib.sh"

clk=sim:$TMP/clk
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/show"; }
# "A is within TOL of B" for integers
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'; }

clockstep --clock "$clk" --create --offset -120s --freq 25ppm --show >"$TMP/show"
is "$?" 0 "create: exit 0"
ok "create: offset -120 s (within 1 ms)" near "$(v offset_ns)" -120000000000 1000000
is "$(v freq_ppm)" 25.000000 "create: frequency 25 ppm"
is "$(v slew_left_ns)" 0 "create: no slew"

before=$(v offset_ns)
clockstep -c "$clk" --step +1500ms --show >"$TMP/show"
ok "step +1500ms moves the offset by 1.5 s" near "$(v offset_ns)" $((before + 1500000000)) 1000000

clockstep -c "$clk" --step -2s --show >"$TMP/show"
ok "step -2s moves it back" near "$(v offset_ns)" $((before - 500000000)) 1000000

clockstep -c "$clk" --slew 250ms --show >"$TMP/show"
left=$(v slew_left_ns)
ok "slew 250ms: 250 ms still to come, less what 500 ppm did since" \
	test "$left" -le 250000000 -a "$left" -gt 249000000
clockstep -c "$clk" --slew -1ms --show >"$TMP/show"
ok "a new slew replaces the old one" near "$(v slew_left_ns)" -1000000 1000

clockstep -c "$clk" --detune -5ppm --show >"$TMP/show"
is "$(v freq_ppm)" 20.000000 "detune -5ppm: 25 - 5"
clockstep -c "$clk" --freq -3.5ppm --show >"$TMP/show"
is "$(v freq_ppm)" -3.500000 "freq sets, not adds"

clockstep -c "sim:$TMP/w" --create --wander 0.02 --seed 9 --show >"$TMP/show"
is "$(v wander_ppm) $(v seed)" "0.020000 9" "create with wander and seed"

# Refusals.
clockstep -c realtime --step 1s 2>"$TMP/err"
is "$?" 2 "realtime without --system: exit 2"
ok "... one line saying why" grep -q "^clockstep: clock 'realtime': refusing to change the system clock without --system$" "$TMP/err"
is "$(wc -l <"$TMP/err")" 2 "... and the usage hint, nothing else"

if setpriv --bounding-set -sys_time true 2>/dev/null; then
	setpriv --inh-caps -sys_time --bounding-set -sys_time -- \
		"$NTPX_BIN/clockstep" -c realtime --system --show >/dev/null 2>"$TMP/err"
	rc=$?
	is "$rc $(cat "$TMP/err")" \
		"1 clockstep: clock 'realtime': changing the system clock needs CAP_SYS_TIME" \
		"realtime --system without CAP_SYS_TIME is refused"
else
	skip "realtime --system without CAP_SYS_TIME is refused" "setpriv cannot drop capabilities here"
fi

clockstep -c "sim:$TMP/none" --show 2>"$TMP/err"
is "$?" 1 "a missing sim: file: exit 1"
ok "... naming the file and the fix" grep -q "sim:$TMP/none': No such file or directory (make it with clockstep --create)" "$TMP/err"

clockstep -c "$clk" --step 1q 2>/dev/null
is "$?" 2 "a duration without a known unit: exit 2"
clockstep -c "$clk" 2>/dev/null
is "$?" 2 "no action: exit 2"
clockstep --help | grep -q -- --detune
is "$?" 0 "--help lists the options"

done_testing
