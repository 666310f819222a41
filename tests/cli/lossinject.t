#!/bin/sh
# SPDX-License-Identifier: ISC
# lossinject: the schedule it puts in the environment, and its refusals
# (one line, exit 2).
. "$(dirname "$0")/../lib.sh"

refused() {	# WANT-IN-MESSAGE ARGS...: exit 2 and exactly one line
	_want=$1
	shift
	_out=$(lossinject "$@" 2>&1 >/dev/null)
	_rc=$?
	[ "$_rc" = 2 ] && [ "$(printf '%s\n' "$_out" | wc -l)" = 1 ] &&
		printf '%s' "$_out" | grep -q "^lossinject: .*$_want" ||
		{ diag "rc=$_rc out=$_out"; return 1; }
}

test_expect_success '--every sets every:N:0' '
	test_is "$(lossinject --every 10 -- sh -c "echo \$NTPX_LOSS")" "every:10:0"
'
test_expect_success '--phase sets K' '
	test_is "$(lossinject --every 10 --phase 3 -- sh -c "echo \$NTPX_LOSS")" "every:10:3"
'
test_expect_success '--drop 5% --seed 7' '
	test_is "$(lossinject --drop 5% --seed 7 -- sh -c "echo \$NTPX_LOSS")" "rate:0.05:7"
'
test_expect_success 'a probability, default seed 1' '
	test_is "$(lossinject --drop 0.25 -- sh -c "echo \$NTPX_LOSS")" "rate:0.25:1"
'
test_expect_success 'the command'\''s exit status comes back' '
	test_exit 5 lossinject --every 2 -- sh -c "exit 5" >"$TMP/out" &&
	test ! -s "$TMP/out"
'

test_expect_success 'drop above 100% refused' 'refused "bad --drop" --drop 101% -- true'
test_expect_success 'drop above 1 refused' 'refused "bad --drop" --drop 2 -- true'
test_expect_success 'drop 0 refused' 'refused "bad --drop" --drop 0 -- true'
test_expect_success 'junk drop refused' 'refused "bad --drop" --drop 5x -- true'
test_expect_success 'missing command refused' 'refused "missing command" --drop 5%'
test_expect_success 'phase not below N refused' 'refused "phase" --every 10 --phase 10 -- true'
test_expect_success 'both schedules refused' 'refused "one of" --every 10 --drop 5% -- true'
done_testing
