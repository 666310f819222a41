#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpsec's ntpdig as a client of ntpreflect.  ntpdig only speaks to port
# 123, so both run in a network namespace of their own (unshare -n), where
# port 123 on its loopback is ours and no other host is reachable.
. "$(dirname "$0")/../lib.sh"
need ntpdig unshare
need_root

unshare -n sh -c '
	ip link set lo up
	ntpreflect udp://127.0.0.1:123 2>"$1/reflect.err" &
	pid=$!
	i=0
	while ! ss -Hlun "sport = :123" | grep -q . && [ $i -lt 500 ]; do
		sleep 0.01; i=$((i + 1))
	done
	# Three single-shot queries: on a busy machine one of them may wait
	# behind the scheduler; the median is what is checked.
	rc=0
	for i in 1 2 3; do
		timeout 20 ntpdig -j -t 2 127.0.0.1 >>"$1/dig.out" 2>>"$1/dig.err" || rc=$?
	done
	echo $rc >"$1/dig.rc"
	kill $pid; wait $pid
' sh "$TMP"
is "$(cat "$TMP/dig.rc")" 0 "ntpdig exits 0 against ntpreflect, three times"
# -j: one JSON object, {"time":...,"offset":0.000066,...,"stratum":1,"leap":"no-leap",...}
off=$(sed -n 's/.*"offset":\([-0-9.e]*\).*/\1/p' "$TMP/dig.out" | sort -g | sed -n 2p)
ok "ntpdig took our replies as stratum 1, no leap" \
	test "$(grep -c '"stratum":1,"leap":"no-leap"' "$TMP/dig.out")" = 3
ok "ntpdig's median offset is within 1 ms ($off s)" awk -v o="$off" 'BEGIN { exit !(o != "" && o < 0.001 && o > -0.001) }'
[ -s "$TMP/dig.err" ] && diag "ntpdig: $(cat "$TMP/dig.err")"
done_testing
