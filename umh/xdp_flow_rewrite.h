/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: the rewrites of a rule, each written once for both
 * hooks over the context layer, and what each hook does of them.
 *
 * A rule with more than one action rewrites the frame, then redirects it;
 * or, with mirrors among the rewrites (TC hook only), it may also end in a
 * pass (the module and the helper allow no other shape). Everything a
 * rewrite needs is checked before the first byte changes (act_check()): a
 * frame TC would treat in a way this code does not reproduce goes to the
 * stack untouched, and TC handles it. The XDP hook does every rewrite; the TC
 * hook does the VLAN actions and a flowtable's routing and NAT, and leaves
 * pedit, csum and PPPoE to TC.
 *
 * May use: xdp_flow_ctx.h, xdp_flow_parse.h, xdp_flow_maps.h,
 * xdp_flow_csum.h (XDP's csum action), xdp_flow_flowtable.h.
 */
#ifndef _XDP_FLOW_REWRITE_H
#define _XDP_FLOW_REWRITE_H

#include "xdp_flow_ctx.h"
#include "xdp_flow_parse.h"
#include "xdp_flow_maps.h"
#include "xdp_flow_csum.h"
#include "xdp_flow_flowtable.h"

/* The vlan_tci and vlan_tpid mutants (xdp_flow.bpf.c), at both hooks. */
#ifdef XDP_FLOW_MUTANT_vlan_tci
#define MUTANT_TCI(tci)		((tci) ^ 0x0100)
#else
#define MUTANT_TCI(tci)		(tci)
#endif
#ifdef XDP_FLOW_MUTANT_vlan_tpid
#define MUTANT_TPID(proto)	((proto) == bpf_htons(ETH_P_8021Q) ?	\
				 (__be16)bpf_htons(ETH_P_8021AD) :	\
				 (__be16)bpf_htons(ETH_P_8021Q))
#else
#define MUTANT_TPID(proto)	(proto)
#endif

/* The offset TC pedit counts @a from, or -1 where TC pedit fails ("bad":
 * it would skip the rest of its keys, which this code cannot tell apart)
 * or where the rewrite would not be the field the module allowed.
 */
static __always_inline int mangle_base(const struct edit_layout *l,
				       const struct xdp_flow_action *a)
{
	switch (a->mangle.htype) {
	case XDP_FLOW_HDR_ETH:
		return 0;
	case XDP_FLOW_HDR_IP4:
		/* TC writes at the network header whatever is there; an
		 * IPv4 field of another protocol's header may be its length
		 * or next header, which the checks here rely on.
		 */
		return l->proto == bpf_htons(ETH_P_IP) ? l->noff : -1;
	case XDP_FLOW_HDR_IP6:
		return l->proto == bpf_htons(ETH_P_IPV6) ? l->noff : -1;
	case XDP_FLOW_HDR_TCP:
	case XDP_FLOW_HDR_UDP:
		/* Only at a header of that protocol, right after the IP
		 * header (l4proto is 0 for a non-first IPv4 fragment).
		 * Linux 7.3's pedit fails anywhere else; older kernels write
		 * after an IPv4 header whatever the protocol, which TC
		 * does itself when the frame goes there.
		 */
		if (l->l4proto != (a->mangle.htype == XDP_FLOW_HDR_TCP ?
				   IPPROTO_TCP : IPPROTO_UDP))
			return -1;
		if (l->proto == bpf_htons(ETH_P_IP))
			return l->noff + l->ihl;
		if (l->proto == bpf_htons(ETH_P_IPV6))
			return l->noff + sizeof(struct ipv6hdr);
		return -1;
	}
	return -1;
}

/* MANGLE, ADD: TC pedit's set and add on a 32-bit word. */
static __always_inline int pedit(struct xdp_md *ctx,
				 const struct edit_layout *l,
				 const struct xdp_flow_action *a)
{
	void *data, *data_end;
	__u32 *w, v;
	int base;

	base = mangle_base(l, a);
	if (base < 0)
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	w = data + (base & 0xff) + (a->mangle.offset & 0x3c);
	if ((void *)(w + 1) > data_end)
		return -1;
	v = *w;
	if (a->id == XDP_FLOW_ACTION_MANGLE)
		*w = (v & a->mangle.mask) ^ a->mangle.val;
	else
		*w = (v & a->mangle.mask) ^
		     ((v + a->mangle.val) & ~a->mangle.mask);
	return 0;
}

/*
 * PPPOE_PUSH on an untagged IPv4 or IPv6 frame: the header as
 * pppoe_xmit() and the flowtable's nf_flow_pppoe_push() write it.
 */
static __always_inline int pppoe_push(struct xdp_md *ctx, __be16 sid)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pppoe_ses *ps;
	__be16 ppp, *h;
	__u32 len;

	if (data + ETH_HLEN > data_end)
		return -1;
	if (((__be16 *)data)[6] == bpf_htons(ETH_P_IP))
		ppp = bpf_htons(PPP_IP);
	else if (((__be16 *)data)[6] == bpf_htons(ETH_P_IPV6))
		ppp = bpf_htons(PPP_IPV6);
	else
		return -1;
	len = data_end - data - ETH_HLEN + sizeof(ppp);
	h = mac_push(ctx, sizeof(*ps));
	if (!h)
		return -1;
	h[6] = bpf_htons(ETH_P_PPP_SES);
	ps = (void *)(h + 7);
	ps->vertype = PPPOE_VERTYPE;
	ps->code = 0;
	ps->sid = sid;
	ps->length = bpf_htons(len);
	ps->ppp_proto = ppp;
	return 0;
}

/* PPPOE_POP: the PPP protocol becomes the EtherType. */
static __always_inline int pppoe_pop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pppoe_ses *ps = data + ETH_HLEN;
	__be16 proto;

	if ((void *)(ps + 1) > data_end ||
	    ((__be16 *)data)[6] != bpf_htons(ETH_P_PPP_SES))
		return -1;
	proto = pppoe_inner(ps);
	if (!proto)
		return -1;
	ps->ppp_proto = proto;	/* the EtherType, once the header goes */
	return mac_pull(ctx, data, sizeof(*ps));
}

/* VLAN_MODIFY: the outer tag's, if there is one (TC: no tag, nothing to
 * modify).
 */
static __always_inline int vlan_modify(void *ctx, const enum xf_hook hook,
				       const struct xdp_flow_action *a)
{
	__u16 tci;

	if (!ctx_vlan_get(ctx, hook, &tci))
		return 0;
	tci = (tci & a->vlan.keep) | a->vlan.tci;
	return ctx_vlan_set(ctx, hook, MUTANT_TPID(a->vlan.proto),
			    MUTANT_TCI(tci));
}

/*
 * Would @hook's rewrite of @a, action @i of a rule (@ft: a flowtable's),
 * be exactly what TC does to this frame of @frame_len bytes (of
 * @gso_size each, for a GSO skb)? 0 if so, 1 if not: the frame then goes
 * to the stack untouched.
 */
static __always_inline int act_check(const enum xf_hook hook,
				     const struct edit_layout *l,
				     const struct xdp_flow_action *a,
				     __u32 i, int ft, __u32 frame_len,
				     __u32 gso_size)
{
	int base;

	switch (a->id) {
	case XDP_FLOW_ACTION_MANGLE:
	case XDP_FLOW_ACTION_ADD:
		if (hook == XF_TC)
			return 1;
		base = mangle_base(l, a);
		if (base < 0 || base + a->mangle.offset + 4 > frame_len)
			return 1;
		return 0;
	case XDP_FLOW_ACTION_CSUM:
		if (hook == XF_TC)
			return 1;
		return csum_check(l, a->csum_flags) ? 1 : 0;
	case XDP_FLOW_ACTION_PPPOE_PUSH:
		return hook == XF_TC;
	case XDP_FLOW_ACTION_PPPOE_POP:
		return hook == XF_TC || !l->pppoe;
	case XDP_FLOW_ACTION_FT_ROUTE:
		if (hook == XF_TC && i)
			return 1;
		return ft_route_check(l, a, frame_len, gso_size);
	case XDP_FLOW_ACTION_FT_PORTS:
	case XDP_FLOW_ACTION_FT_SRC_ADDR:
	case XDP_FLOW_ACTION_FT_DST_ADDR:
		return hook == XF_TC && !ft;
	case XDP_FLOW_ACTION_VLAN_PUSH:
	case XDP_FLOW_ACTION_VLAN_POP:
		return 0;
	case XDP_FLOW_ACTION_VLAN_MODIFY:
		return hook == XF_TC && ft;
	case XDP_FLOW_ACTION_MIRROR:
	case XDP_FLOW_ACTION_MIRROR_INGRESS:
	case XDP_FLOW_ACTION_PTYPE:
	case XDP_FLOW_ACTION_TUNNEL_SET:
	case XDP_FLOW_ACTION_TUNNEL_OPTS:
	case XDP_FLOW_ACTION_TUNNEL_UNSET:
		return hook == XF_XDP;
	}
	return hook == XF_TC;
}

#ifndef PACKET_HOST
#define PACKET_HOST		0
#define PACKET_BROADCAST	1
#define PACKET_MULTICAST	2
#define PACKET_OTHERHOST	3
#endif

/*
 * Would the TC hook's entry of @skb, of packet type @ptype by then, into
 * @ifindex's receive path (bpf_redirect() or bpf_clone_redirect() with
 * BPF_F_INGRESS) be what mirred ingress does? Those classify the frame for
 * the target anew, as eth_type_trans() does, and zero its priority, where
 * mirred keeps both: only for a target the module vouches for
 * (xf_ingress) and a frame they leave as it is. A global function: the
 * verifier checks it once.
 */
__noinline int xdp_flow_tc_ingress_ok(struct __sk_buff *skb, __u32 ifindex,
				      __u32 ptype)
{
	union xdp_flow_ingress *e, dev;
	void *data, *data_end;
	__u32 type;
	__u8 *dst;

	if (!skb)
		return 0;
	e = bpf_map_lookup_elem(&xf_ingress, &ifindex);
	if (!e || skb->priority)
		return 0;
	dev.word = *(volatile __u64 *)&e->word;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	dst = data;
	if (data + ETH_ALEN > data_end)
		return 0;
	if (dst[0] & 1)
		type = (dst[0] & dst[1] & dst[2] & dst[3] & dst[4] & dst[5]) ==
		       0xff ? PACKET_BROADCAST : PACKET_MULTICAST;
	else if (*(__u32 *)dst == *(__u32 *)dev.mac &&
		 *(__u16 *)(dst + 4) == *(__u16 *)(dev.mac + 4))
		type = PACKET_HOST;
	else
		type = PACKET_OTHERHOST;
	return ptype == type;
}

/*
 * May the TC hook send a frame with bpf_skb_set_tunnel_key()'s metadata to
 * @ifindex? Its transmit path must be empty (XDP_FLOW_EGRESS_NAME): the
 * metadata is per CPU, and a frame that waited in a queue would leave
 * with the next frame's.
 */
static __always_inline int tc_tunnel_out_ok(__u32 ifindex)
{
	return bpf_map_lookup_elem(&xf_egress, &ifindex) != NULL;
}

/*
 * An output after tunnel_key unset, whose metadata the tc hook cannot
 * drop: a veth whose transmit path is empty (an entry in xf_peers), so
 * that nothing reads the metadata before veth drops it on the way to the
 * peer (skb_scrub_packet()), however the frame is sent there.
 */
static __always_inline int tc_unset_out_ok(__u32 ifindex)
{
	return bpf_map_lookup_elem(&xf_peers, &ifindex) != NULL;
}

/* One rewrite at @hook. Returns 0, or -1 when it failed half-way. */
static __always_inline int act(void *ctx, const enum xf_hook hook,
			       const struct edit_layout *l,
			       const struct xdp_flow_action *a)
{
	switch (a->id) {
	case XDP_FLOW_ACTION_MANGLE:
	case XDP_FLOW_ACTION_ADD:
		return hook == XF_XDP ? pedit(ctx, l, a) : -1;
	case XDP_FLOW_ACTION_CSUM:
		return hook == XF_XDP ?
		       xdp_flow_do_csum(ctx, l, a->csum_flags) : -1;
	case XDP_FLOW_ACTION_VLAN_PUSH:
		return ctx_vlan_push(ctx, hook, MUTANT_TPID(a->vlan.proto),
				     MUTANT_TCI(a->vlan.tci));
	case XDP_FLOW_ACTION_VLAN_POP:
		return ctx_vlan_pop(ctx, hook);
	case XDP_FLOW_ACTION_VLAN_MODIFY:
		return vlan_modify(ctx, hook, a);
	case XDP_FLOW_ACTION_MIRROR:
#ifdef XDP_FLOW_MUTANT_mirror_vlan
		return 0;	/* sent before the rewrites (edit()) */
#endif
		return ctx_mirror(ctx, hook, a->ifindex, 0);
	case XDP_FLOW_ACTION_MIRROR_INGRESS:
		return ctx_mirror(ctx, hook, a->ifindex, BPF_F_INGRESS);
	case XDP_FLOW_ACTION_PTYPE:
		return ctx_set_ptype(ctx, hook, a->ptype);
	case XDP_FLOW_ACTION_TUNNEL_SET:
		return ctx_tunnel_set(ctx, hook, a);
	case XDP_FLOW_ACTION_TUNNEL_OPTS:
		return ctx_tunnel_opts(ctx, hook, a);
	case XDP_FLOW_ACTION_TUNNEL_UNSET:
		return hook == XF_TC ? 0 : -1;	/* edit() checked the outputs */
	case XDP_FLOW_ACTION_PPPOE_PUSH:
		return hook == XF_XDP ? pppoe_push(ctx, a->pppoe_sid) : -1;
	case XDP_FLOW_ACTION_PPPOE_POP:
		return hook == XF_XDP ? pppoe_pop(ctx) : -1;
	case XDP_FLOW_ACTION_FT_ROUTE:
	case XDP_FLOW_ACTION_FT_PORTS:
	case XDP_FLOW_ACTION_FT_SRC_ADDR:
	case XDP_FLOW_ACTION_FT_DST_ADDR:
		if (hook == XF_XDP)
			return xdp_flow_ft_act(ctx, l, a);
		return ft_act(ctx, hook, l, a);
	}
	return -1;
}

/*
 * act() as a global function for each hook's type of context, and XDP's
 * act_check(): the verifier checks each once, not for every action of a
 * rule (XDP's checks inline in edit() nearly double what it processes for
 * the program; the TC hook's few cost nothing there).
 */
__noinline int xdp_flow_act(struct xdp_md *ctx, const struct edit_layout *l,
			    const struct xdp_flow_action *a)
{
	if (!ctx || !l || !a)
		return -1;
	return act(ctx, XF_XDP, l, a);
}

__noinline int xdp_flow_tc_act(struct __sk_buff *skb,
			       const struct edit_layout *l,
			       const struct xdp_flow_action *a)
{
	if (!skb || !l || !a)
		return -1;
	return act(skb, XF_TC, l, a);
}

__noinline int xdp_flow_act_check(const struct edit_layout *l,
				  const struct xdp_flow_action *a,
				  __u32 frame_len)
{
	if (!l || !a)
		return 1;
	return act_check(XF_XDP, l, a, 0, 0, frame_len, 0);
}

/*
 * Where the headers are, as far as @hook's rewrites need to know: 0, or
 * -1 for a frame left to the stack. The TC hook's layout says nothing of
 * the outer tag the kernel moved into metadata: its DEI bit comes from
 * there.
 */
static __always_inline int edit_frame(void *ctx, const enum xf_hook hook,
				      struct edit_layout *l)
{
	__u16 tci;

	if (edit_layout(ctx_data(ctx, hook), ctx_data_end(ctx, hook), l,
			ctx_all_at_hand(hook)))
		return -1;
	if (ctx_vlan_meta(ctx, hook, &tci))
		l->vlan_dei = !!(tci & VLAN_DEI);
	return 0;
}

/*
 * Applies the rewrites of rule @rule_id (all its actions but the last) at
 * @hook. Returns 0 when done, 1 when the frame is left to the stack
 * untouched, -1 when a rewrite failed half-way (the frame must be
 * dropped).
 */
static __always_inline int edit(void *ctx, const enum xf_hook hook,
				__u32 rule_id)
{
	struct edit_layout l = {};
	struct xdp_flow_dp_rule *rule;
	__u32 i, n, len, gso_size, ptype = 0, tunnel = 0, unset = 0;
	int ft;

	rule = bpf_map_lookup_elem(&xf_rules, &rule_id);
	if (!rule)
		return 1;
	n = rule->nr_actions;
	if (n < 2 || n > XDP_FLOW_MAX_ACTIONS)
		return 1;
	n--;
	ft = rule->actions[0].id == XDP_FLOW_ACTION_FT_ROUTE;
	/* The TC hook's VLAN actions are skb helpers, which find the tags
	 * themselves: only a flowtable's rule needs the headers there.
	 */
	if (hook == XF_XDP || ft) {
		if (edit_frame(ctx, hook, &l) || ft_conn_ended(rule, &l))
			return 1;
	}
	len = ctx_len(ctx, hook);
	gso_size = ctx_gso_size(ctx, hook);
	if (hook == XF_TC)
		ptype = ((struct __sk_buff *)ctx)->pkt_type;
	/* Only a flowtable's rule edits a PPPoE frame. */
	if (l.pppoe && !ft)
		return 1;

	/* First pass: would TC do exactly this? */
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		if (hook == XF_XDP ?
		    xdp_flow_act_check(&l, &rule->actions[i], len) :
		    act_check(hook, &l, &rule->actions[i], i, ft, len,
			      gso_size))
			return 1;
		if (hook != XF_TC)
			continue;
		if (rule->actions[i].id == XDP_FLOW_ACTION_PTYPE)
			ptype = rule->actions[i].ptype;
		if (rule->actions[i].id == XDP_FLOW_ACTION_TUNNEL_SET)
			tunnel = 1;
		if (tunnel && rule->actions[i].id == XDP_FLOW_ACTION_MIRROR &&
		    !tc_tunnel_out_ok(rule->actions[i].ifindex))
			return 1;
		if (rule->actions[i].id == XDP_FLOW_ACTION_TUNNEL_UNSET)
			unset = 1;
		if (unset && rule->actions[i].id == XDP_FLOW_ACTION_MIRROR &&
		    !tc_unset_out_ok(rule->actions[i].ifindex))
			return 1;
		if (rule->actions[i].id == XDP_FLOW_ACTION_MIRROR_INGRESS &&
		    !xdp_flow_tc_ingress_ok(ctx, rule->actions[i].ifindex, ptype))
			return 1;
	}
	/* The last action: an ingress redirect, of the type the frame has
	 * by then.
	 */
	if (hook == XF_TC &&
	    rule->actions[n & 7].id == XDP_FLOW_ACTION_REDIRECT_INGRESS &&
	    !xdp_flow_tc_ingress_ok(ctx, rule->actions[n & 7].ifindex, ptype))
		return 1;
	/* The output after a tunnel_key set (the module and the helper let
	 * a rule with one end only in a redirect).
	 */
	if (hook == XF_TC && tunnel &&
	    !tc_tunnel_out_ok(rule->actions[n & 7].ifindex))
		return 1;
	/* The redirect after a tunnel_key unset (the module and the helper
	 * let a rule with one end only in a redirect to a veth, or a drop).
	 */
	if (hook == XF_TC && unset &&
	    rule->actions[n & 7].id == XDP_FLOW_ACTION_REDIRECT &&
	    !tc_unset_out_ok(rule->actions[n & 7].ifindex))
		return 1;
#ifdef XDP_FLOW_MUTANT_mirror_vlan
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		if (rule->actions[i].id == XDP_FLOW_ACTION_MIRROR)
			ctx_mirror(ctx, hook, rule->actions[i].ifindex, 0);
	}
#endif
	/* Second pass: do it. */
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		if (hook == XF_XDP ?
		    xdp_flow_act(ctx, &l, &rule->actions[i]) :
		    xdp_flow_tc_act(ctx, &l, &rule->actions[i]))
			return -1;
	}
	return 0;
}

__noinline int xdp_flow_edit(struct xdp_md *ctx, __u32 rule_id)
{
	if (!ctx)
		return 1;
	return edit(ctx, XF_XDP, rule_id);
}

__noinline int xdp_flow_tc_edit(struct __sk_buff *skb, __u32 rule_id)
{
	if (!skb)
		return 1;
	return edit(skb, XF_TC, rule_id);
}

#endif /* _XDP_FLOW_REWRITE_H */
