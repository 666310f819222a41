/* SPDX-License-Identifier: ISC */
/*
 * notes.c - with --tag TAG the remote side keeps a note per command in
 * $TMPDIR/tether-UID (its process group, network namespace, command), so
 * that --list TAG and --kill TAG find what is left of a runner's commands
 * on that host, even after a tether itself was killed.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util_private.h"
#include "tether.h"

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

int tag_ok(const char *t)
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
int note_write(const char *tag, pid_t pgid, char **argv, char *path, size_t n)
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
int notes_walk(const char *tag, int kill_them)
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

