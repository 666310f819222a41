#!/bin/sh
# SPDX-License-Identifier: ISC
# tests/lib.sh itself: a cleanup that fails fails its test
# (test_when_finished) or the suite (test_atexit), stop_pid judges how a
# process ended, and a check that passes still passes.  Each case is a
# small suite run here, its TAP and exit status read back.
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

done_testing
