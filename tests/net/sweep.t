#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-sweep, the load dose-response family, in a lab of this test's own
# with short durations: the unloaded condition and load in each
# direction, then the package's table, figure and report section.  Under
# load beyond the slow path's rate the queue sits on the loaded side, so
# the offset's bias is half the delay the queue adds, with the sign of
# the direction (+ c2r, - r2c): the loaded direction's leg carries the
# queue, the other does not.  The shaper runs at 200 Mbit/s, which a busy
# 2-core machine can exceed: the calibration finds it and 120% of it
# fills the queue whatever else runs.  The queue is 10 ms, 250 kB, as in
# tests/net/bias.t: it holds several of the load's 64 KiB GSO packets and
# stays nearly full, where the lab's 2 ms (its floor, 70,000 bytes, one
# such packet) was about half full on average, near the legs' bound of
# half the queue.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
need gnuplot

P=$TMP/pkg
A=$NTPX_TOP/analysis
S=$TMP/study

key() { awk -v k="$2" '$1 == k { print $2 }' "$1/summary.txt"; }
dirs_of() { awk -F'\t' '!/^#/ { n[$2]++ } END { printf "%s%s", (n["c2r"] ? "c2r" : ""), (n["r2c"] ? "r2c" : "") }' "$1/load.tsv" 2>/dev/null; }
capacity() { ntpx-sweep --calibrate -o "$TMP/cal" -t udpslow | awk '$1 == "capacity_bps" { print $2 }'; }
# shellcheck disable=SC2010
r() { echo "$P/runs/$(ls "$P/runs" | grep -- "-sweep-$1-")"; }
# DIR KEY: the run's summary has KEY, a number.
num_key() { awk -v k="$2" '$1 == k { f = ($2 ~ /^-?[0-9]+(\.[0-9]+)?$/) } END { exit !f }' "$1/summary.txt"; }
# (awk would compare "nan" with 0 as a string, and find it greater.)
positive() { is_num "$1" && awk -v b="$1" 'BEGIN { exit !(b > 0) }'; }
negative() { is_num "$1" && awk -v b="$1" 'BEGIN { exit !(b < 0) }'; }
fmt1() { awk -v b="$1" 'BEGIN { printf "%.1f", b }'; }
col() { awk -F'\t' -v c="$1" -v k="$2" "$ntpx_fields"'NR == 1 { fields(); next }
	field("condition") == c { print field(k) }' "$P/results/sweep.tsv"; }
sweep_conditions() { awk -F'\t' '!/^#/ { print $2 }' "$P/results/sweep.tsv" | tr '\n' ' '; }
study_labs_down() {
	for l in $(awk '$1 == "lab:" { print $2 }' "$S/inventory/lab.txt" 2>/dev/null); do
		"$NTPX_BIN/ntpx-lab" -n "$l" down
	done
}
progress_left() {
	grep -o '\[[0-9]/2\] sweep 0pct udpfast r[12] ([0-9.]*s) elapsed [0-9]*:[0-9][0-9]:[0-9][0-9], about [0-9:]* left' "$TMP/study.err" |
		sed 's/.* about //' | tr '\n' ' '
}
second_elapsed() {
	grep -o '\[2/2\].* elapsed [0-9:]*' "$TMP/study.err" | sed 's/.* elapsed //' | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }'
}

test_expect_success "setup: a lab of the test's own, its slow path at 200 Mbit/s with 10 ms of queue" '
	lab_up w -r 200M --queue 10ms
'
test_expect_success '22 conditions: unloaded, and 7 loads x 3 directions' '
	ntpx-sweep --list-conditions >"$TMP/conds" &&
	test_is "$(wc -w <"$TMP/conds")" 22
'
test_expect_success 'calibrated the slow path' '
	cap=$(capacity) &&
	diag "capacity $cap bit/s" &&
	test -n "$cap" &&
	test "$cap" -gt 0
'
test_expect_success 'setup: a package of sweep runs, unloaded, 50% both ways, 120% each way' '
	mkdir -p "$P/runs" &&
	printf "#fields t_ns run event detail\n" >"$P/events.tsv" &&
	printf "#fields idx family condition transport rep\n" >"$P/order.tsv" &&
	printf "#fields transport status detail\nudpslow\tpresent\tthe lab slow path\n" >"$P/transports.tsv" &&
	idx=0 &&
	for c in 0pct 50pct-both 120pct-c2r 120pct-r2c
	do
		idx=$((idx + 1)) &&
		d=$P/runs/$idx-sweep-$c-udpslow-r1 &&
		printf "%d\tsweep\t%s\tudpslow\t1\n" $idx "$c" >>"$P/order.tsv" &&
		{
			ntpx-sweep -o "$d" -t udpslow --condition "$c" -d 3s -i 20ms --capacity "$cap" \
				-E "$P/events.tsv" -R $idx 2>"$TMP/err-$c" ||
			diag "$c: $(tail -n 1 "$TMP/err-$c")"
		} || return 1
	done
'
test_expect_success 'every run finishes' '
	for d in "$(r 0pct)" "$(r 50pct-both)" "$(r 120pct-c2r)" "$(r 120pct-r2c)"
	do
		test -f "$d/done" || return 1
	done
'
test_expect_success '0pct: no load at all' '
	test_is "$(key "$(r 0pct)" load_dir)/$(key "$(r 0pct)" load_gbps)/$(dirs_of "$(r 0pct)")" "none/0.000/"
'
test_expect_success 'the load goes the directions the conditions name' '
	test_is "$(dirs_of "$(r 50pct-both)")/$(dirs_of "$(r 120pct-c2r)")/$(dirs_of "$(r 120pct-r2c)")" "c2rr2c/c2r/r2c"
'
test_expect_success 'bias and jitter are numbers on every run' '
	for d in "$(r 0pct)" "$(r 50pct-both)" "$(r 120pct-c2r)" "$(r 120pct-r2c)"
	do
		for k in bias_us jitter_us
		do
			num_key "$d" $k || return 1
		done || return 1
	done
'
# All of the queue's delay on one leg: half of it shows as offset.  On one
# clock the legs are exact (legs in tests/lib.sh); a leg carries the queue
# when its median rose by at least half the queue's configured delay over
# the unloaded run's, and does not when it rose by less (a busy machine
# adds tens of microseconds to a leg, not 1 ms).  The bias has the sign.
test_expect_success '120% c2r: bias +half the added delay: the forward leg carries the queue, the back leg not' '
	half_q=$((NTPX_SLOW_QUEUE_NS / 2)) &&
	bc=$(key "$(r 120pct-c2r)" bias_us) &&
	set -- $(legs "$(r 0pct)/probe.rec" "$(r 120pct-c2r)/probe.rec") &&
	diag "120% c2r: bias $bc us; legs forward $1 ns, back $2 ns (half the queue $half_q ns)" &&
	[ $1 -ge $half_q ] && [ ${2#-} -lt $half_q ] && positive "$bc"
'
test_expect_success '120% r2c: bias -half the added delay: the back leg carries the queue, the forward leg not' '
	half_q=$((NTPX_SLOW_QUEUE_NS / 2)) &&
	br=$(key "$(r 120pct-r2c)" bias_us) &&
	set -- $(legs "$(r 0pct)/probe.rec" "$(r 120pct-r2c)/probe.rec") &&
	diag "120% r2c: bias $br us; legs forward $1 ns, back $2 ns (half the queue $half_q ns)" &&
	[ $2 -ge $half_q ] && [ ${1#-} -lt $half_q ] && negative "$br"
'

test_expect_success 'summarize, figures and report on the sweep package' '
	"$A/ntpx-summarize" "$P" && "$A/ntpx-figures" "$P" && "$A/ntpx-report" "$P"
'
test_expect_success 'sweep.tsv: one row per condition, by load' '
	test_is "$(sweep_conditions)" "0pct 50pct-both 120pct-c2r 120pct-r2c "
'
test_expect_success "sweep.tsv: the run's bias" '
	br=$(key "$(r 120pct-r2c)" bias_us) &&
	test_is "$(col 120pct-r2c bias_us)" "$(fmt1 "$br")"
'
test_expect_success 'sweep.tsv: the load in percent' '
	test_is "$(col 50pct-both load_pct)" 50
'
test_expect_success 'the sweep figure is a PNG and an SVG' '
	test -s "$P/figures/sweep.png" && grep -q "<svg" "$P/figures/sweep.svg"
'
test_expect_success 'the report has the sweep section with its figure' '
	test_grep figures/sweep.png "$P/report.html"
'

# ntpx-study runs the family, with a progress line per run: the elapsed
# time and what is left by the plan, which --plan prints as the total.
# Two repetitions of the unloaded condition, in a lab of the study's own.
test_expect_success 'ntpx-study -f sweep finishes' '
	test_atexit study_labs_down &&
	env -u NTPX_REF_EXEC -u NTPX_CLIENT_EXEC "$NTPX_TOP/bin/ntpx-study" --quick --reps 2 --seed 9 -f sweep --conditions 0pct -t udpfast \
		--scale 0.5 --no-analysis "$S" 2>"$TMP/study.err"
'
# 1 s of measurement (2 s quick, scaled by 0.5) and 1 s of overhead,
# twice; once, the set-up (2 s), the transport's check (1.5 s) and
# calibration (3.5 s), and the analysis (5 s and 0.1 s a run).
test_expect_success '--plan: 2 runs, 0:00:16 expected, 4 s of them the runs' '
	"$NTPX_TOP/bin/ntpx-study" --plan --quick --reps 2 --seed 9 -f sweep --conditions 0pct -t udpfast --scale 0.5 2>"$TMP/plan.err" >/dev/null &&
	test_grep "^ntpx-study: plan: 2 runs, expected duration 0:00:16 (4.0 s of runs, each its duration + 1 s; 12.2 s of set-up and analysis)" "$TMP/plan.err"
'
test_expect_success "a progress line per run: elapsed, and the plan's time left in runs counting down" '
	test_is "$(progress_left)" "0:00:04 left 0:00:02 left "
'
test_expect_success "the second run's elapsed time covers the first run's 1 s" '
	el2=$(second_elapsed) &&
	diag "the second run: elapsed $el2 s" &&
	test "${el2:-0}" -ge 1
'
done_testing
