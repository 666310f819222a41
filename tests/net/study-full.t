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

lab_up sf
mp=/tmp/$(uniq_name ntpx-full)
mkdir "$mp" || skip_all "cannot make $mp"
cleanup rmdir "$mp"
mount -t tmpfs -o size=4m,mode=700 tmpfs "$mp" || skip_all "cannot mount a tmpfs"
# Registered after the spawns below would be too late: a cleanup runs
# before those registered earlier, and the study must be gone first.
cleanup umount "$mp"

dir=$mp/pkg
seed=$((1 + $$ % 100000))
export NTPX_STUDY_SCALE=0.5
runs() { find "$dir/runs" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }
started() { [ "$(runs)" -ge 1 ]; }
done_count() { find "$dir/runs" -name done 2>/dev/null | wc -l; }

spawn pid "$study" --quick -r 2 -s "$seed" -f freerun -t udpslow --no-analysis "$dir" \
	2> "$TMP/part1.err"
ok "the first run starts" wait_until 120 started
# Every byte left: dd ends with ENOSPC.
dd if=/dev/zero of="$mp/filler" bs=64k 2>/dev/null
ok "the disk is full" sh -c "! dd if=/dev/zero of='$mp/probe' bs=4k count=1 2>/dev/null"
rm -f "$mp/probe"
wait "$pid"
is "$?" 1 "the study stops with exit 1"
ok "one line says the disk is full and how to go on" \
	grep -q "^ntpx-study: $dir: no space left on device (run 1 failed.*); make room and run ntpx-study again on $dir to continue\$" \
	"$TMP/part1.err"
is "$(runs)" 0 "nothing of the run it was in is kept"
ok "no manifest" test ! -e "$dir/MANIFEST.sha256"
"$study" --verify "$dir" > /dev/null 2> "$TMP/verify1.err"
is "$?" 1 "--verify fails on the stopped package"
ok "...saying why" grep -q "no MANIFEST.sha256" "$TMP/verify1.err"

rm -f "$mp/filler"
"$study" "$dir" > /dev/null 2> "$TMP/part2.err"
is "$?" 0 "with room, the same command continues to the end"
is "$(done_count)" 2 "both runs are done"
ok "no failed run" sh -c "! find '$dir/runs' -name failed | grep -q ."
checked() {
	for r in "$dir"/runs/*/probe.rec; do
		offsetfit --check "$r" > /dev/null || return 1
	done
}
ok "every run's records are whole (offsetfit --check)" checked
ok "each run's start is in events.tsv once" sh -c "
	awk -F'\t' '\$3 == \"run_start\" { n[\$2]++ } END { for (r in n) if (n[r] != 1) exit 1; exit !(1 in n && 2 in n) }' '$dir/events.tsv'"
"$study" --verify "$dir" > /dev/null 2> "$TMP/verify2.err"
is "$?" 0 "--verify passes on the finished package"
ok "the stopped run was done again" grep -q "\[1/2\] freerun idle udpslow" "$TMP/part2.err"

# The analysis on a full disk: each script fails with exit 1 and a line
# that says the disk is full (ntpx-figures and ntpx-report once the
# tables are there); then the study, with room, runs the analysis (every
# run kept) and the package verifies.
full() { dd if=/dev/zero of="$mp/filler" bs=64k 2>/dev/null; }
analyse() {	# SCRIPT: its exit status in $TMP/SCRIPT.rc, stderr in .err
	"$NTPX_TOP/analysis/$1" "$dir" > /dev/null 2> "$TMP/$1.err"
	echo "$?" > "$TMP/$1.rc"
}
said_full() {
	for a in "$@"; do
		grep -q "^$a: cannot write $dir/.*: No space left on device\$" "$TMP/$a.err" || return 1
	done
}
if command -v gnuplot >/dev/null; then
	full
	analyse ntpx-summarize
	rm -f "$mp/filler"
	"$NTPX_TOP/analysis/ntpx-summarize" "$dir" 2>/dev/null
	full
	analyse ntpx-figures
	analyse ntpx-report
	rm -f "$mp/filler"
	is "$(cat "$TMP/ntpx-summarize.rc") $(cat "$TMP/ntpx-figures.rc") $(cat "$TMP/ntpx-report.rc")" \
		"1 1 1" "the analysis scripts on a full disk: exit 1 each"
	ok "...each with one line that names the file and says the disk is full" \
		said_full ntpx-summarize ntpx-figures ntpx-report
	"$study" "$dir" > "$TMP/part4.out" 2> "$TMP/part4.err"
	is "$?" 0 "with room, the study runs the analysis"
	ok "...and writes its report" test -s "$dir/report.html"
	"$study" --verify "$dir" > /dev/null 2>&1
	is "$?" 0 "...and the package verifies"
else
	for t in 1 2 3 4 5; do skip "the analysis on a full disk" "missing gnuplot"; done
fi
done_testing
