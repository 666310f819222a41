#!/bin/sh
# SPDX-License-Identifier: ISC
# The stages family in the study: a quick study of it alone on the lab's
# fast path (a lab of the study's own), one condition that runs and one
# that needs a NIC's interrupts a veth does not have: the run's summary
# has every stage for both segments, the skipped condition says why in
# its summary, events and the package's table, and the report carries
# the section, its tables and its figures.
. "$(dirname "$0")/../lib.sh"
need_root
need ip tc
plan 9

study=$NTPX_BIN/ntpx-study
dir=$TMP/pkg
lab_of() { awk -F= '$1 == "lab" { print $2 }' "$dir/study.conf" 2>/dev/null; }
cleanup 'l=$(lab_of); [ -z "$l" ] || "$NTPX_BIN/ntpx-lab" -n "$l" down'
"$study" --quick -s 3 -f stages -c block-any,busy-irq -t udpfast "$dir" >/dev/null 2>"$TMP/study.err"
is "$?" 0 "a quick study of the stages family: exit 0"
run=$(ls -d "$dir"/runs/*-stages-block-any-udpfast-r1 2>/dev/null)
key() { awk -v k="$2" '$1 == k { print $2 }' "$1/summary.txt"; }
num() { echo "$1" | grep -Eq '^-?[0-9]+(\.[0-9]+)?$'; }
all_stages() {
	for seg in idle load; do
		for s in client_send c2r server_recv turnaround server_send r2c client_recv; do
			num "$(key "$run" ${seg}_${s}_med_us)" && num "$(key "$run" ${seg}_${s}_p99_us)" || return 1
		done
		num "$(key "$run" ${seg}_kernel_rms_us)" && num "$(key "$run" ${seg}_user_rms_us)" || return 1
	done
}
ok "block-any: every stage's median and p99, idle and loaded, and the noise by layer" all_stages
ok "its records carry the server's stamps (interleaved)" \
	sh -c "grep -q '^#stamps .*t3k=server' '$run/probe.rec'"
skip=$(ls -d "$dir"/runs/*-stages-busy-irq-udpfast-r1 2>/dev/null)
ok "busy-irq on a veth: skipped, with the reason in its summary" \
	grep -q '^skip_reason fast has no interrupts of its own' "$skip/summary.txt"
ok "... and in the events" grep -q 'run_skip.*busy-irq udpfast' "$dir/events.tsv"
is "$(awk -F'\t' '!/^#/ { print $1, $2 }' "$dir/results/stages-skipped.tsv")" "udpfast busy-irq" \
	"the package's table of skipped conditions"
is "$(awk -F'\t' '!/^#/ { print $1, $2, $3 }' "$dir/results/stages.tsv" | tr '\n' ';')" \
	"udpfast block-any idle;udpfast block-any load;" "stages.tsv: a row per segment of the condition that ran"
ok "report.html says which stage carries the jitter on each path" \
	grep -q 'udpfast, block-any, idle: the request path.*jitter is in <b>' "$dir/report.html"
ok "report.html shows both figures, and they exist" sh -c "
	grep -q 'figures/stages-udpfast.png' '$dir/report.html' &&
	grep -q 'figures/stages-noise-udpfast.png' '$dir/report.html' &&
	test -s '$dir/figures/stages-udpfast.png' -a -s '$dir/figures/stages-noise-udpfast.svg'"
done_testing
