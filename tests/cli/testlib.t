#!/bin/sh
# SPDX-License-Identifier: ISC
# tests/lib.sh itself: a cleanup that fails fails its test
# (test_when_finished) or the suite (test_atexit), stop_pid judges how a
# process ended, and a check that passes still passes.  Each case is a
# small suite run here, its TAP and exit status read back.  Then the
# checks that must not pass on nothing: test_grep !, is_num, rows_parse,
# count_status and probe_oks, each on what it has to refuse; and fg_wait,
# which lets a script's traps run at once.
. "$(dirname "$0")/../lib.sh"

# A tree where a suite's "$(dirname "$0")/../lib.sh" is this one's and
# bin/ the checkout's (lib.sh reads bin/ntpx-fields.awk).
top=$TMP/top
suite_tree() {
	mkdir -p "$top/tests/s" &&
	ln -s "$NTPX_TOP/tests/lib.sh" "$top/tests/lib.sh" &&
	ln -s "$NTPX_BIN" "$top/bin"
}
# put NAME: standard input is a suite's body (after lib.sh is sourced,
# before done_testing).
put() {
	{ echo '. "$(dirname "$0")/../lib.sh"' && cat && echo done_testing; } >"$top/tests/s/$1.t"
}
# run NAME: the suite's TAP in $TMP/NAME.tap, stderr in $TMP/NAME.err;
# prints "exit N".
run() {
	sh "$top/tests/s/$1.t" >"$TMP/$1.tap" 2>"$TMP/$1.err"
	echo "exit $?"
}
# PID runs COMMAND (has exec'd it: a signal sent before may be caught by
# the forked shell's trap and lost)
runs() { [ "$(cat "/proc/$1/comm")" = "$2" ]; }
tap() { grep -v "^#" "$TMP/$1.tap" | tr "\n" ";"; }
# the process PID has exited (reaped by the shell, or a zombie)
exited() { ! kill -0 "$1" 2>/dev/null || [ "$(cut -d" " -f3 "/proc/$1/stat")" = Z ]; }

test_expect_success 'setup: small suites in a tree of their own' '
	suite_tree &&
	put pass <<-\EOF &&
	test_expect_success a "test_when_finished true && true"
	test_atexit true
	EOF
	put tw <<-\EOF &&
	test_expect_success a "test_when_finished false && true"
	test_expect_success b true
	EOF
	put order <<-EOF &&
	test_expect_success a "test_when_finished \"echo one >>$TMP/order\" &&
		test_when_finished false &&
		test_when_finished \"echo three >>$TMP/order\""
	EOF
	put err <<-\EOF &&
	test_expect_success a "test_when_finished \"echo gone-wrong >&2; false\" && true"
	EOF
	put ae <<-\EOF &&
	test_atexit false
	test_expect_success a true
	EOF
	put tol <<-\EOF &&
	test_atexit "false || :"
	test_expect_success a true
	EOF
	put skip <<-EOF
	test_atexit "echo ran >$TMP/skipped"
	skip_all nothing here
	EOF
'
test_expect_success 'a passing test and a cleanup that succeeds: ok, exit 0' '
	test_is "$(run pass)" "exit 0" &&
	test_is "$(tap pass)" "ok 1 - a;1..1;"
'
test_expect_success 'test_when_finished: a cleanup that fails fails its test, named' '
	test_is "$(run tw)" "exit 1" &&
	test_is "$(tap tw)" "not ok 1 - a;ok 2 - b;1..2;" &&
	test_grep "cleanup failed (status 1): false" "$TMP/tw.err"
'
test_expect_success 'test_when_finished: every cleanup runs, newest first, though one fails' '
	test_is "$(run order)" "exit 1" &&
	test_is "$(tr "\n" " " <"$TMP/order")" "three one "
'
test_expect_success 'test_when_finished: the stderr of a cleanup that fails is shown' '
	test_is "$(run err)" "exit 1" &&
	test_grep "^#   gone-wrong" "$TMP/err.err"
'
test_expect_success 'test_atexit: a command that fails is a failed test of its own, exit 1' '
	test_is "$(run ae)" "exit 1" &&
	test_is "$(tap ae)" "ok 1 - a;not ok 2 - cleanup when the suite ends;1..2;"
'
test_expect_success 'test_atexit: a command that says it may find nothing (|| :) passes' '
	test_is "$(run tol)" "exit 0" &&
	test_is "$(tap tol)" "ok 1 - a;1..1;"
'
test_expect_success 'test_atexit: after skip_all the commands still run, the skip stands' '
	test_is "$(run skip)" "exit 0" &&
	test_is "$(cat "$TMP/skipped")" ran
'
test_expect_success 'stop_pid: a process that dies of the signal sent is fine' '
	spawn p sleep 100 &&
	wait_until 5 runs "$p" sleep &&
	stop_pid "$p"
'
test_expect_success 'stop_pid: one that had exited 3 before the signal is not' '
	spawn p sh -c "exit 3" &&
	wait_until 5 exited "$p" &&
	test_must_fail stop_pid "$p"
'
test_expect_success 'stop_pid KILL: SIGKILL is what was sent' '
	spawn p sleep 100 &&
	wait_until 5 runs "$p" sleep &&
	stop_pid "$p" KILL
'

# Each refusal's own diagnostics (fd 4, stderr) are not this suite's.
quiet() { "$@" 2>/dev/null 4>/dev/null; }

# fg_wait: a script (as a bench script is: lib.sh, no tests) waiting for
# a 60 s job gets TERM; it must end at once, its cleanup run and the job
# killed.  A foreground job would hold the signal for the whole minute.
test_expect_success 'fg_wait: a TERM during the wait ends the script at once, the job killed' '
	cat >"$top/tests/s/fgw.sh" <<-\EOF &&
	. "$(dirname "$0")/../lib.sh"
	test_atexit "echo cleaned >$FGW_DIR/fgw.cleaned"
	fg_wait sh -c "echo \$\$ >$FGW_DIR/fgw.job; exec sleep 60"
	EOF
	spawn p env FGW_DIR="$TMP" sh "$top/tests/s/fgw.sh" &&
	wait_until 10 test -s "$TMP/fgw.job" &&
	j=$(cat "$TMP/fgw.job") &&
	wait_until 10 runs "$j" sleep &&
	kill -TERM "$p" &&
	wait_until 10 exited "$p" &&
	st=0 && { wait "$p" || st=$?; } &&
	test_is "$st" 143 &&
	test_grep cleaned "$TMP/fgw.cleaned" &&
	wait_until 10 exited "$j"
'

test_expect_success 'setup: tables and records' '
	printf "#fields\tname\tx\n#a comment\nab\t1.5\ncd\t-\n" >"$TMP/good.tsv" &&
	printf "#fields\tname\tx\n" >"$TMP/norows.tsv" &&
	printf "#fields\tname\tx\nab\t1\t2\n" >"$TMP/wide.tsv" &&
	printf "ab\t1\n" >"$TMP/nohead.tsv" &&
	printf "#fields\tname\tx\nab\tcd\n" >"$TMP/text.tsv" &&
	fake=$TMP/fakeprobe &&
	cat >"$fake" <<-\EOF &&
	#!/bin/sh
	# A stand-in for ntpprobe: a record of status $1, then exit $2, or
	# death by SIGKILL, as of a probe that crashed after writing.
	printf "#fields seq status\n1 %s\n" "$1"
	[ "$2" = KILL ] && kill -KILL $$
	exit "$2"
	EOF
	chmod +x "$fake"
'
test_expect_success 'test_grep !: passes where nothing matches' '
	test_grep ! "^zz" "$TMP/good.tsv"
'
test_expect_success 'test_grep !: fails on a match, and on a file that is not there' '
	test_must_fail quiet test_grep ! "^ab" "$TMP/good.tsv" &&
	test_must_fail quiet test_grep ! "^zz" "$TMP/nowhere"
'
test_expect_success 'test_grep: fails on a file that is not there' '
	test_must_fail quiet test_grep -v "^zz" "$TMP/nowhere"
'
test_expect_success 'is_num: numbers pass' '
	is_num 0 -2.5 +3 .5 7. 1e-05 2E+09
'
test_expect_success 'is_num: nothing, "-", two lines, a number with more after it fail' '
	test_must_fail quiet is_num "" &&
	test_must_fail quiet is_num - &&
	test_must_fail quiet is_num "1${LF}2" &&
	test_must_fail quiet is_num 12us &&
	test_must_fail quiet is_num 1 ""
'
test_expect_success 'rows_parse: a table with rows passes, with -t too' '
	rows_parse "$TMP/good.tsv" &&
	rows_parse -t name "$TMP/good.tsv"
'
test_expect_success 'rows_parse: no file, no rows, no header, a row too wide fail' '
	test_must_fail quiet rows_parse "$TMP/nowhere" &&
	test_must_fail quiet rows_parse "$TMP/good.tsv" "$TMP/nowhere" &&
	test_must_fail quiet rows_parse "$TMP/norows.tsv" &&
	test_must_fail quiet rows_parse "$TMP/nohead.tsv" &&
	test_must_fail quiet rows_parse "$TMP/wide.tsv"
'
test_expect_success 'rows_parse -t: text where a number belongs fails' '
	rows_parse "$TMP/text.tsv" &&
	test_must_fail quiet rows_parse -t name "$TMP/text.tsv"
'
test_expect_success 'count_status: a file without #fields is no count, not 0' '
	test_is "$(quiet count_status "$TMP/nohead.tsv" ok)" "" &&
	test_must_fail quiet count_status "$TMP/nohead.tsv" ok
'
test_expect_success 'probe_oks: the count, when the exit status is the one it calls for' '
	test_is "$(probe_oks "$fake" ok 0)" 1 &&
	test_is "$(probe_oks "$fake" timeout 1)" 0
'
test_expect_success 'probe_oks: a probe that crashed after writing, or exited 0 with no ok, is no count' '
	test_is "$(probe_oks "$fake" ok KILL)" "1 ok, exit 137" &&
	test_is "$(probe_oks "$fake" timeout 0)" "0 ok, exit 0" &&
	test_must_fail probe_oks "$fake" ok KILL >/dev/null &&
	test_is "$(quiet probe_oks false)" "no records, exit 1"
'

# need_built and the XDP prerequisite read what make wrote in
# build/features: a tree whose build has the verbs path only.
test_expect_success 'setup: a build with the verbs path, not the AF_XDP one' '
	ln -s "$NTPX_TOP/tests/hw.sh" "$top/tests/hw.sh" &&
	mkdir -p "$top/build" &&
	echo verbs >"$top/build/features" &&
	put nox <<-\EOF &&
	need_built verbs xdp
	test_expect_success a true
	EOF
	put v <<-\EOF &&
	need_built verbs
	test_expect_success XDP a true
	test_expect_success VERBS b true
	EOF
	run nox >"$TMP/nox.exit" &&
	run v >"$TMP/v.exit"
'
test_expect_success 'need_built: a path the build left out skips the suite, naming its libraries' '
	test_is "$(cat "$TMP/nox.exit")" "exit 0" &&
	test_is "$(cat "$TMP/nox.tap")" \
		"1..0 # skip this ntpx was built without libxdp and libbpf: uudp'"'"'s AF_XDP port is left out"
'
test_expect_success 'need_built: a path it has runs; the XDP prerequisite skips its test' '
	test_is "$(cat "$TMP/v.exit")" "exit 0" &&
	grep -qx "ok 1 # skip a (missing XDP)" "$TMP/v.tap" &&
	grep -qx "ok 2 - b" "$TMP/v.tap"
'

done_testing
