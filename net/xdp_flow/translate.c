// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: translation of a flow_rule into the rule the XDP program runs.
 *
 * A rule is offloaded only when the XDP program does exactly what TC would
 * do with it. Otherwise the translation still produces a rule, but a
 * software one: its key keeps only the matches that are expressible, so it
 * matches a superset of the packets TC's rule matches, and its action hands
 * them to the stack. That keeps offloaded rules of a higher prio from
 * overtaking a rule that stays in software.
 *
 * It owns the three translations (TC flower rules, the flows flowtables
 * offer, the prios of other classifiers) and what the offer of a flowtable
 * leaves out; it calls match.c (the key), actions.c (the actions) and
 * classifiers.c (which classifier a prio is of).
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ppp_defs.h>
#include <linux/siphash.h>
#include <linux/tcp.h>
#include <net/flow_offload.h>
#include <net/net_namespace.h>
#include <net/netfilter/nf_flow_table.h>
#include <net/pkt_cls.h>

#include "xdp_flow.h"

static void xdp_flow_set_msg(struct netlink_ext_ack *extack, const char *msg)
{
	if (extack && !extack->_msg)
		extack->_msg = msg;
}

/* Empties @rule for a translation of @f in @chain. */
static void xdp_flow_rule_reset(struct xdp_flow_rule *rule,
				struct flow_cls_offload *f, u32 chain)
{
	memset(&rule->key, 0, sizeof(rule->key));
	memset(&rule->mask, 0, sizeof(rule->mask));
	memset(rule->actions, 0, sizeof(rule->actions));
	memset(&rule->l4_src_range, 0, sizeof(rule->l4_src_range));
	memset(&rule->l4_dst_range, 0, sizeof(rule->l4_dst_range));
	memset(&rule->enc6, 0, sizeof(rule->enc6));
	rule->flags = 0;
	rule->nr_actions = 0;
	rule->ft_conn = 0;
	rule->cookie = f->cookie;
	rule->chain = chain;
}

/*
 * Ends a translation: the key masked, and, when @why says what cannot be
 * offloaded, @rule a software rule (a superset match, action pass) and
 * @why in @extack. Returns 0 or -EOPNOTSUPP.
 */
static int xdp_flow_rule_finish(struct xdp_flow_rule *rule, const char *why,
				struct netlink_ext_ack *extack)
{
	u8 *k = (u8 *)&rule->key, *m = (u8 *)&rule->mask;
	size_t i;

	for (i = 0; i < sizeof(rule->key); i++)
		k[i] &= m[i];
	if (!why)
		return 0;

	xdp_flow_set_msg(extack, why);
	memset(rule->actions, 0, sizeof(rule->actions));
	memset(&rule->enc6, 0, sizeof(rule->enc6));
	rule->flags = XDP_FLOW_RULE_F_SOFTWARE;
	rule->nr_actions = 1;
	rule->actions[0].id = XDP_FLOW_ACTION_PASS;
	return -EOPNOTSUPP;
}

/* --- nftables flowtables (TC_SETUP_FT) --- */

/* A VLAN TCI without its DEI bit, which the XDP key does not hold. */
#define XDP_FLOW_TCI_NO_DEI	(VLAN_PRIO_MASK | VLAN_VID_MASK)

/* The TCP flags a flowtable's offer matches clear (nf_flow_rule_match()). */
#define XDP_FLOW_TCP_FIN_RST \
	cpu_to_be16(be32_to_cpu(TCP_FLAG_RST | TCP_FLAG_FIN) >> 16)

/**
 * xdp_flow_translate_ft_flow() - turn one direction of a flowtable's flow
 *	into an XDP rule
 * @f: the flowtable's FLOW_CLS_REPLACE request
 * @t: the device it is offered on
 * @flow: what the offer leaves out
 * @rule: filled in; id and order are the caller's
 * @extack: where the reason for a refusal goes
 *
 * The offer matches TCP FIN and RST clear; the rule takes them too, and
 * the datapath sends them to the stack, where the flowtable tears the
 * flow down, and from then on every frame of @flow's connection (struct
 * xdp_flow_rule's @ft_conn), as the flowtable's software path does.
 *
 * The software path finds a flow by its VLAN tag (the whole TCI; the
 * datapath leaves a tag with DEI set to the stack) and PPPoE session too:
 * the rule matches them, or their absence, as @flow has them. Flows in
 * two encapsulations (QinQ, PPPoE over a VLAN) stay in software: the
 * kernels disagree about their order. So do a device's flows where it
 * may hide tags from XDP, and a PPPoE flow at the TC hook (no skb helper
 * takes the header off).
 *
 * Return: as xdp_flow_translate(): 0, or -EOPNOTSUPP with @rule a
 * software rule.
 */
static int xdp_flow_translate_ft_flow(struct flow_cls_offload *f,
				      const struct xdp_flow_target *t,
				      const struct xdp_flow_ft_flow *flow,
				      struct xdp_flow_rule *rule,
				      struct netlink_ext_ack *extack)
{
	struct flow_rule *fr = flow_cls_offload_flow_rule(f);
	struct xdp_flow_key *k = &rule->key, *m = &rule->mask;
	const char *why;

	xdp_flow_rule_reset(rule, f, 0);
	/* The offer's protocol is ETH_P_ALL, in host order: any. */
	why = xdp_flow_match(fr, htons(ETH_P_ALL), 0, t, rule);
	if (!why && (rule->mask.n_proto != htons(0xffff) ||
		     (rule->key.n_proto != htons(ETH_P_IP) &&
		      rule->key.n_proto != htons(ETH_P_IPV6))))
		why = "xdp_flow: flowtable flow of another protocol than IPv4 or IPv6";
	if (!why && t->vlan_hidden)
		why = "xdp_flow: flowtable flows need the VLAN tags in XDP (rxvlan off)";
	if (!why && flow->torn_down)
		why = "xdp_flow: flowtable flow torn down (a TCP FIN or RST went by)";
	if (!why && flow->encaps > 1)
		why = "xdp_flow: flowtable flow in two encapsulations";
	/* The offer pops and pushes 802.1Q tags only. */
	if (!why && flow->vlan_proto && flow->vlan_proto != htons(ETH_P_8021Q))
		why = "xdp_flow: flowtable flow in an 802.1ad tag";
	if (!why)
		why = xdp_flow_ft_actions(fr, t, flow,
					  k->n_proto == htons(ETH_P_IPV6),
					  rule);
	if (!why) {
		m->tcp_flags &= ~XDP_FLOW_TCP_FIN_RST;
		rule->ft_conn = flow->conn;
		/* the tag, or none; no inner tag */
		k->vlan_tpid = flow->vlan_proto;
		m->vlan_tpid = htons(0xffff);
		k->vlan_tci = htons(flow->vlan_tci & XDP_FLOW_TCI_NO_DEI);
		m->vlan_tci = flow->vlan_proto ? htons(XDP_FLOW_TCI_NO_DEI) : 0;
		k->cvlan_tpid = 0;
		m->cvlan_tpid = htons(0xffff);
		k->cvlan_tci = 0;
		m->cvlan_tci = 0;
		m->pppoe_sid = htons(0xffff);
		m->ppp_proto = htons(0xffff);
		if (flow->pppoe) {
			k->pppoe_sid = htons(flow->pppoe_sid);
			k->ppp_proto = htons(k->n_proto == htons(ETH_P_IPV6) ?
					     PPP_IPV6 : PPP_IP);
		}
	}
	return xdp_flow_rule_finish(rule, why, extack);
}

static siphash_key_t xdp_flow_conn_secret;

/* The flow @tuple is a direction of. */
static struct flow_offload *xdp_flow_ft_of(const struct flow_offload_tuple *tuple)
{
	const struct flow_offload_tuple_rhash *th =
		container_of(tuple, struct flow_offload_tuple_rhash, tuple);

	return container_of(th - tuple->dir, struct flow_offload, tuplehash[0]);
}

/*
 * The key of the flow @tuple is a direction of: the same for both
 * directions, and not the flow's address (which the helper must not
 * learn). Never 0 (no flow).
 */
static u64 xdp_flow_ft_conn(const struct flow_offload_tuple *tuple)
{
	net_get_random_once(&xdp_flow_conn_secret,
			    sizeof(xdp_flow_conn_secret));
	return siphash_1u64((u64)(uintptr_t)xdp_flow_ft_of(tuple),
			    &xdp_flow_conn_secret) ?: 1;
}

/**
 * xdp_flow_ft_torn_down() - whether the flowtable tore a flow down
 * @cookie: the cookie of a flowtable's offer (a direction of the flow),
 *	whose flow lives until the flowtable withdraws it
 *
 * The flowtable's software path tears a flow down at its first TCP FIN
 * or RST (or when it expires) and from then on leaves every frame of it
 * to the stack, where conntrack follows the connection's end. An offer
 * may come, or be installed, after that: the datapath must not forward
 * the flow's frames then.
 *
 * Return: true once the flow is torn down.
 */
bool xdp_flow_ft_torn_down(unsigned long cookie)
{
	const struct flow_offload_tuple *tuple = (void *)cookie;

	return test_bit(NF_FLOW_TEARDOWN, &xdp_flow_ft_of(tuple)->flags);
}

/**
 * xdp_flow_translate_ft() - turn a flowtable's offer into an XDP rule
 * @f: the flowtable's FLOW_CLS_REPLACE request
 * @t: the device it is offered on
 * @rule: filled in; id and order are the caller's
 * @extack: where the reason for a refusal goes
 *
 * A flowtable's offer: the cookie is the flow's tuple of that direction,
 * alive while the flowtable calls us. The offer has no match for a PPPoE
 * session its frames arrive in (hardware parses it by itself), and its
 * VLAN match is not among the keys it says it uses (nf_flow_rule_match()
 * sets the key's offset only): the tuple has both.
 *
 * Return: as xdp_flow_translate_ft_flow().
 */
int xdp_flow_translate_ft(struct flow_cls_offload *f,
			  const struct xdp_flow_target *t,
			  struct xdp_flow_rule *rule,
			  struct netlink_ext_ack *extack)
{
	const struct flow_offload_tuple *tuple = (void *)f->cookie;
	struct xdp_flow_ft_flow flow = {
		.conn = xdp_flow_ft_conn(tuple),
		.mtu = tuple->mtu,
		.torn_down = xdp_flow_ft_torn_down(f->cookie),
	};
	int i;

	for (i = 0; i < tuple->encap_num && i < NF_FLOW_TABLE_ENCAP_MAX; i++) {
		if (tuple->in_vlan_ingress & BIT(i))
			continue;	/* added by the device (a bridge's) */
		flow.encaps++;
		if (tuple->encap[i].proto == htons(ETH_P_PPP_SES)) {
			flow.pppoe = true;
			flow.pppoe_sid = tuple->encap[i].id;
		} else {
			flow.vlan_proto = tuple->encap[i].proto;
			flow.vlan_tci = tuple->encap[i].id;
		}
	}
	return xdp_flow_translate_ft_flow(f, t, &flow, rule, extack);
}

/**
 * xdp_flow_translate() - turn a TC flower rule into an XDP rule
 * @f: TC's FLOW_CLS_REPLACE request
 * @t: the device the rule is offered on
 * @rule: filled in; id and order are the caller's
 * @extack: where the reason for a refusal goes
 *
 * Return: 0 when @rule does exactly what TC would do with the packets;
 * -EOPNOTSUPP when it cannot, with the reason in @extack and @rule turned
 * into a software rule (flag XDP_FLOW_RULE_F_SOFTWARE, a superset match,
 * action pass). The port ranges are set in both cases; a software
 * rule is a superset also without them.
 */
int xdp_flow_translate(struct flow_cls_offload *f,
		       const struct xdp_flow_target *t,
		       struct xdp_flow_rule *rule,
		       struct netlink_ext_ack *extack)
{
	struct flow_rule *fr = flow_cls_offload_flow_rule(f);
	const char *why;

	xdp_flow_rule_reset(rule, f, f->common.chain_index);
	why = xdp_flow_match(fr, f->common.protocol, f->common.chain_index, t,
			     rule);
	if (fr->match.dissector->used_keys &
	    BIT_ULL(FLOW_DISSECTOR_KEY_PORTS_RANGE)) {
		const char *msg = xdp_flow_match_ports_range(fr, rule);

		why = why ?: msg;
	}
	if (!why)
		why = xdp_flow_actions(fr, t, f->classid, rule, extack);
	return xdp_flow_rule_finish(rule, why, extack);
}

/**
 * xdp_flow_translate_other() - the rule XDP keeps for a prio of another
 *	classifier
 * @f: the request classifiers.c made for the prio (xdp_flow_other_offer())
 * @t: the device the rules are offered on
 * @rule: filled in; id and order are the caller's
 * @extack: where the reason goes
 *
 * XDP runs no matchall, u32 or bpf rule: it hands every frame that reaches
 * the prio in its chain to the stack (of any protocol: the classifier's
 * own protocol check is TC's to make, on the skb).
 *
 * Return: -EOPNOTSUPP, with @rule a software rule.
 */
int xdp_flow_translate_other(struct flow_cls_offload *f,
			     const struct xdp_flow_target *t,
			     struct xdp_flow_rule *rule,
			     struct netlink_ext_ack *extack)
{
	static const char * const why[] = {
		[TC_SETUP_CLSMATCHALL] =
			"xdp_flow: matchall rules stay in software: XDP hands the frames that reach their prio to the stack",
		[TC_SETUP_CLSU32] =
			"xdp_flow: u32 rules stay in software: XDP hands the frames that reach their prio to the stack",
		[TC_SETUP_CLSBPF] =
			"xdp_flow: bpf rules stay in software: XDP hands the frames that reach their prio to the stack",
	};
	u8 type = xdp_flow_other_cookie(f->cookie);
	const char *msg = type < ARRAY_SIZE(why) ? why[type] : NULL;

	xdp_flow_rule_reset(rule, f, f->common.chain_index);
	rule->key.ifindex = t->ifindex;
	rule->mask.ifindex = 0xffffffff;
	rule->key.chain = f->common.chain_index;
	rule->mask.chain = 0xffffffff;
	if (!msg)
		msg = "xdp_flow: this classifier's rules stay in software";
	return xdp_flow_rule_finish(rule, msg, extack);
}

