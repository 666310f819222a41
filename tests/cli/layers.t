#!/bin/sh
# SPDX-License-Identifier: ISC
# doc/design.md is the map of the tree (scripts/layers): its layer table
# names every source file of lib/ (lib/bpf/ too) and src/, a lib/ file includes no header
# of a layer above its own, and no two files include each other or call
# each other in a loop.  Then, on a copy, each of those broken once.
. "$(dirname "$0")/../lib.sh"

need nm cc
layers=$NTPX_TOP/scripts/layers
# The objects of the sources there are now (a stale one, of a file since
# renamed, would not count): make builds them before the tests.
test_lazy_prereq OBJECTS '
	for f in "$NTPX_TOP"/lib/*.c "$NTPX_TOP"/src/*/*.c; do
		o=${f#"$NTPX_TOP"/}; [ -e "$NTPX_TOP/build/${o%.c}.o" ] || exit 1
	done
'
objs() { for f in "$@"; do o=${f#"$NTPX_TOP"/}; echo "$NTPX_TOP/build/${o%.c}.o"; done; }
# scripts/layers on DIR, its lines in $TMP/found.
check() { "$layers" "$@" >"$TMP/found" 2>&1; }
found_none() { while read -r l; do diag "$l" || return 1; done <"$TMP/found" && test_is "$(wc -l <"$TMP/found")" 0; }
c=$TMP/copy

test_expect_success 'the tree follows the layer table' '
	test_exit 0 check "$NTPX_TOP" &&
	found_none
'

test_expect_success OBJECTS 'no two files of lib/ call each other in a loop' '
	test_exit 0 check --calls $(objs "$NTPX_TOP"/lib/*.c) &&
	found_none
'

test_expect_success OBJECTS 'no two files of a tool call each other in a loop' '
	for d in "$NTPX_TOP"/src/*/; do
		check --calls $(objs "$d"*.c) || { cat "$TMP/found" >&2; return 1; }
	done
'

test_expect_success 'setup: a copy of lib/, src/ and the map' '
	mkdir "$c" &&
	cp -R "$NTPX_TOP/lib" "$NTPX_TOP/src" "$NTPX_TOP/doc" "$NTPX_TOP/scripts" "$c" &&
	test_exit 0 "$c/scripts/layers"
'

test_expect_success 'a new file that the table does not name' '
	test_when_finished "rm -f \"$c/lib/newfile.c\"" &&
	: >"$c/lib/newfile.c" && mkdir -p "$c/src/newtool" && : >"$c/src/newtool/main.c" &&
	test_when_finished "rm -r \"$c/src/newtool\"" &&
	test_exit 1 check "$c" &&
	test_grep "^lib/newfile.c: not in doc/design.md.s layer table\$" "$TMP/found" &&
	test_grep "^src/newtool/: not in doc/design.md.s layer table\$" "$TMP/found" &&
	test_is "$(wc -l <"$TMP/found")" 2
'

test_expect_success 'a file the table names no more, and one it names wrongly' '
	test_when_finished "cp \"$NTPX_TOP/doc/design.md\" \"$c/doc/design.md\"" &&
	sed -i "s#, lib/hist.c##; s#lib/stamp.c#lib/stamps.c#" "$c/doc/design.md" &&
	test_exit 1 check "$c" &&
	test_grep "^lib/hist.c: not in doc/design.md.s layer table\$" "$TMP/found" &&
	test_grep "^lib/stamp.c: not in doc/design.md.s layer table\$" "$TMP/found" &&
	test_grep "^lib/stamps.c: in doc/design.md.s layer table, not in the tree\$" "$TMP/found" &&
	test_is "$(wc -l <"$TMP/found")" 3
'

test_expect_success 'the XDP program of lib/bpf/: in the table, and held to its row' '
	test_when_finished "cp \"$NTPX_TOP/doc/design.md\" \"$c/doc/design.md\"" &&
	test_when_finished "cp \"$NTPX_TOP/lib/bpf/ntpx_xdp.bpf.c\" \"$c/lib/bpf/\"" &&
	sed -i "s#| lib/bpf/ntpx_xdp.bpf.c (#| (#" "$c/doc/design.md" &&
	test_exit 1 check "$c" &&
	test_grep "^lib/bpf/ntpx_xdp.bpf.c: not in doc/design.md.s layer table\$" "$TMP/found" &&
	test_is "$(wc -l <"$TMP/found")" 1 &&
	cp "$NTPX_TOP/doc/design.md" "$c/doc/design.md" &&
	sed -i "s/^#include <linux\/bpf.h>/&\n#include \"..\/record.h\"/" "$c/lib/bpf/ntpx_xdp.bpf.c" &&
	test_exit 1 check "$c" &&
	test_grep "^lib/bpf/ntpx_xdp.bpf.c: includes record.h, from a layer above its own\$" "$TMP/found" &&
	test_is "$(wc -l <"$TMP/found")" 1
'

test_expect_success 'a lib/ file that includes a header of a layer above' '
	test_when_finished "cp \"$NTPX_TOP/lib/ntp.c\" \"$c/lib/ntp.c\"" &&
	sed -i "s/^#include \"ntp.h\"/&\n#include \"record.h\"/" "$c/lib/ntp.c" &&
	test_exit 1 check "$c" &&
	test_grep "^lib/ntp.c: includes record.h, from a layer above its own\$" "$TMP/found" &&
	test_is "$(wc -l <"$TMP/found")" 1
'

test_expect_success 'two files that include each other, in one layer' '
	test_when_finished "cp \"$NTPX_TOP/lib/ntp.c\" \"$NTPX_TOP/lib/frame.c\" \"$c/lib/\"" &&
	sed -i "s/^#include \"ntp.h\"/&\n#include \"frame.h\"/" "$c/lib/ntp.c" &&
	sed -i "s/^#include \"frame.h\"/&\n#include \"ntp.h\"/" "$c/lib/frame.c" &&
	test_exit 1 check "$c" &&
	test_grep "^include loop: lib/frame <-> lib/ntp\$" "$TMP/found" &&
	test_is "$(wc -l <"$TMP/found")" 1
'

test_expect_success 'a loop of three through headers' '
	test_when_finished "cp \"$NTPX_TOP/lib/ntp.h\" \"$NTPX_TOP/lib/frame.h\" \"$NTPX_TOP/lib/xleave.c\" \"$c/lib/\"" &&
	sed -i "s/^#include <stdint.h>/&\n#include \"frame.h\"/" "$c/lib/ntp.h" &&
	sed -i "s/^#include <stdint.h>/&\n#include \"xleave.h\"/" "$c/lib/frame.h" &&
	sed -i "s/^#include \"xleave.h\"/&\n#include \"ntp.h\"/" "$c/lib/xleave.c" &&
	test_exit 1 check "$c" &&
	test_grep "^include loop: lib/frame <-> lib/ntp\$" "$TMP/found" &&
	test_grep "^include loop: lib/frame <-> lib/xleave\$" "$TMP/found"
'

# Objects of three small files: a.c and b.c call each other, c.c only
# lists b's ops table (data) and b calls c.
test_expect_success 'setup: three objects' '
	printf "void b(void);\nvoid a(void);\nvoid a(void) { b(); }\n" >"$TMP/a.c" &&
	printf "void a(void);\nvoid c(void);\nvoid b(void);\nint b_ops = 1;\nvoid b(void) { a(); c(); }\n" >"$TMP/b.c" &&
	printf "extern int b_ops;\nint *c_table(void);\nvoid c(void);\nint *c_table(void) { return &b_ops; }\nvoid c(void) { }\n" >"$TMP/c.c" &&
	for f in a b c; do cc -c -o "$TMP/$f.o" "$TMP/$f.c" || return 1; done
'

test_expect_success 'two objects that call each other' '
	test_exit 1 check --calls "$TMP/a.o" "$TMP/b.o" "$TMP/c.o" &&
	test_is "$(cat "$TMP/found")" "call loop: $TMP/a.o <-> $TMP/b.o"
'

test_expect_success 'a table of data is not a call' '
	test_exit 0 check --calls "$TMP/b.o" "$TMP/c.o"
'
done_testing
