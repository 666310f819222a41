#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect under attack.  Garbage at the highest rate a sender here can
# produce (random bytes, short datagrams, mode 6 and 7 queries, bad
# versions and modes, truncated and malformed requests; over uudp, bad
# frames) while a 100 Hz probe from an allowed client goes on:
#   - the probe keeps >= 99% of its exchanges ok, with a median delay
#     within twice the idle one, measured in the same run just before;
#   - the reflector's memory stays flat;
#   - no reply is larger than the request it answers;
#   - the counters name each kind of ignored datagram.
# The probe waits up to 200 ms for a reply, so that a late wake-up on
# this shared machine is a long delay, not a loss: only what the server
# drops or never answers counts against the 99%.
# The flooders run at nice 19: on this 2-core machine a flooder at normal
# priority takes the probe's own CPU too, and then the client's wake-up is
# measured, not the server.  nice 19 still gives them every cycle the
# measured processes leave.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/uudp-lib.sh"
need ntpprobe ntpreflect
GARBAGE=$NTPX_HELPERS/garbage
INJECT=$NTPX_HELPERS/frameinject
test_lazy_prereq ATTACK_HELPERS '[ -x "$GARBAGE" ] && [ -x "$INJECT" ]'
need_prereq ATTACK_HELPERS
need_prereq ROOT

rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
# The median delay (ns) of FILE's ok records.
median_delay() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { print field("delay") }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
# "N of M ok" is at least 99%.
ok99() { [ "$2" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]; }
data_count() { data_lines "$1" | wc -l; }
field() { sed -n "s/^\(.* \)\{0,1\}$2 \([0-9]*\).*/\2/p" "$1" | head -n 1; }
# The count after KIND in a reflector's summary FILE.
kind_count() { sed -n "s/.*[ ,]$2 \([0-9]*\).*/\1/p" "$1"; }
reap() { wait "$1" 2>/dev/null; return 0; }
stop() { kill "$1"; wait "$1" 2>/dev/null; return 0; }
# FILE's ok records, of how many; at least 99% ok.
kept99() {
	n=$(data_count "$1") &&
	k=$(count_status "$1" ok) &&
	diag "$k of $n ok" &&
	ok99 "$k" "$n"
}
# The median delay of FILE (under the flood) within twice that of IDLE.
within_2x_idle() {
	idle=$(median_delay "$2")
	busy=$(median_delay "$1")
	diag "$busy ns vs $idle ns idle"
	test -n "$busy" -a -n "$idle" -a "${busy:-0}" -le $((${idle:-0} * 2))
}
rss_flat() {
	diag "${rss0} KiB, ${rss1} KiB during, ${rss2} KiB after"
	test "$rss1" -le $((rss0 + 256)) -a "$rss2" -le $((rss0 + 256))
}

# ---- 1. Kernel UDP on loopback: 127.0.0.2 probes, 127.0.0.3 floods,
# both allowed; 127.0.0.4 floods from outside --allow.
test_expect_success 'setup: a reflector allowing 127.0.0.2 and .3, probed idle from 127.0.0.2' '
	start_reflector --allow 127.0.0.2 --allow 127.0.0.3 &&
	ntpprobe -i 10ms -w 200ms -d 3s "udp://127.0.0.1:$REFLECT_PORT?src=127.0.0.2" >"$TMP/idle.rec" 2>/dev/null &&
	rss0=$(rss_kb "$REFLECT_PID")
'

test_expect_success 'setup: the probe again, under garbage from 127.0.0.3 and 127.0.0.4' '
	spawn G1 nice -n 19 "$GARBAGE" 127.0.0.1 "$REFLECT_PORT" 6 127.0.0.3 >"$TMP/g1.out" &&
	spawn G2 nice -n 19 "$GARBAGE" 127.0.0.1 "$REFLECT_PORT" 6 127.0.0.4 >"$TMP/g2.out" &&
	ntpprobe -i 10ms -w 200ms -d 4s "udp://127.0.0.1:$REFLECT_PORT?src=127.0.0.2" >"$TMP/flood.rec" 2>/dev/null &&
	rss1=$(rss_kb "$REFLECT_PID") &&
	reap "$G1" && reap "$G2" &&
	rss2=$(rss_kb "$REFLECT_PID") &&
	stop "$REFLECT_PID" &&
	diag "flooders: $(cat "$TMP/g1.out") / $(cat "$TMP/g2.out")" &&
	diag "reflector: $(cat "$TMP/reflect.err")"
'

test_expect_success 'the flooders sent garbage' '
	sent=$(($(field "$TMP/g1.out" sent) + $(field "$TMP/g2.out" sent))) &&
	diag "$sent datagrams, $((sent / 6)) a second" &&
	test "$sent" -gt 0
'

test_expect_success 'under the flood the probe keeps >= 99% ok' '
	kept99 "$TMP/flood.rec"
'

test_expect_success 'median delay within 2x idle' '
	within_2x_idle "$TMP/flood.rec" "$TMP/idle.rec"
'

test_expect_success 'the reflector'\''s RSS is flat' '
	rss_flat
'

for g in g1 g2; do
	test_expect_success "$g: no reply larger than the datagram it answers" '
		test_is "$(field "$TMP/$g.out" larger)" 0
	'

	test_expect_success "$g: no reply that answers nothing sent" '
		test_is "$(field "$TMP/$g.out" unmatched)" 0
	'
done

test_expect_success 'nothing answered outside --allow' '
	test_is "$(field "$TMP/g2.out" replies)" 0
'

for kind in short truncated malformed version control private mode denied; do
	test_expect_success "the counters name '$kind'" '
		c=$(kind_count "$TMP/reflect.err" "$kind") &&
		diag "$kind ${c:-none}" &&
		test "${c:-0}" -gt 0
	'
done

# ---- 2. uudp: bad frames put on the reflector's link by the client side.
test_expect_success LAB 'setup: a lab of our own, a uudp reflector on its fast path, probed idle' '
	uudp_lab &&
	test -n "$MACB" &&
	port=12300 &&
	spawn U ip netns exec "$UB" ntpreflect "uudp://$IPB:$port?dev=$IFB" 2>"$TMP/u.err" &&
	wait_until 5 udp_listening_in "$UB" "$port" &&
	ina ping -c 1 -W 2 "$IPB" >/dev/null &&
	ina ntpprobe -i 10ms -w 200ms -d 3s "udp://$IPB:$port" >"$TMP/uidle.rec" 2>/dev/null &&
	rss0=$(rss_kb "$U")
'

test_expect_success LAB 'setup: the probe again, under bad frames from the client side' '
	frames="ip_csum udp_csum fragment ip_length udp_length dst_ip dst_mac ip_version control private version mode" &&
	spawn F ip netns exec "$UA" nice -n 19 "$INJECT" -d 6 "$IFA" "$MACB" "$IPA" "$IPB" "$port" 40000 $frames >"$TMP/f.out" &&
	ina ntpprobe -i 10ms -w 200ms -d 4s "udp://$IPB:$port" >"$TMP/uflood.rec" 2>/dev/null &&
	rss1=$(rss_kb "$U") &&
	reap "$F" &&
	rss2=$(rss_kb "$U") &&
	stop "$U" &&
	diag "frameinject: $(cat "$TMP/f.out")" &&
	diag "reflector: $(cat "$TMP/u.err")"
'

test_expect_success LAB 'frameinject flooded' '
	diag "$(field "$TMP/f.out" sent) frames" &&
	test "$(field "$TMP/f.out" sent)" -gt 0
'

test_expect_success LAB 'uudp: under the flood the probe keeps >= 99% ok' '
	kept99 "$TMP/uflood.rec"
'

test_expect_success LAB 'uudp: median delay within 2x idle' '
	within_2x_idle "$TMP/uflood.rec" "$TMP/uidle.rec"
'

test_expect_success LAB 'uudp: the reflector'\''s RSS is flat' '
	rss_flat
'

# Not one bad frame answered: every answer went to the probe.
test_expect_success LAB 'uudp: answered only the probe' '
	ans=$(sed -n "s/.*answered \([0-9]*\).*/\1/p" "$TMP/u.err") &&
	probes=$(($(data_count "$TMP/uidle.rec") + $(data_count "$TMP/uflood.rec"))) &&
	diag "$ans answers, $probes requests" &&
	test "${ans:-0}" -le "$probes"
'

for r in ip_csum udp_csum fragment ip_length udp_length dst_ip dst_mac ip_version; do
	test_expect_success LAB "uudp: the counters name rx_$r" '
		diag "rx_$r $(counter "$TMP/u.err" "rx_$r")" &&
		test "$(counter "$TMP/u.err" "rx_$r")" -gt 0
	'
done

for kind in version control private mode; do
	test_expect_success LAB "uudp: the counters name '$kind'" '
		c=$(kind_count "$TMP/u.err" "$kind") &&
		diag "$kind ${c:-none}" &&
		test "${c:-0}" -gt 0
	'
done
done_testing
