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
# Many clients at once (build/bench/xlflood), the server made to fall
# behind (SIGSTOP) until requests wait in its socket, so that it answers
# them in bursts: the interleaved replies of a burst go in one sendmmsg,
# their t3 read once just before it.  Each one's t3k must be the stamp of
# its own reply: every t3k after its t3, and within a batch (the lines
# sharing a t3) in the order the replies were sent, the order of seq.
# A t3k given to another reply of its batch breaks the order.
xlflood=$NTPX_TOP/build/bench/xlflood
test_lazy_prereq XLFLOOD 'test -x "$NTPX_TOP/build/bench/xlflood"'
log_bytes() { _lb=$(wc -c <"$1") && test "$_lb" -ge "$2"; }
recvq_bytes() {	# PORT BYTES: the socket holds at least BYTES (of skb truesize)
	_rq=$(ss -Huan "sport = :$1" | awk '{ print $2; exit }') && test "${_rq:-0}" -ge "$2"
}
# PORT PID: once the stopped server's socket holds 16 KiB (some 16
# requests), or 10 s passed, the server goes on; fails in the latter case.
resume_when_queued() {
	wait_until 10 recvq_bytes "$1" 16384
	_rw=$?
	kill -CONT "$2"
	return "$_rw"
}
test_expect_success XLFLOOD 'a burst of interleaved replies: each reply gets the t3k of its own send' '
	start_reflector --log "$TMP/blog" &&
	spawn FLOOD "$xlflood" "$REFLECT_PORT" 200 2000 2 xleave >"$TMP/flood" &&
	wait_until 10 log_bytes "$TMP/blog" 40000 &&
	kill -STOP "$REFLECT_PID" &&
	resume_when_queued "$REFLECT_PORT" "$REFLECT_PID" &&
	wait "$FLOOD" && stop_pid "$REFLECT_PID" &&
	awk "$ntpx_fields"'"'"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" && field("mode") == "interleaved" && field("t3k") != "-" {
			# ns since 1970, 19 digits each: compared as strings,
			# which a double (53 bits) cannot hold exactly.
			t3 = field("t3") ""; t3k = field("t3k") ""
			if (length(t3k) != length(t3)) { print "not comparable: " $0; bad++ }
			if (t3k <= t3) { print "t3k before t3: " $0; bad++ }
			if (t3 == last && t3k <= lastk) { print "out of order in its batch: " $0; bad++ }
			if (t3 == last) inbatch++
			last = t3; lastk = t3k; n++ }
		END { print n + 0, inbatch + 0, bad + 0 }'"'"' "$TMP/blog" >"$TMP/check" &&
	set -- $(tail -n 1 "$TMP/check") &&
	{ test "$1" -gt 0 && test "$2" -gt 0 && test_is "$3" 0 || { head -n 5 "$TMP/check" >&2; false; }; }
'
done_testing
