// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: a rule offered or withdrawn (FLOW_CLS_REPLACE, FLOW_CLS_DESTROY).
 *
 * The module remembers every rule offered on a block it is bound to: in
 * full where offload is enabled, else only its place in TC's order. Rules
 * of devices where offload is enabled go to the helper: offloadable ones
 * to be executed in XDP, the others as software rules that hand their
 * packets to the stack. The XDP tables then always hold a prefix, in TC's
 * order, of what TC holds, so a packet either meets in XDP the rule TC
 * would have chosen, or goes to TC.
 *
 * It owns what a rule's offer and withdrawal do, for TC's blocks,
 * nftables chains and flowtables alike; it calls translate.c, netdev.c
 * and classifiers.c (the rule as the XDP program runs it), table.c,
 * install.c and shield.c (keeping it), requests.c.
 */
#include <linux/slab.h>
#include <net/flow_offload.h>

#include "xdp_flow.h"

/* The device @b is of, as the translation needs to know it. */
static void xdp_flow_target_of(const struct xdp_flow_binding *b,
			       const struct xdp_flow_dev *xdev,
			       struct xdp_flow_target *target)
{
	target->dev = b->dev;
	target->ifindex = b->ifindex;
	target->vlan_hidden = xdev && xdp_flow_dev_hides_vlan(b->dev,
							      xdev->xdp_mode);
	target->nft = b->nft;
	target->tc_hook = xdev && xdev->xdp_mode == XDP_FLOW_XDP_MODE_TC;
}

/*
 * A flowtable offers a flow again about once a second while packets of it
 * take the software path (the frames XDP leaves to the stack, say): the
 * same offer leaves the entry as it is. Returns the answer to give, or 1
 * when the offer differs.
 */
static int xdp_flow_ft_same(struct xdp_flow_entry *entry,
			    struct flow_cls_offload *f,
			    const struct xdp_flow_dev *xdev)
{
	struct netlink_ext_ack ext = {};
	struct xdp_flow_target target;
	struct xdp_flow_rule *rule;
	int err, same;

	rule = kmalloc_obj(*rule, GFP_KERNEL);
	if (!rule)
		return 1;
	xdp_flow_target_of(entry->binding, xdev, &target);
	err = xdp_flow_translate_ft(f, &target, rule, &ext);
	same = !err && entry->kind == XDP_FLOW_ENTRY_OFFLOAD &&
	       !memcmp(&rule->key, &entry->rule.key, sizeof(rule->key)) &&
	       !memcmp(&rule->mask, &entry->rule.mask, sizeof(rule->mask)) &&
	       rule->nr_actions == entry->rule.nr_actions &&
	       !memcmp(rule->actions, entry->rule.actions,
		       sizeof(rule->actions));
	kfree(rule);
	return same ? 0 : 1;
}

/**
 * xdp_flow_entry_translate() - make an entry what the XDP program does
 *	with a rule
 * @entry: the entry
 * @f: TC's (or nftables') rule
 * @xdev: the device it is offered on, or NULL: offload is not enabled
 *	there
 * @report: gets the reason for a software rule, or NULL
 *
 * Return: 0 for an offloaded rule, or -EOPNOTSUPP, with the reason in
 * @report, for a software one.
 */
int xdp_flow_entry_translate(struct xdp_flow_entry *entry,
			     struct flow_cls_offload *f,
			     const struct xdp_flow_dev *xdev,
			     struct netlink_ext_ack *report)
{
	struct xdp_flow_binding *b = entry->binding;
	struct netlink_ext_ack ext = {};
	struct xdp_flow_target target;
	int err;

	xdp_flow_target_of(b, xdev, &target);
	if (b->ft)
		err = xdp_flow_translate_ft(f, &target, &entry->rule, &ext);
	else if (xdp_flow_other_cookie(f->cookie))
		err = xdp_flow_translate_other(f, &target, &entry->rule, &ext);
	else
		err = xdp_flow_translate(f, &target, &entry->rule, &ext);
	entry->l4_src_range = entry->rule.l4_src_range;
	entry->l4_dst_range = entry->rule.l4_dst_range;
	if (!err && xdp_flow_range_conflict(entry)) {
		NL_SET_ERR_MSG_MOD(&ext, "port ranges overlap a rule of this prio and mask");
		err = -EOPNOTSUPP;
	}
	entry->why = NULL;
	if (err) {
		/* Our messages are literals: the entry may keep one. */
		entry->why = ext._msg ?: KBUILD_MODNAME ": cannot offload this rule";
		if (report && !report->_msg)
			report->_msg = entry->why;
	}
	entry->kind = XDP_FLOW_ENTRY_OFFLOAD;
	entry->rule.order = xdp_flow_order(entry);
	if (b->nft)
		entry->rule.flags |= XDP_FLOW_RULE_F_NFTABLES;
	if (b->ft)
		entry->rule.flags |= XDP_FLOW_RULE_F_FLOWTABLE;
	if (err)
		xdp_flow_entry_to_software(entry);
	return err;
}

/**
 * xdp_flow_cls_replace() - FLOW_CLS_REPLACE: a rule comes, or changes
 * @b: the binding
 * @f: TC's (or nftables' or a flowtable's) request
 *
 * Where offload is enabled the rule is translated, kept and given to the
 * helper; elsewhere only its place in TC's order is kept. Caller holds
 * xdp_flow_lock.
 *
 * Return: 0 for a rule offloaded, -EOPNOTSUPP for one TC runs, or another
 * negative errno for one nothing could keep.
 */
int xdp_flow_cls_replace(struct xdp_flow_binding *b, struct flow_cls_offload *f)
{
	struct netlink_ext_ack *extack = f->common.extack;
	struct xdp_flow_dev *xdev = xdp_flow_dev_find(b->ifindex);
	struct netlink_ext_ack *report = xdev ? extack : NULL;
	struct xdp_flow_place *place;
	struct xdp_flow_entry *entry;
	int err;

	entry = xdp_flow_entry_find(b, f->cookie);
	if (entry && b->ft && xdev && !xdp_flow_ft_same(entry, f, xdev))
		return 0;
	if (entry) {
		xdp_flow_entry_uninstall(entry);
		xdp_flow_entry_free(entry);
	}

	if (!xdev && b->ft)
		return -EOPNOTSUPP;
	if (!xdev) {
		/*
		 * Not enabled: nothing is offloaded, translated or kept but
		 * the rule's place in TC's order. nftables fails the
		 * transaction of a rule a driver refused
		 * (xdp_flow_nft_refused()): nothing to keep. (Only such a
		 * device has places: enabling turns them into entries.)
		 */
		if (b->nft)
			return -EOPNOTSUPP;
		place = xdp_flow_place_find(b, f->cookie);
		if (place)
			xdp_flow_place_free(b, place);
		err = xdp_flow_place_add(b, f);
		if (err) {
			/* Enabling the device cannot order its rules now. */
			b->unseen_rules = true;
			return err;
		}
		return -EOPNOTSUPP;
	}

	entry = xdp_flow_entry_alloc(b, f->cookie);
	if (!entry) {
		err = -ENOMEM;
		goto lost;
	}
	entry->mask = xdp_flow_mask_get(b, f->common.chain_index,
					f->common.prio, xdp_flow_fl_mask(f));
	if (!entry->mask) {
		xdp_flow_entry_dealloc(entry);
		err = -ENOMEM;
		goto lost;
	}
	err = xdp_flow_entry_insert(entry);
	if (err) {
		xdp_flow_mask_put(entry->mask);
		xdp_flow_entry_dealloc(entry);
		goto lost;
	}

	err = xdp_flow_entry_translate(entry, f, xdev, report);
	if (xdev->replaying)
		/* xdp_flow_dev_enable() installs it with the others. */
		return err;

	switch (xdp_flow_helper_state()) {
	case XDP_FLOW_HELPER_STARTING:
		/* The helper is being restarted; the replay installs it. */
		xdp_flow_undelivered();
		return err;
	case XDP_FLOW_HELPER_STOPPED:
		xdp_flow_undelivered();
		xdp_flow_entry_to_software(entry);
		entry->why = KBUILD_MODNAME ": helper is not running, rule stays in software";
		if (report)
			report->_msg = entry->why;
		return -EOPNOTSUPP;
	}

	if (entry->kind == XDP_FLOW_ENTRY_OFFLOAD) {
		if (!xdp_flow_entry_post(entry, true))
			return 0;
		err = xdp_flow_entry_install(entry, report);
		if (!err)
			return 0;
		/* The helper went away meanwhile: as while it restarts, the
		 * replay installs the rule.
		 */
		if ((err == -ESRCH || err == -ETIMEDOUT) &&
		    xdp_flow_helper_state() == XDP_FLOW_HELPER_STARTING) {
			if (report)
				report->_msg = NULL;
			xdp_flow_undelivered();
			return 0;
		}
		/* The helper refused it (a full table, say): keep it in
		 * software, and keep what may match it out of XDP.
		 */
		xdp_flow_entry_refused(entry, err);
	}
	if (xdp_flow_entry_post(entry, true) &&
	    xdp_flow_entry_install(entry, NULL))
		xdp_flow_entry_wait(entry);
	return -EOPNOTSUPP;

lost:
	/* nftables fails the rule's transaction: nothing runs it. A
	 * flowtable keeps the flow in software, ahead of later chains.
	 */
	if (!b->nft && !b->ft)
		xdp_flow_dev_lost(xdev, f);
	return err;
}

/**
 * xdp_flow_cls_destroy() - FLOW_CLS_DESTROY: a rule goes
 * @b: the binding
 * @f: TC's (or nftables') request
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: 0 for a rule the module took, else -EOPNOTSUPP.
 */
int xdp_flow_cls_destroy(struct xdp_flow_binding *b, struct flow_cls_offload *f)
{
	struct xdp_flow_entry *entry = xdp_flow_entry_find(b, f->cookie);
	struct xdp_flow_place *place;
	bool room, taken;

	/*
	 * When a block is unbound, TC takes a rule's in_hw count down for
	 * each callback that says 0 here: only for rules we took. (nftables
	 * aborts its transaction on an error, and keeps only rules we took.)
	 */
	if (!entry) {
		if (b->nft)
			return 0;
		place = xdp_flow_place_find(b, f->cookie);
		if (place)
			xdp_flow_place_free(b, place);
		return -EOPNOTSUPP;
	}
	taken = b->nft || entry->kind == XDP_FLOW_ENTRY_OFFLOAD;
	room = entry->installed;
	xdp_flow_entry_uninstall(entry);
	xdp_flow_entry_free(entry);
	if (room)
		xdp_flow_retry_waiting();
	return taken ? 0 : -EOPNOTSUPP;
}
