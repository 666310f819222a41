#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: userspace UDP (uudp over AF_XDP) against the kernel UDP path
# it bypasses, on the fast path of a lab of its own (bin/ntpx-lab: a veth
# between two namespaces), in UUDP_BLOCKS alternating blocks of one run.
# Each row names the client's transport and the server's separately:
#   kernel -> kernel     ntpprobe over kernel UDP, ntpreflect over kernel UDP
#   uudp -> kernel       ntpprobe over uudp, ntpreflect over kernel UDP:
#                        what a uudp client gains against a real server
#   uudp -> uudp         both over uudp (the figure of 9a2ce97 and before,
#                        when the server always ran the client's transport)
# with the client's and the server's poll mode the same (block or busy),
# generic XDP on veth (and native XDP, busy).  Ratios are against kernel
# -> kernel with the same poll mode; each the median of the blocks'
# ratios [range].  Target: uudp -> uudp busy <= 0.6 x kernel busy,
# median.  Delay = (T4-T1)-(T3-T2); doc/uudp.md says why uudp on veth is
# not always faster.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/figures.sh"
FIG_COUNT=${NTPX_BENCH_COUNT:-1000}
BLOCKS=${UUDP_BLOCKS:-5}
B=$NTPX_BIN

need_prereq ROOT
fig_lab_up || { echo "uudp: no lab"; exit 0; }

rows="kudp:kudp:block kudp:kudp:busy uudp:kudp:busy uudp:uudp:busy uudp:uudp:block uudpn:uudpn:busy"
for b in $(seq 1 "$BLOCKS"); do
	for r in $rows; do
		IFS=: read -r cli srv mode <<-EOF
		$r
		EOF
		v=$(fig_lab "$B" "$srv" "$cli" "$mode")
		k=$(echo "$r" | tr : _)
		set -- $v
		echo "$1" >>"$TMP/$k.m"; echo "$2" >>"$TMP/$k.p"; echo "$3" >>"$TMP/$k.n"
		echo "$v" >"$TMP/$k.last"
	done
	for r in $rows; do
		k=$(echo "$r" | tr : _)
		ref=kudp_kudp_${r##*:}
		fig_ratio "$(cat "$TMP/$k.last")" "$(cat "$TMP/$ref.last")" 1 >>"$TMP/$k.rm"
		fig_ratio "$(cat "$TMP/$k.last")" "$(cat "$TMP/$ref.last")" 2 >>"$TMP/$k.rp"
	done
	fig_ratio "$(cat "$TMP/uudp_uudp_busy.last")" "$(cat "$TMP/kudp_kudp_block.last")" 1 >>"$TMP/old.rm"
done

rng() { set -- $(fig_stat "$1"); [ "$1" = - ] && echo - || printf '%.2f [%.2f-%.2f]' "$1" "$2" "$3"; }
us() { set -- $(fig_stat "$1"); [ "$1" = - ] && echo - || awk -v v="$1" 'BEGIN { printf "%.3f", v / 1000 }'; }
name() { case $1 in kudp) echo kernel ;; uudp) echo uudp ;; uudpn) echo "uudp native" ;; esac; }

echo "uudp vs kernel UDP: ntpx-lab fast path (veth), $BLOCKS blocks of $FIG_COUNT exchanges at $FIG_IV_US us;" \
	"delay medians in us (median of the blocks'); client -> server"
printf '%-32s %6s %9s %9s   %-20s %-20s\n' "client -> server, poll" ok median p99 "med/kernel" "p99/kernel"
for r in $rows; do
	IFS=: read -r cli srv mode <<-EOF
	$r
	EOF
	k=$(echo "$r" | tr : _)
	printf '%-32s %6s %9s %9s   %-20s %-20s\n' "$(name "$cli") -> $(name "$srv"), $mode" \
		"$(fig_stat "$TMP/$k.n" | awk '{ print $1 }')" "$(us "$TMP/$k.m")" "$(us "$TMP/$k.p")" \
		"$(rng "$TMP/$k.rm")" "$(rng "$TMP/$k.rp")"
done
set -- $(fig_stat "$TMP/uudp_uudp_busy.rm")
awk -v m="$1" 'BEGIN { printf "uudp -> uudp, busy / kernel -> kernel, busy: median %.2f (target <= 0.60: %s)\n",
	m, (m != "-" && m <= 0.60) ? "met" : "NOT met" }'
echo "uudp -> uudp busy / kernel -> kernel block (the old last line): median $(rng "$TMP/old.rm")"
