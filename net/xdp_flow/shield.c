// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: shields and the rules that wait for room.
 *
 * When the helper has no room for a rule, TC runs it, and what it may match
 * must not be decided in XDP by a rule after it: each enabled device has a
 * shield, a software rule of its own id (the top XDP_FLOW_MAX_SHIELDS of
 * the rule ids) that hands every frame of the device to the stack from the
 * lowest order of its rules that wait (or that the module had no memory to
 * keep) on. It rises as they go in, and goes when none waits.
 *
 * It owns the shields and the count of waiting rules; it calls table.c and
 * requests.c.
 */
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "xdp_flow.h"

/* --- shields: while a rule waits for room, its device's frames go to the
 * stack from that rule's order on (see XDP_FLOW_MAX_SHIELDS)
 */

/* Rules that wait for room, over all devices (under xdp_flow_lock). */
unsigned int xdp_flow_nr_waiting;

/**
 * xdp_flow_shield_send() - have the helper hold a device's shield
 * @xdev: the device
 * @order: the order the device's frames go to the stack from, or
 *	XDP_FLOW_NO_SHIELD for none
 *
 * Hands @xdev's frames to the stack from @order on, whatever the helper
 * held before. Caller holds xdp_flow_lock.
 *
 * Return: 0, or the helper's error.
 */
int xdp_flow_shield_send(struct xdp_flow_dev *xdev, u64 order)
{
	struct xdp_flow_rule *rule;
	int err;

	if (order == XDP_FLOW_NO_SHIELD) {
		err = xdp_flow_helper_call(XDP_FLOW_CMD_RULE_DEL, 0,
					   xdev->shield_id, 0, NULL, NULL, NULL);
		return err == -ENOENT ? 0 : err;
	}
	rule = kzalloc_obj(*rule, GFP_KERNEL);
	if (!rule)
		return -ENOMEM;
	rule->id = xdev->shield_id;
	rule->flags = XDP_FLOW_RULE_F_SOFTWARE | XDP_FLOW_RULE_F_SHIELD;
	rule->order = order;
	rule->key.ifindex = xdev->ifindex;
	rule->mask.ifindex = 0xffffffff;
	rule->nr_actions = 1;
	rule->actions[0].id = XDP_FLOW_ACTION_PASS;
	err = xdp_flow_helper_call(XDP_FLOW_CMD_RULE_ADD, 0, 0, 0, rule, NULL,
				   NULL);
	kfree(rule);
	return err;
}

/**
 * xdp_flow_shield_set() - move a device's shield
 * @xdev: the device
 * @order: as xdp_flow_shield_send()
 *
 * Tells the helper when it changes, and the log when the device's first
 * rule starts or stops waiting. Caller holds xdp_flow_lock.
 */
void xdp_flow_shield_set(struct xdp_flow_dev *xdev, u64 order)
{
	u64 was = xdev->shield_order;
	struct net_device *dev;
	int err;

	if (order == was)
		return;
	err = xdp_flow_shield_send(xdev, order);
	if (err) {
		/* A helper that comes back gets it in the replay. */
		if (xdp_flow_helper_running())
			pr_err("xdp_flow: ifindex %d: the helper refused the device's shield (%d)\n",
			       xdev->ifindex, err);
		else
			xdp_flow_undelivered();
		return;
	}
	xdev->shield_order = order;
	if (was != XDP_FLOW_NO_SHIELD && order != XDP_FLOW_NO_SHIELD)
		return;
	rcu_read_lock();
	dev = dev_get_by_index_rcu(&init_net, xdev->ifindex);
	if (order != XDP_FLOW_NO_SHIELD)
		pr_warn("xdp_flow: %s: rules wait for room in the XDP tables; the device's frames go to the stack from %s %llu on\n",
			dev ? dev->name : "?",
			order >> 32 >= XDP_FLOW_ORDER_NFT_BASE ?
			"nftables chain priority" : "prio",
			order >> 32 >= XDP_FLOW_ORDER_NFT_BASE ?
			(order >> 32) - XDP_FLOW_ORDER_NFT_BASE : order >> 32);
	else
		pr_info("xdp_flow: %s: no rule waits for room any more\n",
			dev ? dev->name : "?");
	rcu_read_unlock();
}

/**
 * xdp_flow_waiting_min() - where a device's shield belongs
 * @xdev: the device
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: the lowest order of the rules of @xdev that wait for room (or
 * lost), or XDP_FLOW_NO_SHIELD.
 */
u64 xdp_flow_waiting_min(const struct xdp_flow_dev *xdev)
{
	u64 min = xdev->lost_order;
	struct xdp_flow_entry *entry;
	struct xdp_flow_binding *b;

	if (!xdev->nr_waiting)
		return min;
	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->ifindex != xdev->ifindex)
			continue;
		list_for_each_entry(entry, &b->entries, list)
			if (entry->waiting && entry->rule.order < min)
				min = entry->rule.order;
	}
	return min;
}

/**
 * xdp_flow_dev_lost() - no memory to keep a TC rule of a device
 * @xdev: the device
 * @f: TC's rule
 *
 * TC runs it in software and XDP does not know it, so the device's frames
 * go to the stack from its prio on, until offload is disabled on the
 * device. Caller holds xdp_flow_lock.
 */
void xdp_flow_dev_lost(struct xdp_flow_dev *xdev,
		       const struct flow_cls_offload *f)
{
	u64 order = (u64)f->common.prio << 32;

	if (order >= xdev->lost_order)
		return;
	xdev->lost_order = order;
	pr_warn("xdp_flow: ifindex %d: no memory for a rule of prio %u: the device's frames go to the stack from there until offload is disabled on it\n",
		xdev->ifindex, f->common.prio);
	xdp_flow_shield_set(xdev, xdp_flow_waiting_min(xdev));
}

/**
 * xdp_flow_entry_wait() - the helper had no room for a rule
 * @entry: the rule
 *
 * Its device's shield hands what it may match to the stack. Caller holds
 * xdp_flow_lock.
 */
void xdp_flow_entry_wait(struct xdp_flow_entry *entry)
{
	struct xdp_flow_dev *xdev = xdp_flow_dev_find(entry->binding->ifindex);

	if (!xdev)
		return;
	if (!entry->waiting) {
		entry->waiting = true;
		xdev->nr_waiting++;
		xdp_flow_nr_waiting++;
	}
	if (entry->rule.order < xdev->shield_order)
		xdp_flow_shield_set(xdev, entry->rule.order);
}

/**
 * xdp_flow_entry_unwait() - a rule is in, or gone
 * @entry: the rule
 *
 * Its device's shield may rise or go. Caller holds xdp_flow_lock.
 */
void xdp_flow_entry_unwait(struct xdp_flow_entry *entry)
{
	struct xdp_flow_dev *xdev;

	if (!entry->waiting)
		return;
	entry->waiting = false;
	xdp_flow_nr_waiting--;
	xdev = xdp_flow_dev_find(entry->binding->ifindex);
	if (!xdev || WARN_ON_ONCE(!xdev->nr_waiting))
		return;
	xdev->nr_waiting--;
	xdp_flow_shield_set(xdev, xdp_flow_waiting_min(xdev));
}

/**
 * xdp_flow_shield_free() - a device's shield goes with the device
 * @xdev: the device, off xdp_flow_devs or going
 *
 * Takes @xdev's shield out and gives its id back, or keeps the id for the
 * next helper to take out. Caller holds xdp_flow_lock.
 */
void xdp_flow_shield_free(struct xdp_flow_dev *xdev)
{
	xdp_flow_id_put(xdev->shield_id,
			xdev->shield_order != XDP_FLOW_NO_SHIELD &&
			xdp_flow_shield_send(xdev, XDP_FLOW_NO_SHIELD));
}
