#!/bin/sh
# SPDX-License-Identifier: ISC
# The soak over udp (see tests/soak/soak.sh; make soak).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../net/uudp-lib.sh"
SOAK_TRANSPORT=udp
. "$(dirname "$0")/soak.sh"
