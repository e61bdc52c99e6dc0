// SPDX-License-Identifier: GPL-2.0
/*
 * The flowtable benchmark's anchor: an XDP program that forwards IPv4 TCP
 * and UDP through a software nftables flowtable with the kfunc Linux 6.11
 * added, bpf_xdp_flow_lookup() (net/netfilter/nf_flow_table_bpf.c). The
 * kernel looks the 5-tuple up in the flowtable bound to the receiving
 * device (one without flags offload) and refreshes the flow; the program
 * does what the flowtable's own software path does with the entry
 * (nf_flow_offload_ip_hook): NAT of addresses and ports, TTL - 1, the
 * Ethernet addresses (those the flow resolved, or for a flow that transmits
 * through the neighbour table, bpf_fib_lookup()'s, as xdp-tools'
 * xdp-forward does), the redirect. It passes to the stack whatever that
 * path would leave there (options, fragments, TTL <= 1, over the MTU, FIN
 * or RST, a flow being torn down) and what it does not do itself
 * (encapsulations, other transmit types).
 *
 * The kernel's structures are declared here only as far as the program
 * reads them; CO-RE puts each field where the running kernel has it.
 * Counters (the .bss array ft_stats) say what the program did.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>

#define AF_INET		2
#define IP_MF		0x2000
#define IP_OFFSET	0x1fff
#define NF_FLOW_SNAT	0
#define NF_FLOW_DNAT	1
#define NF_FLOW_TEARDOWN 3
#define FLOW_OFFLOAD_XMIT_NEIGH 1
#define FLOW_OFFLOAD_XMIT_DIRECT 3

struct flow_offload_tuple {
	struct in_addr src_v4;
	struct in_addr dst_v4;
	__be16 src_port;
	__be16 dst_port;
	__u16 dir:2, xmit_type:3, encap_num:2, tun_num:2;
	__u16 mtu;
	struct {
		__u32 ifidx;
		__u8 h_source[ETH_ALEN];
		__u8 h_dest[ETH_ALEN];
	} out;
} __attribute__((preserve_access_index));

struct flow_offload_tuple_rhash {
	struct flow_offload_tuple tuple;
} __attribute__((preserve_access_index));

struct flow_offload {
	struct flow_offload_tuple_rhash tuplehash[2];
	unsigned long flags;
	bool snat, dnat;
} __attribute__((preserve_access_index));

struct bpf_flowtable_opts {
	__s32 error;
};

extern struct flow_offload_tuple_rhash *
bpf_xdp_flow_lookup(struct xdp_md *ctx, struct bpf_fib_lookup *fib_tuple,
		    struct bpf_flowtable_opts *opts, __u32 opts_len) __ksym;

enum {
	FT_REDIRECT,	/* forwarded */
	FT_NO_FLOW,	/* TCP or UDP over IPv4 the flowtable does not hold */
	FT_STACK,	/* held, but left to the stack (see the top) */
	FT_OTHER,	/* not IPv4 TCP or UDP */
	FT_NSTATS,
};

__u64 ft_stats[FT_NSTATS];

static __always_inline void count(int what)
{
	__sync_fetch_and_add(&ft_stats[what], 1);
}

/* @p less @off bytes. In C the compiler may negate @off and add it, which
 * the verifier does not follow on a pointer.
 */
static __always_inline void *ptr_sub(void *p, __u64 off)
{
	asm volatile("%0 -= %1" : "+r"(p) : "r"(off));
	return p;
}

/* RFC 1624: the checksum after a 16-bit word of what it covers changed. */
static __always_inline __u16 csum_replace2(__u16 check, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~check + (__u16)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static __always_inline __u16 csum_replace4(__u16 check, __u32 old, __u32 new)
{
	check = csum_replace2(check, old >> 16, new >> 16);
	return csum_replace2(check, old & 0xffff, new & 0xffff);
}

/* The NAT of one address (and port) of the header: the IPv4 checksum
 * covers the address, TCP's and UDP's (when there is one) both. */
static __always_inline void nat(struct iphdr *iph, __u16 *l4check,
				__be32 *addr, __be32 new_addr,
				__be16 *port, __be16 new_port)
{
	if (*addr != new_addr) {
		iph->check = csum_replace4(iph->check, *addr, new_addr);
		if (*l4check)
			*l4check = csum_replace4(*l4check, *addr, new_addr);
		*addr = new_addr;
	}
	if (*port != new_port) {
		if (*l4check)
			*l4check = csum_replace2(*l4check, *port, new_port);
		*port = new_port;
	}
}

SEC("xdp")
int xdp_ft_lookup(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct bpf_flowtable_opts opts = {};
	struct flow_offload_tuple_rhash *th;
	struct bpf_fib_lookup fib = {};
	struct flow_offload_tuple *t, *o;
	struct ethhdr *eth = data;
	struct flow_offload *flow;
	__be16 *sport, *dport;
	__u16 *l4check, zero = 0;
	unsigned long flags;
	bool snat, dnat;
	struct iphdr *iph;
	__u8 h_dest[ETH_ALEN], h_source[ETH_ALEN];
	__be32 saddr, daddr;
	__u16 dir, xmit;
	__be16 sp, dp;
	__u32 ifidx;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		goto other;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > end)
		goto other;
	if (iph->protocol == IPPROTO_TCP) {
		struct tcphdr *th4 = (void *)(iph + 1);

		if ((void *)(th4 + 1) > end)
			goto other;
		if (iph->ihl != 5 || th4->fin || th4->rst)
			goto stack;
		sport = &th4->source;
		dport = &th4->dest;
		l4check = &th4->check;
	} else if (iph->protocol == IPPROTO_UDP) {
		struct udphdr *uh = (void *)(iph + 1);

		if ((void *)(uh + 1) > end)
			goto other;
		if (iph->ihl != 5)
			goto stack;
		sport = &uh->source;
		dport = &uh->dest;
		l4check = &uh->check;
	} else {
		goto other;
	}
	if (iph->frag_off & bpf_htons(IP_MF | IP_OFFSET) || iph->ttl <= 1)
		goto stack;

	fib.family = AF_INET;
	fib.l4_protocol = iph->protocol;
	fib.sport = *sport;
	fib.dport = *dport;
	fib.ipv4_src = iph->saddr;
	fib.ipv4_dst = iph->daddr;
	fib.ifindex = ctx->ingress_ifindex;
	th = bpf_xdp_flow_lookup(ctx, &fib, &opts, sizeof(opts));
	if (!th) {
		count(FT_NO_FLOW);
		return XDP_PASS;
	}

	t = &th->tuple;
	dir = BPF_CORE_READ_BITFIELD_PROBED(t, dir);
	xmit = BPF_CORE_READ_BITFIELD_PROBED(t, xmit_type);
	if ((xmit != FLOW_OFFLOAD_XMIT_DIRECT &&
	     xmit != FLOW_OFFLOAD_XMIT_NEIGH) ||
	    BPF_CORE_READ_BITFIELD_PROBED(t, encap_num))
		goto stack;
	if (bpf_core_field_exists(t->tun_num) &&
	    BPF_CORE_READ_BITFIELD_PROBED(t, tun_num))
		goto stack;
	if (bpf_ntohs(iph->tot_len) > BPF_CORE_READ(t, mtu))
		goto stack;
	/* the flow around this direction, and the other direction's tuple */
	if (dir) {
		flow = ptr_sub(th, bpf_core_field_offset(struct flow_offload,
							 tuplehash[1]));
		o = &flow->tuplehash[0].tuple;
	} else {
		flow = ptr_sub(th, bpf_core_field_offset(struct flow_offload,
							 tuplehash[0]));
		o = &flow->tuplehash[1].tuple;
	}
	flags = BPF_CORE_READ(flow, flags);
	if (flags & (1UL << NF_FLOW_TEARDOWN))
		goto stack;
	/* The NAT: the source NATed one way is the destination NATed the
	 * other (nf_flow_snat_ip(), nf_flow_dnat_ip()).
	 */
	snat = flags & (1UL << NF_FLOW_SNAT);
	dnat = flags & (1UL << NF_FLOW_DNAT);
	saddr = iph->saddr;
	daddr = iph->daddr;
	sp = *sport;
	dp = *dport;
	if ((snat && !dir) || (dnat && dir)) {
		saddr = BPF_CORE_READ(o, dst_v4.s_addr);
		sp = BPF_CORE_READ(o, dst_port);
	}
	if ((snat && dir) || (dnat && !dir)) {
		daddr = BPF_CORE_READ(o, src_v4.s_addr);
		dp = BPF_CORE_READ(o, src_port);
	}
	/* Where it goes: the addresses the flow resolved (direct), or the
	 * route and neighbour of the new destination, as neigh_xmit() finds
	 * them (neigh).
	 */
	if (xmit == FLOW_OFFLOAD_XMIT_DIRECT) {
		if (bpf_core_read(h_dest, ETH_ALEN, &t->out.h_dest) ||
		    bpf_core_read(h_source, ETH_ALEN, &t->out.h_source))
			goto stack;
		ifidx = BPF_CORE_READ(t, out.ifidx);
	} else {
		struct bpf_fib_lookup nb = {
			.family = AF_INET,
			.l4_protocol = iph->protocol,
			.tot_len = bpf_ntohs(iph->tot_len),
			.ipv4_src = saddr,
			.ipv4_dst = daddr,
			.ifindex = ctx->ingress_ifindex,
		};

		if (bpf_fib_lookup(ctx, &nb, sizeof(nb), 0) !=
		    BPF_FIB_LKUP_RET_SUCCESS)
			goto stack;
		__builtin_memcpy(h_dest, nb.dmac, ETH_ALEN);
		__builtin_memcpy(h_source, nb.smac, ETH_ALEN);
		ifidx = nb.ifindex;
	}

	/* From here the frame changes, and goes. */
	if (iph->protocol == IPPROTO_UDP && !*l4check)
		l4check = &zero;	/* no checksum stays none */
	nat(iph, l4check, &iph->saddr, saddr, sport, sp);
	nat(iph, l4check, &iph->daddr, daddr, dport, dp);
	/* TTL - 1: the checksum word holds TTL and protocol */
	iph->check = csum_replace2(iph->check, bpf_htons(iph->ttl << 8),
				   bpf_htons((iph->ttl - 1) << 8));
	iph->ttl--;
	__builtin_memcpy(eth->h_dest, h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_source, h_source, ETH_ALEN);
	count(FT_REDIRECT);
	return bpf_redirect(ifidx, 0);

stack:
	count(FT_STACK);
	return XDP_PASS;
other:
	count(FT_OTHER);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
