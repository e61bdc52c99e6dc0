// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the authoritative rule table.
 *
 * What the module knows of the rules TC and nftables offered it: the
 * devices offload is enabled on (struct xdp_flow_dev), the flow blocks it
 * is bound to (struct xdp_flow_binding), each block's rules in full where
 * offload is enabled (struct xdp_flow_entry, by cookie), else only their
 * place in TC's order (struct xdp_flow_place), the flower masks that rank
 * rules of one prio, each rule's order, the rule ids, and what a helper may
 * still hold that the module let go of. A replay gives a new helper
 * everything from here.
 *
 * It owns these and xdp_flow_lock, which guards them; it calls params.c
 * (max_rules), dpmaps.c (the gate) and requests.c (taking out what a
 * helper holds stale).
 */
#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/xarray.h>
#include <net/flow_offload.h>

#include "xdp_flow.h"

/* See xdp_flow.h: never held while waiting for something that needs rtnl. */
DEFINE_MUTEX(xdp_flow_lock);
LIST_HEAD(xdp_flow_devs);
LIST_HEAD(xdp_flow_bindings);
static DEFINE_IDA(xdp_flow_ids);
/* Where the search for a free rule id starts: see xdp_flow_id_get(). */
static unsigned int xdp_flow_id_next;
/* Rule ids taken, shields' included (xdp-flow status). */
static atomic_t xdp_flow_ids_used = ATOMIC_INIT(0);

/**
 * xdp_flow_dev_find() - the device offload is enabled on, by ifindex
 * @ifindex: the device
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: its struct xdp_flow_dev, or NULL when offload is not enabled.
 */
struct xdp_flow_dev *xdp_flow_dev_find(int ifindex)
{
	struct xdp_flow_dev *xdev;

	list_for_each_entry(xdev, &xdp_flow_devs, list)
		if (xdev->ifindex == ifindex)
			return xdev;
	return NULL;
}

/* --- what a helper may hold stale --- */

/*
 * What a helper may still hold that the module has let go of: rules deleted
 * (ids, kept allocated) and devices disabled (ifindexes) while no helper
 * took them out. The next helper gets these first, before the replay.
 */
static DEFINE_XARRAY(xdp_flow_stale_rules);
static DEFINE_XARRAY(xdp_flow_stale_links);

/* Set once the module is going: the helper is gone, and so is XDP. */
static bool xdp_flow_exiting;

/**
 * xdp_flow_undelivered() - a rule change reached no helper
 *
 * XDP must no longer act on the tables the last one left (see dpmaps.c)
 * until a helper has replayed the rules.
 */
void xdp_flow_undelivered(void)
{
	if (!xdp_flow_exiting)
		xdp_flow_gate_set(true);
}

/**
 * xdp_flow_stale_link() - a device's datapath may still be attached
 * @ifindex: the device, disabled while no helper took its link out
 *
 * Caller holds xdp_flow_lock. The next helper detaches it first.
 */
void xdp_flow_stale_link(int ifindex)
{
	xa_store(&xdp_flow_stale_links, ifindex, xa_mk_value(0), GFP_KERNEL);
	xdp_flow_undelivered();
}

/**
 * xdp_flow_remove_stale() - take out what a helper may hold stale
 *
 * Caller holds xdp_flow_lock. Rules deleted and devices disabled while no
 * helper answered, first thing in a replay.
 *
 * Return: 0, or the helper's error (-ESRCH: it went away).
 */
int xdp_flow_remove_stale(void)
{
	struct xdp_flow_dev *xdev;
	unsigned long index;
	void *entry;
	int err;

	xa_for_each(&xdp_flow_stale_rules, index, entry) {
		err = xdp_flow_helper_call(XDP_FLOW_CMD_RULE_DEL, 0, index, 0,
					   NULL, NULL, NULL);
		if (err == -ESRCH || err == -ETIMEDOUT)
			return err;
		/* Else SYNC, at the end of the replay, takes it out. */
		if (err && err != -ENOENT)
			pr_warn("xdp_flow: helper kept deleted rule %lu (%d)\n",
				index, err);
		xa_erase(&xdp_flow_stale_rules, index);
		xdp_flow_id_free(index);
	}
	xa_for_each(&xdp_flow_stale_links, index, entry) {
		xdev = xdp_flow_dev_find(index);
		if (!xdev || !xdev->attached) {
			err = xdp_flow_helper_post(XDP_FLOW_CMD_DEV_DETACH,
						   index, 0);
			if (err)
				return err;
		}
		xa_erase(&xdp_flow_stale_links, index);
	}
	return 0;
}

/**
 * xdp_flow_stale_free() - give back the rule ids kept for the next helper
 *
 * At module exit: no helper comes any more. Caller holds xdp_flow_lock.
 */
void xdp_flow_stale_free(void)
{
	unsigned long index;
	void *entry;

	xa_for_each(&xdp_flow_stale_rules, index, entry)
		xdp_flow_id_free(index);
	xa_destroy(&xdp_flow_stale_rules);
	xa_destroy(&xdp_flow_stale_links);
}

/**
 * xdp_flow_table_stop() - the module is going: the helper is gone, and so
 *	is XDP; an undelivered change no longer closes the gate
 */
void xdp_flow_table_stop(void)
{
	mutex_lock(&xdp_flow_lock);
	xdp_flow_exiting = true;
	mutex_unlock(&xdp_flow_lock);
}

/* --- flower masks: rank the rules of one prio as flower tries them --- */

/* Every lookup holds xdp_flow_lock: a mask may be freed once removed. */
static const struct rhashtable_params xdp_flow_mask_params = {
	.key_len = sizeof(struct xdp_flow_mask_key),
	.key_offset = offsetof(struct xdp_flow_mask_ref, key),
	.head_offset = offsetof(struct xdp_flow_mask_ref, node),
	.automatic_shrinking = true,
};

/**
 * xdp_flow_mask_get() - a reference to a flower mask of a binding
 * @b: the binding
 * @chain: the rule's TC chain
 * @prio: its TC prio
 * @fl_mask: its flower mask (xdp_flow_fl_mask())
 *
 * A mask seen for the first time ranks after every mask before it.
 *
 * Return: the mask, or NULL without memory.
 */
struct xdp_flow_mask_ref *xdp_flow_mask_get(struct xdp_flow_binding *b,
					    u32 chain, u16 prio,
					    const void *fl_mask)
{
	struct xdp_flow_mask_key key = {
		.fl_mask = fl_mask,
		.chain = chain,
		.prio = prio,
	};
	struct xdp_flow_mask_ref *ref;

	ref = rhashtable_lookup_fast(&b->masks, &key, xdp_flow_mask_params);
	if (ref) {
		ref->refcnt++;
		return ref;
	}
	ref = kzalloc_obj(*ref, GFP_KERNEL);
	if (!ref)
		return NULL;
	ref->key = key;
	ref->binding = b;
	ref->refcnt = 1;
	if (rhashtable_insert_fast(&b->masks, &ref->node,
				   xdp_flow_mask_params)) {
		kfree(ref);
		return NULL;
	}
	ref->rank = b->next_rank++;
	return ref;
}

/**
 * xdp_flow_mask_put() - let go of a reference to a flower mask
 * @ref: the mask
 */
void xdp_flow_mask_put(struct xdp_flow_mask_ref *ref)
{
	if (--ref->refcnt)
		return;
	rhashtable_remove_fast(&ref->binding->masks, &ref->node,
			       xdp_flow_mask_params);
	kfree(ref);
}

/* --- rule ids --- */

/**
 * xdp_flow_id_free() - give a rule id back
 * @id: the id, which no helper holds a rule of
 */
void xdp_flow_id_free(u32 id)
{
	ida_free(&xdp_flow_ids, id);
	atomic_dec(&xdp_flow_ids_used);
}

/**
 * xdp_flow_id_put() - give a rule id back, or keep it for the next helper
 * @id: the id, or XDP_FLOW_NO_ID
 * @held: a helper may still hold a rule of it: the module asked for its
 *	removal and no helper answered
 *
 * Gives rule id @id back, or, when @held, keeps it for the next helper to
 * take out first.
 */
void xdp_flow_id_put(u32 id, bool held)
{
	if (id == XDP_FLOW_NO_ID)
		return;
	if (!held || xa_err(xa_store(&xdp_flow_stale_rules, id,
				     xa_mk_value(0), GFP_KERNEL)))
		xdp_flow_id_free(id);
}

/* Shields have the top XDP_FLOW_MAX_SHIELDS ids, rules those below. */
static unsigned int xdp_flow_shield_id_base(void)
{
	return xdp_flow_max_rules() - XDP_FLOW_MAX_SHIELDS;
}

/* The fewest low rule ids xdp_flow_id_get() goes round in. */
#define XDP_FLOW_ID_SPAN_MIN	XDP_FLOW_COUNTER_CHUNK

/**
 * xdp_flow_id_get() - take a free rule id
 *
 * Takes a free rule id, round-robin rather than lowest-first, among the
 * lowest ids: twice as many as are in use, XDP_FLOW_ID_SPAN_MIN at least.
 * Before the helper gives a rule new content under an id it has just
 * taken out, it waits for XDP readers that may still hold the old rule (an
 * RCU grace period); round-robin makes that once per round rather than
 * once per delete and add. Keeping to the low ids keeps the counters the
 * helper makes per XDP_FLOW_COUNTER_CHUNK ids, per CPU, to about the rules
 * in use. Concurrent callers may race on the hint, which only moves where
 * the search starts.
 *
 * Return: the id, or a negative errno (-ENOSPC: none is free).
 */
int xdp_flow_id_get(void)
{
	unsigned int base = xdp_flow_shield_id_base();
	unsigned int used = atomic_read(&xdp_flow_ids_used);
	unsigned int span = min(base, max_t(unsigned int, 2 * used,
						   XDP_FLOW_ID_SPAN_MIN));
	unsigned int start = READ_ONCE(xdp_flow_id_next) % span;
	int id;

	id = ida_alloc_range(&xdp_flow_ids, start, span - 1, GFP_KERNEL);
	if (id == -ENOSPC && start)
		id = ida_alloc_max(&xdp_flow_ids, start - 1, GFP_KERNEL);
	if (id == -ENOSPC && span < base)
		id = ida_alloc_range(&xdp_flow_ids, span, base - 1, GFP_KERNEL);
	if (id >= 0) {
		WRITE_ONCE(xdp_flow_id_next, id + 1);
		atomic_inc(&xdp_flow_ids_used);
	}
	return id;
}

/**
 * xdp_flow_shield_id_get() - take the rule id of a device's shield
 *
 * Return: the id, among the top XDP_FLOW_MAX_SHIELDS, or a negative errno
 * (-ENOSPC: XDP_FLOW_MAX_SHIELDS devices are enabled).
 */
int xdp_flow_shield_id_get(void)
{
	int id;

	id = ida_alloc_range(&xdp_flow_ids, xdp_flow_shield_id_base(),
			     xdp_flow_max_rules() - 1, GFP_KERNEL);
	if (id >= 0)
		atomic_inc(&xdp_flow_ids_used);
	return id;
}

/**
 * xdp_flow_ids_in_use() - rule ids taken
 *
 * Only enabled devices' rules and shields take one, and ids kept for a
 * helper to take out first.
 *
 * Return: how many.
 */
unsigned int xdp_flow_ids_in_use(void)
{
	return atomic_read(&xdp_flow_ids_used);
}

/* --- entries --- */

/* One per rule of an enabled device: 552 bytes, not kmalloc's 1 KiB. */
static struct kmem_cache *xdp_flow_entry_cache;

/* Every lookup holds xdp_flow_lock: an entry may be freed once removed. */
static const struct rhashtable_params xdp_flow_cookie_params = {
	.key_len = sizeof(unsigned long),
	.key_offset = offsetof(struct xdp_flow_entry, cookie),
	.head_offset = offsetof(struct xdp_flow_entry, node),
	.automatic_shrinking = true,
};

/**
 * xdp_flow_entry_find() - a rule of a binding, by cookie
 * @b: the binding
 * @cookie: TC's (or nftables') cookie
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: the entry, or NULL.
 */
struct xdp_flow_entry *xdp_flow_entry_find(struct xdp_flow_binding *b,
					   unsigned long cookie)
{
	return rhashtable_lookup_fast(&b->cookies, &cookie,
				      xdp_flow_cookie_params);
}

/**
 * xdp_flow_entry_alloc() - a new entry, in no table yet
 * @b: the binding of its rule
 * @cookie: the rule's cookie
 *
 * Return: the entry, without a mask or a rule id, or NULL.
 */
struct xdp_flow_entry *xdp_flow_entry_alloc(struct xdp_flow_binding *b,
					    unsigned long cookie)
{
	struct xdp_flow_entry *entry;

	entry = kmem_cache_zalloc(xdp_flow_entry_cache, GFP_KERNEL);
	if (!entry)
		return NULL;
	entry->binding = b;
	entry->cookie = cookie;
	entry->rule.id = XDP_FLOW_NO_ID;
	return entry;
}

/**
 * xdp_flow_entry_dealloc() - free an entry that is in no table
 * @entry: the entry
 */
void xdp_flow_entry_dealloc(struct xdp_flow_entry *entry)
{
	kmem_cache_free(xdp_flow_entry_cache, entry);
}

/**
 * xdp_flow_entry_insert() - list an entry in its binding's tables
 * @entry: the entry, with its mask
 *
 * Return: 0, or a negative errno: the entry is in no table then.
 */
int xdp_flow_entry_insert(struct xdp_flow_entry *entry)
{
	int err;

	err = rhashtable_insert_fast(&entry->binding->cookies, &entry->node,
				     xdp_flow_cookie_params);
	if (err)
		return err;
	list_add_tail(&entry->list, &entry->binding->entries);
	return 0;
}

/**
 * xdp_flow_entry_remove() - take an entry out of its binding and free it
 * @entry: the entry, neither waiting nor in flight any more
 *
 * Its mask reference and its rule id go with it (the id to the next helper
 * first when it is @stale).
 */
void xdp_flow_entry_remove(struct xdp_flow_entry *entry)
{
	rhashtable_remove_fast(&entry->binding->cookies, &entry->node,
			       xdp_flow_cookie_params);
	list_del(&entry->list);
	xdp_flow_mask_put(entry->mask);
	xdp_flow_id_put(entry->rule.id, entry->stale);
	kmem_cache_free(xdp_flow_entry_cache, entry);
}

/* --- places: what is kept of TC's rules where offload is not enabled --- */

static struct kmem_cache *xdp_flow_place_cache;

static const struct rhashtable_params xdp_flow_place_params = {
	.key_len = sizeof(unsigned long),
	.key_offset = offsetof(struct xdp_flow_place, cookie),
	.head_offset = offsetof(struct xdp_flow_place, node),
	.automatic_shrinking = true,
};

/**
 * xdp_flow_place_find() - the place of a TC rule of a binding, by cookie
 * @b: the binding
 * @cookie: TC's cookie
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: the place, or NULL.
 */
struct xdp_flow_place *xdp_flow_place_find(struct xdp_flow_binding *b,
					   unsigned long cookie)
{
	return rhashtable_lookup_fast(&b->place_cookies, &cookie,
				      xdp_flow_place_params);
}

/**
 * xdp_flow_place_free() - forget the place of a TC rule
 * @b: its binding
 * @place: the place
 */
void xdp_flow_place_free(struct xdp_flow_binding *b,
			 struct xdp_flow_place *place)
{
	rhashtable_remove_fast(&b->place_cookies, &place->node,
			       xdp_flow_place_params);
	list_del(&place->list);
	xdp_flow_mask_put(place->mask);
	kmem_cache_free(xdp_flow_place_cache, place);
}

/**
 * xdp_flow_fl_mask() - what ranks a TC rule among the rules of its prio
 * @f: the rule
 *
 * Flower's mask; a prio of another classifier is one rule
 * (classifiers.c).
 *
 * Return: the mask's identity, never dereferenced; NULL for the others.
 */
const void *xdp_flow_fl_mask(const struct flow_cls_offload *f)
{
	return f->rule ? f->rule->match.mask : NULL;
}

/**
 * xdp_flow_place_add() - keep the place of a TC rule
 * @b: the binding, whose device is not enabled
 * @f: TC's rule
 *
 * Return: 0, or a negative errno.
 */
int xdp_flow_place_add(struct xdp_flow_binding *b, struct flow_cls_offload *f)
{
	struct xdp_flow_place *place;
	int err;

	place = kmem_cache_zalloc(xdp_flow_place_cache, GFP_KERNEL);
	if (!place)
		return -ENOMEM;
	place->mask = xdp_flow_mask_get(b, f->common.chain_index,
					f->common.prio, xdp_flow_fl_mask(f));
	if (!place->mask) {
		kmem_cache_free(xdp_flow_place_cache, place);
		return -ENOMEM;
	}
	place->cookie = f->cookie;
	err = rhashtable_insert_fast(&b->place_cookies, &place->node,
				     xdp_flow_place_params);
	if (err) {
		xdp_flow_mask_put(place->mask);
		kmem_cache_free(xdp_flow_place_cache, place);
		return err;
	}
	list_add_tail(&place->list, &b->places);
	return 0;
}

/**
 * xdp_flow_place_alloc() - a new place, in no table yet
 *
 * Return: the place, or NULL.
 */
struct xdp_flow_place *xdp_flow_place_alloc(void)
{
	return kmem_cache_zalloc(xdp_flow_place_cache, GFP_KERNEL);
}

/**
 * xdp_flow_place_dealloc() - free a place that is in no table
 * @place: the place
 */
void xdp_flow_place_dealloc(struct xdp_flow_place *place)
{
	kmem_cache_free(xdp_flow_place_cache, place);
}

/**
 * xdp_flow_place_insert() - list a place in its binding's tables
 * @b: the binding
 * @place: the place, with its cookie and mask
 *
 * Return: 0, or a negative errno: the place is in no table then.
 */
int xdp_flow_place_insert(struct xdp_flow_binding *b,
			  struct xdp_flow_place *place)
{
	int err;

	err = rhashtable_insert_fast(&b->place_cookies, &place->node,
				     xdp_flow_place_params);
	if (err)
		return err;
	list_add_tail(&place->list, &b->places);
	return 0;
}

/* --- order: TC's, as the XDP program compares rules --- */

/**
 * xdp_flow_order() - where a rule stands in TC's order, as the XDP
 *	program compares rules
 * @entry: the rule
 *
 * Rules of one prio are ranked by their flower mask, as flower tries them.
 * Rules of one flower mask can both match a packet only through port
 * ranges, and flower then picks by insertion order, which XDP does not
 * know: the lowest bit makes a software rule win such a tie, so that XDP
 * hands the packet to TC, and an offloaded rule is never tied with another
 * one (see xdp_flow_range_conflict()).
 *
 * nftables gives every rule of a chain the chain's priority, and has a
 * mask of its own for each rule: the rank is then the rule's position in
 * the chain (nftables offloads only rules appended at its end). Its netdev
 * ingress hook runs after TC's, so its rules come after every TC rule.
 *
 * Return: the order, struct xdp_flow_rule's @order.
 */
u64 xdp_flow_order(const struct xdp_flow_entry *entry)
{
	u64 prio = entry->mask->key.prio;

	if (entry->binding->nft)
		prio += XDP_FLOW_ORDER_NFT_BASE;
	/* A flowtable's hook, at its priority among the offloaded chains'
	 * (1 .. 65535): before them all from 0 down, after them all above.
	 */
	if (entry->binding->ft)
		prio = XDP_FLOW_ORDER_NFT_BASE +
		       clamp(entry->binding->prio, 0, U16_MAX + 1);
	/* A flowtable's flows bring a mask each, and its binding's ranks
	 * grow with them: they wrap within their 31 bits, never into the
	 * prio's. (Its flows never overlap: their ranks need no order.)
	 */
	return (prio << 32) | ((u64)(entry->mask->rank & (U32_MAX >> 1)) << 1) |
	       (entry->kind == XDP_FLOW_ENTRY_OFFLOAD);
}

/**
 * xdp_flow_entry_to_software() - keep a rule in software
 * @entry: the rule
 *
 * The XDP program hands what may match it to the stack, where TC runs it.
 */
void xdp_flow_entry_to_software(struct xdp_flow_entry *entry)
{
	entry->kind = XDP_FLOW_ENTRY_SOFTWARE;
	entry->rule.order = xdp_flow_order(entry);
	entry->rule.flags = XDP_FLOW_RULE_F_SOFTWARE;
	if (entry->binding->nft)
		entry->rule.flags |= XDP_FLOW_RULE_F_NFTABLES;
	if (entry->binding->ft)
		entry->rule.flags |= XDP_FLOW_RULE_F_FLOWTABLE;
	entry->rule.nr_actions = 1;
	memset(entry->rule.actions, 0, sizeof(entry->rule.actions));
	entry->rule.actions[0].id = XDP_FLOW_ACTION_PASS;
}

static bool xdp_flow_ranges_meet(const struct xdp_flow_port_range *a,
				 const struct xdp_flow_port_range *b)
{
	/* No range: every port (the key may still pin one). */
	return (!a->max || !b->max) || (a->min <= b->max && b->min <= a->max);
}

/**
 * xdp_flow_range_conflict() - whether a rule with port ranges may tie with
 *	an offloaded rule
 * @entry: the rule
 *
 * Whether an offloaded rule of @entry's flower mask may match a packet
 * @entry matches: their keys agree wherever both masks have bits, and
 * their port ranges meet.
 *
 * Return: true when one may.
 */
bool xdp_flow_range_conflict(const struct xdp_flow_entry *entry)
{
	const struct xdp_flow_entry *o;
	size_t i;

	if (!entry->l4_src_range.max && !entry->l4_dst_range.max)
		return false;
	list_for_each_entry(o, &entry->binding->entries, list) {
		const u8 *ka = (const u8 *)&entry->rule.key;
		const u8 *ma = (const u8 *)&entry->rule.mask;
		const u8 *kb = (const u8 *)&o->rule.key;
		const u8 *mb = (const u8 *)&o->rule.mask;

		if (o == entry || o->mask != entry->mask ||
		    o->kind != XDP_FLOW_ENTRY_OFFLOAD)
			continue;
		for (i = 0; i < sizeof(entry->rule.key); i++)
			if ((ka[i] ^ kb[i]) & ma[i] & mb[i])
				break;
		if (i == sizeof(entry->rule.key) &&
		    xdp_flow_ranges_meet(&entry->l4_src_range,
					 &o->l4_src_range) &&
		    xdp_flow_ranges_meet(&entry->l4_dst_range,
					 &o->l4_dst_range))
			return true;
	}
	return false;
}

/**
 * xdp_flow_order_cmp() - sort() comparison of two entries, in TC's order
 * @a: a pointer to an entry's pointer
 * @b: likewise
 *
 * Return: less than, equal to or greater than 0.
 */
int xdp_flow_order_cmp(const void *a, const void *b)
{
	const struct xdp_flow_entry *ea = *(const struct xdp_flow_entry **)a;
	const struct xdp_flow_entry *eb = *(const struct xdp_flow_entry **)b;

	if (ea->rule.order != eb->rule.order)
		return ea->rule.order < eb->rule.order ? -1 : 1;
	return ea->rule.id < eb->rule.id ? -1 : ea->rule.id > eb->rule.id;
}

/**
 * xdp_flow_sorted_entries() - the entries of enabled devices (or of one),
 *	in TC's order
 * @ifindex: only this device's, or 0 for those of every enabled device
 * @n: gets how many
 *
 * Caller holds xdp_flow_lock.
 *
 * Return: an array to kvfree(), or NULL without memory.
 */
struct xdp_flow_entry **xdp_flow_sorted_entries(int ifindex, unsigned int *n)
{
	struct xdp_flow_entry **arr, *entry;
	struct xdp_flow_binding *b;
	unsigned int cnt = 0;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (ifindex ? b->ifindex != ifindex : !xdp_flow_dev_find(b->ifindex))
			continue;
		list_for_each_entry(entry, &b->entries, list)
			cnt++;
	}
	arr = kvmalloc_array(cnt ?: 1, sizeof(*arr), GFP_KERNEL);
	if (!arr)
		return NULL;
	cnt = 0;
	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (ifindex ? b->ifindex != ifindex : !xdp_flow_dev_find(b->ifindex))
			continue;
		list_for_each_entry(entry, &b->entries, list)
			arr[cnt++] = entry;
	}
	sort(arr, cnt, sizeof(*arr), xdp_flow_order_cmp, NULL);
	*n = cnt;
	return arr;
}

/* --- a binding's tables, and the table's start and end --- */

/**
 * xdp_flow_binding_tables_init() - a new binding's tables of entries,
 *	places and masks
 * @b: the binding
 *
 * Return: 0 or -ENOMEM.
 */
int xdp_flow_binding_tables_init(struct xdp_flow_binding *b)
{
	if (rhashtable_init(&b->cookies, &xdp_flow_cookie_params))
		return -ENOMEM;
	if (rhashtable_init(&b->place_cookies, &xdp_flow_place_params)) {
		rhashtable_destroy(&b->cookies);
		return -ENOMEM;
	}
	if (rhashtable_init(&b->masks, &xdp_flow_mask_params)) {
		rhashtable_destroy(&b->place_cookies);
		rhashtable_destroy(&b->cookies);
		return -ENOMEM;
	}
	return 0;
}

/**
 * xdp_flow_binding_tables_destroy() - free a binding's tables
 * @b: the binding, whose entries and places are gone
 */
void xdp_flow_binding_tables_destroy(struct xdp_flow_binding *b)
{
	rhashtable_destroy(&b->masks);
	rhashtable_destroy(&b->place_cookies);
	rhashtable_destroy(&b->cookies);
}

/**
 * xdp_flow_table_init() - the caches of entries and places
 *
 * Return: 0 or -ENOMEM.
 */
int xdp_flow_table_init(void)
{
	xdp_flow_entry_cache = KMEM_CACHE(xdp_flow_entry, 0);
	if (!xdp_flow_entry_cache)
		return -ENOMEM;
	xdp_flow_place_cache = KMEM_CACHE(xdp_flow_place, 0);
	if (!xdp_flow_place_cache) {
		kmem_cache_destroy(xdp_flow_entry_cache);
		return -ENOMEM;
	}
	return 0;
}

/**
 * xdp_flow_table_exit() - free the caches: every binding is gone
 */
void xdp_flow_table_exit(void)
{
	kmem_cache_destroy(xdp_flow_place_cache);
	kmem_cache_destroy(xdp_flow_entry_cache);
}
