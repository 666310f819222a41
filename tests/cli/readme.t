#!/bin/sh
# SPDX-License-Identifier: ISC
# README's examples run as written (issue 33, 3).  Every command block
# of README (an indented block whose first line is a command) is taken
# from the file itself and either run here, as written but for a short
# count, a free loopback port and paths in this suite's own directory,
# or named below as run elsewhere; a block that is neither fails, so a
# new example cannot go untried.
. "$(dirname "$0")/../lib.sh"

# README's blocks, one a record: each line of a block, its continuation
# lines joined, a comment after "  #" left out, blocks parted by a line
# "--".  A block is one whose first word is bin/... or make.
blocks() {
	awk '
	function flush() { if (n && (b ~ /^bin\// || b ~ /^make /)) print b "\n--"; b = ""; n = 0 }
	/^    / {
		l = $0; sub(/^ +/, "", l); sub(/  +# .*$/, "", l); sub(/^# .*$/, "", l)
		if (l == "") next
		if (cont) b = b " " l; else b = b (n ? "\n" : "") l
		n++
		cont = sub(/ *\\$/, "", b)
		next
	}
	{ flush(); cont = 0 }
	END { flush() }' "$NTPX_TOP/README"
}

# run_block FILE: the block in FILE, run in $TMP/run (bin/ is the
# tree's) with a free port for 12300, counts of 20, $TMP/run for /tmp;
# a server it starts in the background is stopped at its end.
# Its stdout in FILE.out, its stderr FILE.err.
run_block() {
	sed -e "s/12300/$port/g" -e "s/-c [0-9][0-9]*/-c 20/g" -e "s|/tmp/|$TMP/run/|g" "$1" >"$1.sh" &&
	printf '\n_st=$?; kill $! 2>/dev/null; wait; exit $_st\n' >>"$1.sh" &&
	(cd "$TMP/run" && sh "$1.sh" >"$1.out" 2>"$1.err")
}

test_expect_success 'setup: README'"'"'s command blocks, a place to run them' '
	blocks >"$TMP/blocks" &&
	awk -v dir="$TMP" "/^--\$/ { k++; next } { print > (dir \"/block.\" k + 1) }" "$TMP/blocks" &&
	nblocks=$(grep -c "^--\$" "$TMP/blocks") &&
	diag "$nblocks command blocks" &&
	test "$nblocks" -ge 4 &&
	mkdir "$TMP/run" && ln -s "$NTPX_TOP/bin" "$TMP/run/bin" &&
	port=$(free_udp_port)
'

k=1
while [ -f "$TMP/block.$k" ]; do
	first=$(head -n 1 "$TMP/block.$k")
	case $first in
	"bin/ntpreflect "*"&")
		test_expect_success "block $k runs as written: $first ..." '
			run_block "$TMP/block.$k" &&
			diag "$(tr "\n" " " <"$TMP/block.$k.out" | cut -c1-200)" &&
			is_num "$(sed -n "s/^b_ppm //p" "$TMP/block.$k.out")"
		'
		# A clock's drift, not a step's: README's clocks-and-truth run
		# starts 120 s behind, and its fit once said -986365 ppm.
		if grep -q -- "--clock sim:" "$TMP/block.$k"; then
			test_expect_success "block $k: the fit is of the clock after the step" '
				test_is "$(sed -n "s/^steps //p" "$TMP/block.$k.out")" 1 &&
				tb=$(sed -n "s/^true_b_ppm //p" "$TMP/block.$k.out") &&
				is_num "$tb" &&
				awk -v tb="$tb" "BEGIN { exit !(tb > -525 && tb < 525) }"
			'
		fi ;;
	"make demo"*|"bin/ntpx-study "*)
		# Minutes in a lab of namespaces: tests/net/study.t runs the
		# quick study and its --verify, .ci/run runs make demo.
		test_expect_success "block $k is run by tests/net/study.t and CI: $first" '
			grep -q "ntpx-study" "$NTPX_TOP/tests/net/study.t"
		' ;;
	*)
		test_expect_success "block $k is run somewhere: $first" '
			diag "README block $k is not run by any test: run it here" &&
			false
		' ;;
	esac
	k=$((k + 1))
done
done_testing
