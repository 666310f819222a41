#!/bin/sh
# SPDX-License-Identifier: ISC
# What an interleaved reply's send stamps cost ntpreflect: the kernel
# queues a message on the socket's error queue for each layer a reply is
# stamped at, and the server reads every one.  A plain interleaved client
# (chronyd's kind, no ntpx field; here xlq) can use t3k alone, so without
# --log its replies ask for t3k only: one message each.  A server with
# --log, or a client that sends the ntpx field (ntpprobe --xleave), gets
# every layer, t3q and t3k: two.  The messages are counted as the server
# reads them, by strace: what its recvmmsg(MSG_ERRQUEUE) calls returned.
. "$(dirname "$0")/../lib.sh"
need_prereq HELPERS
test_lazy_prereq STRACE 'command -v strace && strace -qq -o /dev/null true'

xlq=$NTPX_HELPERS/xlq
N=5

# reflector_traced -c COUNT OPTION...: ntpreflect, under strace, answering
# COUNT requests and then ending (REFLECT_PID is strace's: it ends with
# it).  LeakSanitizer cannot work under ptrace, so a make SAN=1 build runs
# here without it (the other suites run ntpreflect with it).
reflector_traced() {
	REFLECT_PORT=$(free_udp_port)
	spawn REFLECT_PID strace -f -qq -e trace=recvmmsg -o "$TMP/trace" \
		-E ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$NTPX_BIN/ntpreflect" --stratum 1 "$@" "udp://127.0.0.1:$REFLECT_PORT" \
		2>"$TMP/reflect.err" &&
	wait_until 10 udp_listening "$REFLECT_PORT"
}

# The send stamps the server read from its error queue.
errqueue_read() {
	awk '/MSG_ERRQUEUE/ && match($0, / = [0-9]+$/) { n += substr($0, RSTART + 3) }
		END { print n + 0 }' "$TMP/trace"
}

# $N requests from one plain client, each naming the reply before it
# (the first names none), from a new port each time as chronyd's; their
# replies' modes, a line each.
plain_client() {
	_org=0000000000000000 _port=$(free_udp_port) _i=0
	while [ "$_i" -lt "$N" ]; do
		set -- $("$xlq" 127.0.0.1 "$REFLECT_PORT" 127.0.0.1 $((_port + _i)) "$_org" \
			"$(nonce)" "$(nonce)") || return 1
		echo "$1"
		_org=$4 _i=$((_i + 1))
	done
}

test_expect_success STRACE 'a plain interleaved client: one send stamp per reply, t3k' '
	reflector_traced -c "$N" &&
	plain_client >"$TMP/modes" &&
	wait "$REFLECT_PID" &&
	test_is "$(grep -c interleaved "$TMP/modes")" $((N - 1)) &&
	test_is "$(errqueue_read)" "$N"
'

test_expect_success STRACE '... with --log, two per reply: the log has t3q and t3k' '
	reflector_traced -c "$N" --log "$TMP/log" &&
	plain_client >"$TMP/modes" &&
	wait "$REFLECT_PID" &&
	test_is "$(grep -c interleaved "$TMP/modes")" $((N - 1)) &&
	test_is "$(errqueue_read)" $((2 * N))
'

# ntpprobe --xleave -c N sends a request more than N: the last one's
# reply carries the stamps of the N-th exchange.
test_expect_success STRACE 'a client with the ntpx field: two per reply, the field carries both' '
	reflector_traced -c $((N + 1)) &&
	ntpprobe --xleave -c "$N" -i 10ms "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rec" \
		2>"$TMP/probe.err" &&
	wait "$REFLECT_PID" &&
	test_is "$(count_status "$TMP/rec" ok)" "$N" &&
	test_is "$(errqueue_read)" $((2 * (N + 1)))
'
done_testing
