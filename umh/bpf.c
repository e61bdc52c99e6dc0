// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP program and its maps: bpffs, loading the embedded object, and
 * pinning. The maps are pinned by name under the pin directory, so a new
 * helper (or the same one after a crash) reuses them and offloaded traffic
 * keeps its rules and counters.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/libbpf.h>

#include "umh.h"
/* The test build of the datapath (make broken) has a skeleton of its own. */
#ifndef XDP_FLOW_SKEL_H
#define XDP_FLOW_SKEL_H "xdp_flow.skel.h"
#endif
#include XDP_FLOW_SKEL_H

#define BPFFS	"/sys/fs/bpf"

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char buf[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_msg(level == LIBBPF_WARN ? 4 : 6, "libbpf: %s", buf);
	return 0;
}

/* virtme-ng guests (and some hosts) boot without bpffs mounted. */
int dp_mount_bpffs(void)
{
	struct statfs st;

	if (!statfs(BPFFS, &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700")) {
		pr_err("cannot mount bpffs at %s: %s", BPFFS, strerror(errno));
		return -errno;
	}
	pr_info("mounted bpffs at %s", BPFFS);
	return 0;
}

static struct xdp_flow_bpf *dp_try_open(const char *pin_dir)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pin_dir);
	struct xdp_flow_bpf *skel;
	struct bpf_map *map;
	int err;

	skel = xdp_flow_bpf__open_opts(&opts);
	if (!skel)
		return NULL;
	/* Tests run the program without touching a live helper's pins. */
	if (!pin_dir)
		bpf_object__for_each_map(map, skel->obj)
			bpf_map__set_pin_path(map, NULL);
	err = xdp_flow_bpf__load(skel);
	if (err) {
		xdp_flow_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/*
 * Pinned maps of another layout (an older helper) cannot be reused; start
 * over with fresh ones rather than not at all.
 */
static void dp_remove_pinned_maps(const char *pin_dir)
{
	static const char *const names[] = {
		"xf_rules", "xf_counters", "xf_flows", "xf_masks",
		"xf_rule_defs", "xf_gen",
	};
	char path[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", pin_dir, names[i]);
		unlink(path);
	}
}

/* Opens and loads the program; with @pin_dir, reusing the maps pinned there. */
struct xdp_flow_bpf *dp_open(const char *pin_dir)
{
	struct xdp_flow_bpf *skel;

	libbpf_set_print(libbpf_log);
	if (pin_dir && mkdir(pin_dir, 0700) && errno != EEXIST) {
		pr_err("cannot create %s: %s", pin_dir, strerror(errno));
		return NULL;
	}
	skel = dp_try_open(pin_dir);
	if (!skel && pin_dir) {
		pr_info("cannot reuse the maps pinned in %s (%s), creating new ones",
			pin_dir, strerror(errno));
		dp_remove_pinned_maps(pin_dir);
		skel = dp_try_open(pin_dir);
	}
	if (!skel)
		pr_err("cannot load the XDP program: %s", strerror(errno));
	return skel;
}

int dp_prog_fd(struct xdp_flow_bpf *skel)
{
	return bpf_program__fd(skel->progs.xdp_flow);
}

/* The same datapath as a TC-BPF program, for the tc hook. */
int dp_tc_prog_fd(struct xdp_flow_bpf *skel)
{
	return bpf_program__fd(skel->progs.xdp_flow_tc);
}

void dp_close(struct xdp_flow_bpf *skel)
{
	xdp_flow_bpf__destroy(skel);
}

/* Unpins every map and removes @pin_dir (links must be gone already). */
int dp_unpin(struct xdp_flow_bpf *skel, const char *pin_dir)
{
	int err;

	err = bpf_object__unpin_maps(skel->obj, NULL);
	if (err)
		pr_err("cannot unpin maps: %s", strerror(-err));
	if (rmdir(pin_dir) && errno != ENOENT) {
		pr_err("cannot remove %s: %s", pin_dir, strerror(errno));
		return -errno;
	}
	return err;
}
