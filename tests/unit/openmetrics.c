/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for lib/openmetrics.c: what it writes, to the stream it is
 * given, and a write that fails (a full device) is reported by om_end()
 * and stops the rest.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "openmetrics.h"

static void writes_to_its_stream(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct om m;

	(void)state;
	assert_non_null(f);
	om_init(&m, f, "udp://h\"x:123");
	om_gauge(&m, "ntpx_records", "Exchanges read.", 42);
	om_family(&m, "ntpx_delay_seconds", "summary", "Delay.");
	om_sample(&m, "ntpx_delay_seconds", "quantile=\"0.5\"", 1.25e-5);
	assert_int_equal(om_end(&m), 0);
	assert_string_equal(buf,
			    "# HELP ntpx_records Exchanges read.\n"
			    "# TYPE ntpx_records gauge\n"
			    "ntpx_records{endpoint=\"udp://h\\\"x:123\",transport=\"udp\"} 42\n"
			    "# HELP ntpx_delay_seconds Delay.\n"
			    "# TYPE ntpx_delay_seconds summary\n"
			    "ntpx_delay_seconds{endpoint=\"udp://h\\\"x:123\",transport=\"udp\","
			    "quantile=\"0.5\"} 1.25e-05\n");
	fclose(f);
	free(buf);
}

/* Unbuffered, so that the first write meets the full device itself. */
static void full_device_is_an_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	struct om m;

	(void)state;
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	om_init(&m, f, NULL);
	om_gauge(&m, "ntpx_records", "Exchanges read.", 1);
	assert_int_equal(m.err, ENOSPC);
	om_gauge(&m, "ntpx_ok_records", "Exchanges fitted.", 1);
	assert_int_equal(om_end(&m), -ENOSPC);
	fclose(f);
}

/* Buffered: the writes succeed and the flush at the end fails. */
static void full_device_at_the_flush(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	struct om m;

	(void)state;
	if (!f)
		skip();
	om_init(&m, f, "udp://127.0.0.1:123");
	om_gauge(&m, "ntpx_records", "Exchanges read.", 1);
	assert_int_equal(m.err, 0);
	assert_int_equal(om_end(&m), -ENOSPC);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writes_to_its_stream),
		cmocka_unit_test(full_device_is_an_error),
		cmocka_unit_test(full_device_at_the_flush),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
