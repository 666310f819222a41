#!/bin/sh
# SPDX-License-Identifier: ISC
# The stages family in the study: a quick study of it alone on the lab's
# fast path (a lab of the study's own), one condition that runs and one
# that needs a NIC's interrupts a veth does not have: the run's summary
# has every stage for both segments, the skipped condition says why in
# its summary, events and the package's table, and the report carries
# the section, its tables and its figures.
. "$(dirname "$0")/../lib.sh"
need_prereq LAB

study=$NTPX_BIN/ntpx-study
dir=$TMP/pkg
study_lab_down() { l=$(study_lab "$dir"); [ -z "$l" ] || "$NTPX_BIN/ntpx-lab" -n "$l" down; }
# The run directory of condition COND.
run_of() { ls -d "$dir"/runs/*-stages-"$1"-udpfast-r1 2>/dev/null; }
key() { awk -v k="$2" '$1 == k { print $2 }' "$1/summary.txt"; }
all_stages() {	# RUN
	for seg in idle load; do
		for s in client_send c2r server_recv turnaround server_send r2c client_recv; do
			is_num "$(key "$1" ${seg}_${s}_med_us)" "$(key "$1" ${seg}_${s}_p99_us)" || return 1
		done
		is_num "$(key "$1" ${seg}_kernel_rms_us)" "$(key "$1" ${seg}_user_rms_us)" || return 1
	done
}
skipped_rows() { awk -F'\t' '!/^#/ { print $1, $2 }' "$dir/results/stages-skipped.tsv"; }
stage_rows() { awk -F'\t' '!/^#/ { print $1, $2, $3 }' "$dir/results/stages.tsv" | tr '\n' ';'; }

test_expect_success 'a quick study of the stages family: exit 0' '
	test_atexit study_lab_down &&
	"$study" --quick --seed 3 -f stages --conditions block-any,busy-irq -t udpfast "$dir" >/dev/null 2>"$TMP/study.err"
'

test_expect_success "block-any: every stage's median and p99, idle and loaded, and the noise by layer" '
	all_stages "$(run_of block-any)"
'

test_expect_success "its records carry the server's stamps (interleaved)" '
	test_grep "^#stamps .*t3k=server" "$(run_of block-any)/probe.rec"
'

test_expect_success 'busy-irq on a veth: skipped, with the reason in its summary' '
	test_grep "^skip_reason fast has no interrupts of its own" "$(run_of busy-irq)/summary.txt"
'

test_expect_success '... and in the events' '
	test_grep "run_skip.*busy-irq udpfast" "$dir/events.tsv"
'

test_expect_success "the package's table of skipped conditions" '
	test_is "$(skipped_rows)" "udpfast busy-irq"
'

test_expect_success 'stages.tsv: a row per segment of the condition that ran' '
	test_is "$(stage_rows)" "udpfast block-any idle;udpfast block-any load;"
'

test_expect_success 'report.html says which stage carries the jitter on each path' '
	test_grep "udpfast, block-any, idle: the request path.*jitter is in <b>" "$dir/report.html"
'

test_expect_success 'report.html shows both figures, and they exist' '
	test_grep "figures/stages-udpfast.png" "$dir/report.html" &&
	test_grep "figures/stages-noise-udpfast.png" "$dir/report.html" &&
	test -s "$dir/figures/stages-udpfast.png" -a -s "$dir/figures/stages-noise-udpfast.svg"
'
done_testing
