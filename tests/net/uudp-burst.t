#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect over uudp answers a burst (issue 38): requests that waited
# in the receive ring together are taken a burst at a time, and the
# replies that carry no stamp of their own hand-over (interleaved: their
# transmit field is the previous reply's t3k) wait for one kick at the
# burst's end, while a basic reply, whose T3 is in it, is kicked at
# once (doc/uudp.md, "Bursts").
#
# The burst is made, not hoped for: the server is stopped (SIGSTOP),
# kernel clients send their requests, the veth's receive count shows
# every one arrived, and the server goes on (SIGCONT) to find them all in
# its ring.  Basic: build/helpers/udpq, n requests and a fence, and one
# kick per reply.  Interleaved: n clients (build/helpers/xlq, each from a
# port of its own) had one basic exchange each, and each then names its
# reply, as an interleaved client does: every reply interleaved, and
# fewer kicks for the n of them than replies.  From the server's log:
# every reply's t3k (the kernel's completion stamp, when the frame truly
# went) is at or after its T3.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need_prereq LAB HELPERS
need ntpreflect

port=12300
UUDP_QUEUES=1
n=20
# A client request (v4, mode 3) whose receive field is its own: it looks
# interleaved to the server (ntpreflect(1), "Stamps").
zeros() { printf "%0$(($1 * 2))d" 0; }
basic=23$(zeros 47)
rx_packets() { ip netns exec "$UB" cat "/sys/class/net/$IFB/statistics/rx_packets"; }
at_least() { [ "$(rx_packets)" -ge "$1" ]; }

# serve NAME: the server, logging, in $srv; its summary in $TMP/NAME.err,
# its log in $TMP/NAME.log.
serve() {
	spawn srv ip netns exec "$UB" ntpreflect --stratum 1 --log "$TMP/$1.log" \
		"uudp://$IPB:$port?dev=$IFB" 2>"$TMP/$1.err"
	wait_until 5 udp_listening_in "$UB" "$port"
}
# held N CMD...: the server stopped, CMD (in the background, its PIDs in
# $held_pids) sends N frames; once all arrived, the server goes on.
held() {
	_want=$1
	shift
	kill -STOP "$srv" || return 1
	_rx=$(rx_packets)
	"$@"
	if ! wait_until 5 at_least $((_rx + _want)); then
		kill -CONT "$srv"
		diag "the requests did not all arrive"
		return 1
	fi
	kill -CONT "$srv"
}
udpq_burst() {	# NAME: n basic requests and udpq's fence
	_hex=
	for _i in $(seq 1 "$n"); do _hex="$_hex $basic"; done
	ip netns exec "$UA" "$NTPX_HELPERS/udpq" "$IPB" "$port" $_hex >"$TMP/$1" &
	held_pids=$!
}
# xlq_one I ORG REC XMT: client I's request from port 30000 + I.
xlq_one() { ip netns exec "$UA" "$NTPX_HELPERS/xlq" "$IPB" "$port" "$IPA" $((30000 + $1)) "$2" "$3" "$4"; }
xlq_burst() {	# n interleaved requests, each naming its client's first reply
	held_pids=
	for _i in $(seq 1 "$n"); do
		set -- $(cat "$TMP/first.$_i")
		xlq_one "$_i" "$4" "$(printf '%016x' $((_i + 1000)))" "$(printf '%016x' $((_i + 2000)))" \
			>"$TMP/second.$_i" &
		held_pids="$held_pids $!"
	done
}
# Each held client's status: all must have had a reply.
held_wait() { _hw=0; for _p in $held_pids; do wait "$_p" || _hw=1; done; return $_hw; }
# "REPLIES UNSTAMPED OUT-OF-ORDER" of a log: t3 <= t3k on every reply.
t3_order() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("t3") != "-" { n++
			if (field("t3k") == "-") m++
			else if (!(field("t3") "" <= field("t3k") "")) b++ }
		END { print n + 0, m + 0, b + 0 }' "$1"
}

test_expect_success 'setup: a lab of our own, one queue each way' '
	uudp_lab
'

test_expect_success 'setup: the server; n clients, one basic exchange each' '
	serve xl &&
	for i in $(seq 1 "$n"); do
		xlq_one "$i" 0000000000000000 0000000000000000 "$(printf "%016x" "$i")" >"$TMP/first.$i" &&
		grep -q "^basic " "$TMP/first.$i" || return 1
	done
'
test_expect_success 'interleaved requests in one burst: every one answered, interleaved' '
	held "$n" xlq_burst &&
	held_wait &&
	test_is "$(cat "$TMP"/second.* | grep -c "^interleaved ")" "$n" &&
	stop_pid "$srv" &&
	test_is "$(counter "$TMP/xl.err" tx)" $((2 * n))
'
test_expect_success 'interleaved: fewer kicks than replies (the burst went together)' '
	diag "$(grep -o "bursts=[0-9]* tx_kicks=[0-9]*" "$TMP/xl.err")" &&
	test "$(counter "$TMP/xl.err" tx_kicks)" -lt $((2 * n))
'
test_expect_success 'interleaved: every reply sent after its T3 (t3 <= t3k), each stamped' '
	test_is "$(t3_order "$TMP/xl.log")" "$((2 * n)) 0 0"
'

test_expect_success 'basic requests in one burst: every one answered' '
	serve basic &&
	held $((n + 1)) udpq_burst basic &&
	held_wait &&
	stop_pid "$srv" &&
	test_is "$(grep -c "^reply 48" "$TMP/basic")" "$n"
'
test_expect_success 'basic: one kick per reply (T3 read as late as the frame allows), in fewer bursts' '
	diag "$(grep -o "bursts=[0-9]* tx_kicks=[0-9]*" "$TMP/basic.err")" &&
	test_is "$(counter "$TMP/basic.err" tx_kicks)" $((n + 1)) &&
	test "$(counter "$TMP/basic.err" bursts)" -lt $((n + 1))
'
test_expect_success 'basic: every reply sent after its T3 (t3 <= t3k), each stamped' '
	test_is "$(t3_order "$TMP/basic.log")" "$((n + 1)) 0 0"
'

done_testing
