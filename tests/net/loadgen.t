#!/bin/sh
# SPDX-License-Identifier: ISC
# loadgen in the lab: the sink measures what the sender offers at a set
# rate without loss, for MTU-sized (GSO), fragmented and 64 KiB
# datagrams; calibration on the slow path finds the shaper's rate; a
# burst schedule sends about its duty cycle; bad options exit 2.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
lab_up g

spawn sink $NTPX_REF_EXEC loadgen --sink udp://0.0.0.0:9000 >"$TMP/sink.out" 2>/dev/null
in_ref() { ip netns exec "$NTPX_NS_REF" ss -Hlun "sport = :$1" | grep -q .; }
wait_until 5 in_ref 9000 || skip_all "sink did not start"
send() { $NTPX_CLIENT_EXEC loadgen "$@"; }

# The sink's rate and loss from the sender's summary line.
field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { v = $(i+1) } } END { gsub(/[(),%]/, "", v); print v }' "$1"; }
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= p / 100 * b) }'; }

send -r 200M -d 2s "udp://$NTPX_REF_FAST:9000" >"$TMP/a.out" 2>"$TMP/a.err"
diag "$(cat "$TMP/a.err")"
is "$(grep '^#fields' "$TMP/a.out")" "#fields t bytes packets gbps drops sent_gbps" "interval lines have the #fields header"
is "$(grep -vc '^#' "$TMP/a.out")" 2 "one line per second"
rx=$(awk '/sink received/ { for (i = 1; i <= NF; i++) if ($i == "received") { r = $(i+2); gsub(/[(]/, "", r); print r } }' "$TMP/a.err")
ok "the sink measured 200 Mbit/s within 5% ($rx Gbit/s)" within "$rx" 0.2 5
is "$(field "$TMP/a.err" lost)" 0 "nothing lost at 200 Mbit/s on fast"

send -r 100M -d 1s -s 9000 "udp://$NTPX_REF_FAST:9000" >/dev/null 2>"$TMP/b.err"
diag "$(cat "$TMP/b.err")"
ok "9000-byte datagrams (IP fragments) arrive" grep -q "sent [0-9]* datagrams of 9000 bytes.*sink received [1-9]" "$TMP/b.err"
is "$(field "$TMP/b.err" lost)" 0 "none lost"
send -r 100M -d 1s -s 65507 "udp://$NTPX_REF_FAST:9000" >/dev/null 2>"$TMP/c.err"
diag "$(cat "$TMP/c.err")"
ok "65507-byte datagrams arrive" grep -q "datagrams of 65507 bytes.*sink received [1-9]" "$TMP/c.err"

send --calibrate -d 1.5s "udp://$NTPX_REF_SLOW:9000" >"$TMP/cal.out" 2>/dev/null
cap=$(awk '$1 == "capacity_l2_bps" { print $2 }' "$TMP/cal.out")
diag "calibrated $cap bit/s on the wire against a shaper at $NTPX_SLOW_RATE"
ok "calibration on slow finds the shaper's rate within 5%" within "${cap:-0}" "$NTPX_SLOW_RATE" 5

# 300 ms on, 700 ms off, 100 ms lines for 3 s: about 30% of the lines
# carry traffic.
send -r 200M -d 3s -i 100ms -b 300ms/700ms "udp://$NTPX_REF_FAST:9000" >"$TMP/burst.out" 2>/dev/null
on=$(awk '!/^#/ && $NF > 0.05' "$TMP/burst.out" | wc -l)
all=$(grep -vc '^#' "$TMP/burst.out")
diag "burst: $on of $all lines sending"
ok "bursts send about their duty cycle" awk -v a="$on" -v n="$all" 'BEGIN { exit !(n >= 25 && a >= 0.2 * n && a <= 0.45 * n) }'

kill "$sink"
wait "$sink" 2>/dev/null
ok "the sink printed interval lines" test "$(grep -vc '^#' "$TMP/sink.out")" -ge 5

usage() { _o=$(loadgen "$@" 2>&1 >/dev/null); [ $? = 2 ] && [ -n "$_o" ]; }
ok "bad rate: exit 2" usage -r 5x udp://127.0.0.1:9
ok "bad size: exit 2" usage -s 70000 udp://127.0.0.1:9
ok "missing endpoint: exit 2" usage -r 1G
ok "bad endpoint: exit 2" usage -r 1G bogus://x
done_testing
