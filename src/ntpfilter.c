/* SPDX-License-Identifier: ISC */
/*
 * ntpfilter - records in, the same records out with OpenNTPD's clock
 * filter's columns appended (lib/filter.h): the filtered offset and
 * delay, both jitters, the window's fill, trust, validity, the
 * replies where OpenNTPD would have updated the clock, and the window's
 * means that ntpctl -s peers shows as offset and delay.
 *
 * Every input line is passed through unchanged apart from the appended
 * columns; "#fields" is rewritten to name them.  SIGINT ends the input
 * when standard input is not a terminal (lib/record.h), so that in
 * "ntpprobe | ntpfilter" a ^C stops the probe, which finishes its last
 * line, and the filter ends with its input, losing nothing.  A last line
 * cut short is dropped with one warning, and the exit status is 3.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "opt.h"
#include "out.h"
#include "record.h"

/* ntpctl's offset and delay: the window's means (filter_means). */
#define MEAN_FIELDS	"moff2 mdelay"

static const char *const added[] = {
	"foff2", "fdelay", "jitter", "djitter", "fcount", "trust", "valid", "update",
	"moff2", "mdelay", NULL,
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntpfilter [--window N] [FILE...]\n"
"\n"
"Reads records (each FILE in turn, each from an empty window, or standard\n"
"input) and writes them with the clock filter's columns appended:\n"
 FILTER_FIELDS " " MEAN_FIELDS ".\n"
"\n"
"      --window N   samples in the filter (default %d, OpenNTPD's)\n"
"  -h, --help       this text\n"
"      --version    the version\n", FILTER_WINDOW);
}

struct ctx {
	char clash[64];		/* a column we would add that is already there */
	int reset;		/* a '#reset' line came: a new peer from here on */
	int werr;		/* errno of the first write that failed, or 0 */
};

/* Keeps the cause of the first failed write (lib/out.h). */
static void wrote(struct ctx *c, int rc)
{
	if (rc < 0 && !c->werr)
		c->werr = errno ? errno : EIO;
}

/* Headers pass through; #fields gains our columns. */
static void on_comment(void *arg, const char *line)
{
	struct ctx *c = arg;
	int i;

	if (strncmp(line, "#fields ", 8) != 0) {
		/* The transport found its peer again (a restarted server):
		   its samples must not mix with the old one's. */
		if (strncmp(line, "#reset", 6) == 0 && (line[6] == ' ' || !line[6]))
			c->reset = 1;
		wrote(c, puts(line));
		return;
	}
	for (i = 0; added[i]; i++) {
		const char *p = line + 7;
		size_t n = strlen(added[i]);

		while ((p = strstr(p, added[i])) != NULL) {
			if (p[-1] == ' ' && (p[n] == ' ' || !p[n])) {
				snprintf(c->clash, sizeof(c->clash), "%s", added[i]);
				return;
			}
			p += n;
		}
	}
	wrote(c, printf("%s %s %s\n", line, FILTER_FIELDS, MEAN_FIELDS));
}

static int put_out(const struct filter *f, const struct filter_out *o)
{
	char buf[160];
	int64_t moff2, mdelay;

	filter_format(buf, sizeof(buf), o);
	if (filter_means(f, &moff2, &mdelay))
		return printf(" %s %lld %lld\n", buf, (long long)moff2, (long long)mdelay);
	return printf(" %s - -\n", buf);
}

/*
 * Every record of @r through the clock filter, each written out with the
 * filter's columns: 0 at the end of the input (or when a write failed:
 * ctx->werr), -1 with r->err set on a record that cannot be filtered.
 */
static int filter_records(struct record_reader *r, struct ctx *ctx, int window)
{
	unsigned long gen = 0;
	int rc = 0, col_status = -1, col_delay = -1, col_off2 = -1;
	struct filter f;

	filter_init(&f, window);

	while (!ctx->werr && (rc = record_next(r)) == 1) {
		struct filter_out o;
		int64_t delay, off2;
		int st;
		size_t i;

		if (r->generation != gen) {
			gen = r->generation;
			col_status = record_col(r, "status");
			col_delay = record_col(r, "delay");
			col_off2 = record_col(r, "off2");
			if (col_status < 0 || col_delay < 0 || col_off2 < 0) {
				rc = record_error(r, "no status, delay or off2 column");
				break;
			}
		}
		if (ctx->clash[0]) {
			rc = record_error(r, "column '%s' is there already (filtered twice?)",
					  ctx->clash);
			break;
		}
		st = record_status_parse(r->field[col_status]);
		if (st < 0) {
			rc = record_error(r, "unknown status '%s'", r->field[col_status]);
			break;
		}
		if (ctx->reset) {
			filter_init(&f, window);
			ctx->reset = 0;
		}
		if (st == RECORD_OK) {
			if (record_parse_i64(r->field[col_delay], &delay) != 1 ||
			    record_parse_i64(r->field[col_off2], &off2) != 1) {
				rc = record_error(r, "ok record without a delay and off2");
				break;
			}
			filter_add(&f, off2, delay, &o);
		} else if (st == RECORD_KOD || st == RECORD_UNSYNCED) {
			/* OpenNTPD reschedules without touching trust. */
			filter_peek(&f, &o);
		} else {
			/* No usable reply came for this query. */
			filter_miss(&f, &o);
		}
		for (i = 0; i < r->linelen; i++)
			if (!r->line[i])
				r->line[i] = ' ';
		if (fwrite(r->line, 1, r->linelen, stdout) != r->linelen)
			wrote(ctx, -1);
		else
			wrote(ctx, put_out(&f, &o));
	}
	if (rc == 0 && ctx->clash[0])
		rc = record_error(r, "column '%s' is there already (filtered twice?)", ctx->clash);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "window", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctx ctx = { .clash = "" };
	int opt, i, nfiles, out, rc = 0, cut = 0;
	uint64_t window = FILTER_WINDOW;
	char *const stdin_only[] = { "-" };
	char *const *files;
	char err[512] = "";

	opt_init(argv);
	while ((opt = getopt_long(argc, argv, "w:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			opt_old("-w", "--window");
			/* fall through */
		case 'W':
			if (opt_count(optarg, FILTER_MAX_WINDOW, &window) || window < 1)
				opt_usage_error("bad --window '%s' (1 to %d)", optarg,
						FILTER_MAX_WINDOW);
			break;
		default:
			opt_other(opt, usage);
		}
	}
	/* FILE...: each its own stream, in turn; none, standard input. */
	files = optind < argc ? argv + optind : stdin_only;
	nfiles = optind < argc ? argc - optind : 1;
	out_init();
	setvbuf(stdout, NULL, _IOLBF, 0);
	record_sigint_ends_input();
	for (i = 0; i < nfiles && rc == 0; i++) {
		const char *name = files[i];
		struct record_reader r;
		int fd = 0;

		if (strcmp(name, "-") != 0) {
			fd = open(name, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				ntpx_err("%s: %s", name, strerror(errno));
				rc = NTPX_EXIT_FAIL;
				break;
			}
		}
		if (record_reader_init(&r, fd, name))
			ntpx_die(NTPX_EXIT_FAIL, "out of memory");
		r.on_comment = on_comment;
		r.ctx = &ctx;
		if (filter_records(&r, &ctx, (int)window) < 0) {
			snprintf(err, sizeof(err), "%s", r.err);
			rc = NTPX_EXIT_FAIL;
		} else if (r.cut) {
			ntpx_err("%s", r.warn);
			cut = 1;
		}
		record_reader_free(&r);
		if (fd > 0)
			close(fd);
		if (ctx.werr)
			break;
	}
	/* A closed pipe ends the run quietly, whatever the input still
	   held; any other write error is the run's error (lib/out.h). */
	out = ctx.werr ? out_failed("standard output", ctx.werr) :
			 out_flush(stdout, "standard output");
	if (out != OUT_OK)
		return out_exit_code(out);
	if (err[0])
		ntpx_err("%s", err);
	/* Everything went well but a line was dropped: say so. */
	return rc == NTPX_EXIT_OK && cut ? NTPX_EXIT_CUT : rc;
}
