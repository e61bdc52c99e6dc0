/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: nftables flowtables, the software path's checks and
 * its NAT and routing rewrites.
 *
 * May use: xdp_flow_parse.h, xdp_flow_maps.h.
 */
#ifndef _XDP_FLOW_FLOWTABLE_H
#define _XDP_FLOW_FLOWTABLE_H

#include "xdp_flow_parse.h"
#include "xdp_flow_maps.h"

/* ------------------------------------------------- nftables flowtables
 *
 * A flowtable's rule (FT_ROUTE first) forwards as the software path does
 * (net/netfilter/nf_flow_table_ip.c): the frames it leaves to the stack go
 * there untouched, and the checksums are updated incrementally with the
 * kernel's own arithmetic (include/net/checksum.h) on the same values, so
 * that a rewritten frame carries the checksum the software path writes,
 * a wrong one included. XDP frames carry no CHECKSUM_PARTIAL state; the
 * TC hook hands the updates to the kernel's helpers, which know it.
 */
static __always_inline __u32 k_csum_add(__u32 a, __u32 b)
{
	__u32 r = a + b;

	return r + (r < b);
}

static __always_inline __u16 k_csum_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/* csum_replace4(), and inet_proto_csum_replace4() without CHECKSUM_PARTIAL */
static __always_inline __u16 k_csum_replace4(__u16 sum, __u32 from, __u32 to)
{
	return k_csum_fold(k_csum_add(k_csum_add(~(__u32)sum, ~from), to));
}

/* inet_proto_csum_replace16() without CHECKSUM_PARTIAL */
static __always_inline __u16 k_csum_replace16(__u16 sum, const __u32 *from,
					      const __u32 *to)
{
	__u64 s = (__u32)~(__u32)sum;
	int i;

	for (i = 0; i < 4; i++)
		s += (__u32)~from[i] + (__u64)to[i];
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	return k_csum_fold(s);
}

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

/* FT_ROUTE: the Ethernet addresses, then ip_decrease_ttl(). */
__noinline int xdp_flow_ft_route(struct xdp_md *ctx,
				 const struct edit_layout *l,
				 const struct xdp_flow_action *a)
{
	void *data, *data_end;

	if (!ctx || !l || !a)
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + ETH_ALEN * 2 > data_end)
		return -1;
	__builtin_memcpy(data, a->ft_route.eth_dst, ETH_ALEN);
	__builtin_memcpy(data + ETH_ALEN, a->ft_route.eth_src, ETH_ALEN);
	if (l->proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = data + (l->noff & 0xff);
		__u32 check;

		if ((void *)(iph + 1) > data_end)
			return -1;
		check = (__u16)iph->check;
		check += (__u16)bpf_htons(0x0100);
		iph->check = (__u16)(check + (check >= 0xffff));
		iph->ttl--;
	} else {
		struct ipv6hdr *ip6h = data + (l->noff & 0xff);

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		ip6h->hop_limit--;
	}
	return 0;
}

/*
 * The transport checksum's update for a rewrite, as the software path
 * makes it: TCP always, UDP unless it carries no checksum (0), and a UDP
 * result of 0 is sent as CSUM_MANGLED_0.
 */
static __always_inline int ft_l4_csum(struct xdp_md *ctx,
				      const struct edit_layout *l,
				      const __u32 *from, const __u32 *to,
				      int words)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u16 *check = data + (ft_l4_check_off(l) & 0xfff);

	if ((void *)(check + 1) > data_end)
		return -1;
	if (l->l4proto == IPPROTO_UDP && !*check)
		return 0;
	*check = words == 4 ? k_csum_replace16(*check, from, to) :
			      k_csum_replace4(*check, from[0], to[0]);
	if (l->l4proto == IPPROTO_UDP && !*check)
		*check = 0xffff;
	return 0;
}

/* FT_PORTS: nf_flow_snat_port() and nf_flow_dnat_port(). */
__noinline int xdp_flow_ft_ports(struct xdp_md *ctx,
				 const struct edit_layout *l,
				 const struct xdp_flow_action *a)
{
	void *data, *data_end;
	__be16 *ports;
	__u32 from, to;
	int i;

	if (!ctx || !l || !a)
		return -1;
	for (i = 0; i < 2; i++) {
		if (!(a->ft_ports.which & (i ? XDP_FLOW_FT_DPORT :
					       XDP_FLOW_FT_SPORT)))
			continue;
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		ports = data + (l->l4off & 0xfff);
		if ((void *)(ports + 2) > data_end)
			return -1;
		from = (__u16)ports[i];
		to = (__u16)(i ? a->ft_ports.dst : a->ft_ports.src);
		ports[i] = (__be16)to;
		if (ft_l4_csum(ctx, l, &from, &to, 1))
			return -1;
	}
	return 0;
}

/* FT_SRC_ADDR, FT_DST_ADDR: nf_flow_snat_ip() and nf_flow_dnat_ip(), or
 * their IPv6 twins.
 */
__noinline int xdp_flow_ft_addr(struct xdp_md *ctx,
				const struct edit_layout *l,
				const struct xdp_flow_action *a)
{
	void *data, *data_end;
	__u32 from[4], to[4];
	int dst;

	if (!ctx || !l || !a)
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	dst = a->id == XDP_FLOW_ACTION_FT_DST_ADDR;
	__builtin_memcpy(to, a->ft_addr, sizeof(to));
	if (l->proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = data + (l->noff & 0xff);
		__be32 *addr;

		if ((void *)(iph + 1) > data_end)
			return -1;
		addr = dst ? &iph->daddr : &iph->saddr;
		from[0] = *addr;
		*addr = to[0];
		iph->check = k_csum_replace4(iph->check, from[0], to[0]);
		return ft_l4_csum(ctx, l, from, to, 1);
	} else {
		struct ipv6hdr *ip6h = data + (l->noff & 0xff);
		void *addr;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		addr = dst ? (void *)&ip6h->daddr : (void *)&ip6h->saddr;
		__builtin_memcpy(from, addr, sizeof(from));
		__builtin_memcpy(addr, to, sizeof(to));
		return ft_l4_csum(ctx, l, from, to, 4);
	}
}

#endif /* _XDP_FLOW_FLOWTABLE_H */
