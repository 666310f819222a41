/* SPDX-License-Identifier: ISC */
/*
 * serve.c - the remote side (tether --serve ENCODED...): decodes the
 * arguments, runs the command in a process group of its own with stdin
 * from /dev/null, and sends its stdout and stderr back as framed lines on
 * its own stdout (frame.c), the exit status last.
 *
 * The command's lifetime hangs on our stdin: the line "term" there sends
 * SIGTERM to the command's process group (that is how the local side
 * passes on SIGTERM, SIGINT and SIGHUP); end of file, an error or a hangup
 * there (the connection is gone) does the same, and SIGKILL follows after
 * TETHER_GRACE_MS.  The command ending ends the rest of its group too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/wait.h>

#include "opt.h"
#include "tether.h"

/* A terminal in between (ssh -tt) passes our bytes as they are. */
static void tty_raw(int fd)
{
	struct termios t;

	if (!isatty(fd) || tcgetattr(fd, &t))
		return;
	cfmakeraw(&t);
	tcsetattr(fd, TCSANOW, &t);
}

/* PATH with this program's own directory first: the tools beside it. */
static void path_prepend_self(void)
{
	char self[PATH_MAX], *slash, *np;
	const char *path = getenv("PATH");
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (k <= 0)
		return;
	self[k] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (asprintf(&np, "%s:%s", self, path ? path : "/usr/bin:/bin") < 0)
		return;
	setenv("PATH", np, 1);
	free(np);
}

int serve_run(const char *tag, char **argv)
{
	struct stream out = { .kind = 'o' }, err = { .kind = 'e' };
	int po[2], pe[2], ctl_open = 1, status = 0, exited = 0, i, lost = 0;
	char host[256] = "-", note[PATH_MAX + 100] = "", ctl[64];
	size_t ctl_len = 0;
	int64_t kill_at = -1;
	pid_t pid;

	for (i = 0; argv[i]; i++)
		if (dec_arg(argv[i]))
			ntpx_die(NTPX_EXIT_USAGE, "argument %d: not an encoded argument", i + 1);
	tty_raw(0);
	tty_raw(1);
	path_prepend_self();
	if (sig_setup() || pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		ntpx_die(TETHER_EXIT_FAIL, "pipe: %m");
	pid = fork();
	if (pid < 0)
		ntpx_die(TETHER_EXIT_FAIL, "fork: %m");
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(TETHER_EXIT_FAIL);
		execvp(argv[0], argv);
		dprintf(2, "%s: %s: %s (PATH=%s)\n", ntpx_prog, argv[0], strerror(errno),
				getenv("PATH"));
		_exit(errno == ENOENT ? 127 : 126);
	}
	setpgid(pid, pid);
	close(po[1]);
	close(pe[1]);
	out.fd = po[0];
	err.fd = pe[0];
	if (tag && note_write(tag, pid, argv, note, sizeof(note)))
		note[0] = '\0';
	gethostname(host, sizeof(host) - 1);
	if (dprintf(1, "r\t%s\n", host) < 0)
		lost = 1;

	while (out.fd >= 0 || err.fd >= 0 || !exited) {
		struct pollfd p[4];
		int np = 0, io = -1, ie = -1, ic = -1, timeout = -1;

		p[np].fd = sig_pipe[0], p[np++].events = POLLIN;
		if (out.fd >= 0)
			io = np, p[np].fd = out.fd, p[np++].events = POLLIN;
		if (err.fd >= 0)
			ie = np, p[np].fd = err.fd, p[np++].events = POLLIN;
		if (ctl_open)
			ic = np, p[np].fd = 0, p[np++].events = POLLIN;
		if (kill_at >= 0) {
			int64_t left = kill_at - mono_ms();

			timeout = left < 0 ? 0 : (int)left;
		}
		if (poll(p, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		if (kill_at >= 0 && mono_ms() >= kill_at) {
			kill(-pid, SIGKILL);
			/* What still holds our pipes cannot be waited for. */
			if (exited)
				break;
			kill_at = mono_ms() + TETHER_GRACE_MS;
		}
		if (p[0].revents) {
			char b[64];

			while (read(sig_pipe[0], b, sizeof(b)) > 0) {
			}
		}
		if (sig_got == SIGTERM || sig_got == SIGINT || sig_got == SIGHUP) {
			sig_got = 0;
			ctl_open = 0;
			lost = 1;
		}
		if (!exited) {
			int st;
			pid_t w = waitpid(pid, &st, WNOHANG);

			if (w == pid) {
				exited = 1;
				status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				/* The rest of its group (a child it left) goes too. */
				kill(-pid, SIGTERM);
				if (kill_at < 0)
					kill_at = mono_ms() + TETHER_GRACE_MS;
			}
		}
		if (ic >= 0 && p[ic].revents) {
			ssize_t k = read(0, ctl + ctl_len, sizeof(ctl) - 1 - ctl_len);

			if (k <= 0) {
				ctl_open = 0;
				lost = 1;
			} else {
				char *nl;

				ctl_len += (size_t)k;
				ctl[ctl_len] = '\0';
				while ((nl = strchr(ctl, '\n')) != NULL) {
					*nl = '\0';
					if (!strcmp(ctl, "term") || !strcmp(ctl, "term\r"))
						kill(-pid, SIGTERM);
					memmove(ctl, nl + 1, ctl_len - (size_t)(nl + 1 - ctl) + 1);
					ctl_len -= (size_t)(nl + 1 - ctl);
				}
				if (ctl_len == sizeof(ctl) - 1)
					ctl_len = 0;	/* not ours: nothing to act on */
			}
		}
		if (lost && kill_at < 0) {
			kill(-pid, SIGTERM);
			kill_at = mono_ms() + TETHER_GRACE_MS;
		}
		for (i = 0; i < 2; i++) {
			struct stream *s = i ? &err : &out;
			int ix = i ? ie : io;
			ssize_t k;

			if (ix < 0 || !p[ix].revents)
				continue;
			k = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);
			if (k > 0)
				s->len += (size_t)k;
			if (!lost && stream_flush(s, k <= 0))
				lost = 1;
			if (lost)
				s->len = 0;	/* nobody to send it to */
			if (k <= 0 && !(k < 0 && errno == EINTR)) {
				close(s->fd);
				s->fd = -1;
			}
		}
	}
	if (!exited) {
		int st;

		kill(-pid, SIGKILL);
		if (waitpid(pid, &st, 0) == pid)
			status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	/* Nothing of the group outlives our last word. */
	if (!(kill(-pid, 0) && errno == ESRCH)) {
		int64_t end = mono_ms() + TETHER_GRACE_MS;

		kill(-pid, SIGTERM);
		while (!(kill(-pid, 0) && errno == ESRCH) && mono_ms() < end)
			usleep(10000);
		kill(-pid, SIGKILL);
	}
	if (note[0])
		unlink(note);
	if (!lost) {
		stream_flush(&out, 1);
		stream_flush(&err, 1);
		dprintf(1, "x\t%d\n", status);
	}
	return status;
}

