// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: a rule's actions as XDP actions, for TC rules and for the
 * flows a flowtable offers.
 *
 * One table, indexed by flow_action_id, says what the XDP program does
 * with each kind of action (struct xdp_flow_act): the operation that makes
 * the XDP action of a TC rule's action, the one that takes a flowtable
 * offer's action, and the refusals, beside the action they refuse: where
 * it cannot come (after a rewrite, a VLAN action or a mirror, at either
 * hook), and why the XDP program does not do it at all. What the
 * operations of one rule share (what came before, what a flowtable's
 * actions gather) is struct xdp_flow_act_state. xdp_flow_actions() and
 * xdp_flow_ft_actions() go through a rule's actions with it, and check the
 * whole at the end.
 *
 * It owns the table; it calls tunnel.c (the tunnel_key actions) and
 * netdev.c (whether a redirect's target takes XDP frames).
 */
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <net/flow_offload.h>
#include <net/net_namespace.h>
#include <uapi/linux/tc_act/tc_csum.h>

#include "xdp_flow.h"
#include "act_state.h"

/* --- TC rules: each operation makes the XDP action @s->xa --- */

static const char *xdp_flow_act_drop(const struct flow_action_entry *act,
				     struct xdp_flow_act_state *s)
{
	s->xa->id = XDP_FLOW_ACTION_DROP;
	s->done = true;
	return NULL;
}

static const char *xdp_flow_act_accept(const struct flow_action_entry *act,
				       struct xdp_flow_act_state *s)
{
	s->xa->id = XDP_FLOW_ACTION_PASS;
	s->done = true;
	return NULL;
}

/* The next chain classifies the frame as it is. */
static const char *xdp_flow_act_goto(const struct flow_action_entry *act,
				     struct xdp_flow_act_state *s)
{
	s->xa->id = XDP_FLOW_ACTION_GOTO;
	s->xa->chain = act->chain_index;
	s->done = true;
	return NULL;
}

static const char *xdp_flow_act_redirect(const struct flow_action_entry *act,
					 struct xdp_flow_act_state *s)
{
	const char *why;

	if (!act->dev || !net_eq(dev_net(act->dev), &init_net))
		return "xdp_flow: redirect target is in another netns";
	why = xdp_flow_tunnel_out(act->dev, s) ?: xdp_flow_unset_out(act->dev, s);
	if (why)
		return why;
	if (!s->t->tc_hook && !xdp_flow_can_xmit(act->dev))
		return "xdp_flow: redirect target takes no XDP frames";
	s->xa->id = XDP_FLOW_ACTION_REDIRECT;
	s->xa->ifindex = act->dev->ifindex;
	s->done = true;
	return NULL;
}

/*
 * mirred's other three: egress mirror, ingress redirect and ingress
 * mirror (the tc hook's). A mirror's copy of the frame as it is now goes
 * out of the target's transmit path (bpf_clone_redirect(), which takes
 * mirred's path: qdisc, egress filters and programs, netfilter's egress
 * hook), and the frame goes on to the next action. Ingress, the frame or
 * a copy enters the target's receive path where that is exact (the uapi
 * header's XDP_FLOW_INGRESS_NAME), and goes to TC elsewhere; the target
 * must be an Ethernet device.
 */
static const char *xdp_flow_act_mirred(const struct flow_action_entry *act,
				       struct xdp_flow_act_state *s)
{
	if (!act->dev || !net_eq(dev_net(act->dev), &init_net))
		return "xdp_flow: mirred target is in another netns";
	if (act->id != FLOW_ACTION_MIRRED && act->dev->type != ARPHRD_ETHER)
		return "xdp_flow: ingress target is not an Ethernet device";
	if (act->id != FLOW_ACTION_MIRRED && (s->tunnel || s->unset))
		return "xdp_flow: cannot offload mirred ingress after tunnel_key set or unset";
	if (act->id == FLOW_ACTION_MIRRED) {
		const char *why = xdp_flow_tunnel_out(act->dev, s) ?:
				  xdp_flow_unset_out(act->dev, s);

		if (why)
			return why;
	}
	s->xa->ifindex = act->dev->ifindex;
	switch (act->id) {
	case FLOW_ACTION_MIRRED:
		s->xa->id = XDP_FLOW_ACTION_MIRROR;
		s->mirror = true;
		break;
	case FLOW_ACTION_MIRRED_INGRESS:
		s->xa->id = XDP_FLOW_ACTION_MIRROR_INGRESS;
		s->mirror = true;
		break;
	default:
		s->xa->id = XDP_FLOW_ACTION_REDIRECT_INGRESS;
		s->done = true;
	}
	return NULL;
}

/* skbedit ptype: the packet type the frame has from here on. */
static const char *xdp_flow_act_ptype(const struct flow_action_entry *act,
				      struct xdp_flow_act_state *s)
{
	if (act->ptype > PACKET_OTHERHOST)
		return "xdp_flow: cannot offload skbedit ptype of this type";
	s->xa->id = XDP_FLOW_ACTION_PTYPE;
	s->xa->ptype = act->ptype;
	s->rewrites = true;
	return NULL;
}

/* The header bytes a pedit may rewrite: those that change neither the
 * frame's layout nor what the XDP program parsed to find it (lengths,
 * protocols, header sizes, the EtherType, a VLAN tag). Bit i of row h is
 * byte i of header h.
 */
static const u64 xdp_flow_pedit_bytes[__XDP_FLOW_HDR_MAX] = {
	[XDP_FLOW_HDR_ETH] = GENMASK_ULL(11, 0),	/* MAC addresses */
	[XDP_FLOW_HDR_IP4] = BIT_ULL(1) | BIT_ULL(8) |	/* tos, ttl */
			     GENMASK_ULL(19, 12),	/* addresses */
	[XDP_FLOW_HDR_TCP] = GENMASK_ULL(3, 0),		/* ports */
	[XDP_FLOW_HDR_UDP] = GENMASK_ULL(3, 0),		/* ports */
};

/* IPv6: traffic class and flow label (all but the version nibble of byte
 * 0), hop limit, addresses: bytes 0-3, 7, 8-39.
 */
static bool xdp_flow_pedit_ip6_ok(u32 off, const u8 *chg)
{
	unsigned int i;

	if (off == 0)
		return !(chg[0] & 0xf0);
	if (off == 4) {
		for (i = 0; i < 3; i++)
			if (chg[i])
				return false;
		return true;
	}
	return off >= 8 && off <= 36;
}

static const char *xdp_flow_mangle(const struct flow_action_entry *act,
				   struct xdp_flow_action *xa)
{
	u32 off = act->mangle.offset, changed;
	u8 chg[4];
	unsigned int i;
	int htype;

	switch (act->mangle.htype) {
	case FLOW_ACT_MANGLE_HDR_TYPE_ETH:
		htype = XDP_FLOW_HDR_ETH;
		break;
	case FLOW_ACT_MANGLE_HDR_TYPE_IP4:
		htype = XDP_FLOW_HDR_IP4;
		break;
	case FLOW_ACT_MANGLE_HDR_TYPE_IP6:
		htype = XDP_FLOW_HDR_IP6;
		break;
	case FLOW_ACT_MANGLE_HDR_TYPE_TCP:
		htype = XDP_FLOW_HDR_TCP;
		break;
	case FLOW_ACT_MANGLE_HDR_TYPE_UDP:
		htype = XDP_FLOW_HDR_UDP;
		break;
	default:
		return "xdp_flow: cannot offload pedit of this header type";
	}
	if (off % 4 || off > 60)
		return "xdp_flow: cannot offload pedit at this offset";

	/* TC pedit works on the word as loaded from the packet: which bytes
	 * change does not depend on the CPU's byte order this way.
	 */
	changed = ~act->mangle.mask;
	if (act->id == FLOW_ACTION_MANGLE)
		changed |= act->mangle.val;
	memcpy(chg, &changed, sizeof(chg));
	if (htype == XDP_FLOW_HDR_IP6) {
		if (!xdp_flow_pedit_ip6_ok(off, chg))
			return "xdp_flow: cannot offload pedit of this IPv6 field";
	} else {
		for (i = 0; i < 4; i++)
			if (chg[i] &&
			    !(xdp_flow_pedit_bytes[htype] & BIT_ULL(off + i)))
				return "xdp_flow: cannot offload pedit of this field";
	}

	xa->id = act->id == FLOW_ACTION_MANGLE ? XDP_FLOW_ACTION_MANGLE :
						  XDP_FLOW_ACTION_ADD;
	xa->mangle.htype = htype;
	xa->mangle.offset = off;
	xa->mangle.mask = act->mangle.mask;
	xa->mangle.val = act->mangle.val;
	return NULL;
}

/* pedit (set and add) */
static const char *xdp_flow_act_pedit(const struct flow_action_entry *act,
				      struct xdp_flow_act_state *s)
{
	s->rewrites = true;
	return xdp_flow_mangle(act, s->xa);
}

#define XDP_FLOW_CSUM_TC (TCA_CSUM_UPDATE_FLAG_IPV4HDR |		\
			  TCA_CSUM_UPDATE_FLAG_ICMP |			\
			  TCA_CSUM_UPDATE_FLAG_TCP | TCA_CSUM_UPDATE_FLAG_UDP)

static const char *xdp_flow_csum(const struct flow_action_entry *act,
				 struct xdp_flow_action *xa)
{
	u32 f = act->csum_flags;

	if (f & ~XDP_FLOW_CSUM_TC)
		return "xdp_flow: cannot offload csum of igmp, udplite or sctp";
	xa->id = XDP_FLOW_ACTION_CSUM;
	if (f & TCA_CSUM_UPDATE_FLAG_IPV4HDR)
		xa->csum_flags |= XDP_FLOW_CSUM_IPV4HDR;
	if (f & TCA_CSUM_UPDATE_FLAG_ICMP)
		xa->csum_flags |= XDP_FLOW_CSUM_ICMP;
	if (f & TCA_CSUM_UPDATE_FLAG_TCP)
		xa->csum_flags |= XDP_FLOW_CSUM_TCP;
	if (f & TCA_CSUM_UPDATE_FLAG_UDP)
		xa->csum_flags |= XDP_FLOW_CSUM_UDP;
	return NULL;
}

static const char *xdp_flow_act_csum(const struct flow_action_entry *act,
				     struct xdp_flow_act_state *s)
{
	s->rewrites = true;
	return xdp_flow_csum(act, s->xa);
}

/* VLAN push and modify. The offload request carries a priority of 0 both
 * for "priority 0" and for no priority, where modify keeps the frame's:
 * exact only when the rule's match pins the priority to 0.
 */
static const char *xdp_flow_vlan(const struct flow_action_entry *act,
				 const struct xdp_flow_rule *rule,
				 struct xdp_flow_action *xa)
{
	u16 prio_mask = VLAN_PRIO_MASK;

	if (act->vlan.proto != htons(ETH_P_8021Q) &&
	    act->vlan.proto != htons(ETH_P_8021AD))
		return "xdp_flow: cannot offload vlan with this protocol";
	xa->vlan.proto = act->vlan.proto;
	xa->vlan.tci = act->vlan.vid | (act->vlan.prio << VLAN_PRIO_SHIFT);
	if (act->id == FLOW_ACTION_VLAN_PUSH) {
		xa->id = XDP_FLOW_ACTION_VLAN_PUSH;
		return NULL;
	}
	if (!act->vlan.prio &&
	    ((ntohs(rule->mask.vlan_tci) & prio_mask) != prio_mask ||
	     (ntohs(rule->key.vlan_tci) & prio_mask)))
		return "xdp_flow: cannot offload vlan modify without a priority";
	xa->id = XDP_FLOW_ACTION_VLAN_MODIFY;
	xa->vlan.keep = VLAN_CFI_MASK;	/* DEI */
	return NULL;
}

static const char *xdp_flow_act_vlan(const struct flow_action_entry *act,
				     struct xdp_flow_act_state *s)
{
	s->rewrites = true;
	s->vlan = true;
	return xdp_flow_vlan(act, s->rule, s->xa);
}

static const char *xdp_flow_act_vlan_pop(const struct flow_action_entry *act,
					 struct xdp_flow_act_state *s)
{
	s->xa->id = XDP_FLOW_ACTION_VLAN_POP;
	s->rewrites = true;
	s->vlan = true;
	return NULL;
}

/* --- flowtable offers: each operation gathers into @s --- */

/* Applies one 32-bit pedit word to @buf (@len bytes) at @off: the bits of
 * @mask are kept, the others take @val's; @set gets a bit per byte written.
 */
static const char *xdp_flow_ft_word(u8 *buf, unsigned int len, u32 off,
				    u32 mask, u32 val, unsigned int *set)
{
	u8 m[4], v[4];
	int i;

	if (off > len - 4)
		return "xdp_flow: flowtable rewrite out of its header";
	memcpy(m, &mask, 4);
	memcpy(v, &val, 4);
	for (i = 0; i < 4; i++) {
		if (m[i] == 0xff)
			continue;
		if (m[i])
			return "xdp_flow: flowtable rewrite of part of a byte";
		buf[off + i] = v[i];
		*set |= 1u << (off + i);
	}
	return NULL;
}

static const char *xdp_flow_ft_mangle(const struct flow_action_entry *act,
				      struct xdp_flow_ft_edit *e)
{
	unsigned int set = 0, side;
	u32 off = act->mangle.offset;
	const char *why;

	switch (act->mangle.htype) {
	case FLOW_ACT_MANGLE_HDR_TYPE_ETH:
		why = xdp_flow_ft_word(e->eth, sizeof(e->eth), off,
				       act->mangle.mask, act->mangle.val, &set);
		e->eth_set |= set;
		return why;
	case FLOW_ACT_MANGLE_HDR_TYPE_TCP:
	case FLOW_ACT_MANGLE_HDR_TYPE_UDP:
		why = xdp_flow_ft_word(e->l4, sizeof(e->l4), off,
				       act->mangle.mask, act->mangle.val, &set);
		e->l4_set |= set;
		return why;
	case FLOW_ACT_MANGLE_HDR_TYPE_IP4:
		if ((off != offsetof(struct iphdr, saddr) &&
		     off != offsetof(struct iphdr, daddr)) || act->mangle.mask)
			return "xdp_flow: flowtable rewrite of another IPv4 field than an address";
		side = off == offsetof(struct iphdr, daddr);
		e->addr[side][0] = (__force __be32)act->mangle.val;
		e->addr_set[side] |= 1;
		break;
	case FLOW_ACT_MANGLE_HDR_TYPE_IP6:
		if (off < offsetof(struct ipv6hdr, saddr) || off % 4 ||
		    off >= offsetof(struct ipv6hdr, daddr) + 16 ||
		    act->mangle.mask)
			return "xdp_flow: flowtable rewrite of another IPv6 field than an address";
		side = off >= offsetof(struct ipv6hdr, daddr);
		off = (off - offsetof(struct ipv6hdr, saddr)) % 16 / 4;
		e->addr[side][off] = (__force __be32)act->mangle.val;
		e->addr_set[side] |= 1u << off;
		break;
	default:
		return "xdp_flow: flowtable rewrite of an unknown header";
	}
	if (e->first < 0)
		e->first = side;
	return NULL;
}

static const char *xdp_flow_ft_act_pedit(const struct flow_action_entry *act,
					 struct xdp_flow_act_state *s)
{
	return xdp_flow_ft_mangle(act, &s->edit);
}

/* What the NAT actions do incrementally, as the software path. */
static const char *xdp_flow_ft_act_csum(const struct flow_action_entry *act,
					struct xdp_flow_act_state *s)
{
	return NULL;
}

/* VLAN pops, VLAN pushes and PPPoE pushes: pops first, one encapsulation. */
static const char *xdp_flow_ft_act_encap(const struct flow_action_entry *act,
					 struct xdp_flow_act_state *s)
{
	const char *why = NULL;

	if (s->nvlan == ARRAY_SIZE(s->vlans) - 1)
		return "xdp_flow: too many VLAN actions in a flowtable flow";
	if (act->id == FLOW_ACTION_VLAN_POP) {
		if (s->npop != s->nvlan)
			return "xdp_flow: flowtable VLAN pop after a push";
		s->vlans[s->nvlan].id = XDP_FLOW_ACTION_VLAN_POP;
		s->npop++;
	} else if (s->nvlan > s->npop) {
		return "xdp_flow: flowtable flow in two encapsulations";
	} else if (act->id == FLOW_ACTION_PPPOE_PUSH) {
		if (s->t->tc_hook)
			return "xdp_flow: PPPoE flowtable flows need the XDP hook";
		s->vlans[s->nvlan].id = XDP_FLOW_ACTION_PPPOE_PUSH;
		s->vlans[s->nvlan].pppoe_sid = htons(act->pppoe.sid);
	} else {
		why = xdp_flow_vlan(act, s->rule, &s->vlans[s->nvlan]);
	}
	s->nvlan++;
	return why;
}

static const char *xdp_flow_ft_act_redirect(const struct flow_action_entry *act,
					    struct xdp_flow_act_state *s)
{
	if (s->out)
		return "xdp_flow: cannot offload a flowtable flow with two outputs";
	s->out = act->dev;
	return NULL;
}

/* The NAT actions of one side: its port, then its address, as
 * nf_flow_nat_ip() and nf_flow_nat_ipv6() do them.
 */
static const char *xdp_flow_ft_nat(const struct xdp_flow_ft_edit *e,
				   int side, bool v6, struct xdp_flow_rule *r)
{
	u8 port_bytes = side ? 0xc : 0x3;
	struct xdp_flow_action *xa;

	if ((e->l4_set & port_bytes) && (e->l4_set & port_bytes) != port_bytes)
		return "xdp_flow: flowtable rewrite of part of a port";
	if (!e->addr_set[side] && !(e->l4_set & port_bytes))
		return NULL;
	if (e->addr_set[side] != (v6 ? 0xf : 0x1))
		return "xdp_flow: flowtable rewrite of part of an address";
	if (r->nr_actions + 2 > XDP_FLOW_MAX_ACTIONS - 1)
		return "xdp_flow: cannot offload a flowtable flow of this many rewrites";
	if (e->l4_set & port_bytes) {
		xa = &r->actions[r->nr_actions++];
		xa->id = XDP_FLOW_ACTION_FT_PORTS;
		xa->ft_ports.which = side ? XDP_FLOW_FT_DPORT : XDP_FLOW_FT_SPORT;
		memcpy(side ? &xa->ft_ports.dst : &xa->ft_ports.src,
		       e->l4 + (side ? 2 : 0), 2);
	}
	xa = &r->actions[r->nr_actions++];
	xa->id = side ? XDP_FLOW_ACTION_FT_DST_ADDR : XDP_FLOW_ACTION_FT_SRC_ADDR;
	memcpy(xa->ft_addr, e->addr[side], sizeof(xa->ft_addr));
	return NULL;
}

/* --- the table --- */

/**
 * struct xdp_flow_act - what the XDP program does with one kind of action
 * @tc: makes the XDP action of a TC rule's action; NULL: refused (@msg)
 * @ft: takes a flowtable offer's action; NULL: refused (@ft_msg, @msg)
 * @at_tc_hook: TC: why it is refused at the tc hook
 * @at_xdp_hook: TC: why it is refused at the XDP hook
 * @after_vlan: TC: why it is refused after a VLAN action
 * @after_mirror: TC: why it is refused after a mirror
 * @after_rewrite: TC: why it is refused after a rewrite, unless a mirror
 *	came before it (the frame then ends where TC's would, with its
 *	rewrites, and the rewrites may have made a copy)
 * @msg: why it is refused where it has no operation
 * @ft_msg: a flowtable offer's: why it is refused, when not @msg
 */
struct xdp_flow_act {
	const char *(*tc)(const struct flow_action_entry *act,
			  struct xdp_flow_act_state *s);
	const char *(*ft)(const struct flow_action_entry *act,
			  struct xdp_flow_act_state *s);
	const char *at_tc_hook;
	const char *at_xdp_hook;
	const char *after_vlan;
	const char *after_mirror;
	const char *after_rewrite;
	const char *msg;
	const char *ft_msg;
};

static const struct xdp_flow_act xdp_flow_act_table[NUM_FLOW_ACTIONS] = {
	[FLOW_ACTION_DROP] = {
		.tc = xdp_flow_act_drop,
		/* Offloaded counters update every action of a rule alike:
		 * the mirror's drops would be the gact's.
		 */
		.after_mirror = "xdp_flow: cannot offload a drop after a mirror (its counters)",
		.after_rewrite = "xdp_flow: cannot offload rewrites before drop",
	},
	[FLOW_ACTION_ACCEPT] = {
		.tc = xdp_flow_act_accept,
		.after_rewrite = "xdp_flow: cannot offload rewrites that end in pass",
	},
	[FLOW_ACTION_GOTO] = {
		.tc = xdp_flow_act_goto,
		.after_mirror = "xdp_flow: cannot offload mirror before goto chain",
		.after_rewrite = "xdp_flow: cannot offload rewrites before goto chain",
	},
	[FLOW_ACTION_REDIRECT] = {
		.tc = xdp_flow_act_redirect,
		.ft = xdp_flow_ft_act_redirect,
	},
	[FLOW_ACTION_MANGLE] = {
		.tc = xdp_flow_act_pedit,
		.ft = xdp_flow_ft_act_pedit,
		.at_tc_hook = "xdp_flow: the tc hook does not offload pedit",
		.after_vlan = "xdp_flow: cannot offload pedit after a vlan action",
	},
	[FLOW_ACTION_ADD] = {
		.tc = xdp_flow_act_pedit,
		.at_tc_hook = "xdp_flow: the tc hook does not offload pedit",
		.after_vlan = "xdp_flow: cannot offload pedit after a vlan action",
	},
	[FLOW_ACTION_CSUM] = {
		.tc = xdp_flow_act_csum,
		.ft = xdp_flow_ft_act_csum,
		.at_tc_hook = "xdp_flow: the tc hook does not offload csum",
		.after_vlan = "xdp_flow: cannot offload csum after a vlan action",
	},
	[FLOW_ACTION_VLAN_PUSH] = {
		.tc = xdp_flow_act_vlan,
		.ft = xdp_flow_ft_act_encap,
	},
	[FLOW_ACTION_VLAN_MANGLE] = {
		.tc = xdp_flow_act_vlan,
	},
	[FLOW_ACTION_VLAN_POP] = {
		.tc = xdp_flow_act_vlan_pop,
		.ft = xdp_flow_ft_act_encap,
	},
	[FLOW_ACTION_PPPOE_PUSH] = {
		.ft = xdp_flow_ft_act_encap,
	},
	[FLOW_ACTION_MIRRED] = {
		.tc = xdp_flow_act_mirred,
		.at_xdp_hook = "xdp_flow: the XDP hook does not offload mirror (hook tc does)",
	},
	[FLOW_ACTION_REDIRECT_INGRESS] = {
		.tc = xdp_flow_act_mirred,
		.at_xdp_hook = "xdp_flow: the XDP hook does not offload mirred ingress (tc does)",
	},
	[FLOW_ACTION_MIRRED_INGRESS] = {
		.tc = xdp_flow_act_mirred,
		.at_xdp_hook = "xdp_flow: the XDP hook does not offload mirred ingress (tc does)",
	},
	[FLOW_ACTION_POLICE] = {
		.msg = "xdp_flow: cannot offload action police",
	},
	[FLOW_ACTION_CT] = {
		.msg = "xdp_flow: cannot offload action ct",
	},
	[FLOW_ACTION_CT_METADATA] = {
		.msg = "xdp_flow: cannot offload action ct",
	},
	[FLOW_ACTION_TUNNEL_ENCAP] = {
		.tc = xdp_flow_act_tunnel_set,
		.at_xdp_hook = "xdp_flow: the XDP hook does not offload tunnel_key set (tc does)",
		.ft_msg = "xdp_flow: cannot offload tunnels of flowtable flows",
	},
	[FLOW_ACTION_TUNNEL_DECAP] = {
		.tc = xdp_flow_act_tunnel_unset,
		.at_xdp_hook = "xdp_flow: the XDP hook does not offload tunnel_key unset (tc does)",
		.ft_msg = "xdp_flow: cannot offload tunnels of flowtable flows",
	},
	[FLOW_ACTION_VLAN_PUSH_ETH] = {
		.msg = "xdp_flow: cannot offload action vlan push_eth or pop_eth",
	},
	[FLOW_ACTION_VLAN_POP_ETH] = {
		.msg = "xdp_flow: cannot offload action vlan push_eth or pop_eth",
	},
	[FLOW_ACTION_TRAP] = {
		.msg = "xdp_flow: cannot offload action trap",
	},
	[FLOW_ACTION_SAMPLE] = {
		.msg = "xdp_flow: cannot offload action sample",
	},
	[FLOW_ACTION_MARK] = {
		.msg = "xdp_flow: cannot offload action skbedit mark",
	},
	[FLOW_ACTION_PTYPE] = {
		.tc = xdp_flow_act_ptype,
		.at_xdp_hook = "xdp_flow: the XDP hook does not offload skbedit ptype (tc does)",
	},
	[FLOW_ACTION_PRIORITY] = {
		.msg = "xdp_flow: cannot offload action skbedit priority",
	},
};

static const struct xdp_flow_act *xdp_flow_act_get(enum flow_action_id id)
{
	if ((unsigned int)id >= ARRAY_SIZE(xdp_flow_act_table))
		return NULL;
	return &xdp_flow_act_table[id];
}

/* Why an action (@a, NULL: unknown) without an operation is refused. */
static const char *xdp_flow_act_refused(const struct xdp_flow_act *a, bool ft)
{
	if (a && ft && a->ft_msg)
		return a->ft_msg;
	if (a && a->msg)
		return a->msg;
	return "xdp_flow: cannot offload this action";
}

/**
 * xdp_flow_actions() - the XDP actions of a TC rule
 * @fr: the rule
 * @t: the device it is offered on
 * @classid: the rule's classid (flower's classid or hw_tc), 0 for none
 * @rule: gets the actions; its key and mask are made
 * @extack: for the hw_stats check's message
 *
 * Actions the XDP program executes: rewrites (pedit, csum, then VLAN), then
 * one of drop, pass, goto chain and redirect. Rewrites go only before a
 * redirect: a rewritten frame passed to the stack would meet TC again.
 * At the tc hook, mirrors may come among the rewrites, and a rule with a
 * mirror may also end in pass or without a terminal action (TC then hands
 * the frame to the stack, as pass does: the rule gets a PASS): the tc hook
 * hands it on past TC's filters, which do not see it again. Not in drop:
 * TC would count the drops on the drop action alone, and offloaded
 * counters update every action of a rule alike. At the tc hook too,
 * tunnel_key set may come among the rewrites of a rule that ends in a
 * redirect, its outputs VXLAN or Geneve devices (xdp_flow_tunnel_out()),
 * and tunnel_key unset among those of a rule that ends in a redirect, its
 * outputs veths (xdp_flow_unset_out()).
 *
 * Return: NULL, or why the actions cannot be offloaded.
 */
const char *xdp_flow_actions(struct flow_rule *fr,
			     const struct xdp_flow_target *t, u32 classid,
			     struct xdp_flow_rule *rule,
			     struct netlink_ext_ack *extack)
{
	struct xdp_flow_act_state s = { .t = t, .rule = rule };
	const struct xdp_flow_act *a;
	struct flow_action_entry *act;
	const char *why;
	int i, n;

	if (!flow_action_has_entries(&fr->action))
		return "xdp_flow: cannot offload a rule without actions";
	if (fr->action.num_entries > XDP_FLOW_MAX_ACTIONS)
		return "xdp_flow: cannot offload more than 8 actions (pedit keys count one each)";
	if (!flow_action_hw_stats_check(&fr->action, extack,
					FLOW_ACTION_HW_STATS_DELAYED_BIT))
		return "xdp_flow: cannot offload the requested hw_stats type";

	n = 0;
	flow_action_for_each(i, act, &fr->action) {
		if (s.done)
			return "xdp_flow: cannot offload actions after a terminal action";
		a = xdp_flow_act_get(act->id);
		if (!a || !a->tc)
			return xdp_flow_act_refused(a, false);
		if (t->tc_hook && a->at_tc_hook)
			return a->at_tc_hook;
		if (!t->tc_hook && a->at_xdp_hook)
			return a->at_xdp_hook;
		if (s.vlan && a->after_vlan)
			return a->after_vlan;
		if (s.mirror && a->after_mirror)
			return a->after_mirror;
		if (s.rewrites && !s.mirror && a->after_rewrite)
			return a->after_rewrite;
		if (n == XDP_FLOW_MAX_ACTIONS)
			return XDP_FLOW_OPTS_ROOM;
		s.xa = &rule->actions[n];
		s.room = XDP_FLOW_MAX_ACTIONS - n - 1;
		s.extra = 0;
		why = a->tc(act, &s);
		if (why)
			return why;
		n += 1 + s.extra;
	}
	rule->nr_actions = n;
	if (s.tunnel &&
	    rule->actions[rule->nr_actions - 1].id != XDP_FLOW_ACTION_REDIRECT)
		return "xdp_flow: cannot offload tunnel_key set that does not end in a redirect";
	if (!s.done && !s.mirror)
		return "xdp_flow: cannot offload rewrites that end in pass";
	if (!s.done) {
		/* TC's pipe past the last action: the frame goes to the
		 * stack, as after a pass.
		 */
		if (rule->nr_actions == XDP_FLOW_MAX_ACTIONS)
			return "xdp_flow: cannot offload more than 7 actions that end in a mirror";
		rule->actions[rule->nr_actions++].id = XDP_FLOW_ACTION_PASS;
	}
	if (s.unset &&
	    rule->actions[rule->nr_actions - 1].id != XDP_FLOW_ACTION_REDIRECT)
		return "xdp_flow: cannot offload tunnel_key unset that does not end in a redirect";
	/* After a mirror, the tc hook hands the frame to the stack past
	 * TC's filters; TC would set tc_index from the rule's classid.
	 */
	if (s.mirror && classid &&
	    rule->actions[rule->nr_actions - 1].id == XDP_FLOW_ACTION_PASS)
		return "xdp_flow: cannot offload a mirror that ends in pass with a classid";
	return NULL;
}

/**
 * xdp_flow_ft_actions() - the XDP actions of a flowtable's offer
 * @fr: the offer
 * @t: the device it is offered on
 * @flow: what the offer leaves out
 * @v6: the flow is one of IPv6
 * @r: gets the actions
 *
 * The actions of a flowtable's offer: FT_ROUTE (with the MTU of the
 * flow's route and the Ethernet addresses the offer sets), the NAT
 * rewrites, the VLAN pops, the PPPoE pop the offer leaves out (@flow's
 * frames arrive in a PPPoE session), the PPPoE and VLAN pushes in the
 * offer's order (inner first), the redirect. The offer's csum entry is
 * what the NAT actions do incrementally, as the software path.
 *
 * Return: NULL, or why the flow cannot be offloaded.
 */
const char *xdp_flow_ft_actions(struct flow_rule *fr,
				const struct xdp_flow_target *t,
				const struct xdp_flow_ft_flow *flow,
				bool v6, struct xdp_flow_rule *r)
{
	struct xdp_flow_act_state s = {
		.t = t,
		.rule = r,
		.edit = { .first = -1 },
	};
	struct xdp_flow_action *route = &r->actions[0];
	const struct xdp_flow_act *a;
	struct flow_action_entry *act;
	const char *why;
	unsigned int i;
	int k;

	flow_action_for_each(k, act, &fr->action) {
		a = xdp_flow_act_get(act->id);
		if (!a || !a->ft)
			return xdp_flow_act_refused(a, true);
		why = a->ft(act, &s);
		if (why)
			return why;
	}
	if (!s.out || !net_eq(dev_net(s.out), &init_net))
		return "xdp_flow: flowtable flow without an output in the initial netns";
	if (!t->tc_hook && !xdp_flow_can_xmit(s.out))
		return "xdp_flow: redirect target takes no XDP frames";
	if (s.edit.eth_set != 0xfff)
		return "xdp_flow: flowtable flow without both Ethernet addresses";
	if (!flow->mtu)
		return "xdp_flow: flowtable flow without an MTU";
	if (flow->pppoe) {
		if (t->tc_hook)
			return "xdp_flow: PPPoE flowtable flows need the XDP hook";
		memmove(&s.vlans[s.npop + 1], &s.vlans[s.npop],
			(s.nvlan - s.npop) * sizeof(s.vlans[0]));
		memset(&s.vlans[s.npop], 0, sizeof(s.vlans[0]));
		s.vlans[s.npop].id = XDP_FLOW_ACTION_PPPOE_POP;
		s.nvlan++;
	}

	route->id = XDP_FLOW_ACTION_FT_ROUTE;
	route->ft_route.mtu = flow->mtu;
	memcpy(route->ft_route.eth_dst, s.edit.eth, ETH_ALEN);
	memcpy(route->ft_route.eth_src, s.edit.eth + ETH_ALEN, ETH_ALEN);
	r->nr_actions = 1;
	why = xdp_flow_ft_nat(&s.edit, s.edit.first == 1 ? 1 : 0, v6, r);
	why = why ?: xdp_flow_ft_nat(&s.edit, s.edit.first == 1 ? 0 : 1, v6, r);
	if (why)
		return why;
	if (r->nr_actions + s.nvlan + 1 > XDP_FLOW_MAX_ACTIONS)
		return "xdp_flow: cannot offload a flowtable flow of this many rewrites";
	for (i = 0; i < s.nvlan; i++)
		r->actions[r->nr_actions++] = s.vlans[i];
	r->actions[r->nr_actions].id = XDP_FLOW_ACTION_REDIRECT;
	r->actions[r->nr_actions].ifindex = s.out->ifindex;
	r->nr_actions++;
	return NULL;
}
