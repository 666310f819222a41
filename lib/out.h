/* SPDX-License-Identifier: ISC */
/*
 * out.h - what a tool does when its output cannot be written.
 *
 * Every tool that writes records, tables or files treats a failed write
 * the same way (doc/ntpx.7, EXIT STATUS in each tool's page):
 *
 *   - the reader went away (EPIPE: a closed pipe, "| head -n 3"): stop
 *     writing at once, quietly, and exit 0: everything the reader took
 *     was written whole, and a pipeline stage that outlives its reader
 *     has nothing left to do;
 *   - anything else (ENOSPC, EIO, EFBIG, ...): one line
 *     "prog: write error on NAME: cause", and exit 1, with no summary
 *     that could be read as success.
 *
 * SIGPIPE is ignored (out_init) so that a closed pipe comes back as the
 * write's EPIPE instead of killing the tool before it can tidy up (an
 * XDP program to detach, a verbs device to close).
 */
#ifndef NTPX_OUT_H
#define NTPX_OUT_H

#include <stdio.h>

enum out_state {
	OUT_OK = 0,		/* everything written so far went out */
	OUT_CLOSED = 1,		/* the reader went away (EPIPE): stop quietly */
	OUT_FAILED = -1,	/* a write error, its line already printed */
};

/* Ignores SIGPIPE: a closed pipe then fails the write with EPIPE. */
void out_init(void);

/*
 * Checks stdout once more at exit (registered by opt_init, so in every
 * tool): what was written without a check (--help, --version) and could
 * not go out makes the exit status 1 with the error line, unless the tool
 * dealt with an output error itself.
 */
void out_check_at_exit(void);

/*
 * A write to the output @name (e.g. "standard output", a file's path)
 * failed with @err (an errno value): OUT_CLOSED for EPIPE, otherwise the
 * error line is printed and OUT_FAILED returned.
 */
int out_failed(const char *name, int err);

/*
 * Flushes @f and looks at its error flag: OUT_OK, or what out_failed()
 * says of the error.  Call it after each line of a stream that must stop
 * promptly, and at the end of every output.
 */
int out_flush(FILE *f, const char *name);

/*
 * out_flush() then fclose() (unless @f is stdout or stderr, which are
 * only flushed): OUT_OK or what the first failure says.
 */
int out_close(FILE *f, const char *name);

/* The exit status for a state: 0 for OUT_OK and OUT_CLOSED, 1 otherwise. */
int out_exit_code(int state);

/* For tools with nothing to tidy up: out_flush() of stdout ("standard
   output"), and exit with out_exit_code() unless it is OUT_OK. */
void out_flush_stdout_or_exit(void);

#endif
