#!/bin/sh
# SPDX-License-Identifier: ISC
# What garbage costs a legitimate client: ntpprobe's median delay to an
# ntpreflect on the loopback of a namespace of its own while two senders
# flood it with datagrams it must not answer (tests/helpers/garbage, at
# nice 19, as tests/net/attack.t floods it), against the same probe with
# no flood, in alternating blocks of one run.  Target: the flood at most
# doubles the median (it was a test's bound once; how fast a machine
# drains a flood is a speed, and speeds live here).  Not a test: it
# prints and exits 0.
. "$(dirname "$0")/../lib.sh"
BLOCKS=${BENCH_BLOCKS:-5}
GARBAGE=$NTPX_HELPERS/garbage
[ -x "$GARBAGE" ] || { echo "attack: build/helpers/garbage missing (make check builds it)"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "attack: needs root (a network namespace)"; exit 0; }

ns=$(uniq_name ab)
ip netns add "$ns" || exit 1
test_atexit "ip netns del $ns"
ip netns exec "$ns" ip link set lo up
port=12300
ep="udp://127.0.0.1:$port?src=127.0.0.2"
spawn R ip netns exec "$ns" "$NTPX_BIN/ntpreflect" --stratum 1 "udp://127.0.0.1:$port" 2>/dev/null
wait_until 5 udp_listening "$port" "$ns" || { echo "attack: ntpreflect did not start"; exit 0; }

# The median delay, ns, of one 2 s probe at 10 ms.
probe() {
	ip netns exec "$ns" "$NTPX_BIN/ntpprobe" -i 10ms -w 200ms -d 2s "$ep" 2>/dev/null |
		awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
			field("status") == "ok" { print field("delay") }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
for b in $(seq 1 "$BLOCKS"); do
	idle=$(probe)
	ip netns exec "$ns" nice -n 19 "$GARBAGE" 127.0.0.1 "$port" 3 127.0.0.3 >/dev/null &
	g1=$!
	ip netns exec "$ns" nice -n 19 "$GARBAGE" 127.0.0.1 "$port" 3 127.0.0.4 >/dev/null &
	g2=$!
	busy=$(probe)
	wait "$g1" "$g2"
	[ -n "$idle" ] && [ -n "$busy" ] && awk -v a="$busy" -v b="$idle" 'BEGIN { print a / b }' >>"$TMP/r"
done
[ -s "$TMP/r" ] || { echo "attack: no figure (no ok exchange)"; exit 0; }
sort -n "$TMP/r" | awk '{ v[NR] = $1 } END {
	m = v[int((NR + 1) / 2)]
	printf "attack: median delay under a garbage flood / idle: %.2f [%.2f-%.2f] over %d blocks (<=2.00 %s)\n",
		m, v[1], v[NR], NR, m <= 2 ? "met" : "NOT met" }'
