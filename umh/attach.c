// SPDX-License-Identifier: GPL-2.0
/*
 * Datapath attachments, one bpf_link per device (XDP, or the TC hook's
 * program at ingress through tcx), pinned at
 * <pin dir>/link_<ifindex> so that the program stays on the device when the
 * helper dies and a new helper finds (and reuses) the link. A new helper
 * takes over only links that run a program of ours; others found there
 * are left as they are.
 *
 * Attaching and detaching take rtnl, and the module may hold rtnl while it
 * waits for the helper's answer to a rule request. So these run in a
 * worker thread, in the order they were asked for, and each reports back
 * through its own callback when done; the request loop never waits for them.
 *
 * Each hook's program is loaded (dp_hook_load()) when the first device of
 * that hook is attached, or a pinned link of that hook is found: most hosts
 * use one hook, and verifying a program is most of a helper's start. The
 * worker reports progress for the request meanwhile.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umh.h"

#define XF_MAX_LINKS	1024

struct dev_link {
	__u32 ifindex;
	__u32 xdp_mode;
	int fd;
	unsigned int epoch;	/* replay epoch that last attached it */
};

struct job {
	struct job *next;
	enum attach_op op;
	__u32 ifindex;
	__u32 xdp_mode;
	__u32 seq;
	attach_done_fn done;
	void *arg;
};

/* One of our programs, as the kernel has it. */
struct our_prog {
	__u32 id;
	char name[BPF_OBJ_NAME_LEN];
	__u8 tag[BPF_TAG_SIZE];
};

struct attach {
	struct xdp_flow_bpf *skel;	/* the maps the programs use */
	/* Each hook's program, once loaded (hook_prog_fd()). */
	struct xdp_flow_bpf *hook_skel[DP_NR_HOOKS];
	struct our_prog progs[DP_NR_HOOKS];
	attach_progress_fn progress;	/* NULL: nobody to tell */
	void *progress_arg;
	__u32 progress_seq;		/* the request a load is for */
	int pin_fd;			/* the pin directory; < 0: no pinning */
	unsigned int epoch;
	struct dev_link links[XF_MAX_LINKS];
	unsigned int nr_links;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* a job was queued, or stop */
	pthread_cond_t idle;		/* the queue ran empty */
	struct job *head, *tail;
	bool busy, stop, started;
};

static void link_name(__u32 ifindex, char *buf, size_t len)
{
	snprintf(buf, len, "link_%u", ifindex);
}

/* A name link_name() makes, nothing more or less: its ifindex in @ifindex. */
bool attach_link_name_parse(const char *name, __u32 *ifindex)
{
	char again[32];

	if (sscanf(name, "link_%u", ifindex) != 1)
		return false;
	link_name(*ifindex, again, sizeof(again));
	return !strcmp(name, again);
}

/* What the kernel has of @fd, one of our programs, for prog_ours(). */
static void our_prog_get(struct our_prog *p, int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	p->id = info.id;
	memcpy(p->name, info.name, sizeof(p->name));
	memcpy(p->tag, info.tag, sizeof(p->tag));
}

static void hook_load_progress(void *arg)
{
	struct attach *a = arg;

	a->progress(a->progress_arg, a->progress_seq);
}

/*
 * The program of @hook, loaded the first time it is asked for; or a
 * negative errno. Called by the worker, or with the worker idle.
 */
static int hook_prog_fd(struct attach *a, enum dp_hook hook)
{
	struct xdp_flow_bpf *inst = a->hook_skel[hook];

	if (!inst) {
		inst = dp_hook_load(a->skel, hook,
				    a->progress ? hook_load_progress : NULL, a);
		if (!inst)
			return -errno;
		a->hook_skel[hook] = inst;
		our_prog_get(&a->progs[hook], dp_hook_fd(inst, hook));
	}
	return dp_hook_fd(inst, hook);
}

static enum dp_hook mode_hook(__u32 xdp_mode)
{
	return xdp_mode == XDP_FLOW_XDP_MODE_TC ? DP_HOOK_TC : DP_HOOK_XDP;
}

/*
 * Is the program of id @id, which a link of @hook runs, one of ours: the
 * one we loaded for that hook, or (a previous helper's) of the same name
 * and tag, that is the same instructions?
 */
static bool prog_ours(struct attach *a, enum dp_hook hook, __u32 id)
{
	const struct our_prog *p = &a->progs[hook];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	bool ours = false;
	int fd;

	if (hook_prog_fd(a, hook) < 0)
		return false;
	if (p->id == id)
		return true;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		ours = p->id && !strncmp(info.name, p->name, sizeof(info.name)) &&
		       !memcmp(info.tag, p->tag, sizeof(info.tag));
	close(fd);
	return ours;
}

enum link_pin {
	LINK_PIN_NONE,		/* nothing there */
	LINK_PIN_OURS,		/* a link running a program of ours */
	LINK_PIN_OTHER,		/* anything else: leave it alone */
};

/*
 * What is pinned at @name in the pin directory. Ours only if it is a pin
 * (not a symlink: dp_pin_get()) of an XDP or tcx link whose program is one
 * of ours; then its fd in @fd and its info in @info. Else @why says what
 * it is.
 */
static enum link_pin link_pin_get(struct attach *a, const char *name,
				  int *fd, struct bpf_link_info *info,
				  char *why, size_t len)
{
	__u32 info_len = sizeof(*info);
	int err;

	memset(info, 0, sizeof(*info));
	*fd = dp_pin_get(a->pin_fd, name, "bpf-link");
	if (*fd == -ENOENT)
		return LINK_PIN_NONE;
	if (*fd < 0) {
		snprintf(why, len, "%s", *fd == -EPERM ?
			 "not a pinned link (a symlink?)" : strerror(-*fd));
		return LINK_PIN_OTHER;
	}
	err = bpf_obj_get_info_by_fd(*fd, info, &info_len) ? -errno : 0;
	if (err)
		snprintf(why, len, "%s", strerror(-err));
	else if (info->type != BPF_LINK_TYPE_XDP &&
		 info->type != XF_BPF_LINK_TYPE_TCX)
		snprintf(why, len, "a link of type %u", info->type);
	else if (!prog_ours(a, info->type == XF_BPF_LINK_TYPE_TCX ?
				 DP_HOOK_TC : DP_HOOK_XDP, info->prog_id))
		snprintf(why, len, "its program (id %u) is not ours",
			 info->prog_id);
	else
		return LINK_PIN_OURS;
	close(*fd);
	*fd = -1;
	return LINK_PIN_OTHER;
}

static struct dev_link *link_find(struct attach *a, __u32 ifindex)
{
	unsigned int i;

	for (i = 0; i < a->nr_links; i++)
		if (a->links[i].ifindex == ifindex)
			return &a->links[i];
	return NULL;
}

static void link_forget(struct attach *a, struct dev_link *l)
{
	close(l->fd);
	*l = a->links[--a->nr_links];
}

/* Takes the program off the device and removes the pin. */
static int link_destroy(struct attach *a, struct dev_link *l)
{
	char name[32];
	int err = 0;

	if (bpf_link_detach(l->fd) && errno != ENOLINK)
		err = -errno;
	if (a->pin_fd >= 0) {
		link_name(l->ifindex, name, sizeof(name));
		if (unlinkat(a->pin_fd, name, 0) && errno != ENOENT && !err)
			err = -errno;
	}
	link_forget(a, l);
	return err;
}

static const char *mode_name(__u32 xdp_mode)
{
	switch (xdp_mode) {
	case XDP_FLOW_XDP_MODE_NATIVE:
		return "xdp native";
	case XDP_FLOW_XDP_MODE_GENERIC:
		return "xdp generic";
	case XDP_FLOW_XDP_MODE_TC:
		return "tc (tcx ingress)";
	}
	return "?";
}

/* A new link of @ifindex, or a negative errno; @msg says why. */
static int link_create(struct attach *a, __u32 ifindex, __u32 xdp_mode,
		       char *msg, size_t len)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	int prog_fd = hook_prog_fd(a, mode_hook(xdp_mode));
	int fd, err;

	if (prog_fd < 0) {
		snprintf(msg, len, "attaching %s to ifindex %u: cannot load the program: %s",
			 mode_name(xdp_mode), ifindex, strerror(-prog_fd));
		return prog_fd;
	}
	opts.flags = xdp_mode == XDP_FLOW_XDP_MODE_GENERIC ?
		     XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	fd = xdp_mode == XDP_FLOW_XDP_MODE_TC ?
	     bpf_link_create(prog_fd, ifindex, XF_BPF_TCX_INGRESS, NULL) :
	     bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	if (fd >= 0)
		return fd;
	err = -errno;
	snprintf(msg, len, "attaching %s to ifindex %u: %s%s",
		 mode_name(xdp_mode), ifindex, strerror(-err),
		 xdp_mode == XDP_FLOW_XDP_MODE_TC && err == -EINVAL ?
		 " (tcx needs Linux 6.6 or later)" : "");
	return err;
}

/*
 * Pins @fd, a new link of ifindex @ifindex. What a helper left at its name
 * (a dead link of a device that went away) goes first; what is not ours
 * stays, and the new link is not pinned.
 */
static int link_pin(struct attach *a, int fd, __u32 ifindex, char *msg,
		    size_t len)
{
	struct bpf_link_info info;
	char name[32], path[PATH_MAX], why[96];
	int old_fd, err;

	link_name(ifindex, name, sizeof(name));
	switch (link_pin_get(a, name, &old_fd, &info, why, sizeof(why))) {
	case LINK_PIN_NONE:
		break;
	case LINK_PIN_OURS:
		close(old_fd);
		unlinkat(a->pin_fd, name, 0);
		break;
	case LINK_PIN_OTHER:
		snprintf(msg, len, "pinning %s: %s/%s is not ours (%s)", name,
			 XDP_FLOW_PIN_DIR, name, why);
		return -EEXIST;
	}
	dp_pin_path(a->pin_fd, name, path, sizeof(path));
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		snprintf(msg, len, "pinning %s: %s", name, strerror(-err));
		return err;
	}
	return 0;
}

static int do_attach(struct attach *a, __u32 ifindex, __u32 xdp_mode,
		     char *msg, size_t len)
{
	struct dev_link *l = link_find(a, ifindex);
	int fd, err;

	if (xdp_mode > XDP_FLOW_XDP_MODE_TC) {
		snprintf(msg, len, "unknown xdp mode %u", xdp_mode);
		return -EINVAL;
	}
	if (l && l->xdp_mode == xdp_mode) {
		l->epoch = a->epoch;	/* already there (a replay) */
		return 0;
	}
	if (l) {
		err = link_destroy(a, l);
		if (err) {
			snprintf(msg, len, "detaching to change mode: %s",
				 strerror(-err));
			return err;
		}
	}
	if (a->nr_links == XF_MAX_LINKS) {
		snprintf(msg, len, "too many devices (%u)", XF_MAX_LINKS);
		return -ENOSPC;
	}

	fd = link_create(a, ifindex, xdp_mode, msg, len);
	if (fd < 0)
		return fd;
	if (a->pin_fd >= 0) {
		err = link_pin(a, fd, ifindex, msg, len);
		if (err) {
			bpf_link_detach(fd);
			close(fd);
			return err;
		}
	}
	l = &a->links[a->nr_links++];
	l->ifindex = ifindex;
	l->xdp_mode = xdp_mode;
	l->fd = fd;
	l->epoch = a->epoch;
	pr_info("attached to ifindex %u (%s)", ifindex, mode_name(xdp_mode));
	return 0;
}

static int do_detach(struct attach *a, __u32 ifindex, char *msg, size_t len)
{
	struct dev_link *l = link_find(a, ifindex);
	int err;

	if (!l)
		return 0;	/* nothing to do is not a failure */
	err = link_destroy(a, l);
	if (err)
		snprintf(msg, len, "detaching from ifindex %u: %s", ifindex,
			 strerror(-err));
	else
		pr_info("detached from ifindex %u", ifindex);
	return err;
}

static int do_sync(struct attach *a, char *msg, size_t len)
{
	unsigned int i = 0;
	int err, ret = 0;

	while (i < a->nr_links) {
		struct dev_link *l = &a->links[i];
		__u32 ifindex = l->ifindex;

		if (l->epoch == a->epoch) {
			i++;
			continue;
		}
		err = link_destroy(a, l);	/* moves the last one to i */
		pr_info("sync: detached stale link of ifindex %u", ifindex);
		if (err && !ret) {
			snprintf(msg, len, "detaching ifindex %u: %s", ifindex,
				 strerror(-err));
			ret = err;
		}
	}
	return ret;
}

static void run_job(struct attach *a, struct job *j)
{
	char msg[UMH_MSG_LEN] = "";
	int err = 0;

	a->progress_seq = j->seq;
	switch (j->op) {
	case ATTACH_OP_ATTACH:
		err = do_attach(a, j->ifindex, j->xdp_mode, msg, sizeof(msg));
		break;
	case ATTACH_OP_DETACH:
		err = do_detach(a, j->ifindex, msg, sizeof(msg));
		break;
	case ATTACH_OP_SYNC:
		err = do_sync(a, msg, sizeof(msg));
		break;
	}
	a->progress_seq = 0;
	if (err)
		pr_err("%s", msg);
	if (j->done)
		j->done(j->arg, j->seq, err, msg);
}

static void *worker(void *arg)
{
	struct attach *a = arg;
	struct job *j;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->head && !a->stop)
			pthread_cond_wait(&a->wake, &a->lock);
		if (!a->head)
			break;
		j = a->head;
		a->head = j->next;
		if (!a->head)
			a->tail = NULL;
		a->busy = true;
		pthread_mutex_unlock(&a->lock);

		run_job(a, j);
		free(j);

		pthread_mutex_lock(&a->lock);
		a->busy = false;
		if (!a->head)
			pthread_cond_broadcast(&a->idle);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int attach_submit(struct attach *a, enum attach_op op, __u32 ifindex,
		  __u32 xdp_mode, __u32 seq, attach_done_fn done, void *arg)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->op = op;
	j->ifindex = ifindex;
	j->xdp_mode = xdp_mode;
	j->seq = seq;
	j->done = done;
	j->arg = arg;

	pthread_mutex_lock(&a->lock);
	if (a->tail)
		a->tail->next = j;
	else
		a->head = j;
	a->tail = j;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void attach_wait_idle(struct attach *a)
{
	pthread_mutex_lock(&a->lock);
	while (a->head || a->busy)
		pthread_cond_wait(&a->idle, &a->lock);
	pthread_mutex_unlock(&a->lock);
}

/* Devices attached from now on belong to the replay; others are stale. */
void attach_begin_replay(struct attach *a)
{
	attach_wait_idle(a);
	a->epoch++;
}

/* Call with the worker idle: detaches every link, pinned or known. */
int attach_detach_all(struct attach *a)
{
	int err, ret = 0;

	attach_wait_idle(a);
	attach_recover(a);	/* links pinned but not known (yet) */
	while (a->nr_links) {
		__u32 ifindex = a->links[0].ifindex;

		err = link_destroy(a, &a->links[0]);
		if (err && !ret)
			ret = err;
		if (!err)
			pr_info("detached from ifindex %u", ifindex);
	}
	return ret;
}

/*
 * Adopts one pinned link: still on its device, now running our program.
 * Only a link of ours: whatever else is there (a symlink, another
 * program's link) is not taken, detached or removed.
 */
static void recover_link(struct attach *a, const char *name)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_link_info info;
	struct dev_link *l;
	char why[96];
	__u32 ifindex;
	int fd;

	if (!attach_link_name_parse(name, &ifindex) || link_find(a, ifindex))
		return;
	switch (link_pin_get(a, name, &fd, &info, why, sizeof(why))) {
	case LINK_PIN_NONE:
		return;
	case LINK_PIN_OTHER:
		pr_info("leaving %s/%s alone: %s", XDP_FLOW_PIN_DIR, name,
			why);
		return;
	case LINK_PIN_OURS:
		break;
	}
	/* A tcx link's info starts with the ifindex too (info.tcx). */
	if (info.xdp.ifindex != ifindex) {
		/* The device went away: nothing to keep. */
		pr_info("removing dead link %s/%s", XDP_FLOW_PIN_DIR, name);
		unlinkat(a->pin_fd, name, 0);
		close(fd);
		return;
	}
	l = &a->links[a->nr_links++];
	l->ifindex = ifindex;
	l->fd = fd;
	l->epoch = 0;
	l->xdp_mode = XDP_FLOW_XDP_MODE_NATIVE;
	if (info.type == XF_BPF_LINK_TYPE_TCX)
		l->xdp_mode = XDP_FLOW_XDP_MODE_TC;
	else if (!bpf_xdp_query(ifindex, 0, &q) &&
		 q.attach_mode == XDP_ATTACHED_SKB)
		l->xdp_mode = XDP_FLOW_XDP_MODE_GENERIC;
	/* Loaded by link_pin_get(), which found the link ours. */
	if (bpf_link_update(fd, hook_prog_fd(a, mode_hook(l->xdp_mode)), NULL))
		pr_err("cannot update link %s/%s to the new program: %s",
		       XDP_FLOW_PIN_DIR, name, strerror(errno));
	pr_info("kept the link of ifindex %u (%s)", ifindex,
		mode_name(l->xdp_mode));
}

/* Finds the links a previous helper pinned. */
int attach_recover(struct attach *a)
{
	struct dirent *de;
	DIR *dir;
	int fd;

	if (a->pin_fd < 0)
		return 0;
	/* A directory stream of its own: pin_fd's offset is not ours. */
	fd = openat(a->pin_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dir)) && a->nr_links < XF_MAX_LINKS)
		if (!strncmp(de->d_name, "link_", 5))
			recover_link(a, de->d_name);
	closedir(dir);
	return 0;
}

/**
 * attach_new() - start the worker
 * @skel: the datapath (dp_open()), whose maps the hooks' programs use
 * @pin_fd: the pin directory (dp_lock_pin_dir()); < 0: no pinning
 * @progress: called, from another thread, about once a second while a
 *	hook's program is being loaded for request @seq (0: the takeover
 *	before HELLO); NULL: nobody to tell
 * @arg: for @progress
 *
 * Return: the worker, or NULL when out of memory.
 */
struct attach *attach_new(struct xdp_flow_bpf *skel, int pin_fd,
			  attach_progress_fn progress, void *arg)
{
	struct attach *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->skel = skel;
	a->progress = progress;
	a->progress_arg = arg;
	a->pin_fd = pin_fd;
	a->epoch = 1;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	pthread_cond_init(&a->idle, NULL);
	if (pthread_create(&a->thread, NULL, worker, a)) {
		free(a);
		return NULL;
	}
	a->started = true;
	return a;
}

/* Stops the worker; links stay on their devices (they are pinned). */
void attach_free(struct attach *a)
{
	unsigned int i;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	if (a->started)
		pthread_join(a->thread, NULL);
	for (i = 0; i < a->nr_links; i++)
		close(a->links[i].fd);
	for (i = 0; i < DP_NR_HOOKS; i++)
		if (a->hook_skel[i])
			dp_close(a->hook_skel[i]);
	free(a);
}

/**
 * attach_default_hook() - the hook the module's "auto" gives a veth
 *
 * Return: DP_HOOK_TC where the kernel has tcx (Linux 6.6), which answers a
 * query of lo's tcx ingress programs; else DP_HOOK_XDP.
 */
enum dp_hook attach_default_hook(void)
{
	__u32 count = 0;

	return bpf_prog_query(1, XF_BPF_TCX_INGRESS, 0, NULL, NULL,
			      &count) ? DP_HOOK_XDP : DP_HOOK_TC;
}

/**
 * attach_load() - load @hook's program now, not at its first device
 * @a: the worker, idle
 * @hook: the hook
 *
 * Return: 0, or a negative errno.
 */
int attach_load(struct attach *a, enum dp_hook hook)
{
	int fd = hook_prog_fd(a, hook);

	return fd < 0 ? fd : 0;
}
