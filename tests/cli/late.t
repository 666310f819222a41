#!/bin/sh
# SPDX-License-Identifier: ISC
# A reply that comes after its exchange timed out is late: counted in the
# summary, and no reason to call the exchange it lands in bogus.  The
# fake server (tests/helpers/ntpfake.c, "late") holds each reply until the
# next request has come, so every reply but the last lands while ntpprobe
# waits for the next one: whatever the timing, four exchanges give four
# timeouts and three late replies.  Accounting on a flood
# (tests/net/flood.t) counts on every reply being either ok or late.
. "$(dirname "$0")/../lib.sh"
fake=$NTPX_HELPERS/ntpfake
need_prereq HELPERS

test_expect_success 'setup: a server whose every reply is late' '
	port=$(free_udp_port) &&
	spawn SERVER_PID "$fake" "$port" 0 1 LATE late >"$TMP/fake.log" &&
	wait_until 5 udp_listening "$port"
'

test_expect_success 'four exchanges, none answered in time: exit 1' '
	test_exit 1 ntpprobe -c 4 -i 20ms -w 300ms "udp://127.0.0.1:$port" >"$TMP/rec" 2>"$TMP/err"
'

test_expect_success 'the server had all four requests' '
	test_is "$(grep -c "^request " "$TMP/fake.log")" 4
'

test_expect_success 'every exchange is a timeout, none bogus' '
	test_is "$(rec_cols "$TMP/rec" status | tr "\n" " ")" "timeout timeout timeout timeout "
'

test_expect_success 'the summary counts the three replies that came as late' '
	diag "$(sed -n 1p "$TMP/err")" &&
	test_grep "^ntpprobe: sent 4, ok 0, lost 4, late 3," "$TMP/err"
'


# An interval below what the path can answer (issue 33, 5): at -i 1us the
# timeout is the interval's, far below loopback's round trip, so replies
# come while later requests wait, many requests later; each is late, never
# the reason to call a later exchange bogus, and the probe says once that
# the path is slower than it was asked to go (by the late replies, or by
# the exchanges answered within 1 us of waiting but slower than 1 us,
# whichever it sees first).
test_expect_success 'setup: a reflector' '
	start_reflector
'
test_expect_success '-i 1us: replies late, none bogus, said once' '
	ntpprobe -i 1us -c 20000 "127.0.0.1:$REFLECT_PORT" >"$TMP/flood" 2>"$TMP/flood.err" &&
	diag "$(grep sent "$TMP/flood.err")" &&
	test_is "$(count_status "$TMP/flood" bogus)" 0 &&
	test_grep "^ntpprobe: sent 20000, ok [0-9]*, lost [0-9]*, late [1-9][0-9]*," "$TMP/flood.err" &&
	test_is "$(grep -vc "^ntpprobe: \(sent\|server\) " "$TMP/flood.err")" 1 &&
	grep -v "^ntpprobe: \(sent\|server\) " "$TMP/flood.err" | grep -E \
		"after its timeout \(1.000 us, the interval.s\), which the path.s round trip exceeds|longer than the interval \(1.000 us\): requests go out back to back"
'
# Every exchange answered (-w 5s), each slower than 1 us: the requests go
# out back to back, which is said once; and --duration is real time, not
# the schedule's (200 ms at 1 us would be 200000 requests).
test_expect_success '-i 1us -w 5s: back to back, said once; -d ends it in real time' '
	ntpprobe -i 1us -w 5s -d 200ms "127.0.0.1:$REFLECT_PORT" >"$TMP/b2b" 2>"$TMP/b2b.err" &&
	diag "$(grep sent "$TMP/b2b.err")" &&
	test_is "$(grep -c "longer than the interval (1.000 us): requests go out back to back" "$TMP/b2b.err")" 1 &&
	n=$(data_lines "$TMP/b2b" | wc -l) &&
	test "$n" -gt 0 && test "$n" -lt 200000 &&
	test_is "$(count_status "$TMP/b2b" ok)" "$n"
'
# The default interval, 1 s: three round trips in a row that long would
# be a path that cannot keep up indeed (at 20 ms a loaded machine had
# three).
test_expect_success 'an interval the path keeps up with: no such line' '
	ntpprobe -c 3 -w 5s "127.0.0.1:$REFLECT_PORT" >/dev/null 2>"$TMP/calm.err" &&
	test_is "$(grep -vc "^ntpprobe: \(sent\|server\) " "$TMP/calm.err")" 0
'

done_testing
