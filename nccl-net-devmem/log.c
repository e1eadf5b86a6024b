// SPDX-License-Identifier: GPL-2.0
/*
 * Logging through the logger NCCL hands to init(), environment parsing and
 * randomness.  The logger is process-wide (NCCL passes the same function to
 * every init) and kept in an atomic.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "plugin.h"

static _Atomic(ncclDebugLogger_t) dm_logger;

void dm_set_logger(ncclDebugLogger_t fn)
{
	if (fn)
		atomic_store(&dm_logger, fn);
}

void dm_log(ncclDebugLogLevel level, unsigned long flags, const char *where, int line,
	    const char *fmt, ...)
{
	ncclDebugLogger_t fn = atomic_load(&dm_logger);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fn)
		fn(level, flags, where, line, "NET/" DM_PLUGIN_NAME " : %s", msg);
	else if (level == NCCL_LOG_WARN)
		fprintf(stderr, "NET/" DM_PLUGIN_NAME " WARN %s:%d %s\n", where, line, msg);
}

int dm_env_int(const char *name, int def, int min, int max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		DM_WARN("%s=\"%s\" is not an integer in [%d, %d]; using %d", name, s, min, max,
			def);
		return def;
	}
	return (int)v;
}

uint64_t dm_random64(void)
{
	static atomic_ulong fallback;
	uint64_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), 0) == (ssize_t)sizeof(v))
		return v;
	/* No getrandom: not secret, only unlikely to repeat. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec << 32 ^
	    (uint64_t)getpid() << 16 ^ atomic_fetch_add(&fallback, 0x632be59bd9b4e019ull);
	return v;
}

/* The coarse clock (a tick, a few ms): NCCL's proxy calls test() in a
 * loop, and every call reads this for the stall report.  The coarse clock
 * comes from the vDSO's data alone, where CLOCK_MONOTONIC may cost a
 * system call and a clocksource read (HPET in a guest without a stable
 * TSC: 20 M of 862 M instructions on the receiver's CPU for 256 MiB in the
 * guest bench's profile). */
uint64_t dm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
