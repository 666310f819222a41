/* SPDX-License-Identifier: ISC */
/*
 * common.c - what both sides of tether do: catch the signals that end a
 * run (and SIGCHLD) into a self-pipe that their poll loops watch, tell
 * time, and write whole buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opt_units.h"
#include "tether.h"

volatile sig_atomic_t sig_got;
int sig_pipe[2] = { -1, -1 };

static void sig_handler(int sig)
{
	int e = errno;

	/* SIGCHLD only wakes the loop: it must not hide a SIGTERM. */
	if (sig != SIGCHLD)
		sig_got = sig;
	if (write(sig_pipe[1], "s", 1) < 0) {
		/* full: a wake-up is already pending */
	}
	errno = e;
}

int sig_setup(void)
{
	struct sigaction sa;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void sig_drain(void)
{
	char b[64];

	while (read(sig_pipe[0], b, sizeof(b)) > 0) {
	}
}

int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * (NTPX_NS_PER_SEC / NTPX_NS_PER_MS) + ts.tv_nsec / NTPX_NS_PER_MS;
}

int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

