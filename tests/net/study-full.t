#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-study on a full disk: the package lives on a small tmpfs of this
# test's own; once the first run has started, a filler file takes every
# byte left.  The study stops with exit 1 and one line that says the disk
# is full, keeps nothing of the run it was in and writes no manifest (the
# package does not verify); with the filler gone, the same command
# continues to the end, every run is complete and checks, and --verify
# passes.  One family, one transport, a quick scaled-down run, in a lab of
# the test's own (lab_up).
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
need sha256sum dd mount umount
study=$NTPX_TOP/bin/ntpx-study

dir=/nonexistent	# the package: on the tmpfs, once it is mounted (setup)
seed=$((1 + $$ % 100000))
export NTPX_STUDY_SCALE=0.5
runs() { find "$dir/runs" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }
started() { [ "$(runs)" -ge 1 ]; }
done_count() { find "$dir/runs" -name "done" 2>/dev/null | wc -l; }
verify_to() { "$study" --verify "$dir" >/dev/null 2>"$1"; }
checked() {
	for r in "$dir"/runs/*/probe.rec; do
		offsetfit --check "$r" > /dev/null || return 1
	done
}
run_starts_once() {
	awk -F'\t' '$3 == "run_start" { n[$2]++ } END { for (r in n) if (n[r] != 1) exit 1; exit !(1 in n && 2 in n) }' "$dir/events.tsv"
}

# The analysis on a full disk: each script fails with exit 1 and a line
# that says the disk is full (ntpx-figures and ntpx-report once the
# tables are there); then the study, with room, runs the analysis (every
# run kept) and the package verifies.
full() { dd if=/dev/zero of="$mp/filler" bs=64k 2>/dev/null; return 0; }
analyse() {	# SCRIPT: its exit status in $TMP/SCRIPT.rc, stderr in .err
	"$NTPX_TOP/analysis/$1" "$dir" > /dev/null 2> "$TMP/$1.err"
	echo "$?" > "$TMP/$1.rc"
}
said_full() {
	for a in "$@"; do
		grep -q "^$a: cannot write $dir/.*: No space left on device\$" "$TMP/$a.err" || return 1
	done
}

test_expect_success "setup: a lab of the test's own" '
	lab_up sf
'
# The umount is registered before the study is spawned: a cleanup runs
# before those registered earlier, and the study must be gone first.
test_expect_success 'setup: a 4 MiB tmpfs for the package' '
	mp=/tmp/$(uniq_name ntpx-full) &&
	mkdir "$mp" &&
	test_atexit rmdir "$mp" &&
	mount -t tmpfs -o size=4m,mode=700 tmpfs "$mp" &&
	test_atexit umount "$mp" &&
	dir=$mp/pkg
'
test_expect_success 'setup: the study starts' '
	spawn pid "$study" --quick -r 2 -s "$seed" -f freerun -t udpslow --no-analysis "$dir" \
		2>"$TMP/part1.err"
'
test_expect_success 'the first run starts' '
	wait_until 120 started
'
# Every byte left: dd ends with ENOSPC.
test_expect_success 'the disk is full' '
	test_must_fail dd if=/dev/zero of="$mp/filler" bs=64k 2>/dev/null &&
	test_when_finished "rm -f $mp/probe" &&
	! dd if=/dev/zero of="$mp/probe" bs=4k count=1 2>/dev/null
'
test_expect_success 'the study stops with exit 1' '
	test_exit 1 wait "$pid"
'
test_expect_success 'one line says the disk is full and how to go on' '
	test_grep "^ntpx-study: $dir: no space left on device (run 1 failed.*); make room and run ntpx-study again on $dir to continue\$" \
		"$TMP/part1.err"
'
test_expect_success 'nothing of the run it was in is kept' '
	test_is "$(runs)" 0
'
test_expect_success 'no manifest' '
	test ! -e "$dir/MANIFEST.sha256"
'
test_expect_success '--verify fails on the stopped package' '
	test_exit 1 verify_to "$TMP/verify1.err"
'
test_expect_success '...saying why' '
	test_grep "no MANIFEST.sha256" "$TMP/verify1.err"
'

test_expect_success 'with room, the same command continues to the end' '
	rm -f "$mp/filler" &&
	"$study" "$dir" >/dev/null 2>"$TMP/part2.err"
'
test_expect_success 'both runs are done' '
	test_is "$(done_count)" 2
'
test_expect_success 'no failed run' '
	! find "$dir/runs" -name failed | grep -q .
'
test_expect_success "every run's records are whole (offsetfit --check)" '
	checked
'
test_expect_success "each run's start is in events.tsv once" '
	run_starts_once
'
test_expect_success '--verify passes on the finished package' '
	verify_to "$TMP/verify2.err"
'
test_expect_success 'the stopped run was done again' '
	test_grep "\[1/2\] freerun idle udpslow" "$TMP/part2.err"
'

test_expect_success GNUPLOT 'the analysis scripts on a full disk: exit 1 each' '
	test_when_finished "rm -f $mp/filler" &&
	full &&
	analyse ntpx-summarize &&
	rm -f "$mp/filler" &&
	"$NTPX_TOP/analysis/ntpx-summarize" "$dir" 2>/dev/null &&
	full &&
	analyse ntpx-figures &&
	analyse ntpx-report &&
	rm -f "$mp/filler" &&
	test_is "$(cat "$TMP/ntpx-summarize.rc") $(cat "$TMP/ntpx-figures.rc") $(cat "$TMP/ntpx-report.rc")" "1 1 1"
'
test_expect_success GNUPLOT '...each with one line that names the file and says the disk is full' '
	said_full ntpx-summarize ntpx-figures ntpx-report
'
test_expect_success GNUPLOT 'with room, the study runs the analysis' '
	"$study" "$dir" >"$TMP/part4.out" 2>"$TMP/part4.err"
'
test_expect_success GNUPLOT '...and writes its report' '
	test -s "$dir/report.html"
'
test_expect_success GNUPLOT '...and the package verifies' '
	"$study" --verify "$dir" >/dev/null 2>&1
'
done_testing
