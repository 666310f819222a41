/* SPDX-License-Identifier: ISC */
/*
 * lib/xdp_quiet.c with the real libbpf: its print hook is the process's,
 * and several XDP ports, closed in any order, leave the caller's hook in
 * place only once the last has gone.  libbpf is made to warn for real, by
 * handing it an object that is not ELF.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/libbpf.h>

#include "xdp_quiet_private.h"

static int caller_lines;	/* what reached the caller's hook */

static int caller_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	caller_lines++;
	return 0;
}

/* Has libbpf warn once (not ELF): nothing is opened. */
static void libbpf_warns(void)
{
	static const char junk[64] = "not an ELF object";
	struct bpf_object *obj = bpf_object__open_mem(junk, sizeof(junk), NULL);

	assert_null(obj);
}

/* Whether libbpf prints to the caller's hook now. */
static int caller_hears(void)
{
	int before = caller_lines;

	libbpf_warns();
	return caller_lines > before;
}

static int setup(void **state)
{
	libbpf_set_print(caller_print);
	caller_lines = 0;
	return 0;
}

/* One port: quiet while it is open, its warning kept; the caller's hook back after. */
static void test_one_port(void **state)
{
	xdp_quiet_hold();
	xdp_quiet_clear();
	assert_string_equal(xdp_quiet_last(), "");
	assert_false(caller_hears());
	assert_true(xdp_quiet_last()[0] != 0);
	assert_null(strchr(xdp_quiet_last(), '\n'));
	xdp_quiet_release();
	assert_true(caller_hears());
}

/* Two ports, the first closed first (out of the order they nest in). */
static void test_two_ports_first_closed_first(void **state)
{
	xdp_quiet_hold();	/* port A */
	xdp_quiet_hold();	/* port B */
	xdp_quiet_release();	/* A closes: B is still open and quiet */
	assert_false(caller_hears());
	xdp_quiet_release();	/* B closes: the caller's hook, not ours */
	assert_true(caller_hears());
	xdp_quiet_hold();	/* and a later port is quiet again */
	assert_false(caller_hears());
	xdp_quiet_release();
	assert_true(caller_hears());
}

/* Two ports closed last first. */
static void test_two_ports_nested(void **state)
{
	xdp_quiet_hold();
	xdp_quiet_hold();
	xdp_quiet_release();
	assert_false(caller_hears());
	xdp_quiet_release();
	assert_true(caller_hears());
	xdp_quiet_release();	/* one release too many changes nothing */
	assert_true(caller_hears());
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_one_port, setup),
		cmocka_unit_test_setup(test_two_ports_first_closed_first, setup),
		cmocka_unit_test_setup(test_two_ports_nested, setup),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
