#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpsec's ntpd as an NTS server (nts enable, cert, key, cookie; RFC 8915)
# for ntpprobe --nts, unpacked from Debian's package and run as
# tests/interop/ntpsec.t runs it: in a namespace of its own, CAP_SYS_TIME
# dropped, the noclock shim preloaded, the host clock's state the same
# before and after.  With no time source it answers unsynchronised, every
# answer authenticated: its NTS-KE (OpenSSL) and AEAD against ours
# (GnuTLS).  The certificates are made here with openssl.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/daemon.sh"
. "$NTPX_TOP/tests/nts.sh"
need openssl
daemon_pkgs ntpsec

NTPD=$DAEMON_ROOT/usr/sbin/ntpd
conf() {
	printf 'logfile %s\nrestrict default\nrestrict 127.0.0.1\n' "$TMP/ntpd.log"
	printf 'nts cert %s\nnts key %s\nnts cookie %s\nnts enable\n' "$TMP/srv.pem" "$TMP/srv.key" "$TMP/nts-keys"
}
nts_probe() {
	_ca=$1
	shift
	ip netns exec "$NS_R" "$NTPX_BIN/ntpprobe" --records --nts --ca "$TMP/$_ca.pem" -w 5s "$@" "udp://$DAEMON_ADDR:123"
}
ke_listening() { ip netns exec "$NS_D" ss -Hltn "sport = :4460" | grep -q .; }

test_expect_success 'setup: the host clock'\''s state, read before' '
	before=$(clock_state)
'

test_expect_success 'setup: two namespaces, the daemon'\''s and the probe'\''s' '
	daemon_net
'

test_expect_success 'setup: a CA, a certificate for the daemon'\''s address, another CA' '
	nts_ca ca && nts_cert srv ca "$DAEMON_ADDR" && nts_ca other
'

test_expect_success 'setup: ntpsec serving NTS' '
	conf >"$TMP/ntpd.conf" &&
	daemon_start D "$TMP/ntpd.out" "$NTPD" -n -c "$TMP/ntpd.conf" &&
	wait_until 10 ke_listening
'

test_expect_success "CAP_SYS_TIME is not in the daemon's effective set" '
	lacks_cap $D 25
'

test_expect_success 'ntpprobe --nts: NTS-KE with ntpsec, 10 answers of 10 authenticated (unsynced: no source)' '
	test_exit 1 nts_probe ca -c 10 -i 100ms >"$TMP/rec" 2>"$TMP/err" &&
	diag "$(head -n 1 "$TMP/err")" &&
	test_is "$(count_status "$TMP/rec" unsynced)" 10 &&
	test_grep "nts-bogus 0, nts-nak 0, nts-ke 1," "$TMP/err" &&
	test_grep "^#nts aead AEAD_AES_SIV_CMAC_256 cookies 8 ke $DAEMON_ADDR:4460" "$TMP/rec"
'

test_expect_success 'every answer carries the seal and open times' '
	awk "$ntpx_fields"'\''/^#fields/ { fields(); next } /^#/ { next }
		{ n++; if (field("nts_seal") !~ /^[0-9]+$/ || field("nts_open") !~ /^[0-9]+$/) bad++ }
		END { exit !(n == 10 && !bad) }'\'' "$TMP/rec"
'

test_expect_success 'a CA that did not sign its certificate: one line, exit 1' '
	test_exit 1 nts_probe other -c 1 >/dev/null 2>"$TMP/err2" &&
	test_is "$(wc -l <"$TMP/err2")" 1 &&
	test_grep "certificate: The certificate is NOT trusted" "$TMP/err2"
'

test_expect_success 'setup: the daemon stops' '
	daemon_stop "$D"
'

test_expect_success "the host clock's state is what it was" '
	test_is "$(clock_state)" "$before"
'
done_testing
