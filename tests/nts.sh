# SPDX-License-Identifier: ISC
# tests/nts.sh - helpers for the Network Time Security suites
# (tests/cli/nts.t, tests/interop/nts.t; sourced after tests/lib.sh).
# Certificates are made here with openssl, in $TMP; nothing is fetched.
#
# nts_ca NAME: a self-signed CA, $TMP/NAME.pem and $TMP/NAME.key.
nts_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-keyout "$TMP/$1.key" -out "$TMP/$1.pem" -subj "/CN=ntpx test $1" 2>/dev/null
}
# nts_cert NAME CA [IP]: a server certificate for IP (default 127.0.0.1;
# an IP address in subjectAltName, as NTS clients check it) signed by CA.
nts_cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$TMP/$1.key" -out "$TMP/$1.csr" -subj "/CN=${3:-127.0.0.1}" 2>/dev/null &&
	printf 'subjectAltName=IP:%s\nbasicConstraints=CA:FALSE\n' "${3:-127.0.0.1}" >"$TMP/$1.ext" &&
	openssl x509 -req -in "$TMP/$1.csr" -CA "$TMP/$2.pem" -CAkey "$TMP/$2.key" \
		-CAcreateserial -days 2 -extfile "$TMP/$1.ext" -out "$TMP/$1.pem" 2>/dev/null
}
# "tcp port P has a listener": for wait_until after starting a KE server.
tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }
# A TCP port nothing listens on, away from free_udp_port's range.
free_tcp_port() {
	_p=$((40000 + $$ % 20000))
	while ss -Hltn "sport = :$_p" | grep -q .; do _p=$((_p + 1)); done
	echo "$_p"
}
# nts_cols REC: every ok record of REC has numbers in nts_seal and
# nts_open, and there is at least one.
nts_cols() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		field("status") == "ok" { n++; if (field("nts_seal") !~ /^[0-9]+$/ || field("nts_open") !~ /^[0-9]+$/ || field("nts_open") == 0) bad++ }
		END { exit !(n > 0 && !bad) }' "$1"
}
