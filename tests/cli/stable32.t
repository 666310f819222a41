#!/bin/sh
# SPDX-License-Identifier: ISC
# offsetfit --stability against published results on measured data
# (tests/data/README.md): Stable32's tables of a counter's noise floor
# (55,688 points) and of Stable32's own PHASE.DAT, allantools' results
# for 10,000 points of a caesium clock against a hydrogen maser.  Each
# series goes in as records of integer units (tests/helpers/
# phase2rec.awk, SCALE units a second), so the deviations come out
# SCALE/1e9 times the clock's, alpha and the EDFs unchanged.  Scaled so,
# a series moves faster than any clock between its records, which
# offsetfit would take for steps: --across-steps keeps it whole.
. "$(dirname "$0")/../lib.sh"

data=$NTPX_TOP/tests/data/allantools
p2r=$NTPX_TOP/tests/helpers/phase2rec.awk
all=adev,mdev,tdev,hdev,ohdev,totdev

# against TABLE DEV SCALE: offsetfit's table in $TMP/of (--dev DEV,alpha
# --ci) beside Stable32's TABLE (AF, tau, n, alpha, min, sigma, max, to
# five figures), tau by tau.  Prints one line per disagreement:
#   - the value more than one unit of Stable32's fifth figure off;
#   - alpha not Stable32's at a tau with 30 samples or more (the lag-1
#     method; below, B1 and R(n): offsetfit(1) says why not held);
#   - where alpha agrees, a bound more than 1e-3 off (TOTDEV in flicker
#     PM: offsetfit(1) says why not held);
# and last "checked N ALPHAS", N taus and ALPHAS lag-1 taus compared.
against() {
	awk -v dev="$2" -v scale="$3" '
	FNR == NR { if ($0 !~ /^#/ && NF >= 7) { a[$2 + 0] = $4; lo[$2 + 0] = $5; v[$2 + 0] = $6; hi[$2 + 0] = $7 }; next }
	/^#grid/ { slots = $5 }
	/^#fields/ { for (i = 2; i <= NF; i++) c[$i] = i - 1; next }
	/^#/ || NF == 0 { next }
	function off(got, want) { return want ? (got - want) / want : 0 }
	function unit(x) { return 10 ^ int(log(x) / log(10) - (x < 1)) * 1e-4 }
	{
		t = $1 + 0
		if (!(t in v)) next
		n++
		k = dev == "tdev" ? "tdev_ns" : dev
		kl = dev == "tdev" ? "tdev_lo_ns" : dev "_lo"
		kh = dev == "tdev" ? "tdev_hi_ns" : dev "_hi"
		f = dev == "tdev" ? 1 / scale : 1e9 / scale
		got = $c[k] * f
		if ((got - v[t]) ^ 2 > (1.01 * unit(v[t])) ^ 2)
			printf "tau %g: %s %.5e, Stable32 %.4e\n", t, dev, got, v[t]
		samples = int((slots - 1) / t) + 1
		if (samples >= 30) {
			na++
			if ($c["alpha"] != a[t])
				printf "tau %g (%d samples): alpha %s, Stable32 %s\n", t, samples, $c["alpha"], a[t]
		}
		if ($c["alpha"] == a[t] && !(dev == "totdev" && a[t] == 1) && lo[t] > 0)
			if (off($c[kl] * f, lo[t]) ^ 2 > 1e-6 || off($c[kh] * f, hi[t]) ^ 2 > 1e-6)
				printf "tau %g: %s bounds %.5e %.5e, Stable32 %.4e %.4e\n", t, dev, $c[kl] * f, $c[kh] * f, lo[t], hi[t]
	}
	END { printf "checked %d %d\n", n, na }' "$1" "$TMP/of"
}

# agrees TABLE DEV SCALE N ALPHAS: against's verdict is no disagreement,
# N taus compared, ALPHAS of them by the lag-1 method.
agrees() {
	against "$1" "$2" "$3" >"$TMP/cmp" &&
	test_is "$(cat "$TMP/cmp")" "checked $4 $5"
}

test_expect_success 'setup: the records of each data set' '
	gzip -dc "$data/tic/tic_phase.txt.gz" | awk -v scale=1e13 -f "$p2r" >"$TMP/tic" &&
	awk -v scale=1e13 -f "$p2r" "$data/phasedat/PHASE.DAT" >"$TMP/phasedat" &&
	gzip -dc "$data/cs5071a/5071A_phase_10000.txt.gz" | awk -v scale=1e18 -f "$p2r" >"$TMP/cs" &&
	test_is "$(grep -c " ok$" "$TMP/tic") $(grep -c " ok$" "$TMP/phasedat") $(grep -c " ok$" "$TMP/cs")" \
		"55688 1001 10000"
'

# Each deviation's table of a data set: NAME, the records, the tables
# (%s the deviation, oadev for ADEV), the taus of each and of TOTDEV's,
# one octave longer, and those with 30 samples.  The counter: white PM
# to 1024 s, then flicker PM, the last three octaves under 30 samples
# (B1 and R(n)).  PHASE.DAT: white FM.
while IFS='|' read -r name rec tables n ntot nlag; do
	for dev in adev mdev tdev hdev ohdev totdev; do
		table=$dev
		[ $dev = adev ] && table=oadev
		k=$n
		[ $dev = totdev ] && k=$ntot
		test_expect_success "$name: $dev, alpha and the 1-sigma bounds as Stable32's" "
			offsetfit --across-steps --stability --series offset --dev $dev,alpha --ci \"\$TMP/$rec\" >\"\$TMP/of\" &&
			agrees \"\$data/$(printf "$tables" $table)\" $dev 1e13 $k $nlag
		"
	done
done <<EOF
counter noise floor|tic|tic/tic_%s.txt|14|15|11
PHASE.DAT|phasedat|phasedat/phase_dat_%s_octave.txt|8|9|6
EOF
test_expect_success 'counter noise floor: TIE-RMS as Stable32'\''s' '
	offsetfit --across-steps --stability --series offset --dev tie_rms "$TMP/tic" >"$TMP/of" &&
	awk "FNR == NR { if (\$0 !~ /^#/) v[\$2 + 0] = \$4; next }
		!/^#/ && (\$1 + 0) in v { n++; d = \$3 / 1e13 - v[\$1 + 0]; if (d * d > (1.01e-15) ^ 2) print \"tau\", \$1, \$3 / 1e13, v[\$1 + 0] }
		END { print \"checked\", n }" "$data/tic/tic_tierms.txt" "$TMP/of" >"$TMP/cmp" &&
	test_is "$(cat "$TMP/cmp")" "checked 14"
'

# MTIE: a window of tau holds tau/tau0 + 1 samples.  Stable32's table
# of PHASE.DAT is at 2^k - 1 tau0 (its fast algorithm's taus): the
# windows of 2^k samples.
test_expect_success 'PHASE.DAT: MTIE over windows of tau/tau0 + 1 samples, as Stable32'\''s' '
	offsetfit --across-steps --stability --series offset --dev mtie --taus 1s,3s,7s,15s,31s,63s,127s,255s "$TMP/phasedat" >"$TMP/of" &&
	awk "FNR == NR { if (\$0 !~ /^#/) v[\$2 + 0] = \$4; next }
		!/^#/ && (\$1 + 0) in v { n++; d = \$3 / 1e13 - v[\$1 + 0]; u = v[\$1 + 0] < 1 ? 1e-5 : 1e-4
			if (d * d > (1.01 * u) ^ 2) print \"tau\", \$1, \$3 / 1e13, v[\$1 + 0] }
		END { print \"checked\", n }" "$data/phasedat/phase_dat_mtie.txt" "$TMP/of" >"$TMP/cmp" &&
	test_is "$(cat "$TMP/cmp")" "checked 8"
'

# The caesium's first 10,000 seconds beside allantools' results for
# them (reference_octave.txt says how they were made): alpha at each of
# the 9 octaves with 30 samples, OADEV, MDEV and OHDEV and their 1-sigma
# bounds, within one unit of offsetfit's fifth figure.
test_expect_success 'caesium: alpha, OADEV, MDEV, OHDEV and their bounds as allantools'\'' ' '
	offsetfit --across-steps --stability --series offset --dev adev,mdev,ohdev --ci "$TMP/cs" >"$TMP/of" &&
	awk "FNR == NR { if (\$0 !~ /^#/) { nf = split(\$0, f, \" \"); for (i = 1; i <= nf; i++) r[\$1 + 0, i] = f[i] }; next }
		/^#fields/ { for (i = 2; i <= NF; i++) c[\$i] = i - 1; next }
		/^#/ { next }
		function near(got, want) { return want == \"-\" || (got - want) ^ 2 <= (1.01e-4 * want) ^ 2 }
		(\$1 + 0, 2) in r {
			t = \$1 + 0; k = 3; n++
			if (r[t, 2] != \"-\") { na++; if (\$c[\"alpha\"] != r[t, 2]) print \"tau\", t, \"alpha\", \$c[\"alpha\"], r[t, 2] }
			split(\"adev mdev ohdev\", d, \" \")
			for (j = 1; j <= 3; j++) {
				if (!near(\$c[d[j]] * 1e-9, r[t, k]) || !near(\$c[d[j] \"_lo\"] * 1e-9, r[t, k + 1]) ||
				    !near(\$c[d[j] \"_hi\"] * 1e-9, r[t, k + 2]))
					print \"tau\", t, d[j], \$c[d[j]] * 1e-9, \$c[d[j] \"_lo\"] * 1e-9, \$c[d[j] \"_hi\"] * 1e-9, \"allantools\", r[t, k], r[t, k + 1], r[t, k + 2]
				k += 3
			}
		}
		END { print \"checked\", n, na }" "$data/cs5071a/reference_octave.txt" "$TMP/of" >"$TMP/cmp" &&
	test_is "$(cat "$TMP/cmp")" "checked 12 9"
'
done_testing
