# SPDX-License-Identifier: ISC
# tests/lib.sh - a small TAP library for the shell suites, after git's
# t/test-lib.sh.  A suite sources it and is then a list of named tests:
#
#   . "$(dirname "$0")/../lib.sh"
#   need_prereq LAB                 (the whole file needs a lab)
#   test_expect_success 'a reflector answers on loopback' '
#           start_reflector &&
#           ntpprobe -c 3 "udp://127.0.0.1:$REFLECT_PORT" >"$TMP/rec" &&
#           test_is "$(count_status "$TMP/rec" ok)" 3
#   '
#   test_expect_success CHRONYD 'chronyd syncs to it' '...'
#   done_testing
#
# Every check, setup included, is inside a named test.  A body runs in
# the suite's shell (what it sets is seen by later tests), and its
# commands are joined by && (a broken chain is itself a failure: see
# test_expect_success); a loop ends its body with "|| return 1".
#
#   test_expect_success [PREREQ[,PREREQ...]] TITLE BODY
#                       "ok N - TITLE" when BODY exits 0, else "not ok"
#                       and the body on stderr; "ok N # skip TITLE
#                       (missing PREREQ)" when a prerequisite does not hold
#   test_when_finished CMD  (in a body) CMD runs when this test ends,
#                       passed or failed, newest first; a CMD that fails
#                       fails the test (git's), its stderr shown then
#   test_atexit CMD     CMD runs when the suite ends, whatever happens
#                       (newest first): for what several tests share.
#                       From done_testing a CMD that fails is a test of
#                       its own, "not ok N - cleanup when the suite ends";
#                       a CMD for what may rightly be gone by then says so
#                       itself ("CMD || :", and a comment why)
#   done_testing        the last line: runs test_atexit's commands,
#                       prints the plan ("1..N"); its exit status is 1
#                       when a test failed
#
# Checks for bodies (each prints what it saw on failure):
#   test_is GOT WANT    string equality
#   test_grep [!] [GREP-OPTION...] PATTERN FILE
#                       grep -q, FILE shown on failure; with !, nothing
#                       matches (the lines that do shown).  Either way
#                       FILE must be there: "! grep -q" passes on a
#                       missing file
#   is_num X...         every X is one number (not empty, not "-")
#   rows_parse [-t NAMES] FILE...
#                       every FILE is a table with rows, each with as
#                       many fields as its #fields line names; with -t,
#                       all but the columns NAMES are numbers or "-"
#   test_exit CODE CMD...   CMD exits with exactly CODE
#   test_must_fail CMD...   CMD refuses (exit 1..125), not a crash (a
#                       signal), not missing (126, 127)
#
# Prerequisites, declared once, evaluated the first time a test asks:
#   test_lazy_prereq NAME SCRIPT    ROOT, LAB, BUILT, HELPERS, GNUPLOT,
#                       XDP, VERBS ... below; a suite may declare its own
#   test_have_prereq NAME           0 when NAME holds
#   need_prereq NAME... the whole suite needs them: "1..0 # skip missing
#                       prerequisite NAME" otherwise
#   need_built PATH...  the whole suite needs the optional paths (verbs,
#                       xdp) this build may have left out: "1..0 # skip"
#                       naming the libraries it lacked otherwise
#   need CMD...         the whole suite needs these programs on PATH
#   skip_all REASON     "1..0 # skip REASON" (before any test)
#
# Helpers:
#   spawn VAR CMD...    starts CMD in the background; its PID in VAR;
#                       killed, by that PID, when the suite ends (and not
#                       judged then: it may have ended, or a test may have
#                       reaped it).  CMD must be a program, not a shell
#                       function (whose $! is a subshell's, not CMD's)
#   fg_wait CMD...      runs CMD (a shell function too) in the background
#                       and waits for it: a TERM or INT then ends the wait
#                       at once and the traps clean up, where a foreground
#                       pipeline or child shell would hold the signal until
#                       it ended (a bench climb: a minute).  The job is
#                       killed by its PID at exit if still running; its
#                       status is fg_wait's.  No pipeline in CMD: its
#                       elements would outlive the job's PID
#   stop_pid PID [SIG]  sends SIG (TERM) to PID, a process of the suite's,
#                       and reaps it: 0 when it exited 0 or died of SIG,
#                       else 1 with its status named.  For
#                       test_when_finished: a server that crashed during
#                       the test fails it
#   wait_until SECONDS CMD...   polls CMD until it succeeds (10 ms steps);
#                       fails after SECONDS.  For synchronisation on a
#                       condition, never a bare sleep.
#   lab_up PREFIX [OPTION...]   an ntpx-lab of this suite's own (removed at
#                       exit), its env in the shell, and
#                       NTPX_REF_EXEC/NTPX_CLIENT_EXEC set; LAB is its name.
#                       In a test (a setup test) it fails when no lab can
#                       be made; before the first, the suite is skipped
#   free_udp_port       prints a UDP port nothing listens on
#   udp_listening PORT [NS]  a UDP socket listens on PORT (in namespace NS)
#   study_lab DIR       the lab an ntpx-study package DIR runs in (its
#                       study.conf's lab=; nothing before the study
#                       has written it)
#   nonce               16 random hex digits (an NTP timestamp's 8 bytes)
#   uniq_name PREFIX    a name no other run uses (netns, files); written
#                       to $NTPX_LEDGER if set (make check: scripts/leftovers
#                       finds what is left)
#   (tests/twohost.sh, sourced after this: twohost_up, two hosts reached
#   over ssh, each with an sshd of the test's own)
#   (tests/nhost.sh: nhost_up, N hosts on one LAN reached over ssh; both
#   build on tests/sshhost.sh, an sshd of the test's own per namespace)
#   diag TEXT           "# TEXT" on the suite's stderr (fd 4), even from a
#                       command whose stderr goes to a file
#   start_reflector [OPTION...] ntpreflect --stratum 1 on a free loopback port
#                       (REFLECT_PORT, REFLECT_PID)
#   data_lines FILE, rec_cols FILE NAME..., count_status FILE WORD,
#   rec_status FILE, one_clock FILE, log_interleaved LOG
#                       record helpers (columns found by name;
#                       count_status fails on a file without #fields)
#   probe_oks CMD...    the ok records of CMD, an ntpprobe: "N ok, exit S"
#                       and status 1 when its exit status is not the one
#                       N calls for (a crash after writing)
#   $ntpx_fields        bin/ntpx-fields.awk, to put ahead of an awk program
#                       that reads a #fields header: fields(), field(NAME)
#
# NTPX_BIN is the directory of the built tools (bin/ of the checkout),
# NTPX_HELPERS that of the test programs (build/helpers: udpq);
# TMP is a directory of this suite's own, removed at exit.

NTPX_TOP=$(cd "$(dirname "$0")/../.." && pwd)
NTPX_BIN=${NTPX_BIN:-$NTPX_TOP/bin}
NTPX_HELPERS=$NTPX_TOP/build/helpers
PATH=$NTPX_BIN:$PATH
export NTPX_TOP NTPX_BIN NTPX_HELPERS PATH
# Columns by name for the awk programs here and in the suites: fields()
# on a "#fields" line, then field(NAME) (bin/ntpx-fields.awk).
ntpx_fields=$(cat "$NTPX_TOP/bin/ntpx-fields.awk") || exit 1

_tap_n=0
_tap_failed=0
_ae_n=0
_tc_n=0
_in_test=
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ntpx-test.XXXXXX")
LF='
'

# The EXIT trap: done_testing has run test_atexit's commands, unless the
# suite ended before it (skip_all, a BUG line, a signal).  Then what is
# left runs here, and a failure is said on stderr only: there is no test
# left to fail, and the exit status is the suite's.
_run_atexit() {
	_cleanup_run exit || :
	rm -rf "$TMP"
}
trap '_run_atexit' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each command kept in a variable of its own (_ae_N, _tc_N), run by
# _cleanup_run newest first, so that what was set up last is undone first.
test_atexit() {
	_ae_n=$((_ae_n + 1))
	eval "_ae_$_ae_n=\$*"
}

test_when_finished() {
	[ -n "$_in_test" ] || { echo "BUG: test_when_finished outside a test: $*" >&2; exit 1; }
	_tc_n=$((_tc_n + 1))
	eval "_tc_$_tc_n=\$*"
}

# _cleanup_run test|exit: runs test_when_finished's (test) or test_atexit's
# (exit) commands, newest first, each once, all of them whatever fails; 1
# when one failed, each failure named with its stderr (which is kept out
# of the way when it succeeds, as it was before failures counted).
_cleanup_run() {
	_cr_ret=0
	while :; do
		if [ "$1" = test ]; then
			[ "$_tc_n" -gt 0 ] || break
			eval "_cr_cmd=\$_tc_$_tc_n"
			_tc_n=$((_tc_n - 1))
		else
			[ "$_ae_n" -gt 0 ] || break
			eval "_cr_cmd=\$_ae_$_ae_n"
			_ae_n=$((_ae_n - 1))
		fi
		_test_eval "$_cr_cmd" 2>"$TMP/.cleanup-stderr"
		_cr_st=$?
		[ "$_cr_st" = 0 ] && continue
		_cr_ret=1
		diag "cleanup failed (status $_cr_st): $_cr_cmd"
		sed 's/^/#   /' "$TMP/.cleanup-stderr" >&4
	done
	return $_cr_ret
}

# Diagnostics go to the suite's own stderr, saved as fd 4 when the lib is
# sourced (git's t/ does the same), so that a check's message reaches the
# harness even when the command it runs has its stderr sent to a file:
# test_exit 1 offsetfit bad.rec 2>"$TMP/err".
exec 4>&2
diag() { echo "# $*" >&4; }

# A function of its own, so that "return" in a body ends the body.
_test_eval() { eval "$1"; }

test_expect_success() {
	_te_prereq=
	[ $# = 3 ] && { _te_prereq=$1; shift; }
	[ $# = 2 ] || { echo "BUG: test_expect_success [PREREQ] TITLE BODY, not: $*" >&2; exit 1; }
	_tap_n=$((_tap_n + 1))
	_te_missing=
	_te_ifs=$IFS
	IFS=,
	for _te_p in $_te_prereq; do
		test_have_prereq "$_te_p" || _te_missing=${_te_missing:+$_te_missing,}$_te_p
	done
	IFS=$_te_ifs
	if [ -n "$_te_missing" ]; then
		echo "ok $_tap_n # skip $1 (missing $_te_missing)"
		return 0
	fi
	# The chain lint (git's): with every command joined by &&, a first
	# one that fails skips them all, and the body's status is its, 117.
	# Anything else means a command outside the chain, whose failure
	# would go unseen.  A correct body runs nothing here; a broken one
	# runs, in a subshell, from the break on: a mistake in the suite,
	# reported as one (and scripts/leftovers names what it left).
	if [ "${NTPX_TEST_CHAIN_LINT:-1}" = 1 ] &&
	   [ "$( (_test_eval "(exit 117) && $2${LF}${LF}echo OK-\$?") 2>/dev/null 4>/dev/null)" != OK-117 ]; then
		echo "not ok $_tap_n - $1"
		_tap_failed=$((_tap_failed + 1))
		diag "BUG: a command outside the && chain (or a here-document that runs away) in:"
		printf '%s\n' "$2" | sed 's/^/#	/' >&4
		return 0
	fi
	_in_test=1
	_tc_n=0
	_test_eval "$2"
	_te_rc=$?
	# A cleanup that fails fails the test (git's test_when_finished).
	_cleanup_run test || { [ "$_te_rc" != 0 ] || _te_rc=1; }
	_in_test=
	if [ "$_te_rc" = 0 ]; then
		echo "ok $_tap_n - $1"
	else
		echo "not ok $_tap_n - $1"
		_tap_failed=$((_tap_failed + 1))
		diag "failed (status $_te_rc):"
		printf '%s\n' "$2" | sed 's/^/#	/' >&4
	fi
	return 0
}

test_is() {
	[ "$1" = "$2" ] && return 0
	diag "got:  '$1'"
	diag "want: '$2'"
	return 1
}

test_grep() {
	_tg_not=
	[ "$1" = ! ] && { _tg_not=1; shift; }
	# The last argument is the file.
	for _tg_file; do :; done
	if [ -z "$_tg_not" ]; then
		grep -q "$@" && return 0
		diag "grep $* found nothing; the file (first 20 lines):"
		head -n 20 "$_tg_file" 2>&1 | sed 's/^/#   /' >&4
		return 1
	fi
	# Nothing matched is status 1, not 2 ("! grep -q" passes on a file
	# that is not there).
	grep "$@" >"$TMP/.test_grep" 2>&1
	_tg_st=$?
	[ "$_tg_st" = 1 ] && return 0
	if [ "$_tg_st" = 0 ]; then
		diag "grep $* found (the first 20 lines):"
	else
		diag "grep $* failed (status $_tg_st):"
	fi
	head -n 20 "$TMP/.test_grep" | sed 's/^/#   /' >&4
	return 1
}

test_exit() {
	_tx_want=$1
	shift
	"$@"
	_tx_rc=$?
	[ "$_tx_rc" = "$_tx_want" ] && return 0
	diag "exit $_tx_rc, want $_tx_want: $*"
	return 1
}

test_must_fail() {
	"$@"
	_tm_rc=$?
	if [ "$_tm_rc" = 0 ]; then
		diag "succeeded, should have failed: $*"
	elif [ "$_tm_rc" -gt 128 ]; then
		diag "died of signal $((_tm_rc - 128)): $*"
	elif [ "$_tm_rc" = 126 ] || [ "$_tm_rc" = 127 ]; then
		diag "could not run (exit $_tm_rc): $*"
	else
		return 0
	fi
	return 1
}

skip_all() {
	[ "$_tap_n" = 0 ] || { echo "BUG: skip_all after $_tap_n tests: $*" >&2; exit 1; }
	echo "1..0 # skip $*"
	exit 0
}

need() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || skip_all "missing $_c"
	done
}

# Prerequisites, declared once (below, or in a suite for what only it
# needs) and evaluated lazily, the first time a test asks, then
# remembered (git's test_lazy_prereq).
test_lazy_prereq() {	# NAME SCRIPT
	eval "_prereq_script_$1=\$2"
}
test_have_prereq() {	# NAME: 0 when the prerequisite holds
	eval "_r=\${_prereq_result_$1:-}"
	if [ -z "$_r" ]; then
		eval "_s=\${_prereq_script_$1:-}"
		[ -n "$_s" ] || { echo "BUG: unknown prerequisite $1" >&2; exit 1; }
		if (eval "$_s") >/dev/null 2>&1; then _r=yes; else _r=no; fi
		eval "_prereq_result_$1=$_r"
	fi
	[ "$_r" = yes ]
}
need_prereq() {	# NAME...: skip_all naming the first that does not hold
	for _p in "$@"; do
		test_have_prereq "$_p" || skip_all "missing prerequisite $_p"
	done
}
need_built() {	# PATH...: skip_all, with the libraries it lacked, when
		# this build left PATH (verbs, xdp) out (tests/hw.sh: hw_built)
	. "$NTPX_TOP/tests/hw.sh"
	for _b in "$@"; do
		hw_built "$_b" || skip_all "$HW_WHY"
	done
}

# ROOT: uid 0.  LAB: what ntpx-lab needs (root, ip, tc).  BUILT: the
# tools of bin/ are built (make).  HELPERS: the test programs are
# (build/helpers).  The others: a program of that name on PATH.
test_lazy_prereq ROOT '[ "$(id -u)" = 0 ]'
test_lazy_prereq LAB 'test_have_prereq ROOT && command -v ip && command -v tc'
test_lazy_prereq BUILT 'for t in ntpprobe ntpreflect ntpfilter offsetfit ntpmesh loadgen lossinject clockstep tether ntpx-units; do [ -x "$NTPX_BIN/$t" ] || exit 1; done'
test_lazy_prereq HELPERS '[ -x "$NTPX_HELPERS/ntpfake" ] && [ -x "$NTPX_HELPERS/udpq" ]'
test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_lazy_prereq CHRONYD 'command -v chronyd'
test_lazy_prereq TSHARK 'command -v tshark'
# XDP, VERBS: this build has uudp's AF_XDP port, the verbs path (make
# leaves out a path whose libraries it did not find: build/features).
test_lazy_prereq XDP '. "$NTPX_TOP/tests/hw.sh" && hw_built xdp'
test_lazy_prereq VERBS '. "$NTPX_TOP/tests/hw.sh" && hw_built verbs'

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
	# Not judged at exit: a test may have stopped and reaped it already
	# (wait then says 127), or killed it on purpose.  A test that cares
	# how it ended stops it itself (stop_pid).
	test_atexit "kill $! 2>/dev/null; wait $! 2>/dev/null || :"
}

fg_wait() {
	[ -n "${_fg_reg:-}" ] || { test_atexit '[ -z "$_fg_pid" ] || { kill "$_fg_pid" 2>/dev/null; wait "$_fg_pid" 2>/dev/null; } || :'; _fg_reg=1; }
	"$@" &
	_fg_pid=$!
	wait "$_fg_pid"
	_fg_rc=$?
	_fg_pid=
	return $_fg_rc
}

stop_pid() {
	_sp_sig=${2:-TERM}
	# It may have ended already (the shell may have reaped it too): wait
	# still has its status then.
	kill -s "$_sp_sig" "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	_sp_rc=$?
	[ "$_sp_rc" = 0 ] && return 0
	case $_sp_sig in
	HUP) _sp_n=1 ;; INT) _sp_n=2 ;; KILL) _sp_n=9 ;; TERM) _sp_n=15 ;;
	*) echo "BUG: stop_pid: signal $_sp_sig (HUP, INT, KILL or TERM)" >&2; exit 1 ;;
	esac
	[ "$_sp_rc" = $((128 + _sp_n)) ] && return 0
	diag "process $1 ended with status $_sp_rc (sent SIG$_sp_sig)"
	return 1
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

# 16 random hex digits (in a subshell: no counter would survive it).
nonce() { od -An -N8 -tx1 /dev/urandom | tr -d ' \n'; }

uniq_name() {
	_u="$1$$$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"
	# make check's ledger: scripts/leftovers looks for these names after
	# the suite (namespaces, labs left behind).
	[ -z "${NTPX_LEDGER:-}" ] || echo "$_u" >> "$NTPX_LEDGER"
	echo "$_u"
}

lab_up() {
	need_prereq ROOT
	LAB=$(uniq_name "$1")
	shift
	test_atexit "$NTPX_BIN/ntpx-lab" -n "$LAB" down
	if ! "$NTPX_BIN/ntpx-lab" -n "$LAB" "$@" up >"$TMP/lab-up.err" 2>&1; then
		# Before the first test there is nothing to fail: the suite is
		# skipped, with ntpx-lab's reason.  In a test, the test fails.
		[ -n "$_in_test" ] || skip_all "no lab: $(tail -n 1 "$TMP/lab-up.err")"
		diag "no lab: $(tail -n 1 "$TMP/lab-up.err")"
		return 1
	fi
	eval "$("$NTPX_BIN/ntpx-lab" -n "$LAB" env)"
	NTPX_REF_EXEC="$NTPX_BIN/ntpx-lab -n $LAB exec ref"
	NTPX_CLIENT_EXEC="$NTPX_BIN/ntpx-lab -n $LAB exec client"
	export NTPX_REF_EXEC NTPX_CLIENT_EXEC
}

# Starts ntpreflect on a free loopback port as a local reference at
# stratum 1 (--stratum 1: the host's clock may be unsynchronised, and the
# tests want answers a client takes; OPTION... may say otherwise): sets
# REFLECT_PORT and REFLECT_PID, its stderr in $TMP/reflect.err; waits
# until it listens.
start_reflector() {
	REFLECT_PORT=$(free_udp_port)
	spawn REFLECT_PID ntpreflect --stratum 1 "$@" "udp://127.0.0.1:$REFLECT_PORT" 2>"$TMP/reflect.err"
	wait_until 5 udp_listening "$REFLECT_PORT"
}

# Data lines (not '#') of a record file.
data_lines() { grep -v '^#' "$1"; }

# Count of records in FILE whose status is WORD (the column found by name);
# nothing, and status 1, when FILE has no #fields line (no records, not
# "0 of them").
count_status() {
	awk -v w="$2" "$ntpx_fields"'/^#fields/ { fields(); h = 1; next }
		/^#/ { next } field("status") == w { n++ }
		END { if (!h) { print "count_status: no #fields line in " FILENAME > "/dev/stderr"; exit 1 }
			print n + 0 }' "$1"
}

# probe_oks CMD...: how many ok records CMD (an ntpprobe, perhaps behind a
# prefix: ip netns exec NS) wrote, its records in $TMP/probe_oks.rec and
# its stderr in $TMP/probe_oks.err.  Its exit status must be the one that
# count calls for (ntpprobe(1): 0 when one was ok, 1 when none was);
# otherwise (a crash after writing, a record it could not write) it
# prints "N ok, exit S", which no count equals, and fails.
probe_oks() {
	"$@" >"$TMP/probe_oks.rec" 2>"$TMP/probe_oks.err"
	_po_st=$?
	_po_n=$(count_status "$TMP/probe_oks.rec" ok) || { echo "no records, exit $_po_st"; return 1; }
	_po_want=1
	[ "$_po_n" = 0 ] || _po_want=0
	[ "$_po_st" = "$_po_want" ] && { echo "$_po_n"; return 0; }
	echo "$_po_n ok, exit $_po_st"
	return 1
}

# A number as the tables, summaries and records print one: sign, digits,
# a fraction, an exponent ("[.]": awk -v would take "\." for an escape).
num_re='[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?'

# is_num X...: every X is one number: not empty, not "-", not two lines.
# Names the first that is not.
is_num() {
	for _in; do
		case $_in in
		*"$LF"*) ;;
		*) printf '%s\n' "$_in" | grep -Eqx -- "$num_re" && continue ;;
		esac
		diag "not a number: '$_in'"
		return 1
	done
}

# rows_parse [-t NAMES] FILE...: every FILE is a table: a #fields line
# (its names split at blanks) before the rows, at least one row, and in
# each row as many tab-separated fields as the header names; other "#"
# lines are comments.  With -t, the columns of the comma-separated NAMES
# hold text, and every other field is a number or "-".  A FILE that is
# missing fails (awk's status 2); each bad row is named.
rows_parse() {
	_rp_text=
	[ "$1" = -t ] && { _rp_text=,$2,; shift 2; }
	[ $# -gt 0 ] || { diag "rows_parse: no file"; return 1; }
	for _rp_f; do
		awk -F'\t' -v text="$_rp_text" -v num="^($num_re)\$" '
			function bad(why) { print FILENAME ":" FNR ": " why > "/dev/stderr"; nbad++ }
			/^#fields/ { n = split($0, h, /[ \t]+/) - 1
				for (i = 1; i <= n; i++) name[i] = h[i + 1]
				next }
			/^#/ { next }
			{ rows++
			  if (!n) { bad("a row before the #fields line"); next }
			  if (NF != n) { bad(NF " fields, #fields names " n); next }
			  if (text != "") for (i = 1; i <= NF; i++)
				if (!index(text, "," name[i] ",") && $i != "-" && $i !~ num) bad(name[i] " is not a number: \"" $i "\"") }
			END { if (!rows) bad("no rows")
				exit (nbad > 0) }' "$_rp_f" || return 1
	done
}

# rec_cols FILE NAME...: the named columns of FILE's records, a line each,
# "-" for a column the records lack (for `while read -r`: exact strings).
rec_cols() {
	_rc_file=$1
	shift
	awk -v want="$*" "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
		{ print field_list(want) }' "$_rc_file"
}

# "SEQ STATUS" of every record of FILE, the columns found by name (status
# is not the last column when a record has stamps, truth or a filter).
rec_status() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next }
		/^#/ { next } "status" in col { print field("seq"), field("status") }' "$1"
}

# How many lines of ntpreflect's --log LOG answered in interleaved mode.
log_interleaved() { rec_cols "$1" mode | grep -cx interleaved; }

# "FILE has a record of status WORD": for wait_until.
has_status() { [ "$(count_status "$1" "$2")" -gt 0 ]; }

# One clock: every ok record of FILE has |off2| <= delay, and there is at
# least one.  Exact when both ends read the same clock (loopback, the
# lab's namespaces, any server on this host): then t1 <= t2 <= t3 <= t4,
# delay - off2 = 2 (t4 - t3) and delay + off2 = 2 (t2 - t1).  A busy
# machine moves the offset by what it adds to one leg, never past this;
# a wrong stamp or epoch does.  Columns found by name.
one_clock() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next }
		/^#/ { next }
		field("status") == "ok" { n++; o = field("off2"); if (o < 0) o = -o; if (o > field("delay")) bad++ }
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
			if (o > b) { bad++; print "over its bound " b ": " $0 > "/dev/stderr" } }
		END { if (v) printf "%d samples, largest |offset| / bound %.2f\n", n, r
			if (bad) print bad " of " n " samples have |offset| > delay/2 + dispersion" > "/dev/stderr"
			exit !(n > 0 && !bad) }' v="$_v" "$1"
}

# capacity_climb RATE...: the climb of tests/bench's capacity figures
# (ntp-capacity.sh, xleave-capacity.sh).  The caller's try_step RATE runs
# one step at RATE (a number, or with k or M), prints its line and sets _v
# (clean, server, or what else limited the step) and _got (the rate
# answered).  Steps climb until one is not clean; between the last clean
# rate and the server's loss onset, CAP_BISECT (default 3) more steps halve
# the gap, so that the figure does not rest on the steps' spacing.  Prints
# "capacity RATE BY": BY is "server", or the limit met first ("generator"
# when every step was clean: the figure is then a lower bound).
capacity_climb() {
	_cb_best=0 _cb_by=generator _cb_lo= _cb_bad=
	for _cb_r; do
		try_step "$_cb_r"
		case $_v in
		clean) _cb_best=$_got _cb_lo=$(rate_num "$_cb_r") ;;
		*) _cb_by=$_v _cb_bad=$(rate_num "$_cb_r"); break ;;
		esac
	done
	if [ "$_cb_by" = server ] && [ -n "$_cb_lo" ]; then
		for _cb_k in $(seq 1 "${CAP_BISECT:-3}"); do
			_cb_r=$(((_cb_lo + _cb_bad) / 2))
			try_step "$_cb_r"
			case $_v in
			clean) _cb_best=$_got _cb_lo=$_cb_r ;;
			server) _cb_bad=$_cb_r ;;
			*) _cb_by=$_v; break ;;
			esac
		done
	fi
	echo "capacity $_cb_best $_cb_by"
}
# rate_num RATE: 120k -> 120000, 1M -> 1000000, 5000 -> 5000.
rate_num() { awk -v r="$1" 'BEGIN { m = 1; if (r ~ /k$/) m = 1e3; if (r ~ /M$/) m = 1e6; sub(/[kM]$/, "", r); printf "%d\n", r * m }'; }

# Exact accounting of a namespace's UDP datagrams (tests/net/attack.t,
# flood.t), from the kernel's own counters, which start at 0 with the
# namespace:
#   udp_mib NS          "in=N noports=N inerr=N": datagrams read by a
#                       socket (InDatagrams counts at recvmsg), sent to no
#                       socket, and not delivered (InErrors: a full receive
#                       buffer, RcvbufErrors, with the rest)
#   reflector_reads FILE  every datagram an ntpreflect's summary FILE
#                       accounts for: answered, or ignored for one of its
#                       reasons, or dropped, or left (read ahead when it
#                       ended), or failed
#   drained NS PORT     nothing waits in the socket on PORT in NS
#   snmp NS PROTO FIELD one counter of NS's /proc/net/snmp by name
#                       (snmp NS Udp RcvbufErrors)
udp_mib() {
	ip netns exec "$1" awk '$1 == "Udp:" && $2 ~ /^[0-9]/ {
		printf "in=%s noports=%s inerr=%s\n", $2, $3, $4 }' /proc/net/snmp
}
snmp() {
	ip netns exec "$1" awk -v p="$2:" -v f="$3" '$1 == p && $2 !~ /^[0-9]/ { for (i = 2; i <= NF; i++) if ($i == f) c = i; next }
		$1 == p { print $c }' /proc/net/snmp
}
reflector_reads() {
	sed -n 1p "$1" | tr ',' '\n' | awk '
		{ n = $NF; $NF = ""; sub(/^ntpreflect: /, ""); sub(/ +$/, "") }
		$0 ~ /^(answered|short|truncated|malformed|version|control|private|mode|denied|rate|kiss|dropped|left|send errors)$/ { s += n }
		END { print s + 0 }'
}
drained() { [ "$(ip netns exec "$1" ss -Hlun "sport = :$2" | awk '{ print $2 }')" = 0 ]; }

# legs A B [kernel]: "df db": the median shift, in ns, of the forward and
# of the back leg of the ok records from record file A to record file B.
# On one clock each record splits exactly into its legs: forward t2 - t1 =
# (delay + off2) / 2, back t4 - t3 = (delay - off2) / 2 (tests/net/bias.t).
# With "kernel", the client's side of each leg is its kernel's stamp where
# the record has one, t1k and t4k: forward t2 - t1k, back t4k - t3, so
# that what the client's own scheduling adds (a late wake-up, a busy
# poller preempted) is left out.
legs() {
	awk -v kern="${3:-}" "$ntpx_fields"'
	function med(arr, n,   i, j, x) {
		for (i = 2; i <= n; i++) { x = arr[i]; for (j = i - 1; j >= 1 && arr[j] > x; j--) arr[j + 1] = arr[j]; arr[j + 1] = x }
		return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
	FNR == 1 { fi++ }
	/^#fields/ { fields(); next }
	/^#/ { next }
	field("status") == "ok" { n[fi]++; F[fi, n[fi]] = (field("delay") + field("off2")) / 2; B[fi, n[fi]] = (field("delay") - field("off2")) / 2
		if (kern == "kernel" && field("t1k") != "-" && field("t1k") != "") F[fi, n[fi]] -= field("t1k") - field("t1")
		if (kern == "kernel" && field("t4k") != "-" && field("t4k") != "") B[fi, n[fi]] -= field("t4") - field("t4k") }
	END {
		for (k = 1; k <= 2; k++) {
			m = n[k]; if (!m) { print "nan nan"; exit }
			for (i = 1; i <= m; i++) { f[i] = F[k, i]; b[i] = B[k, i] }
			mf[k] = med(f, m); mb[k] = med(b, m)
		}
		printf "%.0f %.0f\n", mf[2] - mf[1], mb[2] - mb[1]
	}' "$1" "$2"
}
# "udp port P has a listener", here or in network namespace NS: for
# wait_until after starting a server.
udp_listening() {	# P [NS]
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" ss -Hlun "sport = :$1" | grep -q .
	else
		ss -Hlun "sport = :$1" | grep -q .
	fi
}
study_lab() { awk -F= '$1 == "lab" { print $2 }' "$1/study.conf" 2>/dev/null; }

# The plan is printed here, at the end (TAP allows either): nobody counts
# the tests in advance.
done_testing() {
	[ -n "$_in_test" ] && { echo "BUG: done_testing inside a test" >&2; exit 1; }
	if ! _cleanup_run exit; then
		_tap_n=$((_tap_n + 1))
		_tap_failed=$((_tap_failed + 1))
		echo "not ok $_tap_n - cleanup when the suite ends"
	fi
	echo "1..$_tap_n"
	[ "$_tap_failed" = 0 ]
}
