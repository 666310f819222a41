#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpx-check: several servers at once, one row each, on loopback: two
# ntpreflects that tell the time, a fake server 50 ms ahead (ntpfake
# offset=NS), a port where nothing listens, a name under .invalid (RFC
# 6761: never asked).  The one that is off is marked, the ones that gave
# nothing say why, --json gives the same per line, and the exit status
# says whether every server passed: it answered, it is not off, and its
# offset is within --max-offset; a name that does not resolve is exit 2,
# as ping's.  Options go before or after the servers, as monitoring
# scripts put them.
. "$(dirname "$0")/../lib.sh"
need_prereq HELPERS
need python3

# The row of SERVER in FILE (the first column is the tally).
row() { awk -v s="$2" '$2 == s' "$1"; }
# What jq-less JSON lines hold: key K of the object whose server is S.
jget() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
	o = json.loads(l)
	if o["server"] == sys.argv[2]: print(json.dumps(o[sys.argv[3]]))' "$@"; }

test_expect_success 'setup: two reflectors, a server 50 ms ahead, a closed port' '
	p1=$(free_udp_port) && spawn s1 ntpreflect --refid GPS "127.0.0.1:$p1" 2>/dev/null &&
	wait_until 5 udp_listening "$p1" &&
	p2=$(free_udp_port) && spawn s2 ntpreflect --stratum 2 "127.0.0.1:$p2" 2>/dev/null &&
	wait_until 5 udp_listening "$p2" &&
	p3=$(free_udp_port) && spawn s3 "$NTPX_HELPERS/ntpfake" "$p3" 0 1 FAKE offset=50000000 >/dev/null &&
	wait_until 5 udp_listening "$p3" &&
	p4=$(free_udp_port) &&
	test_is "$(printf "%s\n" $p1 $p2 $p3 $p4 | sort -u | wc -l)" 4
'

test_expect_success 'all at once: exit 2 (a name that does not resolve), every row there' '
	test_exit 2 ntpx-check -4 -c 3 -i 20ms -w 5s "127.0.0.1:$p1" "localhost:$p2" "127.0.0.1:$p3" \
		"127.0.0.1:$p4" ntp.invalid >"$TMP/all" 2>"$TMP/all.err" &&
	cat "$TMP/all" >&4 &&
	test_is "$(wc -l <"$TMP/all")" 6 &&
	test_grep -x "ntpx-check: cannot resolve .ntp.invalid. (IPv4): Name or service not known" "$TMP/all.err" &&
	test_is "$(wc -l <"$TMP/all.err")" 1
'

test_expect_success 'the two reflectors agree (+), with their stratum and refid' '
	row "$TMP/all" "127.0.0.1:$p1" | grep -E "^\+ .* 1 GPS +0 +[-+][0-9.]+ .* 3/3$" &&
	row "$TMP/all" "localhost:$p2" | grep -E "^\+ localhost:$p2 +127\.0\.0\.1:$p2 +2 .* 3/3 *$"
'

test_expect_success 'the server 50 ms ahead is off (x), by about 50 ms' '
	row "$TMP/all" "127.0.0.1:$p3" >"$TMP/fake" &&
	test_grep "^x .* FAKE .* off: disagrees with the majority$" "$TMP/fake" &&
	awk "{ o = \$7 + 0; exit !(o > 49000 && o < 51000) }" "$TMP/fake"
'

test_expect_success 'the closed port and the name that does not resolve: (!) and why' '
	row "$TMP/all" "127.0.0.1:$p4" | grep -E "^! .* 0/3 +refused 3$" &&
	row "$TMP/all" ntp.invalid | grep -E "^! .* cannot resolve .ntp\.invalid. \(IPv4\): "
'

test_expect_success 'every server answered and agrees: exit 0' '
	ntpx-check -c 2 -i 20ms -w 5s "127.0.0.1:$p1" "127.0.0.1:$p2" >"$TMP/good" &&
	test_is "$(grep -c "^+ " "$TMP/good")" 2
'

test_expect_success 'two servers that disagree: nobody can tell (?), exit 0' '
	ntpx-check -c 2 -i 20ms -w 5s "127.0.0.1:$p1" "127.0.0.1:$p3" >"$TMP/two" &&
	test_is "$(grep -c "^? .* no majority agrees$" "$TMP/two")" 2
'

test_expect_success 'a server the majority marks off fails: exit 1' '
	test_exit 1 ntpx-check -c 2 -i 20ms -w 5s "127.0.0.1:$p1" "127.0.0.1:$p2" "127.0.0.1:$p3" >"$TMP/three" &&
	test_is "$(grep -c "^+ " "$TMP/three")" 2 &&
	test_grep "^x .*:$p3 " "$TMP/three"
'

test_expect_success '--max-offset: a server whose offset is beyond it fails, exit 1' '
	test_exit 1 ntpx-check -c 2 -i 20ms -w 5s --max-offset 10ms "127.0.0.1:$p1" "127.0.0.1:$p3" >"$TMP/max" &&
	row "$TMP/max" "127.0.0.1:$p3" | grep "offset beyond --max-offset 10ms$" &&
	row "$TMP/max" "127.0.0.1:$p1" >"$TMP/max1" &&
	test_must_fail grep "max-offset" "$TMP/max1" &&
	ntpx-check -c 2 -i 20ms -w 5s --max-offset=100ms "127.0.0.1:$p1" "127.0.0.1:$p3" >/dev/null &&
	test_exit 2 ntpx-check --max-offset 1parsec "127.0.0.1:$p1" 2>"$TMP/max.err" &&
	test_grep "^ntpx-check: bad maximum offset .1parsec.$" "$TMP/max.err"
'

test_expect_success 'options after the servers, as ntpprobe takes them' '
	ntpx-check "127.0.0.1:$p1" --json -c 2 -i 20ms -w 5s "127.0.0.1:$p2" >"$TMP/after" 2>"$TMP/after.err" &&
	test_is "$(jget "$TMP/after" "127.0.0.1:$p1" sent)" 2 &&
	test_is "$(jget "$TMP/after" "127.0.0.1:$p2" pass)" true &&
	test_is "$(wc -c <"$TMP/after.err")" 0 &&
	ntpx-check "127.0.0.1:$p1" -c1 -i20ms --count=2 >"$TMP/after2" &&
	test_grep " 2/2$" "$TMP/after2"
'

# Each column starts (left-aligned) or ends (right-aligned) where its
# heading does, on every row, whatever the servers are called.
aligned() {
	awk "NR == 1 { a = index(\$0, \"ADDRESS\"); o = index(\$0, \"OFFSET/us\") + 8; next }
		substr(\$0, a - 1, 1) != \" \" || substr(\$0, a, 1) == \" \" ||
		substr(\$0, o, 1) !~ /[0-9-]/ || substr(\$0, o + 1, 1) != \" \" { print \"not aligned: \" \$0; bad = 1 }
		END { exit bad }" "$1"
}
test_expect_success 'long server names keep the columns in line' '
	long="udp://[::ffff:127.0.0.1]:$p2" &&
	ntpx-check -c 1 -w 5s "127.0.0.1:$p1" "$long" "localhost:$p2" >"$TMP/long" &&
	cat "$TMP/long" >&4 &&
	test_is "$(grep -c "^+ " "$TMP/long")" 3 &&
	aligned "$TMP/long" &&
	aligned "$TMP/all"
'

test_expect_success '--json: one object a line, the same facts' '
	test_exit 1 ntpx-check --json -c 2 -i 20ms -w 5s "127.0.0.1:$p1" "127.0.0.1:$p2" \
		"127.0.0.1:$p3" "127.0.0.1:$p4" >"$TMP/json" &&
	test_is "$(wc -l <"$TMP/json")" 4 &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p1" agrees)" true &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p1" refid)" "\"GPS\"" &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p2" stratum)" 2 &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p3" agrees)" false &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p3" pass)" false &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p1" pass)" true &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p4" problem)" "\"refused 2\"" &&
	test_is "$(jget "$TMP/json" "127.0.0.1:$p4" offset_us)" null
'

# Real NTP software as one of the servers: chronyd (-x: it never touches
# the clock) serving at local stratum 3 on the loopback.
test_expect_success CHRONYD 'setup: chronyd -x serving at stratum 3' '
	pc=$(free_udp_port) &&
	printf "port %s\nbindaddress 127.0.0.1\nlocal stratum 3\nallow 127.0.0.1\ncmdport 0\nbindcmdaddress /\npidfile %s\n" \
		"$pc" "$TMP/chronyd.pid" >"$TMP/chrony.conf" &&
	spawn chrony chronyd -x -d -f "$TMP/chrony.conf" -u root -L 0 2>"$TMP/chronyd.log" &&
	wait_until 10 udp_listening "$pc"
'

test_expect_success CHRONYD 'chronyd and a reflector agree (+); chronyd at stratum 3' '
	test_exit 1 ntpx-check -c 3 -i 100ms -w 5s "127.0.0.1:$p1" "127.0.0.1:$pc" "127.0.0.1:$p3" >"$TMP/chrony" &&
	cat "$TMP/chrony" >&4 &&
	row "$TMP/chrony" "127.0.0.1:$pc" | grep -E "^\+ 127\.0\.0\.1:$pc +- +3 " &&
	row "$TMP/chrony" "127.0.0.1:$p1" | grep "^+ " &&
	row "$TMP/chrony" "127.0.0.1:$p3" | grep "^x "
'

test_expect_success 'usage errors: exit 2, one line each' '
	test_exit 2 ntpx-check 2>"$TMP/u1" &&
	test_grep "^ntpx-check: missing SERVER" "$TMP/u1" &&
	test_exit 2 ntpx-check -c x localhost 2>/dev/null &&
	test_exit 2 ntpx-check -i 1parsec localhost 2>/dev/null &&
	test_exit 2 ntpx-check "localhost:99999" 2>"$TMP/u2" &&
	test_is "$(wc -l <"$TMP/u2")" 1 &&
	test_grep "^ntpx-check: endpoint .localhost:99999.: port out of range" "$TMP/u2" &&
	test_exit 2 ntpx-check "127.0.0.1:$p1" foo:bar 2>"$TMP/u3" >"$TMP/u3.out" &&
	test_is "$(cat "$TMP/u3")" "ntpx-check: endpoint '\''foo:bar'\'': bad port '\''bar'\'' (a number, 0..65535)" &&
	test_is "$(wc -c <"$TMP/u3.out")" 0
'
done_testing
