#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over AF_XDP on a veth between two namespaces: a uudp client against
# a kernel-UDP ntpreflect, a kernel-UDP client against a uudp ntpreflect,
# uudp at both ends; ARP beside the XDP program; the program gone after
# exit and after SIGKILL; a stale program of ours replaced, anybody else's
# left alone; via=verbs without a device fails fast.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
# Nothing on a veth loses a datagram by chance, so every exchange must be
# ok.  A reply can be late only by what a busy machine adds: the probes
# wait up to 5 s for each (-w 5s), a limit on a failure, as wait_until's
# are, not a bound on timing.
need ntpprobe ntpreflect
uudp_lab

port=12300
log() { cat "$TMP/$1"; }

# 1. uudp client (xdp) -> kernel UDP server.
spawn kr ip netns exec "$UB" ntpreflect "udp://$IPB:$port" 2>"$TMP/kr.err"
wait_until 5 udp_listening_in "$UB" "$port"
ina ntpprobe -i 50ms -w 5s -c 20 "uudp://$IPB:$port?dev=$IFA&via=xdp" >"$TMP/c1" 2>"$TMP/c1.err"
is "$?" 0 "uudp client against kernel ntpreflect exits 0"
n=$(count_status "$TMP/c1" ok)
is "$n" 20 "uudp client: every exchange ok"
ok "uudp client: one clock, |off2| <= delay on every ok record (median offset $(median_offset_us "$TMP/c1") us)" \
	one_clock "$TMP/c1"
ok "uudp client: every reply passed the frame checks" \
	test "$(counter "$TMP/c1.err" rx_ok)" -ge "$n"
is "$(xdp_prog "$UA" "$IFA")" "" "the client's XDP program left with the client"
# Native (driver) XDP, which real NICs run, works on veth too, with copy.
ina ntpprobe -i 50ms -w 5s -c 10 "uudp://$IPB:$port?dev=$IFA&xdpmode=native" >"$TMP/c1n" 2>"$TMP/c1n.err"
n=$(count_status "$TMP/c1n" ok)
ok "xdpmode=native: driver-mode XDP with copy ($n of 10 ok)" \
	sh -c "test $n = 10 && grep -q 'transport port=xdp mode=drv-copy ' '$TMP/c1n.err'"
ina ntpprobe -c 1 "uudp://$IPB:$port?dev=$IFA&xdpmode=zerocopy" >/dev/null 2>"$TMP/zc.err"
rc=$?
ok "xdpmode=zerocopy on veth (it has none) fails with status 1 and one line" \
	sh -c "test $rc = 1 && test \$(wc -l <'$TMP/zc.err') = 1 && grep -q 'zero-copy' '$TMP/zc.err'"
kill "$kr"; wait "$kr" 2>/dev/null

# 2. kernel UDP client -> uudp server.
spawn ur ip netns exec "$UB" ntpreflect "uudp://*:$port?dev=$IFB" 2>"$TMP/ur.err"
wait_until 5 udp_listening_in "$UB" "$port"
is "$(xdp_prog "$UB" "$IFB")" "ntpx_xdp" "the server attached ntpx_xdp"
ok "one XDP program, not a stack" test "$(ip -n "$UB" -d link show dev "$IFB" | grep -c 'prog/xdp')" = 1
inb ntpreflect "uudp://*:$((port + 2))?dev=$IFB" 2>"$TMP/second.err"
rc=$?
ok "a second uudp endpoint on the interface is refused, in one line" \
	sh -c "test $rc = 1 && test \$(wc -l <'$TMP/second.err') = 1 &&
		grep -q 'in use by a running process' '$TMP/second.err'"
ina ntpprobe -i 50ms -w 5s -c 20 "udp://$IPB:$port" >"$TMP/c2" 2>/dev/null
n=$(count_status "$TMP/c2" ok)
is "$n" 20 "kernel client against uudp ntpreflect: every exchange ok"
ok "kernel client: one clock, |off2| <= delay on every ok record (median offset $(median_offset_us "$TMP/c2") us)" \
	one_clock "$TMP/c2"

# 3. ARP stays with the kernel while the program is attached.
ina ip neigh flush dev "$IFA"
inb ip neigh flush dev "$IFB"
ok "ARP and ICMP work beside the XDP program" ina ping -c 1 -W 2 "$IPB"
ok "the kernel learnt the server's MAC by ARP" \
	sh -c "ip -n '$UA' neigh show '$IPB' dev '$IFA' | grep -q '$MACB'"

# 4. uudp at both ends.
ina ntpprobe -i 50ms -w 5s -c 20 "uudp://$IPB:$port?dev=$IFA" >"$TMP/c3" 2>/dev/null
n=$(count_status "$TMP/c3" ok)
is "$n" 20 "uudp client against uudp ntpreflect: every exchange ok"

kill -TERM "$ur"; wait "$ur"
is "$?" 0 "uudp ntpreflect exits 0 on SIGTERM"
ok "it answered all of them" grep -q '^ntpreflect: answered 40' "$TMP/ur.err"
is "$(xdp_prog "$UB" "$IFB")" "" "SIGTERM: the program is detached"

# 5. SIGKILL: the link dies with the process; the next run attaches.
ip netns exec "$UB" ntpreflect "uudp://*:$port?dev=$IFB" 2>/dev/null &
k=$!
cleanup "kill -9 $k"
wait_until 5 udp_listening_in "$UB" "$port"
kill -9 "$k"; wait "$k" 2>/dev/null
is "$(xdp_prog "$UB" "$IFB")" "" "SIGKILL: no program left behind"
spawn ur2 ip netns exec "$UB" ntpreflect "uudp://*:$port?dev=$IFB" 2>"$TMP/ur2.err"
wait_until 5 udp_listening_in "$UB" "$port"
n=$(ina ntpprobe -i 50ms -w 5s -c 5 "udp://$IPB:$port" 2>/dev/null | grep -Ec ' ok( |$)')
is "$n" 5 "after SIGKILL the next run attaches and answers every exchange"
[ "$n" = 5 ] || diag "$(cat "$TMP/ur2.err")"
kill "$ur2"; wait "$ur2" 2>/dev/null

# 6. A program of ours attached the old way (it outlives its process) is
#    replaced; somebody else's is left alone.
if command -v clang >/dev/null; then
	clang -O2 -g -target bpf -I/usr/include/$(cc -print-multiarch) \
		-c -o "$TMP/stale.o" "$NTPX_TOP/lib/bpf/ntpx_xdp.bpf.c"
	inb ip link set dev "$IFB" xdpgeneric obj "$TMP/stale.o" sec xdp
	cleanup ip -n "$UB" link set dev "$IFB" xdpgeneric off
	is "$(xdp_prog "$UB" "$IFB")" "ntpx_xdp" "a stale ntpx_xdp attached by netlink, as if left behind"
	spawn ur3 ip netns exec "$UB" ntpreflect "uudp://*:$port?dev=$IFB" 2>"$TMP/ur3.err"
	wait_until 5 udp_listening_in "$UB" "$port"
	n=$(ina ntpprobe -i 50ms -w 5s -c 5 "udp://$IPB:$port" 2>/dev/null | grep -Ec ' ok( |$)')
	is "$n" 5 "a stale ntpx_xdp is replaced and the server answers every exchange"
	kill "$ur3"; wait "$ur3" 2>/dev/null
	is "$(xdp_prog "$UB" "$IFB")" "" "and nothing is left after exit"

	printf '%s\n' '#include <linux/bpf.h>' '#include <bpf/bpf_helpers.h>' \
		'SEC("xdp") int other_prog(struct xdp_md *c) { return XDP_PASS; }' \
		'char _l[] SEC("license") = "GPL";' >"$TMP/other.c"
	clang -O2 -g -target bpf -I/usr/include/$(cc -print-multiarch) -c -o "$TMP/other.o" "$TMP/other.c"
	inb ip link set dev "$IFB" xdpgeneric obj "$TMP/other.o" sec xdp
	inb ntpreflect "uudp://*:$port?dev=$IFB" 2>"$TMP/ur4.err"
	is "$?" 1 "another program attached: exit 1"
	ok "naming it, in one line" sh -c "test \$(wc -l <'$TMP/ur4.err') = 1 &&
		grep -q \"another XDP program is attached ('other_prog'\" '$TMP/ur4.err'"
	is "$(xdp_prog "$UB" "$IFB")" "other_prog" "and it is left in place"
	ip -n "$UB" link set dev "$IFB" xdpgeneric off
else
	for t in 1 2 3 4 5 6; do skip "stale and foreign XDP programs" "missing clang"; done
fi

# 7. Nobody listens: the server's ICMP port unreachable shows as refused,
#    sleeping and spinning.
for mode in block busy; do
	ina ntpprobe --poll $mode -i 50ms -c 3 "uudp://$IPB:$((port + 1))?dev=$IFA" >"$TMP/r.$mode" 2>/dev/null
	is "$(count_status "$TMP/r.$mode" refused)" 3 "no server, --poll $mode: refused records"
done

# 8. loadgen: bulk traffic over uudp to a kernel sink, and an NTP request
#    flood against a uudp ntpreflect.
if command -v loadgen >/dev/null; then
	lport=$((port + 3))
	spawn sink ip netns exec "$UB" loadgen --sink "udp://$IPB:$lport" >/dev/null 2>&1
	wait_until 5 udp_listening_in "$UB" "$lport"
	# What the kernel dropped on the way: the sink's namespace's UDP
	# counters and both ends of the veth.
	drops() { echo $(($(udp_drops "$UB") + $(link_drops "$UB" "$IFB") + $(link_drops "$UA" "$IFA"))); }
	d0=$(drops)
	ina loadgen -d 1s -r 20M --no-gso "uudp://$IPB:$lport?dev=$IFA" >/dev/null 2>"$TMP/lg.err"
	d=$(($(drops) - d0))
	diag "$(cat "$TMP/lg.err"); kernel dropped $d"
	# sent N datagrams ...; sink received M ...: N - M <= what the kernel
	# counted as dropped, M > 0.  Exact: nothing else loses a datagram.
	ok "loadgen over uudp: the sink received what was sent, less what the kernel dropped ($d)" \
		awk -v d="$d" '/sink received/ { for (i = 1; i < NF; i++) { if ($i == "sent") s = $(i + 1);
			if ($i == "received") r = $(i + 1) } }
			END { exit !(s > 0 && r > 0 && s - r <= d) }' "$TMP/lg.err"
	kill "$sink"; wait "$sink" 2>/dev/null
	spawn ur5 ip netns exec "$UB" ntpreflect "uudp://*:$port?dev=$IFB" 2>"$TMP/ur5.err"
	wait_until 5 udp_listening_in "$UB" "$port"
	a0=$(udp_drops "$UA")
	ina loadgen -d 1s --ntp 2k "udp://$IPB:$port" >/dev/null 2>"$TMP/fl.err"
	kill "$ur5"; wait "$ur5" 2>/dev/null
	diag "$(cat "$TMP/fl.err")"
	diag "uudp server: $(grep -v transport "$TMP/ur5.err") $(counter "$TMP/ur5.err" rx_ok) accepted"
	fq=$(awk '/ntp requests/ { for (i = 1; i < NF; i++) if ($i == "replies") print $(i + 1) }' "$TMP/fl.err")
	fa=$(sed -n 's/^ntpreflect: answered \([0-9]*\).*/\1/p' "$TMP/ur5.err")
	# Exact: the server answered every request it accepted, and each of its
	# replies reached loadgen or was counted by the client's kernel as
	# dropped (a reply after loadgen closed its socket: NoPorts).
	replies_accounted() { [ "$((${fq:-0} + $(udp_drops "$UA") - a0))" -ge "${fa:-1}" ]; }
	wait_until 5 replies_accounted
	ok "an NTP flood against a uudp ntpreflect is answered: every request accepted, answered (${fa:-none} of $(counter "$TMP/ur5.err" rx_ok)), and every reply reached loadgen (${fq:-none}) or the kernel's drop counters" \
		eval 'test "${fa:-0}" -gt 0 && test "$fa" = "$(counter "$TMP/ur5.err" rx_ok)" && replies_accounted'
else
	skip "loadgen over uudp" "no loadgen"
	skip "NTP flood against uudp" "no loadgen"
fi

# 9. via=verbs on veth: one clear line, at once.
ina ntpprobe -c 1 "uudp://$IPB:$port?dev=$IFA&via=verbs" >/dev/null 2>"$TMP/v.err"
rc=$?
ok "via=verbs without an RDMA device fails with status 1 and one line" \
	sh -c "test $rc = 1 && test \$(wc -l <'$TMP/v.err') = 1 && grep -q 'no RDMA device' '$TMP/v.err'"
diag "$(cat "$TMP/v.err")"
done_testing
