/* SPDX-License-Identifier: ISC */
/*
 * xdp_quiet_private.h - libbpf's messages kept for the XDP port's one
 * error line instead of stderr (xdp_quiet.c).  libbpf has one print hook
 * for the whole process, and a process may hold several XDP ports, opened
 * and closed in any order: the ports count themselves in, the first in
 * installs the quiet hook and the last out puts back the hook that was
 * there before the first.
 */
#ifndef NTPX_XDP_QUIET_PRIVATE_H
#define NTPX_XDP_QUIET_PRIVATE_H

/* One more user of the quiet hook; the first installs it. */
void xdp_quiet_hold(void);

/* One user fewer; the last puts the caller's hook back. */
void xdp_quiet_release(void);

/* Forgets libbpf's latest warning. */
void xdp_quiet_clear(void);

/* libbpf's latest warning since xdp_quiet_clear(), its first line; "" when none. */
const char *xdp_quiet_last(void);

#endif
