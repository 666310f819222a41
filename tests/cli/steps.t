#!/bin/sh
# SPDX-License-Identifier: ISC
# offsetfit does not fit across a step (issue 33, 3): a #reset line, or a
# jump in offset that the records' own delays cannot explain (each
# exchange's true offset lies within half its delay of the measured
# one; between two exchanges a clock moves at most 1000 ppm of the time
# between them), cuts the series, and the last segment is fitted; the
# summary says so.  A jump the delays and that rate can explain is no
# step.  Then README's "Clocks and truth" example, whose first record
# comes before a 120 s step.
. "$(dirname "$0")/../lib.sh"

p2r=$NTPX_TOP/tests/helpers/phase2rec.awk

# recs FILE OFFSET...: records 1 s apart, delay 100 us, the offsets (s).
recs() {
	_f=$1
	shift
	printf '%s\n' "$@" | awk -v scale=1e9 -f "$p2r" >"$_f"
}
key() { sed -n "s/^$1 //p" "$2"; }

# Ten records at 0, then ten at 5 ms rising by 10 us a second: a 5 ms
# jump in 1 s, where 100 us of delay and 1000 ppm allow 1.1 ms.
test_expect_success 'a jump the delays cannot explain: the last segment fitted, said' '
	recs "$TMP/jump" 0 0 0 0 0 0 0 0 0 0 \
		0.005 0.00501 0.00502 0.00503 0.00504 0.00505 0.00506 0.00507 0.00508 0.00509 &&
	offsetfit "$TMP/jump" >"$TMP/out" &&
	test_is "$(key steps "$TMP/out") $(key before_steps "$TMP/out") $(key n "$TMP/out")" "1 10 10" &&
	test_is "$(key records "$TMP/out") $(key rejected "$TMP/out")" "20 0" &&
	test_is "$(key a_us "$TMP/out") $(key b_ppm "$TMP/out") $(key rms_us "$TMP/out")" \
		"5000.000 10.000000 0.000"
'

test_expect_success '--json says it too' '
	offsetfit --json "$TMP/jump" >"$TMP/out.json" &&
	test_grep "\"steps\":1,\"before_steps\":10" "$TMP/out.json"
'

test_expect_success 'the other outputs use the last segment, and say so on stderr' '
	offsetfit --residuals "$TMP/jump" >"$TMP/res" 2>"$TMP/err" &&
	test_is "$(grep -vc "^#" "$TMP/res")" 10 &&
	test_is "$(cat "$TMP/err")" "offsetfit: 1 step in the records (a #reset, or a jump their delays cannot explain): the last 10 ok records, after the last, are used"
'

test_expect_success '--across-steps: one line through all, no steps said' '
	offsetfit --across-steps "$TMP/jump" >"$TMP/out" &&
	test_is "$(key n "$TMP/out")" 20 &&
	test_grep ! "^steps" "$TMP/out"
'

# 1 ms in 1 s: within 100 us of delay and 1000 ppm (1.1 ms).
test_expect_success 'a jump the delays and the rate explain is no step' '
	recs "$TMP/near" 0 0 0 0 0 0.001 0.001 0.001 0.001 0.001 &&
	offsetfit "$TMP/near" >"$TMP/out" &&
	test_is "$(key n "$TMP/out")" 10 &&
	test_grep ! "^steps" "$TMP/out"
'

test_expect_success 'a #reset line cuts the series, whatever the offsets' '
	recs "$TMP/same" 0 0.00001 0.00002 0.00003 0.00004 0.00005 0.00006 0.00007 &&
	sed "6a #reset seq 5" "$TMP/same" >"$TMP/reset" &&
	offsetfit "$TMP/reset" >"$TMP/out" &&
	test_is "$(key steps "$TMP/out") $(key before_steps "$TMP/out") $(key n "$TMP/out")" "1 4 4" &&
	offsetfit "$TMP/same" >"$TMP/out" &&
	test_is "$(key n "$TMP/out")" 8
'

# README, "Clocks and truth", with 30 exchanges: the clock 120 s behind,
# stepped at the first reply, then disciplined.
test_expect_success 'setup: README'"'"'s clocks-and-truth run' '
	start_reflector &&
	clockstep --clock "sim:$TMP/c" --create --offset -120s --freq 25ppm &&
	ntpprobe -i 100ms -c 30 --clock "sim:$TMP/c" --discipline \
		--step-threshold 1s "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/run.rec" 2>/dev/null
'

# The truth's own slope is within the sim clock's reach (25 ppm and
# 500 ppm of slew).  The measured slope differs from it by the slope of
# the errors off - true, each within half its exchange's delay (and the
# sim clock's 525 ppm over that delay): at most
# sum |t - mean t| d/2 / sum (t - mean t)^2 over the records fitted,
# computed here from their own delays.  Fitted across the step, the
# slope was near -1,000,000 ppm.
test_expect_success 'the fit starts after the step: its slope a clock'"'"'s' '
	offsetfit "$TMP/run.rec" >"$TMP/out" &&
	test_is "$(key steps "$TMP/out") $(key before_steps "$TMP/out")" "1 1" &&
	tb=$(key true_b_ppm "$TMP/out") && b=$(key b_ppm "$TMP/out") &&
	is_num "$tb" "$b" &&
	bound=$(awk "$ntpx_fields"'"'"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" && ++k > 1 { n++; t[n] = field("t1") / 1e9; d[n] = field("delay") }
		END { for (i = 1; i <= n; i++) m += t[i] / n
			for (i = 1; i <= n; i++) { x = t[i] - m; a += (x < 0 ? -x : x) * d[i] * (0.5 + 525e-6); q += x * x }
			printf "%.6f\n", a / q / 1e3 }'"'"' "$TMP/run.rec") &&
	diag "b $b ppm, true $tb ppm, the errors'"'"' slope at most $bound ppm" &&
	awk -v tb="$tb" -v b="$b" -v bound="$bound" "BEGIN {
		d = b - tb; exit !((tb < 0 ? -tb : tb) <= 525 && (d < 0 ? -d : d) <= bound) }"
'
done_testing
