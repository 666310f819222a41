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

/* The command's side, as the loop sees it. */
struct serve {
	pid_t pid;			/* the command, its group's leader */
	struct stream out, err;
	int ctl_open;			/* our stdin, where "term" comes */
	char ctl[64];
	size_t ctl_len;
	int exited, status;
	int lost;			/* nobody to send to: the connection went */
	int64_t kill_at;		/* mono_ms() of the SIGKILL, -1 when none */
};

/* Runs the command in a process group of its own, stdin /dev/null, its
   stdout and stderr into s's streams. */
static void serve_spawn(struct serve *s, char **argv)
{
	int po[2], pe[2];

	if (sig_setup() || pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		ntpx_die(TETHER_EXIT_FAIL, "pipe: %m");
	s->pid = fork();
	if (s->pid < 0)
		ntpx_die(TETHER_EXIT_FAIL, "fork: %m");
	if (s->pid == 0) {
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
	setpgid(s->pid, s->pid);
	close(po[1]);
	close(pe[1]);
	s->out.fd = po[0];
	s->err.fd = pe[0];
}

/* The SIGKILL deadline: 1 when the loop must end (the command is gone,
   and what still holds our pipes cannot be waited for). */
static int serve_deadline(struct serve *s)
{
	if (s->kill_at < 0 || mono_ms() < s->kill_at)
		return 0;
	kill(-s->pid, SIGKILL);
	if (s->exited)
		return 1;
	s->kill_at = mono_ms() + TETHER_GRACE_MS;
	return 0;
}

/* The command ended: its status kept, the rest of its group told to go. */
static void serve_reap(struct serve *s)
{
	int st;

	if (s->exited || waitpid(s->pid, &st, WNOHANG) != s->pid)
		return;
	s->exited = 1;
	s->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	/* The rest of its group (a child it left) goes too. */
	kill(-s->pid, SIGTERM);
	if (s->kill_at < 0)
		s->kill_at = mono_ms() + TETHER_GRACE_MS;
}

/* What came on our stdin: "term" lines, or its end (the connection). */
static void serve_ctl(struct serve *s)
{
	ssize_t k = read(0, s->ctl + s->ctl_len, sizeof(s->ctl) - 1 - s->ctl_len);
	char *nl;

	if (k <= 0) {
		s->ctl_open = 0;
		s->lost = 1;
		return;
	}
	s->ctl_len += (size_t)k;
	s->ctl[s->ctl_len] = '\0';
	while ((nl = strchr(s->ctl, '\n')) != NULL) {
		*nl = '\0';
		if (!strcmp(s->ctl, "term") || !strcmp(s->ctl, "term\r"))
			kill(-s->pid, SIGTERM);
		memmove(s->ctl, nl + 1, s->ctl_len - (size_t)(nl + 1 - s->ctl) + 1);
		s->ctl_len -= (size_t)(nl + 1 - s->ctl);
	}
	if (s->ctl_len == sizeof(s->ctl) - 1)
		s->ctl_len = 0;	/* not ours: nothing to act on */
}

/* What the command wrote on @st, framed to our stdout. */
static void serve_stream(struct serve *s, struct stream *st)
{
	ssize_t k = read(st->fd, st->buf + st->len, sizeof(st->buf) - st->len);

	if (k > 0)
		st->len += (size_t)k;
	if (!s->lost && stream_flush(st, k <= 0))
		s->lost = 1;
	if (s->lost)
		st->len = 0;	/* nobody to send it to */
	if (k <= 0 && !(k < 0 && errno == EINTR)) {
		close(st->fd);
		st->fd = -1;
	}
}

/* Until the command has ended and its output is all sent (or lost). */
static void serve_loop(struct serve *s)
{
	while (s->out.fd >= 0 || s->err.fd >= 0 || !s->exited) {
		struct pollfd p[4];
		int np = 0, io = -1, ie = -1, ic = -1, timeout = -1;

		p[np].fd = sig_pipe[0], p[np++].events = POLLIN;
		if (s->out.fd >= 0)
			io = np, p[np].fd = s->out.fd, p[np++].events = POLLIN;
		if (s->err.fd >= 0)
			ie = np, p[np].fd = s->err.fd, p[np++].events = POLLIN;
		if (s->ctl_open)
			ic = np, p[np].fd = 0, p[np++].events = POLLIN;
		if (s->kill_at >= 0) {
			int64_t left = s->kill_at - mono_ms();

			timeout = left < 0 ? 0 : (int)left;
		}
		if (poll(p, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		if (serve_deadline(s))
			break;
		if (p[0].revents)
			sig_drain();
		if (sig_got == SIGTERM || sig_got == SIGINT || sig_got == SIGHUP) {
			sig_got = 0;
			s->ctl_open = 0;
			s->lost = 1;
		}
		serve_reap(s);
		if (ic >= 0 && p[ic].revents)
			serve_ctl(s);
		if (s->lost && s->kill_at < 0) {
			kill(-s->pid, SIGTERM);
			s->kill_at = mono_ms() + TETHER_GRACE_MS;
		}
		if (io >= 0 && p[io].revents)
			serve_stream(s, &s->out);
		if (ie >= 0 && p[ie].revents)
			serve_stream(s, &s->err);
	}
}

/* Nothing of the command's group outlives our last word. */
static void serve_end_group(struct serve *s)
{
	int64_t end;

	if (!s->exited) {
		int st;

		kill(-s->pid, SIGKILL);
		if (waitpid(s->pid, &st, 0) == s->pid)
			s->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	if (kill(-s->pid, 0) && errno == ESRCH)
		return;
	end = mono_ms() + TETHER_GRACE_MS;
	kill(-s->pid, SIGTERM);
	while (!(kill(-s->pid, 0) && errno == ESRCH) && mono_ms() < end)
		usleep(10000);
	kill(-s->pid, SIGKILL);
}

int serve_run(const char *tag, char **argv)
{
	static struct serve s = { .out = { .kind = 'o' }, .err = { .kind = 'e' },
				  .ctl_open = 1, .kill_at = -1 };
	char host[256] = "-", note[PATH_MAX + 100] = "";

	for (int i = 0; argv[i]; i++)
		if (dec_arg(argv[i]))
			ntpx_die(NTPX_EXIT_USAGE, "argument %d: not an encoded argument", i + 1);
	tty_raw(0);
	tty_raw(1);
	path_prepend_self();
	serve_spawn(&s, argv);
	if (tag && note_write(tag, s.pid, argv, note, sizeof(note)))
		note[0] = '\0';
	gethostname(host, sizeof(host) - 1);
	if (dprintf(1, "r\t%s\n", host) < 0)
		s.lost = 1;
	serve_loop(&s);
	serve_end_group(&s);
	if (note[0])
		unlink(note);
	if (!s.lost) {
		stream_flush(&s.out, 1);
		stream_flush(&s.err, 1);
		dprintf(1, "x\t%d\n", s.status);
	}
	return s.status;
}
