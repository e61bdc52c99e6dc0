// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the rules of classifiers other than flower.
 *
 * TC offers matchall, u32 and bpf rules to offload drivers too. XDP runs
 * none of them, but it must not act on a frame before them either: an
 * offloaded flower rule of a later prio would otherwise overtake a
 * policer, a drop or a classifier program that TC runs first (Open
 * vSwitch's ingress_policing_rate is a matchall police at prio 1). So each
 * chain and prio that holds rules of such a classifier is one software
 * rule that matches every frame of the device in that chain: XDP hands
 * whatever reaches it to the stack, where TC runs the rules in order.
 *
 * TC keeps one classifier per chain and prio, so a prio's rules all share
 * that shield. This file counts the rules TC offered at each prio, so that
 * the shield comes with the first and goes with the last; rules.c keeps
 * the shield as it keeps a flower rule, under the cookie made here.
 *
 * It owns those counts; it calls nothing of the module.
 */

#include <net/pkt_cls.h>

#include "xdp_flow.h"

/**
 * struct xdp_flow_other - a chain and prio that holds rules of a classifier
 *	other than flower
 * @list: in the binding's others
 * @chain: TC chain
 * @prio: TC prio
 * @type: TC_SETUP_CLSMATCHALL, TC_SETUP_CLSU32 or TC_SETUP_CLSBPF
 * @ids: the rules TC offered (matchall: its cookie; u32: the knode's
 *	handle; bpf: the program, which two rules may share), each with the
 *	number of times it was offered and not withdrawn, as an xarray value
 * @nr: the sum of those numbers
 */
struct xdp_flow_other {
	struct list_head list;
	u32 chain;
	u16 prio;
	u8 type;
	struct xarray ids;
	unsigned long nr;
};

/* Odd, so never the address of a flower rule, which TC's cookies are. */
static unsigned long xdp_flow_other_cookie_of(u8 type, u32 chain, u16 prio)
{
	return ((unsigned long)chain << 24) | ((unsigned long)prio << 8) |
	       ((unsigned long)type << 1) | 1;
}

/**
 * xdp_flow_other_cookie() - whether @cookie is that of a prio's shield
 * @cookie: an entry's cookie on a TC binding
 *
 * Return: the classifier's TC_SETUP_* type, or 0 for a flower rule.
 */
u8 xdp_flow_other_cookie(unsigned long cookie)
{
	return cookie & 1 ? (cookie >> 1) & 0x7f : 0;
}

/* The rule TC's request is about, and whether it comes or goes. */
static bool xdp_flow_other_parse(enum tc_setup_type type, void *type_data,
				 const struct flow_cls_common_offload **common,
				 unsigned long *id, bool *add, bool *swap,
				 unsigned long *old)
{
	*swap = false;
	switch (type) {
	case TC_SETUP_CLSMATCHALL: {
		struct tc_cls_matchall_offload *m = type_data;

		*common = &m->common;
		*id = m->cookie;
		if (m->command != TC_CLSMATCHALL_REPLACE &&
		    m->command != TC_CLSMATCHALL_DESTROY)
			return false;
		*add = m->command == TC_CLSMATCHALL_REPLACE;
		return true;
	}
	case TC_SETUP_CLSU32: {
		struct tc_cls_u32_offload *u = type_data;

		/* Hash tables classify nothing: their knodes do. */
		*common = &u->common;
		*id = u->knode.handle;
		if (u->command != TC_CLSU32_REPLACE_KNODE &&
		    u->command != TC_CLSU32_DELETE_KNODE)
			return false;
		*add = u->command == TC_CLSU32_REPLACE_KNODE;
		return true;
	}
	case TC_SETUP_CLSBPF: {
		struct tc_cls_bpf_offload *p = type_data;

		*common = &p->common;
		if (p->command != TC_CLSBPF_OFFLOAD)
			return false;
		/* A replace takes the old program's place. */
		*add = p->prog;
		*id = (unsigned long)(p->prog ?: p->oldprog);
		*swap = p->prog && p->oldprog;
		*old = (unsigned long)p->oldprog;
		return true;
	}
	default:
		return false;
	}
}

static void xdp_flow_other_request(const struct flow_cls_common_offload *c,
				   u8 type, bool add,
				   struct flow_cls_offload *f)
{
	memset(f, 0, sizeof(*f));
	f->common = *c;
	f->command = add ? FLOW_CLS_REPLACE : FLOW_CLS_DESTROY;
	f->cookie = xdp_flow_other_cookie_of(type, c->chain_index, c->prio);
}

/**
 * xdp_flow_other_reoffer() - the shield a classifier's reoffload is about
 * @type: the TC_SETUP_* type of the request
 * @type_data: TC's request, from the classifier's reoffload
 * @f: filled in with the request for the prio's shield
 *
 * Counts nothing: a reoffload tells of rules TC already offered.
 *
 * Return: whether @type_data is about a rule at all.
 */
bool xdp_flow_other_reoffer(enum tc_setup_type type, void *type_data,
			    struct flow_cls_offload *f)
{
	const struct flow_cls_common_offload *common;
	unsigned long id, old;
	bool add, swap;

	if (!xdp_flow_other_parse(type, type_data, &common, &id, &add, &swap,
				  &old))
		return false;
	xdp_flow_other_request(common, type, add, f);
	return true;
}

static struct xdp_flow_other *
xdp_flow_other_find(struct xdp_flow_binding *b, u32 chain, u16 prio)
{
	struct xdp_flow_other *o;

	list_for_each_entry(o, &b->others, list)
		if (o->chain == chain && o->prio == prio)
			return o;
	return NULL;
}

static void xdp_flow_other_free(struct xdp_flow_other *o)
{
	list_del(&o->list);
	xa_destroy(&o->ids);
	kfree(o);
}

/* Counts rule @id of @o once more (@n 1) or once less (-1). u32 offers a
 * knode it replaces again, without withdrawing it: a knode counts once.
 */
static int xdp_flow_other_count(struct xdp_flow_other *o, unsigned long id,
				int n)
{
	unsigned long was = xa_to_value(xa_load(&o->ids, id) ?: xa_mk_value(0));
	unsigned long now;
	int err;

	if (n < 0 && !was)
		return 0;	/* a rule whose offer we never saw */
	now = was + n;
	if (o->type != TC_SETUP_CLSBPF)
		now = min(now, 1UL);
	if (now == was)
		return 0;
	if (now)
		err = xa_err(xa_store(&o->ids, id, xa_mk_value(now),
				      GFP_KERNEL));
	else
		err = xa_err(xa_erase(&o->ids, id));
	if (err)
		return err;
	o->nr = o->nr + now - was;
	return 0;
}

/**
 * xdp_flow_other_offer() - count an offer of a rule of another classifier
 * @b: the binding (a TC block's) it was offered on
 * @type: TC_SETUP_CLSMATCHALL, TC_SETUP_CLSU32 or TC_SETUP_CLSBPF
 * @type_data: TC's request
 * @f: filled in with the request for the prio's shield
 *
 * Caller holds xdp_flow_lock. Without memory to count a rule, the shield
 * is made (and kept, as if the rule were counted): a prio XDP hands to the
 * stack for too long costs speed, a rule it overtakes would cost outcome.
 *
 * Return: whether the shield is to be made (@f is a FLOW_CLS_REPLACE) or
 * removed (FLOW_CLS_DESTROY); false when it stays as it is.
 */
bool xdp_flow_other_offer(struct xdp_flow_binding *b, enum tc_setup_type type,
			  void *type_data, struct flow_cls_offload *f)
{
	const struct flow_cls_common_offload *common;
	struct xdp_flow_other *o;
	unsigned long id, old;
	bool add, swap, had, has;
	int err;

	if (!xdp_flow_other_parse(type, type_data, &common, &id, &add, &swap,
				  &old))
		return false;
	o = xdp_flow_other_find(b, common->chain_index, common->prio);
	if (!o) {
		if (!add)
			return false;
		o = kzalloc_obj(*o, GFP_KERNEL);
		if (!o) {
			xdp_flow_other_request(common, type, true, f);
			return true;
		}
		o->chain = common->chain_index;
		o->prio = common->prio;
		o->type = type;
		xa_init(&o->ids);
		list_add_tail(&o->list, &b->others);
	}
	had = o->nr;
	if (swap)
		xdp_flow_other_count(o, old, -1);
	err = xdp_flow_other_count(o, id, add ? 1 : -1);
	if (err) {
		/* Keep the shield: forget nothing that TC still runs. */
		o->nr++;
	}
	has = o->nr;
	if (!has)
		xdp_flow_other_free(o);
	if (had == has)
		return false;
	xdp_flow_other_request(common, type, !had, f);
	return true;
}

/**
 * xdp_flow_others_free() - forget the counts of a binding being released
 * @b: the binding
 *
 * Caller holds xdp_flow_lock.
 */
void xdp_flow_others_free(struct xdp_flow_binding *b)
{
	struct xdp_flow_other *o, *tmp;

	list_for_each_entry_safe(o, tmp, &b->others, list)
		xdp_flow_other_free(o);
}

/**
 * xdp_flow_other_name() - the name TC gives a classifier
 * @type: its TC_SETUP_* type, as xdp_flow_other_cookie() returns it
 *
 * Return: "matchall", "u32", "bpf", or "classifier".
 */
const char *xdp_flow_other_name(u8 type)
{
	switch (type) {
	case TC_SETUP_CLSMATCHALL:
		return "matchall";
	case TC_SETUP_CLSU32:
		return "u32";
	case TC_SETUP_CLSBPF:
		return "bpf";
	default:
		return "classifier";
	}
}
