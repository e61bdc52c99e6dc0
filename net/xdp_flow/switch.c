// SPDX-License-Identifier: GPL-2.0
/*
 * The ethtool switch: `ethtool -K DEV flow-offload-xdp on|off` on kernels
 * that have that feature (the patch series under drivers/), otherwise
 * `ethtool -K DEV hw-tc-offload on|off`. The module offers hw-tc-offload
 * itself on the Ethernet devices of the initial namespace that have no
 * ndo_setup_tc: the core acts on NETIF_F_HW_TC only for devices that have
 * one, so for the others the bit is free to mean "xdp_flow offloads this
 * device's rules".
 *
 * A feature change arrives under rtnl, where offload cannot be enabled
 * (enabling takes rtnl and waits for the helper): the notifier notes the
 * device and what its feature went to, and a work item enables or
 * disables it as xdp-flow enable and disable do, with the hook the module
 * picks (while no helper runs, once one has registered). When enabling
 * fails the feature goes off again and the kernel log says why. xdp-flow
 * enable and disable turn the feature on and off in turn, so that both
 * switches show one state.
 *
 * It owns the feature's state as the module follows it; it calls dev.c
 * (enable, disable), replay.c, table.c and requests.c.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "xdp_flow.h"

#ifdef NETIF_F_HW_FLOW_OFFLOAD_XDP
#define XDP_FLOW_SWITCH_BIT	NETIF_F_HW_FLOW_OFFLOAD_XDP
#define XDP_FLOW_SWITCH_VIA	XDP_FLOW_SWITCH_FLOW_OFFLOAD_XDP
#define XDP_FLOW_SWITCH_NAME	"flow-offload-xdp"
/* The core offers it on Ethernet devices. */
#define XDP_FLOW_SWITCH_OFFER	false
#else
#define XDP_FLOW_SWITCH_BIT	NETIF_F_HW_TC
#define XDP_FLOW_SWITCH_VIA	XDP_FLOW_SWITCH_HW_TC
#define XDP_FLOW_SWITCH_NAME	"hw-tc-offload"
#define XDP_FLOW_SWITCH_OFFER	true
#endif

/* Serialises switching: xdp-flow's enable and disable (each with the
 * feature change that follows it) and the work. Nobody else takes it, so
 * waiting for the helper under it holds up nobody else.
 */
static DEFINE_MUTEX(xdp_flow_switch_lock);
/* ifindex -> the feature's state as the notifier last saw it, when on. */
static DEFINE_XARRAY(xdp_flow_switch_seen);
/* ifindex -> what the feature last changed to, for the work to do. */
static DEFINE_XARRAY(xdp_flow_switch_pending);
/* Set under rtnl while the module goes: nothing is offered or done. */
static bool xdp_flow_switch_exiting;

static void xdp_flow_switch_work_fn(struct work_struct *work);
static DECLARE_WORK(xdp_flow_switch_work, xdp_flow_switch_work_fn);

/* Whether the module offers the feature on @dev (hw-tc-offload only). */
static bool xdp_flow_switch_offers(const struct net_device *dev)
{
	return XDP_FLOW_SWITCH_OFFER && net_eq(dev_net(dev), &init_net) &&
	       dev->type == ARPHRD_ETHER && !(dev->flags & IFF_LOOPBACK) &&
	       !dev->netdev_ops->ndo_setup_tc;
}

/* Whether the feature is @dev's switch. */
static bool xdp_flow_switch_has(const struct net_device *dev)
{
	if (!net_eq(dev_net(dev), &init_net) ||
	    !(dev->hw_features & XDP_FLOW_SWITCH_BIT))
		return false;
	return !XDP_FLOW_SWITCH_OFFER || !dev->netdev_ops->ndo_setup_tc;
}

/* Under rtnl: takes back the hw-tc-offload the module offered on @dev. */
static void xdp_flow_switch_withdraw(struct net_device *dev, bool notify)
{
	bool was_on = dev->features & XDP_FLOW_SWITCH_BIT;

	xa_erase(&xdp_flow_switch_seen, dev->ifindex);
	if (!XDP_FLOW_SWITCH_OFFER || !xdp_flow_switch_has(dev))
		return;
	dev->hw_features &= ~XDP_FLOW_SWITCH_BIT;
	dev->wanted_features &= ~XDP_FLOW_SWITCH_BIT;
	dev->features &= ~XDP_FLOW_SWITCH_BIT;
	if (notify && was_on)
		netdev_features_change(dev);
}

/* Under rtnl: the feature of @dev is what it is now; note a change. */
static void xdp_flow_switch_note(struct net_device *dev)
{
	bool on = dev->features & XDP_FLOW_SWITCH_BIT;
	bool was = xa_load(&xdp_flow_switch_seen, dev->ifindex);
	int err = 0;

	if (on == was)
		return;
	if (on)
		err = xa_err(xa_store(&xdp_flow_switch_seen, dev->ifindex,
				      xa_mk_value(1), GFP_KERNEL));
	else
		xa_erase(&xdp_flow_switch_seen, dev->ifindex);
	if (!err)
		err = xa_err(xa_store(&xdp_flow_switch_pending, dev->ifindex,
				      xa_mk_value(on), GFP_KERNEL));
	if (err) {
		pr_warn("xdp_flow: %s: no memory to follow %s %s\n",
			dev->name, XDP_FLOW_SWITCH_NAME, on ? "on" : "off");
		return;
	}
	/* It waits for the helper. */
	queue_work(system_long_wq, &xdp_flow_switch_work);
}

static int xdp_flow_switch_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	if (xdp_flow_switch_exiting)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_REGISTER:
		if (xdp_flow_switch_offers(dev))
			dev->hw_features |= XDP_FLOW_SWITCH_BIT;
		if (xdp_flow_switch_has(dev))
			xdp_flow_switch_note(dev);
		break;
	case NETDEV_FEAT_CHANGE:
		if (xdp_flow_switch_has(dev))
			xdp_flow_switch_note(dev);
		break;
	case NETDEV_UNREGISTER:
		/* Going away, or to another namespace: the device's
		 * offload goes with the rest of dev.c's state.
		 */
		xdp_flow_switch_withdraw(dev, false);
		xa_erase(&xdp_flow_switch_pending, dev->ifindex);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block xdp_flow_switch_nb = {
	.notifier_call = xdp_flow_switch_event,
};

/* Turns @dev's feature @on, unless that is its state already. */
static void xdp_flow_switch_set(struct net_device *dev, bool on)
{
	rtnl_lock();
	if (!xdp_flow_switch_exiting && dev->reg_state == NETREG_REGISTERED &&
	    xdp_flow_switch_has(dev) &&
	    !!(dev->wanted_features & XDP_FLOW_SWITCH_BIT) != on) {
		if (on)
			dev->wanted_features |= XDP_FLOW_SWITCH_BIT;
		else
			dev->wanted_features &= ~XDP_FLOW_SWITCH_BIT;
		netdev_update_features(dev);
	}
	rtnl_unlock();
}

static bool xdp_flow_switch_enabled(int ifindex)
{
	bool enabled;

	mutex_lock(&xdp_flow_lock);
	enabled = xdp_flow_dev_find(ifindex);
	mutex_unlock(&xdp_flow_lock);
	return enabled;
}

/* Does what @dev's feature last changed to (@on). */
static void xdp_flow_switch_apply(int ifindex, bool on)
{
	struct netlink_ext_ack extack = {};
	struct net_device *dev;
	int err;

	dev = dev_get_by_index(&init_net, ifindex);
	if (!dev)
		return;
	mutex_lock(&xdp_flow_switch_lock);
	/* Changed again since (its note is pending), or another device. */
	if (on != !!(READ_ONCE(dev->features) & XDP_FLOW_SWITCH_BIT))
		goto out;
	if (on == xdp_flow_switch_enabled(ifindex))
		goto out;
	if (!on) {
		xdp_flow_dev_disable(ifindex, NULL);
		goto out;
	}
	err = xdp_flow_dev_enable(dev, XDP_FLOW_XDP_MODE_AUTO,
				  XDP_FLOW_SWITCH_VIA, &extack);
	if (err == -ESRCH &&
	    xdp_flow_helper_state() == XDP_FLOW_HELPER_STARTING &&
	    !xa_err(xa_store(&xdp_flow_switch_pending, ifindex,
			     xa_mk_value(1), GFP_KERNEL))) {
		/* Again once a helper has registered (xdp_flow_switch_kick()),
		 * or now if one has meanwhile.
		 */
		if (xdp_flow_helper_state() == XDP_FLOW_HELPER_RUNNING)
			queue_work(system_long_wq, &xdp_flow_switch_work);
		goto out;
	}
	if (err) {
		const char *msg = extack._msg ?: "error";

		/* NL_SET_ERR_MSG_MOD's prefix is this line's own. */
		msg += str_has_prefix(msg, KBUILD_MODNAME ": ");
		pr_warn("xdp_flow: %s: %s on: cannot enable offload: %s (%d); %s is off again\n",
			dev->name, XDP_FLOW_SWITCH_NAME, msg, err,
			XDP_FLOW_SWITCH_NAME);
		xdp_flow_switch_set(dev, false);
	}
out:
	mutex_unlock(&xdp_flow_switch_lock);
	dev_put(dev);
}

static void xdp_flow_switch_work_fn(struct work_struct *work)
{
	unsigned long ifindex;
	void *entry;

	xa_for_each(&xdp_flow_switch_pending, ifindex, entry) {
		entry = xa_erase(&xdp_flow_switch_pending, ifindex);
		if (entry && !READ_ONCE(xdp_flow_switch_exiting))
			xdp_flow_switch_apply(ifindex, xa_to_value(entry));
	}
}

/*
 * A helper has the rules: enable what waited for one. A feature that went
 * on while no helper was running (the module just loaded, or the helper
 * restarting) waits in the pending set.
 */
static void xdp_flow_switch_kick(void)
{
	if (!xa_empty(&xdp_flow_switch_pending))
		queue_work(system_long_wq, &xdp_flow_switch_work);
}

/**
 * xdp_flow_switch_replay() - give a (new) helper everything it must hold,
 *	then enable what waited for a helper
 *
 * The replay helper.c runs after HELLO (xdp_flow_helper_init()).
 *
 * Return: what xdp_flow_replay() returns.
 */
int xdp_flow_switch_replay(void)
{
	int err = xdp_flow_replay();

	if (!err)
		xdp_flow_switch_kick();
	return err;
}

/**
 * xdp_flow_switch_enable() - xdp-flow enable: offload on, feature on
 * @dev: the device
 * @xdp_mode: enum xdp_flow_xdp_mode
 * @extack: for errors
 *
 * Return: what xdp_flow_dev_enable() returns.
 */
int xdp_flow_switch_enable(struct net_device *dev, u32 xdp_mode,
			   struct netlink_ext_ack *extack)
{
	int err;

	mutex_lock(&xdp_flow_switch_lock);
	err = xdp_flow_dev_enable(dev, xdp_mode, XDP_FLOW_SWITCH_GENL, extack);
	if (!err)
		xdp_flow_switch_set(dev, true);
	mutex_unlock(&xdp_flow_switch_lock);
	return err;
}

/**
 * xdp_flow_switch_disable() - xdp-flow disable: offload off, feature off
 * @ifindex: the device
 * @extack: for errors
 *
 * Return: what xdp_flow_dev_disable() returns.
 */
int xdp_flow_switch_disable(int ifindex, struct netlink_ext_ack *extack)
{
	struct net_device *dev;
	int err;

	mutex_lock(&xdp_flow_switch_lock);
	err = xdp_flow_dev_disable(ifindex, extack);
	dev = err ? NULL : dev_get_by_index(&init_net, ifindex);
	if (dev) {
		xdp_flow_switch_set(dev, false);
		dev_put(dev);
	}
	mutex_unlock(&xdp_flow_switch_lock);
	return err;
}

/**
 * xdp_flow_switch_init() - offer the feature and follow it
 *
 * Return: 0 or a negative errno.
 */
int xdp_flow_switch_init(void)
{
	/* Replays NETDEV_REGISTER for the devices there are. */
	return register_netdevice_notifier(&xdp_flow_switch_nb);
}

/**
 * xdp_flow_switch_exit() - withdraw the feature; switch nothing any more
 *
 * Before the helper stops: a switch in progress may be waiting for it.
 * The devices stay enabled; xdp_flow_offload_exit() takes them out.
 */
void xdp_flow_switch_exit(void)
{
	struct net_device *dev;

	rtnl_lock();
	WRITE_ONCE(xdp_flow_switch_exiting, true);
	for_each_netdev(&init_net, dev)
		xdp_flow_switch_withdraw(dev, true);
	rtnl_unlock();
	unregister_netdevice_notifier(&xdp_flow_switch_nb);
	cancel_work_sync(&xdp_flow_switch_work);
	xa_destroy(&xdp_flow_switch_pending);
	xa_destroy(&xdp_flow_switch_seen);
}
