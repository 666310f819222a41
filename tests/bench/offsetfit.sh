#!/bin/sh
# SPDX-License-Identifier: ISC
# Benchmark: offsetfit's throughput and memory on a 10-million-record file,
# versus an equivalent gawk script (the same fit, residuals and quantiles)
# and versus `wc -l` on the same file (the cost of just reading it).
# Targets: >= 10x gawk, >= 5 million records/s, peak memory <= 24 bytes
# per record, and (issue 21) at most 8 times the time of `wc -l`, the
# same-run ratio of the medians, printed with "met" or "NOT met".  wc and
# offsetfit run three times and the median time is quoted; gawk, some
# fifty times slower, runs once.
. "$(dirname "$0")/../lib.sh"
N=${NTPX_BENCH_RECORDS:-10000000}
f=$TMP/records
"$NTPX_TOP/build/bench/genrec" "$N" 7 >"$f"
cat "$f" >/dev/null	# into the page cache for everyone alike

cat >"$TMP/fit.awk" <<'AWK'
# offsetfit in gawk: the same fit, residuals and quantiles.
/^#fields/ { for (i = 2; i <= NF; i++) col[$i] = i - 1; next }
/^#/ { next }
{
	records++
	if ($col["status"] != "ok") next
	if (!n) t0 = $col["t1"]
	n++
	t[n] = ($col["t1"] - t0) / 1e9; y[n] = $col["off2"] / 2; d[n] = $col["delay"]
	sx += t[n]; sy += y[n]
}
END {
	mx = sx / n; my = sy / n
	for (i = 1; i <= n; i++) { sxx += (t[i] - mx) ^ 2; sxy += (t[i] - mx) * (y[i] - my) }
	b = sxy / sxx; a = my - b * mx
	for (i = 1; i <= n; i++) { r = y[i] - a - b * t[i]; ss += r * r; ar[i] = r < 0 ? -r : r }
	asort(ar); asort(d)
	printf "n %d\nb_ppm %.6f\nrms_us %.3f\np99_us %.3f\nrtt_median_us %.3f\n", n, b / 1e3, sqrt(ss / n) / 1e3, ar[int(0.99 * n)] / 1e3, d[int(0.5 * n)] / 1e3
}
AWK

# median_of RUNS CMD...: the median elapsed seconds of RUNS runs; the
# last run's peak RSS in KiB in $TMP/rss.
median_of() {
	runs=$1
	shift
	for i in $(seq "$runs"); do
		# Elapsed to the microsecond: time(1)'s hundredths are an eighth
		# of wc -l's time on 10 M records.  Both sides include about a
		# millisecond of starting time(1) and date(1), under 1% of the
		# ratio.
		_t0=$(date +%s%N)
		/usr/bin/time -f '%M' -o "$TMP/rss" "$@" >/dev/null 2>&1
		_t1=$(date +%s%N)
		awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }'
	done | sort -g | sed -n "$(((runs + 1) / 2))p"
}

wc_s=$(median_of 3 wc -l "$f")
of_s=$(median_of 3 "$NTPX_BIN/offsetfit" "$f")
of_kb=$(cat "$TMP/rss")
aw_s=$(median_of 1 gawk -f "$TMP/fit.awk" "$f")
aw_kb=$(cat "$TMP/rss")

awk -v n="$N" -v w="$wc_s" -v o="$of_s" -v a="$aw_s" -v okb="$of_kb" -v akb="$aw_kb" 'BEGIN {
	printf "offsetfit: %d records (wc, offsetfit: median of 3 runs; gawk: 1 run)\n", n
	printf "  %-10s %8.3f s %12.0f records/s\n", "wc -l", w, n / w
	printf "  %-10s %8.3f s %12.0f records/s  %6.1f bytes/record peak\n", "offsetfit", o, n / o, okb * 1024 / n
	printf "  %-10s %8.2f s %12.0f records/s  %6.1f bytes/record peak\n", "gawk", a, n / a, akb * 1024 / n
	printf "  offsetfit / gawk speed: %.1fx (target >= 10x)\n", a / o
	printf "  offsetfit rate: %.2f M records/s (target >= 5)\n", n / o / 1e6
	printf "  offsetfit memory: %.1f bytes/record (target <= 24)\n", okb * 1024 / n
	printf "  offsetfit / wc -l time: %.1fx (target <= 8): %s\n", o / w, o <= 8 * w ? "met" : "NOT met"
}'
