/* SPDX-License-Identifier: ISC */
/*
 * clockstate - test helper: prints the state of the system clock's
 * discipline that a time daemon could change, read with adjtimex(2) and
 * modes = 0 (which changes nothing):
 *
 *     status=N offset=N freq=N esterror=N constant=N tick=N tai=N
 *
 * The interop tests print it before and after a daemon runs and compare.
 * maxerror is left out: the kernel grows it by itself every second.
 * Exit 0, or 1 when adjtimex fails.
 */
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

int main(void)
{
	struct timex tx;

	memset(&tx, 0, sizeof(tx));
	tx.modes = 0;
	if (adjtimex(&tx) < 0) {
		perror("clockstate: adjtimex");
		return 1;
	}
	printf("status=%d offset=%ld freq=%ld esterror=%ld constant=%ld tick=%ld tai=%d\n",
	       tx.status, (long)tx.offset, (long)tx.freq, (long)tx.esterror,
	       (long)tx.constant, (long)tx.tick, tx.tai);
	return fflush(stdout) ? 1 : 0;
}
