#!/bin/sh
# SPDX-License-Identifier: ISC
# The loopback pipeline of the README: ntpreflect, ntpprobe | offsetfit.
. "$(dirname "$0")/../lib.sh"

# Every complete record's arithmetic, recomputed here with the shell's
# 64-bit integers (awk's doubles cannot hold nanoseconds since 1970):
# prints how many checks fail ("no ok records" when there is nothing to
# check).
arith_bad() {
	bad=0 n=0
	rec_cols "$1" t1 t2 t3 t4 delay off2 status >"$TMP/arith.cols" || return 1
	while read -r t1 t2 t3 t4 delay off2 status; do
		[ "$status" = ok ] || continue
		n=$((n + 1))
		[ $(( (t4 - t1) - (t3 - t2) )) = "$delay" ] || bad=$((bad + 1))
		[ $(( (t2 - t1) + (t3 - t4) )) = "$off2" ] || bad=$((bad + 1))
		[ "$t1" -le "$t4" ] && [ "$t2" -le "$t3" ] || bad=$((bad + 1))
	done <"$TMP/arith.cols"
	if [ "$n" = 0 ]; then echo "no ok records"; else echo "$bad"; fi
}
# offsetfit's fit against the same least squares done here, on values
# made small with the shell's exact integer arithmetic first: prints
# "a_us b_ppm rms_us" of the ok records of FILE.
own_fit() {
	t0=$(rec_cols "$1" status t1 | awk '$1 == "ok" { print $2; exit }')
	rec_cols "$1" status t1 off2 | while read -r status t1 off2; do
		[ "$status" = ok ] && echo "$((t1 - t0)) $off2"
	done | awk '{ x = $1 / 1e9; y = $2 / 2; n++; sx += x; sy += y; X[n] = x; Y[n] = y }
	END {
		mx = sx / n; my = sy / n
		for (i = 1; i <= n; i++) { sxx += (X[i] - mx) ^ 2; sxy += (X[i] - mx) * (Y[i] - my) }
		b = sxy / sxx; a = my - b * mx
		for (i = 1; i <= n; i++) { r = Y[i] - a - b * X[i]; ss += r * r }
		printf "%.3f %.3f %.3f\n", a / 1e3, b / 1e3, sqrt(ss / n) / 1e3
	}'
}
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/sum"; }
near() { awk -v x="$1" -v y="$2" 'BEGIN { d = x - y; exit !(d < 0.002 && d > -0.002) }'; }
fit_agrees() { near "$(v a_us)" "$a_us" && near "$(v b_ppm)" "$b_ppm" && near "$(v rms_us)" "$rms_us"; }

test_expect_success 'setup: a reflector on loopback' '
	start_reflector
'
# Loopback loses nothing: every exchange must be ok.  The probe waits up
# to 5 s for each reply (-w 5s), a limit on a failure as wait_until's
# are; the default, one interval, let a busy machine turn a late reply
# into a timeout.
test_expect_success 'ntpprobe exits 0' '
	ntpprobe -i 100ms -w 5s -c 200 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rec" 2>"$TMP/probe.err"
'
test_expect_success '200 records for -c 200' '
	test_is "$(data_lines "$TMP/rec" | wc -l)" 200
'
test_expect_success 'every exchange on loopback is ok' '
	nok=$(count_status "$TMP/rec" ok) &&
	test_is "$nok" 200
'
test_expect_success 'delay and off2 reproduce T1..T4 on every ok record' '
	test_is "$(arith_bad "$TMP/rec")" 0
'
test_expect_success 'offsetfit --check checks every complete record' '
	offsetfit --check "$TMP/rec" >"$TMP/out" &&
	test_is "$(cat "$TMP/out")" "checked $nok"
'
test_expect_success 'offsetfit fits the ok records' '
	offsetfit "$TMP/rec" >"$TMP/sum" &&
	test_is "$(v n)" "$nok"
'
# Same host, same clock: the true offset is 0, and no exchange can show
# more than half its round trip (one_clock in tests/lib.sh).
test_expect_success 'one clock: |off2| <= delay on every ok record' '
	one_clock "$TMP/rec"
'
test_expect_success 'a, b and rms agree with an independent fit' '
	own_fit "$TMP/rec" >"$TMP/fit" &&
	read -r a_us b_ppm rms_us <"$TMP/fit" &&
	diag "independent fit: $a_us us, $b_ppm ppm, $rms_us us; offsetfit: $(v a_us) us, $(v b_ppm) ppm, $(v rms_us) us" &&
	fit_agrees
'
test_expect_success 'rtt min <= median, both positive' '
	med=$(v rtt_median_us) &&
	mn=$(v rtt_min_us) &&
	diag "$mn <= $med us" &&
	awk -v a="$mn" -v b="$med" "BEGIN { exit !(a > 0 && a <= b) }"
'
test_expect_success 'summary on stderr counts what was sent and answered' '
	test_grep "^ntpprobe: sent 200, ok $nok, " "$TMP/probe.err"
'
done_testing
