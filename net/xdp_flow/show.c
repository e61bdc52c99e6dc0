// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the rule table as xdp-flow shows it: how many rules are
 * offloaded, each device's first rule that hands every frame reaching it
 * to the stack, and the walk of the entries that a dump of the rules
 * takes, over as many calls as it needs.
 *
 * It owns nothing; it reads table.c's lists and calls table.c and
 * classifiers.c.
 */
#include <linux/list.h>
#include <linux/string.h>

#include "xdp_flow.h"

/**
 * xdp_flow_rule_count() - offloaded rules installed, over all devices
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: how many.
 */
unsigned int xdp_flow_rule_count(void)
{
	struct xdp_flow_dev *xdev;
	unsigned int n = 0;

	list_for_each_entry(xdev, &xdp_flow_devs, list)
		n += xdev->nr_offloaded;
	return n;
}

/* Whether @rule matches every frame of its device that reaches chain 0. */
static bool xdp_flow_rule_takes_all(const struct xdp_flow_rule *rule)
{
	struct xdp_flow_key all = {
		.ifindex = 0xffffffff,
		.chain = 0xffffffff,
	};

	return !rule->key.chain && !memcmp(&rule->mask, &all, sizeof(all));
}

/**
 * xdp_flow_dev_first_all() - the first rule of a device that XDP hands
 *	every frame reaching it to the stack for
 * @xdev: an enabled device
 * @all: filled in when there is one
 *
 * A rule of another classifier (a matchall police at prio 1, as Open
 * vSwitch's ingress_policing_rate makes) or a flower rule without a match
 * that stays in software: frames of the device that no rule before it
 * takes go to the stack there.
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: whether the device has such a rule.
 */
bool xdp_flow_dev_first_all(const struct xdp_flow_dev *xdev,
			    struct xdp_flow_all *all)
{
	const struct xdp_flow_entry *first = NULL, *entry;
	struct xdp_flow_binding *b;
	u8 type;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->ifindex != xdev->ifindex || b->ft)
			continue;
		list_for_each_entry(entry, &b->entries, list)
			if (entry->kind == XDP_FLOW_ENTRY_SOFTWARE &&
			    xdp_flow_rule_takes_all(&entry->rule) &&
			    (!first || entry->rule.order < first->rule.order))
				first = entry;
	}
	if (!first)
		return false;
	all->order = first->rule.order;
	type = xdp_flow_other_cookie(first->cookie);
	all->kind = type ? xdp_flow_other_name(type) :
		    first->binding->nft ? "nftables" : "flower";
	all->before = 0;
	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->ifindex != xdev->ifindex || b->ft)
			continue;
		list_for_each_entry(entry, &b->entries, list)
			if (entry->kind == XDP_FLOW_ENTRY_OFFLOAD &&
			    entry->installed && !entry->rule.key.chain &&
			    entry->rule.order < all->order)
				all->before++;
	}
	return true;
}

/**
 * xdp_flow_walk_entries() - walk the rules of enabled devices
 * @ifindex: only this device's, or 0 for all
 * @pos: where a previous walk stopped (zeroed: from the start); advanced
 *	past each entry visited
 * @v: what to call for each entry
 *
 * A walk goes on after the entry it visited last when that entry is still
 * there, else it skips as many entries as it visited: a dump that takes
 * many calls does not count up to where it was at each one.
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: 0, or what stopped the walk.
 */
int xdp_flow_walk_entries(int ifindex, struct xdp_flow_walk_pos *pos,
			  const struct xdp_flow_visitor *v)
{
	struct xdp_flow_entry *entry, *last = NULL;
	struct xdp_flow_binding *b;
	unsigned long skip = 0;
	int err;

	if (pos->n) {
		list_for_each_entry(b, &xdp_flow_bindings, list) {
			if (b == pos->binding) {
				last = xdp_flow_entry_find(b, pos->cookie);
				break;
			}
		}
	}
	if (!last)
		skip = pos->n;
	b = last ? last->binding :
	    list_first_entry(&xdp_flow_bindings, struct xdp_flow_binding, list);
	list_for_each_entry_from(b, &xdp_flow_bindings, list) {
		if (!xdp_flow_dev_find(b->ifindex) ||
		    (ifindex && b->ifindex != ifindex)) {
			last = NULL;
			continue;
		}
		entry = last ? list_next_entry(last, list) :
		    list_first_entry(&b->entries, struct xdp_flow_entry, list);
		list_for_each_entry_from(entry, &b->entries, list) {
			if (skip) {
				skip--;
				continue;
			}
			err = v->fn(entry, v->arg);
			if (err)
				return err;
			pos->n++;
			pos->binding = b;
			pos->cookie = entry->cookie;
		}
		last = NULL;
	}
	return 0;
}
