#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: the noise floor of the loopback path, blocking and busy.
# ntpprobe against ntpreflect versus build/bench/pingpong, the least a
# program can do between the same four boundaries, in two forms: plain,
# and stamped (the kernel asked for the stamps ntpx asks for, and read;
# pingpong.c).  The figures, each a ratio of the same block's medians
# (p99s), as the median over NOISE_BLOCKS alternating blocks [range]:
#   ntpx / stamped floor              targets: median <= 1.10, p99 <= 1.25
#   ntpx --no-stamps / plain floor    the same targets
#   stamping's price: stamped / plain floor (the kernel's), and ntpx
#     stamps on / off (ntpprobe(1) documents it; no target of its own)
#   ntpx / plain floor: the figure of 9a2ce97 and before, when ntpx took
#     no stamps (kept for one release, so that history stays comparable)
#   ntpx / stamped floor and ntpx --no-stamps / floor against the floor
#     of e0bfd10 and before, which polled before its receive and read its
#     send stamps inside the exchange ("pingpong ... poll"; kept for one
#     release too)
# and sockperf ping-pong against the plain floor, where it is installed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/figures.sh"
FIG_COUNT=${NTPX_BENCH_COUNT:-1000}
BLOCKS=${NOISE_BLOCKS:-7}
B=$NTPX_BIN

rng() { set -- $(fig_stat "$1"); [ "$1" = - ] && echo - || printf '%.2f [%.2f-%.2f]' "$1" "$2" "$3"; }
us() { set -- $(fig_stat "$1"); [ "$1" = - ] && echo - || awk -v v="$1" 'BEGIN { printf "%.3f", v / 1000 }'; }

for b in $(seq 1 "$BLOCKS"); do
	for mode in block busy; do
		pp=$(fig_floor $mode) ppst=$(fig_floor $mode stamp)
		ppo=$(fig_floor $mode poll) ppsto=$(fig_floor $mode stamp poll)
		nx=$(fig_ntpx "$B" $mode) nxns=$(fig_ntpx "$B" $mode --no-stamps)
		for v in pp ppst ppo ppsto nx nxns; do
			eval "set -- \$$v"
			echo "$1" >>"$TMP/$mode.$v.m"; echo "$2" >>"$TMP/$mode.$v.p"
		done
		for c in 1 2; do
			s=m; [ $c = 2 ] && s=p
			fig_ratio "$nx" "$ppst" $c >>"$TMP/$mode.st.$s"
			fig_ratio "$nxns" "$pp" $c >>"$TMP/$mode.ns.$s"
			fig_ratio "$nx" "$pp" $c >>"$TMP/$mode.old.$s"
			fig_ratio "$nx" "$ppsto" $c >>"$TMP/$mode.sto.$s"
			fig_ratio "$nxns" "$ppo" $c >>"$TMP/$mode.nso.$s"
			fig_ratio "$ppst" "$pp" $c >>"$TMP/$mode.fprice.$s"
			fig_ratio "$nx" "$nxns" $c >>"$TMP/$mode.nprice.$s"
		done
	done
done

echo "noise floor: loopback, $BLOCKS alternating blocks of $FIG_COUNT exchanges at $FIG_IV_US us;" \
	"delay = (T4-T1)-(T3-T2); medians of the blocks' medians and p99s in us"
printf '%-6s %-20s %10s %10s\n' mode tool median p99
for mode in block busy; do
	for v in "pp:pingpong" "ppst:pingpong stamp" "ppo:pingpong poll" "ppsto:pingpong stamp poll" \
		"nx:ntpx" "nxns:ntpx --no-stamps"; do
		printf '%-6s %-20s %10s %10s\n' $mode "${v#*:}" "$(us "$TMP/$mode.${v%%:*}.m")" \
			"$(us "$TMP/$mode.${v%%:*}.p")"
	done
done
echo "ratios: median over the blocks [range]"
printf '%-6s %-36s %-20s %-20s %s\n' mode figure "median ratio" "p99 ratio" targets
for mode in block busy; do
	printf '%-6s %-36s %-20s %-20s %s\n' $mode "ntpx / stamped floor" \
		"$(rng "$TMP/$mode.st.m")" "$(rng "$TMP/$mode.st.p")" "1.10, 1.25"
	printf '%-6s %-36s %-20s %-20s %s\n' $mode "ntpx --no-stamps / floor" \
		"$(rng "$TMP/$mode.ns.m")" "$(rng "$TMP/$mode.ns.p")" "1.10, 1.25"
	printf '%-6s %-36s %-20s %-20s %s\n' $mode "stamped / plain floor (kernel)" \
		"$(rng "$TMP/$mode.fprice.m")" "$(rng "$TMP/$mode.fprice.p")" "(the price)"
	printf '%-6s %-36s %-20s %-20s %s\n' $mode "ntpx stamps on / off" \
		"$(rng "$TMP/$mode.nprice.m")" "$(rng "$TMP/$mode.nprice.p")" "(the price)"
	printf '%-6s %-36s %-20s %-20s %s\n' $mode "ntpx / floor (the old figure)" \
		"$(rng "$TMP/$mode.old.m")" "$(rng "$TMP/$mode.old.p")" "(9a2ce97: 1.10, 1.25)"
	printf '%-6s %-36s %-20s %-20s %s\n' $mode "ntpx / stamped floor (e0bfd10's)" \
		"$(rng "$TMP/$mode.sto.m")" "$(rng "$TMP/$mode.sto.p")" "(e0bfd10: 1.10, 1.25)"
	printf '%-6s %-36s %-20s %-20s %s\n' $mode "ntpx --no-stamps / floor (e0bfd10's)" \
		"$(rng "$TMP/$mode.nso.m")" "$(rng "$TMP/$mode.nso.p")" "(e0bfd10: 1.10, 1.25)"
done

if command -v sockperf >/dev/null; then
	for mode in block busy; do
		port=$(free_udp_port)
		nb=$([ $mode = busy ] && echo --nonblocked)
		spawn sp sockperf server -i 127.0.0.1 -p "$port" $nb >/dev/null 2>&1
		wait_until 5 udp_listening "$port"
		secs=$(awk -v n="$FIG_COUNT" -v i="$FIG_IV_US" 'BEGIN { printf "%d", n * i / 1e6 + 1 }')
		sockperf ping-pong -i 127.0.0.1 -p "$port" -m 48 --mps $((1000000 / FIG_IV_US)) \
			-t "$secs" --full-rtt $nb >"$TMP/sp" 2>&1
		kill "$sp"
		# sockperf's round trip includes its server's turnaround.
		med=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$TMP/sp")
		p99=$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$TMP/sp")
		echo "sockperf ping-pong, $mode (rtt incl. server turnaround): median ${med:--} us, p99 ${p99:--} us"
	done
fi
