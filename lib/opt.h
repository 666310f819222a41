/* SPDX-License-Identifier: ISC */
/*
 * opt.h - what every tool parses the same way: durations, rates, ppm,
 * counts, and the exit codes and error lines all tools share.
 *
 * Parsers take the whole string or nothing: trailing junk, an empty string,
 * a missing number or an overflow is an error (-1), and the output is left
 * untouched.
 */
#ifndef NTPX_OPT_H
#define NTPX_OPT_H

#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

enum {
	NTPX_EXIT_OK = 0,	/* success, also after SIGINT/SIGTERM */
	NTPX_EXIT_FAIL = 1,	/* the work failed: I/O, bad input data, no device */
	NTPX_EXIT_USAGE = 2,	/* bad options or endpoint */
};

#define NTPX_NS_PER_SEC 1000000000LL

/*
 * A duration: a decimal number with an optional unit ns, us, ms, s, m, h;
 * a bare number is seconds ("250ms", "2s", "1.5m", "3").  Negative values
 * are refused unless @signed_ok, then "+" or "-" may lead.  In nanoseconds,
 * rounded to the nearest.
 */
int opt_duration(const char *s, int signed_ok, int64_t *ns);

/* A frequency in parts per million: "+50ppm", "-3.5ppm", "12" (ppm). */
int opt_ppm(const char *s, double *ppm);

/*
 * A rate in bit/s: "800M", "6G", "1.5k", "1000" (SI prefixes, decimal), or a
 * percentage "90%" of something the caller knows.  On success *bps is the
 * rate (or the fraction 0..1 when *is_fraction is set).
 */
int opt_rate(const char *s, double *bps, int *is_fraction);

/* An unsigned decimal count, 0 .. max. */
int opt_count(const char *s, uint64_t max, uint64_t *n);

/* The tool's name, for error lines; set once by opt_init(argv[0]), which
   also has stdout checked at exit (out_check_at_exit, lib/out.h). */
extern const char *opt_prog;
void opt_init(const char *argv0);

/* One line on stderr: "prog: message".  ntpx_die exits with @code. */
void ntpx_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void ntpx_die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "prog: error text\nTry 'prog --help'." then exit 2. */
noreturn void opt_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

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
