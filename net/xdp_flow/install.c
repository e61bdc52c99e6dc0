// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: installing rules in the helper, at once or posted.
 *
 * A rule of an enabled device goes to the helper as it is offered: posted
 * (the helper answers later) where the helper surely has room, otherwise
 * waited for; what the helper has no room for waits behind its device's
 * shield (shield.c). While posted changes are in flight the gate's limit
 * keeps XDP off every rule from the lowest order among them on. Whole
 * devices go in and out in TC's order, so that XDP always holds a prefix
 * of it.
 *
 * It owns the changes in flight and an entry's life in the helper; it
 * calls table.c, shield.c, attach.c, requests.c and dpmaps.c (the gate).
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "xdp_flow.h"

/**
 * xdp_flow_entry_set_installed() - mark a rule installed in the helper or
 *	not
 * @entry: the rule
 * @installed: whether it is
 *
 * Marks @entry installed in the helper or not, and keeps its device's count
 * of offloaded rules: the datapath is on a device only while that count is
 * not zero.
 *
 * Return: true when an attach became due (the caller may wait for it once
 * it dropped xdp_flow_lock, see xdp_flow_attach_wait()).
 */
bool xdp_flow_entry_set_installed(struct xdp_flow_entry *entry, bool installed)
{
	struct xdp_flow_dev *xdev;

	if (entry->installed == installed)
		return false;
	entry->installed = installed;
	if (entry->kind != XDP_FLOW_ENTRY_OFFLOAD)
		return false;
	xdev = xdp_flow_dev_find(entry->binding->ifindex);
	if (!xdev)
		return false;
	if (installed)
		xdev->nr_offloaded++;
	else if (!WARN_ON_ONCE(!xdev->nr_offloaded))
		xdev->nr_offloaded--;
	if (!xdev->nr_offloaded == !xdev->attached)
		return false;
	if (!installed) {
		/* The last one went: detach after the linger. */
		xdev->idle_since = jiffies;
		xdp_flow_attach_after_linger();
		return false;
	}
	xdp_flow_attach_now();
	return true;
}

/*
 * Gives @entry a rule id at its first install, kept until the device's
 * offload ends: a rule that finds none waits, as for a full table.
 */
static int xdp_flow_entry_take_id(struct xdp_flow_entry *entry)
{
	int id;

	if (entry->rule.id != XDP_FLOW_NO_ID)
		return 0;
	id = xdp_flow_id_get();
	if (id < 0)
		return id;
	entry->rule.id = id;
	return 0;
}

/* The helper has @entry, or will have it before any later request. */
static void xdp_flow_entry_now_installed(struct xdp_flow_entry *entry)
{
	entry->stale = false;
	if (xdp_flow_entry_set_installed(entry, true))
		xdp_flow_attach_due = true;
}

static struct xdp_flow_flight *xdp_flow_flight_new(u8 cmd,
						   struct xdp_flow_entry *entry);
static void xdp_flow_flight_end(struct xdp_flow_flight *fl);
static void xdp_flow_flight_done(void *arg, int err);

/**
 * xdp_flow_entry_install() - have the helper add a rule, and wait for it
 * @entry: the rule
 * @extack: gets the helper's message on refusal, or NULL
 *
 * A software rule whose port ranges take too many flow entries goes in
 * without them, as a superset. A flowtable's flow is held back by the
 * gate until it is checked, as a posted one is (see the comment above
 * struct xdp_flow_flight). Caller holds xdp_flow_lock.
 *
 * Return: 0, or the helper's error (-ENOSPC: no room).
 */
int xdp_flow_entry_install(struct xdp_flow_entry *entry,
			   struct netlink_ext_ack *extack)
{
	struct xdp_flow_flight *hold = NULL;
	int err;

	err = xdp_flow_entry_take_id(entry);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack, "no free rule id");
		return err;
	}
	if (entry->binding->ft && entry->kind == XDP_FLOW_ENTRY_OFFLOAD) {
		hold = xdp_flow_flight_new(XDP_FLOW_CMD_RULE_ADD, entry);
		if (!hold)
			return -ENOMEM;
	}
	err = xdp_flow_helper_call(XDP_FLOW_CMD_RULE_ADD, 0, 0, 0, &entry->rule,
				   NULL, extack);
	if (hold) {
		if (err)
			xdp_flow_flight_end(hold);
		else
			xdp_flow_flight_done(hold, 0);
	}
	if (err && entry->kind == XDP_FLOW_ENTRY_SOFTWARE &&
	    (entry->rule.l4_src_range.max || entry->rule.l4_dst_range.max)) {
		/* Too many flow entries for its ranges, say: without them the
		 * match is a superset in a single entry.
		 */
		memset(&entry->rule.l4_src_range, 0,
		       sizeof(entry->rule.l4_src_range));
		memset(&entry->rule.l4_dst_range, 0,
		       sizeof(entry->rule.l4_dst_range));
		err = xdp_flow_helper_call(XDP_FLOW_CMD_RULE_ADD, 0, 0, 0,
					   &entry->rule, NULL, extack);
	}
	if (err)
		return err;
	xdp_flow_entry_now_installed(entry);
	xdp_flow_entry_unwait(entry);
	return 0;
}

/**
 * xdp_flow_entry_refused() - the helper refused a rule: TC runs it
 * @entry: the rule
 * @err: the helper's error
 *
 * The rule becomes a software rule, which says why.
 */
void xdp_flow_entry_refused(struct xdp_flow_entry *entry, int err)
{
	xdp_flow_entry_to_software(entry);
	entry->why = err == -ENOSPC ?
		     KBUILD_MODNAME ": no room in the XDP tables" :
		     KBUILD_MODNAME ": the helper refused the rule";
}

/* --- rule changes in flight: TC goes on while the helper does them ---
 *
 * TC's rule changes are posted to the helper (xdp_flow_helper_post_rule())
 * rather than waited for, when the helper surely has room: TC's caller
 * goes on while the helper works, and the helper takes what queued up in
 * one wake-up. Until the helper has done one, XDP must not act on what it
 * changes: the gate's limit (xdp_flow_gate_limit_set()) sends to the stack
 * every frame whose rule has the lowest order among the changes in flight
 * or a higher one. A frame whose XDP rule comes before every change in
 * flight is decided the same with or without them. The limit goes when no
 * change is in flight any more.
 *
 * What the helper refuses (not expected, the room was there) is handled
 * as if it had refused it at once, in a work item that takes xdp_flow_lock
 * (the answer comes where xdp_flow_lock may be held by a waiter).
 *
 * A flowtable's flow done by the helper is checked by that work item
 * before the limit it holds may go: the flowtable may have torn the flow
 * down while its offer was on the way, by a TCP FIN that reached the
 * stack before the rule was in XDP (from then on, a FIN the gate sends
 * there marks the connection in the datapath). After a grace period every
 * such frame is through the flowtable's hook; a torn down flow becomes a
 * software rule, so that XDP never forwards the frames after its FIN.
 *
 * A flowtable's flows never overlap, and each has an order of its own,
 * after every older flow's (its mask is its own, ranked as it comes): a
 * limit at a flow's order would send every newer flow's frames to the
 * stack while the flow goes, or until its check, which on a router is
 * much of the time. A flow's change holds that flow back by itself
 * instead (xdp_flow_gate_hold()), and the limit holds only what comes
 * after the flowtable's hook (see xdp_flow_flight_limit()).
 */

/**
 * struct xdp_flow_flight - a rule change posted to the helper
 * @list: in xdp_flow_flights_refused once refused, in xdp_flow_flights_ft
 *	once a flowtable's flow is done; else empty
 * @entry: RULE_ADD: the rule, until it is freed
 * @id: the rule id; RULE_DEL: given back once the rule is out
 * @cmd: XDP_FLOW_CMD_RULE_ADD or XDP_FLOW_CMD_RULE_DEL
 * @held: it holds rule @id back by itself (a flowtable's flow)
 * @err: the helper's answer
 */
struct xdp_flow_flight {
	struct list_head list;
	struct xdp_flow_entry *entry;
	u32 id;
	u8 cmd;
	bool held;
	int err;
};

/* Guards the flights, entries' @flight and what follows. */
static DEFINE_SPINLOCK(xdp_flow_flight_lock);
/* Posted and not settled: not answered, or refused and not handled yet. */
static unsigned int xdp_flow_unsettled;
/* The lowest order among them since there were none: the gate's limit. */
static u64 xdp_flow_flight_min = XDP_FLOW_NO_LIMIT;
static LIST_HEAD(xdp_flow_flights_refused);
/* Flowtable flows the helper has, to check once a grace period is over. */
static LIST_HEAD(xdp_flow_flights_ft);
static void xdp_flow_flights_work_fn(struct work_struct *work);
static DECLARE_WORK(xdp_flow_flights_work, xdp_flow_flights_work_fn);

/*
 * @fl is over: off its list, its rule no longer points to it, its limit may
 * go. Caller holds xdp_flow_flight_lock, and frees @fl after.
 */
static void xdp_flow_flight_end_locked(struct xdp_flow_flight *fl)
{
	list_del(&fl->list);
	if (fl->entry)
		fl->entry->flight = NULL;
	if (fl->held)
		xdp_flow_gate_hold(fl->id, false);
	if (WARN_ON_ONCE(!xdp_flow_unsettled) || --xdp_flow_unsettled)
		return;
	xdp_flow_flight_min = XDP_FLOW_NO_LIMIT;
	xdp_flow_gate_limit_set(XDP_FLOW_NO_LIMIT);
}

/* @fl is over, or did not happen (see xdp_flow_flight_end_locked()). */
static void xdp_flow_flight_end(struct xdp_flow_flight *fl)
{
	spin_lock_bh(&xdp_flow_flight_lock);
	xdp_flow_flight_end_locked(fl);
	spin_unlock_bh(&xdp_flow_flight_lock);
	kfree(fl);
}

/*
 * Takes @fl's rule from it, for a handler that holds xdp_flow_lock: the
 * rule no longer points to @fl, nor @fl to it, so that a change the
 * handler posts for the rule starts a flight of its own.
 */
static struct xdp_flow_entry *xdp_flow_flight_take(struct xdp_flow_flight *fl)
{
	struct xdp_flow_entry *entry;

	spin_lock_bh(&xdp_flow_flight_lock);
	entry = fl->entry;
	if (entry) {
		entry->flight = NULL;
		fl->entry = NULL;
	}
	spin_unlock_bh(&xdp_flow_flight_lock);
	return entry;
}

/* The helper's answer to a posted change: see xdp_flow_helper_post_rule(). */
static void xdp_flow_flight_done(void *arg, int err)
{
	struct xdp_flow_flight *fl = arg;
	bool gone = err == -ESRCH || err == -ESHUTDOWN;

	if (fl->cmd == XDP_FLOW_CMD_RULE_DEL && err == -ENOENT)
		err = 0;
	/* The helper went away: whether it did the change is unknown. The
	 * gate closes before the limit may go; the replay puts back what a
	 * new helper must hold (RULE_DEL's id first: a work item's job).
	 * -ESHUTDOWN: the module is going, and the datapath with it.
	 */
	if (err == -ESRCH)
		xdp_flow_gate_set(true);
	spin_lock_bh(&xdp_flow_flight_lock);
	if (!err && fl->entry && fl->entry->binding->ft) {
		list_add_tail(&fl->list, &xdp_flow_flights_ft);
		spin_unlock_bh(&xdp_flow_flight_lock);
		queue_work(system_long_wq, &xdp_flow_flights_work);
		return;
	}
	if (!err || (gone && fl->cmd == XDP_FLOW_CMD_RULE_ADD)) {
		/* Let go of the id only once nothing holds it. */
		xdp_flow_flight_end_locked(fl);
		if (fl->cmd == XDP_FLOW_CMD_RULE_DEL)
			xdp_flow_id_free(fl->id);
		spin_unlock_bh(&xdp_flow_flight_lock);
		kfree(fl);
		return;
	}
	fl->err = err;
	list_add_tail(&fl->list, &xdp_flow_flights_refused);
	spin_unlock_bh(&xdp_flow_flight_lock);
	queue_work(system_long_wq, &xdp_flow_flights_work);
}

/* The limit of a flight that holds its rule back by itself, and no other. */
#define XDP_FLOW_HELD_ONLY	(XDP_FLOW_NO_LIMIT - 1)

/*
 * The lowest order XDP may not act on while @cmd of @entry is in flight.
 * A flowtable's flow is held back by itself (xdp_flow_gate_hold()); until
 * it comes, the frames it would take could meet a rule after the
 * flowtable's hook, of a higher prio: those wait. No flowtable rule
 * overlaps another.
 */
static u64 xdp_flow_flight_limit(u8 cmd, const struct xdp_flow_entry *entry)
{
	if (!entry->binding->ft)
		return entry->rule.order;
	if (cmd == XDP_FLOW_CMD_RULE_DEL)
		return XDP_FLOW_HELD_ONLY;
	return (entry->rule.order | U32_MAX) + 1;
}

/*
 * Posts RULE_ADD of @entry (@cmd RULE_ADD) or RULE_DEL of its rule, which
 * then is the flight's: the entry keeps no id. Caller holds xdp_flow_lock.
 * Returns 0 when posted; else nothing changed (see
 * xdp_flow_helper_post_rule()).
 */
static struct xdp_flow_flight *xdp_flow_flight_new(u8 cmd,
						   struct xdp_flow_entry *entry)
{
	struct xdp_flow_flight *fl;
	u64 limit = xdp_flow_flight_limit(cmd, entry);

	fl = kzalloc_obj(*fl, GFP_KERNEL);
	if (!fl)
		return NULL;
	INIT_LIST_HEAD(&fl->list);
	fl->cmd = cmd;
	fl->id = entry->rule.id;
	fl->held = entry->binding->ft;
	spin_lock_bh(&xdp_flow_flight_lock);
	/* Held before the limit tells XDP to look. */
	if (fl->held)
		xdp_flow_gate_hold(fl->id, true);
	if (cmd == XDP_FLOW_CMD_RULE_ADD) {
		/* An earlier RULE_ADD of it not settled yet (a flowtable's
		 * flow waiting for its check when a replay puts it in again)
		 * has nothing more to tell it: only @fl is forgotten with it.
		 */
		if (entry->flight)
			entry->flight->entry = NULL;
		fl->entry = entry;
		entry->flight = fl;
	}
	xdp_flow_unsettled++;
	if (limit < xdp_flow_flight_min) {
		xdp_flow_flight_min = limit;
		xdp_flow_gate_limit_set(xdp_flow_flight_min);
	}
	spin_unlock_bh(&xdp_flow_flight_lock);
	return fl;
}

static int xdp_flow_flight_post(u8 cmd, struct xdp_flow_entry *entry)
{
	struct xdp_flow_flight *fl;
	int err;

	fl = xdp_flow_flight_new(cmd, entry);
	if (!fl)
		return -ENOMEM;
	err = xdp_flow_helper_post_rule(cmd, fl->id,
					cmd == XDP_FLOW_CMD_RULE_ADD ?
					&entry->rule : NULL,
					xdp_flow_flight_done, fl);
	if (err) {
		xdp_flow_flight_end(fl);
		return err;
	}
	if (cmd == XDP_FLOW_CMD_RULE_DEL)
		entry->rule.id = XDP_FLOW_NO_ID;
	return 0;
}

/**
 * xdp_flow_flight_forget() - a rule's change in flight no longer has
 *	anything to tell it
 * @entry: the rule, which goes or changes
 */
void xdp_flow_flight_forget(struct xdp_flow_entry *entry)
{
	spin_lock_bh(&xdp_flow_flight_lock);
	if (entry->flight)
		entry->flight->entry = NULL;
	entry->flight = NULL;
	spin_unlock_bh(&xdp_flow_flight_lock);
}

/**
 * xdp_flow_flights_refused_handle() - handle what the helper refused of
 *	the changes in flight
 *
 * Handles what the helper refused of the changes in flight, as if it had
 * refused them at once; only then the limit they hold may go. Caller holds
 * xdp_flow_lock.
 */
void xdp_flow_flights_refused_handle(void)
{
	struct xdp_flow_flight *fl, *tmp;
	struct xdp_flow_entry *entry;
	LIST_HEAD(refused);

	spin_lock_bh(&xdp_flow_flight_lock);
	list_splice_init(&xdp_flow_flights_refused, &refused);
	spin_unlock_bh(&xdp_flow_flight_lock);

	list_for_each_entry_safe(fl, tmp, &refused, list) {
		entry = xdp_flow_flight_take(fl);

		if (fl->cmd == XDP_FLOW_CMD_RULE_DEL) {
			/* It may still be in: the next helper takes it out
			 * first, and XDP must not act on it meanwhile.
			 */
			xdp_flow_id_put(fl->id, true);
			xdp_flow_undelivered();
		} else if (entry && entry->installed) {
			pr_warn_ratelimited("xdp_flow: the helper refused a rule it had room for (%d); it stays in software\n",
					    fl->err);
			xdp_flow_entry_set_installed(entry, false);
			xdp_flow_entry_refused(entry, fl->err);
			if (xdp_flow_entry_install(entry, NULL))
				xdp_flow_entry_wait(entry);
		}
		xdp_flow_flight_end(fl);
	}
}

/*
 * The flowtable flows of @done that the flowtable tore down while they
 * went in become software rules (see the comment above struct
 * xdp_flow_flight); then their limit may go. Caller holds xdp_flow_lock,
 * and a grace period passed since they were done.
 */
static void xdp_flow_flights_ft_check(struct list_head *done)
{
	struct xdp_flow_flight *fl, *tmp;
	struct xdp_flow_entry *entry;

	list_for_each_entry_safe(fl, tmp, done, list) {
		entry = xdp_flow_flight_take(fl);

		if (entry && entry->installed &&
		    entry->kind == XDP_FLOW_ENTRY_OFFLOAD &&
		    xdp_flow_ft_torn_down(entry->cookie)) {
			xdp_flow_entry_set_installed(entry, false);
			xdp_flow_entry_to_software(entry);
			entry->why = KBUILD_MODNAME ": flowtable flow torn down as it went in";
			if (xdp_flow_entry_install(entry, NULL))
				xdp_flow_entry_wait(entry);
		}
		xdp_flow_flight_end(fl);
	}
}

static void xdp_flow_flights_work_fn(struct work_struct *work)
{
	LIST_HEAD(done);

	spin_lock_bh(&xdp_flow_flight_lock);
	list_splice_init(&xdp_flow_flights_ft, &done);
	spin_unlock_bh(&xdp_flow_flight_lock);
	/* A FIN that reached the stack before the rule was in XDP is
	 * through the flowtable's hook after this.
	 */
	if (!list_empty(&done))
		synchronize_net();

	mutex_lock(&xdp_flow_lock);
	xdp_flow_flights_ft_check(&done);
	xdp_flow_flights_refused_handle();
	mutex_unlock(&xdp_flow_lock);
}

/**
 * xdp_flow_in_flight() - rule changes the helper has not done yet
 *
 * Return: how many are posted and not settled.
 */
unsigned int xdp_flow_in_flight(void)
{
	unsigned int n;

	spin_lock_bh(&xdp_flow_flight_lock);
	n = xdp_flow_unsettled;
	spin_unlock_bh(&xdp_flow_flight_lock);
	return n;
}

/**
 * xdp_flow_entry_in_flight() - whether @entry's RULE_ADD is posted and the
 *	helper has not answered it yet
 * @entry: a rule; caller holds xdp_flow_lock
 *
 * Return: true while the rule is on its way into XDP.
 */
bool xdp_flow_entry_in_flight(struct xdp_flow_entry *entry)
{
	bool ret;

	spin_lock_bh(&xdp_flow_flight_lock);
	ret = entry->flight;
	spin_unlock_bh(&xdp_flow_flight_lock);
	return ret;
}

/**
 * xdp_flow_entry_post() - post a rule's RULE_ADD when that is safe
 * @entry: the rule
 * @offer: it is being offered (nftables' transaction wants the answer),
 *	not replayed
 *
 * Posts @entry's RULE_ADD when that is safe: a rule without port ranges
 * (they may take many flow entries), to a helper that has room for it; an
 * nftables rule only outside nftables' transaction (@offer false: in a
 * replay), which wants the answer. Caller holds xdp_flow_lock.
 *
 * Return: 0 when posted; else the caller installs it and waits.
 */
int xdp_flow_entry_post(struct xdp_flow_entry *entry, bool offer)
{
	int err;

	if ((offer && entry->binding->nft) || entry->rule.l4_src_range.max ||
	    entry->rule.l4_dst_range.max || !xdp_flow_helper_running())
		return -EAGAIN;
	err = xdp_flow_entry_take_id(entry);
	if (err)
		return err;
	err = xdp_flow_flight_post(XDP_FLOW_CMD_RULE_ADD, entry);
	if (err)
		return err;
	xdp_flow_entry_now_installed(entry);
	return 0;
}

/* --- an entry out of the helper, whole devices in and out --- */

/**
 * xdp_flow_entry_uninstall() - have the helper take a rule out
 * @entry: the rule, installed or not
 *
 * Posted where it may be; what no helper took out, the next one takes out
 * first. Caller holds xdp_flow_lock.
 */
void xdp_flow_entry_uninstall(struct xdp_flow_entry *entry)
{
	int err = -ESRCH;

	if (!entry->installed)
		return;
	xdp_flow_entry_set_installed(entry, false);
	/* Its counters in the helper go with it: keep what they counted. */
	entry->base.packets += entry->hw.packets;
	entry->base.bytes += entry->hw.bytes;
	entry->hw.packets = 0;
	entry->hw.bytes = 0;
	if (xdp_flow_helper_running()) {
		/* Posted, the id is the flight's until the helper has it out. */
		if (!entry->binding->nft &&
		    !xdp_flow_flight_post(XDP_FLOW_CMD_RULE_DEL, entry))
			return;
		err = xdp_flow_helper_call(XDP_FLOW_CMD_RULE_DEL, 0,
					   entry->rule.id, 0, NULL, NULL, NULL);
	}
	/* No helper took it out: the next one does, first thing. */
	if (err && err != -ENOENT) {
		entry->stale = true;
		xdp_flow_undelivered();
	}
}

/**
 * xdp_flow_entry_free() - forget a rule
 * @entry: the rule, out of the helper or to be taken out by the next one
 *
 * A change of it in flight no longer has anything to tell it, and its
 * device's shield may rise or go.
 */
void xdp_flow_entry_free(struct xdp_flow_entry *entry)
{
	xdp_flow_flight_forget(entry);
	xdp_flow_entry_unwait(entry);
	xdp_flow_entry_remove(entry);
}

/**
 * xdp_flow_retry_waiting() - room may have come free in the XDP tables
 *
 * Puts in the rules that wait for it, in TC's order, up to the first that
 * still does not fit. Caller holds xdp_flow_lock.
 */
void xdp_flow_retry_waiting(void)
{
	struct xdp_flow_entry **arr, *entry;
	struct xdp_flow_binding *b;
	unsigned int i, n = 0;

	if (!xdp_flow_nr_waiting || !xdp_flow_helper_running())
		return;
	arr = kvmalloc_array(xdp_flow_nr_waiting, sizeof(*arr), GFP_KERNEL);
	if (!arr)
		return;
	list_for_each_entry(b, &xdp_flow_bindings, list)
		list_for_each_entry(entry, &b->entries, list)
			if (entry->waiting && n < xdp_flow_nr_waiting)
				arr[n++] = entry;
	sort(arr, n, sizeof(*arr), xdp_flow_order_cmp, NULL);
	for (i = 0; i < n; i++)
		if (xdp_flow_entry_install(arr[i], NULL))
			break;
	kvfree(arr);
}

/**
 * xdp_flow_install_all() - install the rules of enabled devices (or of one)
 * @ifindex: only this device's, or 0 for those of every enabled device
 *
 * Installs in ascending order, so that what XDP holds is always a prefix
 * of TC's order; what does not fit waits behind its device's shield.
 * Caller holds xdp_flow_lock.
 *
 * Return: 0, -ENOMEM, or -ESRCH when no helper runs any more.
 */
int xdp_flow_install_all(int ifindex)
{
	struct xdp_flow_entry **arr;
	unsigned int i, n;
	int err = 0;

	arr = xdp_flow_sorted_entries(ifindex, &n);
	if (!arr)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!xdp_flow_helper_running()) {
			err = -ESRCH;
			break;
		}
		xdp_flow_entry_set_installed(arr[i], false);
		/* Posted: XDP acts only on what comes before the first rule
		 * not in yet (the gate's limit), as when waiting for each.
		 */
		if (!xdp_flow_entry_post(arr[i], false))
			continue;
		err = xdp_flow_entry_install(arr[i], NULL);
		if (err) {
			xdp_flow_entry_wait(arr[i]);
			err = 0;
		}
	}
	kvfree(arr);
	return err;
}

/**
 * xdp_flow_uninstall_all() - take out a device's rules; they keep no id
 * @ifindex: the device
 *
 * Removes in descending order, for the same reason as
 * xdp_flow_install_all(). Caller holds xdp_flow_lock.
 */
void xdp_flow_uninstall_all(int ifindex)
{
	struct xdp_flow_entry **arr;
	unsigned int n;

	arr = xdp_flow_sorted_entries(ifindex, &n);
	if (!arr)
		return;
	while (n--) {
		/* The shield goes with the device (xdp_flow_shield_free()). */
		if (arr[n]->waiting) {
			arr[n]->waiting = false;
			xdp_flow_nr_waiting--;
		}
		xdp_flow_entry_uninstall(arr[n]);
		/* Off: the id goes back (to the next helper first, if this
		 * one may still hold the rule).
		 */
		xdp_flow_id_put(arr[n]->rule.id, arr[n]->stale);
		arr[n]->rule.id = XDP_FLOW_NO_ID;
		arr[n]->stale = false;
	}
	kvfree(arr);
}

/**
 * xdp_flow_flights_exit() - the helper is gone: every flight has had its
 *	answer, and none is handled in the background any more
 */
void xdp_flow_flights_exit(void)
{
	struct xdp_flow_flight *fl, *tmp;
	LIST_HEAD(done);

	cancel_work_sync(&xdp_flow_flights_work);
	/* Flowtable flows not checked: the datapath goes with the helper. */
	spin_lock_bh(&xdp_flow_flight_lock);
	list_splice_init(&xdp_flow_flights_ft, &done);
	list_for_each_entry_safe(fl, tmp, &done, list) {
		xdp_flow_flight_end_locked(fl);
		kfree(fl);
	}
	spin_unlock_bh(&xdp_flow_flight_lock);
}
