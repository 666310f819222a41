#!/bin/sh
# SPDX-License-Identifier: ISC
# Building against rdma-core before v36 (Debian 11, Ubuntu 20.04), whose
# mlx5dv.h has no MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS: scripts/rdma-core-defs
# tells the Makefile from libmlx5's pkg-config version, and lib/missing.h
# defines the bit.  The old header is this one with the enumerator taken
# out; pkg-config is a stand-in that answers an old and a new version.
. "$(dirname "$0")/../lib.sh"
need cc

defs=$NTPX_TOP/scripts/rdma-core-defs
hdr=/usr/include/infiniband/mlx5dv.h
test_lazy_prereq MLX5DV "test -r $hdr && grep -q MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS $hdr"
# pkg_says VERSION: a pkg-config that says libmlx5 is VERSION.
pkg_says() {
	mkdir -p "$TMP/bin" &&
	printf '#!/bin/sh\necho %s\n' "$1" >"$TMP/bin/pkg-config" &&
	chmod +x "$TMP/bin/pkg-config"
}
# verbs_stamp.c compiled (syntax only) against the old header, with FLAGS.
build_old() {
	cc -std=gnu11 -D_GNU_SOURCE -fsyntax-only "$@" -I"$TMP/inc" -I"$NTPX_TOP/lib" \
		-I"$NTPX_TOP/build" "$NTPX_TOP/lib/verbs_stamp.c"
}

test_expect_success 'rdma-core v30 (libmlx5 1.13.30.0): the bit is to be defined' '
	pkg_says 1.13.30.0 &&
	test_is "$(PATH=$TMP/bin:$PATH "$defs")" " -DNTPX_MLX5DV_NO_REAL_TIME_TS"
'

test_expect_success 'rdma-core v36 and v44: nothing' '
	pkg_says 1.19.36.0 &&
	test -z "$(PATH=$TMP/bin:$PATH "$defs")" &&
	pkg_says 1.24.44.0 &&
	test -z "$(PATH=$TMP/bin:$PATH "$defs")"
'

test_expect_success 'no libmlx5 known: nothing' '
	pkg_says "" &&
	test -z "$(PATH=$TMP/bin:$PATH "$defs")"
'

test_expect_success MLX5DV 'setup: an mlx5dv.h without the enumerator' '
	mkdir -p "$TMP/inc/infiniband" &&
	grep -v "MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS" "$hdr" >"$TMP/inc/infiniband/mlx5dv.h" &&
	! grep -q REAL_TIME_TS "$TMP/inc/infiniband/mlx5dv.h"
'

test_expect_success MLX5DV 'against it, lib/verbs_stamp.c does not build as it is' '
	! build_old 2>"$TMP/err" &&
	test_grep "MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS" "$TMP/err"
'

test_expect_success MLX5DV 'and builds with what rdma-core-defs says' '
	build_old -DNTPX_MLX5DV_NO_REAL_TIME_TS
'
done_testing
