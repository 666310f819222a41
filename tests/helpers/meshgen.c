/* SPDX-License-Identifier: ISC */
/*
 * meshgen - synthetic records of a mesh of hosts that probe each other,
 * with every clock and every path known exactly, to hold ntpmesh to the
 * truth before a lab of N hosts runs (a mock of the lab: it says so in
 * its #tool header).  Writes DIR/CLIENT-SERVER.rec, one file per
 * directed pair, with "#pair CLIENT SERVER" after "#endpoint", and
 * true2 (unless -T), as ntpprobe --clock sim: writes it.
 *
 *   meshgen [-H a,b,c,d] [-L a:b,b:c,...] [-c N] [-i NS] [-s SEED]
 *           [-d FROM:TO=NS]... [-r FROM:TO=NS_PER_S]... [-j NS] [-q NS]
 *           [-l P] [-T] [-K] DIR
 *
 * -H the hosts (default a,b,c,d); -L the links, each probed both ways
 * (default: every pair); -c exchanges per directed pair (600); -i their
 * interval (100 ms), the pairs spread across it; -s the seed (1).
 * Each host's clock is off by up to 2 ms and runs up to 20 ppm fast or
 * slow, from the seed.  A one-way path takes 50 us, plus exponential
 * queueing of mean -q (20 us), plus Gaussian jitter of -j (2 us), the
 * same law each way: symmetric.  -d adds a fixed delay to one direction,
 * -r one that grows from 0 at the first exchange by NS_PER_S each second
 * (both may name the same direction).  -l loses a fraction of the
 * exchanges (timeout records).  -T leaves the truth out.  -K adds the
 * kernel's stamps t1k t2k t3k t4k (ntpmesh --stamps kernel): each 1.5 us
 * nearer the wire than the program's.
 *
 * Times are integer nanoseconds: T1..T4 on a true time line, each read
 * on the clock of the host that stamps it; true2 is twice the server's
 * clock minus the client's at the exchange's midpoint.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"
#include "opt_units.h"

#define MAXH	32

static uint64_t state;

static double uniform(void)
{
	/* xorshift64*, seeded */
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return ((double)((state * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static char *host[MAXH];
static int nhosts;
static double theta0[MAXH], ppb[MAXH];	/* ns, ns/s */
static double fixed[MAXH][MAXH], ramp[MAXH][MAXH];	/* ns, ns/s; [from][to] */
static int linked[MAXH][MAXH];

static const int64_t T0 = 1764455329000000000LL;

/* "meshgen: WHAT: ARG" (ARG may be NULL), exit 2. */
static void die(const char *what, const char *arg)
{
	fprintf(stderr, "meshgen: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static int host_of(const char *name, size_t len)
{
	int h;

	for (h = 0; h < nhosts; h++)
		if (strlen(host[h]) == len && !strncmp(host[h], name, len))
			return h;
	die("no such host in -H", name);
	return -1;
}

/* "FROM:TO=VALUE" into from, to and the value. */
static void direction(const char *arg, int *from, int *to, double *v)
{
	const char *colon = strchr(arg, ':'), *eq = strchr(arg, '=');
	char *end;

	if (!colon || !eq || eq < colon)
		die("bad direction (want FROM:TO=VALUE)", arg);
	*from = host_of(arg, (size_t)(colon - arg));
	*to = host_of(colon + 1, (size_t)(eq - colon - 1));
	*v = strtod(eq + 1, &end);
	if (*end || end == eq + 1)
		die("bad value", arg);
}

/* Host h's clock at true time T: its offset plus its rate's drift since T0. */
static int64_t clock_at(int h, int64_t T)
{
	return T + (int64_t)llround(theta0[h] + ppb[h] * ntpx_ns_to_sec((double)(T - T0)));
}

static double oneway(int from, int to, int64_t T, double q, double j)
{
	double d = 50000 + fixed[from][to] + ramp[from][to] * ntpx_ns_to_sec((double)(T - T0)) -
		   q * log(uniform()) + j * normal();

	return d < 1000 ? 1000 : d;
}

static void pair_file(const char *dir, int c, int s, int phase, int npairs, uint64_t n,
		      int64_t iv, double q, double j, double loss, int truth, int kstamps)
{
	char path[4096], line[256];
	FILE *f;
	uint64_t k;

	snprintf(path, sizeof(path), "%s/%s-%s.rec", dir, host[c], host[s]);
	if (!(f = fopen(path, "w")))
		die("cannot write", path);
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	fprintf(f, "#ntpx-record 1\n#tool meshgen 0 (test mock of a mesh lab)\n"
		"#endpoint udp://%s:123\n#pair %s %s\n#clock sim:%s\n"
		"#fields seq t1 t2 t3 t4 delay off2 status%s%s\n",
		host[s], host[c], host[s], host[c], truth ? " true2" : "",
		kstamps ? " t1k t2k t3k t4k" : "");
	for (k = 0; k < n; k++) {
		struct record_exchange x = { .seq = k + 1, .status = RECORD_OK,
					     .have = RECORD_HAVE_ALL };
		int64_t T1 = T0 + (int64_t)k * iv + iv * phase / npairs + (int64_t)(uniform() * 1000);
		int64_t T2 = T1 + llround(oneway(c, s, T1, q, j));
		int64_t T3 = T2 + 10000 + llround(500 * fabs(normal()));
		int64_t T4 = T3 + llround(oneway(s, c, T3, q, j));
		int64_t Tm = T1 + (T4 - T1) / 2;

		x.t[0] = clock_at(c, T1);
		x.t[1] = clock_at(s, T2);
		x.t[2] = clock_at(s, T3);
		x.t[3] = clock_at(c, T4);
		if (uniform() < loss) {
			x.have = 1;
			x.status = RECORD_TIMEOUT;
		}
		record_format(line, sizeof(line), &x);
		fputs(line, f);
		if (truth && x.status == RECORD_OK)
			fprintf(f, " %lld",
				(long long)(2 * ((clock_at(s, Tm) - Tm) - (clock_at(c, Tm) - Tm))));
		else if (truth)
			fputs(" -", f);
		if (kstamps && x.status == RECORD_OK)
			fprintf(f, " %lld %lld %lld %lld", (long long)(x.t[0] + 1500),
				(long long)(x.t[1] - 1500), (long long)(x.t[2] + 1500),
				(long long)(x.t[3] - 1500));
		else if (kstamps)
			fputs(" - - - -", f);
		fputc('\n', f);
	}
	if (fclose(f))
		die("cannot write", path);
}

int main(int argc, char **argv)
{
	char def[] = "a,b,c,d", *hosts = def, *links = NULL, *tok;
	uint64_t n = 600;
	int64_t iv = 100000000;
	double q = 20000, j = 2000, loss = 0, v;
	int opt, truth = 1, kstamps = 0, a, b, npairs = 0, phase = 0;

	state = 1;
	while ((opt = getopt(argc, argv, "H:L:c:i:s:d:r:j:q:l:TK")) != -1) {
		switch (opt) {
		case 'H': hosts = optarg; break;
		case 'L': links = optarg; break;
		case 'c': n = strtoull(optarg, NULL, 10); break;
		case 'i': iv = strtoll(optarg, NULL, 10); break;
		case 's': state = strtoull(optarg, NULL, 10) * 2654435761u | 1; break;
		case 'j': j = strtod(optarg, NULL); break;
		case 'q': q = strtod(optarg, NULL); break;
		case 'l': loss = strtod(optarg, NULL); break;
		case 'T': truth = 0; break;
		case 'K': kstamps = 1; break;
		case 'd': case 'r': break;	/* once the hosts are known */
		default: die("usage: meshgen [-H LIST] [-L LIST] [-c N] [-i NS] [-s SEED] "
			     "[-d FROM:TO=NS] [-r FROM:TO=NS_PER_S] [-j NS] [-q NS] [-l P] [-T] [-K] DIR", NULL);
		}
	}
	if (optind != argc - 1 || iv <= 0)
		die("one DIR, and a positive -i", NULL);
	for (tok = strtok(hosts, ","); tok && nhosts < MAXH; tok = strtok(NULL, ","))
		host[nhosts++] = tok;
	for (a = 0; a < nhosts; a++) {
		theta0[a] = (uniform() - 0.5) * 4e6;
		ppb[a] = (uniform() - 0.5) * 4e4;
	}
	optind = 1;
	while ((opt = getopt(argc, argv, "H:L:c:i:s:d:r:j:q:l:TK")) != -1) {
		if (opt == 'd' || opt == 'r') {
			direction(optarg, &a, &b, &v);
			if (opt == 'd')
				fixed[a][b] += v;
			else
				ramp[a][b] += v;
		}
	}
	if (!links) {
		for (a = 0; a < nhosts; a++)
			for (b = a + 1; b < nhosts; b++)
				linked[a][b] = linked[b][a] = 1;
	} else {
		for (tok = strtok(links, ","); tok; tok = strtok(NULL, ",")) {
			char *colon = strchr(tok, ':');

			if (!colon)
				die("bad link (want A:B)", tok);
			a = host_of(tok, (size_t)(colon - tok));
			b = host_of(colon + 1, strlen(colon + 1));
			linked[a][b] = linked[b][a] = 1;
		}
	}
	if (mkdir(argv[argc - 1], 0777) && errno != EEXIST)
		die("cannot make", argv[argc - 1]);
	for (a = 0; a < nhosts; a++)
		for (b = 0; b < nhosts; b++)
			npairs += linked[a][b];
	for (a = 0; a < nhosts; a++)
		for (b = 0; b < nhosts; b++)
			if (linked[a][b])
				pair_file(argv[argc - 1], a, b, phase++, npairs, n, iv, q, j, loss, truth, kstamps);
	return 0;
}
