#!/bin/sh
# SPDX-License-Identifier: ISC
# Unsynchronised servers and kiss codes (RFC 5905 7.4), each from a small
# fake server on loopback (tests/helpers/ntpfake.c): OpenNTPD 6.2's
# unsynchronised replies (leap 3, stratum 0, reference ID 0) and the other
# unsynchronised shapes are `unsynced` with the server's T2 and T3; a kiss
# code is `kod` without them; RATE doubles the interval, DENY and RSTR stop
# the probe with exit 1 after one request.
. "$(dirname "$0")/../lib.sh"
fake=$NTPX_HELPERS/ntpfake
need_prereq HELPERS

# serve NAME LEAP STRATUM REFID [zero]: a fake server; PORT is its port,
# its request log $TMP/NAME.log.
serve() {
	_n=$1
	shift
	PORT=$(free_udp_port)
	spawn _pid "$fake" "$PORT" "$@" >"$TMP/$_n.log"
	wait_until 5 udp_listening "$PORT"
}
requests() { grep -c '^request ' "$TMP/$1.log"; }
# field N of every data line, one line
col() { data_lines "$1" | awk -v n="$2" '{ printf "%s%s", sep, $n; sep = " " } END { print "" }'; }

# OpenNTPD 6.2 while unsynchronised.
serve openntpd 3 0 0x00000000
ntpprobe -c 3 -i 20ms "udp://127.0.0.1:$PORT" >"$TMP/openntpd.rec" 2>"$TMP/openntpd.err"
is "$?" 0 "leap 3, stratum 0, refid 0: exit 0"
is "$(col "$TMP/openntpd.rec" 8)" "unsynced unsynced unsynced" "leap 3, stratum 0, refid 0: unsynced, not kod"
# records missing T2, T3, delay or off2
missing() { data_lines "$1" | awk '$3 == "-" || $4 == "-" || $6 == "-" || $7 == "-"' | wc -l; }
is "$(missing "$TMP/openntpd.rec")" 0 "leap 3, stratum 0, refid 0: T2 and T3 kept, delay and off2 from them"
is "$(offsetfit --check "$TMP/openntpd.rec")" "checked 3" "the unsynced records' arithmetic holds (offsetfit --check)"
ok "ntpfilter reads them" sh -c "ntpfilter '$TMP/openntpd.rec' >/dev/null"
ok "the summary counts them as unsynced" grep -q 'unsynced 3' "$TMP/openntpd.err"

serve leap3 3 3 0xc0000201
ntpprobe -c 2 -i 20ms "udp://127.0.0.1:$PORT" >"$TMP/leap3.rec" 2>/dev/null
is "$(col "$TMP/leap3.rec" 8)" "unsynced unsynced" "leap 3 at stratum 3: unsynced"
is "$(missing "$TMP/leap3.rec")" 0 "leap 3 at stratum 3: T2 and T3 kept"

serve s16 0 16 0x00000000
ntpprobe -c 2 -i 20ms "udp://127.0.0.1:$PORT" >"$TMP/s16.rec" 2>/dev/null
is "$(col "$TMP/s16.rec" 8)" "unsynced unsynced" "stratum 16, leap 0: unsynced"

serve zero 3 0 0x00000000 zero
ntpprobe -c 2 -i 20ms "udp://127.0.0.1:$PORT" >"$TMP/zero.rec" 2>/dev/null
is "$(col "$TMP/zero.rec" 8)" "unsynced unsynced" "unsynchronised with zero timestamps: unsynced"
is "$(col "$TMP/zero.rec" 3) $(col "$TMP/zero.rec" 4)" "- - - -" "...without T2 and T3 (it sent none)"

# A kiss code that only informs: kod, and probing goes on.
serve init 0 0 INIT
ntpprobe -c 3 -i 20ms "udp://127.0.0.1:$PORT" >"$TMP/init.rec" 2>"$TMP/init.err"
is "$?" 0 "INIT: exit 0"
is "$(col "$TMP/init.rec" 8)" "kod kod kod" "INIT: kod, and the probe goes on"
is "$(col "$TMP/init.rec" 3) $(col "$TMP/init.rec" 4)" "- - - - - -" "INIT: no T2, T3"
is "$(requests init)" 3 "INIT: three requests"
# The same code under leap 3 is a server saying why it is unsynchronised
# (ntpsec before its first sync): unsynced, its timestamps kept.
serve init3 3 0 INIT
ntpprobe -c 2 -i 20ms "udp://127.0.0.1:$PORT" >"$TMP/init3.rec" 2>/dev/null
is "$(col "$TMP/init3.rec" 8)" "unsynced unsynced" "INIT under leap 3: unsynced, not kod"
is "$(missing "$TMP/init3.rec")" 0 "INIT under leap 3: T2 and T3 kept"

# RATE: each kiss doubles the interval.  The schedule is 0, 100, 300,
# 700, 1500 ms, then 3100 ms, past the 1.6 s run: five requests (32
# without the back-off).  -w 1s: a late reply is a timeout, not a kiss.
serve rate 3 0 RATE
ntpprobe -d 1.6s -i 50ms -w 1s "udp://127.0.0.1:$PORT" >"$TMP/rate.rec" 2>"$TMP/rate.err"
is "$?" 0 "RATE: exit 0"
is "$(col "$TMP/rate.rec" 8)" "kod kod kod kod kod" "RATE: five kod records in 1.6 s at -i 50ms"
is "$(requests rate)" 5 "RATE: the server saw five requests"
is "$(sed -n 's/.*kiss code RATE: interval now //p' "$TMP/rate.err" | tr '\n' ' ')" \
	"0.100 s 0.200 s 0.400 s 0.800 s 1.600 s " "RATE: the interval doubles each time"

for code in DENY RSTR; do
	serve "$code" 3 0 "$code"
	ntpprobe -c 5 -i 20ms "udp://127.0.0.1:$PORT" >"$TMP/$code.rec" 2>"$TMP/$code.err"
	is "$?" 1 "$code: exit 1"
	is "$(col "$TMP/$code.rec" 8)" "kod" "$code: one kod record"
	is "$(requests "$code")" 1 "$code: no request after the kiss"
done
ok "DENY: one line says why" grep -q "kiss code DENY: the server refuses service, stopping" "$TMP/DENY.err"
done_testing
