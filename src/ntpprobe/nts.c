/* SPDX-License-Identifier: ISC */
/*
 * ntpprobe --nts: NTS-KE (lib/nts_tls.c) at the start and whenever the
 * cookies run out or a NAK asks for it; the exchanges themselves carry
 * the fields of lib/nts_client.c (exchange.c).
 */
#include <stdio.h>
#include <sys/socket.h>

#include "log.h"
#include "nts_client.h"
#include "nts_tls.h"
#include "opt_units.h"
#include "ntpprobe.h"

int probe_nts_ke(struct probe *p)
{
	const struct probe_config *cfg = p->cfg;
	/* Static: the response holds 8 cookies of up to 256 bytes. */
	static struct nts_ke_msg resp;
	struct nts_keys keys;
	char err[512];
	int family = cfg->ep.family;

	p->nts_ke_runs++;
	if (nts_tls_client(cfg->nts_host, cfg->nts_port, cfg->ca, family ? family : AF_UNSPEC,
			   cfg->timeout > NTPX_KE_TIMEOUT_NS ? cfg->timeout : NTPX_KE_TIMEOUT_NS,
			   &resp, &keys, err, sizeof(err)) < 0 ||
	    nts_client_set(p->nts, &keys, &resp, err, sizeof(err)) < 0) {
		ntpx_err("%s", err);
		return -1;
	}
	if (resp.server[0] || resp.port >= 0)
		snprintf(p->nts_server, sizeof(p->nts_server), "%s:%d",
			 resp.server[0] ? resp.server : "-", resp.port >= 0 ? resp.port & 0xffff : 123);
	return 0;
}
