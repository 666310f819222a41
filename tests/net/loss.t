#!/bin/sh
# SPDX-License-Identifier: ISC
# lossinject through the real tools: --every 10 over 100 requests drops
# exactly ten, at 10, 20, ... 100, recorded `dropped` (not timeout);
# --rate 5% --seed 7 drops the same positions twice, and another seed
# others; ntpreflect under a schedule drops replies and counts them.
# On loopback: nothing else loses a packet there.
. "$(dirname "$0")/../lib.sh"

need_prereq BUILT

port=$(free_udp_port)
spawn refl ntpreflect "udp://127.0.0.1:$port" 2>"$TMP/refl.err"
wait_until 5 udp_listening "$port" || skip_all "ntpreflect did not start"
ep=udp://127.0.0.1:$port

dropped_at() { rec_status "$1" | awk '$2 == "dropped" { print $1 }' | tr '\n' ' '; }

lossinject --every 10 -- ntpprobe -i 2ms -c 100 -w 200ms "$ep" >"$TMP/every.rec" 2>/dev/null
is "$(dropped_at "$TMP/every.rec")" "10 20 30 40 50 60 70 80 90 100 " "--every 10: exactly 10 dropped, at 10..100"
is "$(count_status "$TMP/every.rec" ok)" 90 "--every 10: the other 90 answered"
is "$(awk '/^#fields / { for (i = 2; i <= NF; i++) c[$i] = i - 1; next } /^#/ { next }
	$(c["status"]) == "dropped" && $(c["t1"]) != "-" && $(c["t2"]) == "-"' "$TMP/every.rec" | wc -l | tr -d ' ')" 10 \
	"a dropped record has its T1 and nothing after"

lossinject --rate 5% --seed 7 -- ntpprobe -i 2ms -c 200 -w 200ms "$ep" >"$TMP/r1.rec" 2>/dev/null
lossinject --rate 5% --seed 7 -- ntpprobe -i 2ms -c 200 -w 200ms "$ep" >"$TMP/r2.rec" 2>/dev/null
lossinject --rate 5% --seed 8 -- ntpprobe -i 2ms -c 200 -w 200ms "$ep" >"$TMP/r3.rec" 2>/dev/null
a=$(dropped_at "$TMP/r1.rec")
diag "seed 7 drops: $a"
ok "--rate 5% --seed 7 drops something" test -n "$a"
is "$(dropped_at "$TMP/r2.rec")" "$a" "--rate 5% --seed 7 twice: the same positions"
ok "--seed 8 drops other positions" test "$(dropped_at "$TMP/r3.rec")" != "$a"
ntpprobe -i 2ms -c 50 -w 200ms "$ep" >"$TMP/plain.rec" 2>/dev/null
is "$(count_status "$TMP/plain.rec" dropped)" 0 "without lossinject nothing is dropped"

# The server side: every 5th reply dropped, counted, and the probe sees
# those as timeouts.
port2=$(free_udp_port)
[ "$port2" = "$port" ] && port2=$((port + 1))
lossinject --every 5 -- ntpreflect "udp://127.0.0.1:$port2" 2>"$TMP/refl2.err" &
rpid=$!
cleanup "kill $rpid"
wait_until 5 udp_listening "$port2"
ntpprobe -i 2ms -c 50 -w 100ms "udp://127.0.0.1:$port2" >"$TMP/srv.rec" 2>/dev/null
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
diag "$(cat "$TMP/refl2.err")"
ok "ntpreflect counts the replies it dropped" grep -q "dropped 10" "$TMP/refl2.err"
is "$(count_status "$TMP/srv.rec" timeout)" 10 "the probe sees them as 10 timeouts"
done_testing
