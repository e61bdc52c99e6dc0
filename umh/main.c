// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow_umh: the user-mode helper of xdp_flow.
 *
 * Started by the module with call_usermodehelper (no file descriptors at
 * all, initial namespaces, --log=kmsg), or by hand with --driver for tests.
 * It loads the XDP program (reusing the pinned maps of a previous instance),
 * takes over the pinned links, and serves the module's requests. With
 * --cleanup it only removes what a helper that is gone left behind.
 */
#define _GNU_SOURCE	/* SCHED_BATCH */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "umh.h"

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: xdp_flow_umh [--log=stderr|kmsg] [--reply-fd=N] [--driver] [--no-pin]\n"
		"                    [--load-all] [-v]\n"
		"       xdp_flow_umh --cleanup [--log=stderr|kmsg]\n"
		"  --log=kmsg   log to /dev/kmsg (as started by the module)\n"
		"  --reply-fd=N answer the module's requests on descriptor N (the\n"
		"               module gives it)\n"
		"  --max-masks=N, --max-flows=N\n"
		"               masks and flow entries rules may use in the XDP\n"
		"               tables (default 255 and 130048; most 255 and\n"
		"               1047552)\n"
		"  --max-rules=N rule ids, the top 1024 for shields (2048-131072,\n"
		"               default 131072)\n"
		"  --driver     read requests as text lines on stdin (tests)\n"
		"  --no-pin     do not pin (driver tests only)\n"
		"  --load-all   load both hooks' programs at start (by default\n"
		"               the one a veth gets, tc where the kernel has\n"
		"               tcx, else XDP; the other at its first device)\n"
		"  --step-delay-us=N\n"
		"               tests: each step of long work (taking over the\n"
		"               pinned state, SYNC) sleeps N us, so that it\n"
		"               outlasts the module's timeouts\n"
		"  --cleanup    detach the pinned links, remove every pin and the\n"
		"               pin directory, and exit (no module needed)\n");
}

/*
 * The module's helper starts with no descriptors at all: without this, the
 * first socket or map would become fd 0-2, and a stray printf() would write
 * into it.
 */
static void std_fds_open(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDWR) != fd)
			_exit(127);	/* nowhere to say why */
}

/* The load watcher's report: before HELLO, so it names no request. */
static void umh_load_progress(void *arg)
{
	struct umh *u = arg;

	u->progress(u, 0);
}

/* The attach worker's, while it loads a hook's program for request @seq. */
static void umh_attach_progress(void *arg, __u32 seq)
{
	struct umh *u = arg;

	u->progress(u, seq);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "reply-fd", required_argument, NULL, 'r' },
		{ "max-masks", required_argument, NULL, 'm' },
		{ "max-flows", required_argument, NULL, 'f' },
		{ "max-rules", required_argument, NULL, 'R' },
		{ "step-delay-us", required_argument, NULL, 's' },
		{ "driver", no_argument, NULL, 'd' },
		{ "no-pin", no_argument, NULL, 'n' },
		{ "load-all", no_argument, NULL, 'a' },
		{ "cleanup", no_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	enum log_dest dest = LOG_DEST_STDERR;
	bool driver = false, pin = true, verbose = false, cleanup = false;
	bool load_all = false;
	enum dp_hook hook;
	unsigned long max_masks = XDP_FLOW_MAX_MASKS - 1;
	unsigned long max_flows = XDP_FLOW_DEFAULT_FLOWS;
	unsigned long max_rules = XDP_FLOW_MAX_RULES;
	struct umh u = { .reply_fd = -1, .pin_fd = -1 };
	int c, ret = 1, lock_fd;
	long long start;
	char *end;

	start = dp_now_ms();
	std_fds_open();
	/* Exec'd as /proc/self/fd/N, the kernel names us "N". */
	prctl(PR_SET_NAME, "xdp_flow_umh");
	/*
	 * Each request wakes us: a batch task does not preempt the one that
	 * woke it (tc, a daemon), which would otherwise lose its CPU once per
	 * rule it adds. Our share of the CPU stays the same.
	 */
	sched_setscheduler(0, SCHED_BATCH, &(struct sched_param){ 0 });

	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (!strcmp(optarg, "kmsg"))
				dest = LOG_DEST_KMSG;
			else if (strcmp(optarg, "stderr"))
				goto bad_usage;
			break;
		case 'r':
			errno = 0;
			u.reply_fd = strtol(optarg, &end, 10);
			if (errno || *end || u.reply_fd < 0 ||
			    fcntl(u.reply_fd, F_GETFD) < 0)
				goto bad_usage;
			break;
		case 'm':
		case 'f':
		case 'R':
			errno = 0;
			*(c == 'm' ? &max_masks : c == 'f' ? &max_flows :
			  &max_rules) = strtoul(optarg, &end, 10);
			if (errno || *end)
				goto bad_usage;
			break;
		case 's':
			errno = 0;
			u.step_delay_us = strtoul(optarg, &end, 10);
			if (errno || *end || u.step_delay_us > 1000000)
				goto bad_usage;
			break;
		case 'd':
			driver = true;
			break;
		case 'n':
			pin = false;
			break;
		case 'a':
			load_all = true;
			break;
		case 'c':
			cleanup = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			goto bad_usage;
		}
	}
	if (cleanup && (driver || !pin))
		goto bad_usage;
	/* Started without descriptors, the module's reply socket is one of
	 * 0-2: move it out of the way of stdio.
	 */
	if (u.reply_fd >= 0 && u.reply_fd <= 2) {
		int fd = fcntl(u.reply_fd, F_DUPFD_CLOEXEC, 3);

		if (fd < 0)
			return 1;
		close(u.reply_fd);
		u.reply_fd = fd;
		std_fds_open();
	}
	log_init(dest, verbose);
	/* A REPLY to a module that went away must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if (cleanup)
		return cleanup_run();

	if (!driver) {
		u.family = genl_check_family();
		if (u.family < 0)
			return 1;
		u.progress = genl_progress;
	}
	if (!max_masks || max_masks > XDP_FLOW_MAX_MASKS - 1 || !max_flows ||
	    max_flows > XDP_FLOW_MAX_FLOWS ||
	    max_rules < XDP_FLOW_MIN_RULES || max_rules > XDP_FLOW_MAX_RULES) {
		pr_err("--max-masks=%lu, --max-flows=%lu or --max-rules=%lu out of range (1-%u, 1-%u, %u-%u)",
		       max_masks, max_flows, max_rules, XDP_FLOW_MAX_MASKS - 1,
		       XDP_FLOW_MAX_FLOWS, XDP_FLOW_MIN_RULES,
		       XDP_FLOW_MAX_RULES);
		return 2;
	}
	if (pin) {
		if (dp_mount_bpffs())
			return 1;
		/* Held (never closed) until we exit. */
		lock_fd = dp_lock_pin_dir(XDP_FLOW_PIN_DIR, true, -1);
		if (lock_fd == -EPERM) {
			/*
			 * Someone else's (said why): nothing there is used,
			 * nor deleted. The datapath works, but does not
			 * outlive us: a restart drops to software until the
			 * replay.
			 */
			pr_err("running without pins: offloaded traffic goes to software while the helper restarts");
		} else if (lock_fd < 0) {
			pr_err("cannot lock %s: %s", XDP_FLOW_PIN_DIR,
			       strerror(-lock_fd));
			return 1;
		} else {
			u.pin_dir = XDP_FLOW_PIN_DIR;
			u.pin_fd = lock_fd;
		}
	}
	u.skel = dp_open(u.pin_fd, max_flows + XDP_FLOW_MAX_SHIELDS, max_rules,
			 u.progress ? umh_load_progress : NULL, &u);
	if (!u.skel)
		return 1;
	u.table = table_new(u.skel);
	u.attach = u.table ? attach_new(u.skel, u.pin_fd,
					u.progress ? umh_attach_progress : NULL,
					&u) : NULL;
	if (!u.table || !u.attach) {
		pr_err("out of memory");
		goto out;
	}
	if (table_set_limits(u.table, max_masks, max_flows))
		goto out;	/* checked above */
	/*
	 * The program of the hook a veth gets by default (tc where the
	 * kernel has tcx) now, before HELLO: its first rule then acts in XDP
	 * when TC returns. The other hook's waits for its first device.
	 */
	hook = attach_default_hook();
	if (attach_load(u.attach, hook) ||
	    (load_all && attach_load(u.attach, hook == DP_HOOK_TC ?
				     DP_HOOK_XDP : DP_HOOK_TC)))
		goto out;	/* dp_hook_load() said why */
	/* Taking over a large state takes a while: say so, HELLO comes. */
	table_set_progress(u.table, umh_progress, &u);
	if (table_recover(u.table) || attach_recover(u.attach)) {
		pr_err("cannot take over the pinned state");
		goto out;
	}
	pr_info("started (pid %d%s) in %lld ms", getpid(),
		driver ? ", test driver" : "", dp_now_ms() - start);

	ret = driver ? driver_run(&u) : genl_run(&u);
out:
	attach_free(u.attach);
	table_free(u.table);
	if (u.skel)
		dp_close(u.skel);
	return ret;

bad_usage:
	print_usage(stderr);
	return 2;
}
