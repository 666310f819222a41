#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: per-layer stamps on a lab's fast path (veth, idle), in one
# run, ratios from that run:
#   - the residual RMS of the offset from kernel stamps (t1k t2k t3k t4k,
#     the server's through interleaved mode) against the same figure from
#     the tools' stamps (T1..T4), from the same exchanges.  Targets:
#     <= 0.5x, and <= 2 us absolute.
#   - the cost of stamping: the probe's median delay with stamps on
#     against off (both tools), in alternating blocks so that a change in
#     the machine's load falls on both.  Target: <= 1.05x.
# NTPX_BENCH_COUNT exchanges (default 2000), at 1 ms.
. "$(dirname "$0")/../lib.sh"
N=${NTPX_BENCH_COUNT:-2000}
BLOCKS=4
port=12300

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
lab=$(uniq_name bst)
test_atexit "$NTPX_BIN/ntpx-lab" -n "$lab" down
"$NTPX_BIN/ntpx-lab" -n "$lab" up >"$TMP/lab.err" 2>&1 || { echo "stamps: no lab: $(tail -n 1 "$TMP/lab.err")"; exit 0; }
eval "$("$NTPX_BIN/ntpx-lab" -n "$lab" env)"
X="$NTPX_BIN/ntpx-lab -n $lab exec"
ep="udp://$NTPX_REF_FAST:$port"
listening() { $X ref ss -Hlun "sport = :$port" | grep -q .; }

# 1. Noise by layer.
spawn srv $X ref ntpreflect --stratum 1 "$ep"
wait_until 5 listening
$X client ntpprobe -i 1ms -w 100ms -c "$N" --xleave "$ep" >"$TMP/xl.rec" 2>/dev/null
kill "$srv"; wait "$srv" 2>/dev/null
ntpstages --same-clock "$TMP/xl.rec" >"$TMP/xl.st"
u=$(awk '$1 == "user" { print $5 }' "$TMP/xl.st")
k=$(awk '$1 == "kernel" { print $5 }' "$TMP/xl.st")
echo "stamps: lab fast path, idle, $N exchanges at 1 ms, --xleave"
sed 's/^/    /' "$TMP/xl.st"
printf '%-44s %10s %10s %8s\n' figure kernel user ratio
printf '%-44s %10s %10s %8s   (targets <= 0.5, kernel <= 2 us)\n' "offset residual RMS (us)" "$k" "$u" "$(ratio "$k" "$u")"

# 2. The cost of stamping: median delay on vs off, alternating blocks.
per=$((N / BLOCKS / 2))
: >"$TMP/on.d"; : >"$TMP/off.d"
for b in $(seq 1 $BLOCKS); do
	for mode in on off; do
		opt=; [ $mode = off ] && opt=--no-stamps
		spawn srv $X ref ntpreflect --stratum 1 $opt "$ep"
		wait_until 5 listening
		$X client ntpprobe -i 1ms -w 100ms -c "$per" $opt "$ep" 2>/dev/null |
			awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
			     field("status") == "ok" { print field("delay") }' >>"$TMP/$mode.d"
		kill "$srv"; wait "$srv" 2>/dev/null
		while listening; do sleep 0.01; done
	done
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", v[int((NR + 1) / 2)] / 1000 }'; }
on=$(med "$TMP/on.d") off=$(med "$TMP/off.d")
printf '%-44s %10s %10s %8s   (target <= 1.05)\n' "median delay, stamps on / off (us)" "$on" "$off" "$(ratio "$on" "$off")"
