/* SPDX-License-Identifier: ISC */
/* libFuzzer target: endpoint URLs and the option parsers. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "transport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), err[256];
	struct endpoint ep;
	int64_t ns;
	double d;
	uint64_t n;
	int frac;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (transport_parse_endpoint(s, &ep, err, sizeof(err)) == 0) {
		int i;

		for (i = 0; i < ep.nparams; i++)
			if (endpoint_param(&ep, ep.param[i].key) != ep.param[i].value)
				__builtin_trap();
	} else if (strchr(err, '\n')) {
		__builtin_trap();	/* errors are one line */
	}
	(void)opt_duration(s, 1, &ns);
	(void)opt_ppm(s, &d);
	(void)opt_rate(s, &d, &frac);
	(void)opt_count(s, UINT64_MAX, &n);
	free(s);
	return 0;
}
