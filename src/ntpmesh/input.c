/* SPDX-License-Identifier: ISC */
/*
 * input.c - ntpmesh's records: the files named, or every record file
 * under a directory named, each the exchanges of one directed pair as
 * its "#pair CLIENT SERVER" header says; then each file's ok exchanges
 * fitted in each window (lib/pairfit.h).
 *
 * Two passes.  The first reads each file's head, up to its first record:
 * its #pair, and the earliest record of all, where windows start.  So a
 * file whose head is wrong (no #pair, a malformed or a second, different
 * one, a pair another file has already) is refused, with one line,
 * before anything is read of the rest.  The second reads each file whole,
 * one file at a time: what a file holds is fitted and let go before the
 * next is read, so memory holds one file's exchanges (about 90 bytes
 * each at the most) and the windows' fits, whatever the mesh.  A bad
 * line, or a #pair unlike the file's own further on, ends that file with
 * one line naming it; its exchanges before it are kept.  A last line
 * cut short (its writer killed mid-line) is dropped with one line, the
 * rest of the file kept (lib/record.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exchange.h"
#include "opt.h"
#include "ntpmesh.h"

/* The #pair lines of one file as its reader meets them. */
struct pair_lines {
	struct exchange_reader *xr;
	int seen;			/* a #pair was read: */
	char client[NAME_MAX_LEN + 1], server[NAME_MAX_LEN + 1];
	char why[200];			/* the first one wrong: why */
	unsigned long line;		/* and its line */
};

static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > NAME_MAX_LEN)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", s[i]) ||
		    !s[i])
			return 0;
	return 1;
}

/* "#pair CLIENT SERVER" into @c and @s; -1 when it is not that. */
static int parse_pair(const char *line, char *c, char *s)
{
	const char *p = line + 6, *q;
	size_t n1, n2;

	if (line[5] != ' ')
		return -1;
	n1 = strcspn(p, " ");
	q = p + n1;
	if (!name_ok(p, n1) || *q != ' ')
		return -1;
	n2 = strlen(++q);
	if (!name_ok(q, n2) || (n1 == n2 && !memcmp(p, q, n1)))
		return -1;
	memcpy(c, p, n1);
	c[n1] = 0;
	memcpy(s, q, n2);
	s[n2] = 0;
	return 0;
}

static void pair_wrong(struct pair_lines *pl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pair_wrong(struct pair_lines *pl, const char *fmt, ...)
{
	va_list ap;

	if (pl->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(pl->why, sizeof(pl->why), fmt, ap);
	va_end(ap);
	pl->line = pl->xr->r.lineno;
}

/* Each '#' line: a #pair is checked, and must agree with the first. */
static void on_comment(void *ctx, const char *line)
{
	struct pair_lines *pl = ctx;
	char c[NAME_MAX_LEN + 1], s[NAME_MAX_LEN + 1];

	if (strncmp(line, "#pair", 5) || (line[5] && line[5] != ' '))
		return;
	if (parse_pair(line, c, s)) {
		pair_wrong(pl, "malformed '#pair' line (want '#pair CLIENT SERVER', two names of "
			   "A-Z a-z 0-9 _ . -, up to %d bytes)", NAME_MAX_LEN);
	} else if (!pl->seen) {
		pl->seen = 1;
		memcpy(pl->client, c, sizeof(c));
		memcpy(pl->server, s, sizeof(s));
	} else if (strcmp(c, pl->client) || strcmp(s, pl->server)) {
		pair_wrong(pl, "'#pair %s %s' unlike the file's '#pair %s %s'", c, s, pl->client,
			   pl->server);
	}
}

/*
 * --stamps kernel: exchange_offsets' columns and the kernel's stamps of
 * the four events, read on ok records only (what offsetfit reads costs
 * nothing more without it).
 */
enum { MESH_T1K = EXCHANGE_OFFSETS_NCOLS, MESH_T2K, MESH_T3K, MESH_T4K, MESH_NCOLS };

static const struct exchange_col kernel_cols[MESH_NCOLS] = {
	EXCHANGE_OFFSETS_COLS,
	[MESH_T1K] = { "t1k", EXCHANGE_INT, EXCHANGE_OK_ONLY },
	[MESH_T2K] = { "t2k", EXCHANGE_INT, EXCHANGE_OK_ONLY },
	[MESH_T3K] = { "t3k", EXCHANGE_INT, EXCHANGE_OK_ONLY },
	[MESH_T4K] = { "t4k", EXCHANGE_INT, EXCHANGE_OK_ONLY },
};

static const struct exchange_spec kernel_spec = {
	kernel_cols, MESH_NCOLS, EXCHANGE_OFFSETS_PARTIAL
};

#define KERNEL_ALL	(1u << MESH_T1K | 1u << MESH_T2K | 1u << MESH_T3K | 1u << MESH_T4K)

static int open_reader(const char *path, struct exchange_reader *xr, struct pair_lines *pl,
		       int kernel)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		ntpx_err("%s: %s", path, strerror(errno));
		return -1;
	}
	memset(pl, 0, sizeof(*pl));
	pl->xr = xr;
	if (exchange_reader_init(xr, fd, path, kernel ? &kernel_spec : &exchange_offsets))
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	xr->r.on_comment = on_comment;
	xr->r.ctx = pl;
	return fd;
}

static void add_input(struct mesh_run *r, const char *path, const struct pair_lines *pl,
		      int64_t first_t)
{
	static size_t cap;
	struct pair_input *in;

	if ((size_t)r->nin == cap) {
		cap = cap ? cap * 2 : 16;
		if (!(in = realloc(r->in, cap * sizeof(*in))))
			ntpx_die(NTPX_EXIT_FAIL, "out of memory");
		r->in = in;
	}
	in = &r->in[r->nin++];
	memset(in, 0, sizeof(*in));
	if (!(in->path = strdup(path)))
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	memcpy(in->client_name, pl->client, sizeof(in->client_name));
	memcpy(in->server_name, pl->server, sizeof(in->server_name));
	in->first_t = first_t;
}

/*
 * One file's head, up to its first record.  @named: the file was named,
 * not found in a directory, where a record file without #pair (a
 * two-host run's probe.rec, a server's log) is passed over.
 */
static void head(struct mesh_run *r, const char *path, int named)
{
	struct exchange_reader xr;
	struct pair_lines pl;
	int fd, rc;

	if ((fd = open_reader(path, &xr, &pl, r->kernel)) < 0) {
		r->failed = 1;
		return;
	}
	rc = exchange_next(&xr);
	if (pl.why[0]) {
		ntpx_err("%s:%lu: %s: file not read", path, pl.line, pl.why);
		r->failed = 1;
	} else if (!pl.seen && !named) {
		r->skipped++;
	} else if (rc < 0) {
		ntpx_err("%s: file not read", exchange_err(&xr));
		r->failed = 1;
	} else if (!pl.seen) {
		ntpx_err("%s: no '#pair CLIENT SERVER' header before its first record: file not read",
			 path);
		r->failed = 1;
	} else {
		add_input(r, path, &pl, rc == 1 && (xr.x.have & 1) ? xr.x.t[0] : INT64_MAX);
	}
	exchange_reader_free(&xr);
	close(fd);
}

/* The record files under a directory, for nftw(). */
static char **found;
static size_t nfound, capfound;

static int find_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char magic[12];
	int fd;
	ssize_t n;

	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	/* only record files: the evidence package holds tables and logs too */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n != (ssize_t)sizeof(magic) || memcmp(magic, "#ntpx-record", sizeof(magic)))
		return 0;
	if (nfound == capfound) {
		char **f = realloc(found, (capfound = capfound ? capfound * 2 : 64) * sizeof(*f));

		if (!f)
			ntpx_die(NTPX_EXIT_FAIL, "out of memory");
		found = f;
	}
	if (!(found[nfound++] = strdup(path)))
		ntpx_die(NTPX_EXIT_FAIL, "out of memory");
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_host(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int host_of(const struct mesh_run *r, const char *name)
{
	int h;

	for (h = 0; h < r->nhosts; h++)
		if (!strcmp(r->host[h], name))
			return h;
	return -1;
}

/* The hosts of the files kept, in name order; a file that would be the 17th host's is refused. */
static void hosts(struct mesh_run *r)
{
	int i, j, k;

	for (i = j = 0; i < r->nin; i++) {
		struct pair_input *in = &r->in[i];
		int more = (host_of(r, in->client_name) < 0) + (host_of(r, in->server_name) < 0);

		for (k = 0; k < j; k++)
			if (!strcmp(r->in[k].client_name, in->client_name) &&
			    !strcmp(r->in[k].server_name, in->server_name))
				break;
		if (k < j) {
			ntpx_err("%s: '#pair %s %s' as %s: file not read", in->path, in->client_name,
				 in->server_name, r->in[k].path);
		} else if (r->nhosts + more > MESH_MAX_HOSTS) {
			ntpx_err("%s: '#pair %s %s' would be more than %d hosts: file not read",
				 in->path, in->client_name, in->server_name, MESH_MAX_HOSTS);
		} else {
			if (host_of(r, in->client_name) < 0)
				strcpy(r->host[r->nhosts++], in->client_name);
			if (host_of(r, in->server_name) < 0)
				strcpy(r->host[r->nhosts++], in->server_name);
			r->in[j++] = *in;
			continue;
		}
		r->failed = 1;
		free(in->path);
	}
	r->nin = j;
	qsort(r->host, (size_t)r->nhosts, sizeof(r->host[0]), by_host);
	for (i = 0; i < r->nin; i++) {
		r->in[i].client = host_of(r, r->in[i].client_name);
		r->in[i].server = host_of(r, r->in[i].server_name);
	}
}

void input_find(struct mesh_run *r, char **paths, int npaths)
{
	struct stat st;
	size_t k;
	int i;

	for (i = 0; i < npaths; i++) {
		if (stat(paths[i], &st)) {
			ntpx_err("%s: %s", paths[i], strerror(errno));
			r->failed = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			head(r, paths[i], 1);
			continue;
		}
		nfound = 0;
		/* symbolic links followed: nftw reports no file twice, so a loop ends */
		if (nftw(paths[i], find_one, 16, 0)) {
			ntpx_err("%s: %s", paths[i], strerror(errno));
			r->failed = 1;
		}
		qsort(found, nfound, sizeof(*found), by_name);
		for (k = 0; k < nfound; k++) {
			head(r, found[k], 0);
			free(found[k]);
		}
	}
	free(found);
	found = NULL;
	capfound = 0;
	hosts(r);
	r->start = INT64_MAX;
	for (i = 0; i < r->nin; i++)
		r->start = r->in[i].first_t < r->start ? r->in[i].first_t : r->start;
}

/* Makes room for windows up to @w; -1 out of memory. */
static int windows_upto(struct mesh_run *r, long w)
{
	struct dirfit *f;
	size_t row = (size_t)r->nin;

	if (w < r->nwin)
		return 0;
	f = realloc(r->fit, (size_t)(w + 1) * row * sizeof(*f));
	if (!f)
		return -1;
	memset(f + (size_t)r->nwin * row, 0, (size_t)(w + 1 - r->nwin) * row * sizeof(*f));
	r->fit = f;
	r->nwin = w + 1;
	return 0;
}

static long window_of(const struct mesh_run *r, int64_t t)
{
	/* A record before the earliest first record (a file out of time order): the first window. */
	if (!r->window_ns || t <= r->start)
		return 0;
	return (long)((t - r->start) / r->window_ns);
}

/* The samples of one file, fitted window by window; -1 out of memory. */
static int fit_windows(struct mesh_run *r, int i, struct pair_sample *s, size_t n)
{
	struct pair_sample *sorted = s;
	size_t *at = NULL, k;
	double *scratch;
	long w, last = 0;
	int rc = -1;

	for (k = 0; k < n; k++)
		last = window_of(r, s[k].t) > last ? window_of(r, s[k].t) : last;
	if (windows_upto(r, last) || !(scratch = malloc(3 * (n ? n : 1) * sizeof(*scratch))))
		return -1;
	/* Each window's samples together, in their order: a counting sort. */
	if (last > 0) {
		if (!(at = calloc((size_t)last + 2, sizeof(*at))) || !(sorted = malloc(n * sizeof(*s))))
			goto out;
		for (k = 0; k < n; k++)
			at[window_of(r, s[k].t) + 1]++;
		for (w = 0; w <= last; w++)
			at[w + 1] += at[w];
		for (k = 0; k < n; k++)
			sorted[at[window_of(r, s[k].t)]++] = s[k];
		/* at[w] is now where window w + 1 starts */
		memmove(at + 1, at, (size_t)(last + 1) * sizeof(*at));
		at[0] = 0;
	}
	for (w = 0; w <= last; w++) {
		struct dirfit *d = &r->fit[(size_t)w * (size_t)r->nin + (size_t)i];
		size_t from = at ? at[w] : 0, to = at ? at[w + 1] : n;

		d->n = to - from;
		d->ok = d->n && pairfit_fit(sorted + from, d->n, r->frac, scratch, &d->f) == 0;
	}
	rc = 0;
out:
	if (sorted != s)
		free(sorted);
	free(at);
	free(scratch);
	return rc;
}

/* One file, whole; -1 out of memory. */
static int read_file(struct mesh_run *r, int i, struct pair_sample **buf, size_t *cap)
{
	struct pair_input *in = &r->in[i];
	struct exchange_reader xr;
	struct pair_lines pl;
	size_t n = 0;
	int fd, rc;

	if ((fd = open_reader(in->path, &xr, &pl, r->kernel)) < 0) {
		r->failed = 1;
		return 0;
	}
	while ((rc = exchange_next(&xr)) == 1 && !pl.why[0]) {
		const struct record_exchange *x = &xr.x;
		struct pair_sample *p;

		in->records++;
		if (x->status != RECORD_OK)
			continue;
		in->ok++;
		if (r->kernel && (xr.vhave & KERNEL_ALL) != KERNEL_ALL) {
			in->unstamped++;
			continue;
		}
		if (n == *cap) {
			size_t c = *cap ? *cap * 2 : 4096;

			if (!(p = realloc(*buf, c * sizeof(*p))))
				goto oom;
			*buf = p;
			*cap = c;
		}
		p = &(*buf)[n++];
		/* the midpoint on the client's clock, modulo 2^64 as record_delay() */
		p->t = x->t[0] + (int64_t)((uint64_t)x->t[3] - (uint64_t)x->t[0]) / 2;
		p->off2 = xr.off2;
		p->delay = xr.delay;
		if (r->kernel) {
			const int64_t *v = xr.v;

			p->off2 = (v[MESH_T2K] - v[MESH_T1K]) + (v[MESH_T3K] - v[MESH_T4K]);
			p->delay = (v[MESH_T4K] - v[MESH_T1K]) - (v[MESH_T3K] - v[MESH_T2K]);
		}
		p->true2 = xr.vhave & (1u << EXCHANGE_OFFSETS_TRUE2) ? xr.v[EXCHANGE_OFFSETS_TRUE2] :
			   PAIRFIT_NO_TRUTH;
	}
	if (pl.why[0]) {
		ntpx_err("%s:%lu: %s: the rest of the file not read", in->path, pl.line, pl.why);
		r->failed = 1;
	} else if (rc < 0) {
		ntpx_err("%s: the rest of the file not read", exchange_err(&xr));
		r->failed = 1;
	} else if (xr.r.cut) {
		ntpx_err("%s", xr.r.warn);
		r->cut++;
	}
	if (in->unstamped)
		ntpx_err("%s: %llu of %llu ok records without all of t1k t2k t3k t4k: not used "
			 "(--stamps kernel)", in->path, (unsigned long long)in->unstamped,
			 (unsigned long long)in->ok);
	exchange_reader_free(&xr);
	close(fd);
	return fit_windows(r, i, *buf, n);
oom:
	exchange_reader_free(&xr);
	close(fd);
	return -1;
}

int input_read(struct mesh_run *r)
{
	struct pair_sample *buf = NULL;
	size_t cap = 0;
	int i, rc = 0;

	for (i = 0; i < r->nin && !rc; i++)
		rc = read_file(r, i, &buf, &cap);
	free(buf);
	return rc;
}
