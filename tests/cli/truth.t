#!/bin/sh
# SPDX-License-Identifier: ISC
# Ground truth from a sim: clock (ntpprobe --clock sim:PATH, column true2)
# and the drift estimate held against it (offsetfit).
#
# true2 is exact, so it is checked exactly: a clock with a pure offset has
# true2 = -2 offset on every record, and on every record the measured off2
# lies within the round trip of true2 (an offset error is at most half the
# delay).  The drift run is the issue's: +25 ppm, 600 exchanges at 50 ms on
# loopback, fitted by offsetfit.
#
# How close a loopback measurement comes to the truth depends on how busy
# the machine is, so no bound here is a fixed number of ppm or us.  The
# truth gives each record's measurement error e = (off2 - true2) / 2, and
# the true offset of a detuned sim clock is a straight line, so the fit's
# drift error must be exactly the slope of e, and its residual RMS exactly
# the RMS of e about its own line: both recomputed here from the records.
# How large the drift error may be comes from the run's own statistics:
# offsetfit's b_se_ppm, which counts the noise's serial correlation.
. "$(dirname "$0")/../lib.sh"

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
# Per ok record: t (ns since the first T1), off2 - true2 (twice the
# measurement error e), the delay and T4 - T1.  Shell arithmetic: awk's doubles
# cannot hold ns since 1970 exactly.
t0=
while read -r seq t1 t2 t3 t4 delay off2 status true2 rest; do
	case $seq in \#*) continue ;; esac
	[ "$status" = ok ] || continue
	: "${t0:=$t1}"
	echo "$((t1 - t0)) $((off2 - true2)) $delay $((t4 - t1))"
done <"$TMP/drift.rec" >"$TMP/err.raw"
is "$(awk '($2 < 0 ? -$2 : $2) > $3 + 10' "$TMP/err.raw" | wc -l)" 0 \
	"|off2 - true2| <= delay on every record: true2 is the truth the probe measured"
awk '{ printf "%.9f %.1f %d\n", $1 / 1e9, $2 / 2, $4 }' "$TMP/err.raw" >"$TMP/err.dat"

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

diag "drift: b $(v b_ppm) ppm (error $(v b_err_ppm), standard error $(v b_se_ppm)), residual rms $(v rms_us) us, bias $(v bias_us) us, rtt p99 $(v rtt_p99_us) us"
# The least-squares line through "t e", the RMS of e about it, and how
# far the two identities below may miss: true2 is the true offset midway
# between T1 and T4 (ntpprobe.c), while offsetfit's t is T1, so the true
# offset is a straight line in t only to within 25 ppm of (T4 - T1) / 2 on
# each record.  That can move the slope by at most that over the RMS of
# t about its mean (Cauchy-Schwarz), the RMS by at most that, and each
# printed value by its last digit.
awk '{ t[NR] = $1; e[NR] = $2; mt += $1; me += $2; if ($3 > w) w = $3 }
	END { mt /= NR; me /= NR
		for (i = 1; i <= NR; i++) { sxx += (t[i] - mt)^2; sxy += (t[i] - mt) * (e[i] - me) }
		b = sxy / sxx
		for (i = 1; i <= NR; i++) ss += (e[i] - me - b * (t[i] - mt))^2
		d = 25e-6 * w / 2
		printf "%.6f %.3f %.9f %.6f\n", b / 1e3, sqrt(ss / NR) / 1e3,
			d / sqrt(sxx / NR) / 1e3 + 2e-6, d / 1e3 + 0.0015 }' "$TMP/err.dat" >"$TMP/efit"
read -r eslope erms eslope_tol erms_tol <"$TMP/efit"
ok "the drift error is the slope of the measurement errors ($(v b_err_ppm) vs $eslope ppm, +-$eslope_tol)" \
	awk -v a="$(v b_err_ppm)" -v b="$eslope" -v t="$eslope_tol" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'
ok "the residual rms is their rms about that line ($(v rms_us) vs $erms us, +-$erms_tol)" \
	awk -v a="$(v rms_us)" -v b="$erms" -v t="$erms_tol" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'
# Six standard errors: with ten batches b_err / b_se follows Student's t
# with 8 degrees of freedom, beyond 6 less than once in 3000 runs.
ok "the drift error within 6 of its own standard errors ($(v b_err_ppm) ppm, se $(v b_se_ppm))" \
	awk -v e="$(v b_err_ppm)" -v s="$(v b_se_ppm)" 'BEGIN { exit !(s > 0 && e < 6 * s && e > -6 * s) }'

done_testing
