#!/bin/sh
# Ground truth from a sim: clock (ntpprobe --clock sim:PATH, column true2)
# and the drift estimate held against it (offsetfit).
#
# true2 is exact, so it is checked exactly: a clock with a pure offset has
# true2 = -2 offset on every record, and on every record the measured off2
# lies within the round trip of true2 (an offset error is at most half the
# delay).  The drift run is the issue's: +25 ppm, 600 exchanges at 50 ms on
# loopback, fitted by offsetfit.  How close a loopback measurement comes to
# the truth depends on how quiet the machine is: the 0.5 ppm and 50 us
# bounds are asserted when the run's own rtt p99 says the path was quiet
# (below 300 us), and skipped with the numbers otherwise; NTPX_STRICT=1
# turns that skip into a failure.
. "$(dirname "$0")/../lib.sh"
plan 14

RT=
chrt -f 10 true 2>/dev/null && RT="chrt -f 10"
port=$(free_udp_port)
spawn RPID $RT ntpreflect "udp://127.0.0.1:$port" 2>"$TMP/reflect.err"
wait_until 5 udp_listening "$port"
ep=udp://127.0.0.1:$port

clockstep -c "sim:$TMP/off" --create --offset 1.5s
ntpprobe -i 20ms -c 20 --clock "sim:$TMP/off" "$ep" >"$TMP/off.rec" 2>/dev/null
is "$?" 0 "ntpprobe on a sim clock: exit 0"
is "$(sed -n 4p "$TMP/off.rec")" "#clock sim:$TMP/off" "#clock names the sim clock"
is "$(sed -n 5p "$TMP/off.rec")" "#fields seq t1 t2 t3 t4 delay off2 status true2 t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h" \
	"true2, then the stamp columns, are appended to #fields"
is "$(awk '!/^#/ && $8 == "ok" { print $9 }' "$TMP/off.rec" | sort -u)" -3000000000 \
	"a clock 1.5 s ahead: true2 is -3 s on every record, to the ns"

clockstep -c "sim:$TMP/drift" --create --freq 25ppm
$RT ntpprobe -i 50ms -c 600 --clock "sim:$TMP/drift" "$ep" >"$TMP/drift.rec" 2>/dev/null
n=$(awk '!/^#/ && $8 == "ok"' "$TMP/drift.rec" | wc -l)
ok "600 exchanges, nearly all ok ($n)" test "$n" -ge 590
# shell arithmetic: awk's doubles cannot hold ns since 1970 exactly
bad=0
while read -r seq t1 t2 t3 t4 delay off2 status true2 rest; do
	case $seq in \#*) continue ;; esac
	[ "$status" = ok ] || continue
	d=$((off2 - true2))
	[ ${d#-} -le $((delay + 10)) ] || bad=$((bad + 1))
done <"$TMP/drift.rec"
is "$bad" 0 "|off2 - true2| <= delay on every record: true2 is the truth the probe measured"

offsetfit "$TMP/drift.rec" >"$TMP/sum"
is "$?" 0 "offsetfit reads records with true2"
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/sum"; }
# The true offset falls 25 ppm of reference time, which is 25/(1 + 25e-6)
# ppm of the client's own time (offsetfit's t): -24.999375.
ok "true drift -24.99938 ppm ($(v true_b_ppm))" \
	awk -v b="$(v true_b_ppm)" 'BEGIN { exit !(b > -24.9999 && b < -24.9989) }'
ok "b_err_ppm is b - true_b_ppm" \
	awk -v a="$(v b_ppm)" -v t="$(v true_b_ppm)" -v e="$(v b_err_ppm)" \
	'BEGIN { d = a - t - e; exit !(d < 1e-5 && d > -1e-5) }'
ok "err_rms_us and err_p99_us are reported" \
	awk -v r="$(v err_rms_us)" -v p="$(v err_p99_us)" 'BEGIN { exit !(r > 0 && p > 0 && r != "") }'
ok "--json carries the truth" sh -c "offsetfit --json '$TMP/drift.rec' | grep -q '\"b_err_ppm\":'"

p99=$(v rtt_p99_us)
diag "drift: b $(v b_ppm) ppm (error $(v b_err_ppm)), residual rms $(v rms_us) us, bias $(v bias_us) us, rtt p99 $p99 us"
ok "fitted b within 5 ppm of 25 whatever the load ($(v b_ppm))" \
	awk -v e="$(v b_err_ppm)" 'BEGIN { exit !(e < 5 && e > -5) }'
if awk -v p="$p99" 'BEGIN { exit !(p < 300) }' || [ "${NTPX_STRICT:-0}" = 1 ]; then
	ok "fitted b within 0.5 ppm of 25 ($(v b_ppm))" \
		awk -v e="$(v b_err_ppm)" 'BEGIN { exit !(e < 0.5 && e > -0.5) }'
	ok "residual rms below 50 us ($(v rms_us))" \
		awk -v r="$(v rms_us)" 'BEGIN { exit !(r < 50) }'
else
	skip "fitted b within 0.5 ppm of 25 ($(v b_ppm))" "loopback too noisy here: rtt p99 $p99 us"
	skip "residual rms below 50 us ($(v rms_us))" "loopback too noisy here: rtt p99 $p99 us"
fi

done_testing
