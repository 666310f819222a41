#!/bin/sh
# SPDX-License-Identifier: ISC
# report.html in a real browser: headless Chromium (Debian's chromium,
# which make deps installs) opens the report of a small package built
# here, at a laptop's screen size, through tests/helpers/browser.py (the
# DevTools protocol on a pipe; it reports what it sees, this suite
# judges).  Every image loads with a size, the console shows no error,
# no link inside the package is broken, the findings open the first
# screen, wide tables scroll in their own box rather than the page, and
# every figure's SVG opens on its own.  The first screen is kept as a
# PNG in build/test-output/report-browser/ (with the package) for a look.
#
# The package, as tests/cli/analysis.t builds one but smaller: real runs
# on loopback (freerun on two reflectors standing for two paths, steady
# on a disciplined sim: clock, the stages family itself with a light
# load on lo) and synthesized directional runs (tests/helpers/
# synthrec.awk, a mock: one-way load needs the lab).
. "$(dirname "$0")/../lib.sh"
need_prereq GNUPLOT
need python3
A=$NTPX_TOP/analysis
SYNTH=$NTPX_TOP/tests/helpers/synthrec.awk
BROWSER=$NTPX_TOP/tests/helpers/browser.py
OUT=$NTPX_TOP/build/test-output/report-browser
P=$TMP/pkg

# Where Chromium cannot run (no chromium, no way to start it here) the
# suite is skipped with the reason; any other failure of the helper fails
# the tests below.
command -v chromium >/dev/null 2>&1 || skip_all "no chromium (make deps installs Debian's)"
why=$(python3 "$BROWSER" --probe 2>&1 >/dev/null)
[ $? != 3 ] || skip_all "$why"

idx=0
# newrun FAMILY CONDITION TRANSPORT: RUN (the directory), IDX.
newrun() {
	idx=$((idx + 1))
	RUN=$P/runs/$idx-$1-$2-$3-r1
	mkdir -p "$RUN" &&
	printf '%d\t%s\t%s\t%s\t1\n' $idx "$1" "$2" "$3" >>"$P/order.tsv"
}
ev() { printf '%s\t%d\t%s\t%s\n' "$(date +%s%N)" $idx "$1" "${2:-}" >>"$P/events.tsv"; }
# ports P P+1 P+2 free for the stages run (its server and load sinks).
three_free() {
	_p=$(free_udp_port)
	while ss -Hlun "sport = :$((_p + 1)) or sport = :$((_p + 2))" | grep -q .; do
		_p=$((_p + 3))
	done
	echo "$_p"
}

# The facts browser.py reported (facts.tsv), by kind.
facts() { awk -F'\t' -v k="$1" '$1 == k' "$TMP/facts.tsv"; }
bad_images() { facts image | awk -F'\t' '!($3 > 0 && $4 > 0 && $5 == "complete")'; }
bad_links() { facts link | awk -F'\t' '$4 != "exists"'; }
bad_anchors() { facts anchor | awk -F'\t' '$3 != "present"'; }
errors() { facts console | awk -F'\t' '$3 == "error"'; }
# A table wider than its box: the box scrolls, and stays inside the page.
bad_boxes() { facts box | awk -F'\t' -v vw="$(facts page | cut -f3)" \
	'($3 > $4 && $5 != "auto" && $5 != "scroll") || $7 > vw'; }
wide_boxes() { facts box | awk -F'\t' '$3 > $4' | wc -l; }
bad_svgs() { facts svg | awk -F'\t' '!($3 == "svg" && $4 > 0 && $5 > 0)'; }
# The figures the report shows and links, by name.
report_svgs() { grep -o 'href="figures/[^"]*\.svg"' "$P/report.html" | sort -u | wc -l; }
report_imgs() { grep -o '<img src="[^"]*"' "$P/report.html" | wc -l; }
# PNG FILE's width and height from its IHDR.
png_size() {
	[ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d\n", $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'
}
# Every <table> of report.html comes after the findings' heading.
findings_first() {
	awk '/id="findings"/ && !t { f = 1 } /<table/ && !f { t = 1 } END { exit !(f && !t) }' "$P/report.html"
}

test_expect_success 'setup: the frame of a package (events, order, transports, study.conf)' '
	rm -rf "$OUT" && mkdir -p "$OUT" "$P/runs" "$P/inventory" &&
	printf "#fields t_ns run event detail\n" >"$P/events.tsv" &&
	printf "#fields idx family condition transport rep\n" >"$P/order.tsv" &&
	printf "#fields transport status detail\n" >"$P/transports.tsv" &&
	printf "udp\tpresent\tkernel UDP, loopback\nudp2\tpresent\tkernel UDP, a second reflector\nib\tabsent\tno RDMA device\n" >>"$P/transports.tsv" &&
	printf "seed=7\nreps=1\nquick=1\nlab=loopback-test\n" >"$P/study.conf" &&
	uname -a >"$P/inventory/kernel.txt"
'
test_expect_success 'setup: freerun on two reflectors, steady on a disciplined sim: clock' '
	start_reflector && p1=$REFLECT_PORT &&
	start_reflector && p2=$REFLECT_PORT &&
	for t in udp:$p1 udp2:$p2
	do
		newrun freerun idle ${t%:*} && ev run_start &&
		ntpprobe -i 5ms -c 60 "udp://127.0.0.1:${t#*:}" >"$RUN/probe.rec" 2>>"$TMP/probe.err" &&
		ev run_end && touch "$RUN/done" || return 1
	done &&
	newrun steady disciplined udp && ev run_start &&
	clockstep --clock "sim:$TMP/clock" --create --offset 500us --freq +12ppm >/dev/null &&
	ntpprobe -i 20ms -c 80 --clock "sim:$TMP/clock" --discipline "udp://127.0.0.1:$p1" >"$RUN/probe.rec" 2>>"$TMP/probe.err" &&
	ev run_end && touch "$RUN/done"
'
test_expect_success 'setup: synthesized directional runs (a mock of one-way load)' '
	for c in c2r r2c both
	do
		case $c in c2r) q="-v qreq=300" ;; r2c) q="-v qresp=300" ;; both) q="-v qreq=300 -v qresp=300" ;; esac &&
		newrun directional $c udp &&
		awk -f "$SYNTH" -v kind=directional -v n=60 -v ms=50 -v idx=$idx -v start="$(date +%s)" \
			-v seed=$idx -v ev="$P/events.tsv" $q >"$RUN/probe.rec" &&
		touch "$RUN/done" || return 1
	done
'
test_expect_success 'setup: the stages family on loopback, a 20 Mbit/s load on lo' '
	port=$(three_free) &&
	newrun stages block-any udp &&
	ntpx-stages -o "$RUN" -t udp -c block-any -d 2s -i 20ms --ref 127.0.0.1 --client 127.0.0.1 \
		--ref-dev lo --client-dev lo --port "$port" --load-port $((port + 1)) \
		--capacity 1000000000 --load 20M -E "$P/events.tsv" -R $idx 2>"$TMP/stages.err"
'
test_expect_success 'setup: summarize, figures, report' '
	"$A/ntpx-summarize" "$P" && "$A/ntpx-figures" "$P" 2>"$TMP/fig.err" && "$A/ntpx-report" "$P" &&
	test_atexit "cp -r \"$P\" \"$OUT/pkg\""
'

test_expect_success 'the findings come before every table of report.html' '
	findings_first
'
test_expect_success 'Chromium opens report.html at 1366x768 and every linked SVG' '
	python3 "$BROWSER" --width 1366 --height 768 --shot "$OUT/first-screen.png" "$P/report.html" \
		>"$TMP/facts.tsv" 2>"$TMP/browser.err" &&
	diag "first screen: $OUT/first-screen.png"
'
test_expect_success 'every image loaded, with a non-zero natural size' '
	test_is "$(facts image | wc -l)" "$(report_imgs)" &&
	test "$(report_imgs)" -ge 5 &&
	test_is "$(bad_images)" ""
'
test_expect_success 'the console shows no error' '
	facts console | sed "s/^/# /" >&4 &&
	test_is "$(errors)" ""
'
test_expect_success 'every link and image inside the package names a file there' '
	test "$(facts link | wc -l)" -ge 10 &&
	test_is "$(bad_links)" ""
'
test_expect_success "every in-page link (the findings' numbers) names a section there" '
	test "$(facts anchor | wc -l)" -ge 4 &&
	test_is "$(bad_anchors)" ""
'
test_expect_success 'the first screen shows the findings' '
	test_grep "^firstscreen	Findings" "$TMP/facts.tsv"
'
test_expect_success 'the page is no wider than the screen' '
	set -- $(facts page | cut -f2,3) &&
	diag "document $1 px, viewport $2 px" &&
	test "$1" -le "$2"
'
test_expect_success 'a table wider than its box scrolls inside it (the stages table is one)' '
	test "$(wide_boxes)" -ge 1 &&
	test_is "$(bad_boxes)" ""
'
test_expect_success "every figure's SVG opens on its own, an svg with a size" '
	test_is "$(facts svg | wc -l)" "$(report_svgs)" &&
	test_is "$(bad_svgs)" ""
'
test_expect_success 'the first screen is a 1366x768 PNG in the test output' '
	test_is "$(png_size "$OUT/first-screen.png")" 1366x768
'
done_testing
