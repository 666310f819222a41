/* SPDX-License-Identifier: ISC */
/*
 * ptyrun - test helper: runs a command on a pseudo-terminal, as a person
 * at a terminal would (its stdin, stdout and stderr the terminal), and
 * copies what it wrote to this program's stdout, the terminal's "\r\n"
 * back to "\n".  Exits with the command's status (128 + N for signal N).
 *
 *     ptyrun CMD [ARG...]
 *
 * What the command sees is a real terminal: isatty() holds, as in
 * tests/cli/adhoc.t's check that ntpprobe writes for a person there.
 */
#include <errno.h>
#include <pty.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	int fd, status, cr = 0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: ptyrun CMD [ARG...]\n");
		return 2;
	}
	pid = forkpty(&fd, NULL, NULL, NULL);
	if (pid < 0) {
		fprintf(stderr, "ptyrun: forkpty: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "ptyrun: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	for (;;) {
		ssize_t i, n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)	/* EIO: the command and its children closed it */
			break;
		for (i = 0; i < n; i++) {
			if (cr && buf[i] != '\n')
				putchar('\r');
			cr = buf[i] == '\r';
			if (!cr)
				putchar(buf[i]);
		}
	}
	if (fflush(stdout))
		return 2;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
