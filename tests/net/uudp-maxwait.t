#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect over uudp with maxwait=: a request that waited in the
# receive ring longer than that, by its arrival stamp, is dropped when
# read and counted (rx_stale=), and a request that did not wait is
# answered (doc/uudp.md, "Bounding the wait").
#
# The wait is made, not hoped for: the server is stopped (SIGSTOP), a
# kernel client (build/helpers/udpq) sends n requests and its fence, the
# veth's receive count shows every one arrived, and the server goes on
# (SIGCONT) only once 1 s has passed since then, ten times maxwait=, so
# that every one of them is older than maxwait= whatever the delay
# between the count and the XDP program's stamp.  None is answered
# (udpq's fence goes unanswered, exit 1), all n + 1 are counted stale.
# Then requests sent to the running server: each is answered or, when
# the server took longer than maxwait= to read it (a busy core), counted
# stale, nothing else on a veth; at least one is answered.  Without
# maxwait= the same held burst is answered whole (tests/net/uudp-burst.t).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need_prereq LAB HELPERS
need ntpreflect ntpprobe

port=12300
UUDP_QUEUES=1
n=10
mw_ms=100
hold_ns=$((10 * mw_ms * 1000000))
fresh=5
zeros() { printf "%0$(($1 * 2))d" 0; }
basic=23$(zeros 47)
rx_packets() { ip netns exec "$UB" cat "/sys/class/net/$IFB/statistics/rx_packets"; }
at_least() { [ "$(rx_packets)" -ge "$1" ]; }
passed() { [ $(($(date +%s%N) - $1)) -ge "$hold_ns" ]; }
# n basic requests and udpq's fence, in the background: udpq's PID in $q.
send_n() {
	ip netns exec "$UA" "$NTPX_HELPERS/udpq" "$IPB" "$port" \
		$(for _i in $(seq 1 "$n"); do printf "%s " "$basic"; done) >"$TMP/held" &
	q=$!
}

test_expect_success 'setup: a lab of our own, one queue each way' '
	uudp_lab
'

test_expect_success "the server, maxwait=${mw_ms}ms" '
	spawn srv ip netns exec "$UB" ntpreflect --stratum 1 \
		"uudp://$IPB:$port?dev=$IFB&maxwait=${mw_ms}ms" 2>"$TMP/srv.err" &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

test_expect_success 'requests held past maxwait=: none answered' '
	kill -STOP "$srv" &&
	rx=$(rx_packets) &&
	send_n &&
	{ wait_until 5 at_least $((rx + n + 1)) || { kill -CONT "$srv"; false; }; } &&
	t=$(date +%s%N) &&
	wait_until 10 passed "$t" &&
	kill -CONT "$srv" &&
	test_exit 1 wait "$q" &&
	test_is "$(grep -c . "$TMP/held")" 0
'

test_expect_success 'then requests to the running server: answered' '
	ip netns exec "$UA" ntpprobe -c "$fresh" -w 2s "udp://$IPB:$port" >"$TMP/fresh" &&
	ok=$(count_status "$TMP/fresh" ok) &&
	test "$ok" -ge 1
'

test_expect_success 'every held request counted stale; the rest answered or stale' '
	stop_pid "$srv" &&
	diag "$(grep -o "rx_stale=[0-9]*" "$TMP/srv.err"), $ok of $fresh later ones answered" &&
	test_is "$(counter "$TMP/srv.err" rx_stale)" $((n + 1 + fresh - ok)) &&
	test_is "$(sed -n "s/.*answered \([0-9]*\).*/\1/p" "$TMP/srv.err")" "$ok"
'

done_testing
