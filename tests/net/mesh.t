#!/bin/sh
# SPDX-License-Identifier: ISC
# The mesh lab (ntpx-lab --hosts, issue 32) held against its truth: four
# hosts, each its own sim clock, each serving and probing every other
# (mesh-run), and ntpmesh on the records.
#
# Nothing here is a number of microseconds tuned on this machine.  What
# is asserted is either exact or follows from the truth the run carries:
#   - no record of any pair breaks the bound T3 - T4 <= true offset <=
#     T2 - T1 at any stamp layer (ntpprobe counts them; a break is a
#     stamp matched to the wrong datagram or a misread clock);
#   - the truth in the records is the clocks': a pair's true2 is what the
#     two clocks' states say at that instant (clockstep --show), to their
#     frequencies times the time it took to read them;
#   - the least-squares host offsets are a weighted sum of the links'
#     measured offsets along an acyclic unit flow from the reference (an
#     electrical flow), so each host's error against the truth is at most
#     (hosts - 1) times the largest link error the truth shows.
. "$(dirname "$0")/../lib.sh"

need_prereq ROOT
lab_up mesh --hosts 4 --seed 7

# bound LAYER FILE: "broken checked" from a probe's summary (ntpprobe(1)).
bound() {
	awk -v l="$1" '/truth bound/ { for (i = 1; i < NF; i++) if ($i == l) {
		v = $(i + 1); sub(/,$/, "", v); split(v, a, "/"); print a[1], a[2] } }' "$2"
}
# kv KIND NAME... KEY FILE: KEY's value on ntpmesh's line KIND 0 NAME...
kv() {
	_kind=$1
	shift
	_n=$(($# - 2))
	awk -v kind="$_kind" -v names="$(echo "$@" | cut -d' ' -f1-"$_n")" -v key="$(echo "$@" | cut -d' ' -f$((_n + 1)))" '
		BEGIN { nn = split(names, want, " ") }
		$1 == kind { ok = 1; for (i = 1; i <= nn; i++) if ($(i + 2) != want[i]) ok = 0
			if (!ok) next
			for (i = 3 + nn; i < NF; i++) if ($i == key) print $(i + 1) }' "$(eval echo "\${$#}")"
}

test_expect_success 'mesh-run: 12 directed pairs, a record file each' '
	ntpx-lab -n "$LAB" mesh-run -o "$TMP/sym" -d 6s -i 5ms 2>"$TMP/run.err" &&
	test_is "$(ls "$TMP/sym"/*.rec | wc -l)" 12
'

test_expect_success 'each file names its pair, and each probe had ok exchanges' '
	for f in "$TMP/sym"/*.rec; do
		p=$(basename "$f" .rec) &&
		test_grep -x "#pair ${p%-*} ${p#*-}" "$f" &&
		n=$(count_status "$f" ok) && test "$n" -gt 0 || return 1
	done
'

test_expect_success 'the truth bound: no record of any pair breaks it, at any layer' '
	for f in "$TMP/sym"/*.err; do
		case $f in *.reflect.err) continue ;; esac
		for l in user client-kernel kernel; do
			set -- $(bound "$l" "$f") && broken=$1 checked=$2 &&
			is_num "$broken" "$checked" && test "$checked" -gt 0 &&
			test_is "$broken" 0 || { diag "$f $l"; return 1; }
		done
	done &&
	diag "kernel layer: $(cat "$TMP/sym"/[A-D]-[A-D].err | awk "/truth bound/ { split(\$NF, a, \"/\"); n += a[2] } END { print n }") records checked"
'

# The true offset B - A now, from the clocks' states: "NS TOL SLOPE T0":
# the tolerance their frequencies times the time the two readings took,
# the slope of B - A (ns per ns), and the realtime they began at.
clocks_now() {
	t0=$(date +%s%N) &&
	clockstep --clock "$NTPX_CLOCK_A" --show >"$TMP/ca" &&
	clockstep --clock "$NTPX_CLOCK_B" --show >"$TMP/cb" &&
	t1=$(date +%s%N) &&
	awk -v dt="$((t1 - t0))" -v t0="$t0" '$1 == "offset_ns" { o[FILENAME] = $2 } $1 == "freq_ppm" { f[FILENAME] = $2 }
		END { a = ARGV[1]; b = ARGV[2]; fa = f[a] < 0 ? -f[a] : f[a]; fb = f[b] < 0 ? -f[b] : f[b]
			printf "%d %.0f %.12f %s\n", o[b] - o[a], (fa + fb) * 1e-6 * dt + 2, (f[b] - f[a]) * 1e-6, t0 }' \
		"$TMP/ca" "$TMP/cb"
}

test_expect_success 'the records carry the clocks'"'"' truth: A-B'"'"'s true2 is B - A as the clocks say' '
	rec_cols "$TMP/sym/A-B.rec" status t1 t4 true2 | awk "\$1 == \"ok\"" | tail -n 1 >"$TMP/last" &&
	read -r st t1 t4 true2 <"$TMP/last" &&
	set -- $(clocks_now) && diff_now=$1 tol=$2 slope=$3 now=$4 &&
	mid=$(((t1 + t4) / 2)) &&
	diag "true2/2 $((true2 / 2)) ns at the last record; B - A $diff_now ns $(((now - mid) / 1000000)) ms later (+-$tol), slope $slope" &&
	awk -v t="$true2" -v d="$diff_now" -v tol="$tol" -v s="$slope" -v el="$((now - mid))" "BEGIN {
		# mid is on A'"'"'s clock, at most 5 ms off realtime: s times that more
		e = t / 2 - (d - s * el); if (e < 0) e = -e; if (s < 0) s = -s
		exit !(e <= tol + s * 5e6 + 2) }"
'

test_expect_success 'ntpmesh --stamps kernel reads the run: 4 hosts, 3 loops' '
	ntpmesh --stamps kernel "$TMP/sym" >"$TMP/k.out" 2>"$TMP/k.err" &&
	test_grep -x "hosts A B C D" "$TMP/k.out" &&
	test_is "$(grep -c "^loop 0 " "$TMP/k.out")" 3 &&
	test_grep -x "stamps kernel" "$TMP/k.out"
'

test_expect_success 'each host'"'"'s least-squares error is at most 3 times the largest link error the truth shows' '
	for s in kernel user; do
		ntpmesh --stamps $s "$TMP/sym" >"$TMP/$s.out" 2>/dev/null &&
		maxl=$(awk "\$1 == \"link\" { for (i = 5; i < NF; i++) if (\$i == \"true_us\") { v = \$(i + 1) / 2; if (v < 0) v = -v; if (v > m) m = v } } END { print m + 0 }" "$TMP/$s.out") &&
		maxh=$(awk "\$1 == \"host\" { for (i = 4; i < NF; i++) if (\$i == \"ls_err_us\") { v = \$(i + 1); if (v < 0) v = -v; if (v > m) m = v } } END { print m + 0 }" "$TMP/$s.out") &&
		diag "$s stamps: largest link error $maxl us, largest host error $maxh us" &&
		awk -v h="$maxh" -v l="$maxl" "BEGIN { exit !(h <= 3 * l + 0.004) }" || return 1
	done
'

done_testing
