#!/bin/sh
# SPDX-License-Identifier: ISC
# analysis/: ntpx-summarize, ntpx-figures and ntpx-report on a small
# evidence package built here.
#
# Real runs on loopback (ntpreflect + ntpprobe): freerun on two
# reflectors standing for two paths (udp, udp2), loss through lossinject,
# recovery by restarting the client and by restarting the server, and on
# a disciplined sim: clock (clockstep, ntpprobe --discipline) the 120 s
# step, the 250 ms slew and steady.  Synthesized (tests/helpers/
# synthrec.awk, a mock, because they need the lab's load): loaded,
# bursts, directional.  One run is left without 'done' (an interrupted
# run) and must be ignored.
. "$(dirname "$0")/../lib.sh"
need_prereq GNUPLOT
A=$NTPX_TOP/analysis
SYNTH=$NTPX_TOP/tests/helpers/synthrec.awk

P=$TMP/pkg
# ANALYSIS_KEEP=DIR keeps a copy of the package for a look at it.
keep_package() { test_atexit "rm -rf '$ANALYSIS_KEEP'; cp -r '$TMP/pkg' '$ANALYSIS_KEEP'"; }
# The package's frame: events, order, transports, the study's
# configuration, the inventory.
package_frame() {
	mkdir -p "$P/runs" "$P/inventory" &&
	printf '#fields t_ns run event detail\n' >"$P/events.tsv" &&
	printf '#fields idx family condition transport rep\n' >"$P/order.tsv" &&
	printf '#fields transport status detail\n' >"$P/transports.tsv" &&
	printf 'udp\tpresent\tkernel UDP, loopback\nudp2\tpresent\tkernel UDP, second loopback reflector\nib\tabsent\tno RDMA device\n' >>"$P/transports.tsv" &&
	printf 'seed=7\nreps=2\nquick=1\nlab=loopback-test\n' >"$P/study.conf" &&
	uname -a >"$P/inventory/kernel.txt"
}

idx=0
# newrun FAMILY CONDITION TRANSPORT REP: RUN (the directory), IDX.
newrun() {
	idx=$((idx + 1))
	RUN=$P/runs/$(printf %03d $idx)-$1-$2-$3-r$4
	mkdir -p "$RUN" &&
	printf '%d\t%s\t%s\t%s\t%d\n' $idx "$1" "$2" "$3" "$4" >>"$P/order.tsv"
}
ev() { printf '%s\t%d\t%s\t%s\n' "$(date +%s%N)" $idx "$1" "${2:-}" >>"$P/events.tsv"; }
# Every exchange on loopback is answered: -w 5s is a limit on a failure,
# not a bound on timing (doc/hacking.md), so that a reply a loaded machine
# holds up comes late rather than as a timeout.
probe() {	# transport ntpprobe-args...
	eval port=\$PORT_$1; shift
	ntpprobe -w 5s "$@" "udp://127.0.0.1:$port" 2>>"$TMP/probe.err"
}
synth() {	# kind n ms awk-assignments...
	k=$1 n=$2 ms=$3; shift 3
	awk -f "$SYNTH" -v kind="$k" -v n="$n" -v ms="$ms" -v idx=$idx \
		-v start="$(date +%s)" -v seed=$idx -v ev="$P/events.tsv" "$@" >"$RUN/probe.rec" &&
	touch "$RUN/done"
}

# Real runs: freerun on udp and udp2, loss through lossinject, a client
# restart; two repetitions.  Every step in the && chain, each loop ending
# with "|| return 1": a probe that fails fails the setup.
real_runs() {
	for rep in 1 2; do
		for t in udp udp2; do
			newrun freerun idle $t $rep && ev run_start &&
			probe $t -i 5ms -c 80 >"$RUN/probe.rec" && ev run_end && touch "$RUN/done" || return 1
		done
		for c in 1pct 5pct; do
			newrun loss $c udp $rep && ev run_start &&
			lossinject --drop "${c%pct}%" --seed $rep -- ntpprobe -i 5ms -c 80 "udp://127.0.0.1:$PORT_udp" \
				>"$RUN/probe.rec" 2>>"$TMP/probe.err" &&
			# The runner's keys win over what analysis/ derives: jitter_us
			# here has no record column to come from.
			{ offsetfit "$RUN/probe.rec" && echo "jitter_us 7.000"; } >"$RUN/summary.txt" &&
			ev run_end && touch "$RUN/done" || return 1
		done
		newrun recovery restart_client udp $rep && ev run_start &&
		probe udp -i 5ms -c 20 >"$RUN/probe.rec" &&
		ev restart_client &&
		probe udp -i 5ms -c 20 >>"$RUN/probe.rec" && ev run_end && touch "$RUN/done" || return 1
	done
}
oks() { [ "$(grep -Ec ' ok( |$)' "$RUN/probe.rec")" -ge "$1" ]; }
# A record the stopped reflector left unanswered (the status found by
# name: records carry stamp columns after it).
unanswered() { has_status "$RUN/probe.rec" timeout || has_status "$RUN/probe.rec" refused; }
# Answered again: more ok lines than before the restart, the last one ok.
again() { oks 15 && tail -n 1 "$RUN/probe.rec" | grep -Eq ' ok( |$)'; }

# Synthesized bursts, directional and loaded runs, and the sim-clock
# runs as ntpx-recovery and ntpx-steady make them, only shorter; two
# repetitions on udp and udp2.
mixed_runs() {
	for rep in 1 2; do
		for t in udp udp2; do
			q=2000 && if [ $t = udp2 ]; then q=150; fi &&
			newrun bursts 2s-6s $t $rep && synth bursts 200 100 -v bursts=5-7,13-15 -v q=$q &&
			# udp as ntpx-directional and ntpx-loaded run it: an unloaded
			# phase, then load between load_on and load_off events; udp2 as
			# separate conditions (load all the run; an idle baseline).
			win= && if [ $t = udp ]; then win="-v bursts=3-9 -v onoff=load"; fi || return 1
			for c in c2r r2c both; do
				case $c in c2r) a="-v qreq=$q" ;; r2c) a="-v qresp=$q" ;; both) a="-v qreq=$q -v qresp=$q" ;; esac &&
				newrun directional $c $t $rep && synth directional 90 100 $a $win || return 1
			done
			if [ $t = udp2 ]; then newrun loaded idle $t $rep && synth plain 100 100 || return 1; fi
			newrun loaded 90pct $t $rep && synth directional 100 100 -v qreq=$((q / 2)) -v qresp=$((q / 2)) -v loss=0.05 $win &&
			printf '#ntpx-load 1\n#tool loadgen\n#fields t dir bytes packets gbps drops sent_gbps\n' >"$RUN/load.tsv" &&
			printf '1764455330000000000 %s 1 1 %s 0 9.9\n' c2r 6.0 r2c 3.0 c2r 6.2 r2c 3.2 c2r 5.9 r2c 2.9 >>"$RUN/load.tsv" &&
			# The sim-clock runs as ntpx-recovery and ntpx-steady make them,
			# only shorter.
			clk=$TMP/clock-$t-$rep &&
			newrun recovery step_120s $t $rep && ev run_start &&
			clockstep --clock "sim:$clk" --create >/dev/null &&
			ev step -120s && clockstep --clock "sim:$clk" --step -120s >/dev/null &&
			probe $t -i 50ms -c 40 --clock "sim:$clk" --discipline --step-threshold 128ms >"$RUN/probe.rec" &&
			ev run_end && touch "$RUN/done" &&
			newrun recovery slew_250ms $t $rep && ev run_start &&
			clockstep --clock "sim:$clk" --create >/dev/null &&
			ev slew -250ms && clockstep --clock "sim:$clk" --step -250ms >/dev/null &&
			probe $t -i 50ms -c 30 --clock "sim:$clk" --discipline >"$RUN/probe.rec" &&
			ev run_end && touch "$RUN/done" &&
			newrun steady disciplined $t $rep && ev run_start &&
			clockstep --clock "sim:$clk" --create --offset 500us --freq +12ppm >/dev/null &&
			probe $t -i 50ms -c 60 --clock "sim:$clk" --discipline >"$RUN/probe.rec" &&
			ev run_end && touch "$RUN/done" || return 1
		done
	done
}

# usage_and_missing TOOL: prints "usage exit/missing package exit/lines
# said about the missing package".
usage_and_missing() {
	"$A/$1" 2>/dev/null; _u=$?
	"$A/$1" "$TMP/nothing" 2>"$TMP/err"; _n=$?
	echo "$_u/$_n/$(grep -c . "$TMP/err")"
}
mock_ok() { for r in "$P"/runs/*-bursts-* "$P"/runs/*-directional-* "$P"/runs/*-loaded-*; do
	offsetfit --check "$r/probe.rec" >/dev/null || return 1; done; }

# Every table: present, a #fields header, rows with as many fields, each
# either a name column, a number or '-' (rows_parse, tests/lib.sh).
tables_parse() { rows_parse -t transport,condition,loss "$@"; }
# Every FAMILY.md of results directory DIR has the header, rule and one
# line per row of FAMILY.tsv.
md_ok() {
	for f in freerun loaded bursts directional recovery loss steady; do
		[ "$(grep -c "^|" "$1/$f.md")" = $(($(grep -vc "^#" "$1/$f.tsv") + 2)) ] || return 1
	done
}

# col FAMILY TRANSPORT COLUMN [CONDITION]: the column of the matching
# rows; "no column COLUMN" when the table lacks it ($n[k] of a name never
# seen would be $0, the whole row) and "no table" when there is none, so
# that neither passes for an empty or a numeric value.
col() {
	[ -f "$P/results/$1.tsv" ] || { echo "no table $1.tsv"; return; }
	awk -F'\t' -v t="$2" -v k="$3" -v c="${4:-}" 'NR == 1 { for (i = 2; i <= NF; i++) n[$i] = i - 1
			if (!(k in n)) { print "no column " k; exit } next }
		$1 == t && (c == "" || $n["condition"] == c || $n["loss"] == c) { print $n[k] }' "$P/results/$1.tsv"
}
# between X LO HI: X is a number in LO..HI (X shown)
between() {
	diag "'$1' (want $2..$3)"
	is_num "$1" && awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x + 0 >= lo && x + 0 <= hi) }'
}
# same_s A B: A and B both '-', or numbers within the tables' resolution
# of seconds (ntpx-runstat rounds each run to the millisecond before the
# median is taken, the recomputation below does not).  Shows both.
same_s() {
	diag "'$1' (the records give '$2')"
	{ [ "$1" = - ] && [ "$2" = - ]; } ||
		{ is_num "$1" && is_num "$2" && awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 0.0011 && d >= -0.0011) }'; }
}
# recov_rec RUN EVENT: "REACQUIRE WITHIN" of one recovery run recomputed
# from its records, as doc/ntpx-runstat.1 defines them: seconds from the
# run's EVENT (events.tsv) to the T2 (the reference's stamp) of the first
# ok exchange after it, and to that of the third of three consecutive
# exchanges after it that are ok with |off2| / 2 at most 1 ms (one that is
# not ok breaks the three); '-' for never.  The nanoseconds since 1970 in
# shell arithmetic (awk's doubles would round them).
recov_rec() {
	_ri=${1##*/} && _ri=${_ri%%-*} &&
	_ra=$(awk -F'\t' -v i=$((1$_ri - 1000)) -v e="$2" '$2 == i && $3 == e { print $1; exit }' "$P/events.tsv") &&
	[ -n "$_ra" ] || { echo "no event $2"; return; }
	_re=- _rw=- _rc=0
	rec_cols "$1/probe.rec" status t2 off2 >"$TMP/recov.cols"
	while read -r _st _t2 _o2; do
		if [ "$_st" != ok ]; then _rc=0; continue; fi
		[ $((_t2 - _ra)) -ge 0 ] || continue
		[ "$_re" != - ] || _re=$((_t2 - _ra))
		if [ "${_o2#-}" -le 2000000 ]; then _rc=$((_rc + 1)); else _rc=0; fi
		if [ $_rc = 3 ] && [ "$_rw" = - ]; then _rw=$((_t2 - _ra)); fi
	done <"$TMP/recov.cols"
	awk -v a=$_re -v b=$_rw 'function s(x) { return x == "-" ? "-" : sprintf("%.6f", x / 1e9) } BEGIN { print s(a), s(b) }'
}
# recov_med CONDITION TRANSPORT EVENT FIELD: the median over the
# repetitions of recov_rec's FIELD (1 reacquire, 2 within), '-' counting
# as never, as ntpx-summarize takes it (doc/ntpx-summarize.1).
recov_med() {
	for _d in "$P"/runs/*-recovery-$1-$2-r*; do
		[ -f "$_d/done" ] && recov_rec "$_d" "$3" | awk -v k=$4 '{ print $k }'
	done | awk '{ v[++n] = $1 == "-" ? 1e300 : $1 }
		END { for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		if (!n) print "no runs"; else if (m >= 1e299) print "-"; else printf "%.6f\n", m }'
}
# stepped RUN: the run's first ok reply stepped its sim: clock (adj step)
# and left it within half that exchange's round trip of the truth: the
# next ok reply's |true2| is at most the stepping reply's delay, plus the
# nanosecond the step's halving of off2 may drop.  Exact on one clock: a
# measured offset errs by at most half its round trip, and the step
# corrects by the measured offset (the first slew comes later, at an
# update of the filter).
stepped() {
	_m=$(rec_cols "$1/probe.rec" status adj delay true2 | awk '$1 != "ok" { next }
		!n++ { if ($2 != "step") { why = "the first ok reply did not step: " $0; exit } d = $3; next }
		{ t = $4 < 0 ? -$4 : $4; if (t > d + 1) why = "|true2| " t " ns after a step measured over " d " ns"; done = 1; exit }
		END { if (why == "" && !done) why = "no ok reply after the step"
			print why == "" ? "stepped to within " t " of " d " ns" : why; exit why != "" }'); _s=$?
	diag "${1##*/}: $_m"; return $_s
}
# no_step RUN: no record of RUN says the discipline stepped.
no_step() { ! rec_cols "$1/probe.rec" adj | grep -qx step; }
# runs FAMILY CONDITION TRANSPORT: the completed runs' directories
runs() { for _d in "$P"/runs/*-$1-$2-$3-r*; do [ -f "$_d/done" ] && echo "$_d"; done; }
# settled_med TRANSPORT COLUMN SCALE: the steady runs' COLUMN, as ntpx-runstat
# takes it over the ok records the filter calls valid (|COLUMN| / SCALE,
# their median), then the median over repetitions (two: their mean), to
# the table's 0.1 us.
settled_med() {
	for _d in $(runs steady disciplined "$1"); do
		rec_cols "$_d/probe.rec" status valid "$2" |
		awk -v s="$3" '$1 == "ok" && $2 == 1 && $3 != "-" { v[++n] = ($3 < 0 ? -$3 : $3) / s }
			END { for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
			if (n) printf "%.3f\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
	done | awk '{ v[++n] = $1 } END { if (!n) print "no runs"; else { if (n == 2 && v[1] > v[2]) { x = v[1]; v[1] = v[2]; v[2] = x }
		printf "%.1f\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 } }'
}
# within_01 A B: A and B numbers at most 0.1 apart (the table's resolution
# of microseconds).  Shows both.
within_01() {
	diag "'$1' (the records give '$2')"
	is_num "$1" && is_num "$2" && awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 0.1001 && d >= -0.1001) }'
}
# slewed_in RUN: the steady run's loop took its start offset out: it
# slewed, and at its last ok reply the clock is nearer the truth than at
# its first, or at least within the largest round trip its filter chose
# (|true2| <= fdelay: a filtered offset errs by at most half its round
# trip, and the loop corrects by filtered offsets).  Left alone, the
# clock would drift on from its 500 us at +12 ppm and fail both.
slewed_in() {
	_m=$(rec_cols "$1/probe.rec" status adj true2 fdelay | awk '$1 != "ok" { next }
		{ t = $3 < 0 ? -$3 : $3; if (!n++) first = t; last = t; if ($2 == "slew") s++; if ($4 != "-" && $4 > fd) fd = $4 }
		END { printf "slews %d, |true2| first %d last %d, largest fdelay %d ns\n", s, first, last, fd
			exit !(s > 0 && (last < first || last <= fd)) }'); _s=$?
	diag "${1##*/}: $_m"; return $_s
}

# The median over repetitions of offsetfit's rtt_median_us on the udp
# freerun runs.
freerun_median() {
	for d in "$P"/runs/*-freerun-idle-udp-r[12]; do offsetfit "$d/probe.rec" | awk '$1 == "rtt_median_us" { print $2 }'; done |
		sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", (v[1] + v[2]) / 2 }'
}
# above_baseline FAMILY-TRANSPORT MARGIN: the loaded median RTT is above
# the baseline's by more than MARGIN us, the baseline positive.
above_baseline() {
	_ab_a=$(col loaded $1 base_median_rtt_us) && _ab_b=$(col loaded $1 loaded_median_rtt_us) &&
	diag "baseline '$_ab_a' us, loaded '$_ab_b' us" &&
	is_num "$_ab_a" && is_num "$_ab_b" &&
	awk -v a="$_ab_a" -v b="$_ab_b" -v m="$2" 'BEGIN { exit !(a + 0 > 0 && b + 0 > a + m) }'
}

png_ok() {
	[ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	[ "$(dd if="$1" bs=1 skip=12 count=4 2>/dev/null)" = IHDR ] || return 1
	w=$(od -An -tu1 -j16 -N4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	h=$(od -An -tu1 -j20 -N4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	[ "$w" -ge 400 ] && [ "$h" -ge 300 ]
}
svg_ok() {
	grep -q '<svg' "$1" && grep -q '<path' "$1" || return 1
	! command -v xmllint >/dev/null || xmllint --noout "$1"
}
figs="rtt-cdf residual-cdf bursts directional recovery-slew recovery-step adev tdev mtie offset-delay"
all() { _f=$1; shift; for _x; do $_f "$_x" || return 1; done; }
# every_figure CHECK EXT: CHECK holds for every figure's .EXT
every_figure() { all "$1" $(for f in $figs; do echo "$P/figures/$f.$2"; done); }

# Stability: the figures draw offsetfit --stability's numbers, the
# median over the repetitions (two: their mean) at each octave.
stab1() { for d in "$P"/runs/*-$1-*-$2-r[12]; do offsetfit --stability --series offset "$d/probe.rec" |
	awk -v c=$3 '/^#fields/ { for (i = 2; i <= NF; i++) n[$i] = i - 1 } !/^#/ && NF { print $n[c]; exit }'; done |
	awk '{ s += $1; n++ } END { if (n) printf "%.4g", sprintf("%.6g", s / n) + 0; else print "no runs" }'; }
# (what stab1 is compared with: "no row" or "no column C" rather than an
# empty string that would equal stab1's on a broken run).  stab1 rounds
# its mean as ntpx-figures writes a median, to 6 digits, before both are
# printed to 4: rounded once only, 2047.5 and 2047.4996 kilo-ns print
# apart (2.048e+06 against 2.047e+06).
stabtsv() { awk -F'\t' -v f=$1 -v t=$2 -v c=$3 'NR == 1 { for (i = 2; i <= NF; i++) n[$i] = i - 1
		if (!(c in n)) { print "no column " c; done = 1; exit } next }
	$1 == f && $2 == t { printf "%.4g", $n[c]; done = 1; exit }
	END { if (!done) print "no row" }' "$P/figures/stability.tsv"; }
# stab1ci FAMILY TRANSPORT COLUMN: as stab1, from offsetfit --ci
stab1ci() { for d in "$P"/runs/*-$1-*-$2-r[12]; do offsetfit --stability --series offset --dev adev,tdev,mtie --ci "$d/probe.rec" |
	awk -v c=$3 '/^#fields/ { for (i = 2; i <= NF; i++) n[$i] = i - 1 } !/^#/ && NF { print $n[c]; exit }'; done |
	awk '{ s += $1; n++ } END { if (n) printf "%.4g", sprintf("%.6g", s / n) + 0; else print "no runs" }'; }
# stability.tsv's rows where COLUMN has a value
stabvals() { awk -F'\t' -v c=$1 'NR == 1 { for (i = 2; i <= NF; i++) n[$i] = i - 1; next } (c in n) && $n[c] != "-"' "$P/figures/stability.tsv" | wc -l; }
# rows of stability.tsv for FAMILY TRANSPORT
stabrows() { awk -F'\t' -v f="$1" -v t="$2" '$1 == f && $2 == t' "$P/figures/stability.tsv" | wc -l; }
# the most taus (--taus GRID) of offsetfit --stability on the freerun udp
# runs: ntpx-figures has a row for each k-th tau that any repetition has,
# and a run's taus follow its own span, which a busy machine stretches
# in one repetition and not the other
most_taus() { for d in "$P"/runs/*-freerun-*-udp-r[12]; do
	offsetfit --stability --series offset --taus "$1" "$d/probe.rec" | grep -c '^[0-9]'; done | sort -n | tail -n 1; }
# the octaves, the decade taus, and the ratio of stability.tsv's K-th tau
# to its first for FAMILY TRANSPORT
octaves() { most_taus octave; }
decades() { most_taus decade; }
tauratio() { awk -F'\t' -v f="$1" -v t="$2" -v k="$3" '$1 == f && $2 == t && ++n == 1 { a = $3 }
	$1 == f && $2 == t && n == k { printf "%.3g", $3 / a; exit }' "$P/figures/stability.tsv"; }
# The synthesized directional runs put q us on one way only: the
# offset moves by half of what the delay does, + for c2r, - for r2c.
slope() { awk -F'\t' -v t=$1 -v g=$2 '$1 == t && $2 == g { print $4 }' "$P/figures/offset-delay.tsv"; }

# report.html of DIR references only relative paths to files that
# exist, at least 12, and sections of its own (#ID) that it has.
refs_ok() {
	n=0; for r in $(grep -o "\(src\|href\)=\"[^\"]*\"" "$1/report.html" | sed "s/^[a-z]*=\"//; s/\"\$//"); do
		case $r in "#"*) grep -q "id=\"${r#\#}\"" "$1/report.html" || return 1; continue ;; esac
		case $r in /*|*:*|*..*) return 1 ;; esac; [ -s "$1/$r" ] || return 1; n=$((n + 1)); done; [ $n -ge 12 ]
}
# The runs' families of the partial package (runs.tsv), bursts' conditions.
burst_conditions() { awk -F'\t' '$2 == "bursts" { print $3 }' "$Q/results/runs.tsv" | sort -u; }
# Figures directory DIR: every stability figure's steady panel says it
# has no data, and there is no offset-delay figure.
no_steady_panels() {
	for f in adev tdev mtie; do grep -q "no data: no steady run" "$1/$f.svg" || return 1; done
	[ ! -e "$1/offset-delay.png" ]
}
all_three() { "$A/ntpx-summarize" "$1" && "$A/ntpx-figures" "$1" && "$A/ntpx-report" "$1"; }

test_expect_success 'setup: an evidence package'\''s frame (events, order, transports, study.conf, inventory)' '
	if [ -n "${ANALYSIS_KEEP:-}" ]; then keep_package; fi &&
	package_frame
'
test_expect_success 'setup: two reflectors on loopback, standing for two paths (udp, udp2)' '
	start_reflector && PORT_udp=$REFLECT_PORT && PID_udp=$REFLECT_PID &&
	start_reflector && PORT_udp2=$REFLECT_PORT
'
test_expect_success 'setup: freerun, loss and client restart runs, two repetitions' '
	real_runs
'
# Server restart, for real: the probe runs on while its reflector is
# replaced on the same port; the event is written between the two.
# ntpprobe itself in the background, not the probe function: $! of a
# function sent to the background is a subshell's PID, and killing that
# leaves the ntpprobe in it running.
test_expect_success 'setup: a server restart under a running probe' '
	newrun recovery restart_server udp 1 && ev run_start &&
	spawn probe_pid ntpprobe -i 10ms -w 10ms "udp://127.0.0.1:$PORT_udp" >"$RUN/probe.rec" 2>>"$TMP/probe.err" &&
	wait_until 10 oks 10 &&
	stop_pid "$PID_udp" &&
	wait_until 10 unanswered &&
	ev restart_server &&
	spawn REFLECT_PID ntpreflect --stratum 1 "udp://127.0.0.1:$PORT_udp" 2>>"$TMP/reflect.err" &&
	wait_until 10 again &&
	stop_pid "$probe_pid" && ev run_end && touch "$RUN/done"
'
test_expect_success 'setup: synthesized bursts, directional and loaded runs; sim: clock step, slew and steady runs' '
	mixed_runs
'
test_expect_success 'setup: a transport that never answered, and an interrupted run' '
	newrun recovery step_120s udp3 1 && synth plain 20 100 -v loss=1 &&
	newrun freerun idle udp 3 && synth plain 10 100 && rm "$RUN/done"
'

test_expect_success 'ntpx-summarize: usage is exit 2; a missing package exit 1 with one line' '
	test_is "$(usage_and_missing ntpx-summarize)" "2/1/1"
'
test_expect_success 'ntpx-figures: usage is exit 2; a missing package exit 1 with one line' '
	test_is "$(usage_and_missing ntpx-figures)" "2/1/1"
'
test_expect_success 'ntpx-report: usage is exit 2; a missing package exit 1 with one line' '
	test_is "$(usage_and_missing ntpx-report)" "2/1/1"
'

test_expect_success 'the synthesized records pass offsetfit --check' '
	mock_ok
'

test_expect_success 'ntpx-summarize exits 0' '
	"$A/ntpx-summarize" "$P" 2>"$TMP/sum.err"
'
test_expect_success 'runs.tsv has every completed run and no other' '
	ndone=$(ls "$P"/runs/*/done | wc -l) &&
	test_is "$(grep -vc "^#" "$P/results/runs.tsv")" "$ndone"
'

test_expect_success 'freerun.tsv: rows parse' 'tables_parse "$P/results/freerun.tsv"'
test_expect_success 'loaded.tsv: rows parse' 'tables_parse "$P/results/loaded.tsv"'
test_expect_success 'bursts.tsv: rows parse' 'tables_parse "$P/results/bursts.tsv"'
test_expect_success 'directional.tsv: rows parse' 'tables_parse "$P/results/directional.tsv"'
test_expect_success 'recovery.tsv: rows parse' 'tables_parse "$P/results/recovery.tsv"'
test_expect_success 'loss.tsv: rows parse' 'tables_parse "$P/results/loss.tsv"'
test_expect_success 'steady.tsv: rows parse' 'tables_parse "$P/results/steady.tsv"'
test_expect_success 'every FAMILY.md has the header, rule and one line per row' '
	md_ok "$P/results"
'

# freerun: the table's medians are those of offsetfit on each run.
test_expect_success 'freerun median RTT is the median over repetitions of offsetfit'\''s' '
	test_is "$(col freerun udp median_rtt_us)" "$(freerun_median)"
'
test_expect_success 'no row for the absent transport' '
	test_is "$(col freerun ib median_rtt_us)" ""
'

# directional: q us more on one way moves the offset by about q/2.
test_expect_success 'directional c2r offset near +1000 us' '
	between "$(col directional udp c2r_offset_us)" 850 1150
'
test_expect_success 'directional r2c offset near -1000 us' '
	between "$(col directional udp r2c_offset_us)" -1150 -850
'
test_expect_success 'directional slope near 1000 us per unit' '
	between "$(col directional udp slope_us)" 850 1150
'
test_expect_success 'directional: reps counts repetitions, not runs' '
	test_is "$(col directional udp reps)" 2
'
test_expect_success 'udp2 spread near 150 us' '
	between "$(col directional udp2 spread_us)" 110 190
'

# bursts: 2 ms more on the request: the offset moves by up to ~1 ms.
test_expect_success 'bursts: max offset change 500..1300 us on udp' '
	between "$(col bursts udp max_offset_change_us)" 500 1300
'
test_expect_success 'bursts: p99 RTT inside the bursts above 1 ms on udp' '
	between "$(col bursts udp p99_rtt_us)" 1000 5000
'

# loaded: baseline against loaded, load from load.tsv.
test_expect_success 'load_gbps: the means of load.tsv'\''s gbps per direction, summed' '
	test_is "$(col loaded udp load_gbps)" "9.07"
'
test_expect_success 'summary.txt'\''s keys win' '
	test_is "$(col loss udp jitter_us 5pct)" "7.0"
'
test_expect_success 'loaded RTT above baseline, phases of one run' '
	above_baseline udp 1000
'
test_expect_success 'loaded RTT above baseline, separate conditions' '
	above_baseline udp2 100
'
test_expect_success 'phased loaded run: reject rate inside the load window 0.01..0.15' '
	between "$(col loaded udp reject_rate)" 0.01 0.15
'

# recovery.  Each time is held against the same time recomputed from the
# run's records (recov_rec): how long a restart or the loop takes is the
# machine's to decide, what the table makes of the records is not.
test_expect_success 'client restart: reacquire_s is the time from the restart to the next answer' '
	same_s "$(col recovery udp reacquire_s restart_client)" "$(recov_med restart_client udp restart_client 1)"
'
test_expect_success 'client restart: both repetitions reacquired' '
	test_is "$(col recovery udp reacquired restart_client)/$(col recovery udp reps restart_client)" "2/2"
'
test_expect_success 'server restart: reacquired (real reflector restarted)' '
	test_is "$(col recovery udp reacquired restart_server)" 1
'
# The discipline steps at the first reply, by what that reply measured;
# whether three replies in a row then measure under 1 ms is the loaded
# machine's round trips' to decide, so within_1ms_s is held to the
# records, and the step to the truth.
test_expect_success 'step: the first reply stepped each sim: clock to within half its round trip of the truth' '
	set -- $(runs recovery step_120s udp) $(runs recovery step_120s udp2) &&
	test $# = 4 && all stepped "$@"
'
test_expect_success 'step: within_1ms_s is the time to the third of three replies in a row within 1 ms' '
	same_s "$(col recovery udp within_1ms_s step_120s)" "$(recov_med step_120s udp step 2)" &&
	same_s "$(col recovery udp2 within_1ms_s step_120s)" "$(recov_med step_120s udp2 step 2)"
'
test_expect_success 'step: reacquire_s is the time from the step to the first answer' '
	same_s "$(col recovery udp reacquire_s step_120s)" "$(recov_med step_120s udp step 1)"
'
test_expect_success 'slew: 250 ms slewed, never stepped' '
	set -- $(runs recovery slew_250ms udp) $(runs recovery slew_250ms udp2) &&
	test $# = 4 && all no_step "$@"
'
test_expect_success 'slew: within_1ms_s as the records give it' '
	same_s "$(col recovery udp within_1ms_s slew_250ms)" "$(recov_med slew_250ms udp slew 2)"
'
test_expect_success 'step: both repetitions reacquired on udp2' '
	test_is "$(col recovery udp2 reacquired step_120s)/$(col recovery udp2 reps step_120s)" "2/2"
'
test_expect_success "a run without any answer: reacquire_s '-', none reacquired" '
	test_is "$(col recovery udp3 reacquire_s step_120s)/$(col recovery udp3 reacquired step_120s)" "-/0"
'

# loss: drops counted, 5% rejects more than nothing.
test_expect_success '5% loss drops requests' '
	between "$(col loss udp drops 5pct)" 1 20
'

# steady: the loop took the clock's start offset out (against its
# truth), and the table's true error and jitter are the records' own.
test_expect_success 'steady: the loop slewed each sim: clock in from its start offset' '
	set -- $(runs steady disciplined udp) $(runs steady disciplined udp2) &&
	test $# = 4 && all slewed_in "$@"
'
test_expect_success 'steady true error: the median |true2| / 2 of the settled replies' '
	within_01 "$(col steady udp true_error_us)" "$(settled_med udp true2 2000)"
'
test_expect_success 'steady jitter from the filter'\''s column' '
	within_01 "$(col steady udp jitter_us)" "$(settled_med udp jitter 1000)"
'
test_expect_success 'steady: no sync loss' '
	test_is "$(col steady udp2 sync_losses)" 0
'

test_expect_success 'ntpx-figures exits 0' '
	"$A/ntpx-figures" "$P" 2>"$TMP/fig.err"
'
test_expect_success 'every figure is a PNG with an IHDR of at least 400x300' '
	every_figure png_ok png
'
test_expect_success 'every figure is an SVG with paths' '
	every_figure svg_ok svg
'
test_expect_success 'adev figure: freerun udp'\''s first ADEV is the runs'\'' median' '
	test_is "$(stabtsv freerun udp adev)" "$(stab1 freerun udp adev)"
'
test_expect_success 'mtie figure: steady udp2'\''s first MTIE is the runs'\'' median' '
	test_is "$(stabtsv steady udp2 mtie_ns)" "$(stab1 steady udp2 mtie_ns)"
'
test_expect_success 'the figure has every octave of the run, its axis from the data' '
	test_is "$(stabrows freerun udp)" "$(octaves)" &&
	test "$(octaves)" -gt 0
'
test_expect_success 'adev figure: its 1-sigma upper limit is the runs'\'' median of offsetfit --ci'\''s' '
	test_is "$(stabtsv freerun udp adev_hi)" "$(stab1ci freerun udp adev_hi)"
'
test_expect_success 'stability.tsv: the limits around each ADEV and TDEV, a noise type in -2..2' '
	awk -F"\t" "NR == 1 { for (i = 2; i <= NF; i++) n[\$i] = i - 1; next }
		\$n[\"adev_lo\"] != \"-\" && \$n[\"runs\"] == 2 { k++
		if (!(\$n[\"adev_lo\"] <= \$n[\"adev\"] && \$n[\"adev\"] <= \$n[\"adev_hi\"])) bad++
		if (\$n[\"tdev_lo_ns\"] != \"-\" && !(\$n[\"tdev_lo_ns\"] <= \$n[\"tdev_ns\"] && \$n[\"tdev_ns\"] <= \$n[\"tdev_hi_ns\"])) bad++
		if (\$n[\"alpha\"] != \"-\" && (\$n[\"alpha\"] < -2 || \$n[\"alpha\"] > 2)) bad++ }
		END { exit bad || k < 10 }" "$P/figures/stability.tsv"
'
test_expect_success 'the ADEV and TDEV figures say they draw 1-sigma bars and alpha' '
	test_grep "1-sigma bars, noise alpha" "$P/figures/adev.svg" &&
	test_grep "1-sigma bars, noise alpha" "$P/figures/tdev.svg"
'
test_expect_success 'offset-delay: c2r slope near +0.5' '
	between "$(slope udp c2r)" 0.4 0.6
'
test_expect_success 'offset-delay: r2c slope near -0.5' '
	between "$(slope udp r2c)" -0.6 -0.4
'

test_expect_success 'ntpx-report exits 0' '
	"$A/ntpx-report" "$P"
'
test_expect_success 'report.html references only relative paths to files that exist' '
	refs_ok "$P"
'
test_expect_success 'report: the transports table, seven family tables, four of the original study'\''s folded' '
	test_is "$(grep -c "<table>" "$P/report.html")/$(grep -c "<details>" "$P/report.html")" 12/4
'
test_expect_success 'report: transports.tsv'\''s header (spaces) as the table'\''s header' '
	test_is "$(grep -c "<th>detail</th>" "$P/report.html")" 1
'
test_expect_success 'report: loss names udp2 as without runs' '
	test_grep "No completed run on: udp2\." "$P/report.html"
'
test_expect_success 'report: says ib is absent and why' '
	test_grep "ib (no RDMA device)" "$P/report.html"
'
test_expect_success 'report: every figure with its caption' '
	test_is "$(grep -c "<figcaption>" "$P/report.html")" 10
'
test_expect_success 'report: the stability captions read the error bars, alpha and the mask' '
	test_grep "error bar.*1-sigma" "$P/report.html" && test_grep "dashed.*mask" "$P/report.html"
'
test_expect_success 'ntpx-figures --mask prtc-a: the mask on the TDEV and MTIE figures, not ADEV' '
	"$A/ntpx-figures" --mask prtc-a "$P" 2>"$TMP/fig.err" &&
	test_grep "mask prtc-a" "$P/figures/mtie.svg" && test_grep "mask prtc-a" "$P/figures/tdev.svg" &&
	test_grep ! "mask prtc-a" "$P/figures/adev.svg" &&
	test "$(stabvals mtie_mask_ns)" -gt 3 && test "$(stabvals tdev_mask_ns)" -gt 3
'
test_expect_success 'ntpx-figures --mask with a mask that is not: exit 2, one line' '
	test_exit 2 "$A/ntpx-figures" --mask prtc-z "$P" >/dev/null 2>"$TMP/fig.err" &&
	test_is "$(cat "$TMP/fig.err")" "ntpx-figures: --mask prtc-z: No such file or directory"
'
test_expect_success 'ntpx-figures --taus decade: the runs'\'' decade taus, 1, 2, 4, 10 ... tau0' '
	"$A/ntpx-figures" --taus decade "$P" 2>"$TMP/fig.err" &&
	test "$(decades)" -ge 4 && test_is "$(stabrows freerun udp)" "$(decades)" &&
	test_is "$(tauratio freerun udp 3) $(tauratio freerun udp 4)" "4 10" &&
	test_is "$(stabtsv freerun udp adev)" "$(stab1 freerun udp adev)"
'
test_expect_success 'ntpx-figures --taus with a grid it does not draw: exit 2' '
	test_exit 2 "$A/ntpx-figures" --taus all "$P" >/dev/null 2>"$TMP/fig.err" &&
	test_is "$(head -1 "$TMP/fig.err")" "ntpx-figures: bad --taus '\''all'\'' (octave or decade)"
'
test_expect_success 'ntpx-figures without --mask again: no mask' '
	"$A/ntpx-figures" "$P" 2>"$TMP/fig.err" &&
	test_grep ! "mask prtc-a" "$P/figures/mtie.svg" && test "$(stabvals mtie_mask_ns)" = 0
'

# The findings: from the tables, nothing measured again.
# fcol TRANSPORT COLUMN: findings.tsv's value.
fcol() { awk -F'\t' -v t="$1" -v k="$2" "$ntpx_fields"'NR == 1 { fields(); next } field("transport") == t { print field(k) }' "$P/results/findings.tsv"; }
test_expect_success 'findings.tsv: a row per present transport, none for the absent' '
	test_is "$(awk -F"\t" "!/^#/ { print \$1 }" "$P/results/findings.tsv" | tr "\n" " ")" "udp udp2 "
'
test_expect_success "findings: the idle RTT is freerun's median RTT" '
	test_is "$(fcol udp idle_rtt_us)/$(fcol udp2 idle_rtt_us)" "$(col freerun udp median_rtt_us)/$(col freerun udp2 median_rtt_us)"
'
test_expect_success "findings: the jitter and true error are steady's, the spread directional's" '
	test_is "$(fcol udp jitter_us) $(fcol udp true_error_us) $(fcol udp2 spread_us)" \
		"$(col steady udp jitter_us) $(col steady udp true_error_us) $(col directional udp2 spread_us)"
'
test_expect_success 'findings: no stages runs, no stage' '
	test_is "$(fcol udp jitter_stage_idle)/$(fcol udp jitter_stage_load)" "-/-"
'
test_expect_success '--findings: under 25 lines, a line per transport with its numbers, ib absent' '
	"$A/ntpx-summarize" --findings "$P" >"$TMP/findings.txt" &&
	test "$(wc -l <"$TMP/findings.txt")" -lt 25 &&
	test_grep -E "^  udp +$(fcol udp idle_rtt_us) +$(fcol udp jitter_us) +$(fcol udp true_error_us) +$(fcol udp spread_us) " "$TMP/findings.txt" &&
	test_grep "^  ib  *absent: no RDMA device" "$TMP/findings.txt"
'
test_expect_success '--findings: a package not summarized is exit 1 with one line' '
	test_exit 1 "$A/ntpx-summarize" --findings "$TMP/nothing" 2>"$TMP/err" &&
	test_is "$(grep -c . "$TMP/err")" 1
'
test_expect_success 'report: the findings open it, before the first table' '
	awk "/id=\"findings\"/ && !t { f = 1 } /<table/ && !f { t = 1 } END { exit !(f && !t) }" "$P/report.html"
'
test_expect_success "report: each finding's number links to its section" '
	test_grep "<a href=\"#freerun\">$(fcol udp idle_rtt_us)</a>" "$P/report.html" &&
	test_grep "<a href=\"#steady\">$(fcol udp true_error_us)</a>" "$P/report.html" &&
	test_grep "<a href=\"#directional\">$(fcol udp spread_us)</a>" "$P/report.html"
'

# A partial package: only freerun, bursts and steady, no order.tsv (the
# directory names say what each run is; a condition may hold '-').  The other tables and
# figures go, and the report names the families that are absent.
Q=$TMP/partial
test_expect_success 'setup: a partial package: freerun, bursts and steady runs, no order.tsv, stale output' '
	mkdir -p "$Q/runs" &&
	cp "$P/transports.tsv" "$P/events.tsv" "$Q/" &&
	cp -r "$P"/runs/*-freerun-* "$P"/runs/*-bursts-* "$P"/runs/*-steady-* "$Q/runs/" &&
	cp -r "$P/results" "$P/figures" "$Q/"	# stale output that must go
'
test_expect_success 'partial package (no order.tsv, families missing): all three exit 0' '
	all_three "$Q"
'
test_expect_success 'partial: tables of present families only' '
	test_is "$(cd "$Q/results" && ls *.tsv | tr "\n" " ")" "bursts.tsv findings.tsv freerun.tsv runs.tsv steady.tsv "
'
test_expect_success 'partial: figures of present families only' '
	test_is "$(cd "$Q/figures" && ls | tr "\n" " ")" "adev.png adev.svg bursts.png bursts.svg mtie.png mtie.svg offset-delay.png offset-delay.svg offset-delay.tsv residual-cdf.png residual-cdf.svg rtt-cdf.png rtt-cdf.svg stability.tsv tdev.png tdev.svg "
'
test_expect_success "partial: runs named from the directory, condition with '-'" '
	test_is "$(burst_conditions)" "2s-6s"
'
test_expect_success 'partial: the same bursts table as the whole package' '
	test_is "$(cat "$Q/results/bursts.tsv")" "$(cat "$P/results/bursts.tsv")"
'
test_expect_success 'partial: the report names the absent families' '
	test_grep "Families absent from this package: loaded directional recovery loss" "$Q/report.html"
'

# Freerun alone: the stability figures' steady panels say they have no
# data; the offset-delay figure and its section are absent.
R=$TMP/freerun-only
test_expect_success 'setup: a package of freerun runs alone' '
	mkdir -p "$R/runs" &&
	cp "$P/transports.tsv" "$P/events.tsv" "$R/" &&
	cp -r "$P"/runs/*-freerun-* "$R/runs/"
'
test_expect_success 'freerun only: all three exit 0' '
	all_three "$R"
'
test_expect_success 'freerun only: every stability figure'\''s steady panel says it has no data' '
	no_steady_panels "$R/figures"
'
done_testing
