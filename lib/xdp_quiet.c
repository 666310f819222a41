/* SPDX-License-Identifier: ISC */
/*
 * xdp_quiet.c - libbpf's print hook, shared by every XDP port of the
 * process and counted (xdp_quiet_private.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "xdp_quiet_private.h"

static pthread_mutex_t quiet_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned quiet_users;		/* ports holding the hook */
static libbpf_print_fn_t quiet_saved;	/* the hook before the first */
static char quiet_last[160];

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *nl;

	if (level == LIBBPF_WARN) {
		vsnprintf(quiet_last, sizeof(quiet_last), fmt, ap);
		nl = strchr(quiet_last, '\n');
		if (nl)
			*nl = 0;
	}
	return 0;
}

void xdp_quiet_hold(void)
{
	pthread_mutex_lock(&quiet_lock);
	if (quiet_users++ == 0)
		quiet_saved = libbpf_set_print(quiet_print);
	pthread_mutex_unlock(&quiet_lock);
}

void xdp_quiet_release(void)
{
	pthread_mutex_lock(&quiet_lock);
	if (quiet_users && --quiet_users == 0)
		libbpf_set_print(quiet_saved);
	pthread_mutex_unlock(&quiet_lock);
}

void xdp_quiet_clear(void)
{
	quiet_last[0] = 0;
}

const char *xdp_quiet_last(void)
{
	return quiet_last;
}
