// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the indirect flow-block driver.
 *
 * The module binds to the clsact-ingress flow block of every device TC or
 * nftables offers it, and answers what is offered there with a callback
 * for each kind of binder: TC's blocks (flower rules, and the prios of
 * other classifiers), nftables netdev chains (whose transaction wants the
 * answer, and which ask for counters under RCU) and flowtables (a flow's
 * direction at a time, behind what runs before their hook). What a rule's
 * offer does is rules.c's.
 *
 * It owns the bindings' life and the callbacks; it calls rules.c,
 * stats.c, install.c, attach.c, show.c, table.c and classifiers.c.
 */
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <net/flow_offload.h>
#include <net/net_namespace.h>
#include <net/netfilter/nf_flow_table.h>
#include <net/netfilter/nf_tables.h>
#include <net/pkt_cls.h>
#include <net/sch_generic.h>

#include "xdp_flow.h"

/* Our flow_block_cbs; TC unlinks them from here itself when it cleans up. */
static LIST_HEAD(xdp_flow_block_cb_list);

/*
 * Ends a callback of TC's or an nftables chain's block, which may have
 * installed a device's first offloaded rule: drops xdp_flow_lock, then
 * waits for the attach that made due (@passes: the attach work's passes
 * when the callback began).
 */
static void xdp_flow_cb_unlock(int passes)
{
	bool due;

	due = xdp_flow_attach_due;
	xdp_flow_attach_due = false;
	mutex_unlock(&xdp_flow_lock);
	if (due)
		xdp_flow_attach_wait(passes);
}

/* --- TC's blocks --- */

/*
 * A rule of matchall, u32 or bpf: TC runs it, and its prio is a software
 * rule that no offloaded rule after it overtakes (classifiers.c). Caller
 * holds xdp_flow_lock. Never in_hw: returns -EOPNOTSUPP.
 */
static int xdp_flow_other_change(struct xdp_flow_binding *b,
				 enum tc_setup_type type, void *type_data)
{
	struct xdp_flow_dev *xdev;
	struct flow_cls_offload f;
	struct xdp_flow_all all;

	if (!xdp_flow_other_offer(b, type, type_data, &f))
		return -EOPNOTSUPP;
	if (f.command != FLOW_CLS_REPLACE) {
		xdp_flow_cls_destroy(b, &f);
		return -EOPNOTSUPP;
	}
	xdp_flow_cls_replace(b, &f);
	xdev = xdp_flow_dev_find(b->ifindex);
	if (!xdev)
		return -EOPNOTSUPP;
	if (!f.common.chain_index && xdp_flow_dev_first_all(xdev, &all) &&
	    all.order >> 32 == f.common.prio && !all.before)
		pr_warn_ratelimited("xdp_flow: %s: %s rules at prio %u stay in software and come first: every frame of the device goes to the stack, none is handled in XDP\n",
				    netdev_name(b->dev),
				    xdp_flow_other_name(type), f.common.prio);
	else
		pr_info_ratelimited("xdp_flow: %s: %s rules at chain %u prio %u stay in software: XDP hands the frames that reach them to the stack\n",
				    netdev_name(b->dev),
				    xdp_flow_other_name(type),
				    f.common.chain_index, f.common.prio);
	return -EOPNOTSUPP;
}

/* The callback of TC's blocks: flower rules and other classifiers' prios. */
static int xdp_flow_tc_cb(enum tc_setup_type type, void *type_data,
			  void *cb_priv)
{
	int passes = xdp_flow_attach_passes_read();
	struct xdp_flow_binding *b = cb_priv;
	struct flow_cls_offload *f = type_data;
	int err;

	mutex_lock(&xdp_flow_lock);
	if (type != TC_SETUP_CLSFLOWER) {
		err = xdp_flow_other_change(b, type, type_data);
		goto unlock;
	}
	switch (f->command) {
	case FLOW_CLS_REPLACE:
		err = xdp_flow_cls_replace(b, f);
		break;
	case FLOW_CLS_DESTROY:
		err = xdp_flow_cls_destroy(b, f);
		break;
	case FLOW_CLS_STATS:
		err = xdp_flow_cls_stats(b, f, true);
		break;
	default:
		err = -EOPNOTSUPP;
	}
unlock:
	xdp_flow_cb_unlock(passes);
	return err;
}

/* --- nftables netdev chains --- */

/*
 * nftables keeps no rule in software that a driver refused: the whole
 * transaction fails, and the rule is never destroyed, so forget it now.
 * nftables does not pass the driver's message on either: log it.
 */
static void xdp_flow_nft_refused(struct xdp_flow_binding *b,
				 struct flow_cls_offload *f, int err)
{
	struct xdp_flow_entry *entry = xdp_flow_entry_find(b, f->cookie);
	const char *msg = f->common.extack ? f->common.extack->_msg : NULL;

	if (!xdp_flow_dev_find(b->ifindex))
		msg = "xdp_flow: offload is not enabled on the device";
	if (entry) {
		xdp_flow_entry_uninstall(entry);
		xdp_flow_entry_free(entry);
	}
	pr_info_ratelimited("xdp_flow: %s: nftables rule not offloaded (%d)%s%s\n",
			    netdev_name(b->dev), err, msg ? ": " : "",
			    msg ? msg : "");
}

/*
 * The callback of an nftables netdev chain's block: its rules, and their
 * counters, which nftables asks for under rcu_read_lock().
 */
static int xdp_flow_nft_cb(enum tc_setup_type type, void *type_data,
			   void *cb_priv)
{
	int passes = xdp_flow_attach_passes_read();
	struct xdp_flow_binding *b = cb_priv;
	struct flow_cls_offload *f = type_data;
	int err;

	if (type != TC_SETUP_CLSFLOWER)
		return -EOPNOTSUPP;
	if (f->command == FLOW_CLS_STATS)
		return xdp_flow_nft_stats(b, f);

	mutex_lock(&xdp_flow_lock);
	switch (f->command) {
	case FLOW_CLS_REPLACE:
		err = xdp_flow_cls_replace(b, f);
		if (err)
			xdp_flow_nft_refused(b, f, err);
		else
			xdp_flow_nft_stats_later();
		break;
	case FLOW_CLS_DESTROY:
		err = xdp_flow_cls_destroy(b, f);
		break;
	default:
		err = -EOPNOTSUPP;
	}
	xdp_flow_cb_unlock(passes);
	return err;
}

/* --- nftables flowtables --- */

/* A flowtable offers each flow to every device it is bound to: is @f's
 * ingress device the one of @b?
 */
static bool xdp_flow_ft_mine(const struct xdp_flow_binding *b,
			     struct flow_cls_offload *f)
{
	struct flow_rule *fr = flow_cls_offload_flow_rule(f);
	struct flow_match_meta match;

	if (!flow_rule_match_key(fr, FLOW_DISSECTOR_KEY_META))
		return false;
	flow_rule_match_meta(fr, &match);
	return match.mask->ingress_ifindex == 0xffffffff &&
	       match.key->ingress_ifindex == b->ifindex;
}

static bool xdp_flow_nft_chain_bound(const struct net_device *dev,
				     const void *priv)
{
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list)
		if (b->nft && b->dev == dev && b->owner == priv)
			return true;
	return false;
}

/*
 * What runs at netfilter ingress before the flowtable's hook must be in
 * XDP before its flows: nftables chains whose rules are all here. Returns
 * NULL, or why the flows cannot be. Caller holds xdp_flow_lock.
 */
static const char *xdp_flow_ft_hooks_before(const struct xdp_flow_binding *ft)
{
	const char *why = "xdp_flow: the flowtable's ingress hook is not in place";
#ifdef CONFIG_NETFILTER_INGRESS
	struct nf_hook_entries *e;
	struct nf_hook_ops **ops;
	unsigned int i;

	rcu_read_lock();
	e = rcu_dereference(ft->dev->nf_hooks_ingress);
	ops = e ? nf_hook_entries_get_hook_ops(e) : NULL;
	for (i = 0; e && i < e->num_hook_entries; i++) {
		if (ops[i]->priv == ft->owner) {
			why = NULL;
			break;
		}
		if (!xdp_flow_nft_chain_bound(ft->dev, ops[i]->priv)) {
			why = "xdp_flow: an ingress hook not offloaded runs before the flowtable";
			break;
		}
	}
	rcu_read_unlock();
#endif
	return why;
}

/*
 * An offloaded chain that runs after a flowtable (a higher priority) would
 * take in XDP what the flowtable holds in software (a flow not offered
 * yet): the two are not offloaded on one device. Returns NULL, or why
 * @dev cannot have a chain (@ft false) or flowtable of priority @prio.
 * Caller holds xdp_flow_lock.
 */
static const char *xdp_flow_ft_conflict(const struct net_device *dev,
					bool ft, int prio)
{
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list) {
		if (b->dev != dev || (ft ? !b->nft : !b->ft))
			continue;
		if (ft ? b->prio >= prio : prio >= b->prio)
			return "xdp_flow: an offloaded chain would run after the flowtable";
	}
	return NULL;
}

/*
 * The callback of a flowtable's block: REPLACE, DESTROY and STATS of its
 * flows, one direction each.
 */
static int xdp_flow_ft_cb(enum tc_setup_type type, void *type_data,
			  void *cb_priv)
{
	struct xdp_flow_binding *b = cb_priv;
	struct flow_cls_offload *f = type_data;
	const char *why;
	int err;

	if (type != TC_SETUP_CLSFLOWER)
		return -EOPNOTSUPP;
	/* Only REPLACE carries the flow; the others name it by cookie. */
	if (f->command == FLOW_CLS_REPLACE && !xdp_flow_ft_mine(b, f))
		return -EOPNOTSUPP;
	mutex_lock(&xdp_flow_lock);
	switch (f->command) {
	case FLOW_CLS_REPLACE:
		why = xdp_flow_ft_hooks_before(b);
		if (why) {
			err = -EOPNOTSUPP;
			break;
		}
		err = xdp_flow_cls_replace(b, f);
		why = f->common.extack ? f->common.extack->_msg : NULL;
		break;
	case FLOW_CLS_DESTROY:
		err = xdp_flow_cls_destroy(b, f);
		why = NULL;
		break;
	case FLOW_CLS_STATS:
		err = xdp_flow_cls_stats(b, f, true);
		why = NULL;
		break;
	default:
		err = -EOPNOTSUPP;
		why = NULL;
	}
	/* The datapath attaches in its own time: the flowtable forwards the
	 * flow in software until then.
	 */
	xdp_flow_attach_due = false;
	mutex_unlock(&xdp_flow_lock);
	/* The flowtable keeps the flow in software and says nothing. */
	if (err && f->command == FLOW_CLS_REPLACE)
		pr_info_ratelimited("xdp_flow: %s: flowtable flow not offloaded (%d)%s%s\n",
				    netdev_name(b->dev), err, why ? ": " : "",
				    why ?: "");
	return err;
}

/* --- binding to flow blocks --- */

/* The callback of @b's block, by the kind of binder it has. */
static flow_setup_cb_t *xdp_flow_block_cb_of(const struct xdp_flow_binding *b)
{
	if (b->ft)
		return xdp_flow_ft_cb;
	if (b->nft)
		return xdp_flow_nft_cb;
	return xdp_flow_tc_cb;
}

static struct xdp_flow_binding *
xdp_flow_binding_find(struct net_device *dev, struct flow_block *block)
{
	struct xdp_flow_binding *b;

	list_for_each_entry(b, &xdp_flow_bindings, list)
		if (b->dev == dev && b->block == block)
			return b;
	return NULL;
}

static void xdp_flow_block_release(void *cb_priv)
{
	struct xdp_flow_binding *b = cb_priv;
	struct xdp_flow_place *place, *ptmp;
	struct xdp_flow_entry *entry, *tmp;

	mutex_lock(&xdp_flow_lock);
	/* TC destroys every rule before unbinding; nftables may not. */
	list_for_each_entry_safe_reverse(entry, tmp, &b->entries, list) {
		xdp_flow_entry_uninstall(entry);
		xdp_flow_entry_free(entry);
	}
	list_for_each_entry_safe(place, ptmp, &b->places, list)
		xdp_flow_place_free(b, place);
	xdp_flow_others_free(b);
	list_del(&b->list);
	mutex_unlock(&xdp_flow_lock);
	xdp_flow_binding_tables_destroy(b);
	kfree(b);
}

/*
 * The flow block a bind or unbind is about. flow_indr_dev_register()
 * replays the binds of the blocks that exist when the module registers
 * with a bare struct flow_block_offload: command and binder type only, no
 * block. @data is then what the binder passed as its own: TC's block
 * (with a qdisc) or an nftables base chain (without one).
 */
static struct flow_block *xdp_flow_bo_block(struct Qdisc *sch,
					    enum tc_setup_type type,
					    struct flow_block_offload *bo,
					    void *data)
{
	if (bo->block)
		return bo->block;
	if (sch)
		return &((struct tcf_block *)data)->flow_block;
	if (type == TC_SETUP_FT)
		return &((struct nf_flowtable *)data)->flow_block;
	return &((struct nft_base_chain *)data)->flow_block;
}

static int xdp_flow_block_bind(struct net_device *dev, struct Qdisc *sch,
			       enum tc_setup_type type,
			       struct flow_block_offload *bo, void *data,
			       void (*cleanup)(struct flow_block_cb *block_cb))
{
	struct flow_block *block = xdp_flow_bo_block(sch, type, bo, data);
	bool ft = type == TC_SETUP_FT;
	struct flow_block_cb *block_cb;
	struct xdp_flow_binding *b;
	const char *why = NULL;
	int prio = 0;

	/* nftables: the hook's priority, for the order of the two kinds */
	if (ft)
		prio = ((struct nf_flowtable *)data)->priority;
	else if (!sch)
		prio = ((struct nft_base_chain *)data)->ops.priority;
	mutex_lock(&xdp_flow_lock);
	b = xdp_flow_binding_find(dev, block);
	if (ft && !xdp_flow_dev_find(dev->ifindex))
		why = "xdp_flow: offload is not enabled on the device";
	else if (!sch)
		why = xdp_flow_ft_conflict(dev, ft, prio);
	mutex_unlock(&xdp_flow_lock);
	if (b)
		return -EBUSY;
	if (why) {
		pr_info_ratelimited("xdp_flow: %s: nftables %s not offloaded: %s\n",
				    netdev_name(dev),
				    ft ? "flowtable" : "chain", why);
		return -EOPNOTSUPP;
	}

	b = kzalloc_obj(*b, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	if (xdp_flow_binding_tables_init(b)) {
		kfree(b);
		return -ENOMEM;
	}
	b->dev = dev;
	b->ifindex = dev->ifindex;
	b->block = block;
	INIT_LIST_HEAD(&b->entries);
	INIT_LIST_HEAD(&b->places);
	INIT_LIST_HEAD(&b->others);
	/* TC binds through a qdisc; nftables through a chain or a
	 * flowtable, without one.
	 */
	b->nft = !sch && !ft;
	b->ft = ft;
	b->prio = prio;
	if (ft)
		b->owner = data;
	else if (!sch)
		b->owner = &((struct nft_base_chain *)data)->chain;
	/* TC offers a driver that binds late (flow_indr_dev_register(): no
	 * cb_list_head) no rule of the block. A block without chains has
	 * none; anything else may.
	 */
	if (sch && !bo->cb_list_head)
		b->unseen_rules = !list_empty(&((struct tcf_block *)data)->chain_list);

	block_cb = flow_indr_block_cb_alloc(xdp_flow_block_cb_of(b), b, b,
					    xdp_flow_block_release, bo, dev,
					    sch, data, NULL, cleanup);
	if (IS_ERR(block_cb)) {
		xdp_flow_binding_tables_destroy(b);
		kfree(b);
		return PTR_ERR(block_cb);
	}
	mutex_lock(&xdp_flow_lock);
	list_add_tail(&b->list, &xdp_flow_bindings);
	mutex_unlock(&xdp_flow_lock);
	flow_block_cb_add(block_cb, bo);
	list_add_tail(&block_cb->driver_list, &xdp_flow_block_cb_list);
	return 0;
}

static int xdp_flow_block_unbind(struct net_device *dev,
				 struct flow_block_offload *bo)
{
	struct flow_block_cb *block_cb;
	struct xdp_flow_binding *b;

	mutex_lock(&xdp_flow_lock);
	b = xdp_flow_binding_find(dev, bo->block);
	mutex_unlock(&xdp_flow_lock);
	if (!b)
		return -ENOENT;
	block_cb = flow_block_cb_lookup(bo->block, xdp_flow_block_cb_of(b), b);
	if (!block_cb)
		return -ENOENT;
	flow_indr_block_cb_remove(block_cb, bo);
	list_del(&block_cb->driver_list);
	return 0;
}

static int xdp_flow_indr_cb(struct net_device *dev, struct Qdisc *sch,
			    void *cb_priv, enum tc_setup_type type,
			    void *type_data, void *data,
			    void (*cleanup)(struct flow_block_cb *block_cb))
{
	struct flow_block_offload *bo = type_data;

	if (!dev || (type != TC_SETUP_BLOCK && type != TC_SETUP_FT))
		return -EOPNOTSUPP;
	/*
	 * flow_indr_dev_register() offers a driver that registers every
	 * block bound before, in a flow_block_offload of its own (no
	 * cb_list_head). nftables leaves the entry of a device whose bind
	 * failed there, and frees the device and the chain or flowtable it
	 * names while the entry stays: take none of nftables' (no device is
	 * enabled yet for a flowtable, and a chain's rules are never offered
	 * again), and touch nothing they point to.
	 */
	if (!sch && !bo->cb_list_head)
		return -EOPNOTSUPP;
	if (bo->binder_type != FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS)
		return -EOPNOTSUPP;
	/* The helper attaches XDP in the initial network namespace. */
	if (!net_eq(dev_net(dev), &init_net))
		return -EOPNOTSUPP;

	bo->unlocked_driver_cb = true;
	switch (bo->command) {
	case FLOW_BLOCK_BIND:
		return xdp_flow_block_bind(dev, sch, type, bo, data, cleanup);
	case FLOW_BLOCK_UNBIND:
		return xdp_flow_block_unbind(dev, bo);
	default:
		return -EOPNOTSUPP;
	}
}

/**
 * xdp_flow_block_init() - become an indirect flow-block driver
 *
 * The blocks bound before are offered at once.
 *
 * Return: 0 or a negative errno.
 */
int xdp_flow_block_init(void)
{
	return flow_indr_dev_register(xdp_flow_indr_cb, NULL);
}

/**
 * xdp_flow_block_exit() - unbind every block; be no driver any more
 *
 * Not under rtnl: TC's cleanup of our blocks takes it.
 */
void xdp_flow_block_exit(void)
{
	flow_indr_dev_unregister(xdp_flow_indr_cb, NULL, xdp_flow_block_release);
}
