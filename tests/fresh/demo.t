#!/bin/sh
# The README's first command on a machine that lacks a package the build
# links against: `make -j2 demo` in a fresh clone must work the first time
# (make deps installs the package, and only then does make ask pkg-config
# for the flags).
#
# It changes the machine: libmnl-dev (NTPX_FRESH_PKG) and whatever apt
# removes with it are removed, then `make demo` in the clone puts it back
# through make deps.  Whatever happens (a failure, SIGINT, SIGTERM) the
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

plan 10

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
ok "the packages to put back are fetched first ($removed)" \
	sh -c "$APT install --reinstall --download-only $removed >'$TMP/fetch.log' 2>&1"
[ "$_tap_failed" = 0 ] || { diag "$(tail -n 3 "$TMP/fetch.log")"; exit 1; }

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
# be: other builds on this machine would fail meanwhile.
ok "a fresh clone of this checkout" git clone -q "$NTPX_TOP" "$TMP/clone"
[ -z "$(git -C "$NTPX_TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
	diag "uncommitted changes in $NTPX_TOP are not in the clone (it tests HEAD)"

# shellcheck disable=SC2086
ok "$pkg removed" sh -c "$APT remove $pkg >'$TMP/remove.log' 2>&1"
ok "pkg-config no longer finds the libraries" sh -c '! pkg-config --exists libibverbs librdmacm libxdp libbpf libmnl'

# make as a user would run it: nothing of this make or of this checkout in
# the environment (no MAKEFLAGS from a make above us, no tools on PATH)
# but NTPX_LEDGER, so that make check-fresh sees what the demo leaves.
PATH=${PATH#"$NTPX_BIN:"}
start=$(date +%s)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u NTPX_DEPS_DONE \
	-u NTPX_TOP -u NTPX_BIN -u NTPX_HELPERS \
	NTPX_DEMO_FAMILIES=freerun NTPX_DEMO_DIR="$TMP/demo" \
	make -C "$TMP/clone" -j2 demo >"$TMP/demo.log" 2>&1
rc=$?
diag "make -j2 demo: exit $rc in $(($(date +%s) - start)) s"
is "$rc" 0 "make -j2 demo succeeds the first time"
[ "$rc" = 0 ] || diag "$(tail -n 15 "$TMP/demo.log")"
ok "make deps installed $pkg" grep -q "^deps: installing.* $pkg" "$TMP/demo.log"
ok "... before anything was compiled" awk -v p="$pkg" '
	/^deps: installing/ && index($0, " " p) { d = NR }
	/^cc / && !c { c = NR }
	END { exit !(d && c && d < c) }' "$TMP/demo.log"
ok "the tools link the libraries (ntpprobe needs libmnl)" sh -c "ldd '$TMP/clone/bin/ntpprobe' | grep -q 'libmnl\\.so'"
ok "report.html produced" test -s "$TMP/demo/report.html"
ok "the machine's packages are as they were ($removed)" put_back
done_testing
