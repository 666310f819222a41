/* SPDX-License-Identifier: ISC */
/*
 * opt.h - what every tool's command line does the same way: the values
 * (opt_units.h), the exit codes and error lines (log.h), and here the
 * program's name, --help, --version and the inputs.  For tools: lib/
 * includes opt_units.h or log.h, never this.
 */
#ifndef NTPX_OPT_H
#define NTPX_OPT_H

#include <stdio.h>

#include "log.h"
#include "opt_units.h"

/* Sets the tool's name for error lines (ntpx_prog_set, lib/log.h) from
   argv[0], and has stdout checked at exit (out_check_at_exit, lib/out.h). */
void opt_init(const char *argv0);

/* Prints "prog VERSION" on stdout. */
void opt_version(void);

/*
 * The tail of every tool's getopt switch, for what the tool does not
 * handle itself: 'h' prints @usage on stdout and 'V' (--version, which
 * every tool maps to 'V') the version, both exiting 0; anything else is an
 * option getopt has already named on stderr: "Try 'prog --help'." and
 * exit 2.
 */
noreturn void opt_other(int c, void (*usage)(FILE *out));

/*
 * The inputs of a tool that reads record files: each of argv[first ..
 * argc - 1], "-" being standard input, or standard input alone when there
 * is none, handed in turn to @read(fd, name, arg) (name "stdin" for
 * standard input).  A file that cannot be opened ends the tool: "prog:
 * path: cause", exit 1.  Returns the first non-zero result of @read, else 0.
 */
int opt_inputs(int argc, char **argv, int first,
	       int (*read)(int fd, const char *name, void *arg), void *arg);

#endif
