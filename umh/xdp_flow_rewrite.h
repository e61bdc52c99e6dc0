/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: the rewrites of a rule that ends in a redirect, and
 * the checks that they would be TC's.
 *
 * May use: xdp_flow_parse.h, xdp_flow_maps.h, xdp_flow_csum.h,
 * xdp_flow_flowtable.h.
 */
#ifndef _XDP_FLOW_REWRITE_H
#define _XDP_FLOW_REWRITE_H

#include "xdp_flow_parse.h"
#include "xdp_flow_maps.h"
#include "xdp_flow_csum.h"
#include "xdp_flow_flowtable.h"

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

/* ------------------------------------------------------------ rewrites
 *
 * A rule with more than one action rewrites the frame, then redirects it
 * (the module and the helper allow no other shape). Everything a rewrite
 * needs is checked before the first byte changes: a frame TC would treat
 * in a way this code does not reproduce goes to the stack untouched, and
 * TC handles it.
 */

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

/*
 * Room for @n bytes (a multiple of 4) of header after the Ethernet
 * addresses, which move to the new start: returns it, with the first
 * ETH_HLEN + @n bytes at hand, or NULL.
 */
static __always_inline void *mac_push(struct xdp_md *ctx, const int n)
{
	void *data, *data_end;
	__u32 *w, a, b, c;

	if (bpf_xdp_adjust_head(ctx, -n))
		return NULL;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN + n > data_end)
		return NULL;
	w = data;
	a = w[n / 4];
	b = w[n / 4 + 1];
	c = w[n / 4 + 2];
	w[0] = a;
	w[1] = b;
	w[2] = c;
	return data;
}

/*
 * Takes out the @n bytes (a multiple of 4) after the Ethernet addresses,
 * which the caller found in @data (the frame's start): the addresses move
 * over them. Returns 0, or -1 when the frame is left half-way.
 */
static __always_inline int mac_pull(struct xdp_md *ctx, __u32 *data,
				    const int n)
{
	__u32 a = data[0], b = data[1], c = data[2];

	data[n / 4] = a;
	data[n / 4 + 1] = b;
	data[n / 4 + 2] = c;
	return bpf_xdp_adjust_head(ctx, n) ? -1 : 0;
}

static __always_inline int vlan_push(struct xdp_md *ctx, __be16 proto,
				     __u16 tci)
{
	__be16 *h = mac_push(ctx, sizeof(struct vlan_tag));

	if (!h)
		return -1;
	h[6] = proto;
	h[7] = bpf_htons(tci);
	return 0;
}

static __always_inline int vlan_pop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + ETH_HLEN + sizeof(struct vlan_tag) > data_end)
		return 0;
	if (!is_vlan(((__be16 *)data)[6]))
		return 0;	/* TC: nothing to pop */
	return mac_pull(ctx, data, sizeof(struct vlan_tag));
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

static __always_inline void vlan_modify(struct xdp_md *ctx,
					const struct xdp_flow_action *a)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__be16 *h = data;
	__u16 tci;

	if (data + ETH_HLEN + sizeof(struct vlan_tag) > data_end)
		return;
	if (!is_vlan(h[6]))
		return;		/* TC: no tag, nothing to modify */
	tci = bpf_ntohs(h[7]);
	tci = (tci & a->vlan.keep) | a->vlan.tci;
	h[6] = MUTANT_TPID(a->vlan.proto);
	h[7] = bpf_htons(MUTANT_TCI(tci));
}

/* Would TC do exactly what xdp_flow_act() does? 0 if so, 1 if not. */
__noinline int xdp_flow_act_check(const struct edit_layout *l,
				  const struct xdp_flow_action *a,
				  __u32 frame_len)
{
	int base;

	if (!l || !a)
		return 1;
	switch (a->id) {
	case XDP_FLOW_ACTION_MANGLE:
	case XDP_FLOW_ACTION_ADD:
		base = mangle_base(l, a);
		if (base < 0 || base + a->mangle.offset + 4 > frame_len)
			return 1;
		return 0;
	case XDP_FLOW_ACTION_CSUM:
		return csum_check(l, a->csum_flags) ? 1 : 0;
	case XDP_FLOW_ACTION_FT_ROUTE:
		return ft_route_check(l, a, frame_len, 0);
	case XDP_FLOW_ACTION_PPPOE_POP:
		return !l->pppoe;
	}
	return 0;
}

/* One rewrite. Returns 0, or -1 when it failed half-way. */
__noinline int xdp_flow_act(struct xdp_md *ctx, const struct edit_layout *l,
			    const struct xdp_flow_action *a)
{
	void *data, *data_end;
	__u32 *w, v;
	int base;

	if (!ctx || !l || !a)
		return -1;
	switch (a->id) {
	case XDP_FLOW_ACTION_MANGLE:
	case XDP_FLOW_ACTION_ADD:
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
	case XDP_FLOW_ACTION_CSUM:
		return xdp_flow_do_csum(ctx, l, a->csum_flags);
	case XDP_FLOW_ACTION_VLAN_PUSH:
		return vlan_push(ctx, MUTANT_TPID(a->vlan.proto),
				 MUTANT_TCI(a->vlan.tci));
	case XDP_FLOW_ACTION_VLAN_POP:
		return vlan_pop(ctx);
	case XDP_FLOW_ACTION_VLAN_MODIFY:
		vlan_modify(ctx, a);
		return 0;
	case XDP_FLOW_ACTION_PPPOE_PUSH:
		return pppoe_push(ctx, a->pppoe_sid);
	case XDP_FLOW_ACTION_PPPOE_POP:
		return pppoe_pop(ctx);
	case XDP_FLOW_ACTION_FT_ROUTE:
		return xdp_flow_ft_route(ctx, l, a);
	case XDP_FLOW_ACTION_FT_PORTS:
		return xdp_flow_ft_ports(ctx, l, a);
	case XDP_FLOW_ACTION_FT_SRC_ADDR:
	case XDP_FLOW_ACTION_FT_DST_ADDR:
		return xdp_flow_ft_addr(ctx, l, a);
	}
	return -1;
}

/*
 * Applies the rewrites of rule @rule_id (all its actions but the last).
 * Returns 0 when done, 1 when the frame is left to the stack untouched,
 * -1 when a rewrite failed half-way (the frame must be dropped).
 */
__noinline int xdp_flow_edit(struct xdp_md *ctx, __u32 rule_id)
{
	struct edit_layout l = {};
	struct xdp_flow_dp_rule *rule;
	__u32 i, n, len;

	if (!ctx)
		return 1;
	rule = bpf_map_lookup_elem(&xf_rules, &rule_id);
	if (!rule)
		return 1;
	n = rule->nr_actions;
	if (n < 2 || n > XDP_FLOW_MAX_ACTIONS)
		return 1;
	n--;
	if (edit_layout((void *)(long)ctx->data, (void *)(long)ctx->data_end,
			&l, 1))
		return 1;
	len = ctx->data_end - ctx->data;
	if (ft_conn_ended(rule, &l))
		return 1;
	if (l.pppoe && rule->actions[0].id != XDP_FLOW_ACTION_FT_ROUTE)
		return 1;

	/* First pass: would TC do exactly this? */
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		if (xdp_flow_act_check(&l, &rule->actions[i], len))
			return 1;
	}
	/* Second pass: do it. */
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		if (xdp_flow_act(ctx, &l, &rule->actions[i]))
			return -1;
	}
	return 0;
}

#endif /* _XDP_FLOW_REWRITE_H */
