#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: ntpmesh against offsetfit on the same records (issue 32).  A
# mesh of 6 hosts, every pair probed both ways: 30 directed pairs of
# MESH_RECORDS (1000000) exchanges each, 1 ms apart (tests/helpers/meshgen,
# no truth column, the kernel's stamps beside the program's: -K), 30 M
# records in all.  The baseline is offsetfit on
# each of the 30 files, as one would fit the pairs without ntpmesh.
# Target: ntpmesh's CPU time (user + system) at most 2 times offsetfit's,
# the same-run ratio: MESH_BLOCKS (3) blocks, each timing both, in turn
# first, and the median of the blocks' ratios [their range].  The same
# for --stamps kernel (the lab's stamp layer, issue 32's target too), and
# for --window 10s (100 windows), for information, and the peak memory
# (ntpmesh holds one file's exchanges at a time).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/figures.sh"
N=${MESH_RECORDS:-1000000}
BLOCKS=${MESH_BLOCKS:-3}
d=$TMP/mesh
"$NTPX_HELPERS/meshgen" -T -K -s 9 -H a,b,c,d,e,f -c "$N" -i 1000000 "$d" || exit 1
cat "$d"/*.rec >/dev/null	# into the page cache for all alike

# The four figures of a block, in the order given: m the default, k
# --stamps kernel, w --window 10s, o offsetfit on each file; mkb
# ntpmesh's peak RSS.
mesh_cpu() { fig_cpu "$NTPX_BIN/ntpmesh" "$@" "$d"; }
block() {
	for _f; do
		case $_f in
		m) m=$(mesh_cpu) mkb=$(cat "$TMP/cpu.rss") ;;
		k) k=$(mesh_cpu --stamps kernel) ;;
		w) w=$(mesh_cpu --window 10s) ;;
		o) o=$(fig_fits "$NTPX_BIN" "$d") ;;
		esac
	done
}
for b in $(seq 1 "$BLOCKS"); do
	if [ $((b % 2)) = 1 ]; then block m k w o; else block o w k m; fi
	echo "${m%% *} ${o%% *} ${w%% *} ${k%% *}" >>"$TMP/times"
	fig_ratio "$m" "$o" 1 >>"$TMP/r.m"
	fig_ratio "$w" "$o" 1 >>"$TMP/r.w"
	fig_ratio "$k" "$o" 1 >>"$TMP/r.k"
done
set -- $(fig_stat "$TMP/r.m") $(fig_stat "$TMP/r.w") $(fig_stat "$TMP/r.k")
awk -v n="$N" -v b="$BLOCKS" -v m="$1" -v lo="$2" -v hi="$3" -v w="$4" -v wlo="$5" -v whi="$6" \
	-v k="$7" -v klo="$8" -v khi="$9" -v kb="$mkb" -f /dev/stdin "$TMP/times" <<'AWK'
{ tm[NR] = $1; to[NR] = $2; tw[NR] = $3; tk[NR] = $4 }
END {
	printf "ntpmesh: 6 hosts, 30 directed pairs x %d records (%d blocks; CPU s per block: ntpmesh, offsetfit x30, ntpmesh --window 10s, ntpmesh --stamps kernel)\n", n, b
	for (i = 1; i <= NR; i++) printf "  block %d: %.3f %.3f %.3f %.3f\n", i, tm[i] / 1e9, to[i] / 1e9, tw[i] / 1e9, tk[i] / 1e9
	printf "  ntpmesh / offsetfit: median %.2f [%.2f-%.2f] (<=2 %s)\n", m, lo, hi, m <= 2 ? "met" : "NOT met"
	printf "  ntpmesh --stamps kernel / offsetfit: median %.2f [%.2f-%.2f] (<=2 %s)\n", k, klo, khi, k <= 2 ? "met" : "NOT met"
	printf "  ntpmesh --window 10s / offsetfit: median %.2f [%.2f-%.2f]\n", w, wlo, whi
	printf "  ntpmesh peak memory: %.1f MB, %.1f bytes per record of the largest file\n", kb / 1024, kb * 1024 / n
}
AWK
