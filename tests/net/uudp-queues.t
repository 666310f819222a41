#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over AF_XDP on veths of four queues each way (ntpx-lab --queues),
# as on a NIC with several: the kernel peer sends on each queue in turn
# (XPS on its veth), and every exchange is answered, the uudp end
# counting its frames on the queue they came on.  With a socket on queue 0
# alone (before issue 35) every reply on another queue went to the
# kernel and was lost.  An interface with more queues than uudp serves
# is refused with one line.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
# Nothing on a veth loses a datagram by chance: every exchange is ok.
# -w 5s is a limit on a failure, not a bound on timing.
need_prereq LAB
need ntpprobe ntpreflect timeout

port=12300
UUDP_QUEUES=4

# xps_all: a cpumask of every CPU, as xps_cpus takes it (32-bit groups).
xps_all() {
	_n=$(nproc --all) _m=
	while [ "$_n" -gt 0 ]; do
		_b=$((_n > 32 ? 32 : _n))
		_m=$(printf '%x' $(((1 << _b) - 1)))${_m:+,$_m}
		_n=$((_n - _b))
	done
	echo "$_m"
}
# steer NS Q: the kernel of NS sends on queue Q of the fast veth alone
# (XPS maps every CPU there), so the peer receives on its queue Q.
steer() {
	ip netns exec "$1" sh -c 'for f in /sys/class/net/'"$IFA"'/queues/tx-*/xps_cpus; do
		echo 0 >"$f" || exit 1; done
		echo '"$(xps_all)"' >/sys/class/net/'"$IFA"'/queues/tx-'"$2"'/xps_cpus'
}
# The value of queue_frames= in FILE's transport line.
queue_frames() { sed -n 's/.*transport .* queue_frames=\([0-9,]*\).*/\1/p' "$1"; }
oks() { grep -Ec ' ok( |$)' "$1"; }
# five_on Q: queue_frames of five frames, all on queue Q of four.
five_on() { awk -v q="$1" 'BEGIN { for (i = 0; i < 4; i++) printf "%s%d", (i ? "," : ""), (i == q ? 5 : 0); print "" }'; }
# The queue all of FILE's frames came on ("" unless all came on one),
# and the number of queues a list of such numbers names.
one_queue() { queue_frames "$1" | awk -F, '{ for (i = 1; i <= NF; i++) if ($i > 0) { n++; q = i - 1 } } END { if (n == 1) print q }'; }
distinct() { printf '%s\n' "$@" | sort -u | grep -c .; }
# probe_q NAME [KEY=VALUE]: five exchanges of a uudp client, the kernel
# server's replies sent on the queue steered; records in $TMP/NAME, its
# counters in $TMP/NAME.err; every exchange ok.
probe_q() {
	ina ntpprobe -i 20ms -w 5s -c 5 "uudp://$IPB:$port?dev=$IFA&via=xdp${2:+&$2}" \
		>"$TMP/$1" 2>"$TMP/$1.err" &&
	test_is "$(oks "$TMP/$1")" 5
}

test_expect_success 'setup: a lab of our own, four queues each way' '
	uudp_lab &&
	test_is "$(ina ls /sys/class/net/$IFA/queues | grep -c rx-)" 4
'

test_expect_success 'setup: a kernel-UDP ntpreflect in the reference namespace' '
	spawn kr ip netns exec "$UB" ntpreflect --stratum 1 "udp://$IPB:$port" 2>"$TMP/kr.err" &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

# Generic XDP on veth (the default mode there) sees a frame the peer
# sent on its queue q > 0 as received on queue q - 1: veth leaves the
# transmit queue in the skb, which the receiving side reads as a recorded
# receive queue, plus one.  So four steerings reach three queues, and
# native XDP each of the four.
seen=
for q in 0 1 2 3; do
	test_expect_success "uudp client, kernel replies sent on queue $q: every exchange ok, on one queue" '
		steer "$UB" '"$q"' &&
		probe_q c'"$q"' &&
		at=$(one_queue "$TMP/c'"$q"'.err") && test -n "$at" &&
		seen="$seen $at"
	'
done

test_expect_success 'the replies came on three queues or more' '
	diag "queues:$seen" &&
	test "$(distinct $seen)" -ge 3
'

for q in 3 0 2 1; do
	test_expect_success "native XDP: every reply sent on queue $q answered from queue $q" '
		steer "$UB" '"$q"' &&
		probe_q n'"$q"' xdpmode=native &&
		test_is "$(queue_frames "$TMP/n'"$q"'.err")" "$(five_on '"$q"')"
	'
done

test_expect_success 'setup: a uudp ntpreflect in the reference namespace' '
	stop_pid "$kr" &&
	spawn ur ip netns exec "$UB" ntpreflect --stratum 1 "uudp://$IPB:$port?dev=$IFB" 2>"$TMP/ur.err" &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

for q in 3 1 0 2; do
	test_expect_success "kernel client sending on queue $q: every request answered" '
		steer "$UA" '"$q"' &&
		ina ntpprobe -i 20ms -w 5s -c 5 "udp://$IPB:$port" >"$TMP/k'"$q"'" 2>/dev/null &&
		test_is "$(oks "$TMP/k'"$q"'")" 5
	'
done

test_expect_success 'the uudp server took the twenty requests from three queues or more' '
	stop_pid "$ur" &&
	test_is "$(counter "$TMP/ur.err" queues)" 4 &&
	queue_frames "$TMP/ur.err" | awk -F, "{ for (i = 1; i <= NF; i++) { s += \$i; n += \$i > 0 } }
		END { exit !(s == 20 && n >= 3) }"
'

# 65 queues: more than uudp serves (64).  A veth pair of the test's own,
# both ends in one namespace of its own.
test_expect_success 'an interface with 65 receive queues: refused, one line, exit 1' '
	ns=$(uniq_name uq) &&
	ip netns add "$ns" &&
	test_when_finished "ip netns del $ns" &&
	ip -n "$ns" link add big numrxqueues 65 numtxqueues 65 type veth peer name bigp &&
	ip -n "$ns" addr add 10.78.0.1/24 dev big &&
	ip -n "$ns" link set big up &&
	ip -n "$ns" link set bigp up &&
	test_exit 1 timeout 20 ip netns exec "$ns" ntpreflect --stratum 1 "uudp://10.78.0.1:$port?dev=big" \
		2>"$TMP/big.err" &&
	test_is "$(cat "$TMP/big.err")" \
		"ntpreflect: uudp://10.78.0.1:$port?dev=big: big: 65 receive queues, more than the 64 uudp gives an AF_XDP socket each (set fewer with ethtool -L)"
'

done_testing
