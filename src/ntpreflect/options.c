/* SPDX-License-Identifier: ISC */
/*
 * ntpreflect's command line into a struct reflect_config (ntpreflect.h):
 * every value checked here, with one line and exit 2 for a bad one.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "access.h"
#include "ntp.h"
#include "nts_ke.h"
#include "opt.h"
#include "transport.h"
#include "ntpreflect.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: %s [options] ENDPOINT\n"
	       "Serve NTPv4 to clients on ENDPOINT (udp://0.0.0.0:123, udp://127.0.0.1:12300,\n"
	       "uudp://*:123?dev=IF, ib://HOST:123).\n\n"
	       "      --stratum N      serve a local reference at stratum N, 1..15, whatever\n"
	       "                       the host's clock (default: as the kernel says it is\n"
	       "                       synchronised: leap 3 and stratum 16 while it is not)\n"
	       "      --refid ID       the local reference's ID, up to 4 ASCII characters\n"
	       "                       (default NTPX; alone: a local reference at stratum 1)\n"
	       "      --clock NAME     read T2/T3 from NAME: realtime (default) or sim:PATH,\n"
	       "                       a simulated clock (a local reference at --stratum,\n"
	       "                       default 1: the kernel knows nothing of its state)\n"
	       "      --quiet          no line on stderr at startup saying what is served\n"
	       "  -c, --count N        exit after answering N requests\n"
	       "  -l, --log FILE       write server-side records to FILE (- for stdout)\n"
	       "      --poll MODE      block (default) or busy\n"
	       "      --clients N      interleaved-mode state for N clients (default 16384)\n"
	       "      --no-stamps      no kernel or hardware stamps\n"
	       "  -u, --user NAME      run as NAME once the endpoint is open\n"
	       "  -a, --allow CIDR     answer only clients in CIDR (repeatable; default all)\n"
	       "      --ratelimit RATE[/BURST]  per client address: RATE requests a second,\n"
	       "                       BURST at once (default 8); over it a RATE kiss, at\n"
	       "                       most RATE a second, else silence (default off)\n"
	       "      --nts-cert FILE  serve Network Time Security (RFC 8915): NTS-KE on\n"
	       "                       TCP with this certificate chain (PEM), NTS-protected\n"
	       "                       requests answered authenticated, plain ones as ever\n"
	       "      --nts-key FILE   the certificate's private key (PEM)\n"
	       "      --nts-port PORT  NTS-KE's TCP port (default 4460)\n"
	       "      --nts-rotate DUR the cookie key's period (default 1h); cookies under\n"
	       "                       it and the 2 keys before it are accepted\n"
	       "  -4, -6               resolve HOST to an IPv4 / IPv6 address only\n"
	       "  -h, --help           this text\n"
	       "      --version        the version\n\n"
	       "On a terminal, one line on stderr at startup says what is served; counts\n"
	       "of what was answered and ignored go to stderr at exit.\n", ntpx_prog);
}

/* Options with no letter of their own (ntpx(7), OPTIONS). */
enum { OPT_STRATUM = 256, OPT_REFID, OPT_NTS_CERT, OPT_NTS_KEY, OPT_NTS_PORT, OPT_NTS_ROTATE,
       OPT_QUIET, OPT_CLOCK };

void reflect_options(int argc, char **argv, struct reflect_config *cfg)
{
	static const struct option longopts[] = {
		{ "stratum", required_argument, NULL, OPT_STRATUM },
		{ "refid", required_argument, NULL, OPT_REFID },
		{ "count", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'l' },
		{ "poll", required_argument, NULL, 'P' },
		{ "clients", required_argument, NULL, 'C' },
		{ "no-stamps", no_argument, NULL, 'N' },
		{ "user", required_argument, NULL, 'u' },
		{ "allow", required_argument, NULL, 'a' },
		{ "ratelimit", required_argument, NULL, 'R' },
		{ "nts-cert", required_argument, NULL, OPT_NTS_CERT },
		{ "nts-key", required_argument, NULL, OPT_NTS_KEY },
		{ "nts-port", required_argument, NULL, OPT_NTS_PORT },
		{ "nts-rotate", required_argument, NULL, OPT_NTS_ROTATE },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "clock", required_argument, NULL, OPT_CLOCK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	char err[256];
	int c, family = 0;

	*cfg = (struct reflect_config){
		.stratum = 1,
		.count = UINT64_MAX,
		.nclients = 16384,
		.poll = TRANSPORT_POLL_BLOCK,
		.nts_port = NTS_KE_PORT,
		.nts_rotate = 3600 * NTPX_NS_PER_SEC,
		.clockname = "realtime",
	};
	ntp_refid_parse("NTPX", &cfg->refid);
	while ((c = getopt_long(argc, argv, "c:l:u:a:46hs:r:n:", longopts, NULL)) != -1) {
		switch (c) {
		case '4':
			family = AF_INET;
			break;
		case '6':
			family = AF_INET6;
			break;
		case 's':
			opt_old("-s", "--stratum");
			/* fall through */
		case OPT_STRATUM:
			if (opt_count(optarg, 15, &cfg->stratum) || cfg->stratum < 1)
				opt_usage_error("bad stratum '%s' (1..15)", optarg);
			cfg->local = 1;
			break;
		case 'r':
			opt_old("-r", "--refid");
			/* fall through */
		case OPT_REFID:
			if (ntp_refid_parse(optarg, &cfg->refid))
				opt_usage_error("bad refid '%s' (1 to 4 printable ASCII characters)",
						optarg);
			cfg->local = 1;
			break;
		case 'n':
			opt_old("-n", "-c (--count)");
			/* fall through */
		case 'c':
			opt_stop_count(optarg, &cfg->count);
			break;
		case 'l':
			cfg->logpath = optarg;
			break;
		case 'P':
			opt_poll(optarg, &cfg->poll);
			break;
		case 'C':
			if (opt_count(optarg, (uint64_t)1 << 30, &cfg->nclients) ||
			    cfg->nclients == 0)
				opt_usage_error("bad client count '%s'", optarg);
			break;
		case 'N':
			cfg->nostamps = 1;
			break;
		case 'u':
			cfg->user = optarg;
			break;
		case 'a':
			if (cfg->nallow == MAX_ALLOW)
				opt_usage_error("too many --allow (%d at most)", MAX_ALLOW);
			if (access_net_parse(optarg, &cfg->allow[cfg->nallow], err, sizeof(err)))
				opt_usage_error("%s", err);
			cfg->nallow++;
			break;
		case 'R':
			if (ratelimit_parse(optarg, &cfg->rl_rate, &cfg->rl_burst, err, sizeof(err)))
				opt_usage_error("%s", err);
			break;
		case OPT_NTS_CERT:
			cfg->nts_cert = optarg;
			break;
		case OPT_NTS_KEY:
			cfg->nts_key = optarg;
			break;
		case OPT_NTS_PORT:
			if (opt_count(optarg, 65535, &cfg->nts_port) || cfg->nts_port == 0)
				opt_usage_error("bad NTS-KE port '%s'", optarg);
			break;
		case OPT_QUIET:
			cfg->quiet = 1;
			break;
		case OPT_CLOCK:
			cfg->clockname = optarg;
			break;
		case OPT_NTS_ROTATE:
			if (opt_duration(optarg, 0, &cfg->nts_rotate) || cfg->nts_rotate <= 0)
				opt_usage_error("bad key rotation period '%s'", optarg);
			break;
		default:
			opt_other(c, usage);
		}
	}
	opt_endpoint(argc, argv, optind, &cfg->ep);
	cfg->ep.family = family;
	/* A sim: clock's synchronisation is no state of the kernel's: it is
	   a local reference (doc/ntpreflect.1). */
	if (strncmp(cfg->clockname, "sim:", 4) == 0)
		cfg->local = 1;
	if (!cfg->nts_cert != !cfg->nts_key)
		opt_usage_error("--nts-cert and --nts-key go together");
}
