#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect under attack.  Garbage at the highest rate a sender here can
# produce (random bytes, short datagrams, mode 6 and 7 queries, bad
# versions and modes, truncated and malformed requests; over uudp, bad
# frames) while a 100 Hz probe from an allowed client goes on:
#   - the probe is answered throughout the flood, and every request of
#     its that went unanswered is one the kernel counted as dropped before
#     the server could read it (a full socket buffer, or a full AF_XDP
#     ring): what the server drops or never answers would fail this;
#   - the reflector's memory stays flat;
#   - no reply is larger than the request it answers;
#   - the counters name each kind of ignored datagram.
# How many requests the kernel drops is how fast this machine floods
# against how fast it drains, which is no property of the server and
# no bound of a test; how much the flood delays the probe is a speed
# figure, in tests/bench.  Kernel UDP runs on the loopback of a namespace
# of the test's own, so that /proc/net/snmp counts only its datagrams.
# The probe waits up to 200 ms for a reply, so that a late wake-up on
# this shared machine is a long delay, not a loss.
# The flooders run at nice 19: on this 2-core machine a flooder at normal
# priority takes the probe's own CPU too.  nice 19 still gives them every
# cycle the measured processes leave.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need ntpprobe ntpreflect
GARBAGE=$NTPX_HELPERS/garbage
INJECT=$NTPX_HELPERS/frameinject
test_lazy_prereq ATTACK_HELPERS '[ -x "$GARBAGE" ] && [ -x "$INJECT" ]'
need_prereq ATTACK_HELPERS
need_prereq ROOT

rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
data_count() { data_lines "$1" | wc -l; }
summary_value() { sed -n "s/^\(.* \)\{0,1\}$2 \([0-9]*\).*/\2/p" "$1" | head -n 1; }
# The count after KIND in a reflector's summary FILE.
kind_count() { sed -n "s/.*[ ,]$2 \([0-9]*\).*/\1/p" "$1"; }
# The number after KEY in ntpprobe's summary FILE ("sent 400, ok 398, ..."),
# 0 when it is not there (late is printed only when there were some).
probe_count() { sed -n "s/.*[ :]$2 \([0-9]*\).*/\1/p" "$1" | head -n 1 | grep . || echo 0; }
# Datagrams the kernel of namespace NS could not deliver to a socket.
kdrops() { eval "$(udp_mib "$1")" && echo "$inerr"; }
# Every second of FILE's run (from its first T1) has an ok record.
answered_throughout() {
	rec_cols "$1" t1 status | awk '
		NR == 1 { t0 = $1 }
		{ s = int(($1 - t0) / 1e9); if (s > last) last = s; if ($2 == "ok") ok[s] = 1 }
		END { for (i = 0; i <= last; i++) if (!ok[i]) { print "no ok record in second " i; exit 1 }
			exit !(NR > 0) }'
}
# The probe's requests that got no answer (sent less ok and late, from its
# summary ERR) are no more than DROPS, what the kernel dropped meanwhile.
unanswered_dropped() {
	sent=$(probe_count "$1" sent) ok=$(probe_count "$1" ok) late=$(probe_count "$1" late) &&
	diag "probe: $ok of $sent ok, $late late; the kernel dropped $2 datagrams meanwhile" &&
	test "$sent" -gt 0 &&
	test $((sent - ok - late)) -le "$2"
}
rss_flat() {
	diag "${rss0} KiB, ${rss1} KiB during, ${rss2} KiB after"
	test "$rss1" -le $((rss0 + 256)) -a "$rss2" -le $((rss0 + 256))
}

# ---- 1. Kernel UDP on the loopback of a namespace of our own: 127.0.0.2
# probes, 127.0.0.3 floods, both allowed; 127.0.0.4 floods from outside
# --allow.
inns() { ip netns exec "$ns" "$@"; }
test_expect_success 'setup: a namespace of our own, its loopback up' '
	ns=$(uniq_name at) &&
	ip netns add "$ns" &&
	test_atexit "ip netns del $ns" &&
	inns ip link set lo up
'

test_expect_success 'setup: a reflector allowing 127.0.0.2 and .3, probed idle from 127.0.0.2' '
	port=12300 &&
	spawn REFLECT_PID ip netns exec "$ns" ntpreflect --stratum 1 --allow 127.0.0.2 --allow 127.0.0.3 \
		"udp://127.0.0.1:$port" 2>"$TMP/reflect.err" &&
	wait_until 5 udp_listening_in "$ns" "$port" &&
	inns ntpprobe -i 10ms -w 200ms -d 3s "udp://127.0.0.1:$port?src=127.0.0.2" >"$TMP/idle.rec" 2>"$TMP/idle.err" &&
	rss0=$(rss_kb "$REFLECT_PID")
'

test_expect_success 'setup: the probe again, under garbage from 127.0.0.3 and 127.0.0.4' '
	d0=$(kdrops "$ns") &&
	spawn G1 ip netns exec "$ns" nice -n 19 "$GARBAGE" 127.0.0.1 "$port" 6 127.0.0.3 >"$TMP/g1.out" &&
	spawn G2 ip netns exec "$ns" nice -n 19 "$GARBAGE" 127.0.0.1 "$port" 6 127.0.0.4 >"$TMP/g2.out" &&
	inns ntpprobe -i 10ms -w 200ms -d 4s "udp://127.0.0.1:$port?src=127.0.0.2" >"$TMP/flood.rec" 2>"$TMP/flood.err" &&
	rss1=$(rss_kb "$REFLECT_PID") &&
	wait "$G1" && wait "$G2" &&
	wait_until 5 drained "$ns" "$port" &&
	d1=$(kdrops "$ns") &&
	rss2=$(rss_kb "$REFLECT_PID") &&
	stop_pid "$REFLECT_PID" &&
	eval "$(udp_mib "$ns")" &&
	diag "flooders: $(cat "$TMP/g1.out") / $(cat "$TMP/g2.out")" &&
	diag "reflector: $(cat "$TMP/reflect.err")"
'

test_expect_success 'the flooders sent garbage' '
	sent=$(($(summary_value "$TMP/g1.out" sent) + $(summary_value "$TMP/g2.out" sent))) &&
	diag "$sent datagrams, $((sent / 6)) a second" &&
	test "$sent" -gt 0
'

test_expect_success 'under the flood the probe is answered every second' '
	answered_throughout "$TMP/flood.rec"
'

test_expect_success 'every probe request left unanswered was dropped by the kernel' '
	unanswered_dropped "$TMP/flood.err" $((d1 - d0))
'

# The namespace's whole life, exactly: every datagram a socket in it read
# (the reflector's, the probe's replies, g1's and g2's replies) and every
# one it could not deliver.  A reflector that read a request and neither
# answered it nor counted why fails the first.
test_expect_success 'setup: the counts of every datagram sent and read in the namespace' '
	reads=$(reflector_reads "$TMP/reflect.err") &&
	answered=$(sed -n "1s/.*answered \([0-9]*\).*/\1/p" "$TMP/reflect.err") &&
	sent=$(($(summary_value "$TMP/g1.out" sent) + $(summary_value "$TMP/g2.out" sent) +
		$(probe_count "$TMP/idle.err" sent) + $(probe_count "$TMP/flood.err" sent))) &&
	replies=$(($(probe_count "$TMP/idle.err" ok) + $(probe_count "$TMP/idle.err" late) +
		$(probe_count "$TMP/flood.err" ok) + $(probe_count "$TMP/flood.err" late) +
		$(summary_value "$TMP/g1.out" replies) + $(summary_value "$TMP/g2.out" replies))) &&
	diag "sent to the reflector $sent, it read $reads and answered $answered;" \
		"replies read $replies; the kernel: read $in, not delivered $inerr, no port $noports"
'

test_expect_success 'the reflector answered or counted every datagram it read' '
	test "$in" -eq $((reads + replies))
'

test_expect_success 'what it did not read, the kernel dropped' '
	test "$reads" -le "$sent" &&
	test $((sent - reads)) -le "$inerr"
'

test_expect_success 'every reply it sent was read, or dropped by the kernel' '
	test "$replies" -le "$answered" &&
	test $((answered - replies)) -le $((inerr - (sent - reads) + noports))
'

test_expect_success 'the reflector'\''s RSS is flat' '
	rss_flat
'

for g in g1 g2; do
	test_expect_success "$g: no reply larger than the datagram it answers" '
		test_is "$(summary_value "$TMP/$g.out" larger)" 0
	'

	test_expect_success "$g: no reply that answers nothing sent" '
		test_is "$(summary_value "$TMP/$g.out" unmatched)" 0
	'
done

test_expect_success 'nothing answered outside --allow' '
	test_is "$(summary_value "$TMP/g2.out" replies)" 0
'

for kind in short truncated malformed version control private mode denied; do
	test_expect_success "the counters name '$kind'" '
		c=$(kind_count "$TMP/reflect.err" "$kind") &&
		diag "$kind ${c:-none}" &&
		test "${c:-0}" -gt 0
	'
done

# ---- 2. uudp: bad frames put on the reflector's link by the client side.
test_expect_success LAB,XDP 'setup: a lab of our own, a uudp reflector on its fast path, probed idle' '
	uudp_lab &&
	test -n "$MACB" &&
	port=12300 &&
	spawn U ip netns exec "$UB" ntpreflect --stratum 1 "uudp://$IPB:$port?dev=$IFB" 2>"$TMP/u.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	ina ping -c 1 -W 2 "$IPB" >/dev/null &&
	ina ntpprobe -i 10ms -w 200ms -d 3s "udp://$IPB:$port" >"$TMP/uidle.rec" 2>/dev/null &&
	rss0=$(rss_kb "$U")
'

test_expect_success LAB,XDP 'setup: the probe again, under bad frames from the client side' '
	frames="ip_csum udp_csum fragment ip_length udp_length dst_ip dst_mac ip_version control private version mode" &&
	spawn F ip netns exec "$UA" nice -n 19 "$INJECT" -d 6 "$IFA" "$MACB" "$IPA" "$IPB" "$port" 40000 $frames >"$TMP/f.out" &&
	c0=$(udp_drops "$UA") &&
	ina ntpprobe -i 10ms -w 200ms -d 4s "udp://$IPB:$port" >"$TMP/uflood.rec" 2>"$TMP/uflood.err" &&
	rss1=$(rss_kb "$U") &&
	wait "$F" &&
	c1=$(udp_drops "$UA") &&
	rss2=$(rss_kb "$U") &&
	stop_pid "$U" &&
	diag "frameinject: $(cat "$TMP/f.out")" &&
	diag "reflector: $(cat "$TMP/u.err")"
'

test_expect_success LAB,XDP 'frameinject flooded' '
	diag "$(summary_value "$TMP/f.out" sent) frames" &&
	test "$(summary_value "$TMP/f.out" sent)" -gt 0
'

test_expect_success LAB,XDP 'uudp: under the flood the probe is answered every second' '
	answered_throughout "$TMP/uflood.rec"
'

# The reflector's socket counts what its rings could not take
# (xsk_rx_dropped, XDP_STATISTICS); the client's kernel, replies it
# dropped.  Both runs of the probe go to the same socket, so its count
# covers the idle run too.
test_expect_success LAB,XDP 'uudp: every probe request left unanswered was dropped by a ring or the kernel' '
	xd=$(counter "$TMP/u.err" xsk_rx_dropped) &&
	test -n "$xd" &&
	unanswered_dropped "$TMP/uflood.err" $((xd + c1 - c0))
'

test_expect_success LAB,XDP 'uudp: the reflector'\''s RSS is flat' '
	rss_flat
'

# Not one bad frame answered: every answer went to the probe.
test_expect_success LAB,XDP 'uudp: answered only the probe' '
	ans=$(sed -n "s/.*answered \([0-9]*\).*/\1/p" "$TMP/u.err") &&
	probes=$(($(data_count "$TMP/uidle.rec") + $(data_count "$TMP/uflood.rec"))) &&
	diag "$ans answers, $probes requests" &&
	is_num "$ans" &&
	test "$ans" -le "$probes"
'

for r in ip_csum udp_csum fragment ip_length udp_length dst_ip dst_mac ip_version; do
	test_expect_success LAB,XDP "uudp: the counters name rx_$r" '
		diag "rx_$r $(counter "$TMP/u.err" "rx_$r")" &&
		test "$(counter "$TMP/u.err" "rx_$r")" -gt 0
	'
done

for kind in version control private mode; do
	test_expect_success LAB,XDP "uudp: the counters name '$kind'" '
		c=$(kind_count "$TMP/u.err" "$kind") &&
		diag "$kind ${c:-none}" &&
		test "${c:-0}" -gt 0
	'
done
done_testing
