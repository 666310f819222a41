#!/bin/sh
# uudp endpoints that cannot work are refused at open with one line that
# names the endpoint and the cause, and status 1; nothing is attached.
. "$(dirname "$0")/../lib.sh"
need ntpprobe ntpreflect
plan 7

one_line() {	# PATTERN CMD...: fails with status 1 and one line matching PATTERN
	_pat=$1
	shift
	"$@" >/dev/null 2>"$TMP/err"
	_rc=$?
	[ "$_rc" = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q -- "$_pat" "$TMP/err" ||
		{ diag "status $_rc: $(cat "$TMP/err")"; return 1; }
}
ok "no dev=" one_line 'uudp needs dev=INTERFACE' ntpprobe -c 1 'uudp://127.0.0.1:123'
ok "bad via=" one_line "bad via 'dpdk' (xdp or verbs)" \
	ntpprobe -c 1 'uudp://127.0.0.1:123?dev=lo&via=dpdk'
ok "bad mac=" one_line "bad mac 'aa:bb' (expected aa:bb:cc:dd:ee:ff)" \
	ntpprobe -c 1 'uudp://127.0.0.1:123?dev=lo&mac=aa:bb'
ok "no such interface" one_line "no interface 'nosuch0'" \
	ntpprobe -c 1 'uudp://127.0.0.1:123?dev=nosuch0'
ok "loopback is not Ethernet" one_line 'lo is not an Ethernet interface' \
	ntpprobe -c 1 'uudp://127.0.0.1:123?dev=lo'
ok "mac= on a server" one_line 'mac= is for clients' \
	ntpreflect 'uudp://*:12300?dev=lo&mac=02:00:00:00:00:01'
ntpprobe -c 1 'uudp://127.0.0.1:123?dev=lo&bogus=1' >/dev/null 2>"$TMP/err"
ok "unknown parameter: usage error, status 2" \
	sh -c "test $? = 2 && grep -q \"unknown parameter 'bogus' for uudp\" '$TMP/err'"
done_testing
