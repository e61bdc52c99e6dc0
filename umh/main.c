// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow_umh: the user-mode helper of xdp_flow.
 *
 * Started by the module with call_usermodehelper (no stdio, initial
 * namespaces, --log=kmsg), or by hand with --driver for tests. It loads the
 * XDP program (reusing the pinned maps of a previous instance), takes over
 * the pinned links, and serves the module's requests.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "umh.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xdp_flow_umh [--log=stderr|kmsg] [--driver] [--no-pin] [-v]\n"
		"  --log=kmsg   log to /dev/kmsg (as started by the module)\n"
		"  --driver     read requests as text lines on stdin (tests)\n"
		"  --no-pin     do not pin (driver tests only)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "driver", no_argument, NULL, 'd' },
		{ "no-pin", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	enum log_dest dest = LOG_DEST_STDERR;
	bool driver = false, pin = true, verbose = false;
	struct umh u = {};
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (!strcmp(optarg, "kmsg"))
				dest = LOG_DEST_KMSG;
			else if (strcmp(optarg, "stderr"))
				goto bad_usage;
			break;
		case 'd':
			driver = true;
			break;
		case 'n':
			pin = false;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad_usage;
		}
	}
	log_init(dest, verbose);
	/* A REPLY to a module that went away must not kill us. */
	signal(SIGPIPE, SIG_IGN);

	if (!driver && genl_check_family())
		return 1;
	if (pin) {
		if (dp_mount_bpffs())
			return 1;
		u.pin_dir = XDP_FLOW_PIN_DIR;
	}
	u.skel = dp_open(u.pin_dir);
	if (!u.skel)
		return 1;
	u.table = table_new(u.skel);
	u.attach = u.table ? attach_new(dp_prog_fd(u.skel),
					dp_tc_prog_fd(u.skel), u.pin_dir) : NULL;
	if (!u.table || !u.attach) {
		pr_err("out of memory");
		goto out;
	}
	if (table_recover(u.table) || attach_recover(u.attach)) {
		pr_err("cannot take over the pinned state");
		goto out;
	}
	pr_info("started (pid %d%s)", getpid(), driver ? ", test driver" : "");

	ret = driver ? driver_run(&u) : genl_run(&u);
out:
	attach_free(u.attach);
	table_free(u.table);
	if (u.skel)
		dp_close(u.skel);
	return ret;

bad_usage:
	usage(stderr);
	return 2;
}
