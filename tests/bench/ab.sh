#!/bin/sh
# SPDX-License-Identifier: ISC
# make bench-ab REF=<commit>: this tree's figures against those of REF, in
# one run.  REF is checked out in a worktree of its own under build/ab/
# (kept for the next run, rebuilt by its own Makefile) and every figure of
# tests/bench/figures.sh is run with both trees' tools in alternating
# blocks (new then old, then old then new, ...), so that what the machine
# does meanwhile falls on both.  For each figure it prints both medians
# (the median over the blocks of each block's median) and new/old of the
# median and of the p99, each the median of the blocks' ratios with
# [the lowest-the highest]: a ratio whose range holds 1.00 has not moved.
# doc/hacking.md says how to use it to find a commit.
#
#   AB_BLOCKS (default 5) blocks of FIG_COUNT (default 1000) exchanges.
#   AB_FIGURES: the figures to run, by name (default: all of them).
. "$(dirname "$0")/../lib.sh"
[ $# = 1 ] || { echo "usage: ab.sh REF" >&2; exit 2; }
sha=$(git -C "$NTPX_TOP" rev-parse --verify -q "$1^{commit}") ||
	{ echo "bench-ab: $1: not a commit" >&2; exit 2; }
old=$NTPX_TOP/build/ab/$(echo "$sha" | cut -c1-12)
if [ ! -e "$old/Makefile" ]; then
	git -C "$NTPX_TOP" worktree prune
	git -C "$NTPX_TOP" worktree add --detach "$old" "$sha" >/dev/null 2>&1 ||
		{ echo "bench-ab: cannot check out $1 in $old" >&2; exit 1; }
fi
echo "bench-ab: building $1 ($sha) in $old"
make -C "$old" -j2 all build/bench/pingpong >"$old.log" 2>&1 ||
	{ tail -n 20 "$old.log"; echo "bench-ab: $1 does not build (log: $old.log)" >&2; exit 1; }

FIG_COUNT=${FIG_COUNT:-1000}
. "$(dirname "$0")/figures.sh"
BLOCKS=${AB_BLOCKS:-5}
new=$NTPX_TOP

lab=
fig_lab_up >/dev/null 2>&1 && lab=1
has_no_stamps() { "$1/bin/ntpprobe" --help 2>&1 | grep -q -- --no-stamps; }

# The figures: NAME and what runs it with tree $T (its top directory).
# NAME-nostamps: with --no-stamps where the tree has it, and as it is
# where it has none (no stamps to turn off): the unstamped path of both.
figures="floor-block ntpx-block ntpx-busy ntpx-block-nostamps"
[ -n "$lab" ] && figures="$figures kudp-busy uudp-busy uudp-busy-nostamps uudp-kudp-busy uudp-block uudpn-busy"
figures="$figures offsetfit offsetfit-stability"

# offsetfit's figures: the CPU time (user + system) of one run on the
# same file of AB_RECORDS records (build/bench/genrec), in ns (printed in
# us; fig_cpu).
case " ${AB_FIGURES:-$figures} " in
*" offsetfit"*)
	"$NTPX_TOP/build/bench/genrec" "${AB_RECORDS:-3000000}" 7 >"$TMP/ab.rec"
	cat "$TMP/ab.rec" >/dev/null ;;
esac
[ -n "${AB_FIGURES:-}" ] && figures=$AB_FIGURES
run_fig() {	# NAME TREE
	case $1 in
	floor-block)	FIG_PP=$2/build/bench/pingpong fig_floor block ;;
	floor-busy)	FIG_PP=$2/build/bench/pingpong fig_floor busy ;;
	ntpx-block)	fig_ntpx "$2/bin" block ;;
	ntpx-busy)	fig_ntpx "$2/bin" busy ;;
	kudp-busy)	fig_lab "$2/bin" kudp kudp busy ;;
	kudp-block)	fig_lab "$2/bin" kudp kudp block ;;
	uudp-busy)	fig_lab "$2/bin" uudp uudp busy ;;
	uudp-kudp-busy)	fig_lab "$2/bin" kudp uudp busy ;;
	uudp-block)	fig_lab "$2/bin" uudp uudp block ;;
	uudpn-busy)	fig_lab "$2/bin" uudpn uudpn busy ;;
	uudp-busy-nostamps) fig_lab "$2/bin" uudp uudp busy $(has_no_stamps "$2" && echo --no-stamps) ;;
	ntpx-block-nostamps) fig_ntpx "$2/bin" block $(has_no_stamps "$2" && echo --no-stamps) ;;
	ntpx-busy-nostamps) fig_ntpx "$2/bin" busy $(has_no_stamps "$2" && echo --no-stamps) ;;
	offsetfit)	fig_cpu "$2/bin/offsetfit" "$TMP/ab.rec" ;;
	offsetfit-stability) fig_cpu "$2/bin/offsetfit" --stability --series offset "$TMP/ab.rec" ;;
	*)		echo "- - 0" ;;
	esac
}

for b in $(seq 1 "$BLOCKS"); do
	for f in $figures; do
		if [ $((b % 2)) = 1 ]; then
			n=$(run_fig "$f" "$new") o=$(run_fig "$f" "$old")
		else
			o=$(run_fig "$f" "$old") n=$(run_fig "$f" "$new")
		fi
		echo "$n" | awk '{ print $1 }' >>"$TMP/$f.nm"
		echo "$o" | awk '{ print $1 }' >>"$TMP/$f.om"
		fig_ratio "$n" "$o" 1 >>"$TMP/$f.rm"
		fig_ratio "$n" "$o" 2 >>"$TMP/$f.rp"
	done
done

echo "bench-ab: new $(git -C "$NTPX_TOP" describe --always --dirty) against old $(echo "$sha" | cut -c1-12);" \
	"$BLOCKS blocks of $FIG_COUNT exchanges at $FIG_IV_US us; medians in us; new/old: median over the blocks [range]"
printf '%-22s %11s %11s   %-22s %-22s\n' figure new old "new/old median" "new/old p99"
rng() { set -- $(fig_stat "$1"); [ "$1" = - ] && echo - || printf '%.2f [%.2f-%.2f]' "$1" "$2" "$3"; }
us() { set -- $(fig_stat "$1"); [ "$1" = - ] && echo - || awk -v v="$1" 'BEGIN { printf "%.3f", v / 1000 }'; }
for f in $figures; do
	printf '%-22s %11s %11s   %-22s %-22s\n' "$f" "$(us "$TMP/$f.nm")" "$(us "$TMP/$f.om")" \
		"$(rng "$TMP/$f.rm")" "$(rng "$TMP/$f.rp")"
done
[ -n "$lab" ] || echo "(kudp and uudp figures: left out, no lab: needs root, ip and ethtool)"
echo "floor: each tree's build/bench/pingpong; ntpx: each tree's ntpprobe against its ntpreflect on loopback;" \
	"kudp/uudp: in a lab's fast path, server then client transport (uudp-kudp: a uudp client, a kernel server);" \
	"offsetfit: CPU time (us) of each tree's offsetfit on the same ${AB_RECORDS:-3000000} records (genrec)"
exit 0
