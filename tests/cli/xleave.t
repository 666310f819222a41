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
plan 12

xlq=$NTPX_HELPERS/xlq
start_reflector --clients 4 --log "$TMP/log"
port=$(free_udp_port)
# q N ORG REC XMT: a request from client 127.0.0.N, from a new port each time
q() { _c=$1; shift; port=$((port + 1)); "$xlq" 127.0.0.1 "$REFLECT_PORT" "127.0.0.$_c" "$port" "$@"; }
pa=1 pb=2
# 16 random hex digits (in a subshell: no counter would survive it)
nonce() { od -An -N8 -tx1 /dev/urandom | tr -d ' \n'; }

# Client A: a first request, then one naming the reply it got.
set -- $(q "$pa" 0000000000000000 "$(nonce)" "$(nonce)")
is "$1" basic "a first request gets a basic reply"
rec1=$4
set -- $(q "$pa" "$rec1" "$(nonce)" "$(nonce)")
is "$1" interleaved "a request naming the last reply gets an interleaved one"
rec2=$4 xmt2=$5
set -- $(q "$pa" "$rec2" "$(nonce)" "$(nonce)")
is "$1" interleaved "... and the next"
rec3=$4
ok "an interleaved reply carries the previous reply's transmit stamp, not a new one" \
	test "$5" != "$xmt2"

# Stale: A names a reply before its last.
x=$(nonce)
set -- $(q "$pa" "$rec2" "$(nonce)" "$x")
is "$1 $3" "basic $x" "a stale origin gets a basic reply to this request"

# Forged: B names A's last reply (as if it had seen it on the wire).
set -- $(q "$pa" 0000000000000000 "$(nonce)" "$(nonce)")
recA=$4
x=$(nonce)
set -- $(q "$pb" "$recA" "$(nonce)" "$x")
is "$1 $3" "basic $x" "another client's origin gets a basic reply, not its stamps"
x=$(nonce)
set -- $(q "$pb" 0123456789abcdef "$(nonce)" "$x")
is "$1 $3" "basic $x" "a made-up origin gets a basic reply"
# Receive equal to transmit: RFC 9769 says basic.
set -- $(q "$pa" "$recA" "$(nonce)" "$(nonce)")
recA=$4
x=$(nonce)
set -- $(q "$pa" "$recA" "$x" "$x")
is "$1 $3" "basic $x" "receive equal to transmit: a basic reply"

# The bound: 4 slots.  A fifth and more clients take the least recently
# seen slot of a bucket; A, pushed out, gets a basic reply and starts over.
set -- $(q "$pa" 0000000000000000 "$(nonce)" "$(nonce)")
recA=$4
for c in 3 4 5 6 7 8 9 10 11 12; do
	q "$c" 0000000000000000 "$(nonce)" "$(nonce)" >/dev/null
done
x=$(nonce)
set -- $(q "$pa" "$recA" "$(nonce)" "$x")
is "$1 $3" "basic $x" "a client pushed out of the full table gets a basic reply"
set -- $(q "$pa" "$4" "$(nonce)" "$(nonce)")
is "$1" interleaved "... and interleaved again once it has a slot"

kill -TERM "$REFLECT_PID"
wait "$REFLECT_PID"
ok "the summary counts the slots given to other clients" \
	grep -q 'client slots taken [1-9]' "$TMP/reflect.err"
ok "the log marks the interleaved replies" \
	test "$(awk '!/^#/ && $9 == "interleaved"' "$TMP/log" | wc -l)" = 4
done_testing
