#!/bin/sh
# SPDX-License-Identifier: ISC
# tests/bench/clock.sh - sim: clock reads against CLOCK_REALTIME (target <= 2x).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/ntpx-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$top/build/bench/clock" "$dir"
"$top/build/bench/clock" -w 0.01 "$dir"
