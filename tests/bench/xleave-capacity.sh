#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: ntpreflect's capacity with interleaved-mode state for 10,000
# clients, against basic mode, on loopback.  build/bench/xlflood sends as
# 10,000 clients (127.1.x.y) in turn, each request of the xleave run
# naming its client's last reply; the rate climbs until a step loses 0.1%
# or more (or xlflood cannot reach the rate: then the figure is a lower
# bound, marked).  The ratio xleave/basic is from this run.
. "$(dirname "$0")/../lib.sh"
N=${NTPX_BENCH_CLIENTS:-10000}
rates=${BENCH_RATES:-"10000 20000 40000 60000 80000 100000 140000"}
fl=$NTPX_TOP/build/bench/xlflood

capacity() {	# MODE: "RATE BY INTERLEAVED_PCT"
	mode=$1
	start_reflector --clients "$N"
	best=0 by=server ipct=0
	for r in $rates; do
		set -- $("$fl" "$REFLECT_PORT" "$N" "$r" 2 "$mode")
		# sent N replies N interleaved N loss PCT rate N/s
		loss=${8%\%} got=${10%/s}
		awk -v l="$loss" 'BEGIN { exit !(l >= 0.1) }' && break
		best=$got
		ipct=$(awk -v i="$6" -v r="$4" 'BEGIN { printf "%.0f", r ? 100 * i / r : 0 }')
		if awk -v g="$got" -v w="$r" 'BEGIN { exit !(g < 0.95 * w) }'; then
			by=xlflood
			break
		fi
	done
	kill "$REFLECT_PID"; wait "$REFLECT_PID" 2>/dev/null
	echo "$best $by $ipct"
}
set -- $(capacity basic)
b=$1 bby=$2
set -- $(capacity xleave)
x=$1 xby=$2 xp=$3
echo "ntpreflect capacity, $N clients, loopback, < 0.1% loss (requests/s)"
printf '%-10s %10s %-12s %s\n' mode capacity "limited by" "interleaved replies"
printf '%-10s %10s %-12s %s\n' basic "$b" "$bby" -
printf '%-10s %10s %-12s %s\n' xleave "$x" "$xby" "$xp%"
echo "ratio xleave/basic $(awk -v a="$x" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
