#!/bin/sh
# SPDX-License-Identifier: ISC
# ntpreflect answers client requests and nothing else, never with more
# bytes than it was sent.  udpq sends the datagrams and then a good
# request as a fence: once the fence is answered, any answer to what came
# before it has arrived too.
. "$(dirname "$0")/../lib.sh"

udpq=$NTPX_HELPERS/udpq
start_reflector --log "$TMP/log"

# A client request: LI 0, VN 4, mode 3 (0x23), the rest zero but xmt.
req=23000000000000000000000000000000000000000000000000000000000000000000000000000000$(printf '%016x' 123456789)
query() { "$udpq" 127.0.0.1 "$REFLECT_PORT" "$@"; }

is "$(query)" "fence 48" "a client request is answered with 48 bytes"
is "$(query 16020001000000000000)" "fence 48" "mode 6 (control) is not answered"
is "$(query 17000000000000000000000000000000)" "fence 48" "mode 7 (private) is not answered"
is "$(query 2300)" "fence 48" "a 2-byte datagram is not answered"
is "$(query "$(echo "$req" | cut -c1-94)")" "fence 48" "47 bytes (a header cut short) is not answered"
is "$(query "$(echo "$req" | sed 's/^23/24/')")" "fence 48" "mode 4 (a server's reply) is not answered"
is "$(query "$(echo "$req" | sed 's/^23/3b/')")" "fence 48" "version 7 is not answered"
is "$(query "$(echo "$req" | sed 's/^23/1b/')" )" "reply 48
fence 48" "version 3 is answered"
# An extension field claiming 512 bytes in a 76-byte datagram.
is "$(query "${req}00000200$(printf '%048d' 0)")" "fence 48" "an extension field running past the end is not answered"
# A well-formed 28-byte extension field: answered, with the header only.
is "$(query "${req}0104001c$(printf '%048d' 0)")" "reply 48
fence 48" "a request with an extension field gets a 48-byte reply"

kill -TERM "$REFLECT_PID"
wait "$REFLECT_PID"
is "$?" 0 "SIGTERM: exit 0"
diag "$(cat "$TMP/reflect.err")"; ok "counts by reason on stderr" grep -q '^ntpreflect: answered 12, short 2, malformed 1, version 1, control 1, private 1, mode 1$' "$TMP/reflect.err"
is "$(grep -c ' ok$' "$TMP/log")" 12 "the log has a line per answered request"
is "$(grep -vc '^#' "$TMP/log")" 19 "and one per ignored datagram"
done_testing
