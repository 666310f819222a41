#!/bin/sh
# SPDX-License-Identifier: ISC
# NTS over uudp: NTS protects the payload, not the path.  In a lab of our
# own, ntpreflect --nts-cert serves over uudp (AF_XDP) while its NTS-KE
# listener takes TCP through the kernel on the same address; ntpprobe
# --nts runs NTS-KE over TCP and its exchanges over uudp, and over kernel
# UDP, every one authenticated.  The certificates are made here with
# openssl, for the reference's fast-path address.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
. "$NTPX_TOP/tests/nts.sh"
# Nothing on a veth loses a datagram by chance, so every exchange must be
# ok; the probes wait up to 5 s for each (-w 5s), a limit on a failure.
need_prereq LAB
need ntpprobe ntpreflect openssl

port=12300
ke_listening_in() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .; }

test_expect_success 'setup: a lab of our own, its fast path between two namespaces' '
	uudp_lab
'

test_expect_success 'setup: a CA and a certificate for the reference'\''s fast-path address' '
	nts_ca ca && nts_cert srv ca "$IPB"
'

test_expect_success 'setup: a uudp ntpreflect serving NTS, its KE listener on TCP' '
	spawn ur ip netns exec "$UB" ntpreflect --stratum 1 --nts-cert "$TMP/srv.pem" --nts-key "$TMP/srv.key" \
		"uudp://*:$port?dev=$IFB" 2>"$TMP/ur.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	wait_until 5 ke_listening_in "$UB" 4460
'

test_expect_success 'ntpprobe --nts over uudp (NTS-KE over kernel TCP): 20 of 20 ok, authenticated' '
	ina ntpprobe --records --nts --ca "$TMP/ca.pem" -i 50ms -w 5s -c 20 \
		"uudp://$IPB:$port?dev=$IFA&via=xdp" >"$TMP/c1" 2>"$TMP/c1.err" &&
	test_is "$(count_status "$TMP/c1" ok)" 20 &&
	test_grep "nts-bogus 0, nts-nak 0, nts-ke 1," "$TMP/c1.err" &&
	test_grep "^#nts aead AEAD_AES_SIV_CMAC_256 cookies 8 ke $IPB:4460" "$TMP/c1" &&
	nts_cols "$TMP/c1" &&
	one_clock "$TMP/c1"
'

test_expect_success 'ntpprobe --nts --xleave over uudp: interleaved and authenticated' '
	ina ntpprobe --records --nts --xleave --ca "$TMP/ca.pem" -i 50ms -w 5s -c 10 \
		"uudp://$IPB:$port?dev=$IFA&via=xdp" >"$TMP/c2" 2>"$TMP/c2.err" &&
	test_is "$(count_status "$TMP/c2" ok)" 10 &&
	test_grep "interleaved [1-9]" "$TMP/c2.err" &&
	test_grep "nts-bogus 0" "$TMP/c2.err"
'

test_expect_success 'ntpprobe --nts over kernel UDP to the same uudp server: 20 of 20 ok' '
	ina ntpprobe --records --nts --ca "$TMP/ca.pem" -i 50ms -w 5s -c 20 \
		"udp://$IPB:$port" >"$TMP/c3" 2>"$TMP/c3.err" &&
	test_is "$(count_status "$TMP/c3" ok)" 20 &&
	test_grep "nts-bogus 0" "$TMP/c3.err"
'

test_expect_success 'setup: the server stops, its summary written' '
	kill -TERM "$ur" &&
	wait "$ur"
'

test_expect_success 'the server ran NTS-KE three times and refused nothing' '
	test_grep "nts-ke 3, nts-ke failed 0" "$TMP/ur.err" &&
	test_grep ! "nts-bad\|nts-nak\|malformed" "$TMP/ur.err"
'

done_testing
