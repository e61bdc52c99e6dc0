// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the counters of offloaded rules.
 *
 * The module reads a rule's counters from the XDP program's map itself
 * (dpmaps.c), or asks the helper when it holds no map, and reports them to
 * TC as TC asks (FLOW_CLS_STATS). nftables asks under rcu_read_lock(),
 * where nothing may sleep: a work item refreshes the counters of nftables
 * rules every second, and a dump reports them as of the last refresh.
 *
 * It owns that work; it calls table.c, dpmaps.c and requests.c.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/workqueue.h>
#include <net/flow_offload.h>

#include "xdp_flow.h"

/**
 * xdp_flow_entry_refresh_stats() - fetch a rule's counters
 * @entry: an installed offloaded rule
 *
 * Reads them from the XDP program's map, or, when the module holds none,
 * asks the helper. Keeps @entry->hw monotonic: when the counters of the
 * rule start again from zero (a new helper that could not keep them), what
 * was counted before moves into @entry->base.
 */
void xdp_flow_entry_refresh_stats(struct xdp_flow_entry *entry)
{
	struct xdp_flow_stats st = {};

	if (!entry->installed || entry->kind != XDP_FLOW_ENTRY_OFFLOAD)
		return;
	/* Until the helper has it, its id may count for a rule before it. */
	if (READ_ONCE(entry->flight))
		return;
	if (xdp_flow_counters_read(entry->rule.id, &st)) {
		if (!xdp_flow_helper_running() ||
		    xdp_flow_helper_call(XDP_FLOW_CMD_STATS_GET, 0,
					 entry->rule.id, 0, NULL, &st, NULL))
			return;
		st.lastused_ns = xdp_flow_jiffies_to_ns(st.lastused_jiffies);
	}
	if (st.packets < entry->hw.packets || st.bytes < entry->hw.bytes) {
		entry->base.packets += entry->hw.packets;
		entry->base.bytes += entry->hw.bytes;
	}
	entry->hw = st;
}

/**
 * xdp_flow_cls_stats() - FLOW_CLS_STATS: a rule's counters for TC
 * @b: the binding
 * @f: TC's (or nftables') request
 * @refresh: fetch the counters first; else those of the last refresh
 *
 * Reports what the rule counted since the last report. Caller holds
 * xdp_flow_lock.
 *
 * Return: 0, or -EOPNOTSUPP for a rule not offloaded.
 */
int xdp_flow_cls_stats(struct xdp_flow_binding *b, struct flow_cls_offload *f,
		       bool refresh)
{
	struct xdp_flow_entry *entry = xdp_flow_entry_find(b, f->cookie);
	u64 pkts, bytes, lastused = 0;
	bool drop;

	if (!entry || entry->kind != XDP_FLOW_ENTRY_OFFLOAD)
		return -EOPNOTSUPP;

	if (refresh)
		xdp_flow_entry_refresh_stats(entry);
	pkts = entry->base.packets + entry->hw.packets;
	bytes = entry->base.bytes + entry->hw.bytes;
	if (pkts == entry->reported.packets)
		return 0;

	if (entry->hw.lastused_ns) {
		u64 now = ktime_get_ns();
		u64 ago = now > entry->hw.lastused_ns ?
			  now - entry->hw.lastused_ns : 0;

		lastused = jiffies - nsecs_to_jiffies(ago);
	}
	/* TC counts a dropped packet also as a drop of its gact action. */
	drop = entry->rule.nr_actions &&
	       entry->rule.actions[entry->rule.nr_actions - 1].id ==
	       XDP_FLOW_ACTION_DROP;
	flow_stats_update(&f->stats, bytes - entry->reported.bytes,
			  pkts - entry->reported.packets,
			  drop ? pkts - entry->reported.packets : 0, lastused,
			  FLOW_ACTION_HW_STATS_DELAYED);
	entry->reported.packets = pkts;
	entry->reported.bytes = bytes;
	return 0;
}

/**
 * xdp_flow_refresh_all() - fetch the counters of a device's rules
 * @ifindex: the device
 *
 * Caller holds xdp_flow_lock.
 */
void xdp_flow_refresh_all(int ifindex)
{
	struct xdp_flow_entry *entry;
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->ifindex != ifindex)
			continue;
		list_for_each_entry(entry, &b->entries, list)
			xdp_flow_entry_refresh_stats(entry);
	}
}

/*
 * nftables asks for a rule's counters while it dumps its rules, under
 * rcu_read_lock(), where neither xdp_flow_lock nor a call to the helper may
 * sleep. This work fetches the counters of nftables rules from the helper
 * every second while there are any, and at once when nftables asked: a
 * dump reports them as of the last refresh (FLOW_ACTION_HW_STATS_DELAYED,
 * as a NIC's driver polls its counters).
 */
static void xdp_flow_nft_stats_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xdp_flow_nft_stats_work, xdp_flow_nft_stats_fn);

static void xdp_flow_nft_stats_fn(struct work_struct *work)
{
	struct xdp_flow_entry *entry;
	struct xdp_flow_binding *b;
	bool any = false;

	mutex_lock(&xdp_flow_lock);
	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (!b->nft)
			continue;
		list_for_each_entry(entry, &b->entries, list) {
			if (entry->kind != XDP_FLOW_ENTRY_OFFLOAD ||
			    !entry->installed)
				continue;
			xdp_flow_entry_refresh_stats(entry);
			any = true;
		}
	}
	mutex_unlock(&xdp_flow_lock);
	if (any)
		queue_delayed_work(system_long_wq, &xdp_flow_nft_stats_work, HZ);
}

/**
 * xdp_flow_nft_stats() - FLOW_CLS_STATS of an nftables rule
 * @b: the binding
 * @f: nftables' request, made under rcu_read_lock()
 *
 * Reports the counters of the last refresh, when xdp_flow_lock is free,
 * and has the work refresh them at once. Called without xdp_flow_lock.
 *
 * Return: as xdp_flow_cls_stats(), or 0.
 */
int xdp_flow_nft_stats(struct xdp_flow_binding *b, struct flow_cls_offload *f)
{
	int err = 0;

	/* Not now if a rule change or a refresh holds the lock. */
	if (mutex_trylock(&xdp_flow_lock)) {
		err = xdp_flow_cls_stats(b, f, false);
		mutex_unlock(&xdp_flow_lock);
	}
	mod_delayed_work(system_long_wq, &xdp_flow_nft_stats_work, 0);
	return err;
}

/**
 * xdp_flow_nft_stats_later() - nftables has a rule offloaded: refresh the
 *	counters of its rules from a second on
 */
void xdp_flow_nft_stats_later(void)
{
	queue_delayed_work(system_long_wq, &xdp_flow_nft_stats_work, HZ);
}

/**
 * xdp_flow_stats_exit() - refresh nothing any more: no binding is left
 */
void xdp_flow_stats_exit(void)
{
	cancel_delayed_work_sync(&xdp_flow_nft_stats_work);
}
