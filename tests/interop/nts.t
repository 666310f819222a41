#!/bin/sh
# SPDX-License-Identifier: ISC
# Network Time Security (RFC 8915) with a real peer, both ways: ntpprobe
# --nts against chronyd -x serving NTS on the loopback (ntsservercert,
# ntsserverkey; -x: it never touches the clock), and chronyd -x as an NTS
# client (server ... nts, ntstrustedcerts) of ntpreflect --nts-cert, in
# basic and interleaved mode, its source shown authenticated by chronyc
# -N authdata and its samples by the measurements log.  The certificates are
# made here with openssl, a CA of the test's own and one it does not
# trust; nothing is fetched.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/nts.sh"
need chronyd openssl
need_prereq ROOT

# chronyd serving NTP on $port and NTS-KE on $keport; its server keys
# live only in memory (no ntsdumpdir), so a restart makes new ones and
# the cookies it gave before no longer open.
server_conf() {
	printf 'port %s\nbindaddress 127.0.0.1\nlocal stratum 1\nallow 127.0.0.1\n' "$port"
	printf 'cmdport 0\nbindcmdaddress /\npidfile %s\n' "$TMP/chronyd.pid"
	printf 'ntsport %s\nntsservercert %s\nntsserverkey %s\n' "$keport" "$TMP/srv.pem" "$TMP/srv.key"
}
start_chronyd() {
	spawn CHRONYD chronyd -x -d -f "$TMP/chronyd.conf" -u root -L 0 2>>"$TMP/chronyd.log" &&
	wait_until 10 tcp_listening "$keport" &&
	wait_until 10 udp_listening "$port"
}
probe() { _ca=$1; shift; ntpprobe --records --nts="127.0.0.1:$keport" --ca "$TMP/$_ca.pem" "$@" "udp://127.0.0.1:$port"; }
test_expect_success 'setup: a CA, a certificate for 127.0.0.1 from it, and a CA nobody trusts' '
	nts_ca ca && nts_cert srv ca && nts_ca other &&
	openssl verify -CAfile "$TMP/ca.pem" "$TMP/srv.pem" >/dev/null
'

test_expect_success 'setup: chronyd -x serving NTS on the loopback' '
	port=$(free_udp_port) && keport=$(free_tcp_port) &&
	server_conf >"$TMP/chronyd.conf" &&
	start_chronyd
'

test_expect_success 'ntpprobe --nts: every exchange ok, authenticated, 20 of 20 (more than 8 cookies spent)' '
	test_exit 0 probe ca -i 50ms -c 20 -w 5s >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(count_status "$TMP/rec" ok)" 20 &&
	test_grep "nts-bogus 0, nts-nak 0, nts-ke 1," "$TMP/err"
'

test_expect_success 'the #nts header names the AEAD, the cookies and the KE server' '
	test_grep "^#nts aead AEAD_AES_SIV_CMAC_256 cookies 8 ke 127.0.0.1:$keport" "$TMP/rec" &&
	test_grep "^#fields .* nts_seal nts_open\$" "$TMP/rec"
'

test_expect_success 'every ok record carries its seal and open times' '
	nts_cols "$TMP/rec"
'

test_expect_success "chronyd's stamps and ours are on one clock: |off2| <= delay on every ok record" '
	one_clock "$TMP/rec"
'

test_expect_success 'a KE server whose certificate no trusted CA signed: one line, exit 1, no records' '
	test_exit 1 probe other -c 1 >"$TMP/rec2" 2>"$TMP/err2" &&
	test_is "$(wc -l <"$TMP/err2")" 1 &&
	test_grep "^ntpprobe: nts-ke 127.0.0.1:$keport: certificate: The certificate is NOT trusted" "$TMP/err2" &&
	test_is "$(data_lines "$TMP/rec2" | wc -l)" 0
'

test_expect_success 'no KE server there: one line, exit 1' '
	other=$(free_tcp_port) && while [ "$other" = "$keport" ]; do other=$((other + 1)); done &&
	test_exit 1 ntpprobe --records --nts="127.0.0.1:$other" --ca "$TMP/ca.pem" -c 1 "udp://127.0.0.1:$port" 2>"$TMP/err3" >/dev/null &&
	test_is "$(wc -l <"$TMP/err3")" 1 &&
	test_grep "^ntpprobe: nts-ke 127.0.0.1:$other: connect: Connection refused" "$TMP/err3"
'

# chronyd restarted without its old keys answers the old cookies with an
# NTS NAK; the probe runs NTS-KE again and goes on.
probe_has() { [ "$(data_lines "$TMP/rec4" | wc -l)" -ge "$1" ]; }
test_expect_success 'setup: a long probe, chronyd restarted under it with new server keys' '
	spawn PROBE ntpprobe --records --nts="127.0.0.1:$keport" --ca "$TMP/ca.pem" -i 100ms -w 1s -c 30 \
		"udp://127.0.0.1:$port" >"$TMP/rec4" 2>"$TMP/err4" &&
	wait_until 10 probe_has 3 &&
	stop_pid "$CHRONYD" &&
	start_chronyd &&
	wait "$PROBE"
'

test_expect_success 'the probe saw the NTS NAK, ran NTS-KE again and ended with ok records' '
	diag "$(tail -n 2 "$TMP/err4" | head -n 1)" &&
	test_grep "nts-nak [1-9][0-9]*, nts-ke [2-9]" "$TMP/err4" &&
	test "$(data_lines "$TMP/rec4" | tail -n 1 | awk "{ print \$8 }")" = ok
'

# chronyd as the client.  Its command socket is a path of the test's own
# (chronyc -h PATH), in a directory only root may enter, as chronyd wants.
client_conf() {
	printf 'server 127.0.0.1 port %s nts ntsport %s iburst minpoll -4 maxpoll -4%s\n' "$rport" "$rkeport" "${1:+ $1}"
	printf 'ntstrustedcerts %s\npidfile %s\ncmdport 0\nbindcmdaddress %s\n' "$TMP/ca.pem" "$2/chronyd.pid" "$2/chronyd.sock"
	printf 'logdir %s\nlog measurements\n' "$2"
}
authdata() { chronyc -h "$1/chronyd.sock" -N -c authdata; }
# chronyc -c authdata: name,mode,keyid,type,klen,last,attempts,naks,cookies,cookie length
nts_authenticated() { authdata "$1" | awk -F, '$2 == "NTS" && $4 == 15 && $5 == 256 && $9 > 0 { ok = 1 } END { exit !ok }'; }
# The measurements log's samples from ntpreflect that passed every test,
# chronyd's authentication (test 5) among them: tests "111 111 1111".
authentic_samples() { awk '$3 == "127.0.0.1" && $6 == "111" && $7 == "111" && $8 == "1111" { n++ } END { print n + 0 }' "$1/measurements.log"; }
samples_5() { [ "$(authentic_samples "$1")" -ge 5 ]; }
interleaved_5() { [ "$(grep -c ' 4I [DKH] [DKH]$' "$1/measurements.log")" -ge 5 ]; }

test_expect_success 'setup: ntpreflect serving NTS with the same certificate' '
	rport=$(free_udp_port) && while [ "$rport" = "$port" ]; do rport=$((rport + 1)); done &&
	rkeport=$((keport + 1)) && while tcp_listening "$rkeport"; do rkeport=$((rkeport + 1)); done &&
	spawn REFLECT ntpreflect --stratum 1 --nts-cert "$TMP/srv.pem" --nts-key "$TMP/srv.key" --nts-port "$rkeport" \
		"udp://127.0.0.1:$rport" 2>"$TMP/reflect.err" &&
	wait_until 10 tcp_listening "$rkeport" &&
	wait_until 10 udp_listening "$rport"
'

# noselect: chronyd -x sets no clock, but it keeps the corrections it
# would have made and cooks its own stamps with them (its null clock
# driver), so a source it selected moves chronyd's time scale away from
# ours and the one-clock check below fails by what chronyd corrected
# (seen: an offset of -299 us in a delay of 432 us, with a busy core).
# A source it never selects is still measured, authenticated and logged.
test_expect_success 'setup: chronyd -x, an NTS client of ntpreflect' '
	mkdir -m 700 "$TMP/c1" &&
	client_conf noselect "$TMP/c1" >"$TMP/c1.conf" &&
	spawn C1 chronyd -x -d -f "$TMP/c1.conf" -u root -L 0 2>"$TMP/c1.log"
'

test_expect_success 'chronyc -N authdata: the source is NTS, AEAD 15, a 256-bit key, with cookies' '
	wait_until 20 nts_authenticated "$TMP/c1" &&
	diag "$(authdata "$TMP/c1")"
'

test_expect_success 'its measurements log: authenticated samples from ntpreflect (at least 5 within 20 s)' '
	wait_until 20 samples_5 "$TMP/c1" &&
	diag "$(authentic_samples "$TMP/c1") samples passed every test"
'

test_expect_success "every measurement chronyd made is on one clock: |offset| <= delay/2 + dispersion" '
	chrony_one_clock "$TMP/c1/measurements.log"
'

test_expect_success 'setup: that chronyd stops; one with xleave starts' '
	stop_pid "$C1" &&
	mkdir -m 700 "$TMP/c2" &&
	client_conf xleave "$TMP/c2" >"$TMP/c2.conf" &&
	spawn C2 chronyd -x -d -f "$TMP/c2.conf" -u root -L 0 2>"$TMP/c2.log"
'

test_expect_success 'chronyd with xleave and NTS against ntpreflect: interleaved samples, authenticated' '
	wait_until 30 interleaved_5 "$TMP/c2" &&
	nts_authenticated "$TMP/c2" &&
	diag "$(grep -c " 4I " "$TMP/c2/measurements.log") interleaved samples"
'

test_expect_success 'setup: ntpreflect stops, its summary written' '
	stop_pid "$C2" &&
	kill -TERM "$REFLECT" &&
	wait "$REFLECT"
'

test_expect_success "ntpreflect ran NTS-KE for both, refused none, and answered interleaved" '
	test_grep "nts-ke [2-9][0-9]*, nts-ke failed 0" "$TMP/reflect.err" &&
	test_grep "interleaved [1-9]" "$TMP/reflect.err" &&
	test_grep ! "nts-bad\|nts-nak" "$TMP/reflect.err"
'

done_testing
