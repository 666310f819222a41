#!/bin/sh
# SPDX-License-Identifier: ISC
# Neighbour resolution: the server's MAC comes from the kernel's table and
# is looked up again after a run of missed replies, so a server whose MAC
# changed mid-run is found again within (miss limit + 2) intervals; mac=
# overrides the table.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need ntpprobe ntpreflect
uudp_lab

port=12300
miss_limit=3	# PEER_MISS_LIMIT_DEFAULT
spawn kr ip netns exec "$UB" ntpreflect "udp://$IPB:$port" 2>/dev/null
wait_until 5 udp_listening_in "$UB" "$port"

# mac= wins over the table, even over a permanent entry that is wrong.
ina ip neigh replace "$IPB" lladdr 02:00:00:00:00:99 nud permanent dev "$IFA"
n=$(ina ntpprobe -i 50ms -c 5 "uudp://$IPB:$port?dev=$IFA&mac=$MACB" 2>/dev/null | grep -Ec ' ok( |$)')
ok "mac= reaches the server past a wrong permanent entry ($n of 5)" test "$n" -ge 4
ok "and the permanent entry is left alone" \
	sh -c "ip -n '$UA' neigh show '$IPB' dev '$IFA' | grep -q '02:00:00:00:00:99 PERMANENT'"
ina ip neigh del "$IPB" dev "$IFA"
n=$(ina ntpprobe -i 50ms -c 3 "uudp://$IPB:$port?dev=$IFA&mac=02:00:00:00:00:99" 2>/dev/null |
	grep -Ec ' ok( |$)')
is "$n" 0 "a wrong mac= gets no replies: the override is used as given"

# A server off-link: the route's gateway is the next hop whose MAC is
# used (here the reference itself routes to an address on its loopback).
far=10.99.$((($$ % 200) + 20)).9
inb ip addr add "$far/32" dev lo
# The reference answers ARP only for its own interface's address, so
# asking ARP for the far address itself would fail.
inb sysctl -qw "net.ipv4.conf.$IFB.arp_ignore=1"
ina ip route add "$far/32" via "$IPB" dev "$IFA"
spawn fr ip netns exec "$UB" ntpreflect "udp://$far:$port" 2>/dev/null
wait_until 5 udp_listening_in "$UB" "$port"
n=$(ina ntpprobe -i 50ms -c 5 "uudp://$far:$port?dev=$IFA" 2>/dev/null | grep -Ec ' ok( |$)')
ok "a server behind a gateway is reached through the gateway's MAC ($n of 5)" test "$n" -ge 4
is "$(ip -n "$UA" neigh show "$far")" "" "no neighbour entry was sought for the far address"
kill "$fr"; wait "$fr" 2>/dev/null
wait_until 5 sh -c "! ip netns exec '$UB' ss -Hlun 'sport = :$port' | grep -q ."

# Without mac=, the open resolves through the kernel (which sends ARP).
ina ip neigh flush dev "$IFA"
spawn pr ip netns exec "$UA" ntpprobe -i 100ms -c 60 "uudp://$IPB:$port?dev=$IFA" \
	>"$TMP/rec" 2>"$TMP/pr.err"
oks_at_least() { test "$(count_status "$1" ok)" -ge "$2"; }
wait_until 10 oks_at_least "$TMP/rec" 10
ok "resolved by the kernel's neighbour table" \
	sh -c "ip -n '$UA' neigh show '$IPB' dev '$IFA' | grep -q '$MACB'"

# The server's NIC changes its MAC; the kernel of B sends no gratuitous
# ARP (arp_notify is off), so only re-resolution can find it.
before=$(data_lines "$TMP/rec" | wc -l)
newmac=02:00:00:$(od -An -N3 -tx1 /dev/urandom | sed 's/^ //; s/ /:/g')
ip -n "$UB" link set dev "$IFB" address "$newmac"
diag "MAC of $IPB changed to $newmac after record $before"
wait "$pr"
is "$?" 0 "ntpprobe ran through"
after=$(data_lines "$TMP/rec" | awk -v b="$before" 'NR > b')
# The longest run of records that are not ok, after the change.
diag "after the change: $(echo "$after" | awk '{ printf "%s ", $8 }')"
run=$(echo "$after" | awk '$8 != "ok" { r++; if (r > m) m = r; next } { r = 0 } END { print m + 0 }')
ok "resumed within miss limit + 2 intervals (longest gap: $run records)" \
	test "$run" -ge 1 -a "$run" -le $((miss_limit + 2))
ok "ok records again at the end" test "$(echo "$after" | tail -5 | grep -Ec ' ok( |$)')" = 5
ok "the new MAC is in the table" \
	sh -c "ip -n '$UA' neigh show '$IPB' dev '$IFA' | grep -q '$newmac'"
diag "$(tail -1 "$TMP/pr.err")"
ok "the probe was told once to start its filter afresh (#reset)" \
	test "$(grep -c '^#reset seq' "$TMP/rec")" = 1
ok "the transport counted the loss and a second resolution" \
	test "$(counter "$TMP/pr.err" losses)" -ge 1 -a "$(counter "$TMP/pr.err" resolutions)" -ge 2
done_testing
