/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: nftables flowtables. A flowtable's rule (FT_ROUTE
 * first) forwards as the software path does
 * (net/netfilter/nf_flow_table_ip.c): the frames that path leaves to the
 * stack go there untouched (ft_route_check(), ft_conn_ended()), and the
 * rewrites (ft_route(), ft_ports(), ft_addr()) update the checksums as it
 * does, through the context layer, at either hook.
 *
 * May use: xdp_flow_ctx.h, xdp_flow_parse.h, xdp_flow_maps.h.
 */
#ifndef _XDP_FLOW_FLOWTABLE_H
#define _XDP_FLOW_FLOWTABLE_H

#include "xdp_flow_ctx.h"
#include "xdp_flow_parse.h"
#include "xdp_flow_maps.h"

/* Would the software path leave the frame to the stack? 1 if so.
 * @gso_size: the TC hook's skb's, 0 in XDP.
 */
static __always_inline int ft_route_check(const struct edit_layout *l,
					  const struct xdp_flow_action *a,
					  __u32 frame_len, __u32 gso_size)
{
	__u32 need;

	/* The flowtable keys a tag's whole TCI; the rule, no DEI bit. */
	if (l->vlan_dei)
		return 1;
	if (l->proto == bpf_htons(ETH_P_IP)) {
		if (l->ihl != sizeof(struct iphdr) || l->frag)
			return 1;
	} else if (l->proto != bpf_htons(ETH_P_IPV6)) {
		return 1;
	}
	if (l->ttl <= 1)
		return 1;
	if (l->l4proto == IPPROTO_TCP)
		need = sizeof(struct tcphdr);
	else if (l->l4proto == IPPROTO_UDP)
		need = sizeof(struct udphdr);
	else
		return 1;
	if (!l->l4off || l->l4len < need || l->tcp_fin_rst)
		return 1;
	/* nf_flow_exceeds_mtu(): the bytes after the link-layer headers,
	 * or each segment's (skb_gso_validate_network_len())
	 */
	if (frame_len - l->noff <= a->ft_route.mtu)
		return 0;
	if (gso_size && l->l4hlen &&
	    l->l4off - l->noff + l->l4hlen + gso_size <= a->ft_route.mtu)
		return 0;
	return 1;
}

/*
 * Has the flowtable torn the rule's connection down? 1 if so: its frames
 * go to the stack, as the software path sends them once a TCP FIN or RST
 * of the flow went there. Such a frame marks the connection (both
 * directions: they share the key) on its way to the stack.
 */
static __always_inline int ft_conn_ended(const struct xdp_flow_dp_rule *rule,
					 const struct edit_layout *l)
{
	__u32 *ended;

	if (!rule->ft_conn)
		return 0;
	ended = bpf_map_lookup_elem(&xf_ft_conns, &rule->ft_conn);
	if (!ended)
		return 1;
	if (l->tcp_fin_rst) {
		*ended = 1;
		return 1;
	}
	return *ended;
}

/* Where the transport checksum sits. */
static __always_inline __u32 ft_l4_check_off(const struct edit_layout *l)
{
	return l->l4off + (l->l4proto == IPPROTO_TCP ?
			   __builtin_offsetof(struct tcphdr, check) :
			   __builtin_offsetof(struct udphdr, check));
}

_Static_assert(__builtin_offsetof(struct xdp_flow_action, ft_route.eth_src) ==
	       __builtin_offsetof(struct xdp_flow_action, ft_route.eth_dst) +
	       ETH_ALEN, "ft_route() writes both addresses at once");

/* FT_ROUTE: the Ethernet addresses, then ip_decrease_ttl() or the hop
 * limit's. Returns 0, or -1 when it failed half-way.
 */
static __always_inline int ft_route(void *ctx, const enum xf_hook hook,
				    const struct edit_layout *l,
				    const struct xdp_flow_action *a)
{
	__u8 ttl = l->ttl - 1;
	__u16 check;
	__u32 sum;

	if (ctx_store(ctx, hook, 0, a->ft_route.eth_dst, ETH_ALEN * 2))
		return -1;
	if (l->proto == bpf_htons(ETH_P_IPV6))
		return ctx_store(ctx, hook, l->noff +
				 __builtin_offsetof(struct ipv6hdr, hop_limit),
				 &ttl, 1);
	if (ctx_load(ctx, hook, l->noff +
		     __builtin_offsetof(struct iphdr, check), &check, 2))
		return -1;
	sum = check;
	sum += (__u16)bpf_htons(0x0100);
	check = sum + (sum >= 0xffff);
	if (ctx_store(ctx, hook, l->noff +
		      __builtin_offsetof(struct iphdr, check), &check, 2) ||
	    ctx_store(ctx, hook, l->noff +
		      __builtin_offsetof(struct iphdr, ttl), &ttl, 1))
		return -1;
	return 0;
}

/* FT_PORTS: nf_flow_snat_port() and nf_flow_dnat_port(); the ports are
 * not in the pseudo header.
 */
static __always_inline int ft_ports(void *ctx, const enum xf_hook hook,
				    const struct edit_layout *l,
				    const struct xdp_flow_action *a)
{
	__be16 old, new;
	__u32 from, to;
	int i;

	for (i = 0; i < 2; i++) {
		if (!(a->ft_ports.which & (i ? XDP_FLOW_FT_DPORT :
					       XDP_FLOW_FT_SPORT)))
			continue;
		new = i ? a->ft_ports.dst : a->ft_ports.src;
		if (ctx_load(ctx, hook, l->l4off + i * 2, &old, 2) ||
		    ctx_store(ctx, hook, l->l4off + i * 2, &new, 2))
			return -1;
		from = old;
		to = new;
		if (ctx_l4_csum(ctx, hook, ft_l4_check_off(l),
				l->l4proto == IPPROTO_UDP, &from, &to, 2, 0))
			return -1;
	}
	return 0;
}

/* FT_SRC_ADDR, FT_DST_ADDR: nf_flow_snat_ip() and nf_flow_dnat_ip(), or
 * their IPv6 twins.
 */
static __always_inline int ft_addr(void *ctx, const enum xf_hook hook,
				   const struct edit_layout *l,
				   const struct xdp_flow_action *a)
{
	int dst = a->id == XDP_FLOW_ACTION_FT_DST_ADDR;
	int udp = l->l4proto == IPPROTO_UDP;
	__u32 from[4], to[4], off;

	__builtin_memcpy(to, a->ft_addr, sizeof(to));
	if (l->proto == bpf_htons(ETH_P_IP)) {
		off = l->noff + (dst ?
			__builtin_offsetof(struct iphdr, daddr) :
			__builtin_offsetof(struct iphdr, saddr));
		if (ctx_load(ctx, hook, off, from, 4) ||
		    ctx_store(ctx, hook, off, to, 4) ||
		    ctx_l3_csum(ctx, hook, l->noff +
				__builtin_offsetof(struct iphdr, check),
				from[0], to[0]) ||
		    ctx_l4_csum(ctx, hook, ft_l4_check_off(l), udp, from, to,
				4, BPF_F_PSEUDO_HDR))
			return -1;
		return 0;
	}
	off = l->noff + (dst ? __builtin_offsetof(struct ipv6hdr, daddr) :
			       __builtin_offsetof(struct ipv6hdr, saddr));
	if (ctx_load(ctx, hook, off, from, 16) ||
	    ctx_store(ctx, hook, off, to, 16) ||
	    ctx_l4_csum(ctx, hook, ft_l4_check_off(l), udp, from, to, 16,
			BPF_F_PSEUDO_HDR))
		return -1;
	return 0;
}

/*
 * A flowtable's rewrite @a (FT_ROUTE, FT_PORTS, FT_SRC_ADDR or
 * FT_DST_ADDR) at @hook: 0, or -1 when it failed half-way.
 */
static __always_inline int ft_act(void *ctx, const enum xf_hook hook,
				  const struct edit_layout *l,
				  const struct xdp_flow_action *a)
{
	if (a->id == XDP_FLOW_ACTION_FT_ROUTE)
		return ft_route(ctx, hook, l, a);
	if (a->id == XDP_FLOW_ACTION_FT_PORTS)
		return ft_ports(ctx, hook, l, a);
	return ft_addr(ctx, hook, l, a);
}

/*
 * ft_act() at the XDP hook, as a global function: its addresses and
 * checksum words stay out of the frame of xdp_flow_act(), whose other
 * calls (the csum action's) go deeper, and the verifier allows 512 bytes
 * of stack for a whole chain of calls.
 */
__noinline int xdp_flow_ft_act(struct xdp_md *ctx, const struct edit_layout *l,
			       const struct xdp_flow_action *a)
{
	if (!ctx || !l || !a)
		return -1;
	return ft_act(ctx, XF_XDP, l, a);
}

#endif /* _XDP_FLOW_FLOWTABLE_H */
