#!/bin/sh
# SPDX-License-Identifier: ISC
# Network Time Security (RFC 8915) with a real peer: ntpprobe --nts
# against chronyd -x serving NTS on the loopback (ntsservercert,
# ntsserverkey; -x: it never touches the clock).  The certificates are
# made here with openssl, a CA of the test's own and one it does not
# trust; nothing is fetched.
. "$(dirname "$0")/../lib.sh"
need chronyd openssl
need_prereq ROOT

tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }
# A TCP port nothing listens on, from the other end of the range than
# free_udp_port's.
free_tcp_port() {
	_p=$((40000 + $$ % 20000))
	while ss -Hltn "sport = :$_p" | grep -q .; do _p=$((_p + 1)); done
	echo "$_p"
}
# make_ca NAME: a self-signed CA in $TMP/NAME.pem (key NAME.key).
make_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-keyout "$TMP/$1.key" -out "$TMP/$1.pem" -subj "/CN=ntpx test $1" 2>/dev/null
}
# make_cert NAME CA: a server certificate for 127.0.0.1 signed by CA.
make_cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$TMP/$1.key" -out "$TMP/$1.csr" -subj "/CN=127.0.0.1" 2>/dev/null &&
	printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$TMP/$1.ext" &&
	openssl x509 -req -in "$TMP/$1.csr" -CA "$TMP/$2.pem" -CAkey "$TMP/$2.key" \
		-CAcreateserial -days 2 -extfile "$TMP/$1.ext" -out "$TMP/$1.pem" 2>/dev/null
}
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
nts_col_numbers() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { n++; if (field("nts_seal") !~ /^[0-9]+$/ || field("nts_open") !~ /^[0-9]+$/ || field("nts_open") == 0) bad++ }
		END { exit !(n > 0 && !bad) }' "$1"
}

test_expect_success 'setup: a CA, a certificate for 127.0.0.1 from it, and a CA nobody trusts' '
	make_ca ca && make_cert srv ca && make_ca other &&
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
	nts_col_numbers "$TMP/rec"
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
	kill "$CHRONYD" && { wait "$CHRONYD" || :; } &&
	start_chronyd &&
	{ wait "$PROBE" || :; }
'

test_expect_success 'the probe saw the NTS NAK, ran NTS-KE again and ended with ok records' '
	diag "$(tail -n 2 "$TMP/err4" | head -n 1)" &&
	test_grep "nts-nak [1-9][0-9]*, nts-ke [2-9]" "$TMP/err4" &&
	test "$(data_lines "$TMP/rec4" | tail -n 1 | awk "{ print \$8 }")" = ok
'

done_testing
