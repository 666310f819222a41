#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp endpoints that cannot work are refused with one line that names
# the endpoint and the cause: a usage error (status 2, one line, as any
# malformed endpoint: doc/ntpx.7) when the URL alone says so, status 1
# when the system does (no such interface, not Ethernet).  Nothing is
# attached.
. "$(dirname "$0")/../lib.sh"
need ntpprobe ntpreflect

one_line() {	# PATTERN CMD...: fails with status 1 and one line matching PATTERN
	_pat=$1
	shift
	"$@" >/dev/null 2>"$TMP/err"
	_rc=$?
	[ "$_rc" = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q -- "$_pat" "$TMP/err" ||
		{ diag "status $_rc: $(cat "$TMP/err")"; return 1; }
}
usage() {	# PATTERN CMD...: status 2 and the one error line
	_pat=$1
	shift
	"$@" >/dev/null 2>"$TMP/err"
	_rc=$?
	[ "$_rc" = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q -- "$_pat" "$TMP/err" ||
		{ diag "status $_rc: $(cat "$TMP/err")"; return 1; }
}

test_expect_success 'no dev=' '
	usage "uudp needs dev=INTERFACE" ntpprobe -c 1 "uudp://127.0.0.1:123"
'

test_expect_success 'bad via=' '
	usage "bad via '\''dpdk'\'' (xdp or verbs)" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&via=dpdk"
'

test_expect_success 'bad mac=' '
	usage "bad mac '\''aa:bb'\'' (expected aa:bb:cc:dd:ee:ff)" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&mac=aa:bb"
'

test_expect_success 'no such interface' '
	one_line "no interface '\''nosuch0'\''" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=nosuch0"
'

test_expect_success 'loopback is not Ethernet' '
	one_line "lo is not an Ethernet interface" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo"
'

test_expect_success 'mac= on a server' '
	one_line "mac= is for clients" \
		ntpreflect "uudp://*:12300?dev=lo&mac=02:00:00:00:00:01"
'

test_expect_success 'unknown parameter' '
	usage "unknown parameter '\''bogus'\'' for uudp" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&bogus=1"
'

test_expect_success 'port 0' '
	usage "port 0" ntpreflect "uudp://*:0?dev=lo"
'

test_expect_success 'bad xdpmode=' '
	usage "bad xdpmode '\''fast'\'' (auto, skb, native or zerocopy)" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&xdpmode=fast"
'

test_expect_success 'xdpmode= with via=verbs' '
	usage "xdpmode= is for via=xdp" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&via=verbs&xdpmode=skb"
'

test_expect_success 'qperr= without via=verbs' '
	usage "qperr= is for via=verbs" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&qperr=10" &&
	usage "qperr= is for via=verbs" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&via=xdp&qperr=10"
'

test_expect_success 'bad qperr=' '
	for v in 0 -1 ten 10x; do
		usage "bad qperr '\''$v'\'' (a count of frames, 1 or more)" \
			ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&via=verbs&qperr=$v" || return 1
	done
'
test_expect_success 'maxwait= on a client' '
	one_line "maxwait= is for servers" \
		ntpprobe -c 1 "uudp://127.0.0.1:123?dev=lo&maxwait=10ms"
'

test_expect_success 'bad maxwait=' '
	for v in 0 -1ms soon; do
		usage "bad maxwait '\''$v'\'' (a duration above 0: 10ms)" \
			ntpreflect "uudp://*:12300?dev=lo&maxwait=$v" || return 1
	done
'
done_testing
