/* SPDX-License-Identifier: ISC */
/*
 * tether.h - what the parts of tether share (src/tether/): main.c reads
 * the options and starts one side; connect.c is the local side (-x
 * PREFIX: starts the remote tether and passes its frames on), serve.c the
 * remote side (--serve: runs the command and frames its output); frame.c
 * the encoding between them (arguments, output frames); notes.c the notes
 * behind -t, --list and --kill; common.c the signals and the waiting both
 * sides do.
 */
#ifndef NTPX_TETHER_H
#define NTPX_TETHER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Our own failures, told apart from the command's statuses (as env(1)). */
#define TETHER_EXIT_FAIL 125
/* From SIGTERM to SIGKILL for a command that does not end. */
#define TETHER_GRACE_MS 3000
#define TETHER_LINE_MAX 65536

/* common.c */
extern volatile sig_atomic_t sig_got;	/* SIGTERM, SIGINT or SIGHUP, once caught */
extern int sig_pipe[2];			/* readable after any signal, SIGCHLD too */
int sig_setup(void);			/* 0, or -1 with errno */
void sig_drain(void);			/* empties sig_pipe */
int64_t mono_ms(void);			/* CLOCK_MONOTONIC in ms */
int write_all(int fd, const char *p, size_t n);	/* 0, or -1 with errno */

/* frame.c: arguments through a remote shell, and the output's frames */
char *enc_arg(const char *s);		/* malloc'd; NULL: out of memory */
int dec_arg(char *s);			/* in place; -1 for what enc_arg cannot make */

struct stream {
	int fd;
	char kind;		/* 'o' or 'e' */
	char buf[TETHER_LINE_MAX];
	size_t len;
};

int stream_flush(struct stream *s, int all);	/* 0, or -1: stdout failed */

/* notes.c */
int tag_ok(const char *tag);
int note_write(const char *tag, pid_t pgid, char **argv, char *path, size_t n);
int notes_walk(const char *tag, int kill_them);

/* serve.c, connect.c: the two sides; each returns the exit status */
int serve_run(const char *tag, char **argv);
int connect_run(const char *side, const char *prefix, const char *bin,
		const char *tag, const char *ready, int argc, char **argv);

#endif
