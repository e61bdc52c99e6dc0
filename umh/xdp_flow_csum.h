/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: the csum action at the XDP hook, as TC's act_csum
 * does it: whole checksums summed again over the frame, in a scratch map
 * of their own. The TC hook leaves the action to TC.
 *
 * May use: xdp_flow_parse.h (the layout of the frame).
 */
#ifndef _XDP_FLOW_CSUM_H
#define _XDP_FLOW_CSUM_H

#include "xdp_flow_parse.h"

static __always_inline __u32 csum_fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s;
}

#define CSUM_MAX_LEN	4096

/* A copy of the bytes to sum: bpf_csum_diff() wants a size a multiple of
 * 4 and at most 512, which on the frame itself the verifier can only check
 * for constant sizes; on a map value it checks bounded variable ones.
 */
struct csum_buf {
	__u8	b[CSUM_MAX_LEN + 4];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csum_buf);
} xf_csum_buf SEC(".maps");

/*
 * Ones' complement sum (unfolded, as csum_partial() returns it) of @len
 * bytes of the frame at @off, plus @seed. Returns -1 when the range is not
 * in the frame or longer than CSUM_MAX_LEN.
 */
__noinline __s64 xdp_flow_csum(struct xdp_md *ctx, __u32 off, __u32 len,
			       __u32 seed)
{
	struct csum_buf *cb;
	__u64 n, done, chunk;
	__u32 zero = 0, i;
	__s64 sum = seed;
	__u64 l;

	if (!ctx || len > CSUM_MAX_LEN)
		return -1;
	if (!len)
		return seed;
	/* 1 to CSUM_MAX_LEN in a way the verifier follows (6.1 learns no
	 * lower bound from "!= 0", and none at all from a check made on a
	 * zero-extended copy of the register the helper then gets).
	 */
	l = len - 1;
	asm volatile("%[l] &= 0xfff" : [l] "+r"(l));
	l += 1;
	cb = bpf_map_lookup_elem(&xf_csum_buf, &zero);
	if (!cb)
		return -1;
	if (bpf_xdp_load_bytes(ctx, off, cb->b, l))
		return -1;
	/* An odd tail is padded with zeros, as csum_partial() does. */
	cb->b[l] = 0;
	cb->b[l + 1] = 0;
	cb->b[l + 2] = 0;
	n = (l + 3) & ~3ULL;
	for (i = 0; i < CSUM_MAX_LEN / 512; i++) {
		done = i * 512;
		if (done >= n)
			break;
		chunk = n - done;
		/* The verifier does not see that done < n. */
		asm volatile("%[c] &= 0x1fff" : [c] "+r"(chunk));
		if (chunk > 512)
			chunk = 512;
		sum = bpf_csum_diff(NULL, 0, (void *)(cb->b + done), chunk, sum);
		if (sum < 0)
			return -1;
	}
	return sum;
}

struct pseudo4 {
	__be32	saddr;
	__be32	daddr;
	__u8	zero;
	__u8	proto;
	__be16	len;
};

struct pseudo6 {
	__u8	saddr[16];
	__u8	daddr[16];
	__be32	len;
	__u8	zero[3];
	__u8	proto;
};

/* The transport checksum at @l->l4off + @at, over @len bytes, @how: a
 * CSUM_PSEUDO* or none, CSUM_MANGLED0. Returns 0 or -1.
 */
#define CSUM_PSEUDO4	4	/* with the IPv4 pseudo header */
#define CSUM_PSEUDO6	6	/* with the IPv6 pseudo header */
#define CSUM_MANGLED0	0x100	/* a result of 0 is sent as 0xffff (UDP) */

__noinline int xdp_flow_csum_l4(struct xdp_md *ctx,
				const struct edit_layout *l, __u32 at,
				__u32 len, __u32 how)
{
	__u32 pseudo = how & 0xff, off, noff;
	void *data, *data_end;
	__s64 sum = 0;
	__u16 *field;
	__u32 res;

	/* A global function's pointers may be NULL for the verifier: no
	 * load before this test (a compiler may take a load as proof that
	 * the pointer is not NULL, and drop the test).
	 */
	if (!ctx || !l)
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	off = l->l4off & 0xfff;
	noff = l->noff & 0xff;
	field = data + off + (at & 0x1f);
	if ((void *)(field + 1) > data_end)
		return -1;
	*field = 0;
	if (pseudo == CSUM_PSEUDO4) {
		struct iphdr *iph = data + noff;
		struct pseudo4 ph = {};

		if ((void *)(iph + 1) > data_end)
			return -1;
		ph.saddr = iph->saddr;
		ph.daddr = iph->daddr;
		ph.proto = l->l4proto;
		ph.len = bpf_htons(len);
		sum = bpf_csum_diff(NULL, 0, (void *)&ph, sizeof(ph), 0);
	} else if (pseudo == CSUM_PSEUDO6) {
		struct ipv6hdr *ip6h = data + noff;
		struct pseudo6 ph = {};

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		__builtin_memcpy(ph.saddr, &ip6h->saddr, 16);
		__builtin_memcpy(ph.daddr, &ip6h->daddr, 16);
		ph.proto = l->l4proto;
		ph.len = bpf_htonl(len);
		sum = bpf_csum_diff(NULL, 0, (void *)&ph, sizeof(ph), 0);
	}
	if (sum < 0)
		return -1;
	sum = xdp_flow_csum(ctx, off, len, sum);
	if (sum < 0)
		return -1;
	res = ~csum_fold(sum) & 0xffff;
	if (!res && (how & CSUM_MANGLED0))
		res = 0xffff;
	/* The frame may not have moved: nothing changed its length. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	field = data + off + (at & 0x1f);
	if ((void *)(field + 1) > data_end)
		return -1;
	*field = res;
	return 0;
}

/* May act_csum recompute what @flags asks for on this frame, and would it
 * end as it does here? Returns 0, or -1 for "leave it to TC" (TC drops
 * such frames, or walks headers this code does not).
 */
static __always_inline int csum_check(const struct edit_layout *l,
				      __u32 flags)
{
	__u32 need = 0;

	if (l->proto != bpf_htons(ETH_P_IP) &&
	    l->proto != bpf_htons(ETH_P_IPV6))
		return 0;
	switch (l->l4proto) {
	case IPPROTO_TCP:
		if (flags & XDP_FLOW_CSUM_TCP)
			need = sizeof(struct tcphdr);
		break;
	case IPPROTO_UDP:
		if (flags & XDP_FLOW_CSUM_UDP)
			need = sizeof(struct udphdr);
		break;
	case IPPROTO_ICMP:
		if (l->proto == bpf_htons(ETH_P_IP) &&
		    (flags & XDP_FLOW_CSUM_ICMP))
			need = 8;
		break;
	case IPPROTO_ICMPV6:
		if (l->proto == bpf_htons(ETH_P_IPV6) &&
		    (flags & XDP_FLOW_CSUM_ICMP))
			need = 8;
		break;
	default:
		/* act_csum leaves other IPv6 next headers alone, and the
		 * parser passed IPv6 extension headers to the stack.
		 */
		return 0;
	}
	if (need && (!l->l4off || l->l4len < need || l->l4len > CSUM_MAX_LEN))
		return -1;
	return 0;
}

__noinline int xdp_flow_do_csum(struct xdp_md *ctx,
				const struct edit_layout *l, __u32 flags)
{
	void *data, *data_end;
	int err = 0, v6;

	if (!ctx || !l)
		return -1;
	v6 = l->proto == bpf_htons(ETH_P_IPV6);

	if (l->proto != bpf_htons(ETH_P_IP) && !v6)
		return 0;
	switch (l->l4proto) {
	case IPPROTO_TCP:
		if (flags & XDP_FLOW_CSUM_TCP)
			err = xdp_flow_csum_l4(ctx, l, 16, l->l4len,
					       v6 ? CSUM_PSEUDO6 : CSUM_PSEUDO4);
		break;
	case IPPROTO_UDP: {
		struct udphdr *uh;
		__u32 ulen;

		if (!(flags & XDP_FLOW_CSUM_UDP))
			break;
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		uh = data + (l->l4off & 0xfff);
		if ((void *)(uh + 1) > data_end)
			return -1;
		/* act_csum: IPv4 UDP without a checksum keeps none; a UDP
		 * length other than the IP one leaves the checksum zeroed.
		 */
		if (!v6 && !uh->check)
			break;
		ulen = bpf_ntohs(uh->len);
		if (ulen != l->l4len) {
			uh->check = 0;
			break;
		}
		err = xdp_flow_csum_l4(ctx, l, 6, ulen, CSUM_MANGLED0 |
				       (v6 ? CSUM_PSEUDO6 : CSUM_PSEUDO4));
		break;
	}
	case IPPROTO_ICMP:
		if (!v6 && (flags & XDP_FLOW_CSUM_ICMP))
			err = xdp_flow_csum_l4(ctx, l, 2, l->l4len, 0);
		break;
	case IPPROTO_ICMPV6:
		if (v6 && (flags & XDP_FLOW_CSUM_ICMP))
			err = xdp_flow_csum_l4(ctx, l, 2, l->l4len,
					       CSUM_PSEUDO6);
		break;
	}
	if (err || v6 || !(flags & XDP_FLOW_CSUM_IPV4HDR))
		return err;

	/* ip_send_check() */
	{
		struct iphdr *iph;
		__s64 sum;

		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		iph = data + (l->noff & 0xff);
		if ((void *)(iph + 1) > data_end)
			return -1;
		iph->check = 0;
		sum = xdp_flow_csum(ctx, l->noff & 0xff, l->ihl & 0x3c, 0);
		if (sum < 0)
			return -1;
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		iph = data + (l->noff & 0xff);
		if ((void *)(iph + 1) > data_end)
			return -1;
		iph->check = ~csum_fold(sum) & 0xffff;
	}
	return 0;
}

#endif /* _XDP_FLOW_CSUM_H */
