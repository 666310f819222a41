# SPDX-License-Identifier: ISC
# tests/lib.sh - a small TAP library for the shell suites (after git's
# t/test-lib.sh).  Source it, then:
#
#   plan N                      the number of tests in advance (the
#                               suites use done_testing instead)
#   ok TITLE CMD [ARG...]       runs CMD; "ok N - TITLE" or "not ok N - TITLE"
#   is GOT WANT TITLE           string equality, shows both on failure
#   skip TITLE REASON           "ok N # skip TITLE (REASON)"
#   skip_all REASON             "1..0 # skip REASON", exit 0
#   need CMD...                 skip_all unless every CMD is on PATH
#   need_root                   skip_all unless run as root
#   need_prereq NAME...         skip_all unless each prerequisite holds:
#                               ROOT, LAB, BUILT, HELPERS, declared once
#                               in this file (prereq NAME SCRIPT) and
#                               evaluated lazily (have NAME)
#   cleanup CMD...              runs CMD at exit, whatever happens (LIFO)
#   spawn VAR CMD...            starts CMD in the background; its PID in VAR;
#                               killed at exit by that PID, nothing else.
#                               CMD must be a program, not a shell function
#                               (whose $! is a subshell's, not CMD's)
#   wait_until SECONDS CMD...   polls CMD until it succeeds (10 ms steps);
#                               fails after SECONDS.  For synchronisation on
#                               a condition, never a bare sleep.
#   lab_up PREFIX [OPTION...]   an ntpx-lab of this test's own (removed at
#                               exit), its env in the shell, and
#                               NTPX_REF_EXEC/NTPX_CLIENT_EXEC set; LAB
#                               is its name.  skip_all when none can be made
#   free_udp_port               prints a UDP port nothing listens on
#   uniq_name PREFIX            a name no other run uses (netns, files);
#                               written to $NTPX_LEDGER if set (make
#                               check: scripts/leftovers finds what is left)
#   (tests/twohost.sh, sourced after this: twohost_up, two hosts reached
#   over ssh, each with an sshd of the test's own)
#   diag TEXT                   "# TEXT" on stderr
#   done_testing                the last line of a test: prints the plan
#                               when plan was not called; its exit status
#                               is 1 when any test failed
#   start_reflector [OPTION...] ntpreflect on a free loopback port
#                               (REFLECT_PORT, REFLECT_PID)
#   data_lines FILE, count_status FILE WORD, one_clock FILE
#                               record helpers (columns found by name)
#
# NTPX_BIN is the directory of the built tools (bin/ of the checkout),
# NTPX_HELPERS that of the test programs (build/helpers: udpq);
# TMP is a directory of this test's own, removed at exit.

NTPX_TOP=$(cd "$(dirname "$0")/../.." && pwd)
NTPX_BIN=${NTPX_BIN:-$NTPX_TOP/bin}
NTPX_HELPERS=$NTPX_TOP/build/helpers
PATH=$NTPX_BIN:$PATH
export NTPX_TOP NTPX_BIN NTPX_HELPERS PATH

_tap_n=0
_tap_failed=0
_cleanups=
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ntpx-test.XXXXXX")

_run_cleanups() {
	eval "$_cleanups"
	rm -rf "$TMP"
}
trap '_run_cleanups' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cleanup() {
	# Newest first, so that what was set up last is undone first.
	_cleanups="$* 2>/dev/null || true; $_cleanups"
}

plan() { echo "1..$1"; _tap_planned=1; }

diag() { echo "# $*" >&2; }

_tap_result() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_failed=$((_tap_failed + 1))
	fi
}

ok() {
	_title=$1
	shift
	if "$@"; then
		_tap_result 0 "$_title"
	else
		_tap_result 1 "$_title"
		diag "failed: $*"
	fi
}

is() {
	if [ "$1" = "$2" ]; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		diag "got:  '$1'"
		diag "want: '$2'"
	fi
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # skip $1 ($2)"
}

skip_all() {
	echo "1..0 # skip $*"
	exit 0
}

need() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || skip_all "missing $_c"
	done
}

need_root() {
	[ "$(id -u)" = 0 ] || skip_all "needs root"
}

# Prerequisites, declared once (below) and evaluated lazily, the first
# time a test asks, then remembered (git's test_lazy_prereq).
prereq() {	# NAME SCRIPT
	eval "_prereq_script_$1=\$2"
}
have() {	# NAME: 0 when the prerequisite holds
	eval "_r=\${_prereq_result_$1:-}"
	if [ -z "$_r" ]; then
		eval "_s=\${_prereq_script_$1:-}"
		[ -n "$_s" ] || { echo "have: unknown prerequisite $1" >&2; exit 1; }
		if (eval "$_s") >/dev/null 2>&1; then _r=yes; else _r=no; fi
		eval "_prereq_result_$1=$_r"
	fi
	[ "$_r" = yes ]
}
need_prereq() {	# NAME...: skip_all naming the first that does not hold
	for _p in "$@"; do
		have "$_p" || skip_all "missing prerequisite $_p"
	done
}

# ROOT: uid 0.  LAB: what ntpx-lab needs (root, ip, tc).  BUILT: the
# tools of bin/ are built (make).  HELPERS: the test programs are
# (build/helpers).
prereq ROOT '[ "$(id -u)" = 0 ]'
prereq LAB 'have ROOT && command -v ip && command -v tc'
prereq BUILT 'for t in ntpprobe ntpreflect ntpfilter offsetfit loadgen lossinject clockstep tether ntpx-units; do [ -x "$NTPX_BIN/$t" ] || exit 1; done'
prereq HELPERS '[ -x "$NTPX_HELPERS/ntpfake" ] && [ -x "$NTPX_HELPERS/udpq" ]'

spawn() {
	_var=$1
	shift
	# A function (or any command but a program) sent to the background
	# runs in a subshell: $! would be the subshell's PID and the kill at
	# exit would miss what runs inside it.
	case $(command -v "$1") in
	*/*) ;;
	*) echo "spawn: '$1' is not a program (a shell function or builtin): \$! would not be its PID" >&2
	   exit 1 ;;
	esac
	"$@" &
	eval "$_var=\$!"
	cleanup "kill $! 2>/dev/null; wait $!"
}

wait_until() {
	_limit=$1
	shift
	_end=$(($(date +%s%N) + _limit * 1000000000))
	while ! "$@" 2>/dev/null; do
		[ "$(date +%s%N)" -lt "$_end" ] || return 1
		sleep 0.01
	done
}

free_udp_port() {
	# The kernel picks a free port for a socket bound to port 0; python
	# is not assumed, so ask ss for what is taken and walk from a start.
	_p=$((20000 + $$ % 20000))
	while ss -Hlun "sport = :$_p" | grep -q .; do
		_p=$((_p + 1))
	done
	echo "$_p"
}

uniq_name() {
	_u="$1$$$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"
	# make check's ledger: scripts/leftovers looks for these names after
	# the suite (namespaces, labs left behind).
	[ -z "${NTPX_LEDGER:-}" ] || echo "$_u" >> "$NTPX_LEDGER"
	echo "$_u"
}

lab_up() {
	need_root
	LAB=$(uniq_name "$1")
	shift
	cleanup "$NTPX_BIN/ntpx-lab" -n "$LAB" down
	"$NTPX_BIN/ntpx-lab" -n "$LAB" "$@" up >"$TMP/lab-up.err" 2>&1 ||
		skip_all "no lab: $(tail -n 1 "$TMP/lab-up.err")"
	eval "$("$NTPX_BIN/ntpx-lab" -n "$LAB" env)"
	NTPX_REF_EXEC="$NTPX_BIN/ntpx-lab -n $LAB exec ref"
	NTPX_CLIENT_EXEC="$NTPX_BIN/ntpx-lab -n $LAB exec client"
	export NTPX_REF_EXEC NTPX_CLIENT_EXEC
}

# Starts ntpreflect on a free loopback port: sets REFLECT_PORT and
# REFLECT_PID, its stderr in $TMP/reflect.err; waits until it listens.
start_reflector() {
	REFLECT_PORT=$(free_udp_port)
	spawn REFLECT_PID ntpreflect "$@" "udp://127.0.0.1:$REFLECT_PORT" 2>"$TMP/reflect.err"
	wait_until 5 udp_listening "$REFLECT_PORT"
}

# Data lines (not '#') of a record file.
data_lines() { grep -v '^#' "$1"; }

# Count of records in FILE whose status is WORD (the column found by name).
count_status() {
	awk -v w="$2" '/^#fields / { for (i = 2; i <= NF; i++) if ($i == "status") c = i - 1; next }
		/^#/ { next } c && $c == w { n++ } END { print n + 0 }' "$1"
}

# "SEQ STATUS" of every record of FILE, the columns found by name (status
# is not the last column when a record has stamps, truth or a filter).
rec_status() {
	awk '/^#fields / { for (i = 2; i <= NF; i++) { if ($i == "status") c = i - 1; if ($i == "seq") s = i - 1 }; next }
		/^#/ { next } c { print $s, $c }' "$1"
}

# "FILE has a record of status WORD": for wait_until.
has_status() { [ "$(count_status "$1" "$2")" -gt 0 ]; }

# One clock: every ok record of FILE has |off2| <= delay, and there is at
# least one.  Exact when both ends read the same clock (loopback, the
# lab's namespaces, any server on this host): then t1 <= t2 <= t3 <= t4,
# delay - off2 = 2 (t4 - t3) and delay + off2 = 2 (t2 - t1).  A busy
# machine moves the offset by what it adds to one leg, never past this;
# a wrong stamp or epoch does.  Columns found by name.
one_clock() {
	awk '/^#fields / { for (i = 2; i <= NF; i++) c[$i] = i - 1; next }
		/^#/ { next }
		$c["status"] == "ok" { n++; o = $c["off2"]; if (o < 0) o = -o; if (o > $c["delay"]) bad++ }
		END { if (bad) print bad " of " n " ok records have |off2| > delay" > "/dev/stderr"
			exit !(n > 0 && !bad) }' "$1"
}

# one_clock for chronyd's own measurements (its measurements.log, from
# "log measurements"): each sample's offset is within half its delay plus
# its dispersion, and there is at least one.  Exact when chronyd and its
# server read this host's clock, as one_clock is: chronyd's offset is
# ((t2 - t1) + (t3 - t4)) / 2 and its delay (t4 - t1) - (t3 - t2).  The
# log prints four significant digits: the bound allows for that rounding.
# With -v first, prints "N samples, largest |offset| / bound R".
chrony_one_clock() {
	_v=; [ "$1" = -v ] && { _v=1; shift; }
	awk '$1 ~ /^[0-9]{4}-/ && NF >= 17 {
			o = $12; d = $13; p = $14; if (o < 0) o = -o
			b = d / 2 + p + 5e-4 * (o + d); n++
			if (b > 0 && o / b > r) r = o / b
			if (o > b) bad++ }
		END { if (v) printf "%d samples, largest |offset| / bound %.2f\n", n, r
			if (bad) print bad " of " n " samples have |offset| > delay/2 + dispersion" > "/dev/stderr"
			exit !(n > 0 && !bad) }' v="$_v" "$1"
}

# legs A B: "df db": the median shift, in ns, of the forward and of the
# back leg of the ok records from record file A to record file B.  On one
# clock each record splits exactly into its legs: forward t2 - t1 =
# (delay + off2) / 2, back t4 - t3 = (delay - off2) / 2 (tests/net/bias.t).
legs() {
	awk '
	function med(arr, n,   i, j, x) {
		for (i = 2; i <= n; i++) { x = arr[i]; for (j = i - 1; j >= 1 && arr[j] > x; j--) arr[j + 1] = arr[j]; arr[j + 1] = x }
		return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
	FNR == 1 { fi++ }
	$1 == "#fields" { for (i = 2; i <= NF; i++) { if ($i == "delay") cd = i - 1; if ($i == "off2") co = i - 1; if ($i == "status") cs = i - 1 } next }
	/^#/ { next }
	$cs == "ok" { n[fi]++; F[fi, n[fi]] = ($cd + $co) / 2; B[fi, n[fi]] = ($cd - $co) / 2 }
	END {
		for (k = 1; k <= 2; k++) {
			m = n[k]; if (!m) { print "nan nan"; exit }
			for (i = 1; i <= m; i++) { f[i] = F[k, i]; b[i] = B[k, i] }
			mf[k] = med(f, m); mb[k] = med(b, m)
		}
		printf "%.0f %.0f\n", mf[2] - mf[1], mb[2] - mb[1]
	}' "$1" "$2"
}
# "udp port P has a listener": for wait_until after starting a server.
udp_listening() {
	ss -Hlun "sport = :$1" | grep -q .
}

# Without a plan at the start, the plan is printed here, at the end (TAP
# allows either): a test need not count its checks in advance.
done_testing() {
	[ -n "${_tap_planned:-}" ] || echo "1..$_tap_n"
	[ "$_tap_failed" = 0 ]
}
