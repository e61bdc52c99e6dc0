// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP program and its maps: bpffs, loading the embedded object, and
 * pinning. The maps are pinned by name under the pin directory, so a new
 * helper (or the same one after a crash) reuses them and offloaded traffic
 * keeps its rules and counters. The directory's lock keeps a second helper
 * off them while one is at work.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/*
 * Is @fd (still) the directory at @path? Whoever removed it did so locked.
 * A symlink at @path is not: lstat(), so that it is never followed.
 */
bool dp_same_dir(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !lstat(path, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * What is wrong with @fd as the pin directory, in @buf; NULL if nothing.
 * It must be a directory on bpffs, ours (our euid: root, as the module
 * starts us) and closed to everyone else (mode 0700): where bpffs is
 * mounted 1777, anyone may make it before we do, and fill it.
 */
static const char *dp_pin_dir_wrong(int fd, char *buf, size_t len)
{
	struct statfs sf;
	struct stat st;

	if (fstat(fd, &st) || fstatfs(fd, &sf))
		snprintf(buf, len, "cannot stat: %s", strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		snprintf(buf, len, "is not a directory");
	else if (sf.f_type != BPF_FS_MAGIC)
		snprintf(buf, len, "is not on bpffs");
	else if (st.st_uid != geteuid())
		snprintf(buf, len, "owned by uid %u", (unsigned int)st.st_uid);
	else if ((st.st_mode & 07777) != 0700)
		snprintf(buf, len, "mode %04o", st.st_mode & 07777);
	else
		return NULL;
	return buf;
}

/**
 * dp_open_pin_dir() - open the pin directory, if it is ours
 * @pin_dir: the directory
 * @create: make @pin_dir (mode 0700) if missing (else -ENOENT)
 *
 * Never follows a symlink at @pin_dir, and checks what it opened: the fd,
 * not the path, so that what is checked is what is used. Entries are then
 * reached through the fd only (openat() and the like, or dp_pin_path()).
 *
 * Return: the directory's fd; -EPERM if @pin_dir is there but not ours (a
 * symlink, not a directory, another owner, another mode: said why); or
 * another negative errno.
 */
int dp_open_pin_dir(const char *pin_dir, bool create)
{
	char why[64];
	struct stat st;
	int fd;

	if (create && mkdir(pin_dir, 0700) && errno != EEXIST) {
		pr_err("cannot create %s: %s", pin_dir, strerror(errno));
		return -errno;
	}
	fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		pr_err("not using %s: %s", pin_dir,
		       !lstat(pin_dir, &st) && S_ISLNK(st.st_mode) ?
		       "is a symlink" : "is not a directory");
		return -EPERM;
	}
	if (fd < 0)
		return -errno;
	if (dp_pin_dir_wrong(fd, why, sizeof(why))) {
		pr_err("not using %s: %s", pin_dir, why);
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* @name in the pin directory open at @dir_fd, as a path for libbpf. */
void dp_pin_path(int dir_fd, const char *name, char *buf, size_t len)
{
	if (name)
		snprintf(buf, len, "/proc/self/fd/%d/%s", dir_fd, name);
	else
		snprintf(buf, len, "/proc/self/fd/%d", dir_fd);
}

/* BPF_OBJ_GET relative to a directory fd (6.5): not in older uapi headers. */
#define XF_BPF_F_PATH_FD	(1U << 14)

struct xf_bpf_obj_get_attr {
	__aligned_u64 pathname;
	__u32 bpf_fd;
	__u32 file_flags;
	__s32 path_fd;
};

/*
 * Whether @fd is a BPF object of @kind ("bpf-map", "bpf-link"): its file is
 * anon_inode:<kind>. A pin holds any BPF object, and the info of one kind
 * read as another's is garbage.
 */
bool dp_fd_is(int fd, const char *kind)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return !strncmp(target, "anon_inode:", 11) &&
	       !strcmp(target + 11, kind);
}

/**
 * dp_pin_get() - the BPF object pinned as @name in the pin directory
 * @dir_fd: the (checked) pin directory
 * @name: the entry
 * @kind: what it must be: "bpf-map", "bpf-link"
 *
 * BPF_OBJ_GET follows symlinks, and a symlink could lead anywhere in
 * bpffs: only a pin itself (a regular file on bpffs, not a symlink) is
 * taken. The kernel resolves @name relative to @dir_fd (BPF_F_PATH_FD,
 * Linux 6.5), or older ones through /proc/self/fd/<dir_fd>.
 *
 * Return: the object's fd; -ENOENT if there is no @name; -EPERM if @name
 * is not a pin of a @kind; or another negative errno.
 */
int dp_pin_get(int dir_fd, const char *name, const char *kind)
{
	struct xf_bpf_obj_get_attr attr = {
		.pathname = (unsigned long)name,
		.file_flags = XF_BPF_F_PATH_FD,
		.path_fd = dir_fd,
	};
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPERM;
	fd = syscall(__NR_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
	if (fd < 0 && errno == EINVAL) {
		dp_pin_path(dir_fd, name, path, sizeof(path));
		fd = bpf_obj_get(path);
	}
	if (fd < 0)
		return -errno;
	if (!dp_fd_is(fd, kind)) {
		close(fd);
		return -EPERM;
	}
	return fd;
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
 * protects nothing: then we lock the one at @pin_dir now. Only a directory
 * of ours is locked (dp_open_pin_dir()).
 *
 * Return: the locked directory's fd, -EPERM if @pin_dir is not ours (said
 * why), -ETIMEDOUT if another holder kept it for @timeout_ms, or another
 * negative errno.
 */
int dp_lock_pin_dir(const char *pin_dir, bool create, int timeout_ms)
{
	long long deadline = timeout_ms < 0 ? -1 : dp_now_ms() + timeout_ms;
	bool said = false;
	int fd, err;

	for (;;) {
		fd = dp_open_pin_dir(pin_dir, create);
		if (fd < 0)
			return fd;
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
 * The names the helper pins maps under, from the program's object (open,
 * never loaded: --cleanup has no program of its own), and those of its
 * programs; with the names older helpers pinned under.
 */
#define DP_MAX_NAMES	32

static struct {
	pthread_once_t once;
	char maps[DP_MAX_NAMES][BPF_OBJ_NAME_LEN];
	char progs[DP_MAX_NAMES][BPF_OBJ_NAME_LEN];
	unsigned int nr_maps, nr_progs;
} dp_names = { .once = PTHREAD_ONCE_INIT };

static void dp_names_init(void)
{
	static const char *const old_maps[] = {
		"xf_flows",	/* helpers before the flow table's buckets */
	};
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = BPFFS);
	struct xdp_flow_bpf *skel;
	struct bpf_program *prog;
	struct bpf_map *map;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(old_maps); i++)
		snprintf(dp_names.maps[dp_names.nr_maps++], BPF_OBJ_NAME_LEN,
			 "%s", old_maps[i]);
	libbpf_set_print(libbpf_log);
	skel = xdp_flow_bpf__open_opts(&opts);
	if (!skel) {
		pr_err("cannot open the XDP program's object: %s",
		       strerror(errno));
		return;
	}
	bpf_object__for_each_map(map, skel->obj)
		if (bpf_map__pin_path(map) && dp_names.nr_maps < DP_MAX_NAMES)
			snprintf(dp_names.maps[dp_names.nr_maps++],
				 BPF_OBJ_NAME_LEN, "%s", bpf_map__name(map));
	bpf_object__for_each_program(prog, skel->obj)
		if (dp_names.nr_progs < DP_MAX_NAMES)
			snprintf(dp_names.progs[dp_names.nr_progs++],
				 BPF_OBJ_NAME_LEN, "%s",
				 bpf_program__name(prog));
	xdp_flow_bpf__destroy(skel);
}

/* Is @name one the helper pins a map under (this or an older helper)? */
bool dp_is_map_pin(const char *name)
{
	unsigned int i;

	pthread_once(&dp_names.once, dp_names_init);
	for (i = 0; i < dp_names.nr_maps; i++)
		if (!strcmp(dp_names.maps[i], name))
			return true;
	return false;
}

/* Is @name (as the kernel has it: 15 bytes at most) one of our programs'? */
bool dp_is_prog_name(const char *name)
{
	unsigned int i;

	pthread_once(&dp_names.once, dp_names_init);
	for (i = 0; i < dp_names.nr_progs; i++)
		if (!strncmp(dp_names.progs[i], name, BPF_OBJ_NAME_LEN - 1))
			return true;
	return false;
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

/*
 * Before libbpf reuses the maps pinned in the directory at @pin_fd: each
 * must be a pin (not a symlink, which BPF_OBJ_GET would follow anywhere)
 * of a map of its name. libbpf itself compares only the layout (type, key
 * and value size, max_entries, map_flags, map_extra), not the name nor the
 * BTF. What fails is removed, as dp_remove_pinned_maps() does with maps of
 * another layout, so that a new map is pinned there: only we (root) can
 * have put it in our 0700 directory, and removing an entry never touches
 * what a symlink points to.
 */
static void dp_check_map_pins(struct xdp_flow_bpf *skel, int pin_fd)
{
	struct bpf_map_info info;
	struct bpf_map *map;
	const char *name;
	__u32 len;
	int fd;

	bpf_object__for_each_map(map, skel->obj) {
		if (!bpf_map__pin_path(map))
			continue;
		name = bpf_map__name(map);
		fd = dp_pin_get(pin_fd, name, "bpf-map");
		if (fd == -ENOENT)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, name, BPF_OBJ_NAME_LEN - 1)) {
			close(fd);
			continue;
		}
		if (fd >= 0)
			close(fd);
		pr_info("%s/%s is not a pin of map %s, removing it",
			XDP_FLOW_PIN_DIR, name, name);
		unlinkat(pin_fd, name, 0);
	}
}

static struct xdp_flow_bpf *dp_try_open(int pin_fd,
					unsigned int flow_entries,
					unsigned int rule_ids)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct xdp_flow_bpf *skel;
	struct bpf_map *map;
	char pin_root[64];
	int err;

	/*
	 * libbpf pins and reuses by path: the path of the directory we
	 * checked and hold, whatever is at XDP_FLOW_PIN_DIR by now.
	 */
	if (pin_fd >= 0) {
		dp_pin_path(pin_fd, NULL, pin_root, sizeof(pin_root));
		opts.pin_root_path = pin_root;
	}
	skel = xdp_flow_bpf__open_opts(&opts);
	if (!skel)
		return NULL;
	/* Tests run the program without touching a live helper's pins. */
	if (pin_fd < 0)
		bpf_object__for_each_map(map, skel->obj)
			bpf_map__set_pin_path(map, NULL);
	else
		dp_check_map_pins(skel, pin_fd);
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
		err = bpf_map__set_max_entries(skel->maps.xf_held, rule_ids);
	/* The hooks' programs wait for their first device (dp_hook_load()). */
	if (!err)
		err = bpf_program__set_autoload(skel->progs.xdp_flow, false);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.xdp_flow_tc, false);
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
static void dp_remove_pinned_maps(int pin_fd)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd;

	fd = openat(pin_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dir)))
		if (dp_is_map_pin(de->d_name) &&
		    !fstatat(pin_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode))
			unlinkat(pin_fd, de->d_name, 0);
	closedir(dir);
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

/* Starts watching the calling thread's load for @progress; false: not. */
static bool dp_watch_start(struct dp_load_watch *w, pthread_t *watcher,
			   void (*progress)(void *arg), void *arg)
{
	pthread_condattr_t attr;

	memset(w, 0, sizeof(*w));
	if (!progress)
		return false;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->done_cond, &attr);
	pthread_condattr_destroy(&attr);
	w->loader = syscall(SYS_gettid);
	w->progress = progress;
	w->arg = arg;
	/* Without the watcher, a slow kernel may only cost a restart. */
	if (!pthread_create(watcher, NULL, dp_load_watch_fn, w))
		return true;
	pthread_cond_destroy(&w->done_cond);
	pthread_mutex_destroy(&w->lock);
	return false;
}

static void dp_watch_stop(struct dp_load_watch *w, pthread_t watcher)
{
	pthread_mutex_lock(&w->lock);
	w->done = true;
	pthread_cond_signal(&w->done_cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(watcher, NULL);
	pthread_cond_destroy(&w->done_cond);
	pthread_mutex_destroy(&w->lock);
}

/**
 * dp_open() - open the datapath: its maps, and the programs that carry the
 *	module's maps (dp_maps_prog_fd())
 * @pin_fd: the pin directory (dp_lock_pin_dir()): reuse the maps pinned
 *	there, or pin new ones; < 0: no pins
 * @flow_entries: how many entries the flow table must hold (xf_fentries
 *	gets an eighth more, so that deleted slots can wait for a grace
 *	period before they are used again)
 * @rule_ids: rule ids, the size of the tables by rule id (xf_rules,
 *	xf_rule_defs; xf_counters has a slot per XDP_FLOW_COUNTER_CHUNK)
 * @progress: called from another thread about once a second while the
 *	kernel works on the load (NULL: nobody to tell)
 * @arg: for @progress
 *
 * The hooks' programs are loaded by dp_hook_load(), when needed.
 *
 * Return: the loaded skeleton, or NULL (errno says why).
 */
struct xdp_flow_bpf *dp_open(int pin_fd, unsigned int flow_entries,
			     unsigned int rule_ids,
			     void (*progress)(void *arg), void *arg)
{
	long long start = dp_now_ms();
	struct xdp_flow_bpf *skel;
	struct dp_load_watch w;
	pthread_t watcher;
	bool watched;
	int err;

	libbpf_set_print(libbpf_log);
	watched = dp_watch_start(&w, &watcher, progress, arg);
	skel = dp_try_open(pin_fd, flow_entries, rule_ids);
	if (!skel && pin_fd >= 0) {
		pr_info("cannot reuse the maps pinned in %s (%s), creating new ones",
			XDP_FLOW_PIN_DIR, strerror(errno));
		dp_remove_pinned_maps(pin_fd);
		skel = dp_try_open(pin_fd, flow_entries, rule_ids);
	}
	err = errno;
	if (watched)
		dp_watch_stop(&w, watcher);
	if (!skel)
		pr_err("cannot load the XDP program: %s", strerror(err));
	else
		dp_log_verified(skel, dp_now_ms() - start);
	errno = err;
	return skel;
}

static struct bpf_program *dp_hook_prog(struct xdp_flow_bpf *skel,
					enum dp_hook hook)
{
	return hook == DP_HOOK_TC ? skel->progs.xdp_flow_tc :
				    skel->progs.xdp_flow;
}

/**
 * dp_hook_load() - load the datapath's program for one hook
 * @skel: the datapath (dp_open()), whose maps the program is to use
 * @hook: DP_HOOK_XDP or DP_HOOK_TC
 * @progress: as for dp_open()
 * @arg: for @progress
 *
 * Verifying a hook's program is most of a helper's start: 1 to 15 s in
 * the test guests, minutes on a debug kernel; and a host mostly uses one
 * hook. So each is loaded when its first device comes, from a second
 * instance of the object that uses @skel's maps (every one of them,
 * .rodata included: the configuration @skel was loaded with) and loads no
 * other program.
 *
 * Return: that instance (dp_hook_fd(); dp_close() when done), or NULL
 * (errno says why).
 */
struct xdp_flow_bpf *dp_hook_load(struct xdp_flow_bpf *skel,
				  enum dp_hook hook,
				  void (*progress)(void *arg), void *arg)
{
	long long start = dp_now_ms();
	struct xdp_flow_bpf *inst;
	struct bpf_program *prog;
	struct dp_load_watch w;
	struct bpf_map *map;
	pthread_t watcher;
	bool watched;
	int err = 0;

	libbpf_set_print(libbpf_log);
	inst = xdp_flow_bpf__open();
	if (!inst)
		return NULL;
	bpf_object__for_each_map(map, inst->obj) {
		struct bpf_map *ours;

		ours = bpf_object__find_map_by_name(skel->obj,
						    bpf_map__name(map));
		/* Not pinned again: these are @skel's, pinned or not. */
		err = bpf_map__set_pin_path(map, NULL);
		if (!err)
			err = ours ? bpf_map__reuse_fd(map, bpf_map__fd(ours)) :
				     -ENOENT;
		if (err)
			break;
	}
	bpf_object__for_each_program(prog, inst->obj) {
		bool load = prog == dp_hook_prog(inst, hook);

		if (!err)
			err = bpf_program__set_autoload(prog, load);
	}
	if (!err) {
		watched = dp_watch_start(&w, &watcher, progress, arg);
		err = xdp_flow_bpf__load(inst);
		if (watched)
			dp_watch_stop(&w, watcher);
	}
	if (err) {
		pr_err("cannot load the %s program: %s",
		       hook == DP_HOOK_TC ? "tc" : "XDP", strerror(-err));
		xdp_flow_bpf__destroy(inst);
		errno = -err;
		return NULL;
	}
	dp_log_verified(inst, dp_now_ms() - start);
	return inst;
}

/* The program of @inst (dp_hook_load()) for @hook. */
int dp_hook_fd(struct xdp_flow_bpf *inst, enum dp_hook hook)
{
	return bpf_program__fd(dp_hook_prog(inst, hook));
}

/*
 * The programs that carry the maps the module takes (HELLO): the XDP one
 * the gate, the held rules, the counters and the egress; the TC one the
 * peers and the ingress.
 */
int dp_maps_prog_fd(struct xdp_flow_bpf *skel)
{
	return bpf_program__fd(skel->progs.xf_maps);
}

int dp_tc_maps_prog_fd(struct xdp_flow_bpf *skel)
{
	return bpf_program__fd(skel->progs.xf_maps_tc);
}

void dp_close(struct xdp_flow_bpf *skel)
{
	xdp_flow_bpf__destroy(skel);
}

/*
 * Unpins every map and removes @pin_dir, the directory at @pin_fd (links
 * must be gone already), if it is still that one: rmdir() takes a path.
 */
int dp_unpin(struct xdp_flow_bpf *skel, int pin_fd, const char *pin_dir)
{
	struct stat st;
	int err;

	err = bpf_object__unpin_maps(skel->obj, NULL);
	if (err)
		pr_err("cannot unpin maps: %s", strerror(-err));
	if (lstat(pin_dir, &st))
		return errno == ENOENT ? err : -errno;
	if (!dp_same_dir(pin_fd, pin_dir)) {
		pr_err("not removing %s: no longer the directory we pinned in",
		       pin_dir);
		return err ? err : -ESTALE;
	}
	if (rmdir(pin_dir) && errno != ENOENT) {
		pr_err("cannot remove %s: %s", pin_dir, strerror(errno));
		return -errno;
	}
	return err;
}
