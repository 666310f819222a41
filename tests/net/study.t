#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-study: a very short quick study in its own lab (NTPX_STUDY_SCALE
# shrinks the durations), killed by its PID in the middle and continued:
# the runs already done are kept (their done files unchanged), the lab is
# gone after each part, the package matches its manifest, --verify fails
# after one byte changes and on an unlisted file, the order is a
# permutation of the cells that the seed reproduces, every table row has
# its header's columns, ib is absent for want of an RDMA device, the
# events and summaries are there.  The figures' PNG check waits for
# analysis/ (skipped with the reason while it is not in the tree).
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
need sha256sum
study=$NTPX_TOP/bin/ntpx-study

dir=$TMP/pkg
seed=$((1 + $$ % 100000))
fams=freerun,recovery,steady
conds=idle,client_restart,step_120s,disciplined
export NTPX_STUDY_SCALE=0.3
unset NTPX_REF_EXEC NTPX_CLIENT_EXEC

# Whatever happens: the lab the study named in its configuration goes.
lab_of() { awk -F= '$1 == "lab" { print $2 }' "$dir/study.conf" 2>/dev/null; }
labs_of() { awk '$1 == "lab:" { print $2 }' "$dir/inventory/lab.txt" 2>/dev/null; }
cleanup 'for l in $(labs_of); do "$NTPX_BIN/ntpx-lab" -n "$l" down; done'
lab_gone() { ! ip netns list | awk '{ print $1 }' | grep -qx "ntpx-ref-$1"; }
done_count() { find "$dir/runs" -name 'done' 2>/dev/null | wc -l; }
two_done() { [ "$(done_count)" -ge 2 ]; }

# Part one, interrupted once two runs are done.
spawn pid "$study" --quick -s "$seed" -f "$fams" -c "$conds" -t udpslow,uudpfast,ib \
	--no-analysis "$dir" 2> "$TMP/part1.err"
ok "two runs finish" wait_until 120 two_done
kill -TERM "$pid"
wait "$pid"
is "$?" 143 "the study ends on SIGTERM with 143"
lab1=$(lab_of)
ok "the lab of the first part is gone ($lab1)" lab_gone "$lab1"
ok "the interrupted study has no manifest" test ! -e "$dir/MANIFEST.sha256"
n1=$(done_count)

# Part two, killed with SIGKILL after one more run: it cannot clean up.
# What it started finishes its run and lets go of the directory's lock;
# then part three removes the lab it left.
spawn pid2 "$study" --no-analysis "$dir" 2> "$TMP/part2k.err"
three_done() { [ "$(done_count)" -gt "$n1" ]; }
ok "one more run finishes" wait_until 120 three_done
kill -KILL "$pid2"
wait "$pid2" 2>/dev/null
labk=$(awk '/making lab/ { print $NF }' "$TMP/part2k.err")
unlocked() { flock -n "$dir" true; }
ok "what the killed study started lets go of the directory" wait_until 60 unlocked
ndone=$(done_count)
(cd "$dir/runs" && for f in */done; do echo "$f $(cat "$f")"; done) > "$TMP/done.before"

# Part three: the same command continues.
"$study" "$dir" > "$TMP/part2.out" 2> "$TMP/part2.err"
is "$?" 0 "the continued study finishes"
total=$(grep -vc '^#' "$dir/order.tsv")
is "$(done_count)" "$total" "every run in the order has its done file"
(cd "$dir/runs" && for f in */done; do echo "$f $(cat "$f")"; done) > "$TMP/done.after"
ok "runs done before the interruption were not done again" \
	sh -c "LC_ALL=C comm -23 '$TMP/done.before' '$TMP/done.after' | grep -q . && exit 1 || exit 0"
ok "the last part says how many it kept" grep -q " $ndone kept from before" "$TMP/part2.err"
ok "the last part removed the lab the killed one left ($labk)" sh -c "
	grep -q 'removing lab $labk, left by an earlier session' '$TMP/part2.err' &&
	! ip netns list | awk '{ print \$1 }' | grep -qx 'ntpx-ref-$labk'"
lab2=$(awk '/making lab/ { print $NF }' "$TMP/part2.err")
ok "the last part made a lab of its own ($lab2) and removed it" \
	sh -c "[ -n '$lab2' ] && [ '$lab2' != '$lab1' ] &&
		! ip netns list | awk '{ print \$1 }' | grep -qx 'ntpx-ref-$lab2'"

# The package.
ok "every file the manifest lists is there" \
	sh -c "cd '$dir' && sed 's/^[0-9a-f]*  //' MANIFEST.sha256 | while read -r f; do test -s \"\$f\" || test -f \"\$f\" || exit 1; done"
ok "the manifest lists the contract's files" sh -c "cd '$dir' &&
	for f in study.conf order.tsv transports.tsv events.tsv inventory/kernel.txt inventory/cpu.txt \
		inventory/nics.txt inventory/rdma.txt inventory/tools.txt inventory/lab.txt; do
		grep -q \"  \$f\$\" MANIFEST.sha256 || exit 1; done"
ok "--verify passes on the package" sh -c "'$study' --verify '$dir' >/dev/null"
rec=$(ls "$dir"/runs/*/probe.rec | head -n 1)
cp "$rec" "$TMP/rec.orig"
printf '9' | dd of="$rec" bs=1 seek=40 conv=notrunc 2>/dev/null
ok "--verify fails with 1 after one byte changed" \
	sh -c "'$study' --verify '$dir' >/dev/null 2>&1; test \$? = 1"
cp "$TMP/rec.orig" "$rec"
: > "$dir/stray"
ok "--verify fails with 1 on a file not in the manifest" \
	sh -c "'$study' --verify '$dir' >/dev/null 2>&1; test \$? = 1"
rm -f "$dir/stray"

# The order: a permutation of cells x repetitions that the seed gives again.
present=$(awk -F'\t' '!/^#/ && $2 == "present" { print $1 }' "$dir/transports.tsv" | paste -sd, -)
"$study" --plan -s "$seed" -r 1 -f "$fams" -c "$conds" -t "$present" > "$TMP/order.again"
ok "the seed reproduces order.tsv" cmp -s "$TMP/order.again" "$dir/order.tsv"
for f in $(echo "$fams" | tr , ' '); do
	for c in $("$NTPX_BIN/ntpx-$f" --list-conditions); do
		case ,$conds, in *",$c,"*) ;; *) continue ;; esac
		for t in $(echo "$present" | tr , ' '); do echo "$f $c $t 1"; done
	done
done | sort > "$TMP/cells"
awk -F'\t' '!/^#/ { print $2, $3, $4, $5 }' "$dir/order.tsv" | sort > "$TMP/ordered"
is "$(awk -F'\t' '!/^#/ { print $1 }' "$dir/order.tsv" | sort -n | paste -sd' ' -)" \
	"$(seq 1 "$(wc -l < "$TMP/cells")" | paste -sd' ' -)" "order.tsv numbers its runs 1..N"
ok "order.tsv holds every cell once" cmp -s "$TMP/cells" "$TMP/ordered"

# Tables: every row has as many tab-separated fields as its #fields line.
rows_parse() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		awk -F'\t' '/^#fields/ { n = split($0, h, /[ \t]/) - 1; next }
			/^#/ { next }
			{ if (!n || NF != n) { print FILENAME ": " NR ": " NF " fields, want " n; bad = 1 } }
			END { exit bad }' "$f" || return 1
	done
}
ok "every row of the package's tables parses" rows_parse "$dir/order.tsv" \
	"$dir/transports.tsv" "$dir/events.tsv" "$dir"/results/*.tsv

if [ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	skip "ib listed absent" "this host has an RDMA device"
else
	is "$(awk -F'\t' '$1 == "ib" { print $2 "/" $3 }' "$dir/transports.tsv")" \
		"absent/no RDMA device" "ib is absent: no RDMA device"
fi

ok "each run has its start and end events and its action" sh -c "
	awk -F'\t' '!/^#/ { e[\$2 \" \" \$3]++ } END {
		for (k in e) if (e[k] != 1) exit 1 }' '$dir/events.tsv' &&
	for r in \$(awk -F'\t' '!/^#/ { print \$1 }' '$dir/order.tsv'); do
		grep -q \"	\$r	run_start	\" '$dir/events.tsv' &&
		grep -q \"	\$r	run_end	\" '$dir/events.tsv' || exit 1
	done &&
	awk -F'\t' '\$3 == \"restart_client\" { a = 1 } \$3 == \"step\" && \$4 == \"-120s\" { b = 1 }
		END { exit !(a && b) }' '$dir/events.tsv'"
ok "recovery runs say how long reacquiring took" sh -c "
	for s in '$dir'/runs/*-recovery-*/summary.txt; do
		awk '\$1 == \"reacquire_s\" && \$2 ~ /^[0-9.]+\$/ { f = 1 } END { exit !f }' \"\$s\" || exit 1
	done"

# Real hosts' way: the prefixes given, the transports defined with -T;
# here both prefixes point into a lab of the test's own.  No lab of the
# study's, the endpoints are the definitions'.
lab3=$(uniq_name v)
cleanup "$NTPX_BIN/ntpx-lab -n $lab3 down"
if ntpx-lab -n "$lab3" up >/dev/null; then
	NTPX_REF_EXEC="ntpx-lab -n $lab3 exec ref" NTPX_CLIENT_EXEC="ntpx-lab -n $lab3 exec client" \
		"$study" --quick -f freerun -T udp1=10.77.1.1,10.77.1.2,slow,slow -t udp1,ib0 \
		--no-analysis "$TMP/hosts" > /dev/null 2> "$TMP/hosts.err"
	ok "with prefixes and -T: the runs on the defined endpoints, no lab made" sh -c "
		grep -qx 'client_endpoint udp://10.77.1.1:12300?dev=slow' '$TMP'/hosts/runs/1-freerun-idle-udp1-r1/summary.txt &&
		test -f '$TMP'/hosts/runs/1-freerun-idle-udp1-r1/done &&
		grep -q '^ib0	absent	' '$TMP/hosts/transports.tsv' &&
		! grep -q 'making lab' '$TMP/hosts.err'"
else
	skip "with prefixes and -T" "cannot make a lab"
fi

if [ -x "$NTPX_TOP/analysis/ntpx-figures" ]; then
	ok "every figure is a non-empty PNG" sh -c "
		ls '$dir'/figures/*.png >/dev/null 2>&1 || exit 1
		for p in '$dir'/figures/*.png; do
			test -s \"\$p\" && head -c 8 \"\$p\" | od -An -tx1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a || exit 1
		done"
else
	skip "every figure is a non-empty PNG" "analysis/ntpx-figures is not in this tree yet"
fi
done_testing
