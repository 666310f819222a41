#!/bin/sh
# offsetfit against hand-computed values, and every kind of bad input.
. "$(dirname "$0")/../lib.sh"
plan 27

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
done_testing
