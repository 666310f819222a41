#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over AF_XDP on a veth between two namespaces: a uudp client against
# a kernel-UDP ntpreflect, a kernel-UDP client against a uudp ntpreflect,
# uudp at both ends; ARP beside the XDP program; the program gone after
# exit and after SIGKILL; a stale program of ours replaced, anybody else's
# left alone; via=verbs without a device fails fast.
. "$(dirname "$0")/../lib.sh"
need_built xdp
. "$(dirname "$0")/uudp-lib.sh"
# Nothing on a veth loses a datagram by chance, so every exchange must be
# ok.  A reply can be late only by what a busy machine adds: the probes
# wait up to 5 s for each (-w 5s), a limit on a failure, as wait_until's
# are, not a bound on timing.
need_prereq LAB
need ntpprobe ntpreflect
test_lazy_prereq CLANG 'command -v clang'
test_lazy_prereq LOADGEN 'command -v loadgen'

port=12300

# A BPF object of $TMP/NAME.c into $TMP/NAME.o.
bpf_cc() { clang -O2 -g -target bpf -I/usr/include/"$(cc -print-multiarch)" -c -o "$2" "$1"; }
write_other_c() {
	printf '%s\n' '#include <linux/bpf.h>' '#include <bpf/bpf_helpers.h>' \
		'SEC("xdp") int other_prog(struct xdp_md *c) { return XDP_PASS; }' \
		'char _l[] SEC("license") = "GPL";' >"$1"
}
# What the kernel dropped on the way: the sink's namespace's UDP counters
# and both ends of the veth.
drops() { echo $(($(udp_drops "$UB") + $(link_drops "$UB" "$IFB") + $(link_drops "$UA" "$IFA"))); }
# loadgen's "sent N datagrams ...; sink received M ...": N - M <= D, what
# the kernel counted as dropped, M > 0.  Exact: nothing else loses a
# datagram.
sink_accounted() {	# D FILE
	awk -v d="$1" '/sink received/ { for (i = 1; i < NF; i++) { if ($i == "sent") s = $(i + 1);
		if ($i == "received") r = $(i + 1) } }
		END { exit !(s > 0 && r > 0 && s - r <= d) }' "$2"
}
# The replies loadgen --ntp got, from its summary FILE.
flood_replies() { awk '/ntp requests/ { for (i = 1; i < NF; i++) if ($i == "replies") print $(i + 1) }' "$1"; }
# The count in ntpreflect's "answered N" line of FILE.
answered() { sed -n 's/^ntpreflect: answered \([0-9]*\).*/\1/p' "$1"; }
# Exact: the server answered every request it accepted, and each of its
# replies reached loadgen or was counted by the client's kernel as
# dropped (a reply after loadgen closed its socket: NoPorts).
replies_accounted() { [ "$((${fq:-0} + $(udp_drops "$UA") - a0))" -ge "${fa:-1}" ]; }

test_expect_success 'setup: a lab of our own, its fast path between two namespaces' '
	uudp_lab
'

# 1. uudp client (xdp) -> kernel UDP server.
test_expect_success 'setup: a kernel-UDP ntpreflect in the reference namespace' '
	spawn kr ip netns exec "$UB" ntpreflect --stratum 1 "udp://$IPB:$port" 2>"$TMP/kr.err" &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

test_expect_success 'uudp client against kernel ntpreflect exits 0' '
	ina ntpprobe -i 50ms -w 5s -c 20 "uudp://$IPB:$port?dev=$IFA&via=xdp" >"$TMP/c1" 2>"$TMP/c1.err"
'

test_expect_success 'uudp client: every exchange ok' '
	test_is "$(count_status "$TMP/c1" ok)" 20
'

test_expect_success 'uudp client: one clock, |off2| <= delay on every ok record' '
	diag "median offset $(median_offset_us "$TMP/c1") us" &&
	one_clock "$TMP/c1"
'

test_expect_success 'uudp client: every reply passed the frame checks' '
	test "$(counter "$TMP/c1.err" rx_ok)" -ge "$(count_status "$TMP/c1" ok)"
'

test_expect_success "the client's XDP program left with the client" '
	test_is "$(xdp_prog "$UA" "$IFA")" ""
'

# Native (driver) XDP, which real NICs run, works on veth too, with copy.
test_expect_success 'xdpmode=native: driver-mode XDP with copy (10 of 10 ok)' '
	ina ntpprobe -i 50ms -w 5s -c 10 "uudp://$IPB:$port?dev=$IFA&xdpmode=native" >"$TMP/c1n" 2>"$TMP/c1n.err" &&
	test_is "$(count_status "$TMP/c1n" ok)" 10 &&
	test_grep "transport port=xdp mode=drv-copy " "$TMP/c1n.err"
'

test_expect_success 'xdpmode=zerocopy on veth (it has none) fails with status 1 and one line' '
	test_exit 1 ina ntpprobe -c 1 "uudp://$IPB:$port?dev=$IFA&xdpmode=zerocopy" >/dev/null 2>"$TMP/zc.err" &&
	test_is "$(wc -l <"$TMP/zc.err")" 1 &&
	test_grep zero-copy "$TMP/zc.err"
'

# 2. kernel UDP client -> uudp server.
test_expect_success 'setup: the kernel-UDP ntpreflect gone, a uudp one in its place' '
	stop_pid "$kr" &&
	spawn ur ip netns exec "$UB" ntpreflect --stratum 1 "uudp://*:$port?dev=$IFB" 2>"$TMP/ur.err" &&
	wait_until 5 udp_listening_in "$UB" "$port"
'

test_expect_success 'the server attached ntpx_xdp' '
	test_is "$(xdp_prog "$UB" "$IFB")" ntpx_xdp
'

test_expect_success 'one XDP program, not a stack' '
	test "$(ip -n "$UB" -d link show dev "$IFB" | grep -c "prog/xdp")" = 1
'

test_expect_success 'a second uudp endpoint on the interface is refused, in one line' '
	test_exit 1 inb ntpreflect "uudp://*:$((port + 2))?dev=$IFB" 2>"$TMP/second.err" &&
	test_is "$(wc -l <"$TMP/second.err")" 1 &&
	test_grep "in use by a running process" "$TMP/second.err"
'

test_expect_success 'kernel client against uudp ntpreflect: every exchange ok' '
	ina ntpprobe -i 50ms -w 5s -c 20 "udp://$IPB:$port" >"$TMP/c2" 2>/dev/null &&
	test_is "$(count_status "$TMP/c2" ok)" 20
'

test_expect_success 'kernel client: one clock, |off2| <= delay on every ok record' '
	diag "median offset $(median_offset_us "$TMP/c2") us" &&
	one_clock "$TMP/c2"
'

# 3. ARP stays with the kernel while the program is attached.
test_expect_success 'ARP and ICMP work beside the XDP program' '
	ina ip neigh flush dev "$IFA" &&
	inb ip neigh flush dev "$IFB" &&
	ina ping -c 1 -W 2 "$IPB" >/dev/null
'

test_expect_success "the kernel learnt the server's MAC by ARP" '
	ip -n "$UA" neigh show "$IPB" dev "$IFA" | grep -q "$MACB"
'

# 4. uudp at both ends.
test_expect_success 'uudp client against uudp ntpreflect: every exchange ok' '
	ina ntpprobe -i 50ms -w 5s -c 20 "uudp://$IPB:$port?dev=$IFA" >"$TMP/c3" 2>/dev/null &&
	test_is "$(count_status "$TMP/c3" ok)" 20
'

test_expect_success 'uudp ntpreflect exits 0 on SIGTERM' '
	kill -TERM "$ur" &&
	wait "$ur"
'

test_expect_success 'it answered all of them' '
	test_grep "^ntpreflect: answered 40" "$TMP/ur.err"
'

test_expect_success 'SIGTERM: the program is detached' '
	test_is "$(xdp_prog "$UB" "$IFB")" ""
'

# 5. SIGKILL: the link dies with the process; the next run attaches.
test_expect_success 'SIGKILL: no program left behind' '
	spawn k ip netns exec "$UB" ntpreflect --stratum 1 "uudp://*:$port?dev=$IFB" 2>/dev/null &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	stop_pid "$k" KILL &&
	test_is "$(xdp_prog "$UB" "$IFB")" ""
'

test_expect_success 'after SIGKILL the next run attaches and answers every exchange' '
	spawn ur2 ip netns exec "$UB" ntpreflect --stratum 1 "uudp://*:$port?dev=$IFB" 2>"$TMP/ur2.err" &&
	test_when_finished stop_pid "$ur2" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	n=$(probe_oks ina ntpprobe -i 50ms -w 5s -c 5 "udp://$IPB:$port") &&
	{ test_is "$n" 5 || { diag "$(cat "$TMP/ur2.err")" && false; }; }
'

# 6. A program of ours attached the old way (it outlives its process) is
#    replaced; somebody else's is left alone.
test_expect_success CLANG 'a stale ntpx_xdp attached by netlink, as if left behind' '
	bpf_cc "$NTPX_TOP/lib/bpf/ntpx_xdp.bpf.c" "$TMP/stale.o" &&
	inb ip link set dev "$IFB" xdpgeneric obj "$TMP/stale.o" sec xdp &&
	test_atexit ip -n "$UB" link set dev "$IFB" xdpgeneric off &&
	test_is "$(xdp_prog "$UB" "$IFB")" ntpx_xdp
'

test_expect_success CLANG 'a stale ntpx_xdp is replaced and the server answers every exchange' '
	spawn ur3 ip netns exec "$UB" ntpreflect --stratum 1 "uudp://*:$port?dev=$IFB" 2>"$TMP/ur3.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	test_is "$(probe_oks ina ntpprobe -i 50ms -w 5s -c 5 "udp://$IPB:$port")" 5
'

test_expect_success CLANG 'and nothing is left after exit' '
	stop_pid "$ur3" &&
	test_is "$(xdp_prog "$UB" "$IFB")" ""
'

test_expect_success CLANG 'another program attached: exit 1' '
	write_other_c "$TMP/other.c" &&
	bpf_cc "$TMP/other.c" "$TMP/other.o" &&
	inb ip link set dev "$IFB" xdpgeneric obj "$TMP/other.o" sec xdp &&
	test_exit 1 inb ntpreflect "uudp://*:$port?dev=$IFB" 2>"$TMP/ur4.err"
'

test_expect_success CLANG 'naming it, in one line' '
	test_is "$(wc -l <"$TMP/ur4.err")" 1 &&
	test_grep "another XDP program is attached ('\''other_prog'\''" "$TMP/ur4.err"
'

test_expect_success CLANG 'and it is left in place' '
	test_when_finished ip -n "$UB" link set dev "$IFB" xdpgeneric off &&
	test_is "$(xdp_prog "$UB" "$IFB")" other_prog
'

# 7. Nobody listens: the server's ICMP port unreachable shows as refused,
#    sleeping and spinning.
for mode in block busy; do
	test_expect_success "no server, --poll $mode: refused records" '
		test_exit 1 ina ntpprobe --poll $mode -i 50ms -c 3 "uudp://$IPB:$((port + 1))?dev=$IFA" >"$TMP/r.$mode" 2>/dev/null &&
		test_is "$(count_status "$TMP/r.$mode" refused)" 3
	'
done

# 8. loadgen: bulk traffic over uudp to a kernel sink, and an NTP request
#    flood against a uudp ntpreflect.
test_expect_success LOADGEN 'loadgen over uudp: the sink received what was sent, less what the kernel dropped' '
	lport=$((port + 3)) &&
	spawn sink ip netns exec "$UB" loadgen --sink "udp://$IPB:$lport" >/dev/null 2>&1 &&
	test_when_finished stop_pid "$sink" &&
	wait_until 5 udp_listening_in "$UB" "$lport" &&
	d0=$(drops) &&
	ina loadgen -d 1s -r 20M --no-gso "uudp://$IPB:$lport?dev=$IFA" >/dev/null 2>"$TMP/lg.err" &&
	d=$(($(drops) - d0)) &&
	diag "$(cat "$TMP/lg.err"); kernel dropped $d" &&
	sink_accounted "$d" "$TMP/lg.err"
'

test_expect_success LOADGEN "an NTP flood against a uudp ntpreflect is answered: every request accepted, answered, and every reply reached loadgen or the kernel's drop counters" '
	spawn ur5 ip netns exec "$UB" ntpreflect --stratum 1 "uudp://*:$port?dev=$IFB" 2>"$TMP/ur5.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	a0=$(udp_drops "$UA") &&
	ina loadgen -d 1s --ntp 2k "udp://$IPB:$port" >/dev/null 2>"$TMP/fl.err" &&
	stop_pid "$ur5" &&
	diag "$(cat "$TMP/fl.err")" &&
	diag "uudp server: $(grep -v transport "$TMP/ur5.err") $(counter "$TMP/ur5.err" rx_ok) accepted" &&
	fq=$(flood_replies "$TMP/fl.err") &&
	fa=$(answered "$TMP/ur5.err") &&
	diag "answered ${fa:-none} of $(counter "$TMP/ur5.err" rx_ok) accepted; replies at loadgen ${fq:-none}" &&
	{ wait_until 5 replies_accounted || :; } &&
	test "${fa:-0}" -gt 0 &&
	test "$fa" = "$(counter "$TMP/ur5.err" rx_ok)" &&
	replies_accounted
'

# 9. via=verbs on veth: one clear line, at once.
test_expect_success 'via=verbs without an RDMA device fails with status 1 and one line' '
	test_exit 1 ina ntpprobe -c 1 "uudp://$IPB:$port?dev=$IFA&via=verbs" >/dev/null 2>"$TMP/v.err" &&
	diag "$(cat "$TMP/v.err")" &&
	test_is "$(wc -l <"$TMP/v.err")" 1 &&
	test_grep "no RDMA device" "$TMP/v.err"
'
done_testing
