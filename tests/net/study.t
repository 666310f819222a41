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

# NO_RDMA: this host has no RDMA device (then ib is listed absent).
test_lazy_prereq NO_RDMA '! { [ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; }'
# FIGURES: analysis/ntpx-figures is in the tree.
test_lazy_prereq FIGURES '[ -x "$NTPX_TOP/analysis/ntpx-figures" ]'

# Whatever happens: the lab the study named in its configuration goes.
labs_of() { awk '$1 == "lab:" { print $2 }' "$dir/inventory/lab.txt" 2>/dev/null; }
lab_gone() { ! ip netns list | awk '{ print $1 }' | grep -qx "ntpx-ref-$1"; }
done_count() { find "$dir/runs" -name 'done' 2>/dev/null | wc -l; }
two_done() { [ "$(done_count)" -ge 2 ]; }
three_done() { [ "$(done_count)" -gt "$n1" ]; }
unlocked() { flock -n "$dir" true; }
# The lab a study's stderr says it made.
made_lab() { awk '/making lab/ { print $NF }' "$1"; }
# "RUN/done CONTENT" of every run done.
done_files() { (cd "$dir/runs" && for f in */done; do echo "$f $(cat "$f")"; done); }
verify_quiet() { "$study" --verify "$dir" >/dev/null 2>&1; }

# Every file the manifest lists is there, and it lists some (a manifest
# that is not there lists nothing).
manifest_files_there() {
	sed 's/^[0-9a-f]*  //' "$dir/MANIFEST.sha256" >"$TMP/listed" &&
	test -s "$TMP/listed" &&
	while read -r f; do
		test -f "$dir/$f" || { diag "listed, not there: $f"; return 1; }
	done <"$TMP/listed"
}

present_transports() {
	awk -F'\t' '!/^#/ && $2 == "present" { print $1 }' "$dir/transports.tsv" | paste -sd, -
}
# "FAMILY CONDITION TRANSPORT 1" of every cell of the study (unsorted).
cells_of() {
	for f in $(echo "$fams" | tr , ' '); do
		for c in $("$NTPX_BIN/ntpx-$f" --list-conditions); do
			case ,$conds, in *",$c,"*) ;; *) continue ;; esac
			for t in $(echo "$present" | tr , ' '); do echo "$f $c $t 1"; done
		done
	done
}
order_cells() { awk -F'\t' '!/^#/ { print $2, $3, $4, $5 }' "$dir/order.tsv"; }
order_numbers() { awk -F'\t' '!/^#/ { print $1 }' "$dir/order.tsv" | sort -n | paste -sd' ' -; }

ib_row() { awk -F'\t' '$1 == "ib" { print $2 "/" $3 }' "$dir/transports.tsv"; }

events_ok() {
	awk -F'\t' '!/^#/ { e[$2 " " $3]++ } END {
		for (k in e) if (e[k] != 1) exit 1 }' "$dir/events.tsv" &&
	for r in $(awk -F'\t' '!/^#/ { print $1 }' "$dir/order.tsv"); do
		grep -q "	$r	run_start	" "$dir/events.tsv" &&
		grep -q "	$r	run_end	" "$dir/events.tsv" || return 1
	done &&
	awk -F'\t' '$3 == "restart_client" { a = 1 } $3 == "step" && $4 == "-120s" { b = 1 }
		END { exit !(a && b) }' "$dir/events.tsv"
}
reacquire_said() {
	for s in "$dir"/runs/*-recovery-*/summary.txt; do
		awk '$1 == "reacquire_s" && $2 ~ /^[0-9.]+$/ { f = 1 } END { exit !f }' "$s" || return 1
	done
}
png_ok() {	# FILE: non-empty, with PNG's signature
	test -s "$1" && head -c 8 "$1" | od -An -tx1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a
}

# Part one, interrupted once two runs are done.
test_expect_success 'setup: part one, a quick study in a lab of its own' '
	unset NTPX_REF_EXEC NTPX_CLIENT_EXEC &&
	test_atexit "for l in \$(labs_of); do \"\$NTPX_BIN/ntpx-lab\" -n \"\$l\" down; done" &&
	spawn pid "$study" --quick --seed "$seed" -f "$fams" --conditions "$conds" -t udpslow,uudpfast,ib \
		--no-analysis "$dir" 2>"$TMP/part1.err"
'
test_expect_success 'two runs finish' '
	wait_until 120 two_done
'
test_expect_success 'the study ends on SIGTERM with 143' '
	kill -TERM "$pid" &&
	test_exit 143 wait "$pid"
'
test_expect_success 'the lab of the first part is gone' '
	lab1=$(study_lab "$dir") &&
	diag "lab of the first part: $lab1" &&
	lab_gone "$lab1"
'
test_expect_success 'the interrupted study has no manifest' '
	test ! -e "$dir/MANIFEST.sha256"
'

# Part two, killed with SIGKILL after one more run: it cannot clean up.
# What it started finishes its run and lets go of the directory's lock;
# then part three removes the lab it left.
test_expect_success 'setup: part two, the same study continued' '
	n1=$(done_count) &&
	spawn pid2 "$study" --no-analysis "$dir" 2>"$TMP/part2k.err"
'
test_expect_success 'one more run finishes' '
	test_when_finished stop_pid "$pid2" KILL &&
	wait_until 120 three_done
'
test_expect_success 'what the killed study started lets go of the directory' '
	labk=$(made_lab "$TMP/part2k.err") &&
	wait_until 60 unlocked
'

# Part three: the same command continues.
test_expect_success 'the continued study finishes' '
	ndone=$(done_count) &&
	done_files >"$TMP/done.before" &&
	"$study" "$dir" >"$TMP/part2.out" 2>"$TMP/part2.err"
'
test_expect_success 'every run in the order has its done file' '
	total=$(grep -vc "^#" "$dir/order.tsv") &&
	test_is "$(done_count)" "$total"
'
test_expect_success 'runs done before the interruption were not done again' '
	done_files >"$TMP/done.after" &&
	LC_ALL=C comm -23 "$TMP/done.before" "$TMP/done.after" >"$TMP/redone" &&
	test ! -s "$TMP/redone"
'
test_expect_success 'the last part says how many it kept' '
	test_grep " $ndone kept from before" "$TMP/part2.err"
'
test_expect_success 'the last part removed the lab the killed one left' '
	diag "lab the killed part left: $labk" &&
	test_grep "removing lab $labk, left by an earlier session" "$TMP/part2.err" &&
	lab_gone "$labk"
'
test_expect_success 'the last part made a lab of its own and removed it' '
	lab2=$(made_lab "$TMP/part2.err") &&
	diag "lab of the last part: $lab2" &&
	test -n "$lab2" &&
	test "$lab2" != "$lab1" &&
	lab_gone "$lab2"
'

# The package.
test_expect_success 'every file the manifest lists is there' '
	manifest_files_there
'
test_expect_success "the manifest lists the contract's files" '
	for f in study.conf order.tsv transports.tsv events.tsv inventory/kernel.txt inventory/cpu.txt \
		inventory/nics.txt inventory/rdma.txt inventory/tools.txt inventory/lab.txt
	do
		grep -q "  $f\$" "$dir/MANIFEST.sha256" || return 1
	done
'
test_expect_success '--verify passes on the package' '
	"$study" --verify "$dir" >/dev/null
'
test_expect_success '--verify fails with 1 after one byte changed' '
	rec=$(ls "$dir"/runs/*/probe.rec | head -n 1) &&
	cp "$rec" "$TMP/rec.orig" &&
	test_when_finished "cp $TMP/rec.orig $rec" &&
	printf 9 | dd of="$rec" bs=1 seek=40 conv=notrunc 2>/dev/null &&
	test_exit 1 verify_quiet
'
test_expect_success '--verify fails with 1 on a file not in the manifest' '
	: >"$dir/stray" &&
	test_when_finished "rm -f $dir/stray" &&
	test_exit 1 verify_quiet
'

# The order: a permutation of cells x repetitions that the seed gives again.
test_expect_success 'the seed reproduces order.tsv' '
	present=$(present_transports) &&
	"$study" --plan --seed "$seed" --reps 1 -f "$fams" --conditions "$conds" -t "$present" >"$TMP/order.again" &&
	cmp -s "$TMP/order.again" "$dir/order.tsv"
'
test_expect_success 'order.tsv numbers its runs 1..N' '
	cells_of | sort >"$TMP/cells" &&
	test -s "$TMP/cells" &&
	order_cells | sort >"$TMP/ordered" &&
	test_is "$(order_numbers)" "$(seq 1 "$(wc -l <"$TMP/cells")" | paste -sd" " -)"
'
test_expect_success 'order.tsv holds every cell once' '
	cmp -s "$TMP/cells" "$TMP/ordered"
'

# Each table is there and has rows, each row its header's fields; in all
# but transports.tsv, what is not named text is a number or "-".
test_expect_success "every row of the package's tables parses" '
	rows_parse -t family,condition,transport "$dir/order.tsv" &&
	rows_parse -t event,detail "$dir/events.tsv" &&
	rows_parse "$dir/transports.tsv" &&
	rows_parse -t family,condition,transport,action,dir "$dir/results/runs.tsv" &&
	rows_parse -t transport,jitter_stage_idle,jitter_stage_load "$dir/results/findings.tsv" &&
	for f in $(echo "$fams" | tr , " "); do
		rows_parse -t transport,condition,loss "$dir/results/$f.tsv" || return 1
	done
'
test_expect_success NO_RDMA 'ib is absent: no RDMA device' '
	test_is "$(ib_row)" "absent/no RDMA device"
'
test_expect_success 'each run has its start and end events and its action' '
	events_ok
'
test_expect_success 'recovery runs say how long reacquiring took' '
	reacquire_said
'

# Real hosts' way: the prefixes given, the transports defined with -T;
# here both prefixes point into a lab of the test's own.  No lab of the
# study's, the endpoints are the definitions'.
test_expect_success "setup: a lab of the test's own for the prefixes" '
	lab3=$(uniq_name v) &&
	test_atexit "$NTPX_BIN/ntpx-lab -n $lab3 down" &&
	ntpx-lab -n "$lab3" up >/dev/null
'
test_expect_success 'with prefixes and -T: the runs on the defined endpoints, no lab made' '
	NTPX_REF_EXEC="ntpx-lab -n $lab3 exec ref" NTPX_CLIENT_EXEC="ntpx-lab -n $lab3 exec client" \
		"$study" --quick -f freerun -T udp1=10.77.1.1,10.77.1.2,slow,slow -t udp1,ib0 \
		--no-analysis "$TMP/hosts" >/dev/null 2>"$TMP/hosts.err" &&
	grep -qx "client_endpoint udp://10.77.1.1:12300?dev=slow" "$TMP"/hosts/runs/1-freerun-idle-udp1-r1/summary.txt &&
	test -f "$TMP"/hosts/runs/1-freerun-idle-udp1-r1/done &&
	grep -q "^ib0	absent	" "$TMP/hosts/transports.tsv" &&
	test_grep ! "making lab" "$TMP/hosts.err"
'

test_expect_success FIGURES 'every figure is a non-empty PNG' '
	ls "$dir"/figures/*.png >/dev/null 2>&1 &&
	for p in "$dir"/figures/*.png
	do
		png_ok "$p" || return 1
	done
'
done_testing
