#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect under a loadgen --ntp flood: it keeps answering, every request
# it did not answer is one the kernel counted as dropped, a probe is
# answered while the flood runs, and its memory stays flat (resident size
# after a long flood no larger than after a short one, give or take a few
# pages).  On the loopback of a namespace of its own, so that the kernel's
# UDP counters (/proc/net/snmp) count this test's datagrams and no one
# else's.  How fast a server answers is a capacity target, not a test:
# tests/bench/ntp-capacity.sh.
. "$(dirname "$0")/../lib.sh"

need_prereq BUILT
need_root
need ip ss

ns=$(uniq_name fl)
ip netns add "$ns" || skip_all "cannot make a network namespace"
cleanup "ip netns del $ns"
ip netns exec "$ns" ip link set lo up
inns() { ip netns exec "$ns" "$@"; }
listening() { inns ss -Hlun "sport = :$1" | grep -q .; }
# Datagrams the kernel dropped in the namespace: a full receive buffer
# (RcvbufErrors), or a reply that came after its sender had closed its
# socket (NoPorts).
kdrops() { inns awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $3 + $6 }' /proc/net/snmp; }

port=123
spawn refl ip netns exec "$ns" ntpreflect "udp://127.0.0.1:$port" 2>"$TMP/refl.err"
wait_until 5 listening "$port" || skip_all "ntpreflect did not start"
ep=udp://127.0.0.1:$port
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$refl/status"; }

# Warm up: every buffer and page the server will use gets touched.
inns loadgen --ntp 20k -d 1s "$ep" >/dev/null 2>"$TMP/warm.err"
rss0=$(rss)
d0=$(kdrops)

inns loadgen --ntp 20k -d 4s "$ep" >"$TMP/flood.out" 2>"$TMP/flood.err" &
fpid=$!
cleanup "kill $fpid"
inns ntpprobe -i 20ms -c 100 -w 200ms "$ep" >"$TMP/probe.rec" 2>"$TMP/probe.err"
wait "$fpid"
frc=$?
rss1=$(rss)
diag "$(cat "$TMP/flood.err")"
diag "$(tail -n 1 "$TMP/probe.err")"
diag "ntpreflect VmRSS ${rss0} kB after warm-up, ${rss1} kB after the flood"

sf() {	# FILE KEY: the number after KEY in a summary line
	awk -v k="$2" '{ gsub(/,/, ""); for (i = 1; i < NF; i++) if ($i == k) v = $(i+1) } END { print v + 0 }' "$1"
}
req=$(sf "$TMP/flood.err" requests) rep=$(sf "$TMP/flood.err" replies) lost=$(sf "$TMP/flood.err" lost)
psent=$(sf "$TMP/probe.err" sent) pok=$(sf "$TMP/probe.err" ok) plost=$(sf "$TMP/probe.err" lost)
plate=$(sf "$TMP/probe.err" late)
# A reply the server sends after loadgen has closed its socket is counted
# (NoPorts) only once it is sent: wait for the counters to account for
# the losses, and fail if they never do.
accounted() { d1=$(kdrops); [ "$((lost + plost - plate))" -le "$((d1 - d0))" ]; }
wait_until 5 accounted

is "$frc" 0 "loadgen --ntp ran"
# The interval lines (t requests replies) add up to the summary line.
ok "loadgen's interval lines add up to its summary ($req requests, $rep replies, $lost lost)" \
	awk -v q="$req" -v r="$rep" -v l="$lost" '!/^#/ { a += $2; b += $3 }
		END { exit !(q > 0 && a == q && b == r && q - r == l) }' "$TMP/flood.out"
# Every interval that sent requests got replies: the server kept answering
# the whole time, it did not stop after a while.
ok "ntpreflect answered in every interval of the flood" \
	awk '!/^#/ && $2 > 0 { n++; if ($3 == 0) bad++ } END { exit !(n >= 4 && !bad) }' "$TMP/flood.out"
is "$psent" 100 "the probe sent its 100 requests during the flood"
ok "the probe was answered during the flood ($pok of 100)" test "$pok" -gt 0
# Exact accounting: a request or reply that went missing was dropped by a
# kernel socket, and the kernel counted it; a probe reply that came after
# its timeout is counted late by the probe, and not dropped.  A server
# that read a request and did not answer it fails this.
diag "kernel dropped $((d1 - d0)) datagrams in the namespace during the flood"
ok "every request left unanswered was dropped by the kernel (flood $lost + probe $plost - late $plate <= $((d1 - d0)))" \
	test "$((lost + plost - plate))" -le "$((d1 - d0))"
ok "ntpreflect memory flat (grew < 64 kB) and still alive" \
	eval 'test $((rss1 - rss0)) -lt 64 && kill -0 "$refl"'
done_testing
