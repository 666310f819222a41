#!/bin/sh
# SPDX-License-Identifier: ISC
# A uudp client (via=xdp) against kernel UDP servers, in a lab made by
# ntpx-lab and nothing else: ntpreflect over udp:// and chronyd -x (it
# never touches the clock) in the reference namespace, on both paths.
# Kernel sockets leave the UDP checksum to the device, and veth never
# completes it (doc/uudp.md, "veth and UDP checksums").  On fast the lab
# turns the offload off, so every reply must arrive with a complete
# checksum; on slow it keeps it, so every reply arrives with a partial
# one, which uudp on veth must accept by itself.  Either way every reply
# is accepted and none is refused for its checksum (rx_udp_csum).  Last,
# the other way round on slow: a kernel client's partial checksums reach
# a uudp ntpreflect, which answers them all.  Nothing in the lab loses a
# datagram by chance (the slow path's queue is far from full at 20
# requests a second), so every exchange must be ok; the probe waits up to
# 5 s for each reply, a limit on a failure (as wait_until's), not a bound
# on timing.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
need_prereq LAB
need ntpprobe ntpreflect chronyd

n=40
# The probe: N requests at 50 ms from the client namespace to ADDR on
# DEV, records in FILE, its summary in FILE.err.
probe() {	# FILE ADDR DEV
	ip netns exec "$NTPX_NS_CLIENT" ntpprobe -i 50ms -w 5s -c "$n" \
		"uudp://$2:123?dev=$3&via=xdp" >"$1" 2>"$1.err"
}
# Sum of the refusal counters in FILE: rx_* but rx_ok and those that
# count accepted frames.
refused() {
	sed -n 's/.*transport \(.*\)/\1/p' "$1" | tr ' ' '\n' | awk -F= '
		$1 ~ /^rx_/ && $1 !~ /^rx_(ok|udp_csum_partial|foreign|truncated)$/ { s += $2 }
		END { print s + 0 }'
}
# "refused-for-checksum:accepted-as-partial" in FILE.
csums() { echo "$(counter "$1" rx_udp_csum):$(counter "$1" rx_udp_csum_partial)"; }
# The count in ntpreflect's "answered N" line of FILE.
answered() { sed -n 's/^ntpreflect: answered \([0-9]*\).*/\1/p' "$1"; }
# The three checks of one run against SERVER on PATH (fast: no partial
# checksum; slow: each accepted reply had one), as three tests.
check_tests() {	# FILE SERVER PATH
	f=$1 srv=$2 path=$3
	if [ "$path" = fast ]; then what=complete; else what="partial, and accepted"; fi
	test_expect_success "$srv, $path path: every reply's UDP checksum $what" '
		diag "$srv, $path: $(tail -1 "$f.err")" &&
		if test "$path" = fast; then want=0:0; else want=0:$(counter "$f.err" rx_ok); fi &&
		test_is "$(csums "$f.err")" "$want"
	'
	test_expect_success "$srv, $path path: no reply refused at all" '
		test_is "$(refused "$f.err")" 0
	'
	test_expect_success "$srv, $path path: every exchange ok" '
		test_is "$(count_status "$f" ok)" "$n"
	'
}
write_chrony_conf() {
	cat >"$TMP/chrony/chrony.conf" <<CONF
port 123
local stratum 1
allow 10.77.0.0/16
cmdport 0
bindcmdaddress /
pidfile $TMP/chrony/chronyd.pid
driftfile $TMP/chrony/drift
dumpdir $TMP/chrony
CONF
}

test_expect_success 'setup: a lab of our own, as ntpx-lab makes it' '
	lab_up k
'

# ntpreflect over kernel UDP, on every address of the reference.
test_expect_success 'setup: ntpreflect over kernel UDP on every address of the reference' '
	spawn kr ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 udp://0.0.0.0:123 2>"$TMP/kr.err" &&
	wait_until 5 udp_listening_in "$NTPX_NS_REF" 123
'

test_expect_success 'setup: a uudp client probes it on the fast and on the slow path' '
	probe "$TMP/kf" "$NTPX_REF_FAST" "$NTPX_DEV_FAST" &&
	probe "$TMP/ks" "$NTPX_REF_SLOW" "$NTPX_DEV_SLOW"
'

test_expect_success 'ntpreflect exits 0' '
	kill -TERM "$kr" &&
	wait "$kr"
'

check_tests "$TMP/kf" ntpreflect fast
check_tests "$TMP/ks" ntpreflect slow

# Every reply the kernel sent reached the probes and was accepted.
test_expect_success 'every reply ntpreflect sent was accepted by uudp' '
	answered=$(answered "$TMP/kr.err") &&
	diag "ntpreflect answered $answered" &&
	test_is "$(($(counter "$TMP/kf.err" rx_ok) + $(counter "$TMP/ks.err" rx_ok)))" "$answered"
'

# chronyd as a server (-x: the clock is never touched), its own files.
test_expect_success 'setup: chronyd -x as the server in the reference namespace' '
	mkdir "$TMP/chrony" &&
	write_chrony_conf &&
	spawn cr ip netns exec "$NTPX_NS_REF" chronyd -x -d -f "$TMP/chrony/chrony.conf" -u root -L 0 \
		2>"$TMP/chrony/log" &&
	wait_until 10 udp_listening_in "$NTPX_NS_REF" 123
'

test_expect_success 'setup: a uudp client probes chronyd on the fast and on the slow path' '
	probe "$TMP/cf" "$NTPX_REF_FAST" "$NTPX_DEV_FAST" &&
	probe "$TMP/cs" "$NTPX_REF_SLOW" "$NTPX_DEV_SLOW"
'

test_expect_success 'chronyd still runs' '
	kill -0 "$cr" &&
	stop_pid "$cr"
'

check_tests "$TMP/cf" chronyd fast
check_tests "$TMP/cs" chronyd slow

# A kernel client against a uudp server, on slow (partial checksums).
test_expect_success 'setup: a kernel client against a uudp ntpreflect on the slow path' '
	spawn ur ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 "uudp://*:123?dev=$NTPX_DEV_SLOW" 2>"$TMP/ur.err" &&
	wait_until 5 udp_listening_in "$NTPX_NS_REF" 123 &&
	ip netns exec "$NTPX_NS_CLIENT" ntpprobe -i 50ms -w 5s -c "$n" "udp://$NTPX_REF_SLOW:123" \
		>"$TMP/us" 2>/dev/null &&
	stop_pid "$ur" &&
	diag "uudp server: $(tail -1 "$TMP/ur.err")"
'

test_expect_success 'kernel client, uudp server, slow path: every exchange ok' '
	test_is "$(count_status "$TMP/us" ok)" "$n"
'

test_expect_success 'the uudp server accepted every request with its partial checksum, refused none' '
	test_is "$(csums "$TMP/ur.err"):$(refused "$TMP/ur.err")" "0:$(counter "$TMP/ur.err" rx_ok):0"
'
done_testing
