#!/bin/sh
# SPDX-License-Identifier: ISC
# Network Time Security (RFC 8915) on the loopback: ntpprobe --nts against
# ntpreflect --nts-cert/--nts-key, in basic and interleaved mode, plain
# NTP still served beside it; then bad input of every kind, each one line
# from the side that refuses it, and the server serving on after each.
# The requests made wrong on purpose come from tests/helpers/ntsq, which
# runs NTS-KE and builds requests as ntpprobe does.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/nts.sh"
need openssl
need_prereq BUILT
test_lazy_prereq NTSQ '[ -x "$NTPX_HELPERS/ntsq" ]'

# The server key rotates every 500 ms and the two before it are still
# accepted: a cookie lives 1 to 1.5 s, long after the exchange that
# follows its NTS-KE at once, and has died 2 s later.
ROTATE=500ms
probe() {
	_ca=$1
	shift
	ntpprobe --records --nts="127.0.0.1:$keport" --ca "$TMP/$_ca.pem" "$@" "udp://127.0.0.1:$port"
}
ntsq() { "$NTPX_HELPERS/ntsq" 127.0.0.1 "$keport" "$TMP/ca.pem" 127.0.0.1 "$port" "$1"; }
# The lines ntpreflect wrote on stderr since the mark.
mark() { wc -l <"$TMP/reflect.err" >"$TMP/mark"; }
since_mark() { tail -n +"$(($(cat "$TMP/mark") + 1))" "$TMP/reflect.err"; }
# refused MODE REPLY LINE: ntsq MODE saw REPLY ("reply nak", or "" for
# none) before the fence's, and the server wrote one line, matching LINE.
refused() {
	mark &&
	ntsq "$1" >"$TMP/q" &&
	test_is "$(cat "$TMP/q")" "${2:+$2
}fence 48" &&
	since_mark >"$TMP/lines" &&
	test_is "$(wc -l <"$TMP/lines")" 1 &&
	test_grep "$3" "$TMP/lines"
}
# nts_t3 REC MODE: each ok record of REC (ntpprobe --nts) against
# ntpreflect's log line of the same exchange (the same t2), on one clock,
# exact in integers (the last 12 digits: a double cannot hold ns since
# 1970).  basic: T3 was read before sealing, so the reply left (the log's
# t3, the stamp before its submit) at least nts_seal after it, and
# t3 - t2 covers at least the check, nts_open; xleave: the transmit stamp
# came after sealing, so t3 - t2 covers the check and the seal.  Prints
# "N BAD": records matched, and how many broke the rule.
nts_t3() {
	awk -v mode="$2" "$ntpx_fields"'
	function lo(x) { return substr(x, 8) + 0 }
	function d(a, b,   v) { v = lo(a) - lo(b); if (v < -5e11) v += 1e12; return v }
	FNR == NR { if (/^#fields/) { fields(); next } if (/^#/) next
		if (field("status") == "ok" && field("nts_open") != "-") {
			t3[field("t2")] = field("t3"); op[field("t2")] = field("nts_open"); se[field("t2")] = field("nts_seal") }
		next }
	/^#fields/ { fields(); next } /^#/ { next }
	field("status") != "ok" || !(field("t2") in t3) { next }
	{ n++; k = field("t2")
	  if (mode == "basic" && (d(t3[k], field("t3")) < se[k] || d(field("t3"), k) < op[k])) bad++
	  if (mode == "xleave" && d(field("t3"), k) < op[k] + se[k]) bad++ }
	END { print n + 0, bad + 0 }' "$TMP/log" "$1"
}
# The KE thread's line for a failed session comes when the session ends.
ke_failed_line() { since_mark | grep -q "nts-ke: handshake: "; }
# It still answers an authenticated probe.
still_serving() { probe ca -c 3 -i 50ms -w 5s >"$TMP/again" 2>/dev/null && test_is "$(count_status "$TMP/again" ok)" 3; }

test_expect_success 'setup: a CA, a certificate for 127.0.0.1, another CA and one from it' '
	nts_ca ca && nts_cert srv ca && nts_ca other && nts_cert wrong other
'

test_expect_success 'setup: ntpreflect serving NTP and NTS-KE on the loopback' '
	port=$(free_udp_port) && keport=$(free_tcp_port) &&
	spawn REFLECT ntpreflect --stratum 1 --nts-cert "$TMP/srv.pem" --nts-key "$TMP/srv.key" --nts-port "$keport" \
		--nts-rotate "$ROTATE" --log "$TMP/log" "udp://127.0.0.1:$port" 2>"$TMP/reflect.err" &&
	wait_until 10 tcp_listening "$keport" &&
	wait_until 10 udp_listening "$port"
'

test_expect_success 'ntpprobe --nts: 20 of 20 ok, authenticated, one NTS-KE for more than 8 exchanges' '
	test_exit 0 probe ca -i 50ms -c 20 -w 5s >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(count_status "$TMP/rec" ok)" 20 &&
	test_grep "nts-bogus 0, nts-nak 0, nts-ke 1," "$TMP/err" &&
	test_grep "^#nts aead AEAD_AES_SIV_CMAC_256 cookies 8 ke 127.0.0.1:$keport server -:$port\$" "$TMP/rec" &&
	nts_cols "$TMP/rec" &&
	one_clock "$TMP/rec"
'

# ntpx(7): NTS-KE's port is --nts-port in every tool; a client's
# --nts=HOST:PORT is the same port written in the address.
test_expect_success 'ntpprobe and loadgen --nts --nts-port: the port as ntpreflect names it' '
	test_exit 0 ntpprobe --records --nts --nts-port "$keport" --ca "$TMP/ca.pem" -i 50ms -c 3 -w 5s \
		"udp://127.0.0.1:$port" >"$TMP/prec" 2>/dev/null &&
	test_is "$(count_status "$TMP/prec" ok)" 3 &&
	test_grep "^#nts aead AEAD_AES_SIV_CMAC_256 cookies 8 ke 127.0.0.1:$keport server -:$port\$" "$TMP/prec" &&
	test_exit 0 loadgen --ntp 1k -d 200ms -w 2s --nts --nts-port "$keport" --ca "$TMP/ca.pem" \
		"udp://127.0.0.1:$port" >/dev/null 2>"$TMP/plg" &&
	test_grep "ntp requests [1-9][0-9]* replies [1-9][0-9]* " "$TMP/plg"
'

test_expect_success 'ntpprobe --nts --xleave: interleaved replies, authenticated' '
	test_exit 0 probe ca --xleave -i 50ms -c 10 -w 5s >"$TMP/xrec" 2>"$TMP/xerr" &&
	test_is "$(count_status "$TMP/xrec" ok)" 10 &&
	test_grep "interleaved [1-9]" "$TMP/xerr" &&
	test_grep "nts-bogus 0" "$TMP/xerr" &&
	nts_cols "$TMP/xrec" &&
	one_clock "$TMP/xrec"
'

test_expect_success 'loadgen --ntp --nts: every sealed request of a flood answered' '
	test_exit 0 loadgen --ntp 2k -d 1s -w 2s --nts="127.0.0.1:$keport" --ca "$TMP/ca.pem" \
		"udp://127.0.0.1:$port" >/dev/null 2>"$TMP/lg" &&
	test_grep "ntp requests [0-9]* replies [0-9]* lost 0 loss 0.0000%" "$TMP/lg" &&
	test_must_fail loadgen --nts "udp://127.0.0.1:$port" 2>"$TMP/lgu" &&
	test_grep "^loadgen: --nts and --ca are for --ntp\$" "$TMP/lgu"
'

test_expect_success 'plain NTP is still answered beside NTS' '
	test_exit 0 ntpprobe --records -c 3 -i 50ms -w 5s "udp://127.0.0.1:$port" >"$TMP/plain" 2>/dev/null &&
	test_is "$(count_status "$TMP/plain" ok)" 3
'

test_expect_success NTSQ 'a request built right is answered and its reply checks' '
	ntsq ok >"$TMP/q" &&
	test_is "$(cat "$TMP/q")" "reply ok
fence 48"
'

# RFC 8915 section 5.7: what the server cannot authenticate "SHOULD" get
# an NTS NAK (the kiss NTSN with the identifier echoed, nothing sealed).
test_expect_success NTSQ 'a tampered authenticator: an NTS NAK, one line, the server serves on' '
	refused tamper "reply nak" "^ntpreflect: 127.0.0.1:[0-9]*: nts: answered with a NAK: authenticator does not verify\$" &&
	still_serving
'

# NTS fields of no valid shape are NTS that fails, never plain NTP: no
# answer at all (nts-bad), as chrony drops them.
test_expect_success NTSQ 'an identifier of 16 bytes: no reply (not a plain one), one line naming the field' '
	refused shortuid "" "nts: dropped: extension field 1 (unique identifier): body of 16 bytes, less than 32\$"
'

test_expect_success NTSQ 'the second cookie placeholder shorter than the cookie, sealed anew: no reply, one line' '
	refused placeholder "" "nts: dropped: cookie placeholder not as long as the cookie\$"
'

test_expect_success NTSQ 'an ntpx field after the authenticator, which nothing may read: no reply, one line' '
	refused trailing "" "nts: dropped: extension fields after the authenticator\$"
'

# RFC 8915 section 9.1: cookies travel in the clear, and must not let an
# observer tie them together.  Two NTS-KE sessions' 16 cookies: their
# nonces (bytes 4 to 19) share no byte position across all of them and
# no two agree in 8 or more of 16 (a salt and a counter do both; random
# nonces agree in one position on average; unit tests hold 1000).
no_shared_structure() {
	awk '{ n++; h[n] = $2 }
	END {
		if (n != 16) { print "cookies: " n; exit 1 }
		for (k = 1; k <= 32; k += 2) {
			c = 0; for (i = 2; i <= n; i++) c += substr(h[i], k, 2) == substr(h[1], k, 2)
			if (c == n - 1) { print "byte " (k + 1) / 2 - 1 " the same in all"; exit 1 }
		}
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
			c = 0; for (k = 1; k <= 32; k += 2) c += substr(h[i], k, 2) == substr(h[j], k, 2)
			if (c >= 8) { print "cookies " i " and " j " agree in " c " bytes"; exit 1 }
		}
	}' "$1"
}
test_expect_success NTSQ 'the cookies of two NTS-KE sessions share no nonce structure' '
	ntsq cookies >"$TMP/c1" && ntsq cookies >"$TMP/c2" &&
	cat "$TMP/c1" "$TMP/c2" >"$TMP/cookies" &&
	diag "$(head -n 2 "$TMP/cookies" | tr "\n" " ")" &&
	no_shared_structure "$TMP/cookies"
'

test_expect_success NTSQ 'a truncated extension field: no reply, one line naming the field, the server serves on' '
	refused truncate "" "malformed, dropped: extension field 3 (authenticator): length 40 runs past the end (36 bytes left)\$" &&
	still_serving
'

test_expect_success NTSQ 'a request without its cookie: no reply, one line' '
	refused nocookie "" "nts: dropped: no cookie\$"
'

# A server cannot tell a replayed request (RFC 8915 leaves it stateless);
# the client can: the second reply answers no request it has waiting.
test_expect_success NTSQ 'a replayed request: the second reply is bogus to the client' '
	ntsq replay >"$TMP/q" &&
	test_is "$(cat "$TMP/q")" "reply ok
reply bogus: no request of ours is waiting
fence 48"
'

test_expect_success NTSQ 'an expired cookie (held 2 s, keys rotate every 500 ms): an NTS NAK, one line' '
	refused wait=2s,ok "reply nak" "nts: answered with a NAK: cookie under an expired server key\$" &&
	still_serving
'

# The NAK is unauthenticated, so the probe waits on for an authentic
# reply until its timeout (RFC 8915 section 5.7), then runs NTS-KE.
test_expect_success 'ntpprobe idle past its cookies: NAK, NTS-KE again, ok' '
	test_exit 0 probe ca -i 2s -c 3 -w 1s >"$TMP/slow" 2>"$TMP/slowerr" &&
	test_grep "nts-nak 1, nts-ke 2," "$TMP/slowerr" &&
	test_is "$(data_lines "$TMP/slow" | awk "{ print \$8 }" | tr "\n" " ")" "ok kod ok "
'

test_expect_success 'a certificate from a CA the client does not trust: one line, exit 1; the server serves on' '
	mark &&
	test_exit 1 probe other -c 1 >/dev/null 2>"$TMP/err2" &&
	test_is "$(wc -l <"$TMP/err2")" 1 &&
	test_grep "^ntpprobe: nts-ke 127.0.0.1:$keport: certificate: The certificate is NOT trusted. The certificate issuer is unknown.\$" "$TMP/err2" &&
	wait_until 5 ke_failed_line &&
	since_mark >"$TMP/lines" &&
	test_is "$(wc -l <"$TMP/lines")" 1 &&
	test_grep "^ntpreflect: 127.0.0.1:[0-9]*: nts-ke: handshake: " "$TMP/lines" &&
	still_serving
'

test_expect_success 'a certificate for another name than the one asked for: one line, exit 1' '
	test_exit 1 ntpprobe --records --nts="localhost:$keport" --ca "$TMP/ca.pem" -c 1 "udp://127.0.0.1:$port" \
		>/dev/null 2>"$TMP/err3" &&
	test_is "$(wc -l <"$TMP/err3")" 1 &&
	test_grep "certificate: The certificate is NOT trusted. The name in the certificate does not match the expected.\$" "$TMP/err3"
'

test_expect_success 'setup: a KE server whose certificate another CA signed' '
	port2=$(free_udp_port) && while [ "$port2" = "$port" ]; do port2=$((port2 + 1)); done &&
	keport2=$((keport + 1)) && while tcp_listening "$keport2"; do keport2=$((keport2 + 1)); done &&
	spawn WRONG ntpreflect --stratum 1 --nts-cert "$TMP/wrong.pem" --nts-key "$TMP/wrong.key" --nts-port "$keport2" \
		"udp://127.0.0.1:$port2" 2>"$TMP/wrong.err" &&
	wait_until 10 tcp_listening "$keport2"
'

test_expect_success 'ntpprobe refuses it with one line, exit 1' '
	test_exit 1 ntpprobe --records --nts="127.0.0.1:$keport2" --ca "$TMP/ca.pem" -c 1 "udp://127.0.0.1:$port2" \
		>/dev/null 2>"$TMP/err4" &&
	test_is "$(wc -l <"$TMP/err4")" 1 &&
	test_grep "certificate: The certificate is NOT trusted. The certificate issuer is unknown.\$" "$TMP/err4"
'

test_expect_success 'setup: ntpreflect stops, its summary written' '
	kill -TERM "$REFLECT" &&
	wait "$REFLECT"
'

test_expect_success 'its summary counts the refused requests and KE sessions' '
	test_grep "nts-bad [4-9]" "$TMP/reflect.err" &&
	test_grep "malformed 1," "$TMP/reflect.err" &&
	test_grep "nts-nak [1-9]" "$TMP/reflect.err" &&
	test_grep "nts-ke failed [1-9]" "$TMP/reflect.err"
'

test_expect_success 'basic mode: every reply left after its T3 by at least the seal time (the early T3)' '
	set -- $(nts_t3 "$TMP/rec" basic) &&
	diag "$1 records matched, $2 broke the rule" &&
	test "$1" -ge 20 && test_is "$2" 0
'

test_expect_success 'interleaved mode: T3 taken after sealing, t3 - t2 covers the check and the seal' '
	set -- $(nts_t3 "$TMP/xrec" xleave) &&
	diag "$1 records matched, $2 broke the rule" &&
	test "$1" -ge 5 && test_is "$2" 0
'

test_expect_success 'its log: nts_open and nts_seal for each NTS reply, - for plain ones' '
	test_grep "^#fields seq t2 t3 t2k t2h t3q t3k t3h mode peer version status nts_open nts_seal\$" "$TMP/log" &&
	awk "\$12 == \"ok\" && \$13 ~ /^[0-9]+\$/ && \$14 ~ /^[0-9]+\$/ { n++ } END { exit !(n >= 30) }" "$TMP/log" &&
	awk "\$12 == \"ok\" && \$13 == \"-\" { n++ } END { exit !(n >= 3) }" "$TMP/log"
'

# openssl writes keys 0600: the servers above said nothing of theirs.
# One its group may read is a warning, and the server goes on: here to
# a KE port that is taken, which ends it.
test_expect_success 'a private key its group may read: one warning line at the start' '
	! grep -q "warning" "$TMP/reflect.err" &&
	cp "$TMP/srv.key" "$TMP/open.key" && chmod 640 "$TMP/open.key" &&
	test_exit 1 ntpreflect --nts-cert "$TMP/srv.pem" --nts-key "$TMP/open.key" --nts-port "$keport2" \
		"udp://127.0.0.1:$(free_udp_port)" 2>"$TMP/open.err" &&
	test_is "$(head -n 1 "$TMP/open.err")" "ntpreflect: warning: $TMP/open.key: private key readable by its group (mode 0640)" &&
	test_grep "^ntpreflect: nts-ke 127.0.0.1 port $keport2: Address already in use\$" "$TMP/open.err"
'

test_expect_success 'usage: --nts-cert without --nts-key' '
	test_exit 2 ntpreflect --nts-cert "$TMP/srv.pem" "udp://127.0.0.1:$port" 2>"$TMP/u" &&
	test_grep "^ntpreflect: --nts-cert and --nts-key go together\$" "$TMP/u"
'

done_testing
