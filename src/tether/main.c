/* SPDX-License-Identifier: ISC */
/*
 * tether - runs a command on another host through a command prefix (ssh,
 * ntpx-lab exec, sudo...) so that the runner, not the transport, decides
 * how long it lives and what its output is.
 *
 * The local side (tether -x PREFIX -- CMD ARG...) starts
 * "PREFIX BIN/tether --serve ENCODED..." with three pipes.  The remote side
 * (--serve) decodes the arguments, runs the command in a process group of
 * its own with stdin from /dev/null, and sends its stdout and stderr back
 * as one stream of framed lines on its own stdout:
 *
 *   r<TAB>HOST      ready: the remote tether runs, on HOST
 *   o<TAB>TEXT      a line of the command's stdout (E/O: a piece without
 *   e<TAB>TEXT      its newline), a line of its stderr
 *   x<TAB>STATUS    the command's exit status, last
 *
 * so that a terminal in between (ssh -tt) can neither merge the two nor
 * turn line ends into CR LF unseen: a line that is not a frame, or that
 * ends in CR, is refused with the host and the prefix named.
 *
 * The remote command's lifetime hangs on the remote tether's stdin
 * (serve.c): nothing outlives the connection.  Arguments travel encoded
 * (frame.c); with --tag TAG the remote side keeps notes of its commands for
 * --list and --kill (notes.c).
 *
 * This file is the wiring: the options, then one of connect.c (the local
 * side), serve.c (the remote side) or notes.c (--list, --kill); tether.h
 * is what they share.
 */
#include <getopt.h>
#include <stdio.h>

#include "opt.h"
#include "tether.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s -x PREFIX [--side SIDE] [--bin BIN] [--tag TAG] [--ready FILE] -- COMMAND [ARG...]\n"
		"       %s --list TAG | --kill TAG\n"
		"       %s --serve [--tag TAG] ENCODED...   (what -x starts on the other side)\n"
		"Runs COMMAND through PREFIX (ssh HOST, ntpx-lab exec ref) under a remote\n"
		"tether: its stdout and stderr come back apart, and it ends when asked or\n"
		"when the connection goes.\n"
		"  -x, --prefix PREFIX  the command prefix that reaches the other host\n"
		"      --side NAME      what to call that host in error lines (default remote)\n"
		"      --bin DIR        tether's directory there (default: this one's)\n"
		"      --tag TAG        note the command under TAG there, for --list/--kill\n"
		"      --ready FILE     make FILE once the command has started there\n"
		"      --list TAG       the commands of TAG alive on this host\n"
		"      --kill TAG       end them (SIGTERM, then SIGKILL)\n"
		"  -h, --help           this text\n"
		"      --version        the version\n"
		"Exit: the command's status; %d for tether's own failures.\n",
		ntpx_prog, ntpx_prog, ntpx_prog, TETHER_EXIT_FAIL);
}

int main(int argc, char **argv)
{
	enum { OPT_LIST = 256, OPT_KILL, OPT_SERVE, OPT_SIDE, OPT_BIN, OPT_TAG, OPT_READY };
	static const struct option longopts[] = {
		{ "prefix", required_argument, NULL, 'x' },
		{ "side", required_argument, NULL, OPT_SIDE },
		{ "bin", required_argument, NULL, OPT_BIN },
		{ "tag", required_argument, NULL, OPT_TAG },
		{ "ready", required_argument, NULL, OPT_READY },
		{ "list", required_argument, NULL, OPT_LIST },
		{ "kill", required_argument, NULL, OPT_KILL },
		{ "serve", no_argument, NULL, OPT_SERVE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prefix = NULL, *side = "remote", *bin = NULL, *tag = NULL, *walk = NULL;
	const char *ready = NULL;
	int c, serving = 0, kill_them = 0;

	opt_init(argv);
	while ((c = getopt_long(argc, argv, "+x:s:b:t:r:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'x': prefix = optarg; break;
		/* The old spellings (ntpx(7), OPTIONS). */
		case 's': opt_old("-s", "--side"); /* fall through */
		case OPT_SIDE: side = optarg; break;
		case 'b': opt_old("-b", "--bin"); /* fall through */
		case OPT_BIN: bin = optarg; break;
		case 't': opt_old("-t", "--tag"); /* fall through */
		case OPT_TAG: tag = optarg; break;
		case 'r': opt_old("-r", "--ready"); /* fall through */
		case OPT_READY: ready = optarg; break;
		case OPT_LIST: walk = optarg; kill_them = 0; break;
		case OPT_KILL: walk = optarg; kill_them = 1; break;
		case OPT_SERVE: serving = 1; break;
		case '?': return NTPX_EXIT_USAGE;	/* getopt said why; no "Try" line */
		default: opt_other(c, usage);
		}
	}
	if (tag && !tag_ok(tag))
		opt_usage_error("bad tag '%s' (letters, digits, '_', '-')", tag);
	if (walk) {
		if (!tag_ok(walk))
			opt_usage_error("bad tag '%s' (letters, digits, '_', '-')", walk);
		if (optind != argc || prefix || serving)
			opt_usage_error("--list and --kill take only the tag");
		if (notes_walk(walk, kill_them))
			ntpx_die(NTPX_EXIT_FAIL, "notes of %s: %m", walk);
		return NTPX_EXIT_OK;
	}
	if (optind >= argc)
		opt_usage_error("missing command");
	if (serving) {
		if (prefix)
			opt_usage_error("--serve takes no prefix");
		return serve_run(tag, argv + optind);
	}
	if (!prefix || !*prefix)
		opt_usage_error("missing --prefix");
	return connect_run(side, prefix, bin, tag, ready, argc - optind, argv + optind);
}

