/* SPDX-License-Identifier: ISC */
/*
 * priv.c - dropping root after the endpoint is open (see priv.h).
 *
 * The order is OpenNTPD's and chronyd's: groups, gid, then uid.  With
 * capabilities to keep, PR_SET_KEEPCAPS holds the permitted set across
 * setresuid() and capset() then trims it to @keep; without, setresuid()
 * from root clears every capability by itself.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "priv.h"
#include "util_private.h"

uint64_t priv_transport_caps(const struct endpoint *ep, enum transport_role role)
{
	if (strcmp(ep->scheme, "uudp") == 0 && role == TRANSPORT_CLIENT)
		return PRIV_CAP(CAP_NET_ADMIN);
	return 0;
}

void priv_caps_str(uint64_t caps, char *buf, size_t len)
{
	static const struct {
		int cap;
		const char *name;
	} names[] = {
		{ CAP_NET_ADMIN, "net_admin" }, { CAP_NET_RAW, "net_raw" },
		{ CAP_NET_BIND_SERVICE, "net_bind_service" }, { CAP_SYS_TIME, "sys_time" },
		{ CAP_IPC_LOCK, "ipc_lock" }, { CAP_SYS_ADMIN, "sys_admin" },
		{ CAP_BPF, "bpf" },
	};
	size_t i, off = 0;

	buf[0] = 0;
	for (i = 0; i < ARRAY_SIZE(names) && off < len; i++)
		if (caps & PRIV_CAP(names[i].cap))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
						names[i].name);
	if (!buf[0])
		snprintf(buf, len, "none");
}

static int caps_set(uint64_t keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = (uint32_t)keep;
	d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
	return (int)syscall(SYS_capset, &h, d);
}

int priv_drop(const char *user, uint64_t keep, char *err, size_t errlen)
{
	struct passwd *pw;
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0) {
		snprintf(err, errlen, "--user %s: only root can change user", user);
		return -1;
	}
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		snprintf(err, errlen, "--user %s: %s", user,
			 errno ? strerror(errno) : "no such user");
		return -1;
	}
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	if (keep && prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L)) {
		snprintf(err, errlen, "--user %s: keeping capabilities: %s", user, strerror(errno));
		return -1;
	}
	if (setgroups(1, &gid) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)) {
		snprintf(err, errlen, "--user %s: %s", user, strerror(errno));
		return -1;
	}
	if (keep) {
		prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L);
		if (caps_set(keep)) {
			snprintf(err, errlen, "--user %s: capabilities: %s", user, strerror(errno));
			return -1;
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L);
	/* No way back. */
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		snprintf(err, errlen, "--user %s: root could be regained", user);
		return -1;
	}
	return 0;
}
