/* SPDX-License-Identifier: ISC */
/*
 * fakesync.so - LD_PRELOAD shim, a mock: the kernel's synchronisation
 * state as adjtimex(2) reads it (modes 0), set by a test.  What it stands
 * for cannot be made real here without changing the host's clock state,
 * which no test does: a daemon would have to discipline the clock (or
 * stop) for the kernel to say synchronised (or not).
 *
 * FAKESYNC_FILE names a file read at every call: one word, "unsynced"
 * (STA_UNSYNC, TIME_ERROR, maxerror 16 s), "synced" (TIME_OK), "insert"
 * or "delete" (synchronised, a leap second to insert or delete: STA_INS,
 * STA_DEL), then optionally the maximum error in us (default 1000).  A
 * call with modes != 0, a change, is refused (EPERM) and noted in
 * FAKESYNC_FILE.changes, so that a test sees that none was tried.
 * Without FAKESYNC_FILE, or when it cannot be read, the real call.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>

int adjtimex(struct timex *tx);
int ntp_adjtime(struct timex *tx);
int __adjtimex(struct timex *tx);
int clock_adjtime(clockid_t clk, struct timex *tx);

/* The state in the file into @tx; its kernel state, or -1 to call the
   real one. */
static int fake(struct timex *tx)
{
	const char *path = getenv("FAKESYNC_FILE");
	char word[16] = "", changes[512];
	long maxerr = 1000;
	FILE *f;
	int n;

	if (!path || !(f = fopen(path, "r")))
		return -1;
	n = fscanf(f, "%15s %ld", word, &maxerr);
	fclose(f);
	if (n < 1)
		return -1;
	if (tx->modes) {
		snprintf(changes, sizeof(changes), "%s.changes", path);
		if ((f = fopen(changes, "a"))) {
			fprintf(f, "modes=%#x\n", tx->modes);
			fclose(f);
		}
		errno = EPERM;
		return -2;
	}
	memset(tx, 0, sizeof(*tx));
	tx->maxerror = maxerr;
	tx->esterror = maxerr;
	if (strcmp(word, "unsynced") == 0) {
		tx->status = STA_UNSYNC;
		tx->maxerror = 16000000;
		return TIME_ERROR;
	}
	if (strcmp(word, "insert") == 0) {
		tx->status = STA_INS;
		return TIME_INS;
	}
	if (strcmp(word, "delete") == 0) {
		tx->status = STA_DEL;
		return TIME_DEL;
	}
	return TIME_OK;
}

static int real(const char *name, struct timex *tx)
{
	int (*f)(struct timex *) = (int (*)(struct timex *))dlsym(RTLD_NEXT, name);

	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(tx);
}

#define FAKE_OR_REAL(name)			\
	int rc = fake(tx);			\
						\
	if (rc == -2)				\
		return -1;			\
	return rc >= 0 ? rc : real(name, tx)

int adjtimex(struct timex *tx) { FAKE_OR_REAL("adjtimex"); }
int ntp_adjtime(struct timex *tx) { FAKE_OR_REAL("ntp_adjtime"); }
int __adjtimex(struct timex *tx) { FAKE_OR_REAL("__adjtimex"); }

int clock_adjtime(clockid_t clk, struct timex *tx)
{
	int (*f)(clockid_t, struct timex *);
	int rc = clk == CLOCK_REALTIME ? fake(tx) : -1;

	if (rc == -2)
		return -1;
	if (rc >= 0)
		return rc;
	f = (int (*)(clockid_t, struct timex *))dlsym(RTLD_NEXT, "clock_adjtime");
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(clk, tx);
}
