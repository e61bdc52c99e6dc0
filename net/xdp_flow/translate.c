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
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/ppp_defs.h>
#include <linux/rtnetlink.h>
#include <linux/tcp.h>
#include <net/flow_offload.h>
#include <net/net_namespace.h>
#include <net/pkt_cls.h>
#include <uapi/linux/tc_act/tc_csum.h>

#include "xdp_flow.h"

#define XDP_FLOW_KEYS (BIT_ULL(FLOW_DISSECTOR_KEY_CONTROL) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_BASIC) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_ETH_ADDRS) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_VLAN) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_CVLAN) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_IPV4_ADDRS) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_IPV6_ADDRS) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_PORTS) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_PORTS_RANGE) |	\
		       BIT_ULL(FLOW_DISSECTOR_KEY_IP) |			\
		       BIT_ULL(FLOW_DISSECTOR_KEY_TCP) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_ICMP) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_ARP) |		\
		       BIT_ULL(FLOW_DISSECTOR_KEY_META))

static const char * const xdp_flow_key_msgs[FLOW_DISSECTOR_KEY_MAX] = {
	[FLOW_DISSECTOR_KEY_MPLS] = "xdp_flow: cannot offload MPLS matches",
	[FLOW_DISSECTOR_KEY_CT] = "xdp_flow: cannot offload conntrack (ct_*) matches",
	[FLOW_DISSECTOR_KEY_ENC_KEYID] = "xdp_flow: cannot offload tunnel (enc_*) matches",
	[FLOW_DISSECTOR_KEY_ENC_IPV4_ADDRS] = "xdp_flow: cannot offload tunnel (enc_*) matches",
	[FLOW_DISSECTOR_KEY_ENC_IPV6_ADDRS] = "xdp_flow: cannot offload tunnel (enc_*) matches",
	[FLOW_DISSECTOR_KEY_ENC_CONTROL] = "xdp_flow: cannot offload tunnel (enc_*) matches",
	[FLOW_DISSECTOR_KEY_ENC_PORTS] = "xdp_flow: cannot offload tunnel (enc_*) matches",
	[FLOW_DISSECTOR_KEY_ENC_IP] = "xdp_flow: cannot offload tunnel (enc_*) matches",
	[FLOW_DISSECTOR_KEY_ENC_OPTS] = "xdp_flow: cannot offload tunnel (enc_*) matches",
	[FLOW_DISSECTOR_KEY_HASH] = "xdp_flow: cannot offload hash matches",
};

static const char *xdp_flow_action_msg(enum flow_action_id id)
{
	switch (id) {
	case FLOW_ACTION_MIRRED:
		return "xdp_flow: cannot offload action mirred egress mirror";
	case FLOW_ACTION_REDIRECT_INGRESS:
		return "xdp_flow: cannot offload action mirred ingress redirect";
	case FLOW_ACTION_MIRRED_INGRESS:
		return "xdp_flow: cannot offload action mirred ingress mirror";
	case FLOW_ACTION_POLICE:
		return "xdp_flow: cannot offload action police";
	case FLOW_ACTION_CT:
	case FLOW_ACTION_CT_METADATA:
		return "xdp_flow: cannot offload action ct";
	case FLOW_ACTION_TUNNEL_ENCAP:
	case FLOW_ACTION_TUNNEL_DECAP:
		return "xdp_flow: cannot offload action tunnel_key";
	case FLOW_ACTION_VLAN_PUSH_ETH:
	case FLOW_ACTION_VLAN_POP_ETH:
		return "xdp_flow: cannot offload action vlan push_eth or pop_eth";
	case FLOW_ACTION_TRAP:
		return "xdp_flow: cannot offload action trap";
	case FLOW_ACTION_SAMPLE:
		return "xdp_flow: cannot offload action sample";
	case FLOW_ACTION_MARK:
		return "xdp_flow: cannot offload action skbedit mark";
	default:
		return "xdp_flow: cannot offload this action";
	}
}

static void xdp_flow_set_msg(struct netlink_ext_ack *extack, const char *msg)
{
	if (extack && !extack->_msg)
		extack->_msg = msg;
}

static bool xdp_flow_is_vlan_proto(__be16 proto)
{
	return proto == htons(ETH_P_8021Q) || proto == htons(ETH_P_8021AD);
}

/* TC runs a filter only if the packet's protocol, the outer VLAN TPID for a
 * tagged packet, equals the filter's protocol. The stack pops the outer tag
 * into skb metadata before TC, so a "protocol ip" filter sees untagged IPv4.
 */
static void xdp_flow_match_protocol(__be16 proto, struct xdp_flow_key *k,
				    struct xdp_flow_key *m)
{
	if (proto == htons(ETH_P_ALL))
		return;
	m->vlan_tpid = htons(0xffff);
	if (xdp_flow_is_vlan_proto(proto)) {
		k->vlan_tpid = proto;
	} else {
		k->vlan_tpid = 0;
		k->n_proto = proto;
		m->n_proto = htons(0xffff);
	}
}

/* nftables' protocol (meta protocol, the dependency of its network header
 * matches) is skb->protocol, which the stack reads after taking the outer
 * VLAN tag off: the EtherType after at most one tag. 0 is any protocol.
 * Which of meta protocol and ether type a VLAN TPID came from, the rule no
 * longer tells, and they differ for tagged frames: refused.
 */
static const char *xdp_flow_match_nft_protocol(struct flow_rule *fr,
					       __be16 proto,
					       struct xdp_flow_key *k,
					       struct xdp_flow_key *m)
{
	if (fr->match.dissector->used_keys &
	    (BIT_ULL(FLOW_DISSECTOR_KEY_VLAN) | BIT_ULL(FLOW_DISSECTOR_KEY_CVLAN)) ||
	    xdp_flow_is_vlan_proto(proto))
		return "xdp_flow: cannot offload nftables VLAN matches";
	if (!proto || proto == htons(ETH_P_ALL))
		return NULL;
	k->n_proto = proto;
	m->n_proto = htons(0xffff);
	k->cvlan_tpid = 0;
	m->cvlan_tpid = htons(0xffff);
	return NULL;
}

static const char *xdp_flow_match_basic(struct flow_rule *fr,
					struct xdp_flow_key *k,
					struct xdp_flow_key *m)
{
	struct flow_match_basic match;

	flow_rule_match_basic(fr, &match);
	if (match.mask->n_proto) {
		k->n_proto = match.key->n_proto;
		m->n_proto = match.mask->n_proto;
	}
	k->ip_proto = match.key->ip_proto;
	m->ip_proto = match.mask->ip_proto;
	return NULL;
}

/* ip_flags frag and firstfrag. Like flower's dissector, the XDP program
 * reads no L4 header from any IPv4 fragment, the first one included, and
 * leaves IPv6 fragments (an extension header) to the stack.
 */
static const char *xdp_flow_match_control(struct flow_rule *fr,
					  struct xdp_flow_key *k,
					  struct xdp_flow_key *m)
{
	struct flow_match_control match;
	u32 key, mask;

	flow_rule_match_control(fr, &match);
	key = match.key->flags;
	mask = match.mask->flags;
	if (mask & ~(FLOW_DIS_IS_FRAGMENT | FLOW_DIS_FIRST_FRAG))
		return "xdp_flow: cannot offload ip_flags other than frag and firstfrag";
	if (mask & FLOW_DIS_IS_FRAGMENT) {
		m->ip_frag |= XDP_FLOW_FRAG_IS;
		if (key & FLOW_DIS_IS_FRAGMENT)
			k->ip_frag |= XDP_FLOW_FRAG_IS;
	}
	if (mask & FLOW_DIS_FIRST_FRAG) {
		m->ip_frag |= XDP_FLOW_FRAG_FIRST;
		if (key & FLOW_DIS_FIRST_FRAG)
			k->ip_frag |= XDP_FLOW_FRAG_FIRST;
	}
	return NULL;
}

/* ip_tos and ip_ttl: IPv4 TOS and TTL, IPv6 traffic class and hop limit. */
static void xdp_flow_match_ip(struct flow_rule *fr, struct xdp_flow_key *k,
			      struct xdp_flow_key *m)
{
	struct flow_match_ip match;

	flow_rule_match_ip(fr, &match);
	k->ip_tos = match.key->tos;
	m->ip_tos = match.mask->tos;
	k->ip_ttl = match.key->ttl;
	m->ip_ttl = match.mask->ttl;
}

/* Flower takes tcp_flags only with ip_proto tcp; the XDP program reads them
 * from TCP headers whose data offset is sane, and leaves the rest to the
 * stack (where the dissector reads no flags from them).
 */
static void xdp_flow_match_tcp(struct flow_rule *fr, struct xdp_flow_key *k,
			       struct xdp_flow_key *m)
{
	struct flow_match_tcp match;

	flow_rule_match_tcp(fr, &match);
	k->tcp_flags = match.key->flags;
	m->tcp_flags = match.mask->flags;
}

/* ICMP and ICMPv6 type and code share the port fields of the key: flower
 * takes them only with ip_proto icmp or icmpv6, and ports only with tcp,
 * udp or sctp, so the two never meet in one rule.
 */
static const char *xdp_flow_match_icmp(struct flow_rule *fr,
				       struct xdp_flow_key *k,
				       struct xdp_flow_key *m)
{
	struct flow_match_icmp match;

	flow_rule_match_icmp(fr, &match);
	if (!match.mask->type && !match.mask->code)
		return NULL;
	if (m->ip_proto != 0xff ||
	    (k->ip_proto != IPPROTO_ICMP && k->ip_proto != IPPROTO_ICMPV6))
		return "xdp_flow: ICMP type/code are offloaded only with ip_proto icmp or icmpv6";
	k->l4_src = htons(match.key->type);
	m->l4_src = htons(match.mask->type);
	k->l4_dst = htons(match.key->code);
	m->l4_dst = htons(match.mask->code);
	return NULL;
}

/* ARP for Ethernet and IPv4: the opcode takes the IP protocol's place, the
 * sender and target IPv4 addresses the source and destination addresses.
 */
static void xdp_flow_match_arp(struct flow_rule *fr, struct xdp_flow_key *k,
			       struct xdp_flow_key *m)
{
	struct flow_dissector *d = fr->match.dissector;
	const struct flow_dissector_key_arp *key, *mask;

	/* 6.1 has no flow_rule_match_arp() */
	key = skb_flow_dissector_target(d, FLOW_DISSECTOR_KEY_ARP,
					fr->match.key);
	mask = skb_flow_dissector_target(d, FLOW_DISSECTOR_KEY_ARP,
					 fr->match.mask);
	k->ip_proto = key->op;
	m->ip_proto = mask->op;
	/* The dissector stores the addresses as they are on the wire, in
	 * fields it declares as plain u32.
	 */
	k->ip_src[0] = (__force __be32)key->sip;
	m->ip_src[0] = (__force __be32)mask->sip;
	k->ip_dst[0] = (__force __be32)key->tip;
	m->ip_dst[0] = (__force __be32)mask->tip;
	/* sha and tha are not 16-bit aligned there: no ether_addr_copy() */
	memcpy(k->arp_sha, key->sha, ETH_ALEN);
	memcpy(m->arp_sha, mask->sha, ETH_ALEN);
	memcpy(k->arp_tha, key->tha, ETH_ALEN);
	memcpy(m->arp_tha, mask->tha, ETH_ALEN);
}

/*
 * One VLAN tag of flower's key: @tpid and @tci are the XDP key's fields of
 * that tag, @next the field holding what follows it (the inner tag's TPID
 * for the outer tag, the EtherType for the inner one). Flower matches
 * vlan_ethtype against the protocol right after the tag: for the outer
 * tag of a double-tagged frame that is the inner TPID, not the EtherType.
 */
static const char *xdp_flow_match_tag(const struct flow_match_vlan *match,
				      __be16 *tpid, __be16 *tpid_m,
				      __be16 *tci, __be16 *tci_m,
				      __be16 *next, __be16 *next_m)
{
	u16 v, vm;

	if (match->mask->vlan_dei)
		return "xdp_flow: cannot offload VLAN DEI matches";
	v = match->key->vlan_id | (match->key->vlan_priority << VLAN_PRIO_SHIFT);
	vm = match->mask->vlan_id |
	     (match->mask->vlan_priority << VLAN_PRIO_SHIFT);
	*tci = htons(v);
	*tci_m = htons(vm);
	if (match->mask->vlan_tpid) {
		*tpid = match->key->vlan_tpid;
		*tpid_m = match->mask->vlan_tpid;
	}
	if (match->mask->vlan_eth_type) {
		if (match->mask->vlan_eth_type != htons(0xffff))
			return "xdp_flow: cannot offload a masked vlan_ethtype";
		*next = match->key->vlan_eth_type;
		*next_m = htons(0xffff);
	}
	return NULL;
}

static const char *xdp_flow_match_vlan(struct flow_rule *fr,
				       struct xdp_flow_key *k,
				       struct xdp_flow_key *m)
{
	struct flow_match_vlan match;
	__be16 next = 0, next_m = 0;
	const char *why;

	flow_rule_match_vlan(fr, &match);
	why = xdp_flow_match_tag(&match, &k->vlan_tpid, &m->vlan_tpid,
				 &k->vlan_tci, &m->vlan_tci, &next, &next_m);
	if (why || !next_m)
		return why;
	if (xdp_flow_is_vlan_proto(next)) {
		/* An inner tag of this TPID. */
		k->cvlan_tpid = next;
		m->cvlan_tpid = next_m;
	} else {
		/* No inner tag, then this EtherType. */
		k->cvlan_tpid = 0;
		m->cvlan_tpid = next_m;
		k->n_proto = next;
		m->n_proto = next_m;
	}
	return NULL;
}

static const char *xdp_flow_match_cvlan(struct flow_rule *fr,
					struct xdp_flow_key *k,
					struct xdp_flow_key *m)
{
	struct flow_match_vlan match;

	flow_rule_match_cvlan(fr, &match);
	if (match.key->vlan_eth_type && xdp_flow_is_vlan_proto(match.key->vlan_eth_type))
		return "xdp_flow: cannot offload matches on a third VLAN tag";
	/* After the inner tag: the EtherType, as the XDP program keys it. */
	return xdp_flow_match_tag(&match, &k->cvlan_tpid, &m->cvlan_tpid,
				  &k->cvlan_tci, &m->cvlan_tci, &k->n_proto,
				  &m->n_proto);
}

/* Flower keeps IPv4 and IPv6 addresses in a union, so a rule that matches
 * either has both keys in its dissector; the control key's addr_type says
 * which of the two the rule holds.
 */
static u16 xdp_flow_addr_type(struct flow_rule *fr)
{
	struct flow_match_control match;

	if (!flow_rule_match_key(fr, FLOW_DISSECTOR_KEY_CONTROL))
		return 0;
	flow_rule_match_control(fr, &match);
	return match.key->addr_type & match.mask->addr_type;
}

static void xdp_flow_match_addrs(struct flow_rule *fr,
				 struct xdp_flow_key *k,
				 struct xdp_flow_key *m)
{
	u16 addr_type = xdp_flow_addr_type(fr);

	if (flow_rule_match_key(fr, FLOW_DISSECTOR_KEY_ETH_ADDRS)) {
		struct flow_match_eth_addrs match;

		flow_rule_match_eth_addrs(fr, &match);
		ether_addr_copy(k->eth_dst, match.key->dst);
		ether_addr_copy(m->eth_dst, match.mask->dst);
		ether_addr_copy(k->eth_src, match.key->src);
		ether_addr_copy(m->eth_src, match.mask->src);
	}
	if (addr_type == FLOW_DISSECTOR_KEY_IPV4_ADDRS &&
	    flow_rule_match_key(fr, FLOW_DISSECTOR_KEY_IPV4_ADDRS)) {
		struct flow_match_ipv4_addrs match;

		flow_rule_match_ipv4_addrs(fr, &match);
		k->ip_src[0] = match.key->src;
		m->ip_src[0] = match.mask->src;
		k->ip_dst[0] = match.key->dst;
		m->ip_dst[0] = match.mask->dst;
	}
	if (addr_type == FLOW_DISSECTOR_KEY_IPV6_ADDRS &&
	    flow_rule_match_key(fr, FLOW_DISSECTOR_KEY_IPV6_ADDRS)) {
		struct flow_match_ipv6_addrs match;

		flow_rule_match_ipv6_addrs(fr, &match);
		memcpy(k->ip_src, &match.key->src, sizeof(k->ip_src));
		memcpy(m->ip_src, &match.mask->src, sizeof(m->ip_src));
		memcpy(k->ip_dst, &match.key->dst, sizeof(k->ip_dst));
		memcpy(m->ip_dst, &match.mask->dst, sizeof(m->ip_dst));
	}
}

/* Whether the rule pins an IP protocol whose ports the XDP program reads. */
static bool xdp_flow_has_ports(const struct xdp_flow_key *k,
			       const struct xdp_flow_key *m)
{
	return m->ip_proto == 0xff &&
	       (k->ip_proto == IPPROTO_TCP || k->ip_proto == IPPROTO_UDP ||
		k->ip_proto == IPPROTO_SCTP);
}

/* The XDP program reads ports of TCP, UDP and SCTP only; the kernel's flow
 * dissector also reads them for DCCP, UDP-Lite and others. So ports are
 * offloaded only together with an exact match on one of the three.
 */
static const char *xdp_flow_match_ports(struct flow_rule *fr,
					struct xdp_flow_key *k,
					struct xdp_flow_key *m)
{
	struct flow_match_ports match;

	flow_rule_match_ports(fr, &match);
	if (!match.mask->src && !match.mask->dst)
		return NULL;
	if (!xdp_flow_has_ports(k, m))
		return "xdp_flow: ports are offloaded only with ip_proto tcp, udp or sctp";
	k->l4_src = match.key->src;
	m->l4_src = match.mask->src;
	k->l4_dst = match.key->dst;
	m->l4_dst = match.mask->dst;
	return NULL;
}

/* One field of a flower port range: @r stays zero without a range. */
static const char *xdp_flow_port_range(__be16 min, __be16 max, __be16 min_m,
				       __be16 max_m, __be16 port_m,
				       struct xdp_flow_port_range *r)
{
	if (!min_m && !max_m)
		return NULL;
	if (min_m != htons(0xffff) || max_m != htons(0xffff) ||
	    ntohs(min) > ntohs(max) || !max)
		return "xdp_flow: cannot offload a port range without both bounds";
	if (port_m)
		return "xdp_flow: cannot offload a port and a port range on one field";
	r->min = ntohs(min);
	r->max = ntohs(max);
	return NULL;
}

/* Port ranges go to the helper as ranges; it matches each as the masked
 * ports that cover it.
 */
static const char *xdp_flow_match_ports_range(struct flow_rule *fr,
					      struct xdp_flow_rule *rule)
{
	const struct xdp_flow_key *k = &rule->key, *m = &rule->mask;
	struct flow_match_ports_range match;
	const char *why;

	flow_rule_match_ports_range(fr, &match);
	if (!match.mask->tp_min.src && !match.mask->tp_max.src &&
	    !match.mask->tp_min.dst && !match.mask->tp_max.dst)
		return NULL;
	if (!xdp_flow_has_ports(k, m))
		return "xdp_flow: ports are offloaded only with ip_proto tcp, udp or sctp";
	why = xdp_flow_port_range(match.key->tp_min.src, match.key->tp_max.src,
				  match.mask->tp_min.src,
				  match.mask->tp_max.src, m->l4_src,
				  &rule->l4_src_range);
	if (why)
		return why;
	return xdp_flow_port_range(match.key->tp_min.dst, match.key->tp_max.dst,
				   match.mask->tp_min.dst,
				   match.mask->tp_max.dst, m->l4_dst,
				   &rule->l4_dst_range);
}

static const char *xdp_flow_match_meta(struct flow_rule *fr, int ifindex)
{
	struct flow_match_meta match;

	flow_rule_match_meta(fr, &match);
	if (match.mask->ingress_iftype)
		return "xdp_flow: cannot offload ingress device type matches";
#ifdef XDP_FLOW_HAVE_L2_MISS
	if (match.mask->l2_miss)
		return "xdp_flow: cannot offload l2_miss matches";
#endif
	if (match.mask->ingress_ifindex &&
	    (match.key->ingress_ifindex & match.mask->ingress_ifindex) !=
	    (ifindex & match.mask->ingress_ifindex))
		return "xdp_flow: indev names another device than the one the rule is offered on";
	return NULL;
}

static bool xdp_flow_key_has_vlan(const struct xdp_flow_key *k,
				  const struct xdp_flow_key *m)
{
	return (m->vlan_tpid && k->vlan_tpid) || m->vlan_tci ||
	       m->cvlan_tpid || m->cvlan_tci;
}

static void xdp_flow_clear_vlan(struct xdp_flow_key *k, struct xdp_flow_key *m)
{
	k->vlan_tpid = 0;
	m->vlan_tpid = 0;
	k->vlan_tci = 0;
	m->vlan_tci = 0;
	k->cvlan_tpid = 0;
	m->cvlan_tpid = 0;
	k->cvlan_tci = 0;
	m->cvlan_tci = 0;
}

/* Fills @k and @m with every match the XDP program can do exactly and
 * returns NULL, or the first reason why a match cannot be offloaded.
 */
static const char *xdp_flow_match(struct flow_rule *fr, __be16 proto,
				  u32 chain, const struct xdp_flow_target *t,
				  struct xdp_flow_key *k,
				  struct xdp_flow_key *m)
{
	struct flow_dissector *dissector = fr->match.dissector;
	u64 used = dissector->used_keys;
	const char *why = NULL, *msg;
	int key;

	k->ifindex = t->ifindex;
	m->ifindex = 0xffffffff;
	k->chain = chain;
	m->chain = 0xffffffff;
	if (t->nft)
		why = xdp_flow_match_nft_protocol(fr, proto, k, m);
	else
		xdp_flow_match_protocol(proto, k, m);

	for (key = 0; key < FLOW_DISSECTOR_KEY_MAX; key++) {
		if (!(used & BIT_ULL(key)) || (XDP_FLOW_KEYS & BIT_ULL(key)))
			continue;
		msg = xdp_flow_key_msgs[key];
		why = why ?: msg ?: "xdp_flow: cannot offload a match of this rule";
		break;
	}

	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_CONTROL)) {
		msg = xdp_flow_match_control(fr, k, m);
		why = why ?: msg;
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_BASIC))
		xdp_flow_match_basic(fr, k, m);
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_IP))
		xdp_flow_match_ip(fr, k, m);
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_TCP))
		xdp_flow_match_tcp(fr, k, m);
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_ICMP)) {
		msg = xdp_flow_match_icmp(fr, k, m);
		why = why ?: msg;
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_ARP))
		xdp_flow_match_arp(fr, k, m);
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_VLAN)) {
		msg = xdp_flow_match_vlan(fr, k, m);
		why = why ?: msg;
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_CVLAN)) {
		msg = xdp_flow_match_cvlan(fr, k, m);
		why = why ?: msg;
	}
	xdp_flow_match_addrs(fr, k, m);
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_PORTS)) {
		msg = xdp_flow_match_ports(fr, k, m);
		why = why ?: msg;
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_META)) {
		msg = xdp_flow_match_meta(fr, t->ifindex);
		why = why ?: msg;
	}
	if (t->vlan_hidden && xdp_flow_key_has_vlan(k, m)) {
		/* XDP may see such a frame untagged: keep the rule in
		 * software, and its XDP key blind to tags, so that it still
		 * covers every frame TC's rule may match.
		 */
		xdp_flow_clear_vlan(k, m);
		why = why ?: "xdp_flow: XDP may not see VLAN tags on this device";
	}
	return why;
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

/*
 * Actions the XDP program executes: rewrites (pedit, csum, then VLAN), then
 * one of drop, pass, goto chain and redirect. Rewrites go only before a
 * redirect: a rewritten frame passed to the stack would meet TC again.
 */
static const char *xdp_flow_actions(struct flow_rule *fr,
				    const struct xdp_flow_target *t,
				    struct xdp_flow_rule *rule,
				    struct netlink_ext_ack *extack)
{
	bool rewrites = false, vlan = false, done = false;
	struct flow_action_entry *act;
	const char *why = NULL;
	int i;

	if (!flow_action_has_entries(&fr->action))
		return "xdp_flow: cannot offload a rule without actions";
	if (fr->action.num_entries > XDP_FLOW_MAX_ACTIONS)
		return "xdp_flow: cannot offload more than 8 actions (pedit keys count one each)";
	if (!flow_action_hw_stats_check(&fr->action, extack,
					FLOW_ACTION_HW_STATS_DELAYED_BIT))
		return "xdp_flow: cannot offload the requested hw_stats type";

	flow_action_for_each(i, act, &fr->action) {
		struct xdp_flow_action *xa = &rule->actions[i];

		if (done)
			return "xdp_flow: cannot offload actions after a terminal action";
		switch (act->id) {
		case FLOW_ACTION_DROP:
			if (rewrites)
				return "xdp_flow: cannot offload rewrites before drop";
			xa->id = XDP_FLOW_ACTION_DROP;
			done = true;
			break;
		case FLOW_ACTION_ACCEPT:
			if (rewrites)
				return "xdp_flow: cannot offload rewrites that end in pass";
			xa->id = XDP_FLOW_ACTION_PASS;
			done = true;
			break;
		case FLOW_ACTION_GOTO:
			/* The next chain classifies the frame as it is. */
			if (rewrites)
				return "xdp_flow: cannot offload rewrites before goto chain";
			xa->id = XDP_FLOW_ACTION_GOTO;
			xa->chain = act->chain_index;
			done = true;
			break;
		case FLOW_ACTION_REDIRECT:
			if (!act->dev || !net_eq(dev_net(act->dev), &init_net))
				return "xdp_flow: redirect target is in another netns";
			if (!t->tc_hook && !xdp_flow_can_xmit(act->dev))
				return "xdp_flow: redirect target takes no XDP frames";
			xa->id = XDP_FLOW_ACTION_REDIRECT;
			xa->ifindex = act->dev->ifindex;
			done = true;
			break;
		case FLOW_ACTION_MANGLE:
		case FLOW_ACTION_ADD:
			if (t->tc_hook)
				return "xdp_flow: the tc hook does not offload pedit";
			if (vlan)
				return "xdp_flow: cannot offload pedit after a vlan action";
			why = xdp_flow_mangle(act, xa);
			rewrites = true;
			break;
		case FLOW_ACTION_CSUM:
			if (t->tc_hook)
				return "xdp_flow: the tc hook does not offload csum";
			if (vlan)
				return "xdp_flow: cannot offload csum after a vlan action";
			why = xdp_flow_csum(act, xa);
			rewrites = true;
			break;
		case FLOW_ACTION_VLAN_PUSH:
		case FLOW_ACTION_VLAN_MANGLE:
			why = xdp_flow_vlan(act, rule, xa);
			rewrites = true;
			vlan = true;
			break;
		case FLOW_ACTION_VLAN_POP:
			xa->id = XDP_FLOW_ACTION_VLAN_POP;
			rewrites = true;
			vlan = true;
			break;
		default:
			return xdp_flow_action_msg(act->id);
		}
		if (why)
			return why;
	}
	if (!done)
		return "xdp_flow: cannot offload rewrites that end in pass";
	rule->nr_actions = fr->action.num_entries;
	return NULL;
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

/*
 * What a flowtable's offer rewrites, gathered from its pedit-style
 * entries (net/netfilter/nf_flow_table_offload.c) before the XDP actions
 * are made from it. @eth and @l4 hold the rewritten bytes, @eth_set and
 * @l4_set which of them were written; @addr the addresses (IPv4 in word
 * 0), @addr_set the words written, source then destination; @first which
 * side (0 source, 1 destination) the offer rewrote first.
 */
struct xdp_flow_ft_edit {
	u8 eth[12];
	u16 eth_set;
	u8 l4[4];
	u8 l4_set;
	__be32 addr[2][4];
	u8 addr_set[2];
	int first;
};

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

/*
 * The actions of a flowtable's offer: FT_ROUTE (with the MTU of the
 * flow's route and the Ethernet addresses the offer sets), the NAT
 * rewrites, the VLAN pops, the PPPoE pop the offer leaves out (@flow's
 * frames arrive in a PPPoE session), the PPPoE and VLAN pushes in the
 * offer's order (inner first), the redirect. The offer's csum entry is
 * what the NAT actions do incrementally, as the software path.
 */
static const char *xdp_flow_ft_actions(struct flow_rule *fr,
				       const struct xdp_flow_target *t,
				       const struct xdp_flow_ft_flow *flow,
				       bool v6, struct xdp_flow_rule *r)
{
	struct xdp_flow_action vlan[XDP_FLOW_MAX_ACTIONS] = {};
	unsigned int npop = 0;
	struct xdp_flow_ft_edit e = { .first = -1 };
	struct xdp_flow_action *route = &r->actions[0];
	struct flow_action_entry *act;
	struct net_device *out = NULL;
	unsigned int nvlan = 0, i;
	const char *why = NULL;
	int k;

	flow_action_for_each(k, act, &fr->action) {
		switch (act->id) {
		case FLOW_ACTION_MANGLE:
			why = xdp_flow_ft_mangle(act, &e);
			break;
		case FLOW_ACTION_CSUM:
			break;
		case FLOW_ACTION_VLAN_POP:
		case FLOW_ACTION_VLAN_PUSH:
		case FLOW_ACTION_PPPOE_PUSH:
			if (nvlan == ARRAY_SIZE(vlan) - 1)
				return "xdp_flow: too many VLAN actions in a flowtable flow";
			if (act->id == FLOW_ACTION_VLAN_POP) {
				if (npop != nvlan)
					return "xdp_flow: flowtable VLAN pop after a push";
				vlan[nvlan].id = XDP_FLOW_ACTION_VLAN_POP;
				npop++;
			} else if (nvlan > npop) {
				return "xdp_flow: flowtable flow in two encapsulations";
			} else if (act->id == FLOW_ACTION_PPPOE_PUSH) {
				if (t->tc_hook)
					return "xdp_flow: PPPoE flowtable flows need the XDP hook";
				vlan[nvlan].id = XDP_FLOW_ACTION_PPPOE_PUSH;
				vlan[nvlan].pppoe_sid = htons(act->pppoe.sid);
			} else {
				why = xdp_flow_vlan(act, r, &vlan[nvlan]);
			}
			nvlan++;
			break;
		case FLOW_ACTION_REDIRECT:
			if (out)
				return "xdp_flow: cannot offload a flowtable flow with two outputs";
			out = act->dev;
			break;
		case FLOW_ACTION_TUNNEL_ENCAP:
		case FLOW_ACTION_TUNNEL_DECAP:
			return "xdp_flow: cannot offload tunnels of flowtable flows";
		default:
			return xdp_flow_action_msg(act->id);
		}
		if (why)
			return why;
	}
	if (!out || !net_eq(dev_net(out), &init_net))
		return "xdp_flow: flowtable flow without an output in the initial netns";
	if (!t->tc_hook && !xdp_flow_can_xmit(out))
		return "xdp_flow: redirect target takes no XDP frames";
	if (e.eth_set != 0xfff)
		return "xdp_flow: flowtable flow without both Ethernet addresses";
	if (!flow->mtu)
		return "xdp_flow: flowtable flow without an MTU";
	if (flow->pppoe) {
		if (t->tc_hook)
			return "xdp_flow: PPPoE flowtable flows need the XDP hook";
		memmove(&vlan[npop + 1], &vlan[npop],
			(nvlan - npop) * sizeof(vlan[0]));
		memset(&vlan[npop], 0, sizeof(vlan[0]));
		vlan[npop].id = XDP_FLOW_ACTION_PPPOE_POP;
		nvlan++;
	}

	route->id = XDP_FLOW_ACTION_FT_ROUTE;
	route->ft_route.mtu = flow->mtu;
	memcpy(route->ft_route.eth_dst, e.eth, ETH_ALEN);
	memcpy(route->ft_route.eth_src, e.eth + ETH_ALEN, ETH_ALEN);
	r->nr_actions = 1;
	why = xdp_flow_ft_nat(&e, e.first == 1 ? 1 : 0, v6, r);
	why = why ?: xdp_flow_ft_nat(&e, e.first == 1 ? 0 : 1, v6, r);
	if (why)
		return why;
	if (r->nr_actions + nvlan + 1 > XDP_FLOW_MAX_ACTIONS)
		return "xdp_flow: cannot offload a flowtable flow of this many rewrites";
	for (i = 0; i < nvlan; i++)
		r->actions[r->nr_actions++] = vlan[i];
	r->actions[r->nr_actions].id = XDP_FLOW_ACTION_REDIRECT;
	r->actions[r->nr_actions].ifindex = out->ifindex;
	r->nr_actions++;
	return NULL;
}

/**
 * xdp_flow_translate_ft() - turn one direction of a flowtable's flow into
 *	an XDP rule
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
int xdp_flow_translate_ft(struct flow_cls_offload *f,
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
	why = xdp_flow_match(fr, htons(ETH_P_ALL), 0, t, &rule->key,
			     &rule->mask);
	if (!why && (rule->mask.n_proto != htons(0xffff) ||
		     (rule->key.n_proto != htons(ETH_P_IP) &&
		      rule->key.n_proto != htons(ETH_P_IPV6))))
		why = "xdp_flow: flowtable flow of another protocol than IPv4 or IPv6";
	if (!why && t->vlan_hidden)
		why = "xdp_flow: flowtable flows need the VLAN tags in XDP (rxvlan off)";
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
			     &rule->key, &rule->mask);
	if (fr->match.dissector->used_keys &
	    BIT_ULL(FLOW_DISSECTOR_KEY_PORTS_RANGE)) {
		const char *msg = xdp_flow_match_ports_range(fr, rule);

		why = why ?: msg;
	}
	if (!why)
		why = xdp_flow_actions(fr, t, rule, extack);
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
