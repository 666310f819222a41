#!/bin/sh
# SPDX-License-Identifier: ISC
# A server that is down shows as `refused` (ICMP port unreachable), and
# probing goes on until it comes up.
. "$(dirname "$0")/../lib.sh"

# The statuses of FILE's records, each run of one status once:
# "refused ok " for refused ... refused ok ... ok.
status_runs() { rec_status "$1" | awk '{ print $2 }' | uniq | tr '\n' ' '; }

test_expect_success 'setup: a probe of a port where no server listens' '
	port=$(free_udp_port) &&
	spawn probe ntpprobe -i 50ms -c 60 -w 40ms "udp://127.0.0.1:$port" >"$TMP/rec" 2>"$TMP/err"
'

test_expect_success 'refused while no server listens' '
	wait_until 5 has_status "$TMP/rec" refused
'

test_expect_success 'ok once the server is up' '
	spawn srv ntpreflect --stratum 1 "udp://127.0.0.1:$port" 2>/dev/null &&
	wait_until 10 has_status "$TMP/rec" ok
'

test_expect_success 'the probe ran to its count and exited 0' '
	test_exit 0 wait "$probe"
'

# refused ... refused ok ... ok: no ok before the server, nothing but ok
# (timeouts allowed on a busy machine) after it.
test_expect_success 'statuses go from refused to ok' '
	pattern=$(status_runs "$TMP/rec") &&
	diag "statuses: $pattern" &&
	case $pattern in
	"refused ok "*) ;;
	*) false ;;
	esac
'

test_expect_success 'refused ones are counted in the summary' '
	test_grep "refused [1-9]" "$TMP/err"
'
done_testing
