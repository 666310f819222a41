#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-report's section on a mesh of real hosts (meshrun/ of a package,
# ntpx-meshrun(1)) when there is none to show: said absent without a
# complete run, and a meshrun/ntpmesh.txt that is not ntpmesh's output
# named on one line (stderr and the section), the rest of the report
# written.  The section on a real run over ssh, its tables against
# ntpmesh's numbers, is tests/net/mesh-ssh.t; the texts here are
# hand-written malformed ones, there being no real run to take them from.
. "$(dirname "$0")/../lib.sh"
report=$NTPX_TOP/analysis/ntpx-report
P=$TMP/pkg
sec() { sed -n '/<section id="meshrun">/,/<\/section>/p' "$P/report.html"; }

test_expect_success 'no meshrun/: the section says it is absent, and nothing else is said about it' '
	mkdir -p "$P" &&
	"$report" "$P" 2>"$TMP/err" &&
	test_is "$(sec | sed -n 2p)" "<p class=\"absent\">Absent from this package: no complete ntpx-meshrun directory (meshrun/ with its done file, ntpx-meshrun(1); or a run of ntpx-study --hosts).</p>" &&
	test ! -s "$TMP/err"
'
test_expect_success 'a meshrun/ without its done file (a run cut off) is absent too' '
	mkdir -p "$P/meshrun" &&
	printf "hosts a b c\nref a\nloop 0 a,b,c closure_us 0.100 u95_us 0.200 nonzero 0\n" >"$P/meshrun/ntpmesh.txt" &&
	"$report" "$P" &&
	sec >"$TMP/sec" && test_grep "Absent from this package: no complete ntpx-meshrun directory" "$TMP/sec" &&
	sec >"$TMP/sec" && test_grep ! "<table>" "$TMP/sec"
'
# TEXT WHY: meshrun/ntpmesh.txt holding TEXT is refused for WHY.
refused() {
	printf "$1" >"$P/meshrun/ntpmesh.txt" &&
	"$report" "$P" 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "ntpx-report: $P/meshrun/ntpmesh.txt: not ntpmesh's output ($2); its section says so" &&
	test_is "$(sec | sed -n 2p)" "<p class=\"absent\">Not shown: meshrun/ntpmesh.txt is not ntpmesh&rsquo;s output ($2).</p>" &&
	test_grep "<section id=\"evidence\">" "$P/report.html"
}
test_expect_success 'not ntpmesh output: one line on stderr and in the section, exit 0, the rest of the report there' '
	touch "$P/meshrun/done" &&
	refused "" "empty" &&
	refused "ref a\n" "line 1: not a hosts line" &&
	refused "hosts a b c\nref a\nloop 0 a,b,c closure_us 0.1 u95_us 0.2\n" "line 3: loop without nonzero" &&
	refused "hosts a b c\nhost 0 a ls_us 0 ls_u95_us 0 robust_us 0 direct_us 0\n" "line 2: host without robust_u95_us" &&
	refused "hosts a b c\nlink 0 a b asym_us 1 u95_us 1 observable seen\n" "line 2: link without blamed"
'
test_expect_success 'well-formed: the closure table, no refusal' '
	printf "hosts a b c\nref a\nloop 0 a,b,c closure_us 0.100 u95_us 0.200 nonzero 0\n" >"$P/meshrun/ntpmesh.txt" &&
	"$report" "$P" 2>"$TMP/err" &&
	test ! -s "$TMP/err" &&
	sec >"$TMP/sec" && test_grep "<tr><td class=\"n\">0</td><td>a,b,c</td><td class=\"n\">0.100</td><td class=\"n\">0.200</td><td class=\"n\">0</td></tr>" "$TMP/sec"
'
done_testing
