#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpprobe's summary says what its exchanges said, exactly: the median,
# quantiles, minimum and maximum of the offsets and delays are the ones
# the exchanges' own lines (or records) give, recomputed here, with a
# client clock 5 ms behind its server (issue 33: a log-bucketed
# histogram put the median below the minimum there); the spread is
# named for what it is, sd (outliers included) beside iqr (robust).
. "$(dirname "$0")/../lib.sh"
need_prereq BUILT

N=21

# The lines' offsets and delays, us: "offset delay" a line.
line_values() { sed -n "s/^seq=[0-9]* offset=\([-+0-9.]*\) us delay=\([0-9.]*\) us.* ok$/\1 \2/p" "$1"; }
# stat COLUMN FILE: "median min max p99 q1 q3 sd" of COLUMN (1 or 2) of
# FILE, the median, min and max as they are written there, the rest in
# us (type 7 quantiles, as offsetfit and ntpprobe(1) say).
stat() {
	awk -v c="$1" "{ print \$c }" "$2" | sort -g | awk '
	{ v[NR] = $1; s += $1; ss += $1 * $1 }
	function q(p,    h, k) { h = (NR - 1) * p; k = int(h); return k + 1 >= NR ? v[NR] : v[k + 1] + (h - k) * (v[k + 2] - v[k + 1]) }
	END { m = s / NR; printf "%s %s %s %.4f %.4f %.4f %.4f\n", v[(NR + 1) / 2], v[1], v[NR], q(0.99), q(0.25), q(0.75), sqrt((ss - NR * m * m) / (NR - 1)) }'
}
# near A B: |A - B| <= 0.0015 us (a line rounds to the nanosecond).
near() { awk -v a="$1" -v b="$2" "BEGIN { d = a - b; if (d < 0) d = -d; if (d > 0.0015) { print a \" is not \" b; exit 1 } }"; }
plus() { case $1 in [-+]*) echo "$1" ;; *) echo "+$1" ;; esac; }

test_expect_success 'setup: a reflector, a client clock 5 ms behind it' '
	start_reflector &&
	clockstep --clock "sim:$TMP/c" --create --offset -5ms >/dev/null
'

test_expect_success 'setup: a run for a person, and one of records' '
	ntpprobe --human --clock "sim:$TMP/c" -c $N -i 5ms -w 5s "127.0.0.1:$REFLECT_PORT" >"$TMP/human" &&
	cat "$TMP/human" >&4 &&
	line_values "$TMP/human" >"$TMP/v" &&
	test_is "$(wc -l <"$TMP/v")" $N &&
	ntpprobe --clock "sim:$TMP/c" -c $N -i 5ms -w 5s "127.0.0.1:$REFLECT_PORT" >"$TMP/rec" 2>"$TMP/rec.err" &&
	test_is "$(count_status "$TMP/rec" ok)" $N
'

test_expect_success 'the offsets: median, min and max as the lines have them, all near +5 ms' '
	set -- $(stat 1 "$TMP/v") &&
	test_grep "^offset median $(plus "$1") us, min $(plus "$2") us, max $(plus "$3") us, " "$TMP/human" &&
	awk -v m="$1" "BEGIN { exit !(m > 4000 && m < 6000) }"
'

test_expect_success 'the offsets'\'' iqr and sd (named so, no jitter) are the lines'\''' '
	set -- $(stat 1 "$TMP/v") &&
	sed -n "s/^offset median .* iqr \([0-9.]*\) us, sd \([0-9.]*\) us$/\1 \2/p" "$TMP/human" >"$TMP/spread" &&
	read -r iqr sd <"$TMP/spread" &&
	near "$iqr" "$(awk -v a="$5" -v b="$6" "BEGIN { print b - a }")" &&
	near "$sd" "$7" &&
	test_must_fail grep jitter "$TMP/human"
'

test_expect_success 'the delays: min, median, p99 and max as the lines have them, p99 <= max' '
	set -- $(stat 2 "$TMP/v") &&
	sed -n "s/^delay min \([0-9.]*\) us, median \([0-9.]*\) us, p99 \([0-9.]*\) us, max \([0-9.]*\) us$/\1 \2 \3 \4/p" \
		"$TMP/human" >"$TMP/d" &&
	read -r lo med p99 hi <"$TMP/d" &&
	test_is "$lo $med $hi" "$2 $1 $3" &&
	near "$p99" "$4" &&
	awk -v p="$p99" -v m="$hi" "BEGIN { exit !(p <= m) }"
'

test_expect_success 'records: the summary'\''s medians are the records'\'' own, to the nanosecond' '
	awk "$ntpx_fields"'\''/^#fields/ { fields(); next } /^#/ { next }
		{ printf "%.3f %+.3f\n", field("delay") / 1e3, field("off2") / 2e3 }'\'' "$TMP/rec" >"$TMP/rv" &&
	med_d=$(stat 1 "$TMP/rv" | cut -d" " -f1) &&
	med_o=$(stat 2 "$TMP/rv" | cut -d" " -f1) &&
	test_grep -x "ntpprobe: sent $N, ok $N, lost 0, median delay $med_d us, median offset $(plus "$med_o") us" "$TMP/rec.err"
'

done_testing
