#!/bin/sh
# SPDX-License-Identifier: ISC
# offsetfit --openmetrics and ntpstages --openmetrics: the summaries in the
# Prometheus text format, checked by promtool (`promtool check metrics`,
# from Debian's prometheus package: scripts/interop-pkgs unpacks the one
# binary under build/interop/promtool), with the numbers of the tools'
# own tables, the endpoint and transport as labels (escaped), and a write
# error as exit 1.
. "$(dirname "$0")/../lib.sh"

PROMTOOL=$NTPX_TOP/build/interop/promtool/promtool
[ -x "$PROMTOOL" ] || PROMTOOL=$(command -v promtool) || PROMTOOL=
test_lazy_prereq PROMTOOL '[ -n "$PROMTOOL" ]'

# promtool's verdict on FILE: exit 0 and nothing said, or the file and
# what it said.
promtool_ok() {
	"$PROMTOOL" check metrics <"$1" >"$1.lint" 2>&1 && [ ! -s "$1.lint" ] && return 0
	cat "$1.lint" "$1" >&4
	return 1
}
# The label of the endpoint udp://we"ird\host:1, escaped as the format says.
weird_label() { grep -qF 'endpoint="udp://we\"ird\\host:1",transport="udp"' "$1"; }
# The value of the sample of FILE whose name and labels match PATTERN (ERE).
sample() { grep -E "^$2 " "$1" | awk '{ print $NF }'; }
# Whether A (seconds) and B (us) are the same number to the table's 1 ns.
same_us() { awk -v a="$1" -v b="$2" 'BEGIN { d = a * 1e6 - b; exit !(d < 0.0015 && d > -0.0015) }'; }

test_expect_success 'setup: 50 exchanges with a reflector, by name' '
	start_reflector &&
	ntpprobe -4 -c 50 -i 5ms -w 5s "localhost:$REFLECT_PORT" >"$TMP/rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/rec" ok)" 50
'

test_expect_success PROMTOOL 'offsetfit --openmetrics: promtool check metrics passes' '
	offsetfit --openmetrics "$TMP/rec" >"$TMP/fit.prom" &&
	promtool_ok "$TMP/fit.prom"
'

test_expect_success 'offsetfit --openmetrics: the endpoint as given and its transport as labels' '
	L="endpoint=\"udp://localhost:$REFLECT_PORT\",transport=\"udp\"" &&
	test_is "$(sample "$TMP/fit.prom" "ntpx_ok_records\{$L\}")" 50 &&
	test_grep "^ntpx_delay_seconds{$L,quantile=\"0.99\"} " "$TMP/fit.prom"
'

test_expect_success 'offsetfit --openmetrics: the numbers of the key-value summary' '
	offsetfit "$TMP/rec" >"$TMP/fit.kv" &&
	kv() { awk -v k="$1" "\$1 == k { print \$2 }" "$TMP/fit.kv"; } &&
	same_us "$(sample "$TMP/fit.prom" "ntpx_delay_seconds\{.*quantile=\"0.5\"\}")" "$(kv rtt_median_us)" &&
	same_us "$(sample "$TMP/fit.prom" "ntpx_delay_seconds\{.*quantile=\"0\"\}")" "$(kv rtt_min_us)" &&
	same_us "$(sample "$TMP/fit.prom" "ntpx_residual_rms_seconds\{.*\}")" "$(kv rms_us)" &&
	same_us "$(sample "$TMP/fit.prom" "ntpx_drift_ratio\{.*\}")" "$(kv b_ppm)" &&
	test_is "$(sample "$TMP/fit.prom" "ntpx_delay_seconds_count\{.*\}")" "$(kv n)"
'

test_expect_success PROMTOOL 'a quote, a backslash in the endpoint: escaped, still valid' '
	sed "s|^#endpoint .*|#endpoint udp://we\"ird\\\\host:1|" "$TMP/rec" >"$TMP/weird.rec" &&
	offsetfit --openmetrics "$TMP/weird.rec" >"$TMP/weird.prom" &&
	promtool_ok "$TMP/weird.prom" &&
	weird_label "$TMP/weird.prom"
'

test_expect_success PROMTOOL 'records without #endpoint: no labels, still valid' '
	grep -v "^#endpoint" "$TMP/rec" >"$TMP/bare.rec" &&
	offsetfit --openmetrics "$TMP/bare.rec" >"$TMP/bare.prom" &&
	promtool_ok "$TMP/bare.prom" &&
	test_grep "^ntpx_ok_records 50$" "$TMP/bare.prom"
'

test_expect_success PROMTOOL 'ntpstages --openmetrics: promtool check metrics passes' '
	ntpstages --openmetrics "$TMP/rec" >"$TMP/st.prom" &&
	promtool_ok "$TMP/st.prom"
'

test_expect_success 'ntpstages --openmetrics: the numbers of its tables' '
	ntpstages "$TMP/rec" >"$TMP/st.txt" &&
	med=$(awk "\$1 == \"client_send\" { print \$4 }" "$TMP/st.txt") &&
	test -n "$med" &&
	same_us "$(sample "$TMP/st.prom" "ntpx_stage_seconds\{.*stage=\"client_send\",quantile=\"0.5\"\}")" "$med" &&
	off=$(awk "\$1 == \"user\" { print \$3 }" "$TMP/st.txt") &&
	same_us "$(sample "$TMP/st.prom" "ntpx_layer_offset_seconds\{.*layer=\"user\"\}")" "$off" &&
	test_is "$(sample "$TMP/st.prom" "ntpx_stage_seconds_count\{.*stage=\"client_send\"\}")" \
		"$(awk "\$1 == \"client_send\" { print \$3 }" "$TMP/st.txt")"
'

test_expect_success 'usage: --openmetrics goes alone' '
	test_exit 2 offsetfit --openmetrics --json "$TMP/rec" 2>/dev/null &&
	test_exit 2 offsetfit --openmetrics --residuals "$TMP/rec" 2>/dev/null &&
	test_exit 2 ntpstages --openmetrics -e "$TMP/rec" 2>/dev/null
'

test_expect_success 'a write error: exit 1, one line' '
	test_exit 1 offsetfit --openmetrics "$TMP/rec" >/dev/full 2>"$TMP/full1" &&
	test_grep "write error on standard output" "$TMP/full1" &&
	test_is "$(wc -l <"$TMP/full1")" 1 &&
	test_exit 1 ntpstages --openmetrics "$TMP/rec" >/dev/full 2>"$TMP/full2" &&
	test_grep "write error on standard output" "$TMP/full2" &&
	test_is "$(wc -l <"$TMP/full2")" 1
'
done_testing
