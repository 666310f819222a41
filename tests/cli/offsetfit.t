#!/bin/sh
# SPDX-License-Identifier: ISC
# offsetfit against hand-computed values, and every kind of bad input.
. "$(dirname "$0")/../lib.sh"

# Ten exchanges one second apart.  T2 = T1 + 50000 + 10k, T3 = T2 + 1000,
# T4 = T1 + 101000, so delay = 100000 ns and off2 = 20k ns: the offset is
# 10k ns at t = k s, a line with a = 0 and b = 10 ns/s = 0.01 ppm.
base=1764455329000000000
good() {
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
}
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/sum"; }

# bad WANT LINE...: the good file with LINEs after it is refused: exit 1,
# one line naming the file and line (WANT: "LINE-NUMBER: reason"),
# nothing on stdout.  The good file's lines come first, so that the line
# number shows.
bad() {
	want=$1
	shift
	cp "$TMP/good" "$TMP/bad"
	printf '%s\n' "$@" >>"$TMP/bad"
	offsetfit "$TMP/bad" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc = 1 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
		grep -q "^offsetfit: $TMP/bad:$want" "$TMP/err" && return 0
	diag "rc $rc, stdout $(wc -c <"$TMP/out") bytes, stderr: $(cat "$TMP/err")"
	return 1
}

# --stability: 100 exchanges 1 s apart, the offset 10 ns/s exactly, the
# 41st lost.  A line has no Allan deviation; its MTIE and TIE-RMS over
# tau are 10 ns/s times tau; the gap removes the three second
# differences over it.  true2 puts the truth 5 ns off, alternately above
# and below: the error series' second differences are all 20 ns, so
# ADEV(1 s) = sqrt(20^2 / 2) ns / 1 s and its MTIE is 10 ns.
line() {
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
}
# sv SERIES TAU COLUMN: --stability's COLUMN at TAU in SERIES
sv() { awk -v s="$1" -v t="$2" -v c="$3" '/^#series/ { cur = $2 } /^#fields/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
	!/^#/ && NF && cur == s ":" && $1 == t { print $col[c] }' "$TMP/stab"; }
# the taus of the offset series, one line
taus() { awk '/^#series offset/ { on = 1; next } /^$/ { on = 0 } on && !/^#/ { print $1 }' "$TMP/stab" | tr '\n' ' '; }

test_expect_success 'setup: ten exchanges on a line, and a timeout' '
	good >"$TMP/good"
'
test_expect_success 'a good file: exit 0' '
	offsetfit "$TMP/good" >"$TMP/sum"
'
test_expect_success 'records counts every line' 'test_is "$(v records)" 11'
test_expect_success 'n counts the ok ones' 'test_is "$(v n)" 10'
test_expect_success 'the timeout is lost' 'test_is "$(v lost)" 1'
test_expect_success 'reject rate 1/11' 'test_is "$(v reject_rate)" 0.090909'
test_expect_success 'intercept 0' 'test_is "$(v a_us)" 0.000'
test_expect_success 'slope 10 ns/s = 0.01 ppm' 'test_is "$(v b_ppm)" 0.010000'
test_expect_success 'no residual on an exact line' 'test_is "$(v rms_us)" 0.000'
test_expect_success 'rtt median 100 us' 'test_is "$(v rtt_median_us)" 100.000'
test_expect_success '--check counts the complete records' '
	offsetfit --check "$TMP/good" >"$TMP/out" &&
	test_is "$(cat "$TMP/out")" "checked 10"
'
test_expect_success '--json carries the same values' '
	offsetfit --json "$TMP/good" >"$TMP/out" &&
	test_is "$(grep -o "\"b_ppm\":[^,]*" "$TMP/out")" "\"b_ppm\":0.010000"
'
test_expect_success '--residuals: t, residual, delay' '
	offsetfit --residuals "$TMP/good" >"$TMP/out" &&
	test_is "$(sed -n 2p "$TMP/out")" "0.000000000 0.000 100.000"
'
test_expect_success '--cdf rtt ends at fraction 1' '
	offsetfit --cdf rtt "$TMP/good" >"$TMP/out" &&
	test_is "$(tail -n 1 "$TMP/out")" "100.000 1.000000"
'
test_expect_success 'reads standard input' '
	offsetfit <"$TMP/good" >"$TMP/out" &&
	test_is "$(sed -n 7p "$TMP/out")" "b_ppm 0.010000"
'

# Each bad input: exit 1, one line naming the file and line, nothing on
# stdout.
test_expect_success 'wrong delay' '
	t1=$base &&
	bad "14: delay/off2" "12 $t1 $((t1+10)) $((t1+20)) $((t1+30)) 11 0 ok x"
'
test_expect_success 'wrong off2' '
	bad "14: delay/off2" "12 $t1 $((t1+10)) $((t1+20)) $((t1+30)) 10 1 ok x"
'
test_expect_success 'unknown status' '
	bad "14: unknown status '\''fine'\''" "12 $t1 - - - - - fine x"
'
test_expect_success 'not an integer' '
	bad "14: bad t2 '\''1.5'\''" "12 $t1 1.5 - - - - timeout x"
'
test_expect_success 'ok without T4' '
	bad "14: ok record without all" "12 $t1 $t1 $t1 - - - ok x"
'
test_expect_success 'too few fields' '
	bad "14: 8 fields, the header names 9" "12 $t1 - - - - - timeout"
'
test_expect_success 'delay without timestamps' '
	bad "14: delay or off2 given without" "12 $t1 - - - 5 - timeout x"
'
test_expect_success 'header missing columns' '
	bad "16: '\''#fields'\'' lacks" "#ntpx-record 1" "#fields seq t1 t2 t3 t4 status" "1 - - - - ok"
'
test_expect_success 'no #ntpx-record: exit 1 and the reason' '
	printf "#fields a\n1\n" >"$TMP/nohdr" &&
	test_must_fail offsetfit "$TMP/nohdr" >"$TMP/out" 2>"$TMP/err" &&
	test_grep "nohdr:1: '\''#fields'\'' before '\''#ntpx-record'\''" "$TMP/err"
'
test_expect_success 'a last line cut short is dropped: one warning, the rest fitted, exit 3' '
	head -c -1 "$TMP/good" >"$TMP/cut" &&
	test_exit 3 offsetfit "$TMP/cut" >"$TMP/out" 2>"$TMP/err" &&
	test_grep "^offsetfit: .*cut:13: last line cut short (no newline): dropped$" "$TMP/err" &&
	test_is "$(wc -l <"$TMP/err")" 1 &&
	test_grep "^b_ppm " "$TMP/out"
'
test_expect_success 'a missing file: exit 1' '
	test_exit 1 offsetfit "$TMP/missing" >"$TMP/out" 2>"$TMP/err"
'
test_expect_success 'a bad option: exit 2' '
	test_exit 2 offsetfit --cdf bogus "$TMP/good" >/dev/null 2>/dev/null
'
test_expect_success 'one ok record is too few for a fit' '
	head -3 "$TMP/good" >"$TMP/one" &&
	test_must_fail offsetfit <"$TMP/one" >/dev/null 2>"$TMP/err" &&
	test_grep "1 ok records: a fit needs at least 2" "$TMP/err"
'

test_expect_success 'setup: 100 exchanges on a line, the 41st lost, true2 5 ns off alternately' '
	line >"$TMP/line"
'
test_expect_success '--stability: exit 0' '
	offsetfit --stability "$TMP/line" >"$TMP/stab"
'
test_expect_success 'offset, residual and the error against true2' '
	test_is "$(grep -c "^#series" "$TMP/stab")" 3
'
test_expect_success 'the grid'\''s gap and the lost record are counted' '
	test_grep "^#grid tau0_s 1 slots 100 samples 99 gaps 1 collisions 0 lost 1\$" "$TMP/stab"
'
test_expect_success 'tau doubles from tau0 up to a third of the run' '
	test_is "$(taus)" "1 2 4 8 16 32 "
'
test_expect_success 'the gap takes the three second differences over it' '
	test_is "$(sv offset 1 n)" 95
'
test_expect_success 'a line has no Allan deviation' '
	test_is "$(sv offset 4 adev)" 0.0000e+00
'
test_expect_success 'MTIE of the line: 10 ns/s x 8 s' '
	test_is "$(sv offset 8 mtie_ns)" 80.0
'
test_expect_success 'TIE-RMS of the line: 10 ns/s x 32 s' '
	test_is "$(sv offset 32 tie_rms_ns)" 320.0000
'
test_expect_success 'the residual has no wander left' '
	test_is "$(sv residual 32 mtie_ns)" 0.0
'
test_expect_success 'the error series: ADEV from its 20 ns second differences' '
	test_is "$(sv error 1 adev)" 1.4142e-08
'
test_expect_success 'the error series: MTIE 10 ns' '
	test_is "$(sv error 16 mtie_ns)" 10.0
'
test_expect_success '--json, one series chosen' '
	offsetfit --stability --series offset --json "$TMP/line" >"$TMP/out" &&
	test_is "$(grep -o "\"gaps\":[0-9]*,.*\"name\":\"[a-z]*\"" "$TMP/out")" \
		"\"gaps\":1,\"collisions\":0,\"lost\":1,\"series\":[{\"name\":\"offset\""
'
test_expect_success '--tau0 sets the grid: t = 0 .. 99 s to the nearest of 0 .. 100 s' '
	offsetfit --stability --tau0 2s --series offset "$TMP/line" >"$TMP/out" &&
	test_is "$(sed -n 2p "$TMP/out")" \
		"#grid tau0_s 2 slots 51 samples 51 gaps 0 collisions 48 lost 1"
'
test_expect_success 'the error series without true2: exit 1 and why' '
	test_exit 1 offsetfit --stability --series error "$TMP/good" >"$TMP/out" 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "offsetfit: series error: the records lack true2"
'
test_expect_success 'an unknown series: exit 2' '
	test_exit 2 offsetfit --stability --series drift "$TMP/good" >/dev/null 2>/dev/null
'

# The NBS 10-point set of NIST SP 1065 (Table 29) as offsets: the
# frequencies 892, 809 .. 677 summed into a phase in ns, 1 s apart.
nbs10() {
	echo "#ntpx-record 1"
	echo "#fields seq t1 t2 t3 t4 delay off2 status"
	k=0 x=0
	for f in 0 892 809 823 798 671 644 883 903 677; do
		x=$((x + f)) t1=$((base + k * 1000000000))
		echo "$((k + 1)) $t1 $((t1 + 50000 + x)) $((t1 + 51000 + x)) $((t1 + 101000)) 100000 $((2 * x)) ok"
		k=$((k + 1))
	done
}
# f COLUMN: COLUMN's place in $TMP/stab's #fields line
fields() { sed -n 's/^#fields //p' "$TMP/stab" | head -1; }

test_expect_success 'setup: the NBS 10-point set' '
	nbs10 >"$TMP/nbs10"
'
test_expect_success '--dev: the columns asked for, in that order' '
	offsetfit --stability --series offset --dev totdev,adev,ohdev,hdev "$TMP/nbs10" >"$TMP/stab" &&
	test_is "$(fields)" "tau_s n totdev adev ohdev hdev"
'
test_expect_success '--dev: SP 1065'\''s published HDEV, OHDEV and TOTDEV of the NBS set' '
	test_is "$(sv offset 1 hdev) $(sv offset 2 hdev) $(sv offset 2 ohdev) $(sv offset 2 totdev) $(sv offset 2 adev)" \
		"7.0806e-08 1.1680e-07 8.5615e-08 9.3904e-08 8.5953e-08"
'
test_expect_success '--dev takes tdev, mtie and tie_rms for their _ns columns' '
	offsetfit --stability --series offset --dev tdev,mtie,tie_rms,alpha "$TMP/nbs10" >"$TMP/stab" &&
	test_is "$(fields)" "tau_s n tdev_ns mtie_ns tie_rms_ns alpha"
'
test_expect_success '--dev with a name not known: exit 2, and why' '
	test_exit 2 offsetfit --stability --dev adev,allan "$TMP/nbs10" >"$TMP/out" 2>"$TMP/err" &&
	test_grep "bad --dev .adev,allan." "$TMP/err"
'
test_expect_success '--ci with one deviation: its EDF column is still named after it' '
	offsetfit --stability --series offset --dev totdev --ci "$TMP/nbs10" >"$TMP/stab" &&
	test_is "$(fields)" "tau_s n totdev totdev_lo totdev_hi totdev_edf alpha"
'
test_expect_success '--ci: each deviation with its interval and EDF, and alpha' '
	offsetfit --stability --series offset --dev adev,mdev --ci "$TMP/nbs10" >"$TMP/stab" &&
	test_is "$(fields)" "tau_s n adev adev_lo adev_hi adev_edf mdev mdev_lo mdev_hi mdev_edf alpha"
'
test_expect_success '--ci: lo < adev < hi, and an EDF' '
	awk "!/^#/ { if (!(\$4 < \$3 && \$3 < \$5 && \$6 > 0)) bad = 1; n++ } END { exit bad || n != 2 }" "$TMP/stab"
'
test_expect_success '--ci 0.95 is wider than 1 sigma, with the same EDF' '
	offsetfit --stability --series offset --dev adev --ci 0.95 "$TMP/nbs10" >"$TMP/stab95" &&
	test_is "$(awk "!/^#/ && \$1 == 1 { print (\$5 > $(sv offset 1 adev_hi)) \$6 }" "$TMP/stab95")" "1$(sv offset 1 adev_edf)"
'
test_expect_success '--ci: a tau with too few samples says so instead of an interval' '
	head -9 "$TMP/nbs10" >"$TMP/nbs7" &&
	offsetfit --stability --series offset --dev adev,totdev --ci "$TMP/nbs7" >"$TMP/stab" &&
	test_is "$(sv offset 2 adev_lo) $(sv offset 2 adev_edf)" "- -" &&
	test_grep "^#too few samples for an interval: tau_s 2 adev\$" "$TMP/stab"
'
test_expect_success '--ci with a confidence not in (0, 1): exit 2' '
	test_exit 2 offsetfit --stability --ci=1.5 "$TMP/nbs10" >/dev/null 2>&1
'
test_expect_success '--max-tau: the octaves up to it' '
	offsetfit --stability --series offset --max-tau 4s "$TMP/line" >"$TMP/stab" &&
	test_is "$(taus)" "1 2 4 "
'
test_expect_success '--dev, --ci, --taus, --max-tau and --mask go with --stability' '
	test_exit 2 offsetfit --ci "$TMP/nbs10" >/dev/null 2>&1 &&
	test_exit 2 offsetfit --taus decade "$TMP/nbs10" >/dev/null 2>&1 &&
	test_exit 2 offsetfit --mask prtc-a "$TMP/nbs10" >/dev/null 2>&1
'

# --taus: the grids clock people compare at.  The line's run is 99 s:
# tau up to 33 s.
test_expect_success '--taus decade: 1, 2 and 4 times each power of ten' '
	offsetfit --stability --series offset --taus decade "$TMP/line" >"$TMP/stab" &&
	test_is "$(taus)" "1 2 4 10 20 "
'
test_expect_success '--taus decade: each statistic as the octaves give it where they meet' '
	test_is "$(sv offset 20 mtie_ns) $(sv offset 10 tie_rms_ns)" "200.0 100.0000" &&
	offsetfit --stability --series error --taus decade "$TMP/line" >"$TMP/stab" &&
	test_is "$(sv error 1 adev) $(sv error 4 n)" "1.4142e-08 89"
'
test_expect_success '--taus all --max-tau 6s: every multiple of tau0' '
	offsetfit --stability --series offset --taus all --max-tau 6s "$TMP/line" >"$TMP/stab" &&
	test_is "$(taus)" "1 2 3 4 5 6 " &&
	test_is "$(sv offset 3 mtie_ns) $(sv offset 5 mtie_ns)" "30.0 50.0"
'
test_expect_success '--taus LIST: durations, in order, once each, up to a third of the run' '
	offsetfit --stability --series offset --taus 7s,1s,7000ms,3s,40s "$TMP/line" >"$TMP/stab" &&
	test_is "$(taus)" "1 3 7 "
'
test_expect_success '--taus with --ci and --json: every deviation at every tau' '
	offsetfit --stability --series offset --taus 1s,3s,5s --dev adev,totdev,hdev --ci --json \
		"$TMP/nbs10" >"$TMP/out" &&
	test_is "$(grep -o "\"tau_s\":[0-9]*" "$TMP/out" | tr "\n" " ")" "\"tau_s\":1 \"tau_s\":3 " &&
	test_grep "\"adev_edf\":[0-9.]*,\"totdev\"" "$TMP/out" &&
	test_grep "\"tau_s\":3,\"n\":4,\"n_mdev\":2,\"n_tie\":7,\"n_mtie\":7,\"n_hdev\":1," "$TMP/out"
'
test_expect_success '--taus: a bad grid or duration is exit 2' '
	test_exit 2 offsetfit --stability --taus weekly "$TMP/line" >/dev/null 2>"$TMP/err" &&
	test_grep "bad --taus .weekly." "$TMP/err" &&
	test_exit 2 offsetfit --stability --taus 1s,,3s "$TMP/line" >/dev/null 2>&1 &&
	test_exit 2 offsetfit --stability --taus 0s "$TMP/line" >/dev/null 2>&1 &&
	test_exit 2 offsetfit --stability --taus 1s,-3s "$TMP/line" >/dev/null 2>&1
'
test_expect_success '--taus LIST below tau0: exit 1 and why' '
	test_exit 1 offsetfit --stability --taus 100ms "$TMP/line" >/dev/null 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "offsetfit: --taus 0.1 s is below tau0 1 s"
'
# 2^36 slot passes: every tau of 480,000 slots would be 160,000 passes
# of them, 7.7e10.
test_expect_success '--taus all over too long a run: exit 1, and the --max-tau that fits' '
	awk "BEGIN { print \"#ntpx-record 1\"; print \"#fields seq t1 t2 t3 t4 delay off2 status\"
		for (k = 1; k <= 480000; k++) printf \"%d %d %d %d %d 100000 0 ok\\n\", k, k * 1e9, k * 1e9 + 50000, k * 1e9 + 51000, k * 1e9 + 101000 }" >"$TMP/long" &&
	test_exit 1 offsetfit --stability --series offset --taus all "$TMP/long" >/dev/null 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "offsetfit: --taus all: 159999 taus over 480000 slots is more than 2^36 slot passes; give --max-tau (143165 s here) or --taus decade"
'

# Masks.  The offset of $TMP/line wanders 10 ns/s: MTIE 10 tau ns.
# A mask through (1 s, 11 ns) and (100 s, 1100 ns) is 11 tau on a
# log-log line: every MTIE passes with the margin tau; 900 ns at 100 s
# bends it under the MTIE from 16 s on (11 x 8^0.956 = 80.38 ns at 8 s,
# where a straight line on a linear plot would give 73.8: a fail).
test_expect_success 'setup: masks' '
	printf "# tau limit\n1 11\n\n100 1100\n" >"$TMP/mask-on" &&
	printf "1 11\n100 900\n" >"$TMP/mask-under"
'
test_expect_success '--mask FILE: MTIE, interpolated log-log; under the mask passes, exit 0' '
	offsetfit --stability --series offset --mask "$TMP/mask-on" "$TMP/line" >"$TMP/stab" &&
	test_is "$(sv offset 8 mtie_mask_ns) $(sv offset 8 mtie_margin_ns) $(sv offset 8 mtie_pass)" "88.0000 8.0000 pass" &&
	test_grep "^#mask $TMP/mask-on mtie worst_margin_ns 1.0000 tau_s 1: pass\$" "$TMP/stab"
'
test_expect_success '--mask FILE: a tau over the mask fails: exit 1, the worst margin' '
	test_exit 1 offsetfit --stability --series offset --mask "$TMP/mask-under" "$TMP/line" >"$TMP/stab" &&
	test_is "$(sv offset 8 mtie_mask_ns) $(sv offset 8 mtie_pass) $(sv offset 16 mtie_pass)" "80.3768 pass fail" &&
	test_grep "^#mask $TMP/mask-under mtie worst_margin_ns -[0-9.]* tau_s 32: fail\$" "$TMP/stab"
'
test_expect_success '--mask tdev:FILE: the TDEV against it' '
	offsetfit --stability --series offset --mask "tdev:$TMP/mask-on" "$TMP/line" >"$TMP/stab" &&
	test_grep "^#fields tau_s n adev mdev tdev_ns mtie_ns tie_rms_ns tdev_mask_ns tdev_margin_ns tdev_pass\$" "$TMP/stab"
'
test_expect_success '--mask prtc-a: G.8272 PRTC-A MTIE (25 ns + 0.275 ns/s) and TDEV (3 ns)' '
	test_exit 1 offsetfit --stability --series offset --mask prtc-a "$TMP/line" >"$TMP/stab" &&
	test_is "$(sv offset 4 mtie_mask_ns) $(sv offset 4 tdev_mask_ns) $(sv offset 4 mtie_pass)" "26.1000 3.0000 fail"
'
test_expect_success '--mask prtc-b: the residual, without wander, passes both' '
	offsetfit --stability --series residual --mask prtc-b "$TMP/line" >"$TMP/stab" &&
	test_is "$(sv residual 32 mtie_mask_ns) $(grep -c "^#mask prtc-b .*: pass\$" "$TMP/stab")" "33.8000 2"
'
# 600 exchanges 100 s apart, taus 100 s to 12800 s: where the built-in
# masks end.  G.8272's TDEV tables end PRTC-A at 10000 s and PRTC-B at
# 100000 s; its MTIE tables have no upper tau (doc/offsetfit.1).
test_expect_success '--mask prtc-a, prtc-b: the TDEV limits end at 10000 s and 100000 s, MTIE not' '
	{
		echo "#ntpx-record 1" &&
		echo "#fields seq t1 t2 t3 t4 delay off2 status" &&
		k=0 &&
		while [ $k -lt 600 ]; do
			t1=$((base + k * 100000000000)) x=$((k % 2))
			echo "$((k + 1)) $t1 $((t1 + 50000 + x)) $((t1 + 51000 + x)) $((t1 + 101000)) 100000 $((2 * x)) ok"
			k=$((k + 1))
		done
	} >"$TMP/slow" &&
	offsetfit --stability --series offset --mask prtc-a "$TMP/slow" >"$TMP/stab" &&
	test_is "$(sv offset 6400 tdev_mask_ns) $(sv offset 12800 tdev_mask_ns) $(sv offset 12800 tdev_pass) $(sv offset 12800 mtie_mask_ns)" \
		"30.0000 - - 100.0000" &&
	offsetfit --stability --series offset --mask prtc-b "$TMP/slow" >"$TMP/stab" &&
	test_is "$(sv offset 12800 tdev_mask_ns) $(sv offset 12800 mtie_mask_ns)" "5.0000 40.0000"
'
test_expect_success '--mask: a run no tau of which the mask covers is no pass' '
	printf "1000 10\n2000 20\n" >"$TMP/mask-far" &&
	test_exit 1 offsetfit --stability --series residual --mask "$TMP/mask-far" "$TMP/line" >"$TMP/stab" &&
	test_grep "no tau within the mask: fail" "$TMP/stab"
'
test_expect_success '--mask: a malformed file is one line naming the line, exit 2' '
	printf "1 10\n2 -5\n" >"$TMP/mask-bad" &&
	test_exit 2 offsetfit --stability --mask "$TMP/mask-bad" "$TMP/line" >"$TMP/out" 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "offsetfit: --mask $TMP/mask-bad: line 2: the limit is not a positive number (ns)" &&
	printf "2 10\n1 20\n" >"$TMP/mask-bad" &&
	test_exit 2 offsetfit --stability --mask "$TMP/mask-bad" "$TMP/line" >/dev/null 2>"$TMP/err" &&
	test_grep "line 2: tau does not ascend" "$TMP/err" &&
	test_exit 2 offsetfit --stability --mask "$TMP/nonexistent" "$TMP/line" >/dev/null 2>&1
'
test_expect_success '--mask with --json: verdicts per tau and per mask' '
	test_exit 1 offsetfit --stability --series offset --json --mask "$TMP/mask-under" "$TMP/line" >"$TMP/out" &&
	test_grep "\"mtie_pass\":false" "$TMP/out" &&
	test_grep "\"masks\":\[{\"mask\":\"$TMP/mask-under\",\"stat\":\"mtie\",\"worst_margin_ns\":-[0-9.]*,\"tau_s\":32,\"pass\":false}\]" "$TMP/out"
'

# --percentiles: offsets 0, 10 .. 90 ns, delays all 100 us.
test_expect_success 'offset: min, percentiles, max, ranges, mean, sd, skewness' '
	offsetfit --percentiles "$TMP/good" >"$TMP/pct" &&
	test_is "$(sed -n 3p "$TMP/pct")" "offset 0.000 0.001 0.004 0.045 0.085 0.089 0.090 0.081 0.088 0.045 0.030 0.0000"
'
test_expect_success 'delay: all 100 us' '
	test_is "$(sed -n 4p "$TMP/pct")" "delay 100.000 100.000 100.000 100.000 100.000 100.000 100.000 0.000 0.000 100.000 0.000 0.0000"
'
test_expect_success '--percentiles --json' '
	offsetfit --percentiles --json "$TMP/good" >"$TMP/out" &&
	test_is "$(grep -o "\"delay\":{\"min_us\":[0-9.]*" "$TMP/out")" "\"delay\":{\"min_us\":100.000"
'
done_testing
