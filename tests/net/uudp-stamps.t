#!/bin/sh
# SPDX-License-Identifier: ISC
# uudp over AF_XDP: send stamps from AF_XDP TX metadata (lib/port_xdp.c,
# lib/missing.h), in the lab (veth, generic XDP, copy mode).
#
# On this path the kernel's completion stamp is its software one
# (CLOCK_TAI when it freed the frame's copy).  Across a veth into another
# namespace that is after the peer's XDP program took the frame (t2k) and
# before the peer's socket can have answered, so the record's order is
#   t1 <= t1k, t2k <= t1k on the shared clock, t1k <= t4, and t3 <= t3k
# (doc/uudp.md), on a sim: clock too.  Then, with Linux 6.8-6.10
# simulated at the system call (a preloaded setsockopt() that answers
# EINVAL to XDP_UMEM_TX_METADATA_LEN, a flag they do not know): the umem
# registered again without it, as xsk-tx-metadata.rst recommends
# (tx_metadata=yes), but no copy-mode send stamps (they need 6.11), '-'
# in the columns, the records still ok, and the reason said once.  And
# with any TX metadata refused: libxdp's umem, tx_metadata=no.
. "$(dirname "$0")/../lib.sh"
need_built xdp
need_prereq LAB
need cc clockstep

xport=12302
xdp_up() { $X client ntpprobe -c 1 -w 200ms "$url" 2>/dev/null | grep -Eq ' ok( |$)'; }
# "ok-records without-t1k-or-t3k out-of-order"
order() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
	field("status") == "ok" { n++
		if (field("t1k") == "-" || field("t3k") == "-" || field("t2k") == "-") { m++; next }
		if (!(field("t1") "" <= field("t1k") "" && field("t2k") "" <= field("t1k") "" &&
		      field("t1k") "" <= field("t4") "" && field("t3") "" <= field("t3k") "")) {
			b++; print "out of order: " $0 > "/dev/stderr" } }
	END { print n + 0, m + 0, b + 0 }' "$1"
}
# "ok-records not-in-order": t1 <= t1k <= t4 (a missing t1k is not).
sim_order() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
	field("status") == "ok" { n++
		if (field("t1k") == "-" || !(field("t1") "" <= field("t1k") "" && field("t1k") "" <= field("t4") "")) b++ }
	END { print n + 0, b + 0 }' "$1"
}
# ok records of FILE whose t1k is "-".
t1k_dashes() {
	awk "$ntpx_fields"'/^#fields/ { fields(); next } /^#/ { next }
	field("status") == "ok" && field("t1k") == "-" { n++ } END { print n + 0 }' "$1"
}
# A kernel that refuses TX metadata, at the system call.
# write_refuse_c FILE [all]: without "all", Linux 6.8-6.10 (the flag
# refused); with it, any umem with a tx_metadata_len refused.
write_refuse_c() {
	cat >"$1" <<C
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#define ALL ${2:+1}+0
/* SOL_XDP XDP_UMEM_REG with the TX-metadata flag (1 << 2): EINVAL;
   with ALL, a nonzero tx_metadata_len (the u32 at byte 28) too. */
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*real)(int, int, int, const void *, socklen_t);

	if (level == SOL_XDP && name == XDP_UMEM_REG && len >= 24 &&
	    ((((const struct xdp_umem_reg *)val)->flags & (1 << 2)) ||
	     (ALL && len >= 32 && ((const uint32_t *)val)[7]))) {
		errno = EINVAL;
		return -1;
	}
	if (!real)
		real = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
	return real(fd, level, name, val, len);
}
C
}

test_expect_success 'setup: a lab of our own' '
	lab_up uxs &&
	X="$NTPX_BIN/ntpx-lab -n $LAB exec"
'

test_expect_success 'setup: a uudp ntpreflect on the fast path, its XDP program up' '
	$X client ethtool -K fast tx off >/dev/null &&
	$X ref ethtool -K fast tx off >/dev/null &&
	url="uudp://$NTPX_REF_FAST:$xport?dev=fast" &&
	spawn UPID ip netns exec "$NTPX_NS_REF" ntpreflect --stratum 1 "$url" 2>"$TMP/u.err" &&
	wait_until 10 xdp_up
'

test_expect_success 'setup: 50 interleaved exchanges over uudp' '
	$X client ntpprobe -i 10ms -c 50 --xleave "$url" >"$TMP/u.rec" 2>"$TMP/c.err"
'

test_expect_success '#stamps: t1k from the TX metadata completion stamp' '
	test_grep "^#stamps .*t1k=xdp:tx_metadata_sw " "$TMP/u.rec"
'

test_expect_success 't1k and t3k on nearly every ok record' '
	set -- $(order "$TMP/u.rec") &&
	diag "$2 of $1 without" &&
	test "$1" -ge 45 -a "$2" -le $(($1 / 10))
'

test_expect_success 't1 <= t1k, t2k <= t1k <= t4, t3 <= t3k on every one' '
	set -- $(order "$TMP/u.rec") &&
	test_is "$3" 0
'

test_expect_success 'no completion came without its stamp' '
	test_grep "tx_metadata=yes tx_stamps_missing=0" "$TMP/c.err"
'

# On a sim: clock 1.5 s ahead and 40 ppm fast the stamp moves to it, as
# the kernel's others do (a stamp left on CLOCK_REALTIME is 1.5 s early).
test_expect_success 'setup: a sim: clock 1.5 s ahead and 40 ppm fast' '
	clockstep --clock "sim:$TMP/off" --create --offset 1.5s --freq 40ppm
'

test_expect_success 'sim clock: ntpprobe exits 0' '
	$X client ntpprobe -i 10ms -c 20 --clock "sim:$TMP/off" "$url" >"$TMP/s.rec" 2>/dev/null
'

test_expect_success 'sim clock: t1 <= t1k <= t4 on its clock' '
	set -- $(sim_order "$TMP/s.rec") &&
	diag "$2 of $1 not" &&
	test "$1" -ge 18 -a "$2" = 0
'

test_expect_success 'setup: a preload whose setsockopt() refuses a umem with TX metadata (EINVAL)' '
	write_refuse_c "$TMP/refuse.c" &&
	cc -shared -fPIC -o "$TMP/refuse.so" "$TMP/refuse.c" -ldl
'

# (verify_asan_link_order=0: a SAN=1 build takes the preload too)
test_expect_success 'refused: ntpprobe still exits 0' '
	$X client env LD_PRELOAD="$TMP/refuse.so" ASAN_OPTIONS=verify_asan_link_order=0 \
		ntpprobe -i 10ms -c 20 --xleave "$url" >"$TMP/r.rec" 2>"$TMP/r.err"
'

test_expect_success 'refused: #stamps has no t1k source' '
	test_grep "^#stamps .*t1k=- " "$TMP/r.rec"
'

test_expect_success "refused: the records are ok, t1k '-' on each" '
	n=$(count_status "$TMP/r.rec" ok) &&
	dash=$(t1k_dashes "$TMP/r.rec") &&
	diag "$dash of $n" &&
	test "$n" -ge 18 -a "$dash" = "$n"
'

test_expect_success 'refused: said once' '
	test_is "$(grep -c "no AF_XDP send stamps: copy-mode TX-metadata stamps need Linux 6.11" "$TMP/r.err")" 1
'

test_expect_success 'refused flag: registered again without it (tx_metadata=yes)' '
	test_grep "tx_metadata=yes" "$TMP/r.err"
'

test_expect_success 'setup: a preload that refuses any umem with TX metadata' '
	write_refuse_c "$TMP/refall.c" all &&
	cc -shared -fPIC -o "$TMP/refall.so" "$TMP/refall.c" -ldl
'

test_expect_success 'refused all: ntpprobe still exits 0, libxdp umem, said once' '
	$X client env LD_PRELOAD="$TMP/refall.so" ASAN_OPTIONS=verify_asan_link_order=0 \
		ntpprobe -i 10ms -c 20 "$url" >"$TMP/ra.rec" 2>"$TMP/ra.err" &&
	test_grep "^#stamps .*t1k=- " "$TMP/ra.rec" &&
	test_grep "tx_metadata=no" "$TMP/ra.err" &&
	test_is "$(grep -c "no AF_XDP send stamps: the kernel refused a umem with TX metadata" "$TMP/ra.err")" 1
'
done_testing
