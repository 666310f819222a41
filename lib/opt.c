/* SPDX-License-Identifier: ISC */
/*
 * opt.c - what every tool's command line does the same way: the program's
 * name and the check of stdout at exit, --help and --version, the
 * files-or-standard-input loop, and the options ntpprobe and ntpreflect
 * share (--poll, --count).  The value parsers are in opt_units.c, the
 * error lines and exit codes in log.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loss.h"
#include "nts_ke.h"
#include "opt.h"
#include "out.h"
#include "transport.h"
#include "version.h"

void opt_init(char **argv)
{
	ntpx_prog_set(argv[0]);
	/* glibc's getopt names argv[0] in its lines. */
	argv[0] = (char *)ntpx_prog;
	out_check_at_exit();
}

void opt_version(void)
{
	printf("%s %s\n", ntpx_prog, NTPX_VERSION);
}

void opt_other(int c, void (*usage)(FILE *out))
{
	switch (c) {
	case 'h':
		usage(stdout);
		exit(NTPX_EXIT_OK);
	case 'V':
		opt_version();
		exit(NTPX_EXIT_OK);
	default:
		fprintf(stderr, "Try '%s --help'.\n", ntpx_prog);
		exit(NTPX_EXIT_USAGE);
	}
}

void opt_old(const char *old, const char *now)
{
	fprintf(stderr, "%s: %s is the old spelling of %s; it goes in the next release\n",
		ntpx_prog, old, now);
}

void opt_nts_port(const char *nts_arg, const char *port_arg, char port[8])
{
	if (!port_arg)
		return;
	switch (nts_ke_port_parse(nts_arg, port_arg, port)) {
	case -1:
		opt_usage_error("bad NTS-KE port '%s'", port_arg);
		break;
	case -2:
		opt_usage_error("--nts=%s names a port already: --nts-port or :PORT, not both",
				nts_arg);
		break;
	}
}

void opt_poll(const char *arg, enum transport_poll *mode)
{
	if (transport_poll_parse(arg, mode))
		opt_usage_error("bad poll mode '%s' (block or busy)", arg);
}

void opt_stop_count(const char *arg, uint64_t *n)
{
	if (opt_count(arg, UINT64_MAX, n) || *n == 0)
		opt_usage_error("bad count '%s'", arg);
}

int opt_loss_env(struct loss *l, char *err, size_t errlen)
{
	char e[256];

	if (loss_parse(getenv(LOSS_ENV), l, e, sizeof(e))) {
		snprintf(err, errlen, "%s: %s", LOSS_ENV, e);
		return -1;
	}
	return 0;
}

void opt_endpoint(int argc, char **argv, int first, struct endpoint *ep)
{
	char err[256];

	if (first != argc - 1)
		opt_usage_error("%s", first >= argc ? "missing ENDPOINT" : "more than one ENDPOINT");
	if (transport_parse_endpoint(argv[first], ep, err, sizeof(err)))
		ntpx_die(NTPX_EXIT_USAGE, "%s", err);
}

void opt_open_failed(const char *err)
{
	ntpx_die(errno == ENXIO ? NTPX_EXIT_USAGE : NTPX_EXIT_FAIL, "%s", err);
}

int opt_inputs(int argc, char **argv, int first,
	       int (*read)(int fd, const char *name, void *arg), void *arg)
{
	int i, fd, rc;

	if (first >= argc)
		return read(0, "stdin", arg);
	for (i = first; i < argc; i++) {
		fd = strcmp(argv[i], "-") == 0 ? 0 : open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			ntpx_die(NTPX_EXIT_FAIL, "%s: %s", argv[i], strerror(errno));
		rc = read(fd, fd ? argv[i] : "stdin", arg);
		if (fd)
			close(fd);
		if (rc)
			return rc;
	}
	return 0;
}
