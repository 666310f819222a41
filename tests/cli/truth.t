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
# the machine is, so no bound here is a fixed number of ppm or us: every
# one is an identity that holds exactly whatever the noise, with a
# tolerance that comes from the records themselves.  The truth gives each
# record's measurement error e = (off2 - true2) / 2, and the true offset
# of a detuned sim clock is a straight line in reference time, so:
#   - the true offset's slope against T1 (offsetfit's time axis) is the
#     clock's frequency plus half of it times the slope of the records'
#     T4 - T1, since true2 is taken at the exchange's midpoint;
#   - the fit's drift error is exactly the slope of e, and its residual
#     RMS exactly the RMS of e about its own line;
#   - b_se_ppm is the standard error that ten contiguous batches of the
#     residuals give (how well it covers the error for noise of each
#     kind is a statistical property, checked in tests/unit/stats.c on
#     synthetic noise with a fixed seed; a run on a loaded machine is one
#     draw of noise whose kind nobody controls).
# No real-time priority: on a slow or busy machine of this kind it made
# the loopback round trip slower, not faster, and nothing here needs it.
. "$(dirname "$0")/../lib.sh"

# Per ok record of FILE: t (ns since the first T1), off2 - true2 (twice
# the measurement error e), the delay and T4 - T1.  Shell arithmetic:
# awk's doubles cannot hold ns since 1970 exactly.
measurement_errors() {
	t0=
	rec_cols "$1" t1 t4 delay off2 status true2 >"$TMP/me.cols"
	while read -r t1 t4 delay off2 status true2; do
		[ "$status" = ok ] || continue
		: "${t0:=$t1}"
		echo "$((t1 - t0)) $((off2 - true2)) $delay $((t4 - t1))"
	done <"$TMP/me.cols"
}
# The true2 of every ok record of FILE, and how many ok records it has.
ok_true2() { rec_cols "$1" status true2 | awk '$1 == "ok" { print $2 }'; }
# Records of FILE (measurement_errors') with |off2 - true2| > delay (+ 10 ns).
past_delay() { awk '($2 < 0 ? -$2 : $2) > $3 + 10' "$1" | wc -l; }
# The value of KEY in offsetfit's summary.
v() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/sum"; }
# The least-squares line through "t e", the RMS of e about it, and how
# far the two identities below may miss: true2 is the true offset midway
# between T1 and T4 (src/ntpprobe/run.c), while offsetfit's t is T1, so the true
# offset is a straight line in t only to within 25 ppm of (T4 - T1) / 2 on
# each record.  That can move the slope by at most that over the RMS of
# t about its mean (Cauchy-Schwarz), the RMS by at most that, and each
# printed value by its last digit.  Prints "slope rms slope_tol rms_tol".
error_fit() {
	awk '{ t[NR] = $1; e[NR] = $2; mt += $1; me += $2; if ($3 > w) w = $3 }
		END { mt /= NR; me /= NR
			for (i = 1; i <= NR; i++) { sxx += (t[i] - mt)^2; sxy += (t[i] - mt) * (e[i] - me) }
			b = sxy / sxx
			for (i = 1; i <= NR; i++) ss += (e[i] - me - b * (t[i] - mt))^2
			d = 25e-6 * w / 2
			printf "%.6f %.3f %.9f %.6f\n", b / 1e3, sqrt(ss / NR) / 1e3,
				d / sqrt(sxx / NR) / 1e3 + 2e-6, d / 1e3 + 0.0015 }' "$1"
}
# The true offset's slope against T1 that the records of "t e delay T4-T1"
# (measurement_errors') imply for a clock F ppm fast, and how far
# offsetfit's may miss it: "slope tol", in ppm.  true2 / 2 is minus the
# clock's error at the exchange's midpoint in reference time, and a
# reference interval is the clock's own divided by 1 + F, so against T1
# the truth is -F/(1+F) T1 - (F/2)/(1+F) (T4 - T1) + c: its slope is
# -(F + F/2 s)/(1 + F), s the slope of T4 - T1 against T1.  The sim
# clock rounds each reading to the ns, which moves true2 / 2 by at most
# 1 ns and the slope by at most sum |t - mean t| / Sxx; the printed
# value's last digit adds 1e-6 ppm.
truth_slope() {
	awk -v f="$2" '{ t[NR] = $1; d[NR] = $4; mt += $1; md += $4 }
		END { mt /= NR; md /= NR; F = f * 1e-6
			for (i = 1; i <= NR; i++) { dx = t[i] - mt; sxx += dx * dx
				sxd += dx * (d[i] - md); sa += (dx < 0 ? -dx : dx) }
			printf "%.9f %.9f\n", -(F + F / 2 * sxd / sxx) / (1 + F) * 1e6,
				sa / sxx * 1e6 + 2e-6 }' "$1"
}
# within A B TOL: |A - B| <= TOL.
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && d >= -t) }'; }
# b_err_ppm is b_ppm - true_b_ppm, to 1e-5.
err_is_difference() {
	awk -v a="$(v b_ppm)" -v t="$(v true_b_ppm)" -v e="$(v b_err_ppm)" \
		'BEGIN { d = a - t - e; exit !(d < 1e-5 && d > -1e-5) }'
}

test_expect_success 'setup: a reflector on loopback' '
	port=$(free_udp_port) &&
	spawn RPID ntpreflect --stratum 1 "udp://127.0.0.1:$port" 2>"$TMP/reflect.err" &&
	wait_until 5 udp_listening "$port" &&
	ep=udp://127.0.0.1:$port
'

test_expect_success 'ntpprobe on a sim clock: exit 0' '
	clockstep --clock "sim:$TMP/off" --create --offset 1.5s &&
	ntpprobe -i 20ms -w 1s -c 20 --clock "sim:$TMP/off" "$ep" >"$TMP/off.rec" 2>/dev/null
'

test_expect_success '#clock names the sim clock' '
	test_is "$(sed -n 4p "$TMP/off.rec")" "#clock sim:$TMP/off"
'

test_expect_success 'true2, then the stamp columns, are appended to #fields' '
	test_is "$(sed -n 5p "$TMP/off.rec")" "#fields seq t1 t2 t3 t4 delay off2 status true2 t1q t1k t1h t2k t2h t3q t3k t3h t4k t4h"
'

test_expect_success 'a clock 1.5 s ahead: true2 is -3 s on every record, to the ns' '
	test_is "$(ok_true2 "$TMP/off.rec" | sort -u)" -3000000000
'

# What this suite checks is the truth of what was measured, not how much
# was: a loaded machine may lose an exchange, and which were lost says
# nothing about the others.  So every record is ok or a timeout, and the
# fit has ok records to work on.
test_expect_success '600 exchanges: each ok or a timeout, most of them ok' '
	clockstep --clock "sim:$TMP/drift" --create --freq 25ppm &&
	ntpprobe -i 50ms -w 1s -c 600 --clock "sim:$TMP/drift" "$ep" >"$TMP/drift.rec" 2>"$TMP/drift.err" &&
	n=$(count_status "$TMP/drift.rec" ok) &&
	to=$(count_status "$TMP/drift.rec" timeout) &&
	diag "$n ok, $to timeouts: $(cat "$TMP/drift.err")" &&
	test "$((n + to))" -eq 600 &&
	test "$n" -gt 300
'

test_expect_success '|off2 - true2| <= delay on every record: true2 is the truth the probe measured' '
	measurement_errors "$TMP/drift.rec" >"$TMP/err.raw" &&
	test_is "$(past_delay "$TMP/err.raw")" 0
'

test_expect_success 'offsetfit reads records with true2' '
	offsetfit "$TMP/drift.rec" >"$TMP/sum"
'

test_expect_success 'true_b_ppm is the slope the clock and the records imply' '
	f=$(clockstep --clock "sim:$TMP/drift" --show | awk "\$1 == \"freq_ppm\" { print \$2 }") &&
	truth_slope "$TMP/err.raw" "$f" >"$TMP/tslope" &&
	read -r tslope ttol <"$TMP/tslope" &&
	diag "true_b_ppm $(v true_b_ppm), implied $tslope +-$ttol (clock +$f ppm)" &&
	within "$(v true_b_ppm)" "$tslope" "$ttol"
'

test_expect_success 'b_err_ppm is b - true_b_ppm' '
	err_is_difference
'

test_expect_success 'err_rms_us and err_p99_us are reported' '
	awk -v r="$(v err_rms_us)" -v p="$(v err_p99_us)" "BEGIN { exit !(r > 0 && p > 0 && r != \"\") }"
'

test_expect_success '--json carries the truth' '
	offsetfit --json "$TMP/drift.rec" >"$TMP/json" &&
	test_grep "\"b_err_ppm\":" "$TMP/json"
'

test_expect_success 'the drift error is the slope of the measurement errors' '
	diag "drift: b $(v b_ppm) ppm (error $(v b_err_ppm), standard error $(v b_se_ppm)), residual rms $(v rms_us) us, bias $(v bias_us) us, rtt p99 $(v rtt_p99_us) us" &&
	awk "{ printf \"%.9f %.1f %d\\n\", \$1 / 1e9, \$2 / 2, \$4 }" "$TMP/err.raw" >"$TMP/err.dat" &&
	error_fit "$TMP/err.dat" >"$TMP/efit" &&
	read -r eslope erms eslope_tol erms_tol <"$TMP/efit" &&
	diag "$(v b_err_ppm) vs $eslope ppm, +-$eslope_tol" &&
	within "$(v b_err_ppm)" "$eslope" "$eslope_tol"
'

test_expect_success 'the residual rms is their rms about that line' '
	diag "$(v rms_us) vs $erms us, +-$erms_tol" &&
	within "$(v rms_us)" "$erms" "$erms_tol"
'

# b_se_ppm from offsetfit --residuals (t in s, residual in us): the
# residuals' products with t - mean t summed over ten contiguous batches
# (record i of n in batch i * 10 / n), as lib/stats.c sums them; "se tol",
# the tolerance from the residuals' printed half-ns.
batch_se() {
	awk '!/^#/ { n++; t[n] = $1; r[n] = $2; mt += $1 }
		END { mt /= n; nb = n < 10 ? n : 10
			for (i = 1; i <= n; i++) { dx = t[i] - mt; sxx += dx * dx
				k = int((i - 1) * nb / n); z[k] += dx * r[i]
				u[k] += (dx < 0 ? -dx : dx) * 0.0005 }
			for (k = 0; k < nb; k++) { sz += z[k] * z[k]; su += u[k] * u[k] }
			printf "%.9f %.9f\n", sqrt(sz * nb / (nb - 2)) / sxx,
				sqrt(su * nb / (nb - 2)) / sxx + 2e-6 }' "$1"
}

test_expect_success 'b_se_ppm is the standard error of the residuals in ten batches' '
	offsetfit --residuals "$TMP/drift.rec" >"$TMP/resid" &&
	batch_se "$TMP/resid" >"$TMP/bse" &&
	read -r bse bse_tol <"$TMP/bse" &&
	diag "b_se_ppm $(v b_se_ppm), from the residuals $bse +-$bse_tol; the error was $(v b_err_ppm) ppm" &&
	within "$(v b_se_ppm)" "$bse" "$bse_tol"
'

# Two sim clocks, the server's and the client's (ntpreflect --clock,
# ntpprobe --server-clock): true2 is the true offset between them, and
# the bound it keeps (ntpprobe(1)) is counted at every layer.
# bound LAYER FILE: "broken checked" from the summary's truth bound line.
bound() {
	awk -v l="$1" '/truth bound/ { for (i = 1; i < NF; i++) if ($i == l) {
		v = $(i + 1); sub(/,$/, "", v); split(v, a, "/"); print a[1], a[2] } }' "$2"
}

test_expect_success 'setup: a reflector on a sim clock of its own, losing 5% of its replies' '
	clockstep --clock "sim:$TMP/srv" --create --offset -2ms --freq -30ppm &&
	clockstep --clock "sim:$TMP/cli" --create --offset 3ms --freq 20ppm &&
	port2=$(free_udp_port) &&
	spawn SPID lossinject -r 5% -s 7 -- ntpreflect --clock "sim:$TMP/srv" \
		"udp://127.0.0.1:$port2" 2>"$TMP/srv.err" &&
	wait_until 5 udp_listening "$port2" &&
	ep2=udp://127.0.0.1:$port2
'

test_expect_success 'both clocks pure offsets: true2 is twice their difference on every record, to the ns' '
	clockstep --clock "sim:$TMP/p1" --create --offset 1ms &&
	clockstep --clock "sim:$TMP/p2" --create --offset -500us &&
	port3=$(free_udp_port) &&
	spawn PPID ntpreflect --clock "sim:$TMP/p2" "udp://127.0.0.1:$port3" 2>/dev/null &&
	wait_until 5 udp_listening "$port3" &&
	ntpprobe -i 10ms -w 1s -c 50 --clock "sim:$TMP/p1" --server-clock "sim:$TMP/p2" \
		"udp://127.0.0.1:$port3" >"$TMP/p.rec" 2>/dev/null &&
	test_is "$(ok_true2 "$TMP/p.rec" | sort -u)" -3000000 &&
	stop_pid "$PPID"
'

test_expect_success 'the server on a sim clock is a local reference at stratum 1' '
	ntpprobe -1 --clock "sim:$TMP/cli" "$ep2" >"$TMP/once" 2>&1 &&
	test_grep "stratum 1, refid NTPX, leap 0" "$TMP/once"
'

test_expect_success '1000 interleaved exchanges between the two clocks, --pair' '
	ntpprobe -i 1ms -w 200ms -c 1000 --xleave --clock "sim:$TMP/cli" --server-clock "sim:$TMP/srv" \
		--pair cli,srv "$ep2" >"$TMP/pair.rec" 2>"$TMP/pair.err" &&
	diag "$(cat "$TMP/pair.err")" &&
	test "$(count_status "$TMP/pair.rec" ok)" -gt 0
'

test_expect_success '#pair names the two hosts, after #endpoint and before the first record' '
	sed -n "/^#endpoint/,/^[0-9]/p" "$TMP/pair.rec" >"$TMP/head" &&
	test_grep -x "#pair cli srv" "$TMP/head"
'

test_expect_success 'the truth bound is held at every layer, and broken by no record' '
	ok=$(count_status "$TMP/pair.rec" ok) &&
	for l in user client-kernel kernel; do
		set -- $(bound "$l" "$TMP/pair.err") && broken=$1 checked=$2 &&
		diag "$l: $broken of $checked broken ($ok ok)" &&
		is_num "$checked" && test "$checked" -gt 0 && test "$checked" -le "$ok" &&
		test_is "$broken" 0 || return 1
	done &&
	test_is "$(bound user "$TMP/pair.err" | cut -d" " -f2)" "$ok"
'

test_expect_success 'true2 agrees with the two clocks: |off2 - true2| <= delay on every ok record' '
	measurement_errors "$TMP/pair.rec" >"$TMP/pair.raw" &&
	test_is "$(past_delay "$TMP/pair.raw")" 0
'

test_expect_success 'a misread server clock breaks the bound on every record, and the first is named' '
	clockstep --clock "sim:$TMP/wrong" --create --offset 1s &&
	ntpprobe -i 10ms -w 1s -c 20 --clock "sim:$TMP/cli" --server-clock "sim:$TMP/wrong" \
		"$ep2" >"$TMP/wrong.rec" 2>"$TMP/wrong.err" &&
	set -- $(bound user "$TMP/wrong.err") && broken=$1 checked=$2 &&
	test "$checked" -gt 0 && test_is "$broken" "$checked" &&
	test_grep "lies outside T3 - T4 .. T2 - T1" "$TMP/wrong.err"
'

test_expect_success 'a bad --pair or --server-clock is refused with one line, exit 2 (a usage error)' '
	for a in "--pair a,a" "--pair a" "--pair a,b,c" "--pair ,b" "--server-clock realtime" \
		 "--pair a,b --human"; do
		test_exit 2 ntpprobe $a -c 1 "$ep2" >/dev/null 2>"$TMP/bad.err" &&
		test_is "$(grep -c "^ntpprobe: " "$TMP/bad.err")" 1 || return 1
	done
'

test_expect_success 'the reflector on a sim clock ends cleanly' '
	stop_pid "$SPID"
'

done_testing
