#!/bin/sh
# SPDX-License-Identifier: ISC
# Neighbour resolution: the server's MAC comes from the kernel's table and
# is looked up again after a run of missed replies, so a server whose MAC
# changed mid-run is found again, the lookup coming after exactly the miss
# limit of missed replies in a row; mac= overrides the table.  Nothing on
# the veth loses a datagram by chance: the short runs wait up to 5 s for
# each reply (-w 5s, a limit on a failure, not a bound on timing) and must
# be ok throughout.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
need_prereq LAB
need ntpprobe ntpreflect

port=12300
miss_limit=3	# PEER_MISS_LIMIT_DEFAULT

oks_at_least() { test "$(count_status "$1" ok)" -ge "$2"; }
# Nothing listens on the far address (the kernel server on $IPB, same
# port, stays).
far_gone() { ! ip netns exec "$UB" ss -Hlun "sport = :$port" | grep -qF "$far:$port"; }
# The statuses of the records of FILE after the first B.
statuses_after() {
	awk -v b="$2" "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		++k > b { printf "%s ", field("status") }' "$1"
}
# "RUN BOGUS": the run of records that are not ok just before the #reset
# line of FILE, and how many of them are bogus.
reset_run() {
	awk "$ntpx_fields"'/^#reset/ { print r + 0, b + 0; exit } /^#fields/ { fields(); next } /^#/ { next }
		field("status") != "ok" { r++; if (field("status") == "bogus") b++; next } { r = b = 0 }' "$1"
}
# ok records of FILE after its #reset line.
oks_after_reset() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#reset/ { r = 1; next }
		r && field("status") == "ok"' "$1" | wc -l
}

test_expect_success 'setup: a lab of our own, its fast path between two namespaces' '
	uudp_lab
'

test_expect_success 'setup: a kernel-UDP ntpreflect in the reference namespace' '
	spawn kr ip netns exec "$UB" ntpreflect --stratum 1 "udp://$IPB:$port" 2>/dev/null &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

# mac= wins over the table, even over a permanent entry that is wrong.
test_expect_success 'mac= reaches the server past a wrong permanent entry, every exchange' '
	ina ip neigh replace "$IPB" lladdr 02:00:00:00:00:99 nud permanent dev "$IFA" &&
	test_is "$(probe_oks ina ntpprobe -i 50ms -w 5s -c 5 "uudp://$IPB:$port?dev=$IFA&mac=$MACB")" 5
'

test_expect_success 'and the permanent entry is left alone' '
	ip -n "$UA" neigh show "$IPB" dev "$IFA" | grep -q "02:00:00:00:00:99 PERMANENT"
'

test_expect_success 'a wrong mac= gets no replies: the override is used as given' '
	ina ip neigh del "$IPB" dev "$IFA" &&
	test_is "$(probe_oks ina ntpprobe -i 50ms -c 3 "uudp://$IPB:$port?dev=$IFA&mac=02:00:00:00:00:99")" 0
'

# A server off-link: the route's gateway is the next hop whose MAC is
# used (here the reference itself routes to an address on its loopback).
# The reference answers ARP only for its own interface's address, so
# asking ARP for the far address itself would fail.
test_expect_success 'setup: a server off-link, on the reference'\''s loopback, routed via the reference' '
	far=10.99.$((($$ % 200) + 20)).9 &&
	inb ip addr add "$far/32" dev lo &&
	inb sysctl -qw "net.ipv4.conf.$IFB.arp_ignore=1" &&
	ina ip route add "$far/32" via "$IPB" dev "$IFA" &&
	spawn fr ip netns exec "$UB" ntpreflect --stratum 1 "udp://$far:$port" 2>/dev/null &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

test_expect_success "a server behind a gateway is reached through the gateway's MAC, every exchange" '
	test_is "$(probe_oks ina ntpprobe -i 50ms -w 5s -c 5 "uudp://$far:$port?dev=$IFA")" 5
'

test_expect_success 'no neighbour entry was sought for the far address' '
	ip -n "$UA" neigh show "$far" >"$TMP/neigh" &&
	test_is "$(cat "$TMP/neigh")" ""
'

# Without mac=, the open resolves through the kernel (which sends ARP).
test_expect_success 'setup: the far server gone; a probe without mac=, from an empty neighbour table' '
	stop_pid "$fr" &&
	wait_until 5 far_gone &&
	ina ip neigh flush dev "$IFA" &&
	spawn pr ip netns exec "$UA" ntpprobe -i 100ms -c 60 "uudp://$IPB:$port?dev=$IFA" \
		>"$TMP/rec" 2>"$TMP/pr.err" &&
	wait_until 10 oks_at_least "$TMP/rec" 10
'

test_expect_success "resolved by the kernel's neighbour table" '
	ip -n "$UA" neigh show "$IPB" dev "$IFA" | grep -q "$MACB"
'

# The server's NIC changes its MAC; the kernel of B sends no gratuitous
# ARP (arp_notify is off), so only re-resolution can find it.
test_expect_success "setup: the server's NIC changes its MAC mid-run" '
	before=$(data_lines "$TMP/rec" | wc -l) &&
	newmac=02:00:00:$(od -An -N3 -tx1 /dev/urandom | sed "s/^ //; s/ /:/g") &&
	ip -n "$UB" link set dev "$IFB" address "$newmac" &&
	diag "MAC of $IPB changed to $newmac after record $before"
'

test_expect_success 'ntpprobe ran through' '
	wait "$pr"
'

# The run of records that are not ok just before the #reset line.  The
# transport counts an exchange without a reply as a miss and looks the MAC
# up again at the miss limit's miss in a row; any frame from the server
# starts the count afresh.  So the run is at least the miss limit, and
# longer only if replies from before the change came after their timeout
# (drained: late; or seen during a later exchange, which then ends bogus):
# each such restart adds at most the miss limit.  Exact on a busy machine.
test_expect_success "looked up again after the miss limit ($miss_limit) of misses in a row" '
	diag "after the change: $(statuses_after "$TMP/rec" "$before")" &&
	late=$(sed -n "s/.*, late \([0-9]*\).*/\1/p" "$TMP/pr.err") &&
	set -- $(reset_run "$TMP/rec") &&
	run=${1:-} bogus=${2:-0} &&
	diag "run before #reset: ${run:-none}; late ${late:-0}, bogus $bogus" &&
	test -n "$run" -a "${run:-0}" -ge "$miss_limit" -a \
		"${run:-0}" -le $((miss_limit * (1 + ${late:-0} + bogus)))
'

test_expect_success 'ok records again after the lookup' '
	test "$(oks_after_reset "$TMP/rec")" -gt 0
'

test_expect_success 'the new MAC is in the table' '
	ip -n "$UA" neigh show "$IPB" dev "$IFA" | grep -q "$newmac"
'

test_expect_success 'the probe was told once to start its filter afresh (#reset)' '
	diag "$(tail -1 "$TMP/pr.err")" &&
	test "$(grep -c "^#reset seq" "$TMP/rec")" = 1
'

test_expect_success 'the transport counted the loss and a second resolution' '
	test "$(counter "$TMP/pr.err" losses)" -ge 1 -a "$(counter "$TMP/pr.err" resolutions)" -ge 2
'
done_testing
