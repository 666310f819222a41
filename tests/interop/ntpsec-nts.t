#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpsec's ntpd with NTS (RFC 8915) both ways, unpacked from Debian's
# package and run as tests/interop/ntpsec.t runs it: in a namespace of
# its own, CAP_SYS_TIME dropped, the noclock shim preloaded, the host
# clock's state the same before and after.  As a server (nts enable,
# cert, key, cookie) for ntpprobe --nts: with no time source it answers
# unsynchronised, every answer authenticated.  As a client (server ...
# nts ca) of ntpreflect --nts-cert: it runs NTS-KE with ntpreflect, takes
# its cookies, and synchronises on authenticated replies (ntpq -c nts
# counts them, ntpreflect's log shows each one's NTS times).  Its NTS-KE
# and AEAD are OpenSSL's, ours GnuTLS's.  The certificates are made here
# with openssl.
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

test_expect_success 'setup: a CA, certificates for the daemon'\''s address and ntpreflect'\''s, another CA' '
	nts_ca ca && nts_cert srv ca "$DAEMON_ADDR" && nts_cert refl ca "$REFLECT_ADDR" && nts_ca other
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

# ntpsec as the client: it polls every second (minpoll 0), each request
# sealed with a cookie ntpreflect gave it.
# ntpq -c nts: "NTS client recvs good:  N" and the like.
nts_count() { ntpq -c nts 2>/dev/null | awk -F: -v k="$1" '$1 == k { print $2 + 0 }'; }
good_5() { [ "$(nts_count "NTS client recvs good")" -ge 5 ]; }
reflect_ke_up() { ip netns exec "$NS_R" ss -Hltn "sport = :4460" | grep -q .; }

test_expect_success 'setup: ntpreflect serving NTS on port 123, NTS-KE on 4460' '
	spawn RNTS ip netns exec "$NS_R" "$NTPX_BIN/ntpreflect" --stratum 1 --nts-cert "$TMP/refl.pem" \
		--nts-key "$TMP/refl.key" --log "$TMP/reflect.log" "udp://$REFLECT_ADDR:123" 2>"$TMP/rnts.err" &&
	wait_until 10 reflect_up && wait_until 10 reflect_ke_up
'

test_expect_success 'setup: ntpsec as an NTS client of ntpreflect, until 5 authenticated replies' '
	{ printf "logfile %s\nrestrict default\nrestrict 127.0.0.1\n" "$TMP/ntpd-client.log" &&
	  echo "server $REFLECT_ADDR nts ca $TMP/ca.pem iburst minpoll 0 maxpoll 0"; } >"$TMP/client.conf" &&
	daemon_run C "$NTPD" -n -c "$TMP/client.conf" >"$TMP/client.out" 2>&1 &&
	if ! wait_until 60 good_5
	then
		diag "$(ntpq -c nts 2>&1; tail -n 20 "$TMP/ntpd-client.log")" &&
		return 1
	fi &&
	ntpq -c nts >"$TMP/nts" 2>&1 && sed "s/^/# /" "$TMP/nts" >&2
'

test_expect_success 'ntpq -c nts: an NTS-KE that succeeded, replies authenticated, none bad' '
	test "$(nts_count "NTS KE client probes good")" -ge 1 &&
	test "$(nts_count "NTS client recvs good")" -ge 5 &&
	test_is "$(nts_count "NTS client recvs w error")" 0
'

test_expect_success 'ntpq: leap 00, synchronised to ntpreflect over NTS' '
	wait_until 60 synced
'

test_expect_success "ntpreflect's log: every reply to ntpsec carried NTS (nts_open, nts_seal), none refused" '
	awk "\$1 !~ /^#/ { n++; if (\$12 != \"ok\" || \$13 !~ /^[0-9]+\$/ || \$14 !~ /^[0-9]+\$/) bad++ }
		END { exit !(n >= 5 && !bad) }" "$TMP/reflect.log" &&
	! grep -q "nts: \|nts-ke: " "$TMP/rnts.err"
'

test_expect_success "CAP_SYS_TIME is not in the client daemon's effective set" '
	lacks_cap $C 25
'

test_expect_success 'setup: the client daemon and ntpreflect stop' '
	daemon_stop "$C" && stop_pid "$RNTS" &&
	test_grep "nts-ke [1-9][0-9]*, nts-ke failed 0, nts-ke refused 0" "$TMP/rnts.err" &&
	! grep -q "nts-bad\|nts-nak" "$TMP/rnts.err"
'

test_expect_success "the host clock's state is what it was" '
	test_is "$(clock_state)" "$before"
'
done_testing
