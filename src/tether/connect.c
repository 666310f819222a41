/* SPDX-License-Identifier: ISC */
/*
 * connect.c - the local side (tether -x PREFIX -- CMD ARG...): starts
 * "PREFIX BIN/tether --serve ENCODED..." with three pipes, passes the
 * command's framed lines on to our stdout and stderr and its status as
 * ours, and SIGTERM, SIGINT and SIGHUP to the remote side as "term".  A
 * line that is not a frame, or that ends in CR (a terminal in between),
 * is refused with the host and the prefix named.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "opt.h"
#include "tether.h"

/* What arrives from the remote side: [0] its tether's stdout (frames),
   [1] the prefix's stderr (ssh's, a remote shell's). */
struct conn_in {
	int fd;			/* -1 once it ended */
	char *buf;
	size_t cap;		/* bytes of buf a read may fill */
	size_t len;
};

struct conn {
	const char *side, *prefix, *ready_file;
	char host[256];
	char last_err[512];
	int ready, status, have_status;
	/* The loop's state. */
	int ctl;		/* the remote side's stdin ("term"); -1 once cut */
	struct conn_in in[2];
	int term_pending, term_sent;
	int64_t cut_at, kill_at;	/* mono_ms() deadlines, -1 when none */
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

/* The directory of this tether, when --bin did not name one. */
static const char *conn_bin(const char *bin, char *self, size_t n)
{
	ssize_t k;
	char *slash;

	if (bin)
		return bin;
	k = readlink("/proc/self/exe", self, n - 1);
	if (k <= 0)
		ntpx_die(TETHER_EXIT_FAIL, "/proc/self/exe: %m");
	self[k] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	return self;
}

/*
 * sh -c 'exec PREFIX "$@"' tether BIN/tether --serve [--tag TAG] ENC...,
 * into a calloc'd argv of *@n words (the script in @script).
 */
static char **conn_argv(const char *prefix, const char *bin, const char *tag,
			int argc, char **argv, char *script, size_t slen, int *n)
{
	char **av;
	int i;

	snprintf(script, slen, "exec %s \"$@\"", prefix);
	av = calloc((size_t)argc + 10, sizeof(*av));
	if (!av)
		ntpx_die(TETHER_EXIT_FAIL, "out of memory");
	*n = 0;
	av[(*n)++] = "/bin/sh";
	av[(*n)++] = "-c";
	av[(*n)++] = script;
	av[(*n)++] = "tether";
	if (asprintf(&av[(*n)++], "%s/tether", bin) < 0)
		ntpx_die(TETHER_EXIT_FAIL, "out of memory");
	av[(*n)++] = "--serve";
	if (tag) {
		av[(*n)++] = "--tag";
		av[(*n)++] = (char *)tag;
	}
	for (i = 0; i < argc; i++)
		if (!(av[(*n)++] = enc_arg(argv[i])))
			ntpx_die(TETHER_EXIT_FAIL, "out of memory");
	av[*n] = NULL;
	return av;
}

static void conn_argv_free(char **av, int n, const char *tag)
{
	/* av[4] on are ours (the path, the options, the encoded words). */
	for (int i = 4; i < n; i++)
		if (i != 5 && !(tag && (i == 6 || i == 7)))
			free(av[i]);
	free(av);
}

/* Starts @av in a process group of its own, with three pipes. */
static void conn_spawn(struct conn *c, char **av)
{
	int pc[2], po[2], pe[2];

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
	c->ctl = pc[1];
	c->in[0].fd = po[0];
	c->in[1].fd = pe[0];
}

/* The poll's timeout: until the nearer deadline, or none. */
static int conn_timeout(const struct conn *c)
{
	int64_t next = -1, left;

	if (c->cut_at >= 0)
		next = c->cut_at;
	if (c->kill_at >= 0 && (next < 0 || c->kill_at < next))
		next = c->kill_at;
	if (next < 0)
		return -1;
	left = next - mono_ms();
	return left < 0 ? 0 : (int)left;
}

/* A signal to end: "term" to the remote side, or, the second time, the
   connection cut at once. */
static void conn_signal(struct conn *c)
{
	if (!(sig_got == SIGTERM || sig_got == SIGINT || sig_got == SIGHUP))
		return;
	sig_got = 0;
	if (c->term_sent || c->term_pending) {
		/* Asked twice: cut the connection now. */
		c->cut_at = mono_ms();
	} else {
		c->term_pending = 1;
		/* No answer to it: the connection goes. */
		c->cut_at = mono_ms() + 2 * TETHER_GRACE_MS;
	}
}

/* What waits on in[@i]: its whole lines handled, a stream that ended
   closed. */
static void conn_read(struct conn *c, int i)
{
	struct conn_in *in = &c->in[i];
	size_t s = 0, j;
	int k;

	k = (int)read(in->fd, in->buf + in->len, in->cap - in->len);
	if (k < 0 && errno == EINTR)
		return;
	if (k > 0)
		in->len += (size_t)k;
	for (j = 0; j < in->len; j++) {
		if (in->buf[j] != '\n')
			continue;
		if (i == 0) {
			conn_line(c, in->buf + s, j - s);
		} else {
			/* The prefix's own (ssh's, a shell's): passed on,
			 * the last kept for our error lines. */
			write_all(2, in->buf + s, j + 1 - s);
			snprintf(c->last_err, sizeof(c->last_err), "%.*s",
				(int)(j - s), in->buf + s);
		}
		s = j + 1;
	}
	memmove(in->buf, in->buf + s, in->len - s);
	in->len -= s;
	if (k > 0 && in->len < in->cap)
		return;
	if (in->len && i == 0)
		conn_die(c, "a line of tether's without its end: '%.*s'",
			(int)(in->len > 120 ? 120 : in->len), in->buf);
	if (in->len) {
		write_all(2, in->buf, in->len);
		write_all(2, "\n", 1);
		snprintf(c->last_err, sizeof(c->last_err), "%.*s", (int)in->len, in->buf);
		in->len = 0;
	}
	if (k <= 0) {
		close(in->fd);
		in->fd = -1;
	}
}

/* A "term" asked for goes once the remote side is there to take it. */
static void conn_term(struct conn *c)
{
	if (!c->term_pending || !c->ready || c->ctl < 0)
		return;
	if (write_all(c->ctl, "term\n", 5))
		c->cut_at = mono_ms();
	c->term_pending = 0;
	c->term_sent = 1;
}

/* The deadlines: the connection cut (its stdin closed), then SIGKILL. */
static void conn_deadlines(struct conn *c)
{
	int64_t now = mono_ms();

	if (c->cut_at >= 0 && now >= c->cut_at && c->ctl >= 0) {
		close(c->ctl);
		c->ctl = -1;
		c->kill_at = now + 2 * TETHER_GRACE_MS;
		c->cut_at = -1;
	}
	if (c->kill_at >= 0 && now >= c->kill_at) {
		kill(-conn_child, SIGKILL);
		c->kill_at = -1;
	}
}

/* Passes the remote side's lines on until both its streams end. */
static void conn_loop(struct conn *c)
{
	while (c->in[0].fd >= 0 || c->in[1].fd >= 0) {
		struct pollfd p[3];

		p[0].fd = sig_pipe[0], p[0].events = POLLIN;
		p[1].fd = c->in[0].fd, p[1].events = POLLIN;
		p[2].fd = c->in[1].fd, p[2].events = POLLIN;
		if (poll(p, 3, conn_timeout(c)) < 0 && errno != EINTR)
			ntpx_die(TETHER_EXIT_FAIL, "poll: %m");
		if (p[0].revents)
			sig_drain();
		conn_signal(c);
		for (int i = 0; i < 2; i++)
			if (c->in[i].fd >= 0 && p[i + 1].revents)
				conn_read(c, i);
		conn_term(c);
		conn_deadlines(c);
	}
}

/* The exit status, once the remote side is gone (its wait status @st). */
static int conn_status(struct conn *c, const char *bin, int st)
{
	if (c->have_status)
		return c->status;
	conn_child = -1;
	if (!c->ready)
		conn_die(c, "no tether started in %s (exit %d)%s%s", bin,
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			c->last_err[0] ? ": " : "", c->last_err);
	if (c->term_sent || c->cut_at >= 0 || c->kill_at >= 0)
		return 128 + SIGTERM;
	conn_die(c, "the connection ended before the command's status%s%s",
		c->last_err[0] ? ": " : "", c->last_err);
}

int connect_run(const char *side, const char *prefix, const char *bin,
		const char *tag, const char *ready, int argc, char **argv)
{
	static char obuf[TETHER_LINE_MAX + 16];
	char ebuf[4096], script[4096], self[PATH_MAX];
	struct conn c = {
		.side = side, .prefix = prefix, .ready_file = ready,
		.in = { { .buf = obuf, .cap = sizeof(obuf) - 1 },
			{ .buf = ebuf, .cap = sizeof(ebuf) - 1 } },
		.cut_at = -1, .kill_at = -1,
	};
	char **av;
	int n, st;

	bin = conn_bin(bin, self, sizeof(self));
	av = conn_argv(prefix, bin, tag, argc, argv, script, sizeof(script), &n);
	conn_spawn(&c, av);
	conn_loop(&c);
	while (waitpid(conn_child, &st, 0) < 0 && errno == EINTR) {
	}
	if (c.ctl >= 0)
		close(c.ctl);
	conn_argv_free(av, n, tag);
	return conn_status(&c, bin, st);
}
