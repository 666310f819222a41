#!/bin/sh
# SPDX-License-Identifier: ISC
# The nts family (bin/ntpx-nts) in a lab of its own, through the two
# command prefixes, with very short runs: plain, NTS basic and NTS
# interleaved over kernel UDP, and NTS basic over uudp; each run writes
# its records and summary keys, every exchange authenticated, the seal
# and open times at both ends present exactly where NTS ran, and the
# certificates it made gone from both sides afterwards.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
need openssl

key() { awk -v k="$2" '$1 == k { print $2 }' "$1/summary.txt"; }
finished() { [ -f "$1/done" ] && [ -s "$1/summary.txt" ]; }
# Every figure of a segment is a number.
figures() {
	for k in delay_med_us turnaround_med_us error_med_us jitter_us; do
		is_num "$(key "$1" "$2_$k")" || { diag "(that is $2_$k)"; return 1; }
	done
}
nts_figures() {
	for k in client_seal_med_ns client_open_med_ns server_open_med_ns server_seal_med_ns; do
		is_num "$(key "$1" "$2_$k")" || { diag "(that is $2_$k)"; return 1; }
	done
}
# The last run's certificates are gone: ntpx-nts names their directory
# /tmp/ntpx-nts-PID-RUN; another run on this machine has its own.
no_certs_left() { for _d in /tmp/ntpx-nts-"$nts_pid"-*; do [ -e "$_d" ] && return 1; done; return 0; }
# run NAME CONDITION TRANSPORT: ntpx-nts, waited for; its PID in nts_pid.
run() {
	spawn nts_pid ntpx-nts -o "$TMP/$1" -c "$2" -t "$3" -d 4s -i 50ms 2>"$TMP/$1.err" &&
	wait "$nts_pid" && return 0
	diag "$(tail -n 3 "$TMP/$1.err")"
	return 1
}

test_expect_success "setup: a lab of the test's own" '
	lab_up n
'

test_expect_success 'plain over udp finishes, every figure a number, no NTS figure' '
	run plain plain udpfast &&
	finished "$TMP/plain" &&
	figures "$TMP/plain" idle && figures "$TMP/plain" load &&
	test_is "$(key "$TMP/plain" idle_client_seal_med_ns)" - &&
	test_is "$(key "$TMP/plain" idle_server_open_med_ns)" -
'

test_expect_success 'nts-basic over udp: authenticated, the seal and open times at both ends' '
	run basic nts-basic udpfast &&
	finished "$TMP/basic" &&
	test_is "$(key "$TMP/basic" nts_bogus)" 0 &&
	test_grep "^#nts aead AEAD_AES_SIV_CMAC_256" "$TMP/basic/probe.rec" &&
	figures "$TMP/basic" idle && figures "$TMP/basic" load &&
	nts_figures "$TMP/basic" idle && nts_figures "$TMP/basic" load &&
	no_certs_left
'

test_expect_success 'nts-xleave over udp: interleaved replies, authenticated' '
	run xleave nts-xleave udpfast &&
	finished "$TMP/xleave" &&
	test_is "$(key "$TMP/xleave" xleave)" 1 &&
	test_grep "interleaved [1-9]" "$TMP/xleave/probe.err" &&
	test_is "$(key "$TMP/xleave" nts_bogus)" 0 &&
	nts_figures "$TMP/xleave" idle
'

test_expect_success 'nts-basic over uudp: the exchanges past the kernel, NTS-KE through it' '
	run ubasic nts-basic uudpfast &&
	finished "$TMP/ubasic" &&
	test_is "$(key "$TMP/ubasic" nts_bogus)" 0 &&
	nts_figures "$TMP/ubasic" idle &&
	no_certs_left
'

test_expect_success 'a condition it does not have is a usage error' '
	test_exit 2 ntpx-nts -o "$TMP/bad" -c nts-fast -t udpfast -d 1s 2>"$TMP/bad.err" &&
	test_grep "unknown condition .nts-fast." "$TMP/bad.err"
'

done_testing
