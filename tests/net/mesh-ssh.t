#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-meshrun on three hosts over ssh (tests/nhost.sh: three namespaces
# on one LAN, each with an sshd of the test's own): every host serves and
# probes the two others under tether, a record file per directed pair
# with its #pair header, and ntpmesh over them.  There is no truth on
# real hosts: the output says so first and gives no error against one;
# the one loop's closure and every host's and link's estimate come with
# their uncertainties, the loop's verdict (nonzero) the one its interval
# gives.  The run, put in a package as meshrun/, is the report's section
# on real hosts: it says there is no truth, has no error column, and its
# closures are ntpmesh's, row for row.  Nothing is left on any host after
# the run, nor after SIGTERM in the middle of one; the refusals.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/nhost.sh"

need_prereq ROOT BUILT
meshrun=$NTPX_TOP/bin/ntpx-meshrun

# KIND KEY FILE: KEY's value on every line of KIND in ntpmesh's output.
vals() {
	awk -v kind="$1" -v key="$2" '$1 == kind { for (i = 2; i < NF; i++) if ($i == key) print $(i + 1) }' "$3"
}
# The run of the tests below; on a failure, the end of its stderr shown.
mesh_run() {
	"$meshrun" -o "$TMP/pkg/meshrun" -d 4s -i 50ms "$TMP/hosts" >"$TMP/out" 2>"$TMP/err" ||
		{ diag "$(tail -n 5 "$TMP/err")"; return 1; }
}
probing() { ls "$TMP/int"/*.rec >/dev/null 2>&1 && test -s "$(ls "$TMP/int"/*.rec | head -n 1)"; }

test_expect_success 'setup: three hosts on one LAN, each over ssh' '
	nhost_up m 3 &&
	nhost_hosts_file >"$TMP/hosts"
'
test_expect_success 'the mesh run over ssh finishes' '
	mesh_run
'
test_expect_success 'a record file per directed pair, each with its #pair and ok records' '
	test "$(ls "$TMP/pkg/meshrun"/*-*.rec | wc -l)" = 6 &&
	for p in h1-h2 h1-h3 h2-h1 h2-h3 h3-h1 h3-h2
	do
		test_grep -x "#pair ${p%-*} ${p#*-}" "$TMP/pkg/meshrun/$p.rec" &&
		test "$(count_status "$TMP/pkg/meshrun/$p.rec" ok)" -gt 10 || return 1
	done
'
test_expect_success 'the output says first that there is no truth, and gives no error against one' '
	test_grep "^truth none " "$(head -n 1 "$TMP/out" >"$TMP/first" && echo "$TMP/first")" &&
	test_grep ! -e " true_us " -e " err_us " -e "_err_us " "$TMP/out" &&
	test_grep "^# truth none" "$TMP/pkg/meshrun/mesh.txt"
'
test_expect_success 'the loop: its closure with its uncertainty' '
	test "$(grep -c "^loop " "$TMP/out")" = 1 &&
	c=$(vals loop closure_us "$TMP/out") && u=$(vals loop u95_us "$TMP/out") &&
	is_num "$c" "$u" &&
	diag "closure $c us +- $u us"
'
test_expect_success "the loop's verdict is its interval's: nonzero exactly when the closure lies outside it" '
	nz=$(vals loop nonzero "$TMP/out") &&
	awk -v c="$c" -v u="$u" -v nz="$nz" "BEGIN { out = (c < 0 ? -c : c) > u; exit !(u > 0 && out == nz) }" &&
	diag "$(cat "$TMP/out")"
'
test_expect_success 'every host and every link: the estimates with their uncertainties' '
	test "$(vals host ls_u95_us "$TMP/out" | wc -l)" = 3 &&
	is_num $(vals host ls_us "$TMP/out") $(vals host ls_u95_us "$TMP/out") \
		$(vals host robust_us "$TMP/out") $(vals host robust_u95_us "$TMP/out") &&
	test "$(vals link u95_us "$TMP/out" | wc -l)" = 3 &&
	test "$(vals pair u95_us "$TMP/out" | wc -l)" = 3 &&
	is_num $(vals pair offset_us "$TMP/out") $(vals pair u95_us "$TMP/out")
'
test_expect_success 'the report of a package holding the run: its section says there is no truth, and has no error column' '
	"$NTPX_TOP/analysis/ntpx-report" "$TMP/pkg" &&
	sed -n "/<section id=\"meshrun\">/,/<\/section>/p" "$TMP/pkg/report.html" >"$TMP/sec" &&
	test_grep "<h2>The mesh on real hosts</h2>" "$TMP/sec" &&
	test_grep "There is no truth here: these hosts are real machines with no reference clock" "$TMP/sec" &&
	test_grep ! -e "class=\"absent\"" -e "<th>[a-z_]*err[a-z_]*</th>" -e "<th>true_us</th>" "$TMP/sec"
'
test_expect_success "the report's closures are ntpmesh's, row for row: closure, u95 and verdict" '
	ntpmesh_loop_rows "$TMP/out" >"$TMP/loops.want" &&
	meshrun_rows 1 "$TMP/pkg/report.html" >"$TMP/loops.got" &&
	test -s "$TMP/loops.want" &&
	test_is "$(cat "$TMP/loops.got")" "$(cat "$TMP/loops.want")"
'
test_expect_success "the report's hosts and links: every one, each estimate with its uncertainty" '
	test "$(meshrun_rows 2 "$TMP/pkg/report.html" | wc -l)" = 3 &&
	meshrun_rows 2 "$TMP/pkg/report.html" | while IFS="	" read -r w h ls lsu rb rbu d
	do
		is_num "$ls" "$lsu" "$rb" "$rbu" || return 1
	done &&
	test "$(meshrun_rows 3 "$TMP/pkg/report.html" | wc -l)" = 3 &&
	test_is "$(meshrun_rows 3 "$TMP/pkg/report.html" | cut -f 2,3 | sort | tr "\t\n" "- ")" "h1-h2 h1-h3 h2-h3 "
'
test_expect_success 'nothing left on any host' '
	wait_until 10 nhost_nothing_left
'

# SIGTERM in the middle of a run: it ends, and ends everything it started
# on every host.
test_expect_success 'SIGTERM in the middle of a run: exit 143, nothing left on any host' '
	spawn ipid "$meshrun" -o "$TMP/int" -d 60s -i 50ms "$TMP/hosts" >/dev/null 2>"$TMP/int.err" &&
	wait_until 60 probing &&
	kill -TERM "$ipid" &&
	test_exit 143 wait "$ipid" &&
	wait_until 10 nhost_nothing_left &&
	test ! -e "$TMP/int/done"
'

test_expect_success 'two hosts are no mesh: exit 1, one line' '
	head -n 2 "$TMP/hosts" >"$TMP/two" &&
	test_exit 1 "$meshrun" -o "$TMP/r2" "$TMP/two" 2>"$TMP/e2" &&
	test_is "$(cat "$TMP/e2")" "ntpx-meshrun: $TMP/two: 2 hosts; a mesh has loops from 3"
'
test_expect_success 'a bad host name: exit 1, the line named' '
	{ cat "$TMP/hosts" && echo "b/d 10.0.0.1"; } >"$TMP/bad" &&
	test_exit 1 "$meshrun" -o "$TMP/r3" "$TMP/bad" 2>"$TMP/e3" &&
	test_is "$(cat "$TMP/e3")" "ntpx-meshrun: $TMP/bad:4: bad host name '\''b/d'\'' (A-Z a-z 0-9 _ . -)"
'
test_expect_success 'a bad duration, no HOSTS: exit 2' '
	test_exit 2 "$meshrun" -o "$TMP/r4" -d 1parsec "$TMP/hosts" 2>/dev/null &&
	test_exit 2 "$meshrun" -o "$TMP/r4" 2>/dev/null
'
done_testing
