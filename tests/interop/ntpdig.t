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
	# Three single-shot queries, each checked.
	rc=0
	for i in 1 2 3; do
		timeout 20 ntpdig -j -t 2 127.0.0.1 >>"$1/dig.out" 2>>"$1/dig.err" || rc=$?
	done
	echo $rc >"$1/dig.rc"
	kill $pid; wait $pid
' sh "$TMP"
is "$(cat "$TMP/dig.rc")" 0 "ntpdig exits 0 against ntpreflect, three times"
# -j: one JSON object, {"time":...,"offset":0.000066,"precision":0.000091,...,
# "stratum":1,"leap":"no-leap",...}.  "precision" is ntpdig's worst-case
# error, its synchronization distance: delay/2 plus its clock's
# imprecision (ntp/packet.py, synchd).  On one clock t1 <= t2 <= t3 <= t4,
# so no offset can be larger than delay/2: exact, however long the
# scheduler kept either side waiting (one query at ntpdig's start-up was
# seen at 3.2 ms with a bound of 3.3 ms).  Both numbers are printed to the
# microsecond, hence the 1 us of rounding.
ok "ntpdig took our replies as stratum 1, no leap" \
	test "$(grep -c '"stratum":1,"leap":"no-leap"' "$TMP/dig.out")" = 3
off=$(sed -n 's/.*"offset":\([-0-9.e]*\),"precision":\([0-9.e]*\).*/\1 +- \2/p' "$TMP/dig.out" | tr '\n' ' ')
ok "each of ntpdig's offsets is within its own error bound, as one clock allows ($off)" \
	awk -F'[:,]' '{ o = p = ""; for (i = 1; i < NF; i++) { if ($i == "\"offset\"") o = $(i+1); if ($i == "\"precision\"") p = $(i+1) }
		n++; if (o == "" || p == "") { bad++; next }
		if (o < 0) o = -o; if (o > p + 1e-6) bad++ }
		END { exit !(n == 3 && !bad) }' "$TMP/dig.out"
[ -s "$TMP/dig.err" ] && diag "ntpdig: $(cat "$TMP/dig.err")"
done_testing
