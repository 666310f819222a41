#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpfilter: hand-computed windows with lost, bogus, KoD and rejected
# replies; djitter against OpenNTPD's own formula (control.c
# build_show_peer, written out again in awk) on a longer recording; and
# the header handling.
. "$(dirname "$0")/../lib.sh"

hdr() {
	echo "#ntpx-record 1"
	echo "#tool ntpprobe test"
	echo "#fields seq t1 t2 t3 t4 delay off2 status"
}
# seq delay off2 status -> a record line (the filter reads only these)
rec() { echo "$1 1 2 3 4 $2 $3 $4"; }
windows() {
	hdr
	rec 1 1000 200 ok
	rec 2 - - timeout
	rec 3 800 -100 ok
	rec 4 - - bogus
	rec 5 1200 50 ok
	rec 6 900 400 ok
	rec 7 - - kod
	rec 8 - - dropped
	rec 9 -5 0 ok
	rec 10 700 -300 ok
}
# Columns after status: foff2 fdelay jitter djitter fcount trust valid update
# moff2 mdelay (the means: off2 200 -100 50 400 -> 138 after four)
cols() { awk -v s="$1" '!/^#/ && $1 == s { $1=$2=$3=$4=$5=$6=$7=$8=""; sub(/^ +/, ""); print }' "$TMP/out"; }

# A longer recording with pseudo-random delays and offsets, some lost.
long() {
	awk 'BEGIN {
		print "#ntpx-record 1"; print "#fields seq t1 t2 t3 t4 delay off2 status"
		x = 12345
		for (i = 1; i <= 60; i++) {
			x = (x * 1103515245 + 12345) % 2147483648
			if (x % 7 == 0) { print i, "- - - - - - timeout"; continue }
			print i, 1, 2, 3, 4, 50000 + x % 40000, (x % 20000) - 10000, "ok"
		}
	}'
}
# djitter of every line of FILE (ntpfilter's output) equals ntpctl's
# jitter over the same 8 slots, and there are 60 lines.
djitter_is_openntpd() {
	awk "$ntpx_fields"'
	function sq(v) { return v * v }
	BEGIN { shift = 0 }
	/^#fields/ { fields(); next }
	/^#/ { next }
	{
		if (field("status") == "ok") { delay[shift] = field("delay"); off[shift] = field("off2") / 2; shift = (shift + 1) % 8 }
		# control.c build_show_peer(), slot for slot
		best = -1; cnt = 0; j = 0
		for (s = 0; s < 8; s++)
			if ((s in delay) && delay[s] > 0 && (best == -1 || delay[s] < delay[best])) best = s
		if (best != -1) {
			for (s = 0; s < 8; s++)
				if ((s in delay) && delay[s] > 0 && s != best) { j += sq(delay[s] - delay[best]); cnt++ }
			if (cnt > 1) j /= cnt
			j = sqrt(j)
		}
		want = sprintf("%.0f", j)
		if (field("djitter") != want) { bad++; print "line " field("seq") ": djitter " field("djitter") ", OpenNTPD " want > "/dev/stderr" }
		n++
	}
	END { exit !(n == 60 && !bad) }' "$1"
}

# '#reset' (a transport that found its peer again): four records, the
# line, a fifth.
with_reset() {
	echo "#ntpx-record 1"
	echo "#fields seq t1 t2 t3 t4 delay off2 status"
	for k in 1 2 3 4; do
		echo "$k $((k * 1000)) $((k * 1000 + 10)) $((k * 1000 + 20)) $((k * 1000 + 100)) 90 -70 ok"
	done
	echo "#reset seq 5"
	echo "5 5000 5010 5020 5100 90 -70 ok"
}
# fcount of every record of FILE, one line
fcounts() {
	awk '/^#fields/ { for (i = 2; i <= NF; i++) if ($i == "fcount") c = i - 1; next }
		/^#/ { next } { print $c }' "$1" | tr '\n' ' '
}

test_expect_success 'setup: ten records, lost, bogus, KoD, dropped and a negative delay among them' '
	windows >"$TMP/in"
'
test_expect_success 'exit 0' '
	ntpfilter "$TMP/in" >"$TMP/out"
'
test_expect_success '#fields gains the filter'\''s columns' '
	test_is "$(sed -n 3p "$TMP/out")" \
		"#fields seq t1 t2 t3 t4 delay off2 status foff2 fdelay jitter djitter fcount trust valid update moff2 mdelay"
'
test_expect_success 'other headers pass through' '
	test_is "$(head -2 "$TMP/out")" "$(head -2 "$TMP/in")"
'
test_expect_success 'one reply: itself, trust 3' '
	test_is "$(cols 1)" "200 1000 0 0 1 3 0 0 200 1000"
'
test_expect_success 'a timeout takes no slot and, below 6, no trust' '
	test_is "$(cols 2)" "200 1000 0 0 1 3 0 0 200 1000"
'
# best (-100, 800); the other: offset 100 vs -50 -> 150; delay 1000 vs 800 -> 200
test_expect_success 'the lower delay wins; both jitters' '
	test_is "$(cols 3)" "-100 800 150 200 2 4 0 0 50 900"
'
test_expect_success 'bogus: nothing changes below trust 6' '
	test_is "$(cols 4)" "-100 800 150 200 2 4 0 0 50 900"
'
# offsets 100, 25 about -50: sqrt((150^2 + 75^2)/2) = 118.6; delays 200, 400: sqrt(1e5) = 316.2
test_expect_success 'three samples' '
	test_is "$(cols 5)" "-100 800 119 316 3 5 0 0 50 1000"
'
# sqrt((150^2 + 75^2 + 250^2)/3) = 173.8; sqrt((200^2 + 400^2 + 100^2)/3) = 264.6
test_expect_success 'valid from the fourth reply' '
	test_is "$(cols 6)" "-100 800 174 265 4 6 1 0 138 975"
'
test_expect_success 'KoD: trust unchanged' '
	test_is "$(cols 7)" "-100 800 174 265 4 6 1 0 138 975"
'
test_expect_success 'a loss halves trust 6 to 3: invalid' '
	test_is "$(cols 8)" "-100 800 174 265 4 3 0 0 138 975"
'
test_expect_success 'a negative delay is rejected, as OpenNTPD does' '
	test_is "$(cols 9)" "-100 800 174 265 4 3 0 0 138 975"
'

test_expect_success 'djitter equals OpenNTPD'\''s ntpctl jitter on 60 records' '
	long >"$TMP/long" &&
	ntpfilter "$TMP/long" >"$TMP/lout" &&
	djitter_is_openntpd "$TMP/lout"
'

test_expect_success 'filtering twice is refused, saying why' '
	test_must_fail ntpfilter "$TMP/out" >/dev/null 2>"$TMP/err" &&
	test_grep "column '\''foff2'\'' is there already" "$TMP/err"
'

# After '#reset' the filter starts afresh at the next record, and the
# line passes through.
test_expect_success 'after '\''#reset'\'' the window holds only the new peer'\''s sample' '
	with_reset >"$TMP/reset" &&
	ntpfilter "$TMP/reset" >"$TMP/rout" &&
	test_is "$(fcounts "$TMP/rout")" "1 2 3 4 1 "
'
test_expect_success 'the '\''#reset'\'' line passes through' '
	test_grep -x "#reset seq 5" "$TMP/rout"
'

done_testing
