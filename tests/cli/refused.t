#!/bin/sh
# SPDX-License-Identifier: ISC
# A server that is down shows as `refused` (ICMP port unreachable), and
# probing goes on until it comes up.
. "$(dirname "$0")/../lib.sh"

port=$(free_udp_port)
spawn probe ntpprobe -i 50ms -c 60 -w 40ms "udp://127.0.0.1:$port" >"$TMP/rec" 2>"$TMP/err"
ok "refused while no server listens" wait_until 5 has_status "$TMP/rec" refused
spawn srv ntpreflect "udp://127.0.0.1:$port" 2>/dev/null
ok "ok once the server is up" wait_until 10 has_status "$TMP/rec" ok
wait "$probe"
is "$?" 0 "the probe ran to its count and exited 0"
# refused ... refused ok ... ok: no ok before the server, nothing but ok
# (timeouts allowed on a busy machine) after it.
pattern=$(rec_status "$TMP/rec" | awk '{ print $2 }' | uniq | tr '\n' ' ')
case $pattern in
"refused ok "*) r=0 ;;
*) r=1 ;;
esac
is "$r" 0 "statuses go from refused to ok ($pattern)"
ok "refused ones are counted in the summary" grep -q 'refused [1-9]' "$TMP/err"
done_testing
