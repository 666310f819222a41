/* SPDX-License-Identifier: ISC */
/*
 * ntpmesh.h - what the parts of ntpmesh share (src/ntpmesh/): main.c
 * reads the options and runs the rest; input.c finds the record files
 * (a file each directed pair, named by its #pair header), checks their
 * headers and fits each pair in each window (lib/pairfit.h); window.c
 * puts a window's pairs together into links at one instant and fits the
 * mesh (lib/meshfit.h); output.c prints a window as key-value lines or
 * JSON.
 */
#ifndef NTPX_NTPMESH_H
#define NTPX_NTPMESH_H

#include <stddef.h>
#include <stdint.h>

#include "meshfit.h"
#include "pairfit.h"

#define NAME_MAX_LEN	63	/* a host's name: [A-Za-z0-9_.-], 1 to 63 bytes */

/* One record file: the exchanges one host (client) had with another (server). */
struct pair_input {
	char *path;
	char client_name[NAME_MAX_LEN + 1], server_name[NAME_MAX_LEN + 1];
	int client, server;	/* host indices, once every header is read */
	int64_t first_t;	/* ns: its first record's t1 (INT64_MAX: none) */
	uint64_t records, ok;
	uint64_t unstamped;	/* --stamps kernel: ok records without all four */
};

/* One directed pair in one window. */
struct dirfit {
	size_t n;		/* ok records in the window */
	int ok;			/* 1: f is a fit */
	struct pairfit f;
};

struct mesh_run {
	/* the options */
	double frac;		/* --fraction */
	int kernel;		/* --stamps kernel: t1k t2k t3k t4k, not t1..t4 */
	int64_t window_ns;	/* --window; 0: the whole run */
	int64_t blame_min_ns;	/* --blame-min; 0: significance alone */
	int json;
	const char *ref_name;	/* --ref; NULL: the first host by name */
	/* the hosts, in name order */
	int nhosts, ref;
	char host[MESH_MAX_HOSTS][NAME_MAX_LEN + 1];
	/* the record files read, each a directed pair */
	struct pair_input *in;
	int nin;
	unsigned skipped;	/* record files in directories without #pair */
	int failed;		/* an input was refused, whole or in part: exit 1 */
	unsigned cut;		/* files whose cut-short last line was dropped */
	/* the windows: fit[w * nin + i] for file i in window w */
	int64_t start;		/* ns: the earliest first record of the files */
	long nwin;
	struct dirfit *fit;
};

/* input.c: the files of @paths (files, or directories read through) into r->in and r->host. */
void input_find(struct mesh_run *r, char **paths, int npaths);
/* input.c: every record of every file, fitted in its windows; 0, or -1 out of memory. */
int input_read(struct mesh_run *r);

/* One link of a window: the pairs between hosts a < b, read at one instant. */
struct link_est {
	int a, b;
	int ab, ba;		/* the file of a probing b, of b probing a; -1: none fitted */
	double ab_y, ab_var;	/* ns: theta_b - theta_a as a's probes say */
	double ba_y, ba_var;	/* ns: the same as b's probes say (their offset negated) */
	double y, var;		/* ns: the mean of those there */
	double q;		/* ns^4: the sum over them of (their share of var)^2 / PAIRFIT_DOF */
	int truth;		/* every fit behind y had the truth: */
	double true_y;		/* ns: the true theta_b - theta_a */
};

struct window {
	long index;
	int64_t start, end, mid;	/* ns: the window, and the instant it is read at (ref's clock) */
	int directions;			/* directed pairs fitted */
	struct mesh_graph g;		/* its links, in the order of link[] */
	struct link_est link[MESH_MAX_LINKS];
	struct mesh_fit fit;
	int truth;			/* every link of ref's component had the truth: */
	double true_theta[MESH_MAX_HOSTS];	/* ns */
};

/* window.c: window @w of the run; prints its notes (too few records, hosts not reached) on stderr. */
void window_fit(const struct mesh_run *r, long w, struct window *out);

/* output.c */
#define STDOUT_NAME	"standard output"
void output_begin(const struct mesh_run *r);
/* Returns lib/out.h's state after the window. */
int output_window(const struct mesh_run *r, const struct window *w);
int output_end(const struct mesh_run *r);

#endif
