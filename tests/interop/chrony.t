#!/bin/sh
# Real NTP software as a peer: chronyd as a client of ntpreflect (-Q: it
# measures and prints, never sets the clock), and chronyd as a server for
# ntpprobe (-x: it never touches the clock).
. "$(dirname "$0")/../lib.sh"
need chronyd
need_root
plan 6

start_reflector
cat >"$TMP/client.conf" <<CONF
server 127.0.0.1 port $REFLECT_PORT iburst minpoll -4 maxpoll -4
pidfile $TMP/client.pid
logdir $TMP
log measurements
cmdport 0
bindcmdaddress /
CONF
# -Q exits by itself once it has its measurement; timeout only bounds a
# failure.
timeout 30 chronyd -Q -f "$TMP/client.conf" -u root -L 0 >"$TMP/q.out" 2>&1
is "$?" 0 "chronyd -Q against ntpreflect exits 0"
wrong=$(sed -n 's/.*System clock wrong by \([-0-9.]*\) seconds.*/\1/p' "$TMP/q.out")
ok "chronyd accepted the replies and measured an offset ('$wrong' s)" test -n "$wrong"
ok "every measurement chronyd made is on one clock: |offset| <= delay/2 + dispersion ($(chrony_one_clock -v "$TMP/measurements.log" 2>&1))" \
	chrony_one_clock "$TMP/measurements.log"

port=$(free_udp_port)
cat >"$TMP/server.conf" <<CONF
port $port
bindaddress 127.0.0.1
local stratum 1
allow 127.0.0.1
cmdport 0
bindcmdaddress /
pidfile $TMP/server.pid
CONF
spawn chrony chronyd -x -d -f "$TMP/server.conf" -u root -L 0 2>"$TMP/chronyd.log"
wait_until 10 udp_listening "$port"
# chronyd serves as soon as it listens (local stratum 1); the probe's own
# records show whether it does.
ntpprobe -i 100ms -c 30 "udp://127.0.0.1:$port" >"$TMP/rec" 2>/dev/null
n=$(count_status "$TMP/rec" ok)
ok "ntpprobe gets ok records from chronyd ($n of 30)" test "$n" -ge 25
offsetfit "$TMP/rec" >"$TMP/sum"
ok "offsetfit accepts chronyd's timestamps" test $? = 0
# chronyd serves from this host's clock: its T2/T3 and ours are causal.
ok "chronyd's stamps and ours are on one clock: |off2| <= delay on every ok record" \
	one_clock "$TMP/rec"
done_testing
