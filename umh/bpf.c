// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP program and its maps: bpffs, loading the embedded object, and
 * pinning. The maps are pinned by name under the pin directory, so a new
 * helper (or the same one after a crash) reuses them and offloaded traffic
 * keeps its rules and counters. The directory's lock keeps a second helper
 * off them while one is at work.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umh.h"
#include "xdp_flow_dp.h"
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

bool dp_bpffs_mounted(void)
{
	struct statfs st;

	return !statfs(BPFFS, &st) && st.f_type == BPF_FS_MAGIC;
}

/* virtme-ng guests (and some hosts) boot without bpffs mounted. */
int dp_mount_bpffs(void)
{
	if (dp_bpffs_mounted())
		return 0;
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700")) {
		pr_err("cannot mount bpffs at %s: %s", BPFFS, strerror(errno));
		return -errno;
	}
	pr_info("mounted bpffs at %s", BPFFS);
	return 0;
}

/* Is @fd (still) the directory at @path? Whoever removed it did so locked. */
static bool dp_same_dir(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* CLOCK_MONOTONIC in microseconds. */
long long dp_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* CLOCK_MONOTONIC in milliseconds. */
long long dp_now_ms(void)
{
	return dp_now_us() / 1000;
}

/* flock() with a deadline (< 0: none); says once that it waits. */
static int dp_flock(int fd, const char *pin_dir, long long deadline,
		    bool *said)
{
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			return -errno;
		if (!*said) {
			pr_info("waiting for another helper to release %s",
				pin_dir);
			*said = true;
		}
		if (deadline < 0) {
			while (flock(fd, LOCK_EX))
				if (errno != EINTR)
					return -errno;
			return 0;
		}
		if (dp_now_ms() >= deadline)
			return -ETIMEDOUT;
		usleep(50 * 1000);
	}
	return 0;
}

/**
 * dp_lock_pin_dir() - take the pin directory's lock, for the process's life
 * @pin_dir: the directory
 * @create: make @pin_dir if missing (else -ENOENT)
 * @timeout_ms: how long to wait for another holder; < 0: as long as it takes
 *
 * At most one helper touches the pins at a time: an exclusive flock() on the
 * directory, released only when the process exits. A holder may remove the
 * directory (SHUTDOWN, --cleanup), and the lock of a removed directory
 * protects nothing: then we lock the one at @pin_dir now.
 *
 * Return: the locked directory's fd, -ETIMEDOUT if another holder kept it
 * for @timeout_ms, or another negative errno.
 */
int dp_lock_pin_dir(const char *pin_dir, bool create, int timeout_ms)
{
	long long deadline = timeout_ms < 0 ? -1 : dp_now_ms() + timeout_ms;
	bool said = false;
	int fd, err;

	for (;;) {
		if (create && mkdir(pin_dir, 0700) && errno != EEXIST)
			return -errno;
		fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		err = dp_flock(fd, pin_dir, deadline, &said);
		if (!err && dp_same_dir(fd, pin_dir))
			return fd;
		close(fd);
		if (err)
			return err;
		if (!create && access(pin_dir, F_OK))
			return -ENOENT;
	}
}

/*
 * Buckets for the flow table: a mask's region holds about 2 keys a bucket
 * at most (of 8 ways), so that a key whose two buckets are both full is a
 * rarity; regions are powers of 2, and a growing one is copied: twice
 * that, a power of 2.
 */
static unsigned int ft_buckets(unsigned int flow_entries)
{
	unsigned int n = 2;

	while (n < flow_entries)
		n *= 2;
	return n;
}

static struct xdp_flow_bpf *dp_try_open(const char *pin_dir,
					unsigned int flow_entries,
					unsigned int rule_ids)
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
	/* Pinned maps of another size are not reused (dp_open() then makes
	 * new ones): max_flows is a load-time parameter of the module.
	 */
	err = bpf_map__set_max_entries(skel->maps.xf_fentries,
				       XDP_FLOW_FT_ENTRIES(flow_entries));
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xf_fbuckets,
					       ft_buckets(flow_entries));
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xf_rules, rule_ids);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xf_counters,
					       (rule_ids + XDP_FLOW_COUNTER_CHUNK - 1) /
					       XDP_FLOW_COUNTER_CHUNK);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xf_rule_defs, rule_ids);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.xf_ft_conns, rule_ids);
	if (!err)
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
		"xf_rules", "xf_counters", "xf_fbuckets", "xf_fentries",
		"xf_fhash", "xf_masks", "xf_rule_defs", "xf_gen",
		"xf_mask_min", "xf_gate", "xf_ft_conns",
		"xf_flows",	/* helpers before the flow table's buckets */
	};
	char path[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", pin_dir, names[i]);
		unlink(path);
	}
}

/*
 * Says how much of the verifier's budget (1 million instructions) each
 * program took on this kernel: newer verifiers may prune less, and a
 * program near the budget stops loading after a small change.
 */
static void dp_log_verified(struct xdp_flow_bpf *skel, long long load_ms)
{
	struct bpf_program *prog;
	struct bpf_prog_info info;
	__u32 len;

	pr_info("programs loaded in %lld ms", load_ms);

	bpf_object__for_each_program(prog, skel->obj) {
		if (bpf_program__fd(prog) < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			continue;
		pr_info("%s: the verifier processed %u instructions",
			bpf_program__name(prog), info.verified_insns);
	}
}

/* How often the loader's kernel time is looked at while it loads. */
#define DP_LOAD_WATCH_MS	1000

/*
 * Verifying the programs is one bpf() call per program, which takes tens
 * of seconds on a debug kernel under emulation (KASAN, lockdep). The
 * module kills a helper that stays silent before HELLO, so a watcher
 * reports progress for the loader meanwhile, but only while the loader
 * gains system time: a helper stuck in user space, or asleep, says
 * nothing and is killed as before.
 */
struct dp_load_watch {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	pid_t loader;
	void (*progress)(void *arg);
	void *arg;
};

/* The system time thread @tid has used, in clock ticks; -1 if unknown. */
static long long dp_thread_stime(pid_t tid)
{
	unsigned long long stime;
	char path[64], buf[512];
	const char *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	/* After the name: state, then fields 4-13, utime, stime (proc(5)). */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %llu",
			 &stime) != 1)
		return -1;
	return stime;
}

static void *dp_load_watch_fn(void *arg)
{
	struct dp_load_watch *w = arg;
	long long seen = dp_thread_stime(w->loader), now;
	struct timespec until;

	pthread_mutex_lock(&w->lock);
	while (!w->done) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += DP_LOAD_WATCH_MS / 1000;
		if (pthread_cond_timedwait(&w->done_cond, &w->lock, &until) !=
		    ETIMEDOUT || w->done)
			continue;
		now = dp_thread_stime(w->loader);
		if (now > seen)
			w->progress(w->arg);
		seen = now;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/**
 * dp_open() - open and load the program
 * @pin_dir: reuse the maps pinned there, or pin new ones; NULL: no pins
 * @flow_entries: how many entries the flow table must hold (xf_fentries
 *	gets an eighth more, so that deleted slots can wait for a grace
 *	period before they are used again)
 * @rule_ids: rule ids, the size of the tables by rule id (xf_rules,
 *	xf_rule_defs; xf_counters has a slot per XDP_FLOW_COUNTER_CHUNK)
 * @progress: called from another thread about once a second while the
 *	kernel works on the load (NULL: nobody to tell)
 * @arg: for @progress
 *
 * Return: the loaded skeleton, or NULL (errno says why).
 */
struct xdp_flow_bpf *dp_open(const char *pin_dir, unsigned int flow_entries,
			     unsigned int rule_ids,
			     void (*progress)(void *arg), void *arg)
{
	struct xdp_flow_bpf *skel;

	struct dp_load_watch w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.loader = syscall(SYS_gettid),
		.progress = progress, .arg = arg,
	};
	long long start = dp_now_ms();
	bool watched = false;
	pthread_t watcher;
	int err;

	libbpf_set_print(libbpf_log);
	if (pin_dir && mkdir(pin_dir, 0700) && errno != EEXIST) {
		pr_err("cannot create %s: %s", pin_dir, strerror(errno));
		return NULL;
	}
	if (progress) {
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&w.done_cond, &attr);
		pthread_condattr_destroy(&attr);
		/* Without the watcher, a slow kernel may only cost a restart. */
		watched = !pthread_create(&watcher, NULL, dp_load_watch_fn, &w);
	}
	skel = dp_try_open(pin_dir, flow_entries, rule_ids);
	if (!skel && pin_dir) {
		pr_info("cannot reuse the maps pinned in %s (%s), creating new ones",
			pin_dir, strerror(errno));
		dp_remove_pinned_maps(pin_dir);
		skel = dp_try_open(pin_dir, flow_entries, rule_ids);
	}
	err = errno;
	if (watched) {
		pthread_mutex_lock(&w.lock);
		w.done = true;
		pthread_cond_signal(&w.done_cond);
		pthread_mutex_unlock(&w.lock);
		pthread_join(watcher, NULL);
	}
	if (progress)
		pthread_cond_destroy(&w.done_cond);
	if (!skel)
		pr_err("cannot load the XDP program: %s", strerror(err));
	else
		dp_log_verified(skel, dp_now_ms() - start);
	errno = err;
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
