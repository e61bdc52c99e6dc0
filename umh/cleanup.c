// SPDX-License-Identifier: GPL-2.0
/*
 * --cleanup: remove what a helper that is gone left behind. The module runs
 * it after killing a stopped or hung helper at unload, so that no program of
 * ours stays on a device and nothing stays pinned. So it needs nothing but
 * bpffs (no module, no program of its own) and never waits long.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "umh.h"

/* A killed helper lets go of the lock at once; a hung one may never. */
#define CLEANUP_LOCK_MS	3000

struct cleanup {
	DIR *dir;
	unsigned int nr_detached;
	unsigned int nr_removed;
};

static void pin_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", XDP_FLOW_PIN_DIR, name);
}

static void remove_pin(struct cleanup *c, const char *name)
{
	char path[512];

	pin_path(name, path, sizeof(path));
	if (unlink(path))
		pr_err("cannot remove %s: %s", path, strerror(errno));
	else
		c->nr_removed++;
}

/*
 * Takes one pinned link's program off its device, then removes the pin. A
 * link that cannot be detached keeps its pin: it is the only handle left.
 */
static void cleanup_link(struct cleanup *c, const char *name)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info), ifindex;
	char path[512];
	int fd;

	if (sscanf(name, "link_%u", &ifindex) != 1) {
		remove_pin(c, name);	/* not one of ours after all */
		return;
	}
	pin_path(name, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0) {
		pr_err("cannot open %s: %s", path, strerror(errno));
		return;
	}
	/* The device went away (ifindex 0): the link is dead already. */
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.xdp.ifindex) {
		if (bpf_link_detach(fd) && errno != ENOENT &&
		    errno != EINVAL && errno != ENOLINK) {
			pr_err("cannot detach %s: %s", path, strerror(errno));
			close(fd);
			return;
		}
		pr_info("detached the datapath from ifindex %u", ifindex);
		c->nr_detached++;
	}
	close(fd);
	remove_pin(c, name);
}

/* @links: the link_<ifindex> pins, else all the others (the maps). */
static void cleanup_pass(struct cleanup *c, bool links)
{
	struct dirent *de;
	bool link;

	rewinddir(c->dir);
	while ((de = readdir(c->dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		link = !strncmp(de->d_name, "link_", 5);
		if (link != links)
			continue;
		if (links)
			cleanup_link(c, de->d_name);
		else
			remove_pin(c, de->d_name);
	}
}

/**
 * cleanup_run() - detach every pinned link, remove every pin and the pin dir
 *
 * Return: the exit status: 0 if the pin directory is gone, 1 otherwise.
 */
int cleanup_run(void)
{
	struct cleanup c = {};
	int lock_fd;

	if (!dp_bpffs_mounted()) {
		pr_info("nothing pinned (no bpffs mounted)");
		return 0;
	}
	lock_fd = dp_lock_pin_dir(XDP_FLOW_PIN_DIR, false, CLEANUP_LOCK_MS);
	if (lock_fd == -ENOENT) {
		pr_info("nothing pinned (no %s)", XDP_FLOW_PIN_DIR);
		return 0;
	}
	if (lock_fd == -ETIMEDOUT)
		pr_info("the previous helper still holds %s after %d ms; cleaning up anyway",
			XDP_FLOW_PIN_DIR, CLEANUP_LOCK_MS);
	else if (lock_fd < 0)
		pr_err("cannot lock %s: %s; cleaning up anyway",
		       XDP_FLOW_PIN_DIR, strerror(-lock_fd));

	c.dir = opendir(XDP_FLOW_PIN_DIR);
	if (c.dir) {
		cleanup_pass(&c, true);
		cleanup_pass(&c, false);
		closedir(c.dir);
	} else if (errno != ENOENT) {
		pr_err("cannot read %s: %s", XDP_FLOW_PIN_DIR, strerror(errno));
	}
	if (rmdir(XDP_FLOW_PIN_DIR) && errno != ENOENT)
		pr_err("cannot remove %s: %s", XDP_FLOW_PIN_DIR,
		       strerror(errno));
	if (lock_fd >= 0)
		close(lock_fd);
	pr_info("cleanup: detached %u links, removed %u pins", c.nr_detached,
		c.nr_removed);
	return access(XDP_FLOW_PIN_DIR, F_OK) ? 0 : 1;
}
