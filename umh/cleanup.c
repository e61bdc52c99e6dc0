// SPDX-License-Identifier: GPL-2.0
/*
 * --cleanup: remove what a helper that is gone left behind. The module runs
 * it after killing a stopped or hung helper at unload, so that no program of
 * ours stays on a device and nothing stays pinned. So it needs nothing but
 * bpffs (no module, no program of its own) and never waits long.
 *
 * Only what is ours goes: the pin directory must be ours (dp_open_pin_dir():
 * not a symlink, root's, mode 0700), else nothing in it is touched; in it,
 * only the pins a helper makes (its maps' names, link_<ifindex> of a link
 * running a program of ours: link_ours()), never a symlink, and the
 * directory itself only once it is empty.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "umh.h"

/* A killed helper lets go of the lock at once; a hung one may never. */
#define CLEANUP_LOCK_MS	3000

/* More than the maps a helper pins. */
#define CLEANUP_MAX_MAPS	64

struct cleanup {
	int dir_fd;
	DIR *dir;
	__u32 map_ids[CLEANUP_MAX_MAPS];	/* of the maps pinned here */
	unsigned int nr_maps;
	unsigned int nr_detached;
	unsigned int nr_removed;
	unsigned int nr_left;
};

static void remove_pin(struct cleanup *c, const char *name)
{
	if (unlinkat(c->dir_fd, name, 0))
		pr_err("cannot remove %s/%s: %s", XDP_FLOW_PIN_DIR, name,
		       strerror(errno));
	else
		c->nr_removed++;
}

static void leave_pin(struct cleanup *c, const char *name, const char *why)
{
	pr_info("leaving %s/%s: %s", XDP_FLOW_PIN_DIR, name, why);
	c->nr_left++;
}

/* The ids of the maps pinned under our names, for link_ours(). */
static void cleanup_map_ids(struct cleanup *c)
{
	struct bpf_map_info info;
	struct dirent *de;
	__u32 len;
	int fd;

	rewinddir(c->dir);
	while ((de = readdir(c->dir)) && c->nr_maps < CLEANUP_MAX_MAPS) {
		if (!dp_is_map_pin(de->d_name))
			continue;
		fd = dp_pin_get(c->dir_fd, de->d_name, "bpf-map");
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			c->map_ids[c->nr_maps++] = info.id;
		close(fd);
	}
}

/*
 * Is the link of @info ours: XDP or tcx, running a program of one of our
 * programs' names that uses a map pinned here? With no program of its
 * own, --cleanup has no tag to compare; a helper pins its maps before its
 * links and removes them after.
 */
static bool link_ours(const struct cleanup *c,
		      const struct bpf_link_info *info)
{
	__u32 ids[CLEANUP_MAX_MAPS], len, nr;
	struct bpf_prog_info pinfo;
	bool ours = false;
	unsigned int i, j;
	int pfd;

	if (info->type != BPF_LINK_TYPE_XDP &&
	    info->type != XF_BPF_LINK_TYPE_TCX)
		return false;
	pfd = bpf_prog_get_fd_by_id(info->prog_id);
	if (pfd < 0)
		return false;
	memset(&pinfo, 0, sizeof(pinfo));
	len = sizeof(pinfo);
	pinfo.nr_map_ids = CLEANUP_MAX_MAPS;
	pinfo.map_ids = (unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(pfd, &pinfo, &len) &&
	    dp_is_prog_name(pinfo.name)) {
		nr = pinfo.nr_map_ids < CLEANUP_MAX_MAPS ? pinfo.nr_map_ids :
			CLEANUP_MAX_MAPS;
		for (i = 0; i < nr && !ours; i++)
			for (j = 0; j < c->nr_maps && !ours; j++)
				ours = ids[i] == c->map_ids[j];
	}
	close(pfd);
	return ours;
}

/*
 * Takes one pinned link's program off its device, then removes the pin. A
 * link that cannot be detached keeps its pin: it is the only handle left.
 */
static void cleanup_link(struct cleanup *c, const char *name)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info), ifindex;
	char why[64];
	int fd;

	if (!attach_link_name_parse(name, &ifindex)) {
		leave_pin(c, name, "not a name of the helper's");
		return;
	}
	fd = dp_pin_get(c->dir_fd, name, "bpf-link");
	if (fd == -ENOENT)
		return;
	if (fd < 0) {
		leave_pin(c, name, fd == -EPERM ?
			  "not a pinned link (a symlink?)" : strerror(-fd));
		return;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !link_ours(c, &info)) {
		snprintf(why, sizeof(why), "its program (id %u) is not ours",
			 info.prog_id);
		leave_pin(c, name, why);
		close(fd);
		return;
	}
	/* The device went away (ifindex 0): the link is dead already. */
	if (info.xdp.ifindex) {
		if (bpf_link_detach(fd) && errno != ENOENT &&
		    errno != EINVAL && errno != ENOLINK) {
			pr_err("cannot detach %s/%s: %s", XDP_FLOW_PIN_DIR,
			       name, strerror(errno));
			close(fd);
			return;
		}
		pr_info("detached the datapath from ifindex %u", ifindex);
		c->nr_detached++;
	}
	close(fd);
	remove_pin(c, name);
}

/* A map's pin: one of our names, and a pin, not a symlink. */
static void cleanup_map(struct cleanup *c, const char *name)
{
	struct stat st;

	if (!dp_is_map_pin(name))
		leave_pin(c, name, "not a name of the helper's");
	else if (fstatat(c->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	else if (!S_ISREG(st.st_mode))
		leave_pin(c, name, S_ISLNK(st.st_mode) ? "a symlink" :
			  "not a pin");
	else
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
			cleanup_map(c, de->d_name);
	}
}

/**
 * cleanup_run() - detach every pinned link, remove every pin and the pin dir
 *
 * Return: the exit status: 0 if the pin directory is gone, 1 otherwise (a
 * directory not ours, or what is not ours in it, is left).
 */
int cleanup_run(void)
{
	struct cleanup c = { .dir_fd = -1 };
	int lock_fd, fd;

	if (!dp_bpffs_mounted()) {
		pr_info("nothing pinned (no bpffs mounted)");
		return 0;
	}
	lock_fd = dp_lock_pin_dir(XDP_FLOW_PIN_DIR, false, CLEANUP_LOCK_MS);
	if (lock_fd == -ENOENT) {
		pr_info("nothing pinned (no %s)", XDP_FLOW_PIN_DIR);
		return 0;
	}
	if (lock_fd == -EPERM) {
		pr_err("cleanup: %s is not the helper's: deleting nothing",
		       XDP_FLOW_PIN_DIR);
		return 1;
	}
	if (lock_fd == -ETIMEDOUT)
		pr_info("the previous helper still holds %s after %d ms; cleaning up anyway",
			XDP_FLOW_PIN_DIR, CLEANUP_LOCK_MS);
	else if (lock_fd < 0)
		pr_err("cannot lock %s: %s; cleaning up anyway",
		       XDP_FLOW_PIN_DIR, strerror(-lock_fd));

	/* Unlocked, still only the directory that is ours. */
	c.dir_fd = lock_fd >= 0 ? lock_fd :
		   dp_open_pin_dir(XDP_FLOW_PIN_DIR, false);
	if (c.dir_fd == -EPERM) {
		pr_err("cleanup: %s is not the helper's: deleting nothing",
		       XDP_FLOW_PIN_DIR);
		return 1;
	}
	if (c.dir_fd < 0) {
		if (c.dir_fd == -ENOENT)
			return 0;
		pr_err("cannot open %s: %s", XDP_FLOW_PIN_DIR,
		       strerror(-c.dir_fd));
		return 1;
	}
	/* A directory stream of its own: the lock's fd stays as it is. */
	fd = openat(c.dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	c.dir = fd < 0 ? NULL : fdopendir(fd);
	if (c.dir) {
		cleanup_map_ids(&c);
		cleanup_pass(&c, true);
		cleanup_pass(&c, false);
		closedir(c.dir);
	} else {
		pr_err("cannot read %s: %s", XDP_FLOW_PIN_DIR, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (c.nr_left)
		pr_info("not removing %s: %u entries not the helper's are left",
			XDP_FLOW_PIN_DIR, c.nr_left);
	else if (!dp_same_dir(c.dir_fd, XDP_FLOW_PIN_DIR))
		pr_err("not removing %s: no longer the directory cleaned",
		       XDP_FLOW_PIN_DIR);
	else if (rmdir(XDP_FLOW_PIN_DIR) && errno != ENOENT)
		pr_err("cannot remove %s: %s", XDP_FLOW_PIN_DIR,
		       strerror(errno));
	close(c.dir_fd);
	pr_info("cleanup: detached %u links, removed %u pins", c.nr_detached,
		c.nr_removed);
	return access(XDP_FLOW_PIN_DIR, F_OK) ? 0 : 1;
}
