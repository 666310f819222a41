# SPDX-License-Identifier: ISC
# climb.sh: what tests/bench/ntp-capacity.sh and reflect-uudp.sh share
# (sourced after tests/lib.sh and a lab_up; not a benchmark of its own):
# a step of kernel-UDP NTP generators against a server in the lab, and the
# verdict on a step of a capacity climb (capacity_climb, tests/lib.sh).
#
#   climb_step ENDPOINT RATE   $S loadgen --ntp (S: the caller's, default
#                              2) at RATE/S each for $step, in
#                              $NTPX_NS_CLIENT, each behind $gen_pin (a
#                              taskset, or empty).  Prints "wanted got
#                              loss_pct replies min mean max sd srv_drop
#                              cli_drop gen_ns": the response time (us)
#                              from the server's own stamps (T3 - T2 of
#                              every counted reply: min, mean, max and
#                              standard deviation over all generators, as
#                              ntpperf prints them), the datagrams the
#                              kernel dropped meanwhile in each namespace
#                              (UDP InErrors: a full receive buffer), and
#                              the generators' CPU time (user and system).
#   climb_verdict WANTED GOT LOSS SRV_DROP CLI_DROP
#                              "clean", "server" (the server's loss onset)
#                              or "generator" (the generators' limit: a
#                              rate they could not reach, or a loss at
#                              their own sockets).
#   in_ref                     the server listens: UDP $port (the
#                              caller's) has a socket in $NTPX_NS_REF
#                              (udp_listening, tests/lib.sh), for
#                              wait_until.

in_ref() { udp_listening "$port" "$NTPX_NS_REF"; }

climb_inerr() { udp_mib "$1" | sed 's/.*inerr=//'; }

climb_step() {
	_cw=$(rate_num "$2")
	_ceach=$(awk -v w="$_cw" -v s="${S:-2}" 'BEGIN { printf "%d", w / s }')
	_cs0=$(climb_inerr "$NTPX_NS_REF") _cc0=$(climb_inerr "$NTPX_NS_CLIENT")
	_cpids=
	for _ci in $(seq 1 "${S:-2}"); do
		/usr/bin/time -f '%U %S' -o "$TMP/lt.$_ci" ${gen_pin:-} ip netns exec "$NTPX_NS_CLIENT" \
			loadgen --ntp "$_ceach" -d "$step" "$1" >/dev/null 2>"$TMP/lg.$_ci" &
		_cpids="$_cpids $!"
	done
	_ci=0
	for _cp in $_cpids; do
		_ci=$((_ci + 1))
		wait "$_cp" || echo "climb: generator $_ci: $(tail -n 1 "$TMP/lg.$_ci")" >&2
	done
	_csd=$(($(climb_inerr "$NTPX_NS_REF") - _cs0)) _ccd=$(($(climb_inerr "$NTPX_NS_CLIENT") - _cc0))
	_cgen=$(for _ci in $(seq 1 "${S:-2}"); do cat "$TMP/lt.$_ci"; done |
		awk '{ s += $1 + $2 } END { printf "%.0f", s * 1e9 }')
	for _ci in $(seq 1 "${S:-2}"); do cat "$TMP/lg.$_ci"; done |
		awk -v w="$_cw" -v sd="$_csd" -v cd="$_ccd" -v gen="$_cgen" '
		/ntp requests/ {
			for (i = 1; i <= NF; i++) {
				if ($i == "requests") q += $(i + 1)
				if ($i == "replies") { r = $(i + 1); rep += r }
				if ($i == "rate") { v = $(i + 1); sub(/\/s/, "", v); rate += v }
				if ($i == "response_us") {
					lo = $(i + 2); me = $(i + 4); hi = $(i + 6); sdv = $(i + 8)
					if (!n || lo < mn) mn = lo
					if (!n || hi > mx) mx = hi
					s1 += r * me; s2 += r * (sdv * sdv + me * me); n += r
				}
			}
		}
		END {
			m = n ? s1 / n : 0; v = n ? s2 / n - m * m : 0
			printf "%d %.0f %.4f %d %.3f %.3f %.3f %.3f %d %d %s\n", w, rate,
				q ? 100 * (q - rep) / q : 100, rep, mn, m, mx, (v > 0 ? sqrt(v) : 0), sd, cd, gen }'
}

climb_verdict() {
	awk -v w="$1" -v g="$2" -v l="$3" -v sd="$4" -v cd="$5" 'BEGIN {
		if (l < 0.1) { print (g < 0.95 * w ? "generator" : "clean"); exit }
		print (cd > sd ? "generator" : "server") }'
}
