// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: offload on a device: enabling and disabling it, and the device
 * going away.
 *
 * Enabling a device turns the places of its TC rules into entries, has TC
 * offer its rules again (reoffload) so that they are translated, then
 * installs them all in TC's order and attaches the datapath; disabling
 * does the reverse and keeps only the places again. A device that is
 * unregistered (or leaves the initial namespace) is disabled, and the
 * rules that redirect to it become software rules, as mirred drops what
 * it would send there.
 *
 * It owns the enabled devices' life; it calls rules.c (the translation),
 * install.c, shield.c, stats.c, attach.c, table.c, netdev.c, requests.c
 * and classifiers.c.
 */
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/rcupdate.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/stringify.h>
#include <net/flow_offload.h>
#include <net/net_namespace.h>
#include <net/pkt_cls.h>
#include <net/sch_generic.h>

#include "xdp_flow.h"

/*
 * Offload was disabled on @ifindex: its flowtables' flows, out of XDP
 * already, are forgotten. The flowtable forwards them in software and
 * offers them again, which enabling the device answers. Caller holds
 * xdp_flow_lock.
 */
static void xdp_flow_ft_forget(int ifindex)
{
	struct xdp_flow_entry *entry, *tmp;
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->ifindex != ifindex || !b->ft)
			continue;
		list_for_each_entry_safe(entry, tmp, &b->entries, list)
			xdp_flow_entry_free(entry);
	}
}

/*
 * TC offers a block's rules to a driver only as it binds the block. When
 * offload is enabled on a device, its rules were offered before and kept as
 * software rules: this offers them again, as TC does for a new binding,
 * through each classifier's reoffload. @add: enabling, else disabling.
 * The callback only translates (it runs under rtnl and the block's cb_lock,
 * where nothing may wait for the helper); TC counts a rule in_hw for each
 * callback that takes it, and no longer once each has given it back.
 */
static int xdp_flow_reoffer_cb(enum tc_setup_type type, void *type_data,
			       void *cb_priv)
{
	struct xdp_flow_binding *b = cb_priv;
	struct flow_cls_offload *f = type_data;
	struct flow_cls_offload other;
	struct xdp_flow_entry *entry;
	struct xdp_flow_dev *xdev;
	int err = -EOPNOTSUPP;

	if (type != TC_SETUP_CLSFLOWER) {
		/* A prio's shield is the same for each of its rules. */
		if (!xdp_flow_other_reoffer(type, type_data, &other))
			return err;
		f = &other;
	}
	mutex_lock(&xdp_flow_lock);
	entry = xdp_flow_entry_find(b, f->cookie);
	xdev = xdp_flow_dev_find(b->ifindex);
	if (!entry || entry->installed) {
		/* Not ours, or offered since offload was enabled. */
	} else if (f->command == FLOW_CLS_REPLACE && xdev &&
		   entry->kind == XDP_FLOW_ENTRY_SOFTWARE) {
		err = xdp_flow_entry_translate(entry, f, xdev, NULL);
	} else if (f->command == FLOW_CLS_DESTROY && !xdev &&
		   entry->kind == XDP_FLOW_ENTRY_OFFLOAD) {
		xdp_flow_entry_to_software(entry);
		err = 0;
	}
	mutex_unlock(&xdp_flow_lock);
	return err;
}

/*
 * Offload is being enabled on @ifindex: makes each TC rule kept there by
 * its place a software entry, which xdp_flow_reoffer() then translates.
 * Caller holds xdp_flow_lock. Returns 0, or -ENOMEM with the rest still
 * places (entries and places both stand for software rules).
 */
static int xdp_flow_places_take(int ifindex)
{
	struct xdp_flow_place *place, *tmp;
	struct xdp_flow_entry *entry;
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->ifindex != ifindex)
			continue;
		list_for_each_entry_safe(place, tmp, &b->places, list) {
			entry = xdp_flow_entry_alloc(b, place->cookie);
			if (!entry)
				return -ENOMEM;
			entry->mask = place->mask;
			entry->base.packets = place->packets;
			entry->base.bytes = place->bytes;
			if (xdp_flow_entry_insert(entry)) {
				xdp_flow_entry_dealloc(entry);
				return -ENOMEM;
			}
			xdp_flow_entry_to_software(entry);
			/* The mask's reference is the entry's now. */
			place->mask->refcnt++;
			xdp_flow_place_free(b, place);
		}
	}
	return 0;
}

/*
 * Offload was disabled on @ifindex and TC's rules given back: keeps of each
 * only its place, and what XDP counted that TC was not told of. Caller
 * holds xdp_flow_lock. Entries still in use are kept as they are.
 */
static void xdp_flow_places_give(int ifindex)
{
	struct xdp_flow_entry *entry, *tmp;
	struct xdp_flow_place *place;
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->ifindex != ifindex || b->nft || b->ft)
			continue;
		list_for_each_entry_safe(entry, tmp, &b->entries, list) {
			if (entry->kind != XDP_FLOW_ENTRY_SOFTWARE ||
			    entry->installed || entry->waiting ||
			    entry->rule.id != XDP_FLOW_NO_ID)
				continue;
			place = xdp_flow_place_alloc();
			if (!place)
				return;
			place->cookie = entry->cookie;
			place->mask = entry->mask;
			place->mask->refcnt++;
			place->packets = entry->base.packets + entry->hw.packets -
					 entry->reported.packets;
			place->bytes = entry->base.bytes + entry->hw.bytes -
				       entry->reported.bytes;
			xdp_flow_entry_free(entry);
			if (xdp_flow_place_insert(b, place)) {
				xdp_flow_mask_put(place->mask);
				xdp_flow_place_dealloc(place);
				/* Enabling cannot order the rules now. */
				b->unseen_rules = true;
				continue;
			}
		}
	}
}

/* Caller holds rtnl, not xdp_flow_lock. */
static void xdp_flow_reoffer(int ifindex, bool add)
{
	struct xdp_flow_binding *b, **bs;
	unsigned int i, n = 0;

	ASSERT_RTNL();
	/* TC's bindings go away only under rtnl. */
	mutex_lock(&xdp_flow_lock);
	list_for_each_entry(b, &xdp_flow_bindings, list)
		n += b->ifindex == ifindex && !b->nft && !b->ft;
	bs = kcalloc(n ?: 1, sizeof(*bs), GFP_KERNEL);
	n = 0;
	list_for_each_entry(b, &xdp_flow_bindings, list)
		if (bs && b->ifindex == ifindex && !b->nft && !b->ft)
			bs[n++] = b;
	mutex_unlock(&xdp_flow_lock);
	if (!bs) {
		pr_warn("xdp_flow: ifindex %d: no memory to offer its rules again\n",
			ifindex);
		return;
	}
	for (i = 0; i < n; i++) {
		struct tcf_block *block = container_of(bs[i]->block,
						       struct tcf_block,
						       flow_block);
		struct tcf_chain *chain;
		struct tcf_proto *tp;

		down_write(&block->cb_lock);
		for (chain = tcf_get_next_chain(block, NULL); chain;
		     chain = tcf_get_next_chain(block, chain))
			for (tp = tcf_get_next_proto(chain, NULL); tp;
			     tp = tcf_get_next_proto(chain, tp))
				if (tp->ops->reoffload)
					tp->ops->reoffload(tp, add,
							   xdp_flow_reoffer_cb,
							   bs[i], NULL);
		up_write(&block->cb_lock);
	}
	kfree(bs);
}

static bool xdp_flow_unseen_rules(int ifindex)
{
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list)
		if (b->ifindex == ifindex && b->unseen_rules)
			return true;
	return false;
}

/*
 * Picks the hook for XDP_FLOW_XDP_MODE_AUTO. On a device whose frames
 * arrive as skbs anyway (virtual devices: veth, tap; drivers without
 * native XDP), XDP would first turn each skb back into an XDP buffer,
 * often by copying it, and bulk TCP would lose GRO on the way: every
 * packet that matches no rule would pay. There the TC hook costs what TC
 * costs. A driver with native XDP runs it before it builds an skb.
 */
static u32 xdp_flow_auto_hook(const struct net_device *dev, const char **why)
{
	bool skbs = !dev->dev.parent || !dev->netdev_ops->ndo_bpf;

	if (!skbs) {
		*why = "auto: the driver runs XDP before it builds an skb";
		return XDP_FLOW_XDP_MODE_NATIVE;
	}
	if (!IS_ENABLED(CONFIG_NET_XGRESS)) {
		*why = dev->netdev_ops->ndo_bpf ?
		       "auto: frames arrive as skbs, but this kernel has no tcx (Linux 6.6+)" :
		       "auto: no native XDP and no tcx (Linux 6.6+): generic XDP";
		return dev->netdev_ops->ndo_bpf ? XDP_FLOW_XDP_MODE_NATIVE :
						  XDP_FLOW_XDP_MODE_GENERIC;
	}
	if (dev->dev.parent)
		*why = "auto: no native XDP in the driver; the tc hook runs on its skbs";
	else
		*why = "auto: virtual device, frames arrive as skbs: tc spares misses";
	return XDP_FLOW_XDP_MODE_TC;
}

/**
 * xdp_flow_dev_enable() - enable offload on a device
 * @dev: the device
 * @xdp_mode: enum xdp_flow_xdp_mode, the hook (AUTO: the module picks)
 * @via: enum xdp_flow_switch, the switch that asks
 * @extack: for errors
 *
 * The datapath goes on the device only while it has offloaded rules: if
 * it has some now, this asks the helper to attach it and waits, without
 * holding xdp_flow_lock (attaching needs rtnl, and TC calls us under rtnl).
 * The device's TC rules are offered again first (xdp_flow_reoffer()), so
 * that the rules it had before are offloaded too.
 *
 * Return: 0, or a negative errno (with @extack set).
 */
int xdp_flow_dev_enable(struct net_device *dev, u32 xdp_mode, u32 via,
			struct netlink_ext_ack *extack)
{
	const char *why = "asked for";
	struct xdp_flow_dev *xdev;
	bool attach;
	int err;

	if (xdp_mode > XDP_FLOW_XDP_MODE_AUTO) {
		NL_SET_ERR_MSG_MOD(extack, "unknown hook");
		return -EINVAL;
	}
	if (xdp_mode == XDP_FLOW_XDP_MODE_AUTO)
		xdp_mode = xdp_flow_auto_hook(dev, &why);
	if (xdp_mode == XDP_FLOW_XDP_MODE_TC && !IS_ENABLED(CONFIG_NET_XGRESS)) {
		NL_SET_ERR_MSG_MOD(extack, "the tc hook needs tcx (Linux 6.6 or later)");
		return -EOPNOTSUPP;
	}
	if (xdp_mode == XDP_FLOW_XDP_MODE_NATIVE && !dev->netdev_ops->ndo_bpf) {
		NL_SET_ERR_MSG_MOD(extack, "no native XDP in the driver: use hook tc or generic");
		return -EOPNOTSUPP;
	}

	/* Under rtnl, the device cannot go or leave the namespace before
	 * its entry is listed, where the netdev notifier finds it.
	 */
	rtnl_lock();
	mutex_lock(&xdp_flow_lock);
	if (dev->reg_state != NETREG_REGISTERED ||
	    !net_eq(dev_net(dev), &init_net)) {
		NL_SET_ERR_MSG_MOD(extack, "the device went away");
		err = -ENODEV;
		goto unlock;
	}
	if (!xdp_flow_helper_running()) {
		NL_SET_ERR_MSG_MOD(extack, "helper is not running");
		err = -ESRCH;
		goto unlock;
	}
	if (xdp_flow_dev_find(dev->ifindex)) {
		NL_SET_ERR_MSG_MOD(extack, "offload is already enabled on this device");
		err = -EEXIST;
		goto unlock;
	}
	if (xdp_flow_unseen_rules(dev->ifindex)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "the device's ingress rules predate the module; re-create its clsact qdisc first");
		err = -EBUSY;
		goto unlock;
	}
	xdev = kzalloc_obj(*xdev, GFP_KERNEL);
	if (!xdev) {
		err = -ENOMEM;
		goto unlock;
	}
	err = xdp_flow_shield_id_get();
	if (err < 0) {
		kfree(xdev);
		if (err == -ENOSPC)
			NL_SET_ERR_MSG_MOD(extack, "offload is enabled on "
					   __stringify(XDP_FLOW_MAX_SHIELDS)
					   " devices already, the most it can be");
		goto unlock;
	}
	xdev->shield_id = err;
	xdev->shield_order = XDP_FLOW_NO_SHIELD;
	xdev->lost_order = XDP_FLOW_NO_SHIELD;
	xdev->ifindex = dev->ifindex;
	xdev->xdp_mode = xdp_mode;
	xdev->why = why;
	xdev->via = via;
	xdev->state = XDP_FLOW_DEV_STATE_IDLE;
	xdev->replaying = true;
	if (xdp_flow_places_take(dev->ifindex)) {
		xdp_flow_id_free(xdev->shield_id);
		kfree(xdev);
		NL_SET_ERR_MSG_MOD(extack, "no memory for the device's rules");
		err = -ENOMEM;
		goto unlock;
	}
	list_add_tail(&xdev->list, &xdp_flow_devs);
	mutex_unlock(&xdp_flow_lock);

	xdp_flow_reoffer(dev->ifindex, true);
	rtnl_unlock();

	mutex_lock(&xdp_flow_lock);
	xdev = xdp_flow_dev_find(dev->ifindex);
	if (!xdev) {
		mutex_unlock(&xdp_flow_lock);
		NL_SET_ERR_MSG_MOD(extack, "the device went away");
		return -ENODEV;
	}
	xdev->replaying = false;
	/* Tables first: the program starts with every software rule in. */
	err = xdp_flow_install_all(dev->ifindex);
	/* This attaches itself, below, rather than through the work. */
	xdp_flow_attach_due = false;
	attach = xdev->nr_offloaded;
	xdev->attached = attach;
	if (attach)
		xdev->state = XDP_FLOW_DEV_STATE_ATTACHING;
	mutex_unlock(&xdp_flow_lock);
	if (err)
		goto undo;

	if (xdp_mode == XDP_FLOW_XDP_MODE_NATIVE) {
		struct xdp_flow_peer_tx tx = {};

		rtnl_lock();
		xdp_flow_peer_tx_off(dev, &tx);
		mutex_lock(&xdp_flow_lock);
		xdev = xdp_flow_dev_find(dev->ifindex);
		if (xdev) {
			xdev->peer_tx.wanted |= tx.wanted;
			xdev->peer_tx.fixed |= tx.fixed;
		} else {
			xdp_flow_peer_tx_restore(dev, &tx);
		}
		mutex_unlock(&xdp_flow_lock);
		rtnl_unlock();
	}
	if (!attach)
		return 0;

	err = xdp_flow_helper_call(XDP_FLOW_CMD_DEV_ATTACH, dev->ifindex, 0,
				   xdp_mode, NULL, NULL, extack);
	if (!err) {
		mutex_lock(&xdp_flow_lock);
		xdev = xdp_flow_dev_find(dev->ifindex);
		if (xdev && xdev->state == XDP_FLOW_DEV_STATE_ATTACHING)
			xdev->state = XDP_FLOW_DEV_STATE_ATTACHED;
		mutex_unlock(&xdp_flow_lock);
		return 0;
	}
undo:
	xdp_flow_dev_disable(dev->ifindex, NULL);
	return err;

unlock:
	mutex_unlock(&xdp_flow_lock);
	rtnl_unlock();
	return err;
}

/**
 * xdp_flow_dev_disable() - disable offload on a device
 * @ifindex: the device
 * @extack: for errors
 *
 * The rules are kept: TC goes on running them in software (no longer
 * in_hw), and enabling the device again puts them back into XDP.
 *
 * Return: 0, or -ENOENT when offload was not enabled.
 */
int xdp_flow_dev_disable(int ifindex, struct netlink_ext_ack *extack)
{
	struct xdp_flow_peer_tx tx;
	struct xdp_flow_dev *xdev;
	struct net_device *dev;

	mutex_lock(&xdp_flow_lock);
	xdev = xdp_flow_dev_find(ifindex);
	if (!xdev) {
		mutex_unlock(&xdp_flow_lock);
		NL_SET_ERR_MSG_MOD(extack, "offload is not enabled on this device");
		return -ENOENT;
	}
	/* The rules stay in TC: what XDP counted last must reach it too. */
	xdp_flow_refresh_all(ifindex);
	xdp_flow_uninstall_all(ifindex);
	xdp_flow_ft_forget(ifindex);
	xdp_flow_shield_free(xdev);
	tx = xdev->peer_tx;
	list_del(&xdev->list);
	kfree(xdev);
	xdp_flow_retry_waiting();
	mutex_unlock(&xdp_flow_lock);
	/* An attach of this device in flight lands before our detach. */
	xdp_flow_attach_flush();

	rtnl_lock();
	dev = __dev_get_by_index(&init_net, ifindex);
	if (dev)
		xdp_flow_peer_tx_restore(dev, &tx);
	xdp_flow_reoffer(ifindex, false);
	mutex_lock(&xdp_flow_lock);
	/* Unless enabled again meanwhile. */
	if (!xdp_flow_dev_find(ifindex))
		xdp_flow_places_give(ifindex);
	mutex_unlock(&xdp_flow_lock);
	rtnl_unlock();

	if (xdp_flow_helper_call(XDP_FLOW_CMD_DEV_DETACH, ifindex, 0, 0, NULL,
				 NULL, NULL)) {
		mutex_lock(&xdp_flow_lock);
		xdp_flow_stale_link(ifindex);
		mutex_unlock(&xdp_flow_lock);
	}
	return 0;
}

/*
 * Whether @entry's rule sends frames or copies to @ifindex (out of it or
 * into it): XDP_FLOW_ACTION_REDIRECT or _MIRROR, or 0.
 */
static u32 xdp_flow_entry_redirects_to(const struct xdp_flow_entry *entry,
				       int ifindex)
{
	const struct xdp_flow_action *a;
	unsigned int i;

	for (i = 0; i < entry->rule.nr_actions && i < XDP_FLOW_MAX_ACTIONS; i++) {
		a = &entry->rule.actions[i];
		if (a->ifindex != ifindex)
			continue;
		if (a->id == XDP_FLOW_ACTION_REDIRECT ||
		    a->id == XDP_FLOW_ACTION_REDIRECT_INGRESS)
			return XDP_FLOW_ACTION_REDIRECT;
		if (a->id == XDP_FLOW_ACTION_MIRROR ||
		    a->id == XDP_FLOW_ACTION_MIRROR_INGRESS)
			return XDP_FLOW_ACTION_MIRROR;
	}
	return 0;
}

/*
 * @dev is unregistered or leaves the initial namespace. mirred lets go of
 * it and drops what it would have sent there, also once a device of the
 * same ifindex comes (the one TC knew is gone), while XDP and the TC hook
 * redirect by ifindex: the rules that redirect or mirror there become
 * software rules, which TC runs. Caller holds xdp_flow_lock.
 */
static const char xdp_flow_target_gone_why[] =
	KBUILD_MODNAME ": redirect target gone: TC drops what it matches";
static const char xdp_flow_mirror_gone_why[] =
	KBUILD_MODNAME ": mirror target gone: TC sends no copy";

static void xdp_flow_target_gone(struct net_device *dev)
{
	struct xdp_flow_entry *entry;
	struct xdp_flow_binding *b;
	u32 how;
	bool was;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		list_for_each_entry(entry, &b->entries, list) {
			if (entry->kind != XDP_FLOW_ENTRY_OFFLOAD)
				continue;
			how = xdp_flow_entry_redirects_to(entry, dev->ifindex);
			if (!how)
				continue;
			was = entry->installed;
			/* A change in flight becomes this one. */
			xdp_flow_flight_forget(entry);
			xdp_flow_entry_set_installed(entry, false);
			xdp_flow_entry_to_software(entry);
			entry->why = how == XDP_FLOW_ACTION_MIRROR ?
				     xdp_flow_mirror_gone_why :
				     xdp_flow_target_gone_why;
			if (!was)
				continue;
			/* Replaced by id: the gate keeps XDP off it until the
			 * helper has the software rule.
			 */
			if (xdp_flow_entry_post(entry, false) &&
			    xdp_flow_entry_install(entry, NULL))
				xdp_flow_entry_wait(entry);
		}
	}
}

static int xdp_flow_netdev_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct xdp_flow_peer_tx tx = {};
	struct xdp_flow_dev *xdev;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;

	/* Under rtnl: tell the helper to drop its link, but do not wait. */
	mutex_lock(&xdp_flow_lock);
	if (net_eq(dev_net(dev), &init_net))
		xdp_flow_target_gone(dev);
	xdev = xdp_flow_dev_find(dev->ifindex);
	if (xdev && net_eq(dev_net(dev), &init_net)) {
		xdp_flow_uninstall_all(dev->ifindex);
		xdp_flow_shield_free(xdev);
		tx = xdev->peer_tx;
		list_del(&xdev->list);
		kfree(xdev);
		xdp_flow_retry_waiting();
		if (xdp_flow_helper_post(XDP_FLOW_CMD_DEV_DETACH, dev->ifindex,
					 0))
			xdp_flow_stale_link(dev->ifindex);
	}
	mutex_unlock(&xdp_flow_lock);
	/* Moving to another namespace: the peer may stay. */
	xdp_flow_peer_tx_restore(dev, &tx);
	return NOTIFY_DONE;
}

static struct notifier_block xdp_flow_netdev_nb = {
	.notifier_call = xdp_flow_netdev_event,
};

/**
 * xdp_flow_dev_init() - follow devices going away
 *
 * Return: 0 or a negative errno.
 */
int xdp_flow_dev_init(void)
{
	return register_netdevice_notifier(&xdp_flow_netdev_nb);
}

/**
 * xdp_flow_dev_exit() - follow devices no more
 */
void xdp_flow_dev_exit(void)
{
	unregister_netdevice_notifier(&xdp_flow_netdev_nb);
}
