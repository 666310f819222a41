#!/bin/sh
# SPDX-License-Identifier: ISC
# The README's two commands on a machine that lacks a package the build
# links against: `make -j2 demo` and `make -j2 check` in a fresh clone must
# work the first time (make deps installs the package, and only then does
# make ask pkg-config for the flags).
#
# It changes the machine: libmnl-dev (NTPX_FRESH_PKG) and whatever apt
# removes with it are removed, then `make demo` (and then `make check`) in
# the clone puts it back through make deps.  Whatever happens (a failure, SIGINT, SIGTERM) the
# packages removed are installed again and their auto/manual marks
# restored; only SIGKILL could leave them out.  Not part of make check:
# while the package is gone nothing else may build on this machine, so CI
# runs it on its own (make check-fresh, from .ci/run).  See doc/hacking.md.
. "$(dirname "$0")/../lib.sh"

need_root
need git apt-get apt-mark dpkg-query pkg-config
pkg=${NTPX_FRESH_PKG:-libmnl-dev}
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'; }
installed "$pkg" || skip_all "$pkg is not installed (this test removes it and puts it back)"

APT="apt-get -y -q -o DPkg::Lock::Timeout=300"
export DEBIAN_FRONTEND=noninteractive

# What apt would remove with it, and which of those were installed as
# dependencies (auto), so that putting them back leaves the marks as they
# were.
removed=$(apt-get -s remove "$pkg" 2>/dev/null | awk '$1 == "Remv" { print $2 }' | tr '\n' ' ')
auto=
for p in $removed; do
	apt-mark showauto "$p" 2>/dev/null | grep -qx "$p" && auto="$auto $p"
done
diag "removing:$removed(auto:${auto:- none})"

# Every package to put back must be in apt's cache before anything is
# removed: a machine that cannot fetch it is left untouched.
# shellcheck disable=SC2086
$APT install --reinstall --download-only $removed >"$TMP/fetch.log" 2>&1
fetched=$?
is "$fetched" 0 "the packages to put back are fetched first ($removed)"
[ "$fetched" = 0 ] || { diag "$(tail -n 3 "$TMP/fetch.log")"; exit 1; }

# put_back: installs what is missing of $removed, restores the auto marks.
# Run at the end as a test, and at exit whatever happens.
put_back() {
	_missing=
	for _p in $removed; do installed "$_p" || _missing="$_missing $_p"; done
	if [ -n "$_missing" ]; then
		# shellcheck disable=SC2086
		$APT install --no-install-recommends $_missing >>"$TMP/putback.log" 2>&1 || return 1
	fi
	# shellcheck disable=SC2086
	[ -z "$auto" ] || apt-mark auto $auto >>"$TMP/putback.log" 2>&1 || return 1
	for _p in $removed; do installed "$_p" || return 1; done
}
cleanup put_back

# The clone first, so that the package is gone for as short a time as can
# be (until make deps puts it back): other builds on this machine would
# fail meanwhile.
ok "a fresh clone of this checkout" git clone -q "$NTPX_TOP" "$TMP/clone"
[ -z "$(git -C "$NTPX_TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
	diag "uncommitted changes in $NTPX_TOP are not in the clone (it tests HEAD)"

# first_time NAME GOAL...: with the package removed again, make -j2 GOAL...
# in the clone as it came from git (no build/, no bin/), as a user would
# run it: nothing of this make or of this checkout in the environment (no
# MAKEFLAGS from a make above us, no tools on PATH) but NTPX_LEDGER, so
# that make check-fresh sees what it leaves.  5 tests; the log in
# $TMP/NAME.log.
PATH=${PATH#"$NTPX_BIN:"}
first_time() {
	_name=$1
	shift
	git -C "$TMP/clone" clean -qfdx
	# shellcheck disable=SC2086
	ok "$_name: $pkg removed, pkg-config no longer finds the libraries" sh -c "
		$APT remove $pkg >>'$TMP/remove.log' 2>&1 &&
		! pkg-config --exists libibverbs librdmacm libxdp libbpf libmnl"
	_start=$(date +%s)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u NTPX_DEPS_DONE \
		-u NTPX_TOP -u NTPX_BIN -u NTPX_HELPERS \
		make -C "$TMP/clone" -j2 "$@" >"$TMP/$_name.log" 2>&1
	_rc=$?
	diag "make -j2 $*: exit $_rc in $(($(date +%s) - _start)) s"
	is "$_rc" 0 "$_name: make -j2 $* succeeds the first time"
	[ "$_rc" = 0 ] || diag "$(tail -n 15 "$TMP/$_name.log")"
	ok "$_name: make deps installed $pkg" grep -q "^deps: installing.* $pkg" "$TMP/$_name.log"
	ok "$_name: ... before anything was compiled" awk -v p="$pkg" '
		/^deps: installing/ && index($0, " " p) { d = NR }
		/^cc / && !c { c = NR }
		END { exit !(d && c && d < c) }' "$TMP/$_name.log"
	ok "$_name: the tools link the libraries (ntpprobe needs libmnl)" \
		sh -c "ldd '$TMP/clone/bin/ntpprobe' | grep -q 'libmnl\\.so'"
}

# The README's two commands.  The demo kept short (one family); the check
# with one unit test and one shell test (TESTS on the command line): what
# is checked here is the build, which is all of it either way.
export NTPX_DEMO_FAMILIES=freerun NTPX_DEMO_DIR="$TMP/demo"
first_time demo demo
ok "demo: report.html produced" test -s "$TMP/demo/report.html"
first_time check check "TESTS=build/unit/ntp.t tests/cli/refused.t"
ok "check: prove ran the two tests, all passed" grep -q '^Files=2, .*' "$TMP/check.log"
ok "the machine's packages are as they were ($removed)" put_back
done_testing
