/* SPDX-License-Identifier: ISC */
/*
 * ntpprobe's command line into a struct probe_config (ntpprobe.h): every
 * value checked here, with one line and exit 2 for a bad one.
 */
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "discipline.h"
#include "nts_ke.h"
#include "opt.h"
#include "transport.h"
#include "ntpprobe.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] ENDPOINT\n"
	       "Send NTP client requests to ENDPOINT, one per interval, and write one\n"
	       "record per exchange (T1..T4 in ns, delay, off2, status) on stdout; on a\n"
	       "terminal, one line per exchange for a person instead.\n\n"
	       "  -1, --once           one exchange, one line: offset +/- its error bound\n"
	       "                       (half the delay plus the server's root distance)\n"
	       "  -i, --interval DUR   time between requests (default 1s)\n"
	       "  -c, --count N        stop after N exchanges\n"
	       "  -d, --duration DUR   stop after DUR\n"
	       "  -w, --timeout DUR    wait for a reply at most DUR (default: the\n"
	       "                       interval, at most 1s)\n"
	       "      --poll MODE      block (sleep in the kernel, default) or busy\n"
	       "                       (spin on a non-blocking receive)\n"
	       "      --cpu N          pin to CPU N\n"
	       "      --clock NAME     read T1/T4 from NAME: realtime (default) or\n"
	       "                       sim:PATH (adds the true2 column)\n"
	       "      --server-clock sim:PATH  the server's clock is this sim clock (its\n"
	       "                       ntpreflect --clock): true2 is the true offset\n"
	       "                       between the two clocks\n"
	       "      --pair CLIENT,SERVER  name the two hosts of a mesh in a '#pair' header\n"
	       "                       (ntpmesh(1))\n"
	       "      --discipline     filter and correct the clock as OpenNTPD does\n"
	       "                       (adds the filter's columns and corr adj dfreq)\n"
	       "      --step-threshold DUR  with --discipline: step the clock at the\n"
	       "                       first reply when its offset is above DUR\n"
	       "      --window N       with --discipline: samples in the clock filter\n"
	       "                       (default 8, OpenNTPD's), as ntpfilter's --window\n"
	       "      --discipline-params K=V,...  window (--window), freq-samples,\n"
	       "                       max-freq\n"
	       "      --no-stamps      no kernel or hardware stamps (t1q t1k ... t4h)\n"
	       "      --xleave         ask for interleaved mode: the server's own stamps\n"
	       "                       of each exchange fill t2k t3q t3k\n"
	       "      --nts[=HOST[:PORT]]  Network Time Security (RFC 8915): keys and\n"
	       "                       cookies from NTS-KE at HOST (default: the\n"
	       "                       endpoint's host) port PORT (default 4460), every\n"
	       "                       exchange authenticated (adds nts_seal nts_open)\n"
	       "      --nts-port PORT  with --nts: NTS-KE's port (default 4460), as\n"
	       "                       ntpreflect's --nts-port\n"
	       "      --ca FILE        with --nts: trust the certificates in FILE (PEM)\n"
	       "                       instead of the system's\n"
	       "  -u, --user NAME      run as NAME once the endpoint is open\n"
	       "  -4, -6               resolve HOST to an IPv4 / IPv6 address only\n"
	       "      --human          lines for a person (offset, delay, stratum...),\n"
	       "                       even when stdout is not a terminal\n"
	       "      --records        records, even on a terminal\n"
	       "      --json           one JSON object per exchange, for a script's\n"
	       "                       check (with -1: one object): the record's\n"
	       "                       columns, the offset, delay and error bound\n"
	       "                       in us, the server's stratum, refid and leap\n"
	       "  -h, --help           this text\n"
	       "      --version        the version\n\n"
	       "ENDPOINT: HOST[:PORT] (a name, an address, [IPv6]:PORT or a bare IPv6\n"
	       "address: udp:// to port 123), udp://HOST[:PORT][?dev=IF&src=ADDR],\n"
	       "uudp://HOST:PORT?dev=IF[&via=xdp|verbs][&mac=MAC], ib://HOST[:PORT][?dev=DEV].\n"
	       "A summary goes to stderr at exit (to stdout with the lines for a person);\n"
	       "SIGINT/SIGTERM end the run after the current exchange.  Exit status: 0\n"
	       "when at least one exchange was ok, 1 when none was (or a write failed),\n"
	       "2 for a usage error or a host name that does not resolve.\n", ntpx_prog);
}

/* A host's name in a #pair header, as doc/ntpx-record.5 allows it. */
static int pair_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > PROBE_PAIR_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!s[i] || !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789_.-", s[i]))
			return 0;
	return 1;
}

/* "CLIENT,SERVER" into cfg->pair_client and cfg->pair_server; -1 if not. */
static int pair_parse(const char *arg, struct probe_config *cfg)
{
	size_t n1 = strcspn(arg, ","), n2;

	if (arg[n1] != ',' || !pair_name_ok(arg, n1))
		return -1;
	n2 = strlen(arg + n1 + 1);
	if (!pair_name_ok(arg + n1 + 1, n2) || (n1 == n2 && !memcmp(arg, arg + n1 + 1, n1)))
		return -1;
	memcpy(cfg->pair_client, arg, n1);
	cfg->pair_client[n1] = 0;
	memcpy(cfg->pair_server, arg + n1 + 1, n2);
	cfg->pair_server[n2] = 0;
	return 0;
}

/* What the command line said beyond the config, for the checks after it. */
struct seen {
	int step_given, window_given, count_given;
	int family;			/* -4, -6, or 0 */
	int human;			/* --human 1, --records 0, else -1 */
	const char *nts_arg;		/* --nts=ARG, or NULL */
	const char *nts_port;		/* --nts-port, or NULL */
};

/* The config before any option. */
static void defaults(struct probe_config *cfg)
{
	*cfg = (struct probe_config){
		.interval = NTPX_NS_PER_SEC,
		.duration = -1,
		.timeout = -1,
		.count = UINT64_MAX,
		.cpu = UINT64_MAX,
		.poll = TRANSPORT_POLL_BLOCK,
		.clockname = "realtime",
	};
	discipline_defaults(&cfg->dp);
}

/* Option @c (its argument in optarg) into @cfg and @seen. */
static void option(int c, struct probe_config *cfg, struct seen *seen)
{
	uint64_t window;
	char err[256];

	switch (c) {
	case '1':
		cfg->once = 1;
		break;
	case 'i':
		if (opt_duration(optarg, 0, &cfg->interval) || cfg->interval <= 0)
			opt_usage_error("bad interval '%s'", optarg);
		break;
	case 'c':
		opt_stop_count(optarg, &cfg->count);
		seen->count_given = 1;
		break;
	case 'd':
		if (opt_duration(optarg, 0, &cfg->duration) || cfg->duration <= 0)
			opt_usage_error("bad duration '%s'", optarg);
		break;
	case 'w':
		if (opt_duration(optarg, 0, &cfg->timeout) || cfg->timeout <= 0)
			opt_usage_error("bad timeout '%s'", optarg);
		cfg->timeout_given = 1;
		break;
	case 'u':
		cfg->user = optarg;
		break;
	case 'P':
		opt_poll(optarg, &cfg->poll);
		break;
	case 'C':
		if (opt_count(optarg, CPU_SETSIZE - 1, &cfg->cpu))
			opt_usage_error("bad cpu '%s'", optarg);
		break;
	case 'K':
		cfg->clockname = optarg;
		break;
	case 'D':
		cfg->discipline = 1;
		break;
	case 'T':
		if (opt_duration(optarg, 0, &cfg->dp.step_threshold) ||
		    cfg->dp.step_threshold <= 0)
			opt_usage_error("bad step threshold '%s'", optarg);
		seen->step_given = 1;
		break;
	case 'W':
		/* ntpfilter's --window, the same words (ntpx(7)) */
		if (opt_count(optarg, FILTER_MAX_WINDOW, &window) || window < 1)
			opt_usage_error("bad --window '%s' (1 to %d)", optarg,
					FILTER_MAX_WINDOW);
		cfg->dp.window = (int)window;
		seen->window_given = 1;
		break;
	case 'X':
		if (discipline_parse(&cfg->dp, optarg, err, sizeof(err)))
			opt_usage_error("%s", err);
		break;
	case 'N':
		cfg->nostamps = 1;
		break;
	case 'x':
		cfg->xleave = 1;
		break;
	case 'n':
		cfg->nts = 1;
		seen->nts_arg = optarg;
		break;
	case 'Y':
		seen->nts_port = optarg;
		break;
	case 'A':
		cfg->ca = optarg;
		break;
	case '4':
		seen->family = AF_INET;
		break;
	case '6':
		seen->family = AF_INET6;
		break;
	case 'H':
		seen->human = 1;
		break;
	case 'R':
		seen->human = 0;
		break;
	case 'J':
		cfg->json = 1;
		break;
	case 'S':
		if (strncmp(optarg, "sim:", 4) || !optarg[4])
			opt_usage_error("bad server clock '%s' (sim:PATH)", optarg);
		cfg->server_clock = optarg;
		break;
	case 'p':
		if (pair_parse(optarg, cfg))
			opt_usage_error("bad pair '%s' (CLIENT,SERVER: two different names "
					"of A-Z a-z 0-9 _ . -, up to %d bytes)", optarg,
					PROBE_PAIR_NAME_MAX);
		break;
	default:
		opt_other(c, usage);
	}
}

/* The options taken together: what they need of each other, and what
   follows from them. */
static void settle(struct probe_config *cfg, const struct seen *seen)
{
	int human = seen->human;

	if (cfg->once && (seen->count_given || cfg->duration > 0 || cfg->discipline || cfg->xleave))
		opt_usage_error("--once is one exchange: no --count, --duration, --discipline or --xleave");
	if (cfg->once)
		cfg->count = 1;
	/* Records for a pipe or a file, exactly as ever; a person at a
	   terminal gets lines to read; --once its one line anywhere, as
	   sntp and ntpdig give it, unless --records asks for the record. */
	if (cfg->json && human >= 0)
		opt_usage_error("--json excludes --human and --records");
	if (cfg->json && cfg->pair_client[0])
		opt_usage_error("--pair names the hosts of records: not with --json");
	if (cfg->pair_client[0] && (human == 1 || cfg->once))
		opt_usage_error("--pair names the hosts of records: not with --human or --once");
	if (cfg->pair_client[0])
		human = 0;
	cfg->once &= human != 0;
	cfg->human = cfg->once || cfg->json ? 0 : human >= 0 ? human : isatty(STDOUT_FILENO);
	if (cfg->ca && !cfg->nts)
		opt_usage_error("--ca needs --nts");
	if (seen->nts_port && !cfg->nts)
		opt_usage_error("--nts-port needs --nts");
	if (cfg->nts && nts_ke_server_parse(seen->nts_arg, cfg->ep.host, cfg->nts_host,
					    sizeof(cfg->nts_host), cfg->nts_port) < 0)
		opt_usage_error("bad NTS-KE server '%s'",
				seen->nts_arg ? seen->nts_arg : cfg->ep.host);
	opt_nts_port(seen->nts_arg, seen->nts_port, cfg->nts_port);
	if (seen->step_given && !cfg->discipline)
		opt_usage_error("--step-threshold needs --discipline");
	if (seen->window_given && !cfg->discipline)
		opt_usage_error("--window needs --discipline");
	if (cfg->timeout < 0)
		cfg->timeout = cfg->interval < NTPX_NS_PER_SEC ? cfg->interval : NTPX_NS_PER_SEC;
}

void probe_options(int argc, char **argv, struct probe_config *cfg)
{
	static const struct option longopts[] = {
		{ "once", no_argument, NULL, '1' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 'w' },
		{ "poll", required_argument, NULL, 'P' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "clock", required_argument, NULL, 'K' },
		{ "discipline", no_argument, NULL, 'D' },
		{ "step-threshold", required_argument, NULL, 'T' },
		{ "discipline-params", required_argument, NULL, 'X' },
		{ "window", required_argument, NULL, 'W' },
		{ "no-stamps", no_argument, NULL, 'N' },
		{ "xleave", no_argument, NULL, 'x' },
		{ "user", required_argument, NULL, 'u' },
		{ "nts", optional_argument, NULL, 'n' },
		{ "nts-port", required_argument, NULL, 'Y' },
		{ "ca", required_argument, NULL, 'A' },
		{ "human", no_argument, NULL, 'H' },
		{ "records", no_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'J' },
		{ "server-clock", required_argument, NULL, 'S' },
		{ "pair", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct seen seen = { .human = -1 };
	int c;

	defaults(cfg);
	while ((c = getopt_long(argc, argv, "1i:c:d:w:u:46h", longopts, NULL)) != -1)
		option(c, cfg, &seen);
	opt_endpoint(argc, argv, optind, &cfg->ep);
	cfg->ep.family = seen.family;
	settle(cfg, &seen);
}
