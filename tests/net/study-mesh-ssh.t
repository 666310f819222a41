#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-study --hosts FILE on three hosts over ssh (tests/nhost.sh: three
# namespaces on one LAN, each with an sshd of the test's own): the quick
# study's mesh family runs there as a user would run it, its one
# condition hosts, through ntpx-meshrun under tether.  SIGTERM in the
# middle of the mesh ends it and everything on the hosts, with no run
# done; run again on the package, from the hosts file kept in it, it
# finishes.  The run has a
# record file per directed pair; results/mesh.tsv has its row with the
# closure ntpmesh gave and "-" wherever only truth could give a number;
# the figure is drawn; the report's section on real hosts is this run's,
# its closures ntpmesh's row for row; the package verifies, and nothing
# is left on any host.  The study's --blame-min reaches ntpmesh on the
# hosts' run (through ntpx-mesh and ntpx-meshrun, and study.conf when it
# runs again): its row and the report's section state it.  The
# refusals: fewer than three hosts, a bad line, a host that cannot be
# reached, another family without two sides: one line each, exit
# non-zero, no package left behind.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/nhost.sh"

need_prereq ROOT BUILT
need sha256sum
study=$NTPX_TOP/bin/ntpx-study
# The study of the tests below; on a failure, the end of its stderr shown.
study_run() {
	"$study" "$TMP/pkg" >"$TMP/out" 2>"$TMP/err" ||
		{ diag "$(tail -n 8 "$TMP/err")"; return 1; }
}
# COL of results/mesh.tsv's one row.
mcol() {
	awk -F'\t' -v c="$1" "$ntpx_fields"'NR == 1 { fields(); next } { print field(c) }' "$TMP/pkg/results/mesh.tsv"
}

test_expect_success 'setup: three hosts on one LAN, each over ssh' '
	nhost_up sm 3 &&
	nhost_hosts_file >"$TMP/hosts"
'
# The study as a user starts it, stopped by SIGTERM in the middle of the
# mesh: exit 143, nothing left on any host, the run not done, no
# manifest.  Its scale makes the run long enough to be caught; lowered in
# its study.conf, the run again is short.
# PID: once the mesh probes, SIGTERM; it ends with 143 and nothing of it
# is left on any host (each step that fails says so, with the study's
# last words).
interrupt() {
	wait_until 120 probing || { diag "not probing after 120 s: $(tail -n 3 "$TMP/int.err")"; return 1; }
	stop_pid "$1" TERM || { diag "$(tail -n 3 "$TMP/int.err")"; return 1; }
	wait_until 30 nhost_nothing_left ||
		{ diag "left: $(nhost_left 1) / $(nhost_left 2) / $(nhost_left 3)"; return 1; }
}
probing() { test -s "$(ls "$TMP"/pkg/runs/*/meshrun/h1-h2.rec 2>/dev/null | head -n 1)"; }
test_expect_success 'ntpx-study --hosts FILE -f mesh, SIGTERM in the middle of the mesh: exit 143, nothing left, no run done' '
	spawn spid "$study" --quick --scale 20 --seed 7 --hosts "$TMP/hosts" -f mesh --blame-min 7us "$TMP/pkg" \
		>/dev/null 2>"$TMP/int.err" &&
	interrupt "$spid" &&
	test -z "$(ls "$TMP"/pkg/runs/*/done 2>/dev/null)" &&
	test ! -e "$TMP/pkg/MANIFEST.sha256"
'
test_expect_success 'run again on it, the hosts file gone: from the copy kept, exit 0, the report named' '
	sed -i "s/^scale=20\$/scale=1/" "$TMP/pkg/study.conf" &&
	mv "$TMP/hosts" "$TMP/hosts.away" &&
	test_when_finished mv "$TMP/hosts.away" "$TMP/hosts" &&
	study_run &&
	test_is "$(cat "$TMP/out")" "$TMP/pkg/report.html"
'
test_expect_success 'the order: one run, the mesh family, condition hosts; it is done' '
	test_is "$(grep -v "^#" "$TMP/pkg/order.tsv" | cut -f 2-5 | tr "\t" " ")" "mesh hosts udp 1" &&
	run=$(ls -d "$TMP"/pkg/runs/1-mesh-hosts-udp-r1) &&
	test -f "$run/done" && test -f "$run/meshrun/done" &&
	test_grep -x "hosts=1" "$TMP/pkg/study.conf" &&
	cmp "$TMP/hosts" "$TMP/pkg/inventory/hosts" &&
	test_is "$(ls -d "$TMP"/pkg/runs/*/)" "$run/"
'
test_expect_success 'a record file per directed pair between the hosts, each with its #pair and ok records' '
	test "$(ls "$run/meshrun"/*-*.rec | wc -l)" = 6 &&
	for p in h1-h2 h1-h3 h2-h1 h2-h3 h3-h1 h3-h2
	do
		test_grep -x "#pair ${p%-*} ${p#*-}" "$run/meshrun/$p.rec" &&
		test "$(count_status "$run/meshrun/$p.rec" ok)" -gt 10 || return 1
	done
'
test_expect_success 'results/mesh.tsv: the hosts row, its closure ntpmesh'\''s, and "-" wherever only truth could give a number' '
	test "$(grep -vc "^#" "$TMP/pkg/results/mesh.tsv")" = 1 &&
	test_is "$(mcol condition)" hosts &&
	want=$(awk "\$1 == \"loop\" { for (i = 4; i < NF; i++) if (\$i == \"closure_us\") { c = \$(i + 1); c = c < 0 ? -c : c } }
		END { printf \"%.3f\", c }" "$run/ntpmesh.txt") &&
	is_num "$want" &&
	test_is "$(mcol closure_max_us)" "$want" &&
	for c in top_true_asym_us pair_err_max_us host_err_ls_max_us host_err_robust_max_us bound_broken bound_checked
	do
		test_is "$(mcol $c)" "-" || return 1
	done &&
	diag "closure $want us, loops nonzero $(mcol loops_nonzero), blamed $(mcol blamed)"
'
test_expect_success 'the resolution given (--blame-min 7us, kept in study.conf) is what ntpmesh blamed at: the row and the section say so' '
	test_grep -x "blame_min=7us" "$TMP/pkg/study.conf" &&
	test_grep -x "blame_min_us 7.000" "$run/meshrun/ntpmesh.txt" &&
	test_is "$(mcol blame_min_us)" 7.000 &&
	sed -n "/<section id=\"meshrun\">/,/<\/section>/p" "$TMP/pkg/report.html" >"$TMP/sec" &&
	test_grep "at the blame resolution 7.000 µs" "$TMP/sec"
'
test_expect_success 'the figure is drawn, titled for real hosts' '
	test -s "$TMP/pkg/figures/mesh.png" && test -s "$TMP/pkg/figures/mesh.svg" &&
	test_grep "The mesh on real hosts" "$TMP/pkg/figures/mesh.svg"
'
test_expect_success "the report's section on real hosts is this run's: no truth, no error column" '
	sed -n "/<section id=\"meshrun\">/,/<\/section>/p" "$TMP/pkg/report.html" >"$TMP/sec" &&
	test_grep "There is no truth here" "$TMP/sec" &&
	test_grep "runs/1-mesh-hosts-udp-r1, ntpx-study --hosts" "$TMP/sec" &&
	test_grep ! -e "class=\"absent\"" -e "<th>[a-z_]*err[a-z_]*</th>" -e "<th>true_us</th>" "$TMP/sec"
'
test_expect_success "the report's closures are ntpmesh's, row for row" '
	ntpmesh_loop_rows "$run/ntpmesh.txt" >"$TMP/loops.want" &&
	test -s "$TMP/loops.want" &&
	test_is "$(meshrun_rows 1 "$TMP/pkg/report.html")" "$(cat "$TMP/loops.want")" &&
	test "$(meshrun_rows 2 "$TMP/pkg/report.html" | wc -l)" = 3
'
test_expect_success 'the package verifies; nothing left on any host' '
	"$study" --verify "$TMP/pkg" >/dev/null &&
	wait_until 10 nhost_nothing_left
'

test_expect_success '--plan with two sides and --hosts: the two-host families on the transports, the mesh on the hosts' '
	NTPX_REF_EXEC=x NTPX_CLIENT_EXEC=y "$study" --plan --seed 3 --reps 1 -t udp1 -f freerun,mesh \
		--hosts "$TMP/hosts" >"$TMP/plan" 2>/dev/null &&
	test_is "$(grep -v "^#" "$TMP/plan" | cut -f 2-4 | tr "\t" " " | sort)" \
		"$(printf "%s\n" "freerun idle udp1" "mesh hosts udp")"
'

# The refusals, before anything is made.
refused() {	# FILE WANT [options]: exit 1, WANT the one line, no package
	f=$1 w=$2
	shift 2
	test_exit 1 "$study" --quick --hosts "$f" "$@" "$TMP/no" 2>"$TMP/e" &&
	test_is "$(cat "$TMP/e")" "$w" &&
	test ! -e "$TMP/no"
}
test_expect_success 'two hosts are no mesh: exit 1, one line, no package' '
	head -n 2 "$TMP/hosts" >"$TMP/two" &&
	refused "$TMP/two" "ntpx-study: $TMP/two: 2 hosts; a mesh has loops from 3"
'
test_expect_success 'a malformed line: exit 1, the line named, no package' '
	{ cat "$TMP/hosts" && echo "h4"; } >"$TMP/bad" &&
	refused "$TMP/bad" "ntpx-study: $TMP/bad:4: expected NAME ADDRESS [PREFIX...]"
'
test_expect_success 'a host that cannot be reached: exit 1, the host named, no package' '
	{ head -n 2 "$TMP/hosts" && echo "h3 $NHOST_ADDR_3 $NHOST_SSH -p 1 h3"; } >"$TMP/unr" &&
	test_exit 1 "$study" --quick --hosts "$TMP/unr" "$TMP/no" 2>"$TMP/e" &&
	test "$(wc -l <"$TMP/e")" = 1 &&
	test_grep "^ntpx-study: $TMP/unr: host h3 ($NHOST_SSH -p 1 h3): cannot reach it: .*refused" "$TMP/e" &&
	test ! -e "$TMP/no"
'
test_expect_success 'another family with --hosts and no two sides: exit 2, no package' '
	test_exit 2 "$study" --quick --hosts "$TMP/hosts" -f mesh,freerun "$TMP/no" 2>"$TMP/e" &&
	test_grep "family '\''freerun'\'' needs two sides" "$TMP/e" &&
	test ! -e "$TMP/no"
'
test_expect_success 'a resolution that is no duration: exit 2, the option named, no package, no run' '
	test_exit 2 "$study" --quick --hosts "$TMP/hosts" --blame-min 5parsec "$TMP/no" 2>"$TMP/e" &&
	test_grep -x "ntpx-study: bad --blame-min '\''5parsec'\'' (a duration: 5us, 0)" "$TMP/e" &&
	test ! -e "$TMP/no" &&
	test_exit 2 "$NTPX_TOP/bin/ntpx-mesh" -o "$TMP/no" -t udp --condition hosts --hosts "$TMP/hosts" \
		--blame-min -1us 2>"$TMP/e" &&
	test_grep -x "ntpx-mesh: bad --blame-min '\''-1us'\'' (a duration: 5us, 0)" "$TMP/e" &&
	test_exit 2 "$NTPX_TOP/bin/ntpx-meshrun" -o "$TMP/no" --blame-min 1x "$TMP/hosts" 2>"$TMP/e" &&
	test_grep -x "ntpx-meshrun: bad --blame-min '\''1x'\'' (a duration: 5us, 0)" "$TMP/e" &&
	test ! -e "$TMP/no"
'
done_testing
