#!/bin/sh
# SPDX-License-Identifier: ISC
# One command-line dialect (doc/ntpx.7, OPTIONS): a letter means one thing
# in every tool's --help, the table says which, and each old spelling
# still works for this release, with one line on stderr and otherwise
# exactly what its new spelling gives.
. "$(dirname "$0")/../lib.sh"
need_prereq BUILT

tools="ntpprobe ntpreflect loadgen offsetfit ntpstages ntpmesh ntpfilter clockstep lossinject tether wiredelay ntpx-units
	ntpx-check ntpx-convert ntpx-study ntpx-lab ntpx-freerun ntpx-loaded ntpx-bursts ntpx-directional
	ntpx-recovery ntpx-loss ntpx-steady ntpx-sweep ntpx-stages ntpx-mesh ntpx-meshrun"

# The table of ntpx(7)'s OPTIONS: "-X --long" a line.
table() {
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$NTPX_TOP/doc/ntpx.7" |
		sed -n 's/^\.BR \\-\(.\) ", " \\-\\-\([a-z-]*\).*/-\1 --\2/p'
}
# Every "-X, --long" of every tool's --help: "TOOL -X --long" a line.
letters() {
	for t in $tools; do
		"$NTPX_BIN/$t" --help >"$TMP/help" 2>&1 || return 1
		sed -n "s/^ *\(-[a-zA-Z0-9]\), \(--[a-z-]*\).*/$t \1 \2/p" "$TMP/help" || return 1
	done
}
# The lines of letters whose pair the table does not have (-t: the
# families' --transport is ntpx-study's --transports, one thing).
strays() {
	table >"$TMP/table" &&
	letters >"$TMP/letters" &&
	awk 'NR == FNR { want[$1] = $2; next }
		{ l = $3; if ($2 == "-t") sub(/s$/, "", l); w = want[$2]; if ($2 == "-t") sub(/s$/, "", w)
		  if (l != w) print }' "$TMP/table" "$TMP/letters"
}

test_expect_success 'setup: records with stamps, from a reflector on loopback' '
	start_reflector &&
	ntpprobe -i 10ms -w 5s -c 20 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rec" 2>/dev/null &&
	test_is "$(count_status "$TMP/rec" ok)" 20
'

test_expect_success "ntpx(7)'s table has the shared letters" '
	table >"$TMP/table" &&
	test_grep -x -e "-c --count" "$TMP/table" &&
	test_grep -x -e "-u --user" "$TMP/table" &&
	test_grep -x -e "-s --size" "$TMP/table"
'
test_expect_success 'every letter in every --help is the one of the table' '
	strays >"$TMP/strays" &&
	test "$(wc -l <"$TMP/letters")" -gt 40 &&
	test_is "$(cat "$TMP/strays")" ""
'
test_expect_success 'no letter means two things (the table names each once)' '
	test_is "$(table | cut -d" " -f1 | sort | uniq -d)" ""
'

# same OLD-CMD :: NEW-CMD: OLD gives NEW's stdout and exit status, and its
# stderr is NEW's after one line, "TOOL: OPT is the old spelling of ...".
same() {
	_o= _n=
	while [ "$1" != :: ]; do _o="$_o $(sq "$1")"; shift; done
	shift
	for _a; do _n="$_n $(sq "$_a")"; done
	(cd "$TMP" && eval "$_o") >"$TMP/old.out" 2>"$TMP/old.err" </dev/null
	_orc=$?
	(cd "$TMP" && eval "$_n") >"$TMP/new.out" 2>"$TMP/new.err" </dev/null
	_nrc=$?
	test_is "$_orc" "$_nrc" &&
	cmp "$TMP/old.out" "$TMP/new.out" &&
	test_grep -E "^[a-z-]+: (-[a-zA-Z]|--[a-z-]+) is the old spelling of [^ ]+( \(--[a-z-]+\))?; it goes in the next release$" "$TMP/old.err" &&
	tail -n +2 "$TMP/old.err" >"$TMP/old.rest" &&
	cmp "$TMP/old.rest" "$TMP/new.err"
}
sq() { printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"; }

test_expect_success 'ntpreflect -s, -r, -n: --stratum, --refid, -c' '
	same ntpreflect -s 16 udp://127.0.0.1:9 :: ntpreflect --stratum 16 udp://127.0.0.1:9 &&
	same ntpreflect -r TOOLONG udp://127.0.0.1:9 :: ntpreflect --refid TOOLONG udp://127.0.0.1:9 &&
	same ntpreflect -n 0 udp://127.0.0.1:9 :: ntpreflect -c 0 udp://127.0.0.1:9
'
test_expect_success 'ntpreflect -n 2: answers two requests and exits, as -c 2' '
	p=$(free_udp_port) &&
	spawn r ntpreflect --stratum 1 -n 2 "udp://127.0.0.1:$p" 2>"$TMP/r.err" &&
	wait_until 5 udp_listening "$p" &&
	ntpprobe -i 10ms -w 5s -c 2 "udp://127.0.0.1:$p" >/dev/null 2>&1 &&
	wait "$r" &&
	test_grep "^ntpreflect: -n is the old spelling of -c (--count)" "$TMP/r.err"
'
test_expect_success 'loadgen -c, -n: --calibrate, --ntp' '
	same loadgen -c --rate 5G udp://127.0.0.1:9 :: loadgen --calibrate --rate 5G udp://127.0.0.1:9 &&
	same loadgen -n 5% udp://127.0.0.1:9 :: loadgen --ntp 5% udp://127.0.0.1:9
'
test_expect_success 'clockstep -c: --clock' '
	same clockstep -c realtime --step 1s :: clockstep --clock realtime --step 1s &&
	same clockstep -c sim:c1 --create :: clockstep --clock sim:c2 --create
'
test_expect_success 'ntpfilter -w: --window' '
	same ntpfilter -w 4 "$TMP/rec" :: ntpfilter --window 4 "$TMP/rec" &&
	test "$(wc -l <"$TMP/new.out")" -gt 20
'
test_expect_success 'ntpstages -s: --same-clock' '
	same ntpstages -s "$TMP/rec" :: ntpstages --same-clock "$TMP/rec"
'
test_expect_success 'lossinject -s, -e: --seed, --every' '
	same lossinject --drop 5% -s 3 -- sh -c "echo \$NTPX_LOSS" :: lossinject --drop 5% --seed 3 -- sh -c "echo \$NTPX_LOSS" &&
	test_grep "3" "$TMP/new.out" &&
	same lossinject -e 4 -- sh -c "echo \$NTPX_LOSS" :: lossinject --every 4 -- sh -c "echo \$NTPX_LOSS"
'
# A rate is traffic (loadgen -r 5%: of the capacity); a drop probability
# is --drop, and lossinject's -r and --rate are its old spellings.
test_expect_success 'lossinject -r, --rate: --drop' '
	same lossinject -r 5% --seed 3 -- sh -c "echo \$NTPX_LOSS" :: lossinject --drop 5% --seed 3 -- sh -c "echo \$NTPX_LOSS" &&
	test_is "$(cat "$TMP/new.out")" "rate:0.05:3" &&
	same lossinject --rate 0.25 -- sh -c "echo \$NTPX_LOSS" :: lossinject --drop 0.25 -- sh -c "echo \$NTPX_LOSS" &&
	same lossinject --rate 101% -- true :: lossinject --drop 101% -- true &&
	test_grep "^lossinject: bad --drop .101%." "$TMP/new.err" &&
	"$NTPX_BIN/lossinject" --help >"$TMP/help" &&
	test_grep -e "--drop P" "$TMP/help" &&
	! grep -e "--rate" "$TMP/help"
'
test_expect_success 'tether -s, -b, -t, -r: --side, --bin, --tag, --ready' '
	same tether -x env -s one --bin /nowhere -- true :: tether -x env --side one --bin /nowhere -- true &&
	same tether -x env --side one -b /nowhere -- true :: tether -x env --side one --bin /nowhere -- true &&
	same tether -x env -t bad/tag -- true :: tether -x env --tag bad/tag -- true &&
	same tether -x env -r "$TMP/ready1" -- sh -c "echo out; exit 3" :: tether -x env --ready "$TMP/ready2" -- sh -c "echo out; exit 3" &&
	test -e "$TMP/ready1" && test -e "$TMP/ready2"
'
test_expect_success 'ntpx-study -s, -r, -c: --seed, --reps, --conditions (the plan)' '
	"$NTPX_BIN/ntpx-study" --plan -s 5 -r 2 -f freerun,loss -c idle,5pct -t udpfast >"$TMP/old.out" 2>"$TMP/old.err" &&
	"$NTPX_BIN/ntpx-study" --plan --seed 5 --reps 2 -f freerun,loss --conditions idle,5pct -t udpfast >"$TMP/new.out" 2>"$TMP/new.err" &&
	cmp "$TMP/old.out" "$TMP/new.out" &&
	test "$(grep -c . "$TMP/new.out")" -gt 2 &&
	test_is "$(grep -c "is the old spelling of" "$TMP/old.err")" 3 &&
	test_is "$(grep -vc "is the old spelling of" "$TMP/old.err")" "$(grep -c . "$TMP/new.err")"
'
test_expect_success "a family's -c: --condition" '
	same ntpx-recovery -o dir -c nosuch :: ntpx-recovery -o dir --condition nosuch
'
test_expect_success 'ntpx-lab -q, -s: --queue, --shape' '
	"$NTPX_BIN/ntpx-lab" -q 2ms -s egress --help >"$TMP/old.out" 2>"$TMP/old.err" &&
	"$NTPX_BIN/ntpx-lab" --queue 2ms --shape egress --help >"$TMP/new.out" 2>"$TMP/new.err" &&
	cmp "$TMP/old.out" "$TMP/new.out" &&
	test_is "$(grep -c "is the old spelling of" "$TMP/old.err")" 2
'

test_expect_success 'ntpprobe and loadgen take -u as --user' '
	same_u() { "$@" >"$TMP/u.out" 2>"$TMP/u.err"; echo "$?"; cat "$TMP/u.err"; } &&
	test_is "$(same_u ntpprobe -u nosuchuser -c 1 udp://127.0.0.1:9)" "$(same_u ntpprobe --user nosuchuser -c 1 udp://127.0.0.1:9)" &&
	test_grep "nosuchuser" "$TMP/u.err" &&
	test_is "$(same_u loadgen -u nosuchuser -d 1s udp://127.0.0.1:9)" "$(same_u loadgen --user nosuchuser -d 1s udp://127.0.0.1:9)"
'
test_expect_success 'loadgen, as ntpprobe: a zero timeout is a usage error' '
	test_exit 2 ntpprobe -w 0 udp://127.0.0.1:9 2>/dev/null &&
	test_exit 2 loadgen -w 0 --ntp 1k udp://127.0.0.1:9 2>"$TMP/err" &&
	test_grep "^loadgen: bad timeout .0.$" "$TMP/err"
'
# An endpoint that cannot be opened (a source address not on this host):
# a bad value is named before the open would fail.
test_expect_success 'loadgen checks every value before it opens the endpoint' '
	nobind="udp://127.0.0.1:9?src=192.0.2.1" &&
	test_exit 1 loadgen -d 1s "$nobind" 2>"$TMP/err" &&
	test_grep "cannot bind" "$TMP/err" &&
	for v in "--rate bad" "--capacity 5%" "--size 5" "--burst 2s" "--burst 2s/6s --start x"; do
		test_exit 2 loadgen $v "$nobind" 2>"$TMP/err" &&
		test_grep "^loadgen: bad" "$TMP/err" || return 1
	done &&
	test_exit 2 loadgen --ntp 5% "$nobind" 2>"$TMP/err" &&
	test_grep "^loadgen: bad --ntp rate" "$TMP/err"
'

# The clock filter's window is --window N in ntpfilter and ntpprobe alike
# (and --discipline-params window=N in ntpprobe, the same): fcount, the
# samples in the window, rises to N and no further.
fcount_max() { awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
	{ c = field("fcount") + 0; if (c > m) m = c } END { print m + 0 }' "$1"; }
test_expect_success 'the filter window: --window N in ntpfilter and ntpprobe --discipline' '
	clockstep --clock "sim:$TMP/wclk" --create >/dev/null &&
	ntpprobe --clock "sim:$TMP/wclk" --discipline --window 3 -i 10ms -c 20 -w 2s \
		"udp://127.0.0.1:$REFLECT_PORT" >"$TMP/w3.rec" 2>/dev/null &&
	test_is "$(fcount_max "$TMP/w3.rec")" 3 &&
	ntpprobe --clock "sim:$TMP/wclk" --discipline --discipline-params window=5 -i 10ms -c 20 -w 2s \
		"udp://127.0.0.1:$REFLECT_PORT" >"$TMP/w5.rec" 2>/dev/null &&
	test_is "$(fcount_max "$TMP/w5.rec")" 5 &&
	ntpfilter --window 3 "$TMP/rec" >"$TMP/f3.rec" &&
	test_is "$(fcount_max "$TMP/f3.rec")" 3 &&
	test_exit 2 ntpprobe --window 3 "udp://127.0.0.1:$REFLECT_PORT" 2>"$TMP/err" &&
	test_grep "^ntpprobe: --window needs --discipline$" "$TMP/err" &&
	test_exit 2 ntpprobe --discipline --window 0 "udp://127.0.0.1:$REFLECT_PORT" 2>"$TMP/err" &&
	test_grep "^ntpprobe: bad --window .0. (1 to 64)$" "$TMP/err" &&
	test_exit 2 ntpfilter --window 0 "$TMP/rec" 2>"$TMP/err" &&
	test_grep "^ntpfilter: bad --window .0. (1 to 64)$" "$TMP/err"
'

# NTS-KE's port is --nts-port everywhere (tests/cli/nts.t runs it against
# a server); a client's --nts=HOST:PORT says the same in the address.
test_expect_success 'NTS-KE port: --nts-port in ntpreflect, ntpprobe and loadgen' '
	for t in ntpreflect ntpprobe loadgen; do
		"$NTPX_BIN/$t" --help >"$TMP/help" &&
		test_grep -e "--nts-port PORT" "$TMP/help" || return 1
	done &&
	test_exit 2 ntpprobe --nts-port 4461 udp://127.0.0.1:9 2>"$TMP/err" &&
	test_grep "^ntpprobe: --nts-port needs --nts$" "$TMP/err" &&
	test_exit 2 ntpprobe --nts=127.0.0.1:4460 --nts-port 4461 udp://127.0.0.1:9 2>"$TMP/err" &&
	test_grep "^ntpprobe: --nts=127.0.0.1:4460 names a port already" "$TMP/err" &&
	test_exit 2 loadgen --ntp 1k --nts --nts-port 0 udp://127.0.0.1:9 2>"$TMP/err" &&
	test_grep "^loadgen: bad NTS-KE port .0.$" "$TMP/err" &&
	test_exit 2 ntpreflect --nts-port 0 udp://127.0.0.1:9 2>"$TMP/err" &&
	test_grep "^ntpreflect: bad NTS-KE port .0.$" "$TMP/err"
'

# --poll and -c/--count are one parser in ntpprobe and ntpreflect
# (lib/opt.c): a bad value is the same one line and exit 2 in both.
test_expect_success '--poll and --count: one check and one line in ntpprobe and ntpreflect' '
	for t in ntpprobe ntpreflect; do
		test_exit 2 $t --poll spin udp://127.0.0.1:9 2>"$TMP/err" &&
		test_is "$(head -n 1 "$TMP/err")" "$t: bad poll mode '\''spin'\'' (block or busy)" &&
		test_exit 2 $t -c 0 udp://127.0.0.1:9 2>"$TMP/err" &&
		test_is "$(head -n 1 "$TMP/err")" "$t: bad count '\''0'\''" &&
		test_exit 2 $t --count 2x udp://127.0.0.1:9 2>"$TMP/err" &&
		test_is "$(head -n 1 "$TMP/err")" "$t: bad count '\''2x'\''" || return 1
	done
'

test_expect_success '-h, --help is "this text" and --version "the version" in every --help' '
	for t in $tools; do
		"$NTPX_BIN/$t" --help >"$TMP/help" 2>&1 &&
		test_grep -E "^ +-h, --help +this text$" "$TMP/help" &&
		test_grep -E "^ +--version +the version$" "$TMP/help" || { diag "$t"; return 1; }
	done
'

# Every reader of records takes FILE...; ntpfilter filters each on its own.
test_expect_success 'ntpfilter FILE...: each file in turn, each from an empty window' '
	ntpfilter "$TMP/rec" >"$TMP/one" &&
	ntpfilter "$TMP/rec" "$TMP/rec" >"$TMP/two" &&
	cat "$TMP/one" "$TMP/one" >"$TMP/twice" &&
	cmp "$TMP/two" "$TMP/twice" &&
	ntpfilter <"$TMP/rec" >"$TMP/stdin" &&
	cmp "$TMP/one" "$TMP/stdin" &&
	ntpfilter "$TMP/rec" - <"$TMP/rec" >"$TMP/dash" &&
	cmp "$TMP/twice" "$TMP/dash" &&
	test_exit 1 ntpfilter "$TMP/rec" "$TMP/nosuch" >"$TMP/part" 2>"$TMP/err" &&
	cmp "$TMP/one" "$TMP/part" &&
	test_is "$(cat "$TMP/err")" "ntpfilter: $TMP/nosuch: No such file or directory" &&
	for t in offsetfit ntpstages ntpfilter ntpx-convert; do
		"$NTPX_BIN/$t" --help >"$TMP/help" 2>&1 &&
		test_grep -E "^usage: $t .*\[FILE\.\.\.\]" "$TMP/help" || return 1
	done
'

done_testing
