/* SPDX-License-Identifier: ISC */
/*
 * out.c - write errors and closed pipes, the same way in every tool
 * (lib/out.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "out.h"

/* Set once an output error has been dealt with: said, or a closed pipe. */
static int out_said;

void out_init(void)
{
	signal(SIGPIPE, SIG_IGN);
}

/*
 * At exit: whatever went to stdout without a check (--help, --version, a
 * tool's last lines) is flushed and checked here, as gnulib's close_stdout
 * does, unless the tool has dealt with an output error already.
 */
static void out_at_exit(void)
{
	if (!out_said && out_flush(stdout, "standard output") == OUT_FAILED)
		_exit(NTPX_EXIT_FAIL);
}

void out_check_at_exit(void)
{
	static int once;

	if (!once++)
		atexit(out_at_exit);
}

int out_failed(const char *name, int err)
{
	out_said = 1;
	if (err == EPIPE)
		return OUT_CLOSED;
	if (err)
		ntpx_err("write error on %s: %s", name, strerror(err));
	else
		ntpx_err("write error on %s", name);
	return OUT_FAILED;
}

/*
 * The error flag is set but nothing was left to flush, so no errno says
 * why: a pipe whose reader is gone polls POLLERR, anything else is an
 * error of unknown cause.
 */
static int out_cause(FILE *f)
{
	struct pollfd p = { .fd = fileno(f), .events = POLLOUT };

	if (p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		return EPIPE;
	return 0;
}

int out_flush(FILE *f, const char *name)
{
	errno = 0;
	if (fflush(f) == EOF)
		return out_failed(name, errno ? errno : out_cause(f));
	if (ferror(f))
		return out_failed(name, out_cause(f));
	return OUT_OK;
}

int out_close(FILE *f, const char *name)
{
	int st = out_flush(f, name);

	if (f == stdout || f == stderr)
		return st;
	errno = 0;
	if (fclose(f) == EOF && st == OUT_OK)
		st = out_failed(name, errno);
	return st;
}

int out_exit_code(int state)
{
	return state == OUT_FAILED ? NTPX_EXIT_FAIL : NTPX_EXIT_OK;
}

void out_flush_stdout_or_exit(void)
{
	int st = out_flush(stdout, "standard output");

	if (st != OUT_OK)
		exit(out_exit_code(st));
}
