#!/bin/sh
# SPDX-License-Identifier: ISC
# within_1ms_s, one definition (doc/ntpx-runstat.1): seconds from the
# run's action to the third of three consecutive exchanges that are ok
# and whose |offset| is at most 1 ms; an exchange that is not ok breaks
# the three.  Records written here by hand, so that every case is seen:
# exactly 1 ms counts, a timeout between ok replies starts the count
# again, true_within_1ms_s is the same on true2.  (tests/net/families.t
# holds ntpx-recovery's keys to ntpx-runstat's on a run of its own.)
. "$(dirname "$0")/../lib.sh"
need_prereq BUILT
RS=$NTPX_TOP/analysis/ntpx-runstat

T0=1764455330000000000
# rec K OFF2 STATUS TRUE2: a record at T0 + K * 100 ms (t2), seq K.
rec() {
	t=$((T0 + $1 * 100000000))
	if [ "$3" = ok ]; then
		echo "$1 $((t - 50000)) $t $((t + 10000)) $((t + 60000)) 100000 $2 ok $4"
	else
		echo "$1 $((t - 50000)) - - - - - $3 -"
	fi
}

test_expect_success 'setup: a step at T0, then replies that reach 1 ms and one that times out' '
	mkdir "$TMP/run" &&
	{
		printf "#ntpx-record 1\n#tool ntpprobe test\n#endpoint udp://127.0.0.1:1\n#clock sim:x\n" &&
		echo "#fields seq t1 t2 t3 t4 delay off2 status true2" &&
		rec 1 -90000000 ok -80000000 &&
		rec 2 2000000 ok 2000001 &&
		rec 3 -1999999 ok 100 &&
		rec 4 0 timeout 0 &&
		rec 5 -2000000 ok 50 &&
		rec 6 10 ok -2000000 &&
		rec 7 1000 ok 0 &&
		rec 8 3000000 ok 10
	} >"$TMP/run/probe.rec" &&
	printf "#fields t_ns run event detail\n%s\t1\trun_start\t-\n%s\t1\tstep\t-120s\n" \
		$((T0 - 1000000000)) $T0 >"$TMP/events.tsv" &&
	"$RS" "$TMP/run" "$TMP/events.tsv" 1 >"$TMP/stat" &&
	cat "$TMP/stat" >&4
'

test_expect_success 'within_1ms_s: exactly 1 ms counts, the timeout starts the three again' '
	test_grep -x "within_1ms_s 0.700" "$TMP/stat"
'
test_expect_success 'true_within_1ms_s: the same on true2' '
	test_grep -x "true_within_1ms_s 0.700" "$TMP/stat"
'
test_expect_success 'reacquire_s: the first ok reply after the step' '
	test_grep -x "reacquire_s 0.100" "$TMP/stat"
'
test_expect_success 'never three in a row: -' '
	sed "/^7 /d" "$TMP/run/probe.rec" >"$TMP/never.rec" &&
	mkdir "$TMP/never" && mv "$TMP/never.rec" "$TMP/never/probe.rec" &&
	"$RS" "$TMP/never" "$TMP/events.tsv" 1 >"$TMP/never.stat" &&
	test_grep -x "within_1ms_s -" "$TMP/never.stat"
'

done_testing
