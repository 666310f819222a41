#!/bin/sh
# SPDX-License-Identifier: ISC
# Bad frames put on the link towards a uudp ntpreflect: every one is an
# NTP client request that would be answered if it were well formed, spoilt
# in one way.  Each is counted under its reason, none is answered, and the
# server keeps serving.  frameinject (tests/helpers) makes them.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
need_prereq LAB
need ntpprobe ntpreflect tshark

port=12300
sport=40000
inject=$NTPX_HELPERS/frameinject
# The server's answers to the injector's port in the capture so far.
to_injector() { tshark -r "$TMP/cap.pcap" -Y "ip.src == $IPB && udp.dstport == $sport" 2>/dev/null | wc -l; }
fence_captured() { [ "$(to_injector)" -ge 1 ]; }

test_expect_success 'setup: a lab of our own, its fast path between two namespaces' '
	uudp_lab
'

test_expect_success 'setup: a uudp ntpreflect, and a capture on the client side of whatever the server sends to our port' '
	spawn ur ip netns exec "$UB" ntpreflect --stratum 1 "uudp://$IPB:$port?dev=$IFB" 2>"$TMP/ur.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	spawn cap ip netns exec "$UA" tshark -q -i "$IFA" -w "$TMP/cap.pcap" -f "udp port $sport" 2>/dev/null &&
	wait_until 10 test -s "$TMP/cap.pcap"
'

# ARP for the server first, as a real client would have: dst_mac below
# must be the one thing wrong with its frame.
test_expect_success 'frameinject sent its frames' '
	ina ping -c 1 -W 2 "$IPB" >/dev/null &&
	ina "$inject" "$IFA" "$MACB" "$IPA" "$IPB" "$port" "$sport" \
		ip_csum udp_csum fragment ip_length udp_length dst_ip dst_mac short \
		ip_version ethertype fragment_tail dst_port
'

# A fence: a good request from the injector, then the kernel client's.
# -w 5s: a limit on a failure; nothing on the veth loses a datagram.
test_expect_success 'the server still answers, every exchange' '
	ina "$inject" "$IFA" "$MACB" "$IPA" "$IPB" "$port" "$sport" good &&
	test_is "$(probe_oks ina ntpprobe -i 50ms -w 5s -c 5 "udp://$IPB:$port")" 5
'

test_expect_success 'ntpreflect exits 0' '
	kill -TERM "$ur" &&
	wait "$ur" &&
	diag "$(tail -1 "$TMP/ur.err")"
'

for r in ip_csum udp_csum fragment ip_length udp_length dst_ip dst_mac ip_version; do
	test_expect_success "a frame spoilt in $r is counted as rx_$r" '
		test_is "$(counter "$TMP/ur.err" "rx_$r")" 1
	'
done

# A frame cut inside the UDP header passes the XDP program only if its
# port is visible: it goes to the kernel, as does what is not IPv4 UDP to
# our port.  Nothing of theirs may be counted as ok.
test_expect_success 'six good requests: five from the kernel client and the fence' '
	test_is "$(counter "$TMP/ur.err" rx_ok)" 6
'

test_expect_success 'answered exactly those' '
	test_grep "^ntpreflect: answered 6$" "$TMP/ur.err"
'

# The server's answers to our port: one, to the fence (its xmt byte is 8),
# once the capture has it.
test_expect_success 'on the wire, one answer to the injector: the fence' '
	wait_until 5 fence_captured &&
	stop_pid "$cap" INT &&
	test_is "$(to_injector)" 1
'

test_expect_success 'nothing else from the server to the injector'\''s port' '
	test "$(tshark -r "$TMP/cap.pcap" -Y "ip.src == $IPB" 2>/dev/null | wc -l)" = 1
'
done_testing
