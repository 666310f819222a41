#!/bin/sh
# SPDX-License-Identifier: ISC
# Every tracked file that can hold a comment has an SPDX-License-Identifier
# line (scripts/spdx --check), and LICENSE is there.
. "$(dirname "$0")/../lib.sh"

need git
# The tree must be a checkout's top: a copy inside another checkout (CI's
# build/san-tree) would otherwise see that one's files.
test_lazy_prereq CHECKOUT_TOP '
	[ "$(git -C "$NTPX_TOP" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$NTPX_TOP" && pwd -P)" ]
'
need_prereq CHECKOUT_TOP

# scripts/spdx --check on the tree, what it names in $TMP/missing.
check_tree() { "$NTPX_TOP/scripts/spdx" --check 2>"$TMP/missing"; }
c=$TMP/copy
copied() {
	mkdir "$c" &&
	(cd "$NTPX_TOP" && git ls-files -z | tar --null -T - -cf -) | tar -x -C "$c" -f - &&
		git -C "$c" init -q && git -C "$c" add -A &&
		git -C "$c" -c user.name=t -c user.email=t@t commit -qm copy
}
# How many files scripts/spdx --check names as lacking the line in DIR.
no_spdx_count() { "$1/scripts/spdx" --check 2>&1 | grep -c "no SPDX"; }

test_expect_success 'LICENSE is the ISC licence' '
	test_grep "^ISC License\$" "$NTPX_TOP/LICENSE"
'

test_expect_success 'every tracked file has its SPDX line' '
	test_exit 0 check_tree
'

test_expect_success 'scripts/spdx --check names no file' '
	while read -r l; do diag "$l" || return 1; done <"$TMP/missing" &&
	test_is "$(wc -l <"$TMP/missing")" 0
'

# On a copy of the tracked files: with the line taken out of a C file, a
# #! script, a man page and a markdown page, scripts/spdx puts each back
# where it was, and a second run changes nothing.
test_expect_success 'a copy of the tracked files, committed' '
	copied
'

test_expect_success '--check names the four files' '
	for f in lib/clock.c tests/cli/pipeline.t doc/ntpprobe.1 doc/design.md; do
		sed -i "/SPDX-License-Identifier/d" "$c/$f" || return 1
	done &&
	test_is "$(no_spdx_count "$c")" 4
'

test_expect_success 'scripts/spdx adds four lines' '
	"$c/scripts/spdx" >"$TMP/first" &&
	test_is "$(wc -l <"$TMP/first")" 4
'

test_expect_success 'each where it was: the copy is the tree again' '
	git -C "$c" diff --quiet
'

test_expect_success 'a second run changes nothing' '
	"$c/scripts/spdx" >"$TMP/second" &&
	test_is "$(cat "$TMP/second")" ""
'
done_testing
