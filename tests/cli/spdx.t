#!/bin/sh
# SPDX-License-Identifier: ISC
# Every tracked file that can hold a comment has an SPDX-License-Identifier
# line (scripts/spdx --check), and LICENSE is there.
. "$(dirname "$0")/../lib.sh"

need git
# The tree must be a checkout's top: a copy inside another checkout (CI's
# build/san-tree) would otherwise see that one's files.
[ "$(git -C "$NTPX_TOP" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$NTPX_TOP" && pwd -P)" ] ||
	skip_all "not the top of a git checkout"

ok "LICENSE is the ISC licence" grep -q '^ISC License$' "$NTPX_TOP/LICENSE"
"$NTPX_TOP/scripts/spdx" --check 2>"$TMP/missing"
is "$?" 0 "every tracked file has its SPDX line"
while read -r l; do diag "$l"; done <"$TMP/missing"
is "$(wc -l <"$TMP/missing")" 0 "scripts/spdx --check names no file"

# On a copy of the tracked files: with the line taken out of a C file, a
# #! script, a man page and a markdown page, scripts/spdx puts each back
# where it was, and a second run changes nothing.
c=$TMP/copy
mkdir "$c"
copied() {
	(cd "$NTPX_TOP" && git ls-files -z | tar --null -T - -cf -) | tar -x -C "$c" -f - &&
		git -C "$c" init -q && git -C "$c" add -A &&
		git -C "$c" -c user.name=t -c user.email=t@t commit -qm copy
}
ok "a copy of the tracked files, committed" copied
for f in lib/clock.c tests/cli/pipeline.t doc/ntpprobe.1 doc/design.md; do
	sed -i '/SPDX-License-Identifier/d' "$c/$f"
done
ok "--check names the four files" sh -c '"$1/scripts/spdx" --check 2>&1 | grep -c "no SPDX" | grep -qx 4' - "$c"
"$c/scripts/spdx" >"$TMP/first"
is "$(wc -l <"$TMP/first")" 4 "scripts/spdx adds four lines"
ok "each where it was: the copy is the tree again" git -C "$c" diff --quiet
"$c/scripts/spdx" >"$TMP/second"
is "$(cat "$TMP/second")" "" "a second run changes nothing"
done_testing
