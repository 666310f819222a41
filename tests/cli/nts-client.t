#!/bin/sh
# SPDX-License-Identifier: ISC
# NTS as a client must take it (RFC 8915): ntpprobe --nts and loadgen
# --nts against tests/helpers/ntsforge, an NTS server on the loopback
# that does one thing wrong on purpose, as an attacker on the path or a
# server with records ntpx did not use before would.  Every reply it
# calls authentic is (lib/nts_server.c seals it); what it adds around
# them is what is tested: a field after the authenticator, an NTS NAK
# anyone who saw the request could send, a Warning record, a Server or
# Port record.
. "$(dirname "$0")/../lib.sh"
. "$NTPX_TOP/tests/nts.sh"
need openssl
need_prereq BUILT
FORGE=$NTPX_HELPERS/ntsforge
test_lazy_prereq FORGE '[ -x "$FORGE" ]'

# forge MODE: ntsforge in MODE on fresh ports $keport (TCP) and $port
# (UDP, chosen before when MODE names it), stopped when the suite ends;
# the one before is stopped first.
forge() {
	[ -z "${FORGE_PID:-}" ] || stop_pid "$FORGE_PID"
	[ -n "${port:-}" ] || port=$(free_udp_port)
	keport=$(free_tcp_port) &&
	spawn FORGE_PID "$FORGE" "$TMP/srv.pem" "$TMP/srv.key" "$keport" "$port" "$1" 2>>"$TMP/forge.err" &&
	wait_until 10 tcp_listening "$keport" &&
	wait_until 10 udp_listening "$port"
}
probe() { ntpprobe --records --nts="127.0.0.1:$keport" --ca "$TMP/ca.pem" "$@"; }
statuses() { rec_cols "$1" status | tr '\n' ' '; }

test_expect_success 'setup: a CA and a certificate for 127.0.0.1' '
	nts_ca ca && nts_cert srv ca
'

# Only the part of a reply that its authenticator covers may be read.
# The ntpx field's stamps would fill t2k of a basic reply; a field after
# the authenticator must fill nothing.
test_expect_success FORGE 'an ntpx field appended after the authenticator: none of its stamps in the records' '
	forge ntpx-after &&
	test_exit 0 probe --xleave -c 5 -i 50ms -w 2s "udp://127.0.0.1:$port" >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(count_status "$TMP/rec" ok)" 5 &&
	test_grep "nts-bogus 0," "$TMP/err" &&
	test_grep "^#fields .* t2k " "$TMP/rec" &&
	! grep -q 424242 "$TMP/rec" &&
	test_is "$(rec_cols "$TMP/rec" t2k | sort -u)" "-"
'

# RFC 8915 section 5.7: a NAK is not authenticated; the client keeps its
# cookies until a new NTS-KE succeeds and waits on for an authentic reply.
test_expect_success FORGE 'an NTS NAK before every authentic reply: every exchange ok, one NTS-KE, the NAKs counted' '
	forge nak-first &&
	test_exit 0 probe -c 5 -i 50ms -w 2s "udp://127.0.0.1:$port" >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(statuses "$TMP/rec")" "ok ok ok ok ok " &&
	test_grep "nts-nak 5, nts-ke 1," "$TMP/err"
'

test_expect_success FORGE 'a NAK alone, then NTS-KE refused: kod, one line, and polling goes on with the cookies kept' '
	forge nak-once &&
	test_exit 0 probe -c 3 -i 50ms -w 300ms "udp://127.0.0.1:$port" >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(statuses "$TMP/rec")" "kod ok ok " &&
	test_is "$(grep -c "^ntpprobe: nts-ke 127.0.0.1:$keport: handshake: the peer closed the connection\$" "$TMP/err")" 1 &&
	test_grep "nts-nak 1, nts-ke 2," "$TMP/err"
'

# Section 4.1.4 defines no warning codes: an unrecognised one is an error.
test_expect_success FORGE 'an NTS-KE response with a Warning record: refused with one line, exit 1' '
	forge warning &&
	test_exit 1 probe -c 1 "udp://127.0.0.1:$port" >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "ntpprobe: nts-ke 127.0.0.1:$keport: server sent warning 7 (unrecognised)"
'

# Sections 4.1.7 and 4.1.8: the response's server and port replace the
# endpoint's.  Nothing listens where the URL points.
test_expect_success FORGE 'a Port record: the exchanges go to that port, not the URL'\''s' '
	port=$(free_udp_port) && forge "port=$port" &&
	other=$(free_udp_port) &&
	test_exit 0 probe -c 3 -i 50ms -w 2s "udp://127.0.0.1:$other" >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(count_status "$TMP/rec" ok)" 3 &&
	test_grep "^#nts aead AEAD_AES_SIV_CMAC_256 cookies 8 ke 127.0.0.1:$keport server -:$port\$" "$TMP/rec"
'

test_expect_success FORGE 'a Server record: the exchanges go to that server, not the URL'\''s host' '
	forge "server=127.0.0.1" &&
	test_exit 0 probe -c 3 -i 50ms -w 2s "udp://127.0.0.2:$port" >"$TMP/rec" 2>"$TMP/err" &&
	test_is "$(count_status "$TMP/rec" ok)" 3 &&
	test_grep "^#nts .* server 127.0.0.1:123\$" "$TMP/rec"
'

# loadgen floods the endpoint it is given: a response that sends it
# elsewhere is refused, with the endpoint to give instead.
test_expect_success FORGE 'loadgen --nts: a Port record for another port than the endpoint'\''s: one line, exit 1' '
	port=$(free_udp_port) && forge "port=$port" &&
	other=$(free_udp_port) &&
	test_exit 1 loadgen --ntp 100 -d 1s --nts="127.0.0.1:$keport" --ca "$TMP/ca.pem" \
		"udp://127.0.0.1:$other" >/dev/null 2>"$TMP/err" &&
	test_is "$(cat "$TMP/err")" "loadgen: nts-ke 127.0.0.1:$keport: the response names NTP server 127.0.0.1 port $port, not the endpoint'\''s 127.0.0.1 port $other: give that endpoint" &&
	test_exit 0 loadgen --ntp 100 -d 1s --nts="127.0.0.1:$keport" --ca "$TMP/ca.pem" \
		"udp://127.0.0.1:$port" >/dev/null 2>"$TMP/err" &&
	test_grep "ntp requests [0-9]* replies [0-9]* lost 0 " "$TMP/err"
'

done_testing
