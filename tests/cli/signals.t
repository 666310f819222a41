#!/bin/sh
# SPDX-License-Identifier: ISC
# SIGTERM and SIGINT mid-run: whole lines only, a summary, exit 0.
. "$(dirname "$0")/../lib.sh"

start_reflector

for sig in TERM INT; do
	ntpprobe -i 5ms "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rec.$sig" 2>"$TMP/err.$sig" &
	pid=$!
	cleanup "kill $pid"
	wait_until 10 sh -c "[ \$(grep -vc '^#' '$TMP/rec.$sig') -ge 50 ]"
	kill -$sig $pid
	wait $pid
	is "$?" 0 "SIG$sig: exit status 0"
	# A cut line would have fewer fields than #fields names, or no final
	# newline.
	ok "SIG$sig: every line is whole" awk '/^#fields / { n = NF - 1; next } /^#/ { next }
		NF != n { exit 1 }' "$TMP/rec.$sig"
	ok "SIG$sig: the file ends with a newline" test "$(tail -c1 "$TMP/rec.$sig" | od -An -c | tr -d ' ')" = '\n'
	ok "SIG$sig: summary printed" grep -q '^ntpprobe: sent [0-9]*, ok ' "$TMP/err.$sig"
done
done_testing
