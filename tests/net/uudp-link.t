#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp's XDP port waits for the link after attaching its program: igc,
# i40e and ice restart the port to attach one, and frames sent before the
# link runs again are lost.  Here the veth's peer is down while a uudp
# ntpreflect opens: the open waits (the port is not reserved, nothing
# listens), goes on once the peer is up, says so in one line, and answers
# every request.  A link that runs throughout costs no wait and no line.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
need_prereq LAB
need ntpprobe ntpreflect

port=12300
oks() { ina ntpprobe -i 20ms -w 5s -c 5 "udp://$IPB:$port" 2>/dev/null | grep -Ec ' ok( |$)'; }
attached() { test "$(xdp_prog "$UB" "$IFB")" = ntpx_xdp; }

test_expect_success 'setup: a lab of our own' '
	uudp_lab
'

test_expect_success 'a link that runs: the server opens and says nothing of it' '
	spawn ur ip netns exec "$UB" ntpreflect --stratum 1 "uudp://$IPB:$port?dev=$IFB" 2>"$TMP/ur1.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	test_is "$(oks)" 5 &&
	stop_pid "$ur" &&
	! grep "the link" "$TMP/ur1.err"
'

test_expect_success 'the peer down: the open waits with the program attached' '
	ina ip link set dev "$IFA" down &&
	test_when_finished "ina ip link set dev $IFA up" &&
	spawn ur ip netns exec "$UB" ntpreflect --stratum 1 "uudp://$IPB:$port?dev=$IFB" 2>"$TMP/ur2.err" &&
	wait_until 5 attached &&
	! udp_listening_in "$UB" "$port"
'

test_expect_success 'the peer up: it goes on, and every request is answered' '
	ina ip link set dev "$IFA" up &&
	wait_until 10 udp_listening_in "$UB" "$port" &&
	test_is "$(oks)" 5 &&
	stop_pid "$ur"
'

test_expect_success 'and it said so in one line' '
	test_is "$(grep -c "the link" "$TMP/ur2.err")" 1 &&
	test_grep "^ntpreflect: uudp://$IPB:$port?dev=$IFB: $IFB: the link was down once the XDP program was attached, and running [0-9]* ms after$" "$TMP/ur2.err"
'

done_testing
