#!/bin/sh
# The loopback pipeline of the README: ntpreflect, ntpprobe | offsetfit.
. "$(dirname "$0")/../lib.sh"
plan 10

start_reflector
ntpprobe -i 100ms -c 200 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rec" 2>"$TMP/probe.err"
is "$?" 0 "ntpprobe exits 0"

is "$(data_lines "$TMP/rec" | wc -l)" 200 "200 records for -c 200"
nok=$(count_status "$TMP/rec" ok)
ok "nearly every exchange on loopback is ok ($nok of 200)" test "$nok" -ge 190

# Every complete record's arithmetic, recomputed here with the shell's
# 64-bit integers (awk's doubles cannot hold nanoseconds since 1970).
bad=0
while read -r seq t1 t2 t3 t4 delay off2 status; do
	case $seq in \#*) continue ;; esac
	[ "$status" = ok ] || continue
	[ $(( (t4 - t1) - (t3 - t2) )) = "$delay" ] || bad=$((bad + 1))
	[ $(( (t2 - t1) + (t3 - t4) )) = "$off2" ] || bad=$((bad + 1))
	[ "$t1" -le "$t4" ] && [ "$t2" -le "$t3" ] || bad=$((bad + 1))
done <"$TMP/rec"
is "$bad" 0 "delay and off2 reproduce T1..T4 on every ok record"

is "$(offsetfit --check "$TMP/rec")" "checked $nok" "offsetfit --check checks every complete record"

offsetfit "$TMP/rec" >"$TMP/sum"
is "$(awk '$1 == "n" { print $2 }' "$TMP/sum")" "$nok" "offsetfit fits the ok records"

# Same host, same clock: the true offset is 0 and the drift is 0.  What
# is left is the path's asymmetry, which on loopback is tens of us.
a=$(awk '$1 == "a_us" { print ($2 < 0 ? -$2 : $2) }' "$TMP/sum")
ok "|offset| below 1 ms ($a us)" awk -v a="$a" 'BEGIN { exit !(a < 1000) }'
b=$(awk '$1 == "b_ppm" { print ($2 < 0 ? -$2 : $2) }' "$TMP/sum")
ok "|drift| below 5 ppm ($b ppm)" awk -v b="$b" 'BEGIN { exit !(b < 5) }'

med=$(awk '$1 == "rtt_median_us" { print $2 }' "$TMP/sum")
mn=$(awk '$1 == "rtt_min_us" { print $2 }' "$TMP/sum")
ok "rtt min <= median, both positive ($mn <= $med us)" \
	awk -v a="$mn" -v b="$med" 'BEGIN { exit !(a > 0 && a <= b) }'

grep -q "^ntpprobe: sent 200, ok $nok, " "$TMP/probe.err"
ok "summary on stderr counts what was sent and answered" test $? = 0
done_testing
