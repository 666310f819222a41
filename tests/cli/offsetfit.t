#!/bin/sh
# SPDX-License-Identifier: ISC
# offsetfit against hand-computed values, and every kind of bad input.
. "$(dirname "$0")/../lib.sh"

# Ten exchanges one second apart.  T2 = T1 + 50000 + 10k, T3 = T2 + 1000,
# T4 = T1 + 101000, so delay = 100000 ns and off2 = 20k ns: the offset is
# 10k ns at t = k s, a line with a = 0 and b = 10 ns/s = 0.01 ppm.
base=1764455329000000000
{
	echo "#ntpx-record 1"
	echo "#fields seq t1 t2 t3 t4 delay off2 status extra"
	k=0
	while [ $k -lt 10 ]; do
		t1=$((base + k * 1000000000))
		t2=$((t1 + 50000 + 10 * k))
		t3=$((t2 + 1000))
		t4=$((t1 + 101000))
		echo "$((k + 1)) $t1 $t2 $t3 $t4 $(((t4 - t1) - (t3 - t2))) $(((t2 - t1) + (t3 - t4))) ok x$k"
		k=$((k + 1))
	done
	echo "11 $((base + 10000000000)) - - - - - timeout x"
} >"$TMP/good"

offsetfit "$TMP/good" >"$TMP/sum"
is "$?" 0 "a good file: exit 0"
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/sum"; }
is "$(v records)" 11 "records counts every line"
is "$(v n)" 10 "n counts the ok ones"
is "$(v lost)" 1 "the timeout is lost"
is "$(v reject_rate)" 0.090909 "reject rate 1/11"
is "$(v a_us)" 0.000 "intercept 0"
is "$(v b_ppm)" 0.010000 "slope 10 ns/s = 0.01 ppm"
is "$(v rms_us)" 0.000 "no residual on an exact line"
is "$(v rtt_median_us)" 100.000 "rtt median 100 us"
is "$(offsetfit --check "$TMP/good")" "checked 10" "--check counts the complete records"
is "$(offsetfit --json "$TMP/good" | grep -o '"b_ppm":[^,]*')" '"b_ppm":0.010000' "--json carries the same values"
is "$(offsetfit --residuals "$TMP/good" | sed -n 2p)" "0.000000000 0.000 100.000" "--residuals: t, residual, delay"
is "$(offsetfit --cdf rtt "$TMP/good" | tail -1)" "100.000 1.000000" "--cdf rtt ends at fraction 1"
is "$(offsetfit <"$TMP/good" | sed -n 7p)" "b_ppm 0.010000" "reads standard input"

# Each bad input: exit 1, one line naming the file and line, nothing on
# stdout.  The good file's lines come first, so that the line number shows.
bad() {
	title=$1
	want=$2
	shift 2
	cp "$TMP/good" "$TMP/bad"
	printf '%s\n' "$@" >>"$TMP/bad"
	offsetfit "$TMP/bad" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc = 1 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
	   grep -q "^offsetfit: $TMP/bad:$want" "$TMP/err"; then
		_tap_result 0 "$title"
	else
		_tap_result 1 "$title"
		diag "rc $rc, stdout $(wc -c <"$TMP/out") bytes, stderr: $(cat "$TMP/err")"
	fi
}
t1=$base
bad "wrong delay" "14: delay/off2" "12 $t1 $((t1+10)) $((t1+20)) $((t1+30)) 11 0 ok x"
bad "wrong off2" "14: delay/off2" "12 $t1 $((t1+10)) $((t1+20)) $((t1+30)) 10 1 ok x"
bad "unknown status" "14: unknown status 'fine'" "12 $t1 - - - - - fine x"
bad "not an integer" "14: bad t2 '1.5'" "12 $t1 1.5 - - - - timeout x"
bad "ok without T4" "14: ok record without all" "12 $t1 $t1 $t1 - - - ok x"
bad "too few fields" "14: 8 fields, the header names 9" "12 $t1 - - - - - timeout"
bad "delay without timestamps" "14: delay or off2 given without" "12 $t1 - - - 5 - timeout x"
bad "header missing columns" "16: '#fields' lacks" "#ntpx-record 1" "#fields seq t1 t2 t3 t4 status" "1 - - - - ok"
printf '#fields a\n1\n' >"$TMP/nohdr"
offsetfit "$TMP/nohdr" >"$TMP/out" 2>"$TMP/err"
ok "no #ntpx-record: exit 1 and the reason" grep -q "nohdr:1: '#fields' before '#ntpx-record'" "$TMP/err"
head -c -1 "$TMP/good" >"$TMP/cut"
offsetfit "$TMP/cut" >"$TMP/out" 2>"$TMP/err"
ok "a last line cut short is refused" grep -q "cut:13: last line cut short" "$TMP/err"
offsetfit "$TMP/missing" >"$TMP/out" 2>"$TMP/err"
is "$?" 1 "a missing file: exit 1"
offsetfit --cdf bogus "$TMP/good" >/dev/null 2>&1
is "$?" 2 "a bad option: exit 2"
head -3 "$TMP/good" | offsetfit >/dev/null 2>"$TMP/err"
ok "one ok record is too few for a fit" grep -q "1 ok records: a fit needs at least 2" "$TMP/err"
# --stability: 100 exchanges 1 s apart, the offset 10 ns/s exactly, the
# 41st lost.  A line has no Allan deviation; its MTIE and TIE-RMS over
# tau are 10 ns/s times tau; the gap removes the three second
# differences over it.  true2 puts the truth 5 ns off, alternately above
# and below: the error series' second differences are all 20 ns, so
# ADEV(1 s) = sqrt(20^2 / 2) ns / 1 s and its MTIE is 10 ns.
{
	echo "#ntpx-record 1"
	echo "#fields seq t1 t2 t3 t4 delay off2 status true2"
	k=0
	while [ $k -lt 100 ]; do
		t1=$((base + k * 1000000000))
		if [ $k = 40 ]; then
			echo "$((k + 1)) $t1 - - - - - timeout -"
		else
			t2=$((t1 + 50000 + 10 * k)) t3=$((t1 + 51000 + 10 * k)) t4=$((t1 + 101000))
			echo "$((k + 1)) $t1 $t2 $t3 $t4 100000 $((20 * k)) ok $((20 * k + (k % 2 ? 10 : -10)))"
		fi
		k=$((k + 1))
	done
} >"$TMP/line"
offsetfit --stability "$TMP/line" >"$TMP/stab"
is "$?" 0 "--stability: exit 0"
is "$(grep -c '^#series' "$TMP/stab")" 3 "offset, residual and the error against true2"
ok "the grid's gap and the lost record are counted" \
	grep -q '^#grid tau0_s 1 slots 100 samples 99 gaps 1 collisions 0 lost 1$' "$TMP/stab"
sv() { awk -v s="$1" -v t="$2" -v c="$3" '/^#series/ { cur = $2 } /^#fields/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
	!/^#/ && NF && cur == s ":" && $1 == t { print $col[c] }' "$TMP/stab"; }
is "$(awk '/^#series offset/ { on = 1; next } /^$/ { on = 0 } on && !/^#/ { print $1 }' "$TMP/stab" | tr '\n' ' ')" \
	"1 2 4 8 16 32 " "tau doubles from tau0 up to a third of the run"
is "$(sv offset 1 n)" 95 "the gap takes the three second differences over it"
is "$(sv offset 4 adev)" 0.0000e+00 "a line has no Allan deviation"
is "$(sv offset 8 mtie_ns)" 80.0 "MTIE of the line: 10 ns/s x 8 s"
is "$(sv offset 32 tie_rms_ns)" 320.0000 "TIE-RMS of the line: 10 ns/s x 32 s"
is "$(sv residual 32 mtie_ns)" 0.0 "the residual has no wander left"
is "$(sv error 1 adev)" 1.4142e-08 "the error series: ADEV from its 20 ns second differences"
is "$(sv error 16 mtie_ns)" 10.0 "the error series: MTIE 10 ns"
is "$(offsetfit --stability --series offset --json "$TMP/line" | grep -o '"gaps":[0-9]*,.*"name":"[a-z]*"')" \
	'"gaps":1,"collisions":0,"lost":1,"series":[{"name":"offset"' "--json, one series chosen"
is "$(offsetfit --stability --tau0 2s --series offset "$TMP/line" | sed -n 2p)" \
	"#grid tau0_s 2 slots 51 samples 51 gaps 0 collisions 48 lost 1" \
	"--tau0 sets the grid: t = 0 .. 99 s to the nearest of 0 .. 100 s"
offsetfit --stability --series error "$TMP/good" >"$TMP/out" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "1:offsetfit: series error: the records lack true2" \
	"the error series without true2: exit 1 and why"
offsetfit --stability --series drift "$TMP/good" >/dev/null 2>&1
is "$?" 2 "an unknown series: exit 2"

# --percentiles: offsets 0, 10 .. 90 ns, delays all 100 us.
offsetfit --percentiles "$TMP/good" >"$TMP/pct"
is "$(sed -n 3p "$TMP/pct")" "offset 0.000 0.001 0.004 0.045 0.085 0.089 0.090 0.081 0.088 0.045 0.030 0.0000" \
	"offset: min, percentiles, max, ranges, mean, sd, skewness"
is "$(sed -n 4p "$TMP/pct")" "delay 100.000 100.000 100.000 100.000 100.000 100.000 100.000 0.000 0.000 100.000 0.000 0.0000" \
	"delay: all 100 us"
is "$(offsetfit --percentiles --json "$TMP/good" | grep -o '"delay":{"min_us":[0-9.]*')" '"delay":{"min_us":100.000' \
	"--percentiles --json"
done_testing
