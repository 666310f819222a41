#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect under a loadgen --ntp flood: it keeps answering a probe while
# the flood runs, answers most of the flood, and its memory stays flat
# (resident size after a long flood no larger than after a short one, give
# or take a few pages).  On loopback.
. "$(dirname "$0")/../lib.sh"

need_prereq BUILT

port=$(free_udp_port)
spawn refl ntpreflect "udp://127.0.0.1:$port" 2>"$TMP/refl.err"
wait_until 5 udp_listening "$port" || skip_all "ntpreflect did not start"
ep=udp://127.0.0.1:$port
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$refl/status"; }

# Warm up: every buffer and page the server will use gets touched.
loadgen --ntp 20k -d 1s "$ep" >/dev/null 2>"$TMP/warm.err"
rss0=$(rss)

loadgen --ntp 20k -d 4s "$ep" >"$TMP/flood.out" 2>"$TMP/flood.err" &
fpid=$!
cleanup "kill $fpid"
ntpprobe -i 20ms -c 100 -w 200ms "$ep" >"$TMP/probe.rec" 2>/dev/null
wait "$fpid"
frc=$?
rss1=$(rss)
diag "$(cat "$TMP/flood.err")"
diag "ntpreflect VmRSS ${rss0} kB after warm-up, ${rss1} kB after the flood"

is "$frc" 0 "loadgen --ntp ran"
ok "the flood reached its rate" awk '/ntp requests/ { for (i = 1; i <= NF; i++) if ($i == "rate") r = $(i+1) + 0 } END { exit !(r > 15000) }' "$TMP/flood.err"
ok "the flood got at least 95% of its replies" awk '/ntp requests/ { for (i = 1; i <= NF; i++) if ($i == "loss") l = $(i+1) + 0 } END { exit !(l < 5) }' "$TMP/flood.err"
ok "the probe was answered during the flood (90 of 100 or more)" \
	test "$(count_status "$TMP/probe.rec" ok)" -ge 90
ok "ntpreflect memory flat (grew < 64 kB)" test $((rss1 - rss0)) -lt 64
ok "ntpreflect still alive" kill -0 "$refl"
done_testing
