// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the user-mode helper's life and the channel to it.
 *
 * The module carries the helper, a statically linked program (umh_blob.S).
 * At load it copies it into a shmem file; to start it, call_usermodehelper()
 * runs xdp_flow_helper_setup() in the new process, which records that
 * process and installs the file as a descriptor, and then executes
 * /proc/self/fd/N. No file on disk is involved, and the helper can never be
 * of another version than the module.
 *
 * Only the process the module started may register (HELLO) and reply, and
 * only that process is ever signalled: no pid that a message carries is
 * believed. Requests go to the helper over the generic netlink family, each
 * answered by one REPLY, which the helper sends on its end of a socket pair
 * the module gave it at start (--reply-fd): not over generic netlink, whose
 * receive path takes genetlink's global lock, which a caller waiting for
 * the reply may be keeping a writer (a family being registered) from, and
 * which that writer would keep the reply from.
 *
 * When the helper's netlink socket goes away, or it does not answer in
 * time, the module kills it, waits until it is gone, starts a new
 * one with back-off, and the rule table is replayed into it; meanwhile the
 * datapath runs on from what the helper pinned. At unload the helper is
 * killed, whatever its state, and the embedded program runs once more in
 * cleanup mode, which detaches and unpins everything.
 *
 * Locking: xdp_flow_helper_lock guards the helper's state and is never held
 * while waiting for the helper; it nests inside xdp_flow_lock.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kmod.h>
#include <linux/net.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "xdp_flow.h"

/* shmem_file_setup()'s flags for the helper's file: none. Newer kernels
 * take them as a vma_flags_t.
 */
#ifdef XDP_FLOW_HAVE_VMA_FLAGS
#define XDP_FLOW_SHMEM_FLAGS	EMPTY_VMA_FLAGS
#else
#define XDP_FLOW_SHMEM_FLAGS	0
#endif

#define XDP_FLOW_RESTART_MIN_MS		10U
#define XDP_FLOW_RESTART_MAX_MS		5000U
#define XDP_FLOW_HELLO_TIMEOUT_MS	5000U
#define XDP_FLOW_HELLO_TIMEOUT_MAX_MS	30000U
#define XDP_FLOW_ATTACH_TIMEOUT_MS	10000
#define XDP_FLOW_REAP_TIMEOUT_MS	5000
#define XDP_FLOW_CLEANUP_TIMEOUT_MS	10000
#define XDP_FLOW_MAX_START_FAILURES	8

/**
 * struct xdp_flow_helper - the helper process and what the module knows of it
 * @state: enum xdp_flow_helper_state
 * @portid: the generic netlink port it said HELLO from, while RUNNING
 * @pid: the process the module started last, or NULL
 * @killed: @pid was sent SIGKILL; it is on its way out
 * @restarts: helpers that went away after they registered
 * @start_failures: consecutive starts without a HELLO
 * @backoff_ms: how long to wait before the next start
 * @hello_at: when the running helper registered (jiffies)
 * @progressed: a progress report came before HELLO
 * @exiting: the module is going away: no start, no HELLO
 * @exe: the embedded helper in a shmem file
 * @family: the generic netlink family requests go out on
 * @replay: gives a new helper everything it must hold
 */
struct xdp_flow_helper {
	u32 state;
	u32 portid;
	struct pid *pid;
	bool killed;
	u32 restarts;
	unsigned int start_failures;
	unsigned int backoff_ms;
	unsigned long hello_at;
	bool progressed;
	bool exiting;
	struct file *exe;
	const struct genl_family *family;
	int (*replay)(void);
};

static DEFINE_MUTEX(xdp_flow_helper_lock);
static struct xdp_flow_helper xdp_flow_helper = {
	.state = XDP_FLOW_HELPER_STOPPED,
	.backoff_ms = XDP_FLOW_RESTART_MIN_MS,
};

static void xdp_flow_helper_work_fn(struct work_struct *work);
static void xdp_flow_replay_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_helper_work, xdp_flow_helper_work_fn);
static DECLARE_WORK(xdp_flow_replay_work, xdp_flow_replay_work_fn);

/* --- requests and their replies --- */

/*
 * A request sent to the helper: waited for (xdp_flow_helper_call()), or
 * posted (xdp_flow_helper_post_rule()), whose @posted callback gets the
 * answer instead.
 *
 * A request is listed before it is sent, so that an answer that comes
 * before the sender's genlmsg_unicast() returned finds it. A posted one is
 * still its sender's until then (@sending): a send that fails frees it,
 * and the caller settles what it was for. So while @sending, neither the
 * answer nor xdp_flow_requests_fail() settles it: they record the outcome
 * (@answered, @err), and the sender gives it to @posted once its send
 * succeeded, or drops it when the send failed (the helper never got it).
 */
struct xdp_flow_request {
	struct list_head list;
	u32 seq;
	int err;
	bool sending;		/* posted, its sender's send not returned yet */
	bool answered;		/* while @sending: @err is the outcome */
	unsigned int progress;	/* progress reports so far */
	bool have_stats;
	struct xdp_flow_stats stats;
	char msg[128];
	struct completion done;
	void (*posted)(void *arg, int err);
	void *arg;
	bool add;		/* a posted RULE_ADD */
};

static LIST_HEAD(xdp_flow_requests);
static DEFINE_SPINLOCK(xdp_flow_requests_lock);
static u32 xdp_flow_next_seq;

/*
 * Under xdp_flow_requests_lock: the room the running helper reported last,
 * the posted requests not answered yet (and how many are RULE_ADDs, which
 * the room reported does not count yet), and when the helper last answered.
 */
static struct xdp_flow_room xdp_flow_room;
static bool xdp_flow_room_known;
static unsigned int xdp_flow_nr_posted;
static unsigned int xdp_flow_nr_posted_adds;
static unsigned long xdp_flow_answered_at;
/* Set by xdp_flow_helper_stop(): nothing arms the posted-watch again. */
static bool xdp_flow_posted_watch_off;
static DECLARE_WAIT_QUEUE_HEAD(xdp_flow_posted_wq);

/* At most this many posted requests wait for an answer; more wait first. */
#define XDP_FLOW_MAX_POSTED	256

static void xdp_flow_posted_watch_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_posted_watch, xdp_flow_posted_watch_fn);

/*
 * debugfs, for tests: xdp_flow/posted, the posted requests not answered
 * yet; and a fault point, as Debian's kernels have no fault injection:
 * the next xdp_flow/fail_posted_send posted requests fail to send as on a
 * full receive queue, each after xdp_flow/fail_posted_send_delay_ms, with
 * the request already listed (so that the helper can be made to go away
 * meanwhile).
 */
static struct dentry *xdp_flow_debugfs;
static atomic_t xdp_flow_fail_posted_send = ATOMIC_INIT(0);
static u32 xdp_flow_fail_posted_send_delay_ms;

static void xdp_flow_debugfs_init(void)
{
	struct dentry *d = debugfs_create_dir(KBUILD_MODNAME, NULL);

	debugfs_create_u32("posted", 0400, d, &xdp_flow_nr_posted);
	debugfs_create_atomic_t("fail_posted_send", 0600, d,
				&xdp_flow_fail_posted_send);
	debugfs_create_u32("fail_posted_send_delay_ms", 0600, d,
			   &xdp_flow_fail_posted_send_delay_ms);
	xdp_flow_debugfs = d;
}

/* Whether this posted request's send is to fail (after the delay). */
static bool xdp_flow_should_fail_posted_send(void)
{
	if (!IS_ENABLED(CONFIG_DEBUG_FS) ||
	    !atomic_add_unless(&xdp_flow_fail_posted_send, -1, 0))
		return false;
	msleep(READ_ONCE(xdp_flow_fail_posted_send_delay_ms));
	return true;
}

static struct xdp_flow_request *xdp_flow_request_find(u32 seq)
{
	struct xdp_flow_request *req;

	list_for_each_entry(req, &xdp_flow_requests, list)
		if (req->seq == seq)
			return req;
	return NULL;
}

/* Caller holds xdp_flow_requests_lock; @req is posted. */
static void xdp_flow_posted_unlist(struct xdp_flow_request *req)
{
	list_del(&req->list);
	xdp_flow_nr_posted--;
	if (req->add)
		xdp_flow_nr_posted_adds--;
}

/* Caller holds xdp_flow_requests_lock; @req is posted and @sending. */
static void xdp_flow_posted_record(struct xdp_flow_request *req, int err)
{
	if (req->answered)
		return;		/* the first outcome counts */
	req->err = err;
	req->answered = true;
}

/* Only the sender forgets a request, and only one that is listed. */
static void xdp_flow_request_forget(struct xdp_flow_request *req)
{
	spin_lock_bh(&xdp_flow_requests_lock);
	if (req->posted)
		xdp_flow_posted_unlist(req);
	else
		list_del(&req->list);
	spin_unlock_bh(&xdp_flow_requests_lock);
	if (req->posted)
		wake_up(&xdp_flow_posted_wq);
	kfree(req);
}

/*
 * Completes every pending request with @err, and gives posted ones their
 * answer (those still being sent get it from their sender). The helper
 * they went to is gone: so is what it said of its room.
 */
static void xdp_flow_requests_fail(int err)
{
	struct xdp_flow_request *req, *tmp;
	LIST_HEAD(posted);

	spin_lock_bh(&xdp_flow_requests_lock);
	xdp_flow_room_known = false;
	list_for_each_entry_safe(req, tmp, &xdp_flow_requests, list) {
		if (req->posted && req->sending) {
			xdp_flow_posted_record(req, err);
			continue;
		}
		if (req->posted) {
			xdp_flow_posted_unlist(req);
			list_add_tail(&req->list, &posted);
			continue;
		}
		if (completion_done(&req->done))
			continue;
		req->err = err;
		complete(&req->done);
	}
	spin_unlock_bh(&xdp_flow_requests_lock);
	wake_up_all(&xdp_flow_posted_wq);

	list_for_each_entry_safe(req, tmp, &posted, list) {
		req->posted(req->arg, err);
		kfree(req);
	}
}

/* --- the process --- */

static bool xdp_flow_proc_alive(struct pid *pid)
{
	return pid_has_task(pid, PIDTYPE_TGID);
}

/* Waits until @pid has exited and been reaped (kthreadd reaps the helpers). */
static bool xdp_flow_proc_wait_gone(struct pid *pid, unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);

	while (xdp_flow_proc_alive(pid)) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(5000, 10000);
	}
	return true;
}

static struct socket *xdp_flow_reply_open(void);

struct xdp_flow_exec {
	struct pid **slot;	/* where the new process is recorded */
	struct socket *reply;	/* the helper's end of the replies' pair */
	char path[32];
	char reply_arg[32];
	char masks_arg[32];
	char flows_arg[32];
	char rules_arg[32];
};

/*
 * Runs in the new process before it executes the helper: records it, under
 * the lock HELLO takes, so that its HELLO can never come first; and gives it
 * the embedded helper as a descriptor (closed on exec) to execute.
 */
static int xdp_flow_helper_setup(struct subprocess_info *info, struct cred *new)
{
	struct xdp_flow_exec *x = info->data;
	struct file *file;
	int fd;

	if (x->reply) {
		/* Kept across exec: the helper answers on it. */
		fd = get_unused_fd_flags(0);
		if (fd < 0)
			return fd;
		file = sock_alloc_file(x->reply, 0, NULL);
		x->reply = NULL;	/* the file has it, or it is gone */
		if (IS_ERR(file)) {
			put_unused_fd(fd);
			return PTR_ERR(file);
		}
		fd_install(fd, file);
		snprintf(x->reply_arg, sizeof(x->reply_arg), "--reply-fd=%d", fd);
	}
	if (!xdp_flow_umh_path()) {
		fd = get_unused_fd_flags(O_CLOEXEC);
		if (fd < 0)
			return fd;
		fd_install(fd, get_file(xdp_flow_helper.exe));
		snprintf(x->path, sizeof(x->path), "/proc/self/fd/%d", fd);
		info->path = x->path;
	}
	mutex_lock(&xdp_flow_helper_lock);
	*x->slot = get_pid(task_tgid(current));
	mutex_unlock(&xdp_flow_helper_lock);
	return 0;
}

/* Starts the helper (@mode: NULL, or "--cleanup"); returns once it runs. */
static int xdp_flow_helper_exec(const char *mode, struct pid **slot)
{
	struct xdp_flow_exec x = { .slot = slot };
	struct subprocess_info *info;
	char *argv[7], *envp[3];
	int err;

	/* call_usermodehelper_setup() takes them writable. */
	argv[0] = "xdp_flow_umh";
	argv[1] = "--log=kmsg";
	argv[2] = (char *)mode;
	argv[3] = NULL;
	if (!mode) {
		x.reply = xdp_flow_reply_open();
		if (IS_ERR(x.reply))
			return PTR_ERR(x.reply);
		argv[2] = x.reply_arg;	/* filled in by the setup */
		snprintf(x.masks_arg, sizeof(x.masks_arg), "--max-masks=%u",
			 xdp_flow_max_masks());
		snprintf(x.flows_arg, sizeof(x.flows_arg), "--max-flows=%u",
			 xdp_flow_max_flows());
		snprintf(x.rules_arg, sizeof(x.rules_arg), "--max-rules=%u",
			 xdp_flow_max_rules());
		argv[3] = x.masks_arg;
		argv[4] = x.flows_arg;
		argv[5] = x.rules_arg;
		argv[6] = NULL;
	}
	envp[0] = "HOME=/";
	envp[1] = "PATH=/sbin:/usr/sbin:/bin:/usr/bin";
	envp[2] = NULL;

	/* The path is a placeholder until xdp_flow_helper_setup(). */
	info = call_usermodehelper_setup(xdp_flow_umh_path() ?: "/proc/self/fd",
					 argv, envp, GFP_KERNEL,
					 xdp_flow_helper_setup, NULL, &x);
	if (!info) {
		err = -ENOMEM;
		goto out;
	}
	err = call_usermodehelper_exec(info, UMH_WAIT_EXEC);
out:
	/* Not handed over: the setup did not run, or failed early. */
	if (x.reply)
		sock_release(x.reply);
	return err;
}

static unsigned int xdp_flow_hello_timeout_ms(unsigned int failures)
{
	unsigned int shift = min(failures ? failures - 1 : 0, 3U);

	return min(XDP_FLOW_HELLO_TIMEOUT_MS << shift,
		   XDP_FLOW_HELLO_TIMEOUT_MAX_MS);
}

/* Caller holds xdp_flow_helper_lock. */
static void xdp_flow_helper_schedule(unsigned int delay_ms)
{
	if (!xdp_flow_helper.exiting)
		mod_delayed_work(system_long_wq, &xdp_flow_helper_work,
				 msecs_to_jiffies(delay_ms));
}

/* Caller holds xdp_flow_helper_lock. */
static void xdp_flow_helper_kill(void)
{
	if (xdp_flow_helper.pid && !xdp_flow_helper.killed) {
		kill_pid(xdp_flow_helper.pid, SIGKILL, 1);
		xdp_flow_helper.killed = true;
	}
}

/*
 * Starts a helper when none runs. A helper that was started but did not say
 * HELLO in time is killed first; a new one starts only once the previous
 * one is gone, so that at most one ever works on the pinned state.
 */
static void xdp_flow_helper_work_fn(struct work_struct *work)
{
	struct xdp_flow_helper *h = &xdp_flow_helper;
	unsigned int failures;
	struct pid *old;
	int err;

	mutex_lock(&xdp_flow_helper_lock);
	if (h->exiting || h->state != XDP_FLOW_HELPER_STARTING)
		goto unlock;
	old = h->pid;
	/* Still taking over a large pinned state: give it another while. */
	if (old && !h->killed && h->progressed) {
		h->progressed = false;
		xdp_flow_helper_schedule(XDP_FLOW_HELLO_TIMEOUT_MS);
		goto unlock;
	}
	if (old) {
		if (!h->killed)
			pr_notice("xdp_flow: helper pid %d did not register in time, killing it\n",
				  pid_nr(old));
		xdp_flow_helper_kill();
		get_pid(old);
		mutex_unlock(&xdp_flow_helper_lock);
		if (!xdp_flow_proc_wait_gone(old, XDP_FLOW_REAP_TIMEOUT_MS)) {
			pr_warn_ratelimited("xdp_flow: helper pid %d does not exit; no new helper until it does\n",
					    pid_nr(old));
			put_pid(old);
			mutex_lock(&xdp_flow_helper_lock);
			xdp_flow_helper_schedule(1000);
			goto unlock;
		}
		mutex_lock(&xdp_flow_helper_lock);
		if (h->pid == old) {
			put_pid(h->pid);
			h->pid = NULL;
		}
		put_pid(old);
		if (h->exiting || h->state != XDP_FLOW_HELPER_STARTING)
			goto unlock;
	}
	failures = ++h->start_failures;
	if (failures > XDP_FLOW_MAX_START_FAILURES) {
		pr_err("xdp_flow: the helper did not come up %u times, giving up; reload the module to try again\n",
		       XDP_FLOW_MAX_START_FAILURES);
		h->state = XDP_FLOW_HELPER_STOPPED;
		goto unlock;
	}
	h->killed = false;
	h->progressed = false;
	mutex_unlock(&xdp_flow_helper_lock);

	err = xdp_flow_helper_exec(NULL, &h->pid);

	mutex_lock(&xdp_flow_helper_lock);
	if (err) {
		if (failures == 1)
			pr_warn("xdp_flow: cannot start the helper%s%s: %d\n",
				xdp_flow_umh_path() ? " " : "",
				xdp_flow_umh_path() ?: "", err);
		/* If it got as far as a process, that one is exiting. */
		xdp_flow_helper_kill();
		xdp_flow_helper_schedule(h->backoff_ms);
		h->backoff_ms = min(h->backoff_ms * 2, XDP_FLOW_RESTART_MAX_MS);
	} else if (h->state == XDP_FLOW_HELPER_STARTING && !h->killed) {
		/* Checks back then: by that time it must have said HELLO. */
		xdp_flow_helper_schedule(xdp_flow_hello_timeout_ms(failures));
	}
unlock:
	mutex_unlock(&xdp_flow_helper_lock);
}

static void xdp_flow_helper_broken(const char *why);

static void xdp_flow_replay_work_fn(struct work_struct *work)
{
	int err = xdp_flow_helper.replay();

	if (err && err != -ESRCH)
		xdp_flow_helper_broken("the replay failed");
}

/**
 * xdp_flow_helper_broken() - the helper is gone or misbehaves: restart it
 * @why: for the log
 *
 * Kills it (it may still be alive), fails what waits for it, and starts a
 * new one after the back-off. May be called under xdp_flow_lock.
 */
static void xdp_flow_helper_broken(const char *why)
{
	struct xdp_flow_helper *h = &xdp_flow_helper;
	pid_t nr;

	mutex_lock(&xdp_flow_helper_lock);
	if (h->state != XDP_FLOW_HELPER_RUNNING) {
		mutex_unlock(&xdp_flow_helper_lock);
		return;
	}
	WRITE_ONCE(h->state, XDP_FLOW_HELPER_STARTING);
	WRITE_ONCE(h->portid, 0);
	nr = pid_nr(h->pid);
	xdp_flow_helper_kill();
	h->restarts++;
	/* A helper that lived a while gets the next one started soon. */
	if (time_after(jiffies, h->hello_at + 10 * HZ))
		h->backoff_ms = XDP_FLOW_RESTART_MIN_MS;
	xdp_flow_helper_schedule(h->backoff_ms);
	h->backoff_ms = min(h->backoff_ms * 2, XDP_FLOW_RESTART_MAX_MS);
	mutex_unlock(&xdp_flow_helper_lock);

	pr_info("xdp_flow: helper pid %d: %s; restarting it\n", nr, why);
	xdp_flow_requests_fail(-ESRCH);
}

/**
 * xdp_flow_helper_hello() - a process asks to be the helper
 * @portid: its generic netlink port
 * @version: the ABI version it was built with
 * @prog_fd: its XDP program, which holds the gate and the counters
 *	(xdp_flow_dp_maps_take()), or -1
 * @tc_prog_fd: its TC program, which holds the peers, or -1
 * @extack: for errors
 *
 * Called in the sender's context. Only the process the module started, and
 * has not killed, is accepted.
 *
 * Return: 0, or a negative errno when the sender is refused.
 */
int xdp_flow_helper_hello(u32 portid, u32 version, int prog_fd,
			  int tc_prog_fd, struct netlink_ext_ack *extack)
{
	struct xdp_flow_helper *h = &xdp_flow_helper;
	bool registered = false;
	int err = 0;

	mutex_lock(&xdp_flow_helper_lock);
	if (h->exiting) {
		err = -ESHUTDOWN;
		NL_SET_ERR_MSG_MOD(extack, "the module is going away");
	} else if (!h->pid || h->killed || task_tgid(current) != h->pid) {
		err = -EPERM;
		NL_SET_ERR_MSG_MOD(extack, "only the helper the module started may register");
	} else if (version != XDP_FLOW_ABI_VERSION) {
		err = -EPROTO;
		NL_SET_ERR_MSG_MOD(extack, "helper built for another ABI version");
	} else if (h->state == XDP_FLOW_HELPER_RUNNING) {
		/* Once is enough: the replay is under way. */
		if (h->portid != portid) {
			err = -EBUSY;
			NL_SET_ERR_MSG_MOD(extack, "the helper registered already");
		}
	} else {
		WRITE_ONCE(h->portid, portid);
		WRITE_ONCE(h->state, XDP_FLOW_HELPER_RUNNING);
		registered = true;
		h->start_failures = 0;
		h->hello_at = jiffies;
		queue_work(system_long_wq, &xdp_flow_replay_work);
	}
	mutex_unlock(&xdp_flow_helper_lock);

	if (err == -EPERM)
		pr_notice_ratelimited("xdp_flow: HELLO from pid %d refused: not the helper the module started\n",
				      task_tgid_nr(current));
	else if (registered)
		pr_info("xdp_flow: helper pid %d registered\n",
			task_tgid_nr(current));
	/* Only the helper the module started gets this far. */
	if (registered) {
		bool tx_taken = false;
		bool lacks = prog_fd < 0 ||
			     xdp_flow_dp_maps_take(prog_fd, tc_prog_fd, &tx_taken);

		/* A pinned map may hold entries of an earlier module. */
		if (tx_taken)
			xdp_flow_peers_resync();
		if (lacks)
			pr_err("xdp_flow: helper pid %d named no program with a gate and counters: rule changes while no helper runs cannot stop XDP\n",
			       task_tgid_nr(current));
	}
	return err;
}

/* Takes the helper's answer @attrs to a request. */
static int xdp_flow_helper_reply(struct nlattr **attrs)
{
	struct xdp_flow_request *req;
	struct nlattr *a;
	u32 seq;
	int err;

	if (!attrs[XDP_FLOW_ATTR_SEQ])
		return -EINVAL;
	seq = nla_get_u32(attrs[XDP_FLOW_ATTR_SEQ]);
	if (nla_get_flag(attrs[XDP_FLOW_ATTR_PROGRESS]) && !seq) {
		/* Only the helper being started has this channel. */
		WRITE_ONCE(xdp_flow_helper.progressed, true);
		return 0;
	}
	if (!nla_get_flag(attrs[XDP_FLOW_ATTR_PROGRESS]) &&
	    !attrs[XDP_FLOW_ATTR_ERROR])
		return -EINVAL;

	spin_lock_bh(&xdp_flow_requests_lock);
	xdp_flow_answered_at = jiffies;
	req = xdp_flow_request_find(seq);
	if (!req || completion_done(&req->done)) {
		spin_unlock_bh(&xdp_flow_requests_lock);
		return 0;	/* given up on, or not waited for */
	}
	if (nla_get_flag(attrs[XDP_FLOW_ATTR_PROGRESS])) {
		WRITE_ONCE(req->progress, req->progress + 1);
		spin_unlock_bh(&xdp_flow_requests_lock);
		return 0;
	}
	err = (int)nla_get_u32(attrs[XDP_FLOW_ATTR_ERROR]);
	if (err > 0 || err < -MAX_ERRNO) {
		/* Not an answer: the request fails with the helper. */
		spin_unlock_bh(&xdp_flow_requests_lock);
		return -EPROTO;
	}
	a = attrs[XDP_FLOW_ATTR_ROOM];
	if (a) {
		memcpy(&xdp_flow_room, nla_data(a), sizeof(xdp_flow_room));
		xdp_flow_room_known = true;
	}
	if (req->posted && req->sending) {
		/* Before its sender's send returned: the sender settles it. */
		xdp_flow_posted_record(req, err);
		spin_unlock_bh(&xdp_flow_requests_lock);
		return 0;
	}
	req->err = err;
	if (req->posted) {
		/* Answered here, in the order the helper did them. */
		xdp_flow_posted_unlist(req);
		spin_unlock_bh(&xdp_flow_requests_lock);
		wake_up(&xdp_flow_posted_wq);
		req->posted(req->arg, req->err);
		kfree(req);
		return 0;
	}
	a = attrs[XDP_FLOW_ATTR_MSG];
	if (a)
		nla_strscpy(req->msg, a, sizeof(req->msg));
	a = attrs[XDP_FLOW_ATTR_STATS];
	if (a && nla_len(a) >= sizeof(req->stats)) {
		memcpy(&req->stats, nla_data(a), sizeof(req->stats));
		req->have_stats = true;
	}
	complete(&req->done);
	spin_unlock_bh(&xdp_flow_requests_lock);
	return 0;
}

/*
 * The replies' channel: a SOCK_SEQPACKET pair per helper start. The module
 * keeps one end; the other is installed in the new process only (see
 * xdp_flow_helper_setup()), so whatever arrives here comes from the helper
 * the module started (or from whom it gave its descriptor to). A datagram
 * holds one or more REPLY messages, whole; a work item takes them, so
 * nothing the waiting caller holds can keep a reply out.
 */
#define XDP_FLOW_REPLY_MAX	65536

static DEFINE_MUTEX(xdp_flow_reply_lock);
static struct socket *xdp_flow_reply_sock;	/* the module's end */
static void (*xdp_flow_reply_ready_orig)(struct sock *sk);
static void *xdp_flow_reply_buf;

static void xdp_flow_reply_work_fn(struct work_struct *work);
static DECLARE_WORK(xdp_flow_reply_work, xdp_flow_reply_work_fn);

static void xdp_flow_reply_ready(struct sock *sk)
{
	queue_work(system_highpri_wq, &xdp_flow_reply_work);
}

/*
 * Takes the REPLY messages in one datagram @buf of @len bytes. Returns
 * false when one is malformed: its request cannot be told its answer.
 */
static bool xdp_flow_replies_take(const void *buf, int len)
{
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1];
	const struct nlmsghdr *nlh = buf;
	int rem = len;

	for (; nlmsg_ok(nlh, rem); nlh = nlmsg_next(nlh, &rem))
		if (xdp_flow_parse_reply(nlh, nlh->nlmsg_len, tb) ||
		    xdp_flow_helper_reply(tb))
			break;
	if (rem <= 0)
		return true;
	pr_warn_ratelimited("xdp_flow: a malformed reply from the helper (%d of %d bytes)\n",
			    rem, len);
	return false;
}

/*
 * A helper whose reply is malformed misbehaves: it is restarted, and what
 * waited for it fails as if it had gone (the replay then puts back every
 * rule), never as a refusal that would leave a rule in software for good.
 */
static void xdp_flow_reply_work_fn(struct work_struct *work)
{
	bool broken = false;
	int n;

	mutex_lock(&xdp_flow_reply_lock);
	while (xdp_flow_reply_sock) {
		struct kvec iov = {
			.iov_base = xdp_flow_reply_buf,
			.iov_len = XDP_FLOW_REPLY_MAX,
		};
		struct msghdr msg = {};

		n = kernel_recvmsg(xdp_flow_reply_sock, &msg, &iov, 1,
				   iov.iov_len, MSG_DONTWAIT);
		/* Nothing left, or the helper's end is closed. */
		if (n <= 0)
			break;
		if (msg.msg_flags & MSG_TRUNC) {
			pr_warn_ratelimited("xdp_flow: a reply from the helper over %d bytes\n",
					    XDP_FLOW_REPLY_MAX);
			broken = true;
			continue;
		}
		if (!xdp_flow_replies_take(xdp_flow_reply_buf, n))
			broken = true;
	}
	mutex_unlock(&xdp_flow_reply_lock);
	if (broken)
		xdp_flow_helper_broken("it sent a malformed reply");
}

/* A new pair for a helper being started: returns the helper's end. */
static struct socket *xdp_flow_reply_open(void)
{
	struct socket *mine, *theirs;
	int err;

	err = sock_create_kern(&init_net, AF_UNIX, SOCK_SEQPACKET, 0, &mine);
	if (err)
		return ERR_PTR(err);
	err = sock_create_kern(&init_net, AF_UNIX, SOCK_SEQPACKET, 0, &theirs);
	if (err) {
		sock_release(mine);
		return ERR_PTR(err);
	}
	err = mine->ops->socketpair(mine, theirs);
	if (err) {
		sock_release(theirs);
		sock_release(mine);
		return ERR_PTR(err);
	}
	write_lock_bh(&mine->sk->sk_callback_lock);
	xdp_flow_reply_ready_orig = mine->sk->sk_data_ready;
	mine->sk->sk_data_ready = xdp_flow_reply_ready;
	write_unlock_bh(&mine->sk->sk_callback_lock);

	mutex_lock(&xdp_flow_reply_lock);
	swap(mine, xdp_flow_reply_sock);
	mutex_unlock(&xdp_flow_reply_lock);
	/* The previous helper's end: that helper is gone. */
	if (mine)
		sock_release(mine);
	return theirs;
}

static void xdp_flow_reply_close(void)
{
	struct socket *mine;

	mutex_lock(&xdp_flow_reply_lock);
	mine = xdp_flow_reply_sock;
	xdp_flow_reply_sock = NULL;
	mutex_unlock(&xdp_flow_reply_lock);
	if (mine) {
		write_lock_bh(&mine->sk->sk_callback_lock);
		mine->sk->sk_data_ready = xdp_flow_reply_ready_orig;
		write_unlock_bh(&mine->sk->sk_callback_lock);
		sock_release(mine);
	}
	cancel_work_sync(&xdp_flow_reply_work);
}

/*
 * Sends one request to the running helper; @reqp gets it, pending, or for
 * a posted request (@posted set), @posted gets the answer (and @reqp
 * nothing: the request may be answered and gone by the time this returns).
 */
static int xdp_flow_helper_send(u8 cmd, u32 ifindex, u32 rule_id,
				u32 xdp_mode, const struct xdp_flow_rule *rule,
				void (*posted)(void *arg, int err), void *arg,
				struct xdp_flow_request **reqp)
{
	struct xdp_flow_request *req;
	struct sk_buff *skb;
	bool answered;
	u32 portid;
	void *hdr;
	int err;

	portid = READ_ONCE(xdp_flow_helper.portid);
	if (READ_ONCE(xdp_flow_helper.state) != XDP_FLOW_HELPER_RUNNING ||
	    !portid)
		return -ESRCH;

	req = kzalloc_obj(*req, GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	init_completion(&req->done);
	skb = genlmsg_new(rule ? nla_total_size(sizeof(*rule)) + 64 :
			  NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb) {
		kfree(req);
		return -ENOMEM;
	}
	req->posted = posted;
	req->arg = arg;
	req->add = posted && cmd == XDP_FLOW_CMD_RULE_ADD;
	req->sending = posted;
	spin_lock_bh(&xdp_flow_requests_lock);
	/* Whoever finds this helper gone clears the port first, then fails
	 * what is listed: listed after that, the request would wait for
	 * nobody.
	 */
	if (READ_ONCE(xdp_flow_helper.portid) != portid) {
		spin_unlock_bh(&xdp_flow_requests_lock);
		nlmsg_free(skb);
		kfree(req);
		return -ESRCH;
	}
	req->seq = ++xdp_flow_next_seq;
	list_add_tail(&req->list, &xdp_flow_requests);
	if (posted) {
		if (!xdp_flow_nr_posted++)
			xdp_flow_answered_at = jiffies;
		xdp_flow_nr_posted_adds += req->add;
	}
	spin_unlock_bh(&xdp_flow_requests_lock);

	err = -EMSGSIZE;
	hdr = genlmsg_put(skb, 0, req->seq, xdp_flow_helper.family, 0, cmd);
	if (!hdr ||
	    nla_put_u32(skb, XDP_FLOW_ATTR_SEQ, req->seq) ||
	    (ifindex && nla_put_u32(skb, XDP_FLOW_ATTR_IFINDEX, ifindex)) ||
	    ((cmd == XDP_FLOW_CMD_RULE_DEL || cmd == XDP_FLOW_CMD_STATS_GET) &&
	     nla_put_u32(skb, XDP_FLOW_ATTR_RULE_ID, rule_id)) ||
	    (cmd == XDP_FLOW_CMD_DEV_ATTACH &&
	     nla_put_u32(skb, XDP_FLOW_ATTR_XDP_MODE, xdp_mode)) ||
	    (rule && nla_put(skb, XDP_FLOW_ATTR_RULE, sizeof(*rule), rule)) ||
	    (posted && nla_put_flag(skb, XDP_FLOW_ATTR_POSTED))) {
		nlmsg_free(skb);
		goto err_forget;
	}
	genlmsg_end(skb, hdr);

	if (posted && xdp_flow_should_fail_posted_send()) {
		nlmsg_free(skb);
		err = -EAGAIN;
	} else {
		err = genlmsg_unicast(&init_net, skb, portid);
	}
	if (err) {
		/* Off the list first: nobody else answers it. */
		xdp_flow_request_forget(req);
		if (err == -ECONNREFUSED)
			xdp_flow_helper_broken("its socket is gone");
		return err;
	}
	if (!posted) {
		*reqp = req;
		return 0;
	}
	/* Sent: from now on whoever has its outcome settles it. */
	spin_lock_bh(&xdp_flow_requests_lock);
	req->sending = false;
	answered = req->answered;
	if (answered)
		xdp_flow_posted_unlist(req);
	spin_unlock_bh(&xdp_flow_requests_lock);
	if (answered) {
		wake_up(&xdp_flow_posted_wq);
		req->posted(req->arg, req->err);
		kfree(req);
	}
	return 0;

err_forget:
	xdp_flow_request_forget(req);
	return err;
}

/**
 * xdp_flow_helper_post() - send a request without waiting for its reply
 * @cmd: DEV_ATTACH or DEV_DETACH (the helper does them in the background)
 * @ifindex: the device
 * @xdp_mode: for DEV_ATTACH
 *
 * Return: 0, or a negative errno when it could not be sent (-ESRCH: no
 * helper runs).
 */
int xdp_flow_helper_post(u8 cmd, u32 ifindex, u32 xdp_mode)
{
	struct xdp_flow_request *req;
	int err;

	err = xdp_flow_helper_send(cmd, ifindex, 0, xdp_mode, NULL, NULL, NULL,
				   &req);
	if (!err)
		xdp_flow_request_forget(req);
	return err;
}

/*
 * Arms the posted-watch, unless the module is going away. A post that
 * found the helper running before xdp_flow_helper_stop() may get here
 * after xdp_flow_helper_exit() cancelled the work, whose timer would then
 * fire into a module that is gone. The flag is set by
 * xdp_flow_helper_stop(), before that cancel, and read under the same
 * lock: once it is set, nothing queues the work again.
 */
static void xdp_flow_posted_watch_arm(unsigned long delay)
{
	spin_lock_bh(&xdp_flow_requests_lock);
	if (!xdp_flow_posted_watch_off)
		queue_delayed_work(system_long_wq, &xdp_flow_posted_watch,
				   delay);
	spin_unlock_bh(&xdp_flow_requests_lock);
}

/* Whether one more RULE_ADD without port ranges surely fits. */
static bool xdp_flow_room_for_one(void)
{
	unsigned int n = xdp_flow_nr_posted_adds + 1;

	return xdp_flow_room_known && xdp_flow_room.masks >= n &&
	       xdp_flow_room.flows >= n;
}

/**
 * xdp_flow_helper_post_rule() - send RULE_ADD or RULE_DEL, answer later
 * @cmd: XDP_FLOW_CMD_RULE_ADD (of a rule without port ranges: one mask
 *	and one flow entry at most) or XDP_FLOW_CMD_RULE_DEL
 * @rule_id: for RULE_DEL
 * @rule: for RULE_ADD
 * @posted: gets the helper's answer (0 or a negative errno; -ESRCH or
 *	-ESHUTDOWN when the helper went away first), once, from a work item,
 *	from whoever found the helper gone, or, when either came while the
 *	request was being sent, from this call before it returns; it must not
 *	sleep
 * @arg: for @posted
 *
 * The helper does requests in the order they were sent, posted or not.
 * A helper that answers nothing for helper_timeout_ms while posted
 * requests wait is restarted. Waits while XDP_FLOW_MAX_POSTED requests
 * are posted, for one timeout at most.
 *
 * Return: 0 when posted (@posted will be called), or a negative errno and
 * @posted is not called: -EAGAIN when a RULE_ADD may not fit in what the
 * helper said it had free (or too many requests wait): the caller then
 * waits for the answer instead; -ESRCH when no helper runs.
 */
int xdp_flow_helper_post_rule(u8 cmd, u32 rule_id,
			      const struct xdp_flow_rule *rule,
			      void (*posted)(void *arg, int err), void *arg)
{
	unsigned int timeout = xdp_flow_helper_timeout_ms();
	bool ok;
	int err;

	if (!wait_event_timeout(xdp_flow_posted_wq,
				READ_ONCE(xdp_flow_nr_posted) <
				XDP_FLOW_MAX_POSTED,
				msecs_to_jiffies(timeout)))
		return -EAGAIN;
	if (cmd == XDP_FLOW_CMD_RULE_ADD) {
		spin_lock_bh(&xdp_flow_requests_lock);
		ok = xdp_flow_room_for_one();
		spin_unlock_bh(&xdp_flow_requests_lock);
		if (!ok)
			return -EAGAIN;
	}
	err = xdp_flow_helper_send(cmd, 0, rule_id, 0, rule, posted, arg,
				   NULL);
	if (!err)
		xdp_flow_posted_watch_arm(msecs_to_jiffies(timeout));
	return err;
}

/*
 * While requests are posted, the helper must keep answering: one that said
 * nothing for a timeout is restarted (the posted requests then fail).
 */
static void xdp_flow_posted_watch_fn(struct work_struct *work)
{
	unsigned long timeout = msecs_to_jiffies(xdp_flow_helper_timeout_ms());
	unsigned long since;
	unsigned int n;

	spin_lock_bh(&xdp_flow_requests_lock);
	n = xdp_flow_nr_posted;
	since = xdp_flow_answered_at;
	spin_unlock_bh(&xdp_flow_requests_lock);
	if (!n)
		return;
	if (time_before(jiffies, since + timeout)) {
		xdp_flow_posted_watch_arm(since + timeout - jiffies);
		return;
	}
	xdp_flow_helper_broken("it did not answer in time");
}

#ifndef NL_SET_ERR_MSG_FMT_MOD
/*
 * Before 6.3 an extack holds only static text. The refusals a user can
 * meet (the tables full) keep their words there, without the helper's
 * numbers (the sizes are the module parameters max_masks and max_flows).
 */
static const struct {
	const char *prefix;
	const char *text;
} xdp_flow_refusals[] = {
	{ "mask table full", KBUILD_MODNAME ": mask table full" },
	{ "flow table full", KBUILD_MODNAME ": flow table full" },
	{ "port ranges ",
	  KBUILD_MODNAME ": port ranges need more masked entries than a rule may have" },
	{ "too many devices", KBUILD_MODNAME ": too many devices" },
};
#endif

/*
 * The helper's message @msg (may be empty) on a refusal, for @extack. The
 * ack that carries it is built after the caller's netlink handler
 * returned, and callers run concurrently: so the text goes into @extack's
 * own buffer, never into one of this call or one shared between callers.
 * Kernels without that buffer (before 6.3) get a static text: the
 * refusal's own words where it is one a user can meet, else a fixed one.
 */
static void xdp_flow_helper_refused(struct netlink_ext_ack *extack,
				    const char *msg)
{
#ifdef NL_SET_ERR_MSG_FMT_MOD
	/* What fits after the prefix: a longer one would be warned of. */
	const int room = NETLINK_MAX_FMTMSG_LEN - sizeof(KBUILD_MODNAME ": ");

	if (msg[0]) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "%.*s", room, msg);
		return;
	}
#else
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(xdp_flow_refusals); i++) {
		const char *p = xdp_flow_refusals[i].prefix;

		/* NL_SET_ERR_MSG() takes a literal only: the text is static. */
		if (!strncmp(msg, p, strlen(p))) {
			if (extack)
				extack->_msg = xdp_flow_refusals[i].text;
			return;
		}
	}
#endif
	NL_SET_ERR_MSG_MOD(extack, "helper refused the request");
}

/**
 * xdp_flow_helper_call() - send a request to the helper and wait for its reply
 * @cmd: XDP_FLOW_CMD_*
 * @ifindex: for DEV_ATTACH and DEV_DETACH
 * @rule_id: for RULE_DEL and STATS_GET
 * @xdp_mode: for DEV_ATTACH
 * @rule: for RULE_ADD
 * @stats: for STATS_GET, or NULL
 * @extack: gets the helper's message on error, or NULL
 *
 * A helper that does not answer in time is killed and restarted; the
 * replay then puts back what it holds. A helper that reports progress
 * (a long SYNC) is given another timeout after each report. DEV_ATTACH is the one request that
 * needs rtnl in the helper: never wait for it holding xdp_flow_lock.
 *
 * Return: 0, the helper's negative errno, -ETIMEDOUT, or -ESRCH when no
 * helper runs or it went away meanwhile.
 */
int xdp_flow_helper_call(u8 cmd, u32 ifindex, u32 rule_id, u32 xdp_mode,
			 const struct xdp_flow_rule *rule,
			 struct xdp_flow_stats *stats,
			 struct netlink_ext_ack *extack)
{
	struct xdp_flow_request *req;
	unsigned int timeout, seen;
	unsigned long done;
	int err;

	err = xdp_flow_helper_send(cmd, ifindex, rule_id, xdp_mode, rule, NULL,
				   NULL, &req);
	if (err)
		return err;

	timeout = cmd == XDP_FLOW_CMD_DEV_ATTACH ? XDP_FLOW_ATTACH_TIMEOUT_MS :
		  xdp_flow_helper_timeout_ms();
	do {
		seen = READ_ONCE(req->progress);
		done = wait_for_completion_timeout(&req->done,
						   msecs_to_jiffies(timeout));
	} while (!done && READ_ONCE(req->progress) != seen);
	/* Off the list, no reply can complete it any more; one may have
	 * come in just after the wait gave up.
	 */
	spin_lock_bh(&xdp_flow_requests_lock);
	list_del(&req->list);
	spin_unlock_bh(&xdp_flow_requests_lock);
	err = done || completion_done(&req->done) ? req->err : -ETIMEDOUT;
	if (!err && stats && req->have_stats)
		*stats = req->stats;

	if (err == -ETIMEDOUT) {
		xdp_flow_helper_broken("it did not answer in time");
		NL_SET_ERR_MSG_MOD(extack, "helper did not answer in time");
	} else if (err == -ESRCH || err == -ESHUTDOWN) {
		err = -ESRCH;
		NL_SET_ERR_MSG_MOD(extack, "helper went away");
	} else if (err) {
		xdp_flow_helper_refused(extack, req->msg);
	}
	kfree(req);
	return err;
}

/**
 * xdp_flow_helper_state() - enum xdp_flow_helper_state, right now
 *
 * Return: the state.
 */
u32 xdp_flow_helper_state(void)
{
	return READ_ONCE(xdp_flow_helper.state);
}

/**
 * xdp_flow_helper_status() - what xdp-flow status shows of the helper
 * @state: enum xdp_flow_helper_state
 * @pid: the helper's process id in the caller's pid namespace, or 0
 * @restarts: how often it was restarted
 */
void xdp_flow_helper_status(u32 *state, pid_t *pid, u32 *restarts)
{
	mutex_lock(&xdp_flow_helper_lock);
	*state = xdp_flow_helper.state;
	*pid = xdp_flow_helper.pid && !xdp_flow_helper.killed ?
	       pid_vnr(xdp_flow_helper.pid) : 0;
	*restarts = xdp_flow_helper.restarts;
	mutex_unlock(&xdp_flow_helper_lock);
}

static int xdp_flow_netlink_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net) || !n->portid ||
	    n->portid != READ_ONCE(xdp_flow_helper.portid))
		return NOTIFY_DONE;
	xdp_flow_helper_broken("its socket was closed");
	return NOTIFY_DONE;
}

static struct notifier_block xdp_flow_netlink_nb = {
	.notifier_call = xdp_flow_netlink_event,
};

/**
 * xdp_flow_helper_init() - load the embedded helper; start nothing yet
 * @family: the generic netlink family requests go out on
 * @replay: gives a new helper everything it must hold (xdp_flow_lock free)
 *
 * Return: 0 or a negative errno.
 */
int __init xdp_flow_helper_init(const struct genl_family *family,
				int (*replay)(void))
{
	size_t size = xdp_flow_umh_end - xdp_flow_umh_start;
	struct file *file;
	loff_t pos = 0;
	ssize_t n;
	int err;

	/* That policy funnels every helper through one binary: not ours. */
	if (IS_ENABLED(CONFIG_STATIC_USERMODEHELPER)) {
		pr_err("xdp_flow: this kernel runs user-mode helpers only through CONFIG_STATIC_USERMODEHELPER_PATH; xdp_flow cannot start its helper\n");
		return -EPERM;
	}
	err = xdp_flow_umh_path_check();
	if (err)
		return err;
	xdp_flow_reply_buf = kvmalloc(XDP_FLOW_REPLY_MAX, GFP_KERNEL);
	if (!xdp_flow_reply_buf)
		return -ENOMEM;
	file = shmem_file_setup("xdp_flow_umh", size, XDP_FLOW_SHMEM_FLAGS);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto err_buf;
	}
	n = kernel_write(file, xdp_flow_umh_start, size, &pos);
	if (n != size) {
		pr_err("xdp_flow: cannot copy the helper into memory (%zd)\n", n);
		err = n < 0 ? n : -EIO;
		goto err_file;
	}
	err = netlink_register_notifier(&xdp_flow_netlink_nb);
	if (err)
		goto err_file;
	xdp_flow_debugfs_init();
	xdp_flow_helper.exe = file;
	xdp_flow_helper.family = family;
	xdp_flow_helper.replay = replay;
	return 0;

err_file:
	fput(file);
err_buf:
	kvfree(xdp_flow_reply_buf);
	return err;
}

/**
 * xdp_flow_helper_start() - start the helper; it restarts by itself from now
 */
void xdp_flow_helper_start(void)
{
	mutex_lock(&xdp_flow_helper_lock);
	xdp_flow_helper.state = XDP_FLOW_HELPER_STARTING;
	xdp_flow_helper_schedule(0);
	mutex_unlock(&xdp_flow_helper_lock);
}

/**
 * xdp_flow_helper_stop() - stop talking to the helper, for good
 *
 * Every request fails from now on, and those waiting return at once. The
 * datapath stays until xdp_flow_helper_exit().
 */
void xdp_flow_helper_stop(void)
{
	mutex_lock(&xdp_flow_helper_lock);
	xdp_flow_helper.exiting = true;
	WRITE_ONCE(xdp_flow_helper.state, XDP_FLOW_HELPER_STOPPED);
	WRITE_ONCE(xdp_flow_helper.portid, 0);
	mutex_unlock(&xdp_flow_helper_lock);
	spin_lock_bh(&xdp_flow_requests_lock);
	xdp_flow_posted_watch_off = true;
	spin_unlock_bh(&xdp_flow_requests_lock);
	xdp_flow_requests_fail(-ESHUTDOWN);
}

/* Runs the embedded helper in cleanup mode and waits for it. */
static void xdp_flow_helper_cleanup(void)
{
	struct pid *pid = NULL;
	int err;

	err = xdp_flow_helper_exec("--cleanup", &pid);
	if (err || !pid) {
		pr_err("xdp_flow: cannot run the helper's cleanup (%d): programs and pins under %s may be left\n",
		       err, XDP_FLOW_PIN_DIR);
		put_pid(pid);
		return;
	}
	if (!xdp_flow_proc_wait_gone(pid, XDP_FLOW_CLEANUP_TIMEOUT_MS)) {
		pr_err("xdp_flow: the helper's cleanup did not finish in %u ms; killed it\n",
		       XDP_FLOW_CLEANUP_TIMEOUT_MS);
		kill_pid(pid, SIGKILL, 1);
	}
	put_pid(pid);
}

/**
 * xdp_flow_helper_exit() - no helper, no datapath, nothing pinned
 *
 * After xdp_flow_helper_stop() and once nobody can send HELLO any more
 * (the family is unregistered): kills the helper whatever its state, waits
 * until it is gone, then removes what it left with the cleanup run.
 */
void xdp_flow_helper_exit(void)
{
	struct pid *pid;

	cancel_delayed_work_sync(&xdp_flow_helper_work);
	cancel_work_sync(&xdp_flow_replay_work);
	/* Nothing arms it again (xdp_flow_posted_watch_off). */
	cancel_delayed_work_sync(&xdp_flow_posted_watch);
	netlink_unregister_notifier(&xdp_flow_netlink_nb);
	debugfs_remove_recursive(xdp_flow_debugfs);
	xdp_flow_debugfs = NULL;

	mutex_lock(&xdp_flow_helper_lock);
	xdp_flow_helper_kill();
	pid = xdp_flow_helper.pid;
	xdp_flow_helper.pid = NULL;
	mutex_unlock(&xdp_flow_helper_lock);
	if (pid && !xdp_flow_proc_wait_gone(pid, XDP_FLOW_REAP_TIMEOUT_MS))
		pr_warn("xdp_flow: helper pid %d does not exit; cleaning up beside it\n",
			pid_nr(pid));
	put_pid(pid);
	xdp_flow_reply_close();
	kvfree(xdp_flow_reply_buf);
	xdp_flow_reply_buf = NULL;

	xdp_flow_helper_cleanup();
	fput(xdp_flow_helper.exe);
	xdp_flow_helper.exe = NULL;
}
