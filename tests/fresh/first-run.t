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

need_prereq ROOT
need git apt-get apt-mark dpkg-query pkg-config
pkg=${NTPX_FRESH_PKG:-libmnl-dev}
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'; }
# This test removes $pkg and puts it back: it must be there to begin with.
test_lazy_prereq PKG_INSTALLED 'installed "$pkg"'
need_prereq PKG_INSTALLED
# Whatever goes with it was fetched into apt's cache (the fetch test):
# nothing is removed before.
test_lazy_prereq FETCHED 'test "$fetched" = yes'

APT="apt-get -y -q -o DPkg::Lock::Timeout=300"
export DEBIAN_FRONTEND=noninteractive

# What apt would remove with PKG, one line; and which of the packages
# named were installed as dependencies (auto), so that putting them back
# leaves the marks as they were.
would_remove() { apt-get -s remove "$1" 2>/dev/null | awk '$1 == "Remv" { print $2 }' | tr '\n' ' '; }
auto_among() {
	_a=
	for _p in "$@"; do
		apt-mark showauto "$_p" 2>/dev/null | grep -qx "$_p" && _a="$_a $_p"
	done
	echo "$_a"
}
# Every package to put back must be in apt's cache before anything is
# removed: a machine that cannot fetch it is left untouched.
fetch_first() {
	# shellcheck disable=SC2086
	$APT install --reinstall --download-only $removed >"$TMP/fetch.log" 2>&1 ||
		{ diag "$(tail -n 3 "$TMP/fetch.log")"; return 1; }
}
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
note_uncommitted() {
	[ -z "$(git -C "$NTPX_TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
		diag "uncommitted changes in $NTPX_TOP are not in the clone (it tests HEAD)"
}

# For the demo and the check, in the clone as it came from git (no
# build/, no bin/), with the package removed again:
# remove_pkg: the clone cleaned, $pkg removed; pkg-config must no longer
# find the libraries.
# shellcheck disable=SC2086
remove_pkg() {
	git -C "$TMP/clone" clean -qfdx &&
	$APT remove $pkg >>"$TMP/remove.log" 2>&1 &&
	! pkg-config --exists libibverbs librdmacm libxdp libbpf libmnl
}
# user_make NAME GOAL...: make -j2 GOAL... in the clone, as a user would
# run it: nothing of this make or of this checkout in the environment (no
# MAKEFLAGS from a make above us, no tools on PATH) but NTPX_LEDGER, so
# that make check-fresh sees what it leaves.  The log in $TMP/NAME.log,
# make's status in $_rc.
user_make() {
	_name=$1
	shift
	_start=$(date +%s)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		-u NTPX_TOP -u NTPX_BIN -u NTPX_HELPERS \
		make -C "$TMP/clone" -j2 "$@" >"$TMP/$_name.log" 2>&1
	_rc=$?
	diag "make -j2 $*: exit $_rc in $(($(date +%s) - _start)) s"
}
# first_make NAME GOAL...: user_make; fails unless make exits 0.
first_make() {
	user_make "$@"
	[ "$_rc" = 0 ] || diag "$(tail -n 15 "$TMP/$1.log")"
	test_is "$_rc" 0
}
# deps_before_cc NAME: make deps installed $pkg before the first cc line
# of $TMP/NAME.log.
deps_before_cc() {
	awk -v p="$pkg" '
		/^deps: installing/ && index($0, " " p) { d = NR }
		/^cc / && !c { c = NR }
		END { exit !(d && c && d < c) }' "$TMP/$1.log"
}
links_libmnl() { ldd "$TMP/clone/bin/ntpprobe" | grep -q 'libmnl\.so'; }

test_expect_success "setup: what apt would remove with $pkg, and which of those are auto" '
	removed=$(would_remove "$pkg") &&
	auto=$(auto_among $removed) &&
	diag "removing:$removed(auto:${auto:- none})" &&
	test -n "$removed"
'

test_expect_success 'the packages to put back are fetched first' '
	test -n "$removed" &&
	fetch_first &&
	test_atexit put_back &&
	fetched=yes
'

# The clone first, so that the package is gone for as short a time as can
# be (until make deps puts it back): other builds on this machine would
# fail meanwhile.
test_expect_success FETCHED 'a fresh clone of this checkout' '
	git clone -q "$NTPX_TOP" "$TMP/clone" &&
	note_uncommitted
'

# The README's two commands.  The demo kept short (one family); the check
# with one unit test and one shell test (TESTS on the command line): what
# is checked here is the build, which is all of it either way.
test_expect_success FETCHED 'setup: a user'\''s environment: no tools of this checkout on PATH, a demo of one family' '
	PATH=${PATH#"$NTPX_BIN:"} &&
	export NTPX_DEMO_FAMILIES=freerun NTPX_DEMO_DIR="$TMP/demo"
'

test_expect_success FETCHED "demo: $pkg removed, pkg-config no longer finds the libraries" '
	remove_pkg
'

test_expect_success FETCHED 'demo: make -j2 demo succeeds the first time' '
	first_make demo demo
'

test_expect_success FETCHED "demo: make deps installed $pkg" '
	test_grep "^deps: installing.* $pkg" "$TMP/demo.log"
'

test_expect_success FETCHED 'demo: ... before anything was compiled' '
	deps_before_cc demo
'

test_expect_success FETCHED 'demo: the tools link the libraries (ntpprobe needs libmnl)' '
	links_libmnl
'

test_expect_success FETCHED 'demo: report.html produced' '
	test -s "$TMP/demo/report.html"
'

test_expect_success FETCHED "check: $pkg removed, pkg-config no longer finds the libraries" '
	remove_pkg
'

# A plain make installs nothing (doc/hacking.md): it stops before it
# compiles, with one line that names the packages.
test_expect_success FETCHED "make: $pkg removed, a plain make -j2 stops with one line that names the packages" '
	user_make plain &&
	test "$_rc" != 0 &&
	test_grep "^make: pkg-config does not find all of .*libmnl.*: run .make deps. as root" "$TMP/plain.log"
'

test_expect_success FETCHED 'make: ... and compiles nothing' '
	test_grep ! "^cc " "$TMP/plain.log"
'

test_expect_success FETCHED 'check: make -j2 check TESTS=build/unit/ntp.t tests/cli/refused.t succeeds the first time' '
	first_make check check "TESTS=build/unit/ntp.t tests/cli/refused.t"
'

test_expect_success FETCHED "check: make deps installed $pkg" '
	test_grep "^deps: installing.* $pkg" "$TMP/check.log"
'

test_expect_success FETCHED 'check: ... before anything was compiled' '
	deps_before_cc check
'

test_expect_success FETCHED 'check: the tools link the libraries (ntpprobe needs libmnl)' '
	links_libmnl
'

test_expect_success FETCHED 'check: prove ran the two tests, all passed' '
	test_grep "^Files=2, .*" "$TMP/check.log"
'

test_expect_success FETCHED 'the machine'\''s packages are as they were' '
	diag "packages: $removed" &&
	put_back
'
done_testing
