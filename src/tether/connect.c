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

int connect_run(const char *side, const char *prefix, const char *bin,
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
	/* sh -c 'exec PREFIX "$@"' tether BIN/tether --serve [--tag TAG] ENC... */
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
		av[n++] = "--tag";
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

