#!/bin/sh
# SPDX-License-Identifier: ISC
# SIGTERM and SIGINT mid-run: whole lines only, a summary, exit 0.
. "$(dirname "$0")/../lib.sh"

# FILE has at least 50 records.
has_50() { [ "$(grep -vc '^#' "$1")" -ge 50 ]; }
# A cut line would have fewer fields than #fields names, or no final
# newline.
whole_lines() {
	awk '/^#fields / { n = NF - 1; next } /^#/ { next }
		NF != n { exit 1 }' "$1"
}
last_char() { tail -c1 "$1" | od -An -c | tr -d ' '; }

test_expect_success 'setup: a reflector' '
	start_reflector
'

for sig in TERM INT; do
	test_expect_success "SIG$sig: exit status 0" '
		spawn pid ntpprobe -i 5ms "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rec.$sig" 2>"$TMP/err.$sig" &&
		wait_until 10 has_50 "$TMP/rec.$sig" &&
		kill -$sig $pid &&
		test_exit 0 wait $pid
	'

	test_expect_success "SIG$sig: every line is whole" '
		whole_lines "$TMP/rec.$sig"
	'

	test_expect_success "SIG$sig: the file ends with a newline" '
		test_is "$(last_char "$TMP/rec.$sig")" "\\n"
	'

	test_expect_success "SIG$sig: summary printed" '
		test_grep "^ntpprobe: sent [0-9]*, ok " "$TMP/err.$sig"
	'
done
done_testing
