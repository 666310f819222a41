#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect answers client requests and nothing else, never with more
# bytes than it was sent.  udpq sends the datagrams and then a good
# request as a fence: once the fence is answered, any answer to what came
# before it has arrived too.
. "$(dirname "$0")/../lib.sh"
need_prereq HELPERS

udpq=$NTPX_HELPERS/udpq
# A client request: LI 0, VN 4, mode 3 (0x23), the rest zero but xmt.
req=23000000000000000000000000000000000000000000000000000000000000000000000000000000$(printf '%016x' 123456789)
query() { "$udpq" 127.0.0.1 "$REFLECT_PORT" "$@"; }
# The request with its first byte (LI, VN, mode) made HEX.
first_byte() { echo "$req" | sed "s/^23/$1/"; }

test_expect_success 'setup: a reflector with --log' '
	start_reflector --log "$TMP/log"
'

test_expect_success 'a client request is answered with 48 bytes' '
	test_is "$(query)" "fence 48"
'

test_expect_success 'mode 6 (control) is not answered' '
	test_is "$(query 16020001000000000000)" "fence 48"
'

test_expect_success 'mode 7 (private) is not answered' '
	test_is "$(query 17000000000000000000000000000000)" "fence 48"
'

test_expect_success 'a 2-byte datagram is not answered' '
	test_is "$(query 2300)" "fence 48"
'

test_expect_success '47 bytes (a header cut short) is not answered' '
	test_is "$(query "$(echo "$req" | cut -c1-94)")" "fence 48"
'

test_expect_success 'mode 4 (a server'\''s reply) is not answered' '
	test_is "$(query "$(first_byte 24)")" "fence 48"
'

test_expect_success 'version 7 is not answered' '
	test_is "$(query "$(first_byte 3b)")" "fence 48"
'

test_expect_success 'version 3 is answered' '
	test_is "$(query "$(first_byte 1b)")" "reply 48${LF}fence 48"
'

# An extension field claiming 512 bytes in a 76-byte datagram.
test_expect_success 'an extension field running past the end is not answered' '
	test_is "$(query "${req}00000200$(printf "%048d" 0)")" "fence 48"
'

# A well-formed 28-byte extension field: answered, with the header only.
test_expect_success 'a request with an extension field gets a 48-byte reply' '
	test_is "$(query "${req}0104001c$(printf "%048d" 0)")" "reply 48${LF}fence 48"
'

test_expect_success 'SIGTERM: exit 0' '
	kill -TERM "$REFLECT_PID" &&
	test_exit 0 wait "$REFLECT_PID"
'

test_expect_success 'counts by reason on stderr' '
	diag "$(cat "$TMP/reflect.err")" &&
	test_grep "^ntpreflect: answered 12, short 2, malformed 1, version 1, control 1, private 1, mode 1\$" "$TMP/reflect.err"
'

test_expect_success 'the log has a line per answered request' '
	test_is "$(grep -c " ok\$" "$TMP/log")" 12
'

test_expect_success 'and one per ignored datagram' '
	test_is "$(grep -vc "^#" "$TMP/log")" 19
'

# Three requests to a reflector stopped in its receive: each times out,
# and the probe says so with exit 1.
probe_stopped() {
	ntpprobe -i 1ms -w 1ms -c 3 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/left.rec" 2>/dev/null
	test $? = 1 && test_is "$(count_status "$TMP/left.rec" timeout)" 3
}

# Resumed, the reflector reads the three with one receive, answers the
# one its --count allows and ends: the other two were read and never
# looked at, and the counts say so, so that every datagram read is in
# them (tests/net/attack.t's accounting).
test_expect_success 'requests read ahead when the server ends are counted as left' '
	start_reflector -c 1 &&
	kill -STOP "$REFLECT_PID" &&
	probe_stopped &&
	kill -CONT "$REFLECT_PID" &&
	test_exit 0 wait "$REFLECT_PID" &&
	diag "$(cat "$TMP/reflect.err")" &&
	test_grep "^ntpreflect: answered 1, left 2\$" "$TMP/reflect.err"
'
done_testing
