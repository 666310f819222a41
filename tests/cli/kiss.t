#!/bin/sh
# SPDX-License-Identifier: ISC
# Unsynchronised servers and kiss codes (RFC 5905 7.4), each from a small
# fake server on loopback (tests/helpers/ntpfake.c): OpenNTPD 6.2's
# unsynchronised replies (leap 3, stratum 0, reference ID 0) and the other
# unsynchronised shapes are `unsynced` with the server's T2 and T3; a kiss
# code is `kod` without them; RATE doubles the interval, DENY and RSTR stop
# the probe after one request.  No exchange is ok in any of these runs, so
# every one exits 1, as ping does when nothing answered (ntpprobe(1)).
. "$(dirname "$0")/../lib.sh"
fake=$NTPX_HELPERS/ntpfake
need_prereq HELPERS

# serve NAME LEAP STRATUM REFID [zero]: a fake server; PORT is its port,
# SERVER_PID its PID, its request log $TMP/NAME.log.
serve() {
	_n=$1
	shift
	PORT=$(free_udp_port)
	spawn SERVER_PID "$fake" "$PORT" "$@" >"$TMP/$_n.log"
	wait_until 5 udp_listening "$PORT"
}
requests() { grep -c '^request ' "$TMP/$1.log"; }
# field N of every data line, one line
# column NAME of every record of FILE, one line
col() { rec_cols "$1" "$2" | tr '\n' ' ' | sed 's/ $//'; }
# "M of N": of FILE's N records, M miss T2, T3, delay or off2
missing() { rec_cols "$1" t2 t3 delay off2 | awk '$1 == "-" || $2 == "-" || $3 == "-" || $4 == "-" { m++ }
	END { print m + 0 " of " NR }'; }

# OpenNTPD 6.2 while unsynchronised.
test_expect_success 'leap 3, stratum 0, refid 0: exit 1 (none ok)' '
	serve openntpd 3 0 0x00000000 &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 3 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/openntpd.rec" 2>"$TMP/openntpd.err"
'
test_expect_success 'leap 3, stratum 0, refid 0: unsynced, not kod' '
	test_is "$(col "$TMP/openntpd.rec" status)" "unsynced unsynced unsynced"
'
test_expect_success 'leap 3, stratum 0, refid 0: T2 and T3 kept, delay and off2 from them' '
	test_is "$(missing "$TMP/openntpd.rec")" "0 of 3"
'
test_expect_success 'the unsynced records'\'' arithmetic holds (offsetfit --check)' '
	offsetfit --check "$TMP/openntpd.rec" >"$TMP/out" &&
	test_is "$(cat "$TMP/out")" "checked 3"
'
test_expect_success 'ntpfilter reads them' '
	ntpfilter "$TMP/openntpd.rec" >/dev/null
'
test_expect_success 'the summary counts them as unsynced' '
	test_grep "unsynced 3" "$TMP/openntpd.err"
'

test_expect_success 'setup: ntpprobe -c 2 on a server at leap 3, stratum 3' '
	serve leap3 3 3 0xc0000201 &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 2 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/leap3.rec" 2>/dev/null
'
test_expect_success 'leap 3 at stratum 3: unsynced' '
	test_is "$(col "$TMP/leap3.rec" status)" "unsynced unsynced"
'
test_expect_success 'leap 3 at stratum 3: T2 and T3 kept' '
	test_is "$(missing "$TMP/leap3.rec")" "0 of 2"
'

test_expect_success 'setup: ntpprobe -c 2 on a server at stratum 16, leap 0' '
	serve s16 0 16 0x00000000 &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 2 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/s16.rec" 2>/dev/null
'
test_expect_success 'stratum 16, leap 0: unsynced' '
	test_is "$(col "$TMP/s16.rec" status)" "unsynced unsynced"
'

test_expect_success 'setup: ntpprobe -c 2 on an unsynchronised server sending zero timestamps' '
	serve zero 3 0 0x00000000 zero &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 2 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/zero.rec" 2>/dev/null
'
test_expect_success 'unsynchronised with zero timestamps: unsynced' '
	test_is "$(col "$TMP/zero.rec" status)" "unsynced unsynced"
'
test_expect_success '...without T2 and T3 (it sent none)' '
	test_is "$(col "$TMP/zero.rec" t2) $(col "$TMP/zero.rec" t3)" "- - - -"
'

# A kiss code that only informs: kod, and probing goes on.
test_expect_success 'INIT: exit 1 (none ok)' '
	serve init 0 0 INIT &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 3 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/init.rec" 2>"$TMP/init.err"
'
test_expect_success 'INIT: kod, and the probe goes on' '
	test_is "$(col "$TMP/init.rec" status)" "kod kod kod"
'
test_expect_success 'INIT: no T2, T3' '
	test_is "$(col "$TMP/init.rec" t2) $(col "$TMP/init.rec" t3)" "- - - - - -"
'
test_expect_success 'INIT: three requests' '
	test_is "$(requests init)" 3
'
# The same code under leap 3 is a server saying why it is unsynchronised
# (ntpsec before its first sync): unsynced, its timestamps kept.
test_expect_success 'setup: ntpprobe -c 2 on a server sending INIT under leap 3' '
	serve init3 3 0 INIT &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 2 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/init3.rec" 2>/dev/null
'
test_expect_success 'INIT under leap 3: unsynced, not kod' '
	test_is "$(col "$TMP/init3.rec" status)" "unsynced unsynced"
'
test_expect_success 'INIT under leap 3: T2 and T3 kept' '
	test_is "$(missing "$TMP/init3.rec")" "0 of 2"
'

# RATE: each kiss doubles the interval.  The schedule is 0, 100, 300,
# 700, 1500 ms, then 3100 ms, past the 1.6 s run: five requests (32
# without the back-off).  -w 1s: a late reply is a timeout, not a kiss.
test_expect_success 'RATE: exit 1 (none ok)' '
	serve rate 3 0 RATE &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -d 1.6s -i 50ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/rate.rec" 2>"$TMP/rate.err"
'
test_expect_success 'RATE: five kod records in 1.6 s at -i 50ms' '
	test_is "$(col "$TMP/rate.rec" status)" "kod kod kod kod kod"
'
test_expect_success 'RATE: the server saw five requests' '
	test_is "$(requests rate)" 5
'
test_expect_success 'RATE: the interval doubles each time' '
	test_is "$(sed -n "s/.*kiss code RATE: interval now //p" "$TMP/rate.err" | tr "\n" " ")" \
		"0.100 s 0.200 s 0.400 s 0.800 s 1.600 s "
'

test_expect_success 'DENY: exit 1' '
	serve DENY 3 0 DENY &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 5 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/DENY.rec" 2>"$TMP/DENY.err"
'
test_expect_success 'DENY: one kod record' '
	test_is "$(col "$TMP/DENY.rec" status)" "kod"
'
test_expect_success 'DENY: no request after the kiss' '
	test_is "$(requests DENY)" 1
'
test_expect_success 'RSTR: exit 1' '
	serve RSTR 3 0 RSTR &&
	test_when_finished stop_pid "$SERVER_PID" &&
	test_exit 1 ntpprobe -c 5 -i 20ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/RSTR.rec" 2>"$TMP/RSTR.err"
'
test_expect_success 'RSTR: one kod record' '
	test_is "$(col "$TMP/RSTR.rec" status)" "kod"
'
test_expect_success 'RSTR: no request after the kiss' '
	test_is "$(requests RSTR)" 1
'
test_expect_success 'DENY: one line says why' '
	test_grep "kiss code DENY: the server refuses service, stopping" "$TMP/DENY.err"
'
done_testing
