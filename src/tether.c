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
 * The remote command's lifetime hangs on the remote tether's stdin: the
 * line "term" there sends SIGTERM to the command's process group (that is
 * how the local side passes on SIGTERM, SIGINT and SIGHUP); end of file,
 * an error or a hangup there (the connection is gone) does the same, and
 * SIGKILL follows after TETHER_GRACE_MS.  The command ending ends the rest
 * of its group too.  Nothing outlives the connection.
 *
 * Arguments are encoded so that a remote shell (ssh joins its arguments
 * and hands them to one) leaves them alone, and a prefix that execs them
 * (ntpx-lab exec) passes them as they are: "=" then the bytes, each byte
 * outside [A-Za-z0-9_./:,+@-] as %XX.
 *
 * With -t TAG the remote side keeps a note per command in
 * $TMPDIR/tether-UID (its process group, network namespace, command), so
 * that --list TAG and --kill TAG find what is left of a runner's commands
 * on that host, even after a tether itself was killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "opt.h"
#include "util_private.h"

/* Our own failures, told apart from the command's statuses (as env(1)). */
#define TETHER_EXIT_FAIL 125
/* From SIGTERM to SIGKILL for a command that does not end. */
#define TETHER_GRACE_MS 3000
#define TETHER_LINE_MAX 65536

static volatile sig_atomic_t sig_got;
static int sig_pipe[2] = { -1, -1 };

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

static int sig_setup(void)
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

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const char *p, size_t n)
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

/* -------------------------------------------------------------- encoding */

static int enc_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || strchr("_./:,+@-", c) != NULL;
}

/* "=" then the argument, %XX for every byte a shell might act on. */
static char *enc_arg(const char *s)
{
	size_t n = strlen(s);
	char *e = malloc(3 * n + 2), *p = e;

	if (!e)
		return NULL;
	*p++ = '=';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c && enc_safe(c))
			*p++ = (char)c;
		else
			p += sprintf(p, "%%%02X", c);
	}
	*p = '\0';
	return e;
}

/* In place; -1 for what enc_arg could not have made. */
static int dec_arg(char *s)
{
	char *r = s, *w = s;

	if (*r++ != '=')
		return -1;
	while (*r) {
		if (*r == '%') {
			int h = hexval(r[1]), l = h < 0 ? -1 : hexval(r[2]);

			if (h < 0 || l < 0 || (h == 0 && l == 0))
				return -1;
			*w++ = (char)(h << 4 | l);
			r += 3;
		} else if (enc_safe((unsigned char)*r)) {
			*w++ = *r++;
		} else {
			return -1;
		}
	}
	*w = '\0';
	return 0;
}

/* ---------------------------------------------------------------- notes */

static void note_dir(char *buf, size_t n)
{
	const char *t = getenv("TMPDIR");

	snprintf(buf, n, "%s/tether-%u", t && *t ? t : "/tmp", (unsigned)getuid());
}

static void netns_id(char *buf, size_t n)
{
	ssize_t k = readlink("/proc/self/ns/net", buf, n - 1);

	if (k < 0)
		k = 0;
	buf[k] = '\0';
	if (!k)
		snprintf(buf, n, "-");
}

static int tag_ok(const char *t)
{
	if (!*t || strlen(t) > 64)
		return 0;
	for (; *t; t++)
		if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') ||
				(*t >= '0' && *t <= '9') || *t == '_' || *t == '-'))
			return 0;
	return 1;
}

/* The note of one command: "PGID NETNS ARGV..." in DIR/TAG.PGID. */
static int note_write(const char *tag, pid_t pgid, char **argv, char *path, size_t n)
{
	char dir[PATH_MAX], ns[64];
	FILE *f;
	int i;

	note_dir(dir, sizeof(dir));
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	netns_id(ns, sizeof(ns));
	snprintf(path, n, "%s/%s.%d", dir, tag, (int)pgid);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%d %s", (int)pgid, ns);
	for (i = 0; argv[i]; i++)
		fprintf(f, " %s", argv[i]);
	fputc('\n', f);
	if (fclose(f)) {
		unlink(path);
		return -1;
	}
	return 0;
}

/*
 * --list and --kill: the commands of TAG still alive in this network
 * namespace, one a line ("PGID ARGV..."); notes of ended ones go.  With
 * @kill their groups get SIGTERM, then SIGKILL after the grace.
 */
static int notes_walk(const char *tag, int kill_them)
{
	char dir[PATH_MAX], ns[64], path[PATH_MAX + 300], line[4096], pns[64];
	size_t tl = strlen(tag);
	pid_t groups[1024];
	int ng = 0, i;
	struct dirent *de;
	DIR *d;

	note_dir(dir, sizeof(dir));
	netns_id(ns, sizeof(ns));
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)) != NULL) {
		FILE *f;
		int pg;

		if (strncmp(de->d_name, tag, tl) || de->d_name[tl] != '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f) ||
				sscanf(line, "%d %63s", &pg, pns) != 2 || pg <= 1) {
			fclose(f);
			continue;
		}
		fclose(f);
		if (strcmp(pns, ns))
			continue;	/* another host's (a lab shares /tmp) */
		if (kill(-pg, 0) && errno == ESRCH) {
			unlink(path);
			continue;
		}
		fputs(line, stdout);
		if (kill_them && ng < (int)ARRAY_SIZE(groups)) {
			kill(-pg, SIGTERM);
			groups[ng++] = pg;
		}
		if (kill_them)
			unlink(path);
	}
	closedir(d);
	if (kill_them) {
		int64_t end = mono_ms() + TETHER_GRACE_MS;
		int alive = ng;

		while (alive && mono_ms() < end) {
			alive = 0;
			for (i = 0; i < ng; i++)
				if (!(kill(-groups[i], 0) && errno == ESRCH))
					alive++;
			if (alive)
				usleep(10000);
		}
		for (i = 0; i < ng; i++)
			kill(-groups[i], SIGKILL);
	}
	return fflush(stdout) ? -1 : 0;
}

/* ---------------------------------------------------------------- serve */

struct stream {
	int fd;
	char kind;		/* 'o' or 'e' */
	char buf[TETHER_LINE_MAX];
	size_t len;
};

/* Frames every whole line in s->buf (and, when @all, the rest as a piece). */
static int stream_flush(struct stream *s, int all)
{
	char hdr[2] = { s->kind, '\t' };
	size_t start = 0, i;

	for (i = 0; i < s->len; i++) {
		if (s->buf[i] != '\n')
			continue;
		if (write_all(1, hdr, 2) || write_all(1, s->buf + start, i + 1 - start))
			return -1;
		start = i + 1;
	}
	if (start < s->len && (all || s->len == sizeof(s->buf))) {
		hdr[0] = (char)(s->kind - 'a' + 'A');
		if (write_all(1, hdr, 2) || write_all(1, s->buf + start, s->len - start) ||
				write_all(1, "\n", 1))
			return -1;
		start = s->len;
	}
	memmove(s->buf, s->buf + start, s->len - start);
	s->len -= start;
	return 0;
}

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

static int serve(const char *tag, char **argv)
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
		dprintf(2, "%s: %s: %s (PATH=%s)\n", opt_prog, argv[0], strerror(errno),
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

/* -------------------------------------------------------------- connect */

struct conn {
	const char *side, *prefix, *ready_file;
	char host[256];
	char last_err[512];
	int ready, status, have_status;
};

static noreturn void conn_die(struct conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void conn_where(struct conn *c, char *buf, size_t n)
{
	if (c->host[0])
		snprintf(buf, n, "%s host %s (prefix '%s')", c->side, c->host, c->prefix);
	else
		snprintf(buf, n, "%s host (prefix '%s')", c->side, c->prefix);
}

static pid_t conn_child = -1;

static void conn_die(struct conn *c, const char *fmt, ...)
{
	char where[600], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	conn_where(c, where, sizeof(where));
	if (conn_child > 0)
		kill(-conn_child, SIGTERM);
	ntpx_die(TETHER_EXIT_FAIL, "%s: %s", where, msg);
}

/* One line from the remote tether (without its newline). */
static void conn_line(struct conn *c, char *l, size_t n)
{
	if (!c->ready && n && l[n - 1] == '\r')
		n--;	/* a terminal's, but what the line says matters more */
	else if (n && l[n - 1] == '\r')
		conn_die(c, "CR LF line ends (a terminal that translates them): '%.*s'",
				(int)(n - 1 > 120 ? 120 : n - 1), l);
	if (n < 2 || l[1] != '\t' || c->have_status)
		goto bad;
	if (!c->ready) {
		if (l[0] != 'r')
			goto bad;
		snprintf(c->host, sizeof(c->host), "%.*s", (int)(n - 2), l + 2);
		c->ready = 1;
		if (c->ready_file) {
			int fd = open(c->ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

			if (fd < 0 || close(fd))
				conn_die(c, "%s: %m", c->ready_file);
		}
		return;
	}
	switch (l[0]) {
	case 'o': case 'O': case 'e': case 'E': {
		int fd = (l[0] == 'o' || l[0] == 'O') ? 1 : 2;

		l[n] = '\n';
		if (write_all(fd, l + 2, n - 2 + (l[0] == 'o' || l[0] == 'e')) && fd == 1) {
			/* A reader that has had enough (| awk ... exit): end as
			 * a writer killed by SIGPIPE would, the remote side with
			 * the connection. */
			if (errno == EPIPE) {
				kill(-conn_child, SIGTERM);
				exit(128 + SIGPIPE);
			}
			conn_die(c, "stdout: %m");
		}
		return;
	}
	case 'x': {
		uint64_t v;

		l[n] = '\0';
		if (opt_count(l + 2, 255, &v))
			goto bad;
		c->status = (int)v;
		c->have_status = 1;
		return;
	}
	}
bad:
	conn_die(c, "not a line of tether's: '%.*s'%s", (int)(n > 120 ? 120 : n), l,
			c->ready ? "" : " (is BIN/tether there? NTPX_REMOTE_BIN)");
}

static int connect_run(const char *side, const char *prefix, const char *bin,
		const char *tag, const char *ready, int argc, char **argv)
{
	static char obuf[TETHER_LINE_MAX + 16];
	struct conn c = { .side = side, .prefix = prefix, .ready_file = ready };
	int pc[2], po[2], pe[2], i, n, term_pending = 0, term_sent = 0, st;
	size_t olen = 0, elen = 0;
	char ebuf[4096], script[4096], self[PATH_MAX];
	char **av;
	int64_t cut_at = -1, kill_at = -1;

	if (!bin) {
		ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *slash;

		if (k <= 0)
			ntpx_die(TETHER_EXIT_FAIL, "/proc/self/exe: %m");
		self[k] = '\0';
		slash = strrchr(self, '/');
		*slash = '\0';
		bin = self;
	}
	/* sh -c 'exec PREFIX "$@"' tether BIN/tether --serve [-t TAG] ENC... */
	snprintf(script, sizeof(script), "exec %s \"$@\"", prefix);
	av = calloc((size_t)argc + 10, sizeof(*av));
	if (!av)
		ntpx_die(TETHER_EXIT_FAIL, "out of memory");
	n = 0;
	av[n++] = "/bin/sh";
	av[n++] = "-c";
	av[n++] = script;
	av[n++] = "tether";
	if (asprintf(&av[n++], "%s/tether", bin) < 0)
		ntpx_die(TETHER_EXIT_FAIL, "out of memory");
	av[n++] = "--serve";
	if (tag) {
		av[n++] = "-t";
		av[n++] = (char *)tag;
	}
	for (i = 0; i < argc; i++)
		if (!(av[n++] = enc_arg(argv[i])))
			ntpx_die(TETHER_EXIT_FAIL, "out of memory");
	av[n] = NULL;

	if (sig_setup() || pipe2(pc, O_CLOEXEC) || pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		ntpx_die(TETHER_EXIT_FAIL, "pipe: %m");
	conn_child = fork();
	if (conn_child < 0)
		ntpx_die(TETHER_EXIT_FAIL, "fork: %m");
	if (conn_child == 0) {
		/* Its own group: a terminal's ^C reaches us, and we pass it on. */
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		if (dup2(pc[0], 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(TETHER_EXIT_FAIL);
		execv(av[0], av);
		_exit(127);
	}
	setpgid(conn_child, conn_child);
	close(pc[0]);
	close(po[1]);
	close(pe[1]);

	while (po[0] >= 0 || pe[0] >= 0) {
		struct pollfd p[3];
		int timeout = -1, k;
		int64_t now, next = -1;

		p[0].fd = sig_pipe[0], p[0].events = POLLIN;
		p[1].fd = po[0], p[1].events = POLLIN;
		p[2].fd = pe[0], p[2].events = POLLIN;
		if (cut_at >= 0)
			next = cut_at;
		if (kill_at >= 0 && (next < 0 || kill_at < next))
			next = kill_at;
		if (next >= 0) {
			int64_t left = next - mono_ms();

			timeout = left < 0 ? 0 : (int)left;
		}
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			ntpx_die(TETHER_EXIT_FAIL, "poll: %m");
		if (p[0].revents) {
			char b[64];

			while (read(sig_pipe[0], b, sizeof(b)) > 0) {
			}
		}
		if (sig_got == SIGTERM || sig_got == SIGINT || sig_got == SIGHUP) {
			sig_got = 0;
			if (term_sent || term_pending) {
				/* Asked twice: cut the connection now. */
				cut_at = mono_ms();
			} else {
				term_pending = 1;
				/* No answer to it: the connection goes. */
				cut_at = mono_ms() + 2 * TETHER_GRACE_MS;
			}
		}
		for (i = 1; i <= 2; i++) {
			int *fd = i == 1 ? &po[0] : &pe[0];
			char *buf = i == 1 ? obuf : ebuf;
			size_t *len = i == 1 ? &olen : &elen;
			size_t cap = (i == 1 ? sizeof(obuf) : sizeof(ebuf)) - 1, s = 0, j;

			if (*fd < 0 || !p[i].revents)
				continue;
			k = (int)read(*fd, buf + *len, cap - *len);
			if (k < 0 && errno == EINTR)
				continue;
			if (k > 0)
				*len += (size_t)k;
			for (j = 0; j < *len; j++) {
				if (buf[j] != '\n')
					continue;
				if (i == 1) {
					conn_line(&c, buf + s, j - s);
				} else {
					/* The prefix's own (ssh's, a shell's): passed on,
					 * the last kept for our error lines. */
					write_all(2, buf + s, j + 1 - s);
					snprintf(c.last_err, sizeof(c.last_err), "%.*s",
						(int)(j - s), buf + s);
				}
				s = j + 1;
			}
			memmove(buf, buf + s, *len - s);
			*len -= s;
			if (k <= 0 || *len == cap) {
				if (*len && i == 1)
					conn_die(&c, "a line of tether's without its end: '%.*s'",
						(int)(*len > 120 ? 120 : *len), buf);
				if (*len) {
					write_all(2, buf, *len);
					write_all(2, "\n", 1);
					snprintf(c.last_err, sizeof(c.last_err), "%.*s", (int)*len, buf);
					*len = 0;
				}
				if (k <= 0) {
					close(*fd);
					*fd = -1;
				}
			}
		}
		if (term_pending && c.ready && pc[1] >= 0) {
			if (write_all(pc[1], "term\n", 5))
				cut_at = mono_ms();
			term_pending = 0;
			term_sent = 1;
		}
		now = mono_ms();
		if (cut_at >= 0 && now >= cut_at && pc[1] >= 0) {
			close(pc[1]);
			pc[1] = -1;
			kill_at = now + 2 * TETHER_GRACE_MS;
			cut_at = -1;
		}
		if (kill_at >= 0 && now >= kill_at) {
			kill(-conn_child, SIGKILL);
			kill_at = -1;
		}
	}
	while (waitpid(conn_child, &st, 0) < 0 && errno == EINTR) {
	}
	if (pc[1] >= 0)
		close(pc[1]);
	/* av[4] on are ours (the path, the options, the encoded words). */
	for (i = 4; i < n; i++)
		if (i != 5 && !(tag && (i == 6 || i == 7)))
			free(av[i]);
	free(av);
	if (c.have_status)
		return c.status;
	conn_child = -1;
	if (!c.ready)
		conn_die(&c, "no tether started in %s (exit %d)%s%s", bin,
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			c.last_err[0] ? ": " : "", c.last_err);
	if (term_sent || cut_at >= 0 || kill_at >= 0)
		return 128 + SIGTERM;
	conn_die(&c, "the connection ended before the command's status%s%s",
		c.last_err[0] ? ": " : "", c.last_err);
}

/* ----------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s -x PREFIX [-s SIDE] [-b BIN] [-t TAG] [-r FILE] -- COMMAND [ARG...]\n"
		"       %s --list TAG | --kill TAG\n"
		"       %s --serve [-t TAG] ENCODED...   (what -x starts on the other side)\n"
		"Runs COMMAND through PREFIX (ssh HOST, ntpx-lab exec ref) under a remote\n"
		"tether: its stdout and stderr come back apart, and it ends when asked or\n"
		"when the connection goes.\n"
		"  -x, --prefix PREFIX  the command prefix that reaches the other host\n"
		"  -s, --side NAME      what to call that host in error lines (default remote)\n"
		"  -b, --bin DIR        tether's directory there (default: this one's)\n"
		"  -t, --tag TAG        note the command under TAG there, for --list/--kill\n"
		"  -r, --ready FILE     make FILE once the command has started there\n"
		"      --list TAG       the commands of TAG alive on this host\n"
		"      --kill TAG       end them (SIGTERM, then SIGKILL)\n"
		"  -h, --help           this text\n"
		"      --version        the version\n"
		"Exit: the command's status; %d for tether's own failures.\n",
		opt_prog, opt_prog, opt_prog, TETHER_EXIT_FAIL);
}

int main(int argc, char **argv)
{
	enum { OPT_LIST = 256, OPT_KILL, OPT_SERVE };
	static const struct option longopts[] = {
		{ "prefix", required_argument, NULL, 'x' },
		{ "side", required_argument, NULL, 's' },
		{ "bin", required_argument, NULL, 'b' },
		{ "tag", required_argument, NULL, 't' },
		{ "ready", required_argument, NULL, 'r' },
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

	opt_init(argv[0]);
	while ((c = getopt_long(argc, argv, "+x:s:b:t:r:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'x': prefix = optarg; break;
		case 's': side = optarg; break;
		case 'b': bin = optarg; break;
		case 't': tag = optarg; break;
		case 'r': ready = optarg; break;
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
		return serve(tag, argv + optind);
	}
	if (!prefix || !*prefix)
		opt_usage_error("missing --prefix");
	return connect_run(side, prefix, bin, tag, ready, argc - optind, argv + optind);
}
