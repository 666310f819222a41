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
need_prereq ROOT
need ip ss

port=123
inns() { ip netns exec "$ns" "$@"; }
listening() { inns ss -Hlun "sport = :$1" | grep -q .; }
# Datagrams the kernel dropped in the namespace: a full receive buffer
# (RcvbufErrors), or a reply that came after its sender had closed its
# socket (NoPorts).
kdrops() { inns awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $3 + $6 }' /proc/net/snmp; }
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$refl/status"; }
sf() {	# FILE KEY: the number after KEY in a summary line
	awk -v k="$2" '{ gsub(/,/, ""); for (i = 1; i < NF; i++) if ($i == k) v = $(i+1) } END { print v + 0 }' "$1"
}
# wait_rc PID: waits for PID, its exit status in rc.
wait_rc() { wait "$1"; rc=$?; }
# The interval lines (t requests replies) of FILE add up to the summary's
# $req requests, $rep replies, $lost lost.
intervals_add_up() {
	awk -v q="$req" -v r="$rep" -v l="$lost" '!/^#/ { a += $2; b += $3 }
		END { exit !(q > 0 && a == q && b == r && q - r == l) }' "$1"
}
# At least 4 intervals of FILE sent requests, and each got replies.
answered_throughout() {
	awk '!/^#/ && $2 > 0 { n++; if ($3 == 0) bad++ } END { exit !(n >= 4 && !bad) }' "$1"
}
# A reply the server sends after loadgen has closed its socket is counted
# (NoPorts) only once it is sent: wait for the counters to account for
# the losses, and fail if they never do.
accounted() { d1=$(kdrops); [ "$((lost + plost - plate))" -le "$((d1 - d0))" ]; }
all_accounted() {
	wait_until 5 accounted
	diag "kernel dropped $((d1 - d0)) datagrams in the namespace during the flood"
	diag "flood $lost + probe $plost - late $plate <= $((d1 - d0))"
	test "$((lost + plost - plate))" -le "$((d1 - d0))"
}

test_expect_success 'setup: a network namespace of our own, its loopback up' '
	ns=$(uniq_name fl) &&
	ip netns add "$ns" &&
	test_atexit "ip netns del $ns" &&
	inns ip link set lo up
'

test_expect_success 'setup: ntpreflect in it' '
	spawn refl ip netns exec "$ns" ntpreflect "udp://127.0.0.1:$port" 2>"$TMP/refl.err" &&
	wait_until 5 listening "$port" &&
	ep=udp://127.0.0.1:$port
'

# Warm up: every buffer and page the server will use gets touched.
test_expect_success 'setup: a warm-up flood' '
	inns loadgen --ntp 20k -d 1s "$ep" >/dev/null 2>"$TMP/warm.err" &&
	rss0=$(rss) &&
	d0=$(kdrops)
'

test_expect_success 'setup: a probe during a 4 s loadgen --ntp flood' '
	spawn fpid ip netns exec "$ns" loadgen --ntp 20k -d 4s "$ep" >"$TMP/flood.out" 2>"$TMP/flood.err" &&
	inns ntpprobe -i 20ms -c 100 -w 200ms "$ep" >"$TMP/probe.rec" 2>"$TMP/probe.err" &&
	wait_rc "$fpid" &&
	frc=$rc &&
	rss1=$(rss) &&
	diag "$(cat "$TMP/flood.err")" &&
	diag "$(tail -n 1 "$TMP/probe.err")" &&
	diag "ntpreflect VmRSS ${rss0} kB after warm-up, ${rss1} kB after the flood" &&
	req=$(sf "$TMP/flood.err" requests) rep=$(sf "$TMP/flood.err" replies) lost=$(sf "$TMP/flood.err" lost) &&
	psent=$(sf "$TMP/probe.err" sent) pok=$(sf "$TMP/probe.err" ok) plost=$(sf "$TMP/probe.err" lost) &&
	plate=$(sf "$TMP/probe.err" late)
'

test_expect_success 'loadgen --ntp ran' '
	test_is "$frc" 0
'

# The interval lines (t requests replies) add up to the summary line.
test_expect_success 'loadgen'\''s interval lines add up to its summary' '
	diag "$req requests, $rep replies, $lost lost" &&
	intervals_add_up "$TMP/flood.out"
'

# Every interval that sent requests got replies: the server kept answering
# the whole time, it did not stop after a while.
test_expect_success 'ntpreflect answered in every interval of the flood' '
	answered_throughout "$TMP/flood.out"
'

# The server's response time (transmit less receive timestamp of each
# counted reply): on one clock never negative, the mean between the
# extremes, and no spread wider than half the range allows.
test_expect_success 'loadgen reports the server'\''s response time, consistently' '
	set -- $(sed -n "s/.* response_us min \([0-9.-]*\) mean \([0-9.-]*\) max \([0-9.-]*\) sd \([0-9.-]*\).*/\1 \2 \3 \4/p" "$TMP/flood.err") &&
	test $# = 4 &&
	awk -v lo="$1" -v m="$2" -v hi="$3" -v sd="$4" "BEGIN {
		exit !(lo >= 0 && lo <= m && m <= hi && sd >= 0 && sd <= (hi - lo) / 2 + 0.001) }"
'

test_expect_success 'the probe sent its 100 requests during the flood' '
	test_is "$psent" 100
'

test_expect_success 'the probe was answered during the flood' '
	diag "$pok of 100" &&
	test "$pok" -gt 0
'

# Exact accounting: a request or reply that went missing was dropped by a
# kernel socket, and the kernel counted it; a probe reply that came after
# its timeout is counted late by the probe, and not dropped.  A server
# that read a request and did not answer it fails this.
test_expect_success 'every request left unanswered was dropped by the kernel' '
	all_accounted
'

test_expect_success 'ntpreflect memory flat (grew < 64 kB) and still alive' '
	test $((rss1 - rss0)) -lt 64 &&
	kill -0 "$refl"
'
done_testing
