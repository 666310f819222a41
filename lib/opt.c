/* SPDX-License-Identifier: ISC */
/*
 * opt.c - what every tool's command line does the same way: the program's
 * name and the check of stdout at exit, --help and --version, and the
 * files-or-standard-input loop.  The value parsers are in opt_units.c, the
 * error lines and exit codes in log.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opt.h"
#include "out.h"
#include "version.h"

void opt_init(const char *argv0)
{
	ntpx_prog_set(argv0);
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
