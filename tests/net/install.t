#!/bin/sh
# SPDX-License-Identifier: ISC
# make install: the installed tree runs on its own.  make install
# DESTDIR=$TMP/root PREFIX=/usr; bin holds exactly the tools, the ntpx-*
# commands and the analysis scripts, the sourced ntpx-family.sh is under
# share/ntpx; then, with no directory of the checkout on PATH and the
# working directory elsewhere, ntpreflect with ntpprobe | offsetfit, and
# ntpx-study --quick -f freerun end to end in a lab made by the installed
# ntpx-lab; every installed man page passes man --warnings.
. "$(dirname "$0")/../lib.sh"

need_prereq LAB BUILT
need make man

root=$TMP/root
usr=$root/usr
dir=$TMP/pkg

# What bin must hold, from the tree: src/TOOL.c and src/TOOL/, bin/ntpx-*
# but the .sh and .awk libraries (and ntpx-setup.sh's .in), analysis/ntpx-*.
want_bin() {
	( cd "$NTPX_TOP" &&
	  { for f in src/*.c; do f=${f#src/}; echo "${f%.c}"; done
	    for d in src/*/; do ls "$d"*.c >/dev/null 2>&1 && { d=${d#src/}; echo "${d%/}"; }; done
	    for f in bin/ntpx-* analysis/ntpx-*; do case $f in *.sh|*.awk|*.in) ;; *) echo "${f##*/}" ;; esac; done
	  } | sort -u )
}
# The man pages: every one installed (their count in nman), each clean
# under man --warnings (those that are not in bad).
man_check() {
	nman=0 bad=
	for p in "$usr"/share/man/man*/*; do
		nman=$((nman + 1))
		w=$(man --warnings -l "$p" 2>&1 >/dev/null)
		[ -z "$w" ] || { bad="$bad ${p##*/}"; diag "$w"; }
	done
}
from_tree() {
	for c in ntpreflect ntpprobe offsetfit ntpx-study ntpx-lab ntpx-freerun ntpx-summarize; do
		[ "$(command -v "$c")" = "$usr/bin/$c" ] || { diag "$c: $(command -v "$c")"; return 1; }
	done
}
fit_n() { awk '$1 == "n" { print $2 }' "$TMP/fit"; }
# The ok exchanges ntpprobe's summary counted (not probe_oks of tests/lib.sh,
# which counts records).
summary_oks() { grep -o 'ok [0-9]*' "$TMP/probe.err" | awk '{ print $2 }'; }
# The study, the last lines of its stderr shown when it fails.
study_or_tail() {
	ntpx-study --quick -f freerun -t udpslow,udpfast "$dir" >"$TMP/study.out" 2>"$TMP/study.err" && return 0
	tail -n 5 "$TMP/study.err" | while read -r l; do diag "$l"; done
	return 1
}

test_expect_success 'make install DESTDIR=... PREFIX=/usr succeeds' '
	make -C "$NTPX_TOP" --no-print-directory install DESTDIR="$root" PREFIX=/usr \
		>"$TMP/install.out" 2>&1
'
test_expect_success 'bin holds exactly the tools, the ntpx-* commands and analysis/' '
	want_bin >"$TMP/want.bin" &&
	ls "$usr/bin" | sort >"$TMP/got.bin" &&
	cmp "$TMP/want.bin" "$TMP/got.bin"
'
test_expect_success 'ntpx-family.sh is under share/ntpx' '
	test -f "$usr/share/ntpx/ntpx-family.sh"
'
test_expect_success 'and not in bin' '
	test ! -e "$usr/bin/ntpx-family.sh"
'
test_expect_success 'ntpx-setup.sh is under share/ntpx, with the version make wrote in' '
	test_grep "^ntpx_version=$(sed -n "s/^VERSION *:= *//p" "$NTPX_TOP/Makefile")\$" "$usr/share/ntpx/ntpx-setup.sh" &&
	test ! -e "$usr/bin/ntpx-setup.sh" && test ! -e "$usr/bin/ntpx-setup.sh.in"
'
test_expect_success 'every man page of doc/ is installed' '
	man_check &&
	test_is "$nman" "$(ls "$NTPX_TOP"/doc/*.[157] | wc -l)"
'
test_expect_success 'man --warnings is clean on each installed page' '
	test_is "$bad" ""
'

# From here on nothing of the checkout: PATH has the installed bin and the
# system's directories (no /usr/local), the working directory is elsewhere.
test_expect_success 'setup: PATH of the installed tree and the system only, the working directory elsewhere' '
	PATH=$usr/bin:/usr/sbin:/usr/bin:/sbin:/bin &&
	NTPX_BIN=$usr/bin &&
	export PATH NTPX_BIN &&
	mkdir "$TMP/elsewhere" &&
	cd "$TMP/elsewhere"
'
test_expect_success 'the commands are found in the installed tree' '
	from_tree
'

test_expect_success 'the installed ntpreflect listens' '
	port=$(free_udp_port) &&
	spawn rpid "$usr/bin/ntpreflect" --stratum 1 "udp://127.0.0.1:$port" 2>"$TMP/reflect.err" &&
	wait_until 5 udp_listening "$port"
'
test_expect_success 'installed ntpprobe | offsetfit exits 0' '
	ntpprobe -i 20ms -c 50 "udp://127.0.0.1:$port" 2>"$TMP/probe.err" | offsetfit >"$TMP/fit"
'
test_expect_success 'offsetfit fits the ok exchanges ntpprobe counted' '
	n=$(fit_n) &&
	nok=$(summary_oks) &&
	diag "$n of $nok" &&
	test -n "$n" -a "$n" = "$nok" -a "${nok:-0}" -gt 0
'

# A lab made by the installed ntpx-lab, and the study in it.
test_expect_success 'setup: a lab of the installed ntpx-lab' '
	lab_up inst
'
test_expect_success 'installed ntpx-study --quick -f freerun exits 0' '
	study_or_tail
'
test_expect_success 'it prints where report.html is' '
	test_is "$(cat "$TMP/study.out")" "$dir/report.html"
'
test_expect_success 'report.html is there' '
	test -s "$dir/report.html"
'
test_expect_success 'the analysis ran from the installed tree' '
	test_grep ! "not present" "$TMP/study.err"
'
test_expect_success 'the package verifies' '
	ntpx-study --verify "$dir"
'
done_testing
