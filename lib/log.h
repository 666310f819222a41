/* SPDX-License-Identifier: ISC */
/*
 * log.h - the exit codes and error lines all tools share, and the
 * program's name they carry (log.c, a leaf, as OpenBSD ntpd's log.c).
 * These print and exit: they are for the tools, and lib/ returns its
 * errors to them instead (doc/hacking.md, Errors).
 */
#ifndef NTPX_LOG_H
#define NTPX_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

enum {
	NTPX_EXIT_OK = 0,	/* success, also after SIGINT/SIGTERM */
	NTPX_EXIT_FAIL = 1,	/* the work failed: I/O, bad input data, no device */
	NTPX_EXIT_USAGE = 2,	/* bad options or endpoint */
	NTPX_EXIT_CUT = 3,	/* a reader dropped a last line cut short (no
				   newline) and used the records before it */
};

/* The tool's name, for error lines: "ntpx" until ntpx_prog_set(argv[0])
   (opt_init does it) keeps the part after the last '/'. */
extern const char *ntpx_prog;
void ntpx_prog_set(const char *argv0);

/* One line on stderr: "prog: message".  ntpx_die exits with @code. */
void ntpx_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void ntpx_die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Lines that lib/ hands its caller instead of printing them (a warning
 * beside a success): ntpx_lines_add appends "text\n" to @buf of @len
 * bytes (cut to fit), and a tool prints them with ntpx_err_lines, each
 * as ntpx_err would.
 */
void ntpx_lines_add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ntpx_err_lines(const char *lines);

/*
 * A limit on lines, for a server's lines about its clients, which a flood
 * must neither turn into a flood of lines nor silence for the rest of
 * the run: at most @max lines in each window of @window ns (the first
 * window starts at the first line).  log_limit_pass() says whether a line
 * at @now (ns, CLOCK_MONOTONIC) may go out; when a window has ended with
 * lines held back, *@held gets their count (else 0), for a line of its
 * own before this one.  log_limit_held() is the count held back in the
 * window not yet ended, and zeroes it (at exit).  The caller serialises
 * the calls.
 */
struct log_limit {
	int64_t window;			/* ns */
	unsigned max;
	int64_t start;			/* the window's start; 0: none yet */
	unsigned n;			/* lines passed in it */
	uint64_t held;			/* ... and held back */
};

int log_limit_pass(struct log_limit *l, int64_t now, uint64_t *held);
uint64_t log_limit_held(struct log_limit *l);

/* "prog: error text\nTry 'prog --help'." then exit 2.  (Named for the
   options it is about; every tool calls it.) */
noreturn void opt_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
