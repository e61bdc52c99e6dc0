// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the datapath on a device while it has offloaded rules.
 *
 * A device's datapath is attached when it gets its first offloaded rule
 * and detached a while after it lost its last one, by a work item that
 * asks the helper without xdp_flow_lock held (attaching takes rtnl). TC's
 * callback waits a moment for the attach its rule made due, so that the
 * rule acts in XDP when TC returns.
 *
 * It owns the work and its waiters; it calls table.c, requests.c.
 */
#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/rtnetlink.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "xdp_flow.h"

static void xdp_flow_attach_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_attach_work, xdp_flow_attach_work_fn);
/*
 * A device keeps its datapath this long after its last offloaded rule
 * went: OVS deletes flows and adds them again, and the first rule of a
 * device without a datapath waits for the attach.
 */
#define XDP_FLOW_LINGER_MS	1000
/* Passes of the attach work that left nothing to do, for waiters. */
static atomic_t xdp_flow_attach_passes = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(xdp_flow_attach_wq);
#define XDP_FLOW_ATTACH_WAIT_MS	2000
/* Under xdp_flow_lock: an install made an attach due (see
 * xdp_flow_attach_wait()).
 */
bool xdp_flow_attach_due;

/*
 * Attaches the datapath to each enabled device that has offloaded rules and
 * detaches it from each that has none left, one device at a time and
 * without xdp_flow_lock held while the helper works (attaching takes rtnl,
 * and whoever holds rtnl may wait for xdp_flow_lock).
 */
static void xdp_flow_attach_work_fn(struct work_struct *work)
{
	unsigned long linger = msecs_to_jiffies(XDP_FLOW_LINGER_MS);
	unsigned long later;
	struct xdp_flow_dev *xdev;
	bool attach = false;
	int ifindex, err;
	u32 mode = 0;

	for (;;) {
		ifindex = 0;
		later = 0;
		mutex_lock(&xdp_flow_lock);
		list_for_each_entry(xdev, &xdp_flow_devs, list) {
			attach = xdev->nr_offloaded;
			if (attach == xdev->attached)
				continue;
			/* Idle, but not for the linger yet: come back then. */
			if (!attach &&
			    time_before(jiffies, xdev->idle_since + linger)) {
				unsigned long left = xdev->idle_since + linger -
						     jiffies;

				later = later ? min(later, left) : left;
				continue;
			}
			ifindex = xdev->ifindex;
			mode = xdev->xdp_mode;
			xdev->attached = attach;
			xdev->err = 0;
			xdev->state = attach ? XDP_FLOW_DEV_STATE_ATTACHING :
					       XDP_FLOW_DEV_STATE_IDLE;
			break;
		}
		mutex_unlock(&xdp_flow_lock);
		if (!ifindex) {
			if (later)
				queue_delayed_work(system_long_wq,
						   &xdp_flow_attach_work, later);
			atomic_inc(&xdp_flow_attach_passes);
			wake_up_all(&xdp_flow_attach_wq);
			return;
		}

		/* Without a helper, the replay after HELLO attaches. */
		err = xdp_flow_helper_call(attach ? XDP_FLOW_CMD_DEV_ATTACH :
					   XDP_FLOW_CMD_DEV_DETACH, ifindex, 0,
					   mode, NULL, NULL, NULL);
		if (!attach && err) {
			mutex_lock(&xdp_flow_lock);
			xdp_flow_stale_link(ifindex);
			mutex_unlock(&xdp_flow_lock);
		}
		if (!attach || err == -ESRCH)
			continue;
		mutex_lock(&xdp_flow_lock);
		xdev = xdp_flow_dev_find(ifindex);
		if (xdev && xdev->attached &&
		    xdev->state == XDP_FLOW_DEV_STATE_ATTACHING) {
			xdev->state = err ? XDP_FLOW_DEV_STATE_ERROR :
					    XDP_FLOW_DEV_STATE_ATTACHED;
			xdev->err = err;
		}
		mutex_unlock(&xdp_flow_lock);
		if (err)
			pr_warn("xdp_flow: cannot attach the datapath to ifindex %d (%d)\n",
				ifindex, err);
	}
}

/**
 * xdp_flow_attach_wait() - wait for the attach an install made due
 * @passes: the attach work's passes before the install
 *	(xdp_flow_attach_passes_read())
 *
 * Waits for the attach an install made due, so that the first rule on a
 * device acts in XDP when TC returns. Attaching needs rtnl, and our caller
 * holds the block's cb_lock (nftables also its commit mutex), which
 * whoever holds rtnl may be waiting for: so not at all while rtnl is held,
 * and not longer than XDP_FLOW_ATTACH_WAIT_MS. The attach then completes a
 * moment later; until then TC runs the rule in software (same outcome).
 * Called without xdp_flow_lock.
 */
void xdp_flow_attach_wait(int passes)
{
	if (!rtnl_is_locked())
		wait_event_timeout(xdp_flow_attach_wq,
				   atomic_read(&xdp_flow_attach_passes) != passes,
				   msecs_to_jiffies(XDP_FLOW_ATTACH_WAIT_MS));
}

/**
 * xdp_flow_attach_now() - a device got its first offloaded rule: attach it
 */
void xdp_flow_attach_now(void)
{
	mod_delayed_work(system_long_wq, &xdp_flow_attach_work, 0);
}

/**
 * xdp_flow_attach_after_linger() - a device lost its last offloaded rule:
 *	detach it after XDP_FLOW_LINGER_MS, unless it has one again by then
 */
void xdp_flow_attach_after_linger(void)
{
	queue_delayed_work(system_long_wq, &xdp_flow_attach_work,
			   msecs_to_jiffies(XDP_FLOW_LINGER_MS));
}

/**
 * xdp_flow_attach_passes_read() - the attach work's passes so far
 *
 * Return: what xdp_flow_attach_wait() waits to see change.
 */
int xdp_flow_attach_passes_read(void)
{
	return atomic_read(&xdp_flow_attach_passes);
}

/**
 * xdp_flow_attach_flush() - let an attach or detach under way land
 */
void xdp_flow_attach_flush(void)
{
	flush_delayed_work(&xdp_flow_attach_work);
}

/**
 * xdp_flow_attach_exit() - attach and detach nothing any more
 */
void xdp_flow_attach_exit(void)
{
	cancel_delayed_work_sync(&xdp_flow_attach_work);
}
