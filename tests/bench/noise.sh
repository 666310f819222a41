#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: the noise floor of the loopback path.  ntpprobe against
# ntpreflect, versus the minimal C ping-pong that stamps at the same four
# boundaries (build/bench/pingpong: the floor of this path), and versus
# sockperf ping-pong, all in this run, with blocking and busy polling.
# Targets: ntpx median delay <= 1.10x the ping-pong's, p99 <= 1.25x.
# Medians and ratios from one run: this machine is shared and noisy.
. "$(dirname "$0")/../lib.sh"
N=${NTPX_BENCH_COUNT:-3000}
IV_US=1000
pp=$NTPX_TOP/build/bench/pingpong

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "noise floor: loopback, $N exchanges at ${IV_US} us, delay = (T4-T1)-(T3-T2), in us"
printf '%-6s %-10s %10s %10s %12s %12s\n' mode tool median p99 "median/floor" "p99/floor"
for mode in block busy; do
	port=$(free_udp_port)
	spawn srv "$pp" server "$port" $([ $mode = busy ] && echo busy)
	wait_until 5 udp_listening "$port"
	set -- $("$pp" client 127.0.0.1 "$port" $IV_US "$N" $([ $mode = busy ] && echo busy))
	kill "$srv"
	pp_med=$(awk -v v="$1" 'BEGIN { print v / 1000 }')
	pp_p99=$(awk -v v="$2" 'BEGIN { print v / 1000 }')
	printf '%-6s %-10s %10.3f %10.3f %12s %12s\n' $mode pingpong "$pp_med" "$pp_p99" 1.00 1.00

	start_reflector --poll $mode
	ntpprobe --poll $mode -i ${IV_US}us -w 100ms -c "$N" "udp://127.0.0.1:$REFLECT_PORT" \
		2>/dev/null | offsetfit >"$TMP/sum"
	kill "$REFLECT_PID"
	med=$(awk '$1 == "rtt_median_us" { print $2 }' "$TMP/sum")
	p99=$(awk '$1 == "rtt_p99_us" { print $2 }' "$TMP/sum")
	printf '%-6s %-10s %10.3f %10.3f %12s %12s   (targets 1.10, 1.25)\n' $mode ntpx "$med" "$p99" \
		"$(ratio "$med" "$pp_med")" "$(ratio "$p99" "$pp_p99")"

	if command -v sockperf >/dev/null; then
		port=$(free_udp_port)
		nb=$([ $mode = busy ] && echo --nonblocked)
		spawn sp sockperf server -i 127.0.0.1 -p "$port" $nb >/dev/null 2>&1
		wait_until 5 udp_listening "$port"
		secs=$(awk -v n="$N" -v i=$IV_US 'BEGIN { printf "%d", n * i / 1e6 + 1 }')
		sockperf ping-pong -i 127.0.0.1 -p "$port" -m 48 --mps $((1000000 / IV_US)) \
			-t "$secs" --full-rtt $nb >"$TMP/sp" 2>&1
		kill "$sp"
		# sockperf's round trip includes its server's turnaround.
		med=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$TMP/sp")
		p99=$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$TMP/sp")
		printf '%-6s %-10s %10.3f %10.3f %12s %12s   (rtt incl. server turnaround)\n' \
			$mode sockperf "$med" "$p99" "$(ratio "$med" "$pp_med")" "$(ratio "$p99" "$pp_p99")"
	fi
done
