// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the user-mode helper's life.
 *
 * The module starts the helper with call_usermodehelper(). The helper
 * connects to the generic netlink family and says HELLO; the module then
 * replays every enabled device and every rule into it. When the helper's
 * socket goes away (it crashed, was killed, or stopped answering and was
 * killed by us) the module starts a new one, with back-off, and replays
 * again. Meanwhile the XDP program goes on running from the maps and links
 * the helper pinned.
 */
#include <linux/kmod.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "xdp_flow.h"

struct xdp_flow_helper xdp_flow_helper;

#define XDP_FLOW_RESTART_MIN_MS		10
#define XDP_FLOW_RESTART_MAX_MS		5000
#define XDP_FLOW_HELLO_TIMEOUT_MS	5000
#define XDP_FLOW_ATTACH_TIMEOUT_MS	10000
#define XDP_FLOW_MAX_START_FAILURES	8

static unsigned int xdp_flow_backoff_ms = XDP_FLOW_RESTART_MIN_MS;
static unsigned int xdp_flow_start_failures;
static unsigned long xdp_flow_started_at;
static bool xdp_flow_exiting;

static void xdp_flow_start_work_fn(struct work_struct *work);
static void xdp_flow_replay_work_fn(struct work_struct *work);
static void xdp_flow_gone_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_start_work, xdp_flow_start_work_fn);
static DECLARE_WORK(xdp_flow_replay_work, xdp_flow_replay_work_fn);
static DECLARE_WORK(xdp_flow_gone_work, xdp_flow_gone_work_fn);

static void xdp_flow_kill_helper(void)
{
	pid_t pid = xdp_flow_helper.pid;

	if (pid > 0)
		kill_pid(find_vpid(pid), SIGKILL, 1);
}

static int xdp_flow_exec_helper(void)
{
	char *argv[3], *envp[3];

	argv[0] = umh_path;
	argv[1] = "--log=kmsg";
	argv[2] = NULL;
	envp[0] = "HOME=/";
	envp[1] = "PATH=/sbin:/usr/sbin:/bin:/usr/bin:/usr/local/sbin";
	envp[2] = NULL;

	return call_usermodehelper(umh_path, argv, envp, UMH_WAIT_EXEC);
}

static void xdp_flow_schedule_start(void)
{
	if (xdp_flow_exiting)
		return;
	schedule_delayed_work(&xdp_flow_start_work,
			      msecs_to_jiffies(xdp_flow_backoff_ms));
	xdp_flow_backoff_ms = min(xdp_flow_backoff_ms * 2,
				  (unsigned int)XDP_FLOW_RESTART_MAX_MS);
}

/* Starts the helper, or, when a started one never said HELLO, kills it and
 * tries again later.
 */
static void xdp_flow_start_work_fn(struct work_struct *work)
{
	int err;

	mutex_lock(&xdp_flow_lock);
	if (xdp_flow_exiting || xdp_flow_helper.state == XDP_FLOW_HELPER_RUNNING) {
		mutex_unlock(&xdp_flow_lock);
		return;
	}
	if (++xdp_flow_start_failures > XDP_FLOW_MAX_START_FAILURES) {
		pr_err("xdp_flow: helper %s did not come up, giving up; reload the module to try again\n",
		       umh_path);
		xdp_flow_helper.state = XDP_FLOW_HELPER_STOPPED;
		mutex_unlock(&xdp_flow_lock);
		xdp_flow_helper_fail_all(-ESRCH);
		return;
	}
	xdp_flow_helper.state = XDP_FLOW_HELPER_STARTING;
	xdp_flow_started_at = jiffies;
	mutex_unlock(&xdp_flow_lock);

	err = xdp_flow_exec_helper();
	if (err && xdp_flow_start_failures == 1)
		pr_warn("xdp_flow: cannot start helper %s: %d\n", umh_path, err);

	/* Check again later: HELLO cancels nothing, the check sees RUNNING. */
	schedule_delayed_work(&xdp_flow_start_work,
			      msecs_to_jiffies(err ? xdp_flow_backoff_ms :
					       XDP_FLOW_HELLO_TIMEOUT_MS));
	if (err)
		xdp_flow_backoff_ms = min(xdp_flow_backoff_ms * 2,
					  (unsigned int)XDP_FLOW_RESTART_MAX_MS);
}

static void xdp_flow_replay_work_fn(struct work_struct *work)
{
	int err = xdp_flow_replay();

	if (err && err != -ESRCH)
		xdp_flow_umh_broken("the replay failed");
}

static void xdp_flow_gone_work_fn(struct work_struct *work)
{
	mutex_lock(&xdp_flow_lock);
	if (xdp_flow_exiting || xdp_flow_helper.state != XDP_FLOW_HELPER_STARTING) {
		mutex_unlock(&xdp_flow_lock);
		return;
	}
	/* A helper that dies soon after it started gets started later. */
	if (time_after(jiffies, xdp_flow_started_at + 10 * HZ))
		xdp_flow_backoff_ms = XDP_FLOW_RESTART_MIN_MS;
	xdp_flow_helper.restarts++;
	mutex_unlock(&xdp_flow_lock);
	cancel_delayed_work(&xdp_flow_start_work);
	xdp_flow_schedule_start();
}

/**
 * xdp_flow_umh_broken() - the helper is gone or misbehaves: restart it
 * @why: for the log
 */
void xdp_flow_umh_broken(const char *why)
{
	if (cmpxchg(&xdp_flow_helper.state, XDP_FLOW_HELPER_RUNNING,
		    XDP_FLOW_HELPER_STARTING) != XDP_FLOW_HELPER_RUNNING)
		return;
	pr_info("xdp_flow: helper (pid %d): %s; restarting it\n",
		xdp_flow_helper.pid, why);
	xdp_flow_helper_fail_all(-ESRCH);
	xdp_flow_kill_helper();
	WRITE_ONCE(xdp_flow_helper.portid, 0);
	schedule_work(&xdp_flow_gone_work);
}

/**
 * xdp_flow_umh_hello() - a helper registers
 * @portid: its generic netlink port
 * @version: the ABI version it was built with
 * @pid: its process id
 * @extack: for errors
 *
 * Return: 0, or a negative errno when the helper is refused.
 */
int xdp_flow_umh_hello(u32 portid, u32 version, pid_t pid,
		       struct netlink_ext_ack *extack)
{
	if (version != XDP_FLOW_ABI_VERSION) {
		NL_SET_ERR_MSG_MOD(extack, "helper built for another ABI version");
		return -EPROTO;
	}
	mutex_lock(&xdp_flow_lock);
	if (xdp_flow_exiting) {
		mutex_unlock(&xdp_flow_lock);
		return -ESHUTDOWN;
	}
	if (xdp_flow_helper.state == XDP_FLOW_HELPER_RUNNING &&
	    xdp_flow_helper.portid != portid) {
		mutex_unlock(&xdp_flow_lock);
		NL_SET_ERR_MSG_MOD(extack, "another helper is running");
		return -EBUSY;
	}
	xdp_flow_helper.portid = portid;
	xdp_flow_helper.pid = pid;
	xdp_flow_helper.state = XDP_FLOW_HELPER_RUNNING;
	xdp_flow_start_failures = 0;
	mutex_unlock(&xdp_flow_lock);

	pr_info("xdp_flow: helper pid %d registered\n", pid);
	schedule_work(&xdp_flow_replay_work);
	return 0;
}

/**
 * xdp_flow_call() - send a request to the helper and wait for its reply
 * @cmd: XDP_FLOW_CMD_*
 * @ifindex: for DEV_ATTACH and DEV_DETACH
 * @rule_id: for RULE_DEL and STATS_GET
 * @xdp_mode: for DEV_ATTACH
 * @rule: for RULE_ADD
 * @stats: for STATS_GET, or NULL
 * @extack: gets the helper's message on error, or NULL
 *
 * A helper that does not answer in time is killed and restarted; the
 * replay then puts back what it holds. DEV_ATTACH is the one request that
 * needs rtnl in the helper: never wait for it holding xdp_flow_lock.
 *
 * Return: 0 or a negative errno.
 */
int xdp_flow_call(u8 cmd, u32 ifindex, u32 rule_id, u32 xdp_mode,
		  const struct xdp_flow_rule *rule, struct xdp_flow_stats *stats,
		  struct netlink_ext_ack *extack)
{
	/* extack keeps a pointer to the helper's message: it must outlive
	 * this call. Callers are serialised by xdp_flow_lock but for
	 * DEV_ATTACH, whose message at worst gets another caller's text.
	 */
	static char msg[128];
	unsigned int timeout;
	u32 seq;
	int err;

	if (xdp_flow_helper.state != XDP_FLOW_HELPER_RUNNING)
		return -ESRCH;
	err = xdp_flow_helper_send(cmd, &seq, ifindex, rule_id, xdp_mode, rule);
	if (err)
		return err;

	timeout = cmd == XDP_FLOW_CMD_DEV_ATTACH ? XDP_FLOW_ATTACH_TIMEOUT_MS :
		  helper_timeout_ms;
	err = xdp_flow_helper_wait(seq, timeout, stats, msg, sizeof(msg));
	if (err == -ETIMEDOUT) {
		xdp_flow_umh_broken("it did not answer in time");
		NL_SET_ERR_MSG_MOD(extack, "helper did not answer in time");
	} else if (err == -ESRCH) {
		NL_SET_ERR_MSG_MOD(extack, "helper went away");
	} else if (err && extack) {
		/* The helper's own words; they must outlive this call. */
		extack->_msg = msg[0] ? msg : "xdp_flow: helper refused the request";
	}
	return err;
}

static int xdp_flow_netlink_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net) || !n->portid ||
	    n->portid != READ_ONCE(xdp_flow_helper.portid))
		return NOTIFY_DONE;
	xdp_flow_umh_broken("its socket was closed");
	return NOTIFY_DONE;
}

static struct notifier_block xdp_flow_netlink_nb = {
	.notifier_call = xdp_flow_netlink_event,
};

int xdp_flow_umh_init(void)
{
	int err;

	err = netlink_register_notifier(&xdp_flow_netlink_nb);
	if (err)
		return err;
	xdp_flow_helper.state = XDP_FLOW_HELPER_STARTING;
	schedule_delayed_work(&xdp_flow_start_work, 0);
	return 0;
}

/**
 * xdp_flow_umh_exit() - stop the helper for good
 *
 * Asks it to detach and unpin everything, and kills it if it does not.
 */
void xdp_flow_umh_exit(void)
{
	int err;

	mutex_lock(&xdp_flow_lock);
	xdp_flow_exiting = true;
	mutex_unlock(&xdp_flow_lock);
	cancel_delayed_work_sync(&xdp_flow_start_work);
	cancel_work_sync(&xdp_flow_replay_work);
	cancel_work_sync(&xdp_flow_gone_work);

	err = xdp_flow_call(XDP_FLOW_CMD_SHUTDOWN, 0, 0, 0, NULL, NULL, NULL);
	if (err && err != -ESRCH) {
		pr_notice("xdp_flow: helper did not shut down cleanly (%d), killing it\n",
			  err);
		xdp_flow_kill_helper();
	}
	xdp_flow_helper.state = XDP_FLOW_HELPER_STOPPED;
	netlink_unregister_notifier(&xdp_flow_netlink_nb);
	xdp_flow_helper_fail_all(-ESHUTDOWN);
}
