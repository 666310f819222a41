#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-lab: up (twice), status, env, exec, both paths carry traffic, the
# shapers are where the man page says, the fast path's ends send complete
# checksums and the slow path's keep their offloads, --queues makes
# multi-queue veths, down leaves nothing, two labs side by side, and the
# refusals.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
need ping ethtool
lab=$NTPX_TOP/bin/ntpx-lab
quiet() { "$@" >/dev/null 2>&1; }

# SETPRIV: setpriv, to run ntpx-lab as a user who is not root.
test_lazy_prereq SETPRIV 'command -v setpriv'

addr_of() { $lab -n "$a" exec "$1" ip -br -4 addr show dev "$2" | awk '{print $3}'; }
# The pings went through the slow shapers in both directions (the FIFO
# under each HTB counted them) and through no shaper on fast.
sent() { tc -s -n "$1" qdisc show dev "$2" | awk '$1 == "qdisc" && $2 == "bfifo" {w=1} w && $1 == "Sent" {print $4; exit}'; }
root_qdisc() { tc -n "$1" qdisc show dev "$2" root | awk '{print $2}'; }
# On fast the kernel fills in the checksums itself, which veth would
# leave partial; slow keeps the offload, and with it segmentation offload
# for load (doc/ntpx-lab.1).  up puts back what was changed.
txcsum() {
	for _d in slow fast; do
		for _ns in "ntpx-ref-$a" "ntpx-cli-$a"; do
			ip netns exec "$_ns" ethtool -k "$_d" | awk -v w="$_ns/$_d" '$1 == "tx-checksumming:" { printf "%s=%s ", w, $2 }'
		done
	done
}
status_checksums() { $lab -n "$a" status | sed -n 's/^  checksums  //p'; }
# "ns/dev=RX/TX ..." of every veth end of lab $a: its queues each way.
queues() {
	for _d in slow fast; do
		for _ns in "ntpx-ref-$a" "ntpx-cli-$a"; do
			ip -n "$_ns" -d link show dev "$_d" | awk -v w="$_ns/$_d" '
				{ for (i = 1; i < NF; i++) { if ($i == "numtxqueues") t = $(i + 1)
					if ($i == "numrxqueues") r = $(i + 1) } }
				END { printf "%s=%s/%s ", w, r, t }'
		done
	done
}
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups $lab -n "$b" up 2>&1; }

test_expect_success 'up makes a lab' '
	a=$(uniq_name t) &&
	test_atexit "$lab -n $a down" &&
	$lab -n "$a" up
'
test_expect_success 'up again on a lab that is up succeeds' '
	$lab -n "$a" up
'
test_expect_success 'status says up' '
	$lab -n "$a" status | grep -q "^lab $a: up"
'

test_expect_success 'env names both namespaces' '
	eval "$($lab -n "$a" env)" &&
	test_is "$NTPX_NS_REF $NTPX_NS_CLIENT" "ntpx-ref-$a ntpx-cli-$a"
'
test_expect_success 'env gives four addresses' '
	test -n "$NTPX_REF_SLOW" -a -n "$NTPX_REF_FAST" -a -n "$NTPX_CLIENT_SLOW" -a -n "$NTPX_CLIENT_FAST"
'
test_expect_success 'env gives the default slow rate in bit/s' '
	test_is "$NTPX_SLOW_RATE" 1000000000
'

test_expect_success 'exec runs inside the reference' '
	test_is "$(addr_of ref slow)" "$NTPX_REF_SLOW/24"
'
test_expect_success 'exec runs inside the client' '
	test_is "$(addr_of client fast)" "$NTPX_CLIENT_FAST/24"
'
test_expect_success 'the host namespace has no lab address' '
	! ip -4 addr show | grep -q "$NTPX_REF_SLOW/"
'

test_expect_success 'ping client->ref across slow' '
	quiet $lab -n "$a" exec client ping -q -c 2 -i 0.2 -W 2 "$NTPX_REF_SLOW"
'
test_expect_success 'ping client->ref across fast' '
	quiet $lab -n "$a" exec client ping -q -c 2 -i 0.2 -W 2 "$NTPX_REF_FAST"
'

test_expect_success 'slow ref->client shaper carried the replies' '
	test "$(sent "ntpx-ref-$a" slow)" -ge 2
'
test_expect_success 'slow client->ref shaper (ifb on ref ingress) carried the requests' '
	test "$(sent "ntpx-ref-$a" ifbslow)" -ge 2
'
test_expect_success 'fast is unshaped' '
	test_is "$(root_qdisc "ntpx-ref-$a" fast)" noqueue
'

test_expect_success 'tx checksum offload: off at both ends of fast, on at both ends of slow' '
	test_is "$(txcsum)" "ntpx-ref-$a/slow=on ntpx-cli-$a/slow=on ntpx-ref-$a/fast=off ntpx-cli-$a/fast=off "
'
test_expect_success 'status says so' '
	test_is "$(status_checksums)" "fast: complete (tx offload off); slow: partial from ref client (tx offload on)"
'
test_expect_success 'status tells when an end of fast has it on again' '
	ip netns exec "ntpx-cli-$a" ethtool -K fast tx on >/dev/null &&
	$lab -n "$a" status | grep -q "^  checksums  fast: partial from client (tx offload on), not as up made it"
'
test_expect_success 'up turns it off again' '
	$lab -n "$a" up &&
	ip netns exec "ntpx-cli-$a" ethtool -k fast | grep -qx "tx-checksumming: off"
'

test_expect_success '-r changes the rate of a lab that is up' '
	$lab -n "$a" -r 800M up
'
test_expect_success 'the new rate is in the shaper' '
	test_is "$(tc -n "ntpx-ref-$a" class show dev slow | grep -o "rate [^ ]*")" "rate 800Mbit"
'

test_expect_success '--shape egress moves the client->ref shaper to the client' '
	$lab -n "$a" --shape egress up
'
test_expect_success "the client's slow egress is shaped and the ifb is gone" '
	test_is "$(root_qdisc "ntpx-cli-$a" slow):$(ip -n "ntpx-ref-$a" -br link show dev ifbslow 2>/dev/null | wc -l)" "htb:0"
'
test_expect_success '--shape ingress puts it back on an ifb' '
	$lab -n "$a" --shape ingress up &&
	tc -n "ntpx-ref-$a" qdisc show dev ifbslow root | grep -q htb &&
	! tc -n "ntpx-cli-$a" qdisc show dev slow root | grep -q htb
'

test_expect_success 'one queue each way on every veth by default' '
	test_is "$(queues)" "ntpx-ref-$a/slow=1/1 ntpx-cli-$a/slow=1/1 ntpx-ref-$a/fast=1/1 ntpx-cli-$a/fast=1/1 "
'
test_expect_success '--queues 4 makes every veth again with four each way' '
	$lab -n "$a" --queues 4 up &&
	test_is "$(queues)" "ntpx-ref-$a/slow=4/4 ntpx-cli-$a/slow=4/4 ntpx-ref-$a/fast=4/4 ntpx-cli-$a/fast=4/4 "
'
test_expect_success 'env and status say so, and up keeps it' '
	$lab -n "$a" env | grep -qx NTPX_QUEUES=4 &&
	$lab -n "$a" status | grep -qx "  queues     fast 4, slow 4, each way" &&
	$lab -n "$a" up && test_is "$($lab -n "$a" env | grep "^NTPX_QUEUES=")" NTPX_QUEUES=4
'
test_expect_success 'the multi-queue lab carries traffic both ways, shaped on slow' '
	quiet $lab -n "$a" exec client ping -q -c 1 -W 2 10.77.1.1 &&
	quiet $lab -n "$a" exec client ping -q -c 1 -W 2 10.77.2.1 &&
	test "$(sent "ntpx-ref-$a" slow)" -gt 0
'
test_expect_success '--queues 1 puts one queue back' '
	$lab -n "$a" --queues 1 up &&
	test_is "$(queues)" "ntpx-ref-$a/slow=1/1 ntpx-cli-$a/slow=1/1 ntpx-ref-$a/fast=1/1 ntpx-cli-$a/fast=1/1 "
'
test_expect_success 'a bad queue count: a line that says so, exit 2' '
	test_exit 2 $lab -n "$a" --queues 0 up 2>"$TMP/q.err" &&
	test_is "$(head -n 1 "$TMP/q.err")" "ntpx-lab: queues 0 out of range (1..64)" &&
	test_exit 2 $lab -n "$a" --queues 2x up 2>"$TMP/q.err" &&
	test_is "$(head -n 1 "$TMP/q.err")" "ntpx-lab: bad queues '\''2x'\''"
'

test_expect_success 'a second lab comes up beside the first' '
	b=$(uniq_name u) &&
	test_atexit "$lab -n $b down" &&
	$lab -n "$b" up
'
test_expect_success 'the second lab carries traffic' '
	quiet $lab -n "$b" exec client ping -q -c 1 -W 2 10.77.1.1
'
test_expect_success 'down removes the first lab' '
	$lab -n "$a" down
'
test_expect_success 'down leaves no namespace, link or state behind' '
	! ip netns list | grep -q -- "-$a\b" &&
	! test -e "/run/ntpx-lab/$a.conf"
'
test_expect_success 'the second lab still carries traffic' '
	quiet $lab -n "$b" exec client ping -q -c 1 -W 2 10.77.2.1
'

# What a failed up leaves (a namespace and half a veth pair) goes with down.
test_expect_success 'setup: what a failed up leaves, a namespace and half a veth pair' '
	c=$(uniq_name v) &&
	test_atexit "$lab -n $c down" &&
	ip netns add "ntpx-ref-$c" &&
	ip -n "ntpx-ref-$c" link add slow type veth peer name slowx
'
test_expect_success 'down after a failed up succeeds' '
	$lab -n "$c" down
'
test_expect_success 'and leaves nothing' '
	! ip netns list | grep -q -- "-$c\b"
'

# A user who is not root gets one line and status 1.
test_expect_success SETPRIV 'not root: one line, exit 1' '
	test_exit 1 as_nobody >"$TMP/nobody.out" &&
	out=$(cat "$TMP/nobody.out") &&
	test_is "$(echo "$out" | wc -l):$out" "1:ntpx-lab: needs root to make network namespaces and veth pairs"
'
done_testing
