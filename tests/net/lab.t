#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-lab: up (twice), status, env, exec, both paths carry traffic, the
# shapers are where the man page says, the fast path's ends send complete
# checksums and the slow path's keep their offloads, down leaves nothing,
# two labs side by side, and the refusals.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
need ping ethtool
lab=$NTPX_TOP/bin/ntpx-lab
quiet() { "$@" >/dev/null 2>&1; }

a=$(uniq_name t)
b=$(uniq_name u)
cleanup "$lab -n $a down"
cleanup "$lab -n $b down"

ok "up makes a lab" $lab -n "$a" up
ok "up again on a lab that is up succeeds" $lab -n "$a" up
ok "status says up" sh -c "$lab -n $a status | grep -q '^lab $a: up'"

eval "$($lab -n "$a" env)"
is "$NTPX_NS_REF $NTPX_NS_CLIENT" "ntpx-ref-$a ntpx-cli-$a" "env names both namespaces"
ok "env gives four addresses" test -n "$NTPX_REF_SLOW" -a -n "$NTPX_REF_FAST" \
	-a -n "$NTPX_CLIENT_SLOW" -a -n "$NTPX_CLIENT_FAST"
is "$NTPX_SLOW_RATE" 1000000000 "env gives the default slow rate in bit/s"

is "$($lab -n "$a" exec ref ip -br -4 addr show dev slow | awk '{print $3}')" \
	"$NTPX_REF_SLOW/24" "exec runs inside the reference"
is "$($lab -n "$a" exec client ip -br -4 addr show dev fast | awk '{print $3}')" \
	"$NTPX_CLIENT_FAST/24" "exec runs inside the client"
ok "the host namespace has no lab address" \
	sh -c "! ip -4 addr show | grep -q '$NTPX_REF_SLOW/'"

ok "ping client->ref across slow" quiet $lab -n "$a" exec client ping -q -c 2 -i 0.2 -W 2 "$NTPX_REF_SLOW"
ok "ping client->ref across fast" quiet $lab -n "$a" exec client ping -q -c 2 -i 0.2 -W 2 "$NTPX_REF_FAST"

# The pings went through the slow shapers in both directions (the FIFO
# under each HTB counted them) and through no shaper on fast.
sent() { tc -s -n "$1" qdisc show dev "$2" | awk '$1 == "qdisc" && $2 == "bfifo" {w=1} w && $1 == "Sent" {print $4; exit}'; }
ok "slow ref->client shaper carried the replies" test "$(sent "ntpx-ref-$a" slow)" -ge 2
ok "slow client->ref shaper (ifb on ref ingress) carried the requests" \
	test "$(sent "ntpx-ref-$a" ifbslow)" -ge 2
is "$(tc -n "ntpx-ref-$a" qdisc show dev fast root | awk '{print $2}')" noqueue "fast is unshaped"

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
is "$(txcsum)" "ntpx-ref-$a/slow=on ntpx-cli-$a/slow=on ntpx-ref-$a/fast=off ntpx-cli-$a/fast=off " \
	"tx checksum offload: off at both ends of fast, on at both ends of slow"
is "$($lab -n "$a" status | sed -n 's/^  checksums  //p')" \
	"fast: complete (tx offload off); slow: partial from ref client (tx offload on)" \
	"status says so"
ip netns exec "ntpx-cli-$a" ethtool -K fast tx on >/dev/null
ok "status tells when an end of fast has it on again" \
	sh -c "$lab -n $a status | grep -q '^  checksums  fast: partial from client (tx offload on), not as up made it'"
ok "up turns it off again" \
	sh -c "$lab -n $a up && ip netns exec ntpx-cli-$a ethtool -k fast | grep -qx 'tx-checksumming: off'"

ok "-r changes the rate of a lab that is up" $lab -n "$a" -r 800M up
is "$(tc -n "ntpx-ref-$a" class show dev slow | grep -o 'rate [^ ]*')" "rate 800Mbit" "the new rate is in the shaper"

ok "-s egress moves the client->ref shaper to the client" $lab -n "$a" -s egress up
is "$(tc -n "ntpx-cli-$a" qdisc show dev slow root | awk '{print $2}'):$(ip -n "ntpx-ref-$a" -br link show dev ifbslow 2>/dev/null | wc -l)" \
	"htb:0" "the client's slow egress is shaped and the ifb is gone"
ok "-s ingress puts it back on an ifb" sh -c "$lab -n $a -s ingress up && tc -n ntpx-ref-$a qdisc show dev ifbslow root | grep -q htb && ! tc -n ntpx-cli-$a qdisc show dev slow root | grep -q htb"

ok "a second lab comes up beside the first" $lab -n "$b" up
ok "the second lab carries traffic" quiet $lab -n "$b" exec client ping -q -c 1 -W 2 10.77.1.1
ok "down removes the first lab" $lab -n "$a" down
ok "down leaves no namespace, link or state behind" \
	sh -c "! ip netns list | grep -q -- '-$a\\b' && ! test -e /run/ntpx-lab/$a.conf"
ok "the second lab still carries traffic" quiet $lab -n "$b" exec client ping -q -c 1 -W 2 10.77.2.1

# What a failed up leaves (a namespace and half a veth pair) goes with down.
c=$(uniq_name v)
cleanup "$lab -n $c down"
ip netns add "ntpx-ref-$c"
ip -n "ntpx-ref-$c" link add slow type veth peer name slowx
ok "down after a failed up succeeds" $lab -n "$c" down
ok "and leaves nothing" sh -c "! ip netns list | grep -q -- '-$c\\b'"

# A user who is not root gets one line and status 1.
if command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $lab -n "$b" up 2>&1)
	rc=$?
	is "$rc:$(echo "$out" | wc -l):$out" "1:1:ntpx-lab: needs root to make network namespaces and veth pairs" \
		"not root: one line, exit 1"
else
	skip "not root: one line, exit 1" "no setpriv"
fi
done_testing
