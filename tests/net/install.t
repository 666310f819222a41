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
make -C "$NTPX_TOP" --no-print-directory install DESTDIR="$root" PREFIX=/usr \
	>"$TMP/install.out" 2>&1
is "$?" 0 "make install DESTDIR=... PREFIX=/usr succeeds"

# What bin must hold, from the tree: src/TOOL.c and src/TOOL/, bin/ntpx-*
# but the .sh and .awk libraries, analysis/ntpx-*.
( cd "$NTPX_TOP" &&
  { for f in src/*.c; do f=${f#src/}; echo "${f%.c}"; done
    for d in src/*/; do ls "$d"*.c >/dev/null 2>&1 && { d=${d#src/}; echo "${d%/}"; }; done
    for f in bin/ntpx-* analysis/ntpx-*; do case $f in *.sh|*.awk) ;; *) echo "${f##*/}" ;; esac; done
  } | sort -u ) >"$TMP/want.bin"
ls "$usr/bin" | sort >"$TMP/got.bin"
ok "bin holds exactly the tools, the ntpx-* commands and analysis/" \
	cmp "$TMP/want.bin" "$TMP/got.bin"
ok "ntpx-family.sh is under share/ntpx" test -f "$usr/share/ntpx/ntpx-family.sh"
ok "and not in bin" test ! -e "$usr/bin/ntpx-family.sh"

# The man pages: every one installed, each clean under man --warnings.
nman=0 bad=
for p in "$usr"/share/man/man*/*; do
	nman=$((nman + 1))
	w=$(man --warnings -l "$p" 2>&1 >/dev/null)
	[ -z "$w" ] || { bad="$bad ${p##*/}"; diag "$w"; }
done
is "$nman" "$(ls "$NTPX_TOP"/doc/*.[157] | wc -l)" "every man page of doc/ is installed"
is "$bad" "" "man --warnings is clean on each installed page"

# From here on nothing of the checkout: PATH has the installed bin and the
# system's directories (no /usr/local), the working directory is elsewhere.
PATH=$usr/bin:/usr/sbin:/usr/bin:/sbin:/bin
NTPX_BIN=$usr/bin
export PATH NTPX_BIN
mkdir "$TMP/elsewhere"
cd "$TMP/elsewhere" || exit 1
from_tree() {
	for c in ntpreflect ntpprobe offsetfit ntpx-study ntpx-lab ntpx-freerun ntpx-summarize; do
		[ "$(command -v "$c")" = "$usr/bin/$c" ] || { diag "$c: $(command -v "$c")"; return 1; }
	done
}
ok "the commands are found in the installed tree" from_tree

port=$(free_udp_port)
spawn rpid "$usr/bin/ntpreflect" "udp://127.0.0.1:$port" 2>"$TMP/reflect.err"
ok "the installed ntpreflect listens" wait_until 5 udp_listening "$port"
ntpprobe -i 20ms -c 50 "udp://127.0.0.1:$port" 2>"$TMP/probe.err" | offsetfit >"$TMP/fit"
is "$?" 0 "installed ntpprobe | offsetfit exits 0"
n=$(awk '$1 == "n" { print $2 }' "$TMP/fit")
nok=$(grep -o 'ok [0-9]*' "$TMP/probe.err" | awk '{ print $2 }')
ok "offsetfit fits the ok exchanges ntpprobe counted ($n of $nok)" \
	test -n "$n" -a "$n" = "$nok" -a "${nok:-0}" -gt 0

# A lab made by the installed ntpx-lab, and the study in it.
lab_up inst
dir=$TMP/pkg
ntpx-study --quick -f freerun -t udpslow,udpfast "$dir" >"$TMP/study.out" 2>"$TMP/study.err"
rc=$?
is "$rc" 0 "installed ntpx-study --quick -f freerun exits 0"
[ "$rc" = 0 ] || tail -n 5 "$TMP/study.err" | while read -r l; do diag "$l"; done
is "$(cat "$TMP/study.out")" "$dir/report.html" "it prints where report.html is"
ok "report.html is there" test -s "$dir/report.html"
ok "the analysis ran from the installed tree" \
	sh -c "! grep -q 'not present' '$TMP/study.err'"
ok "the package verifies" ntpx-study --verify "$dir"
done_testing
