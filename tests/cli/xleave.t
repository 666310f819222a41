#!/bin/sh
# SPDX-License-Identifier: ISC
# Interleaved mode against bad input: a request whose origin is forged
# (another client's, or made up) or stale (an older reply's) gets a basic
# reply, never stamps of another exchange; and the client state stays
# within its bound.  xlq sends one request with chosen timestamps from a
# chosen address and port and prints the reply's mode and timestamps.
# Clients are hosts (addresses: chronyd's client sends each request from
# a new port), so the clients here are 127.0.0.1, 127.0.0.2, ...
. "$(dirname "$0")/../lib.sh"
need_prereq HELPERS

xlq=$NTPX_HELPERS/xlq
# q N ORG REC XMT: a request from client 127.0.0.N, from a new port each time
q() { _c=$1; shift; port=$((port + 1)); "$xlq" 127.0.0.1 "$REFLECT_PORT" "127.0.0.$_c" "$port" "$@"; }
pa=1 pb=2
# Requests from clients 3 to 12: more than the table holds.
other_clients() {
	for c in 3 4 5 6 7 8 9 10 11 12; do
		q "$c" 0000000000000000 "$(nonce)" "$(nonce)" >/dev/null || return 1
	done
}

test_expect_success 'setup: a reflector with a table of 4 clients' '
	start_reflector --clients 4 --log "$TMP/log" &&
	port=$(free_udp_port)
'

# Client A: a first request, then one naming the reply it got.
test_expect_success 'a first request gets a basic reply' '
	set -- $(q "$pa" 0000000000000000 "$(nonce)" "$(nonce)") &&
	rec1=$4 &&
	test_is "$1" basic
'

test_expect_success 'a request naming the last reply gets an interleaved one' '
	set -- $(q "$pa" "$rec1" "$(nonce)" "$(nonce)") &&
	rec2=$4 xmt2=$5 &&
	test_is "$1" interleaved
'

test_expect_success '... and the next' '
	set -- $(q "$pa" "$rec2" "$(nonce)" "$(nonce)") &&
	rec3=$4 xmt3=$5 &&
	test_is "$1" interleaved
'

test_expect_success 'an interleaved reply carries the previous reply'\''s transmit stamp, not a new one' '
	test "$xmt3" != "$xmt2"
'

# Stale: A names a reply before its last.
test_expect_success 'a stale origin gets a basic reply to this request' '
	x=$(nonce) &&
	set -- $(q "$pa" "$rec2" "$(nonce)" "$x") &&
	test_is "$1 $3" "basic $x"
'

# Forged: B names A's last reply (as if it had seen it on the wire).
test_expect_success 'another client'\''s origin gets a basic reply, not its stamps' '
	set -- $(q "$pa" 0000000000000000 "$(nonce)" "$(nonce)") &&
	recA=$4 &&
	x=$(nonce) &&
	set -- $(q "$pb" "$recA" "$(nonce)" "$x") &&
	test_is "$1 $3" "basic $x"
'

test_expect_success 'a made-up origin gets a basic reply' '
	x=$(nonce) &&
	set -- $(q "$pb" 0123456789abcdef "$(nonce)" "$x") &&
	test_is "$1 $3" "basic $x"
'

# Receive equal to transmit: RFC 9769 says basic.
test_expect_success 'receive equal to transmit: a basic reply' '
	set -- $(q "$pa" "$recA" "$(nonce)" "$(nonce)") &&
	recA=$4 &&
	x=$(nonce) &&
	set -- $(q "$pa" "$recA" "$x" "$x") &&
	test_is "$1 $3" "basic $x"
'

# The bound: 4 slots.  A fifth and more clients take the least recently
# seen slot of a bucket; A, pushed out, gets a basic reply and starts over.
test_expect_success 'a client pushed out of the full table gets a basic reply' '
	set -- $(q "$pa" 0000000000000000 "$(nonce)" "$(nonce)") &&
	recA=$4 &&
	other_clients &&
	x=$(nonce) &&
	set -- $(q "$pa" "$recA" "$(nonce)" "$x") &&
	recA=$4 &&
	test_is "$1 $3" "basic $x"
'

test_expect_success '... and interleaved again once it has a slot' '
	set -- $(q "$pa" "$recA" "$(nonce)" "$(nonce)") &&
	test_is "$1" interleaved
'

test_expect_success 'the summary counts the slots given to other clients' '
	kill -TERM "$REFLECT_PID" &&
	wait "$REFLECT_PID" &&
	test_grep "client slots taken [1-9]" "$TMP/reflect.err"
'

test_expect_success 'the log marks the interleaved replies' '
	test "$(log_interleaved "$TMP/log")" = 4
'
done_testing
