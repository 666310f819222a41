#!/bin/sh
# SPDX-License-Identifier: ISC
# clockstep on sim: clocks, and its refusals for realtime.  Nothing here
# changes the host clock: realtime is only ever refused, or (with
# --system but without CAP_SYS_TIME) asked for --show, which only reads.
. "$(dirname "$0")/../lib.sh"

# SETPRIV: setpriv can drop CAP_SYS_TIME from what a command may hold.
test_lazy_prereq SETPRIV 'setpriv --bounding-set -sys_time true'

clk=sim:$TMP/clk
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/show"; }
# "A is within TOL of B" for integers
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'; }

test_expect_success 'create: exit 0' '
	clockstep --clock "$clk" --create --offset -120s --freq 25ppm --show >"$TMP/show"
'
test_expect_success 'create: offset -120 s (within 1 ms)' '
	near "$(v offset_ns)" -120000000000 1000000
'
test_expect_success 'create: frequency 25 ppm' '
	test_is "$(v freq_ppm)" 25.000000
'
test_expect_success 'create: no slew' '
	test_is "$(v slew_left_ns)" 0
'

test_expect_success 'step +1500ms moves the offset by 1.5 s' '
	before=$(v offset_ns) &&
	clockstep --clock "$clk" --step +1500ms --show >"$TMP/show" &&
	near "$(v offset_ns)" $((before + 1500000000)) 1000000
'
test_expect_success 'step -2s moves it back' '
	clockstep --clock "$clk" --step -2s --show >"$TMP/show" &&
	near "$(v offset_ns)" $((before - 500000000)) 1000000
'

test_expect_success 'slew 250ms: 250 ms still to come, less what 500 ppm did since' '
	clockstep --clock "$clk" --slew 250ms --show >"$TMP/show" &&
	left=$(v slew_left_ns) &&
	test "$left" -le 250000000 -a "$left" -gt 249000000
'
test_expect_success 'a new slew replaces the old one' '
	clockstep --clock "$clk" --slew -1ms --show >"$TMP/show" &&
	near "$(v slew_left_ns)" -1000000 1000
'

test_expect_success 'detune -5ppm: 25 - 5' '
	clockstep --clock "$clk" --detune -5ppm --show >"$TMP/show" &&
	test_is "$(v freq_ppm)" 20.000000
'
test_expect_success 'freq sets, not adds' '
	clockstep --clock "$clk" --freq -3.5ppm --show >"$TMP/show" &&
	test_is "$(v freq_ppm)" -3.500000
'

test_expect_success 'create with wander and seed' '
	clockstep --clock "sim:$TMP/w" --create --wander 0.02 --seed 9 --show >"$TMP/show" &&
	test_is "$(v wander_ppm) $(v seed)" "0.020000 9"
'

# Refusals.
test_expect_success 'realtime without --system: exit 2' '
	test_exit 2 clockstep --clock realtime --step 1s 2>"$TMP/err"
'
test_expect_success '... one line saying why' '
	grep -q "^clockstep: clock '\''realtime'\'': refusing to change the system clock without --system\$" "$TMP/err"
'
test_expect_success '... and the usage hint, nothing else' '
	test_is "$(wc -l <"$TMP/err")" 2
'

test_expect_success SETPRIV 'realtime --system without CAP_SYS_TIME is refused' '
	test_exit 1 setpriv --inh-caps -sys_time --bounding-set -sys_time -- 2>"$TMP/err" \
		"$NTPX_BIN/clockstep" --clock realtime --system --show >/dev/null &&
	test_is "$(cat "$TMP/err")" \
		"clockstep: clock '\''realtime'\'': changing the system clock needs CAP_SYS_TIME"
'

test_expect_success 'a missing sim: file: exit 1' '
	test_exit 1 clockstep --clock "sim:$TMP/none" --show 2>"$TMP/err"
'
test_expect_success '... naming the file and the fix' '
	grep -q "sim:$TMP/none'\'': No such file or directory (make it with clockstep --create)" "$TMP/err"
'

test_expect_success 'a duration without a known unit: exit 2' '
	test_exit 2 clockstep --clock "$clk" --step 1q 2>/dev/null
'
test_expect_success 'no action: exit 2' '
	test_exit 2 clockstep --clock "$clk" 2>/dev/null
'
test_expect_success '--help lists the options' '
	clockstep --help | grep -q -- --detune
'

done_testing
