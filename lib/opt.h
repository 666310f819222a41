/* SPDX-License-Identifier: ISC */
/*
 * opt.h - what every tool's command line does the same way: the values
 * (opt_units.h), the exit codes and error lines (log.h), and here the
 * program's name, --help, --version, the inputs and the options tools
 * share.  For tools: lib/ includes opt_units.h or log.h, never this.
 */
#ifndef NTPX_OPT_H
#define NTPX_OPT_H

#include <stdio.h>

#include "log.h"
#include "opt_units.h"
#include "transport.h"

/*
 * Sets the tool's name for error lines (ntpx_prog_set, lib/log.h) from
 * argv[0], and argv[0] to that name, so that getopt's own lines ("prog:
 * unrecognized option '--x'") name the tool as ours do, never as the path
 * it was run by; and has stdout checked at exit (out_check_at_exit,
 * lib/out.h).
 */
void opt_init(char **argv);

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
 * An option given by the spelling it had before the tools shared one
 * dialect (doc/ntpx.7, OPTIONS): one line on stderr, "prog: -n is the old
 * spelling of -c (--count); it goes in the next release", and the tool
 * goes on as for @now.  @old is "-n", @now "-c (--count)" or "--stratum".
 */
void opt_old(const char *old, const char *now);

/*
 * A client's --nts-port (@port_arg, NULL when not given) over @port, what
 * --nts=@nts_arg gave (nts_ke_port_parse()); a bad port, or a second one
 * beside --nts=HOST:PORT, is the tool's usage error.
 */
void opt_nts_port(const char *nts_arg, const char *port_arg, char port[8]);

/*
 * The options ntpprobe and ntpreflect share, each into its config and a
 * bad value the tool's usage error: --poll MODE, "block" or "busy"
 * (transport_poll_parse()), into @mode; -c/--count N, the exchanges or
 * requests to stop after, 1 or more, into @n.
 */
void opt_poll(const char *arg, enum transport_poll *mode);
void opt_stop_count(const char *arg, uint64_t *n);

/*
 * The send-loss schedule in $NTPX_LOSS (lossinject's; none when unset or
 * empty), for the tool to put in its endpoint (struct endpoint's loss):
 * lib/ reads no environment.  Returns as loss_parse() (lib/loss.h), the
 * error naming the variable.
 */
struct loss;
int opt_loss_env(struct loss *l, char *err, size_t errlen);

/*
 * The one operand ENDPOINT of a tool that opens a transport: argv[@first]
 * parsed into @ep (lib/endpoint.h).  None or more than one is a usage
 * error ("Try 'prog --help'."); a malformed one is its one line, saying
 * what is wrong with it, and exit 2.
 */
struct endpoint;
void opt_endpoint(int argc, char **argv, int first, struct endpoint *ep);

/*
 * A transport that did not open: @err, transport_open()'s line, on
 * stderr, and exit 2 when its host name does not resolve (errno ENXIO, as
 * transport_open() left it: a usage error, as ping's unknown host is),
 * else 1.
 */
noreturn void opt_open_failed(const char *err);

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
