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

done_testing
