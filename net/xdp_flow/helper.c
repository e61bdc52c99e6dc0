// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the user-mode helper's life.
 *
 * The module carries the helper, a statically linked program (umh_blob.S).
 * At load it copies it into a shmem file; to start it, call_usermodehelper()
 * runs xdp_flow_helper_setup() in the new process, which records that
 * process and installs the file as a descriptor, and then executes
 * /proc/self/fd/N. No file on disk is involved, and the helper can never be
 * of another version than the module.
 *
 * Only the process the module started may register (HELLO) and reply (on
 * the socket pair it gets at start, reply.c), and only that process is
 * ever signalled: no pid that a message carries is believed.
 *
 * When the helper's netlink socket goes away, or it does not answer in
 * time, the module kills it, waits until it is gone, starts a new
 * one with back-off, and the rule table is replayed into it; meanwhile the
 * datapath runs on from what the helper pinned. At unload the helper is
 * killed, whatever its state, and the embedded program runs once more in
 * cleanup mode, which detaches and unpins everything.
 *
 * Locking: xdp_flow_helper_lock guards the helper's state (and the link's,
 * struct xdp_flow_link) and is never held while waiting for the helper; it
 * nests inside xdp_flow_lock.
 *
 * It owns the helper's process and its start, restart and end; it calls
 * requests.c and reply.c (the channel it keeps the helper on), dpmaps.c
 * and peer.c (the maps a new helper names), params.c.
 */
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
#define XDP_FLOW_REAP_TIMEOUT_MS	5000
#define XDP_FLOW_CLEANUP_TIMEOUT_MS	10000
#define XDP_FLOW_MAX_START_FAILURES	8

/**
 * struct xdp_flow_helper - the helper process and what the module knows of it
 * @pid: the process the module started last, or NULL
 * @killed: @pid was sent SIGKILL; it is on its way out
 * @restarts: helpers that went away after they registered
 * @start_failures: consecutive starts without a HELLO
 * @backoff_ms: how long to wait before the next start
 * @hello_at: when the running helper registered (jiffies)
 * @exiting: the module is going away: no start, no HELLO
 * @exe: the embedded helper in a shmem file
 * @replay: gives a new helper everything it must hold
 *
 * Its state and port are struct xdp_flow_link's (requests.c), which
 * requests read.
 */
struct xdp_flow_helper {
	struct pid *pid;
	bool killed;
	u32 restarts;
	unsigned int start_failures;
	unsigned int backoff_ms;
	unsigned long hello_at;
	bool exiting;
	struct file *exe;
	int (*replay)(void);
};

static DEFINE_MUTEX(xdp_flow_helper_lock);
static struct xdp_flow_helper xdp_flow_helper = {
	.backoff_ms = XDP_FLOW_RESTART_MIN_MS,
};

static void xdp_flow_helper_work_fn(struct work_struct *work);
static void xdp_flow_replay_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_helper_work, xdp_flow_helper_work_fn);
static DECLARE_WORK(xdp_flow_replay_work, xdp_flow_replay_work_fn);

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
	if (h->exiting || xdp_flow_link.state != XDP_FLOW_HELPER_STARTING)
		goto unlock;
	old = h->pid;
	/* Still taking over a large pinned state: give it another while. */
	if (old && !h->killed && xdp_flow_link.progressed) {
		xdp_flow_link.progressed = false;
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
		if (h->exiting || xdp_flow_link.state != XDP_FLOW_HELPER_STARTING)
			goto unlock;
	}
	failures = ++h->start_failures;
	if (failures > XDP_FLOW_MAX_START_FAILURES) {
		pr_err("xdp_flow: the helper did not come up %u times, giving up; reload the module to try again\n",
		       XDP_FLOW_MAX_START_FAILURES);
		xdp_flow_link.state = XDP_FLOW_HELPER_STOPPED;
		goto unlock;
	}
	h->killed = false;
	xdp_flow_link.progressed = false;
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
	} else if (xdp_flow_link.state == XDP_FLOW_HELPER_STARTING && !h->killed) {
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
	if (xdp_flow_link.state != XDP_FLOW_HELPER_RUNNING) {
		mutex_unlock(&xdp_flow_helper_lock);
		return;
	}
	WRITE_ONCE(xdp_flow_link.state, XDP_FLOW_HELPER_STARTING);
	WRITE_ONCE(xdp_flow_link.portid, 0);
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
	} else if (xdp_flow_link.state == XDP_FLOW_HELPER_RUNNING) {
		/* Once is enough: the replay is under way. */
		if (xdp_flow_link.portid != portid) {
			err = -EBUSY;
			NL_SET_ERR_MSG_MOD(extack, "the helper registered already");
		}
	} else {
		WRITE_ONCE(xdp_flow_link.portid, portid);
		WRITE_ONCE(xdp_flow_link.state, XDP_FLOW_HELPER_RUNNING);
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

/**
 * xdp_flow_helper_status() - what xdp-flow status shows of the helper
 * @state: enum xdp_flow_helper_state
 * @pid: the helper's process id in the caller's pid namespace, or 0
 * @restarts: how often it was restarted
 */
void xdp_flow_helper_status(u32 *state, pid_t *pid, u32 *restarts)
{
	mutex_lock(&xdp_flow_helper_lock);
	*state = xdp_flow_link.state;
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
	    n->portid != READ_ONCE(xdp_flow_link.portid))
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
	err = xdp_flow_reply_init();
	if (err)
		return err;
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
	xdp_flow_requests_init(family, xdp_flow_helper_broken);
	xdp_flow_helper.exe = file;
	xdp_flow_helper.replay = replay;
	return 0;

err_file:
	fput(file);
err_buf:
	xdp_flow_reply_exit();
	return err;
}

/**
 * xdp_flow_helper_start() - start the helper; it restarts by itself from now
 */
void xdp_flow_helper_start(void)
{
	mutex_lock(&xdp_flow_helper_lock);
	xdp_flow_link.state = XDP_FLOW_HELPER_STARTING;
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
	WRITE_ONCE(xdp_flow_link.state, XDP_FLOW_HELPER_STOPPED);
	WRITE_ONCE(xdp_flow_link.portid, 0);
	mutex_unlock(&xdp_flow_helper_lock);
	xdp_flow_requests_stop();
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
	xdp_flow_requests_exit();
	netlink_unregister_notifier(&xdp_flow_netlink_nb);

	mutex_lock(&xdp_flow_helper_lock);
	xdp_flow_helper_kill();
	pid = xdp_flow_helper.pid;
	xdp_flow_helper.pid = NULL;
	mutex_unlock(&xdp_flow_helper_lock);
	if (pid && !xdp_flow_proc_wait_gone(pid, XDP_FLOW_REAP_TIMEOUT_MS))
		pr_warn("xdp_flow: helper pid %d does not exit; cleaning up beside it\n",
			pid_nr(pid));
	put_pid(pid);
	xdp_flow_reply_exit();

	xdp_flow_helper_cleanup();
	fput(xdp_flow_helper.exe);
	xdp_flow_helper.exe = NULL;
}
