#!/bin/sh
# SPDX-License-Identifier: ISC
# loadgen against iperf3 -u on the lab's fast path, same datagram size,
# each flat out for a few seconds: the receiver's throughput of each and
# their ratio (target: loadgen >= 1.2x), with the fast path's transmit
# checksum offload as the lab makes it (off) and as it was (on).  Then calibration on the slow
# path against the shaper's configured rate (target: within 5%).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PATH=$top/bin:$PATH
lab=$top/bin/ntpx-lab
secs=${BENCH_SECONDS:-3}
size=1472

[ "$(id -u)" = 0 ] || { echo "loadgen-iperf3: skip (needs root)"; exit 0; }
command -v iperf3 >/dev/null || { echo "loadgen-iperf3: skip (no iperf3)"; exit 0; }
name=bench$$
pids=
finish() {
	for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	$lab -n "$name" down
	rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap finish EXIT
trap 'exit 130' INT TERM
$lab -n "$name" up || exit 1
eval "$($lab -n "$name" env)"
listening() { ip netns exec "$NTPX_NS_REF" ss -Hlun "sport = :$1" | grep -q . ||
	      ip netns exec "$NTPX_NS_REF" ss -Hltn "sport = :$1" | grep -q .; }
wait_for() { i=0; while ! listening "$1"; do i=$((i + 1)); [ $i -lt 500 ] || return 1; sleep 0.01; done; }

$lab -n "$name" exec ref loadgen --sink udp://0.0.0.0:9000 >/dev/null 2>&1 &
pids="$pids $!"
wait_for 9000 || { echo "loadgen-iperf3: sink did not start"; exit 1; }

# The fast path's transmit checksum offload, at both ends.  The lab
# turns it off since 686f757 (doc/uudp.md): then the sending kernel sums
# and segments every datagram in software, and loadgen's GSO batches
# lose their advantage.  Until then it was on, and a GSO batch crossed
# the veth whole: the ratio of 9a2ce97 and before (13.9) is that one.
# Both are measured, alternately, the old figure kept beside the new.
tx_offload() {
	for _ns in "$NTPX_NS_REF" "$NTPX_NS_CLIENT"; do
		ip netns exec "$_ns" ethtool -K "$NTPX_DEV_FAST" tx "$1" >/dev/null 2>&1
	done
}
for round in 1 2; do
	for tx in off on; do
		tx_offload $tx
		# iperf3: the receiver's line, in Mbit/s.
		$lab -n "$name" exec ref iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
		ip3=$!
		wait_for 5201 || { echo "loadgen-iperf3: iperf3 server did not start"; exit 1; }
		$lab -n "$name" exec client iperf3 -u -b 0 -l $size -t "$secs" -f m -c "$NTPX_REF_FAST" >"$tmp/iperf" 2>&1
		wait $ip3
		awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "Mbits/sec") print $(i-1) }' "$tmp/iperf" |
			tail -1 >>"$tmp/iperf.$tx"
		$lab -n "$name" exec client loadgen -s $size -d "${secs}s" "udp://$NTPX_REF_FAST:9000" >/dev/null 2>"$tmp/lg"
		awk '/sink received/ { for (i = 1; i <= NF; i++) if ($i == "received") { r = $(i+2); gsub(/[(]/, "", r); print r * 1000 } }' \
			"$tmp/lg" >>"$tmp/lg.$tx"
	done
done
tx_offload off
# The better of the two rounds of each.
best() { sort -g "$1" 2>/dev/null | tail -1; }
for tx in off on; do
	awk -v i="$(best "$tmp/iperf.$tx")" -v l="$(best "$tmp/lg.$tx")" -v s=$size -v tx=$tx 'BEGIN {
		what = tx == "on" ? "tx checksum offload on (the lab of 9a2ce97 and before)" : "tx checksum offload off (the lab now)"
		printf "fast path, %s, %d-byte datagrams, received: loadgen %.0f Mbit/s, iperf3 -u %.0f Mbit/s\n", what, s, l, i
		ratio = i > 0 ? l / i : 0
		printf "  loadgen/iperf3 %.2f (targets >= 1.2; >= 10 was set with the offload on): %s\n", ratio,
			ratio >= 10 ? "met" : ratio >= 1.2 ? "1.2 met, 10 NOT met" : "NOT met" }'
done

$lab -n "$name" exec client loadgen --calibrate -s $size "udp://$NTPX_REF_SLOW:9000" >"$tmp/cal" 2>/dev/null
cal=$(awk '$1 == "capacity_l2_bps" { print $2 }' "$tmp/cal")

awk -v c="${cal:-0}" -v r="$NTPX_SLOW_RATE" 'BEGIN {
	e = r > 0 ? (c - r) / r * 100 : 100
	printf "slow path calibration %.0f bit/s on the wire against %d: %+.2f%% (target within 5%%): %s\n",
		c, r, e, (e <= 5 && e >= -5) ? "met" : "NOT met"
}'
