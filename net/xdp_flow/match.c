// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: a rule's matches as the XDP key: which dissector keys the XDP
 * program matches exactly, and how each becomes fields of struct
 * xdp_flow_key and its mask. A match that cannot be offloaded is named by
 * its reason; what can be expressed of the others still goes into the
 * key, so that a software rule matches a superset of TC's (translate.c).
 *
 * It owns the table of keys and their refusals; it calls nothing of the
 * module.
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/in.h>
#include <net/flow_offload.h>
#include <net/geneve.h>
#include <net/ipv6.h>

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
		       BIT_ULL(FLOW_DISSECTOR_KEY_META) |		\
		       XDP_FLOW_ENC_KEYS)

/* The tunnel metadata's keys: the tc hook's (xdp_flow_match_enc()). */
#define XDP_FLOW_ENC_KEYS (BIT_ULL(FLOW_DISSECTOR_KEY_ENC_KEYID) |	\
			   BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IPV4_ADDRS) |	\
			   BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IPV6_ADDRS) |	\
			   BIT_ULL(FLOW_DISSECTOR_KEY_ENC_CONTROL) |	\
			   BIT_ULL(FLOW_DISSECTOR_KEY_ENC_PORTS) |	\
			   BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IP) |		\
			   BIT_ULL(FLOW_DISSECTOR_KEY_ENC_OPTS))

/* Flower's enc_opts.dst_opt_type of Geneve options, on every kernel. */
#ifdef IP_TUNNEL_DECLARE_FLAGS
#define XDP_FLOW_ENC_OPTS_GENEVE	IP_TUNNEL_GENEVE_OPT_BIT
#else
#define XDP_FLOW_ENC_OPTS_GENEVE	TUNNEL_GENEVE_OPT
#endif

static const char * const xdp_flow_key_msgs[FLOW_DISSECTOR_KEY_MAX] = {
	[FLOW_DISSECTOR_KEY_MPLS] = "xdp_flow: cannot offload MPLS matches",
	[FLOW_DISSECTOR_KEY_CT] = "xdp_flow: cannot offload conntrack (ct_*) matches",
	[FLOW_DISSECTOR_KEY_HASH] = "xdp_flow: cannot offload hash matches",
};

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

/**
 * xdp_flow_match_ports_range() - a flower rule's port ranges
 * @fr: the rule
 * @rule: its XDP rule, whose key and mask xdp_flow_match() made; gets the
 *	ranges
 *
 * Port ranges go to the helper as ranges; it matches each as the masked
 * ports that cover it.
 *
 * Return: NULL, or why the ranges cannot be offloaded.
 */
const char *xdp_flow_match_ports_range(struct flow_rule *fr,
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

/*
 * Geneve option matches (enc_opts geneve_opts, as OVN's receiving side
 * writes them): flower compares the options' bytes, their length and
 * their kind, each under its mask, bitwise (the length under a mask that
 * is the length itself). The key holds the options' first
 * XDP_FLOW_ENC_OPTS_LEN bytes and their length. Their kind, Geneve's on a
 * Geneve device whenever there are options at all, follows from a length
 * with a bit set; the tc hook sends frames with options of another kind
 * to the stack.
 */
static const char *xdp_flow_match_enc_opts(struct flow_rule *fr,
					   const struct xdp_flow_target *t,
					   struct xdp_flow_key *k,
					   struct xdp_flow_key *m)
{
	struct flow_match_enc_opts match;
	unsigned int i;

	flow_rule_match_enc_opts(fr, &match);
	if (!match.mask->len && !match.mask->dst_opt_type &&
	    !memchr_inv(match.mask->data, 0, sizeof(match.mask->data)))
		return NULL;
	if (!netif_is_geneve(t->dev))
		return "xdp_flow: enc_opts matches are offloaded on Geneve devices only";
	if (match.mask->dst_opt_type &&
	    (match.mask->dst_opt_type != XDP_FLOW_ENC_OPTS_GENEVE ||
	     match.key->dst_opt_type != XDP_FLOW_ENC_OPTS_GENEVE ||
	     !(match.key->len & match.mask->len)))
		return "xdp_flow: cannot offload tunnel option matches other than Geneve's";
	if (memchr_inv(match.mask->data + XDP_FLOW_ENC_OPTS_LEN, 0,
		       sizeof(match.mask->data) - XDP_FLOW_ENC_OPTS_LEN))
		return "xdp_flow: cannot offload tunnel option matches past their first 8 bytes";
	k->enc_opt_len = match.key->len & match.mask->len;
	m->enc_opt_len = match.mask->len;
	for (i = 0; i < XDP_FLOW_ENC_OPTS_LEN; i++) {
		k->enc_opts[i] = match.key->data[i] & match.mask->data[i];
		m->enc_opts[i] = match.mask->data[i];
	}
	return NULL;
}

/*
 * Outer IPv6 addresses, matched whole or not at all: the key holds their
 * digests, @rule->enc6 the addresses (the program compares them on a hit).
 */
static const char *xdp_flow_match_enc6(struct flow_rule *fr,
				       struct xdp_flow_rule *rule,
				       struct xdp_flow_key *ek,
				       struct xdp_flow_key *em)
{
	static const struct in6_addr all = {
		.s6_addr = { [0 ... 15] = 0xff }
	};
	struct flow_match_ipv6_addrs match;
	const struct in6_addr *src_m, *dst_m;

	flow_rule_match_enc_ipv6_addrs(fr, &match);
	src_m = &match.mask->src;
	dst_m = &match.mask->dst;
	if ((!ipv6_addr_any(src_m) && !ipv6_addr_equal(src_m, &all)) ||
	    (!ipv6_addr_any(dst_m) && !ipv6_addr_equal(dst_m, &all)))
		return "xdp_flow: outer IPv6 addresses are offloaded whole (/128) only";
	if (ipv6_addr_equal(src_m, &all)) {
		memcpy(rule->enc6.src, &match.key->src, 16);
		ek->enc_src = (__force __be32)
			      xdp_flow_enc6_digest(rule->enc6.src);
		em->enc_src = htonl(0xffffffff);
	}
	if (ipv6_addr_equal(dst_m, &all)) {
		memcpy(rule->enc6.dst, &match.key->dst, 16);
		ek->enc_dst = (__force __be32)
			      xdp_flow_enc6_digest(rule->enc6.dst);
		em->enc_dst = htonl(0xffffffff);
	}
	if (em->enc_src || em->enc_dst)
		rule->flags |= XDP_FLOW_RULE_F_ENC6;
	return NULL;
}

/*
 * The tunnel metadata (enc_*), which the tc hook reads as flower's
 * dissector does (skb_flow_dissect_tunnel_info()): key, outer IPv4 or
 * IPv6 addresses, TOS and TTL, Geneve options, and the family of the
 * metadata (flower's enc_control address type, which its address matches
 * imply).
 * The metadata's UDP ports are not in the key: a tunnel device's own
 * receive path gives every frame its port as the destination, so a
 * destination port match on a VXLAN or Geneve device is decided here. A
 * refused match leaves the key without any enc_ field (a superset).
 */
static const char *xdp_flow_match_enc(struct flow_rule *fr, u64 used,
				      const struct xdp_flow_target *t,
				      struct xdp_flow_rule *rule)
{
	struct xdp_flow_key *k = &rule->key, *m = &rule->mask;
	struct xdp_flow_key ek = {}, em = {};
	const char *why;

	if (!t->tc_hook)
		return "xdp_flow: the XDP hook does not offload tunnel (enc_*) matches (tc does)";
	/* Flower keeps the outer addresses of both families in one union,
	 * both keys used whenever one is: the address type tells which.
	 */
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_ENC_CONTROL)) {
		struct flow_match_control match;

		flow_rule_match_enc_control(fr, &match);
		if (match.mask->flags)
			return "xdp_flow: cannot offload enc_ ip_flags matches";
		if (match.mask->addr_type) {
			if (match.key->addr_type == FLOW_DISSECTOR_KEY_IPV4_ADDRS)
				ek.enc_addr = XDP_FLOW_ENC_IPV4;
			else if (match.key->addr_type == FLOW_DISSECTOR_KEY_IPV6_ADDRS)
				ek.enc_addr = XDP_FLOW_ENC_IPV6;
			else
				return "xdp_flow: tunnel matches need IPv4 or IPv6 metadata";
			em.enc_addr = 0xff;
		}
	}
	if (!ek.enc_addr && (used & (BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IPV4_ADDRS) |
				     BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IPV6_ADDRS))))
		return "xdp_flow: cannot offload tunnel address matches without their family";
	if (ek.enc_addr == XDP_FLOW_ENC_IPV4 &&
	    (used & BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IPV4_ADDRS))) {
		struct flow_match_ipv4_addrs match;

		flow_rule_match_enc_ipv4_addrs(fr, &match);
		ek.enc_src = match.key->src;
		em.enc_src = match.mask->src;
		ek.enc_dst = match.key->dst;
		em.enc_dst = match.mask->dst;
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_ENC_KEYID)) {
		struct flow_match_enc_keyid match;

		flow_rule_match_enc_keyid(fr, &match);
		ek.enc_key_id = match.key->keyid;
		em.enc_key_id = match.mask->keyid;
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IP)) {
		struct flow_match_ip match;

		flow_rule_match_enc_ip(fr, &match);
		ek.enc_tos = match.key->tos;
		em.enc_tos = match.mask->tos;
		ek.enc_ttl = match.key->ttl;
		em.enc_ttl = match.mask->ttl;
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_ENC_PORTS)) {
		struct flow_match_ports match;
		__be16 port;

		flow_rule_match_enc_ports(fr, &match);
		if (match.mask->src)
			return "xdp_flow: cannot offload enc_src_port matches";
		port = xdp_flow_tunnel_port(t->dev);
		if (match.mask->dst && !port)
			return "xdp_flow: enc_dst_port matches only on a VXLAN or Geneve device";
		if ((match.key->dst ^ port) & match.mask->dst)
			return "xdp_flow: enc_dst_port is not the tunnel device's port";
	}
	if (used & BIT_ULL(FLOW_DISSECTOR_KEY_ENC_OPTS)) {
		why = xdp_flow_match_enc_opts(fr, t, &ek, &em);
		if (why)
			return why;
	}
	/* Last: it is the one that writes more of @rule than the key. */
	if (ek.enc_addr == XDP_FLOW_ENC_IPV6 &&
	    (used & BIT_ULL(FLOW_DISSECTOR_KEY_ENC_IPV6_ADDRS))) {
		why = xdp_flow_match_enc6(fr, rule, &ek, &em);
		if (why)
			return why;
	}
	k->enc_key_id = ek.enc_key_id;
	m->enc_key_id = em.enc_key_id;
	k->enc_tos = ek.enc_tos;
	m->enc_tos = em.enc_tos;
	k->enc_ttl = ek.enc_ttl;
	m->enc_ttl = em.enc_ttl;
	k->enc_addr = ek.enc_addr;
	m->enc_addr = em.enc_addr;
	k->enc_src = ek.enc_src;
	m->enc_src = em.enc_src;
	k->enc_dst = ek.enc_dst;
	m->enc_dst = em.enc_dst;
	k->enc_opt_len = ek.enc_opt_len;
	m->enc_opt_len = em.enc_opt_len;
	memcpy(k->enc_opts, ek.enc_opts, sizeof(k->enc_opts));
	memcpy(m->enc_opts, em.enc_opts, sizeof(m->enc_opts));
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

/**
 * xdp_flow_match() - the XDP key of a rule's matches
 * @fr: the rule
 * @proto: its protocol: TC's filter protocol, or nftables' (0: any)
 * @chain: its TC chain
 * @t: the device it is offered on
 * @rule: gets the key and the mask (and the outer IPv6 addresses the key
 *	holds digests of)
 *
 * Fills @rule's key and mask with every match the XDP program can do
 * exactly.
 *
 * Return: NULL, or the first reason why a match cannot be offloaded.
 */
const char *xdp_flow_match(struct flow_rule *fr, __be16 proto, u32 chain,
			   const struct xdp_flow_target *t,
			   struct xdp_flow_rule *rule)
{
	struct xdp_flow_key *k = &rule->key, *m = &rule->mask;
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
	if (used & XDP_FLOW_ENC_KEYS) {
		msg = xdp_flow_match_enc(fr, used, t, rule);
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

