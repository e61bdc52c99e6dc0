/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: the context layer. What the XDP hook and the TC hook
 * do differently to a frame, behind one set of calls, so that each
 * rewrite is written once for both (xdp_flow_flowtable.h,
 * xdp_flow_rewrite.h):
 *
 *                    XDP (struct xdp_md)         TC (struct __sk_buff)
 *   frame bytes      loaded and stored in place  bpf_skb_load_bytes(),
 *                                                bpf_skb_store_bytes()
 *   checksum update  the kernel's arithmetic on  bpf_l3_csum_replace(),
 *                    the field (an XDP frame     bpf_l4_csum_replace(),
 *                    has no CHECKSUM_PARTIAL)    which know CHECKSUM_PARTIAL
 *   outer VLAN tag   in the frame                in skb metadata (ingress)
 *   VLAN push, pop   the Ethernet addresses      bpf_skb_vlan_push(),
 *                    moved, the head adjusted    bpf_skb_vlan_pop()
 *   frame length     data_end - data: all of it  skb->len (the linear part
 *                                                may end before it); GSO
 *   tunnel metadata  none                        bpf_skb_get_tunnel_key(),
 *                                                bpf_skb_set_tunnel_key()
 *
 * The TC hook writes no packet byte itself: a program that does gets a
 * prologue from the verifier that unclones every cloned skb it runs on,
 * whether it rewrites that one or not.
 *
 * Each function takes the hook's context as void * and the hook as a
 * constant (XF_XDP or XF_TC) and is inlined, so clang keeps only that
 * hook's branch. A global function (the verifier checks it once) takes
 * the context with its own type and passes it on.
 *
 * May use: xdp_flow_parse.h (header layouts, is_vlan()).
 */
#ifndef _XDP_FLOW_CTX_H
#define _XDP_FLOW_CTX_H

#include "xdp_flow_parse.h"

enum xf_hook {
	XF_XDP,
	XF_TC,
};

static __always_inline void *ctx_data(void *ctx, const enum xf_hook hook)
{
	if (hook == XF_TC)
		return (void *)(long)((struct __sk_buff *)ctx)->data;
	return (void *)(long)((struct xdp_md *)ctx)->data;
}

static __always_inline void *ctx_data_end(void *ctx, const enum xf_hook hook)
{
	if (hook == XF_TC)
		return (void *)(long)((struct __sk_buff *)ctx)->data_end;
	return (void *)(long)((struct xdp_md *)ctx)->data_end;
}

/* The frame's length. */
static __always_inline __u32 ctx_len(void *ctx, const enum xf_hook hook)
{
	if (hook == XF_TC)
		return ((struct __sk_buff *)ctx)->len;
	return ctx_data_end(ctx, hook) - ctx_data(ctx, hook);
}

/* The device the frame came in on. */
static __always_inline __u32 ctx_ifindex(void *ctx, const enum xf_hook hook)
{
	if (hook == XF_TC)
		return ((struct __sk_buff *)ctx)->ingress_ifindex;
	return ((struct xdp_md *)ctx)->ingress_ifindex;
}

/* A GSO skb's segment size; 0 for a frame sent as it is (all of XDP's). */
static __always_inline __u32 ctx_gso_size(void *ctx, const enum xf_hook hook)
{
	if (hook == XF_TC)
		return ((struct __sk_buff *)ctx)->gso_size;
	return 0;
}

/* Whether data .. data_end is the whole frame: for XDP (the program takes
 * no multi-buffer frames), not for an skb, whose payload may lie beyond.
 */
static __always_inline int ctx_all_at_hand(const enum xf_hook hook)
{
	return hook == XF_XDP;
}

/*
 * Copies @len bytes of the frame from @off to @to. Returns 0, or -1 when
 * they are not in it.
 */
static __always_inline int ctx_load(void *ctx, const enum xf_hook hook,
				    __u32 off, void *to, const __u32 len)
{
	void *p;

	if (hook == XF_TC)
		return bpf_skb_load_bytes(ctx, off, to, len) ? -1 : 0;
	p = ctx_data(ctx, hook) + (off & 0xfff);
	if (p + len > ctx_data_end(ctx, hook))
		return -1;
	__builtin_memcpy(to, p, len);
	return 0;
}

/* Writes the @len bytes at @from into the frame at @off: 0, or -1. */
static __always_inline int ctx_store(void *ctx, const enum xf_hook hook,
				     __u32 off, const void *from,
				     const __u32 len)
{
	void *p;

	if (hook == XF_TC)
		return bpf_skb_store_bytes(ctx, off, from, len, 0) ? -1 : 0;
	p = ctx_data(ctx, hook) + (off & 0xfff);
	if (p + len > ctx_data_end(ctx, hook))
		return -1;
	__builtin_memcpy(p, from, len);
	return 0;
}

/*
 * XDP's checksum updates: the kernel's own arithmetic
 * (include/net/checksum.h) on the same values, so that a rewritten frame
 * carries the checksum the software path writes, a wrong one included.
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

/*
 * The IPv4 header checksum at @off, updated for 4 bytes of the header
 * that changed from @from to @to (csum_replace4()). Returns 0, or -1.
 */
static __always_inline int ctx_l3_csum(void *ctx, const enum xf_hook hook,
				       __u32 off, __u32 from, __u32 to)
{
	__u16 *check;

	if (hook == XF_TC)
		return bpf_l3_csum_replace(ctx, off, from, to, 4) ? -1 : 0;
	check = ctx_data(ctx, hook) + (off & 0xfff);
	if ((void *)(check + 1) > ctx_data_end(ctx, hook))
		return -1;
	*check = k_csum_replace4(*check, from, to);
	return 0;
}

/*
 * The TCP or UDP checksum at @off, updated for @size bytes (2, 4 or 16)
 * that changed from @from to @to, as inet_proto_csum_replace*() does it:
 * @pseudo (BPF_F_PSEUDO_HDR) if they are in the pseudo header too; for
 * UDP (@udp), a zero checksum (none) stays zero and a zero result is sent
 * as CSUM_MANGLED_0. Returns 0, or -1.
 */
static __always_inline int ctx_l4_csum(void *ctx, const enum xf_hook hook,
				       __u32 off, int udp, const __u32 *from,
				       const __u32 *to, const __u32 size,
				       const __u64 pseudo)
{
	__u64 mm0 = udp ? BPF_F_MARK_MANGLED_0 : 0;
	__u16 *check;
	__s64 diff;

	if (hook == XF_TC && size == 16) {
		diff = bpf_csum_diff((void *)from, 16, (void *)to, 16, 0);
		if (diff < 0 ||
		    bpf_l4_csum_replace(ctx, off, 0, diff, pseudo | mm0))
			return -1;
		return 0;
	}
	if (hook == XF_TC)
		return bpf_l4_csum_replace(ctx, off, from[0], to[0],
					   pseudo | mm0 | size) ? -1 : 0;
	check = ctx_data(ctx, hook) + (off & 0xfff);
	if ((void *)(check + 1) > ctx_data_end(ctx, hook))
		return -1;
	if (udp && !*check)
		return 0;
	*check = size == 16 ? k_csum_replace16(*check, from, to) :
			      k_csum_replace4(*check, from[0], to[0]);
	if (udp && !*check)
		*check = 0xffff;
	return 0;
}

/*
 * XDP: room for @n bytes (a multiple of 4) of header after the Ethernet
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
 * XDP: takes out the @n bytes (a multiple of 4) after the Ethernet
 * addresses, which the caller found in @data (the frame's start): the
 * addresses move over them. Returns 0, or -1 when the frame is left
 * half-way.
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

/*
 * The outer VLAN tag where the kernel holds it outside the frame: 1 and
 * its TCI, or 0. At TC ingress the outermost tag is always in skb
 * metadata (the frame starts with the next one); XDP frames carry theirs.
 */
static __always_inline int ctx_vlan_meta(void *ctx, const enum xf_hook hook,
					 __u16 *tci)
{
	struct __sk_buff *skb = ctx;

	if (hook == XF_XDP || !skb->vlan_present)
		return 0;
	*tci = skb->vlan_tci;
	return 1;
}

/*
 * The key's outer VLAN tag (its KEY_AT() bits in word 2) where the kernel
 * holds the tag outside the frame, else 0: the parser finds it there.
 */
static __always_inline __u64 ctx_vlan_key(void *ctx, const enum xf_hook hook)
{
	struct __sk_buff *skb = ctx;

	if (hook == XF_XDP || !skb->vlan_present)
		return 0;
	return KEY_AT((__be16)skb->vlan_proto, vlan_tpid, 2) |
	       KEY_AT(bpf_htons(skb->vlan_tci & ~VLAN_DEI), vlan_tci, 2);
}

/*
 * The VLAN actions, each as act_vlan does it. At TC they are skb helpers:
 * skb_vlan_pop() moves the next tag into metadata, so pop then push is
 * TC's modify.
 */
static __always_inline int ctx_vlan_push(void *ctx, const enum xf_hook hook,
					 __be16 proto, __u16 tci)
{
	__be16 *h;

	if (hook == XF_TC)
		return bpf_skb_vlan_push(ctx, proto, tci) ? -1 : 0;
	h = mac_push(ctx, sizeof(struct vlan_tag));
	if (!h)
		return -1;
	h[6] = proto;
	h[7] = bpf_htons(tci);
	return 0;
}

/*
 * MIRROR, MIRROR_INGRESS: a copy of the frame as it is now out of
 * @ifindex's transmit path, or (@flags BPF_F_INGRESS) into its receive
 * path, as TC's mirred mirror sends it (TC hook only; XDP has no copy of
 * a frame to send). Whatever becomes of the copy, the frame goes on, as
 * TC's does.
 */
static __always_inline int ctx_mirror(void *ctx, const enum xf_hook hook,
				      __u32 ifindex, __u64 flags)
{
	if (hook != XF_TC)
		return -1;
	bpf_clone_redirect(ctx, ifindex, flags);
	return 0;
}

/* PTYPE: skb->pkt_type, which only this helper writes (TC hook only). */
static __always_inline int ctx_set_ptype(void *ctx, const enum xf_hook hook,
					 __u32 type)
{
	if (hook != XF_TC)
		return -1;
	return bpf_skb_change_type(ctx, type) ? -1 : 0;
}

/*
 * TUNNEL_SET: the metadata TC's tunnel_key set gives the frame, for the
 * tunnel device a redirect or mirror sends it to next (TC hook only; the
 * uapi header's struct xdp_flow_action says which). bpf_skb_set_tunnel_key()
 * sets the key, checksum and no-cache flags, and takes the checksum and
 * don't fragment choices from @flags.
 */
static __always_inline int ctx_tunnel_set(void *ctx, const enum xf_hook hook,
					  const struct xdp_flow_action *a)
{
	struct bpf_tunnel_key k = {
		.tunnel_id = a->tunnel.id,
		.remote_ipv4 = bpf_ntohl(a->tunnel.dst),
		.tunnel_tos = a->tunnel.tos,
		.tunnel_ttl = a->tunnel.ttl,
		.local_ipv4 = bpf_ntohl(a->tunnel.src),
	};
	__u64 flags = 0;

	if (hook != XF_TC)
		return -1;
	if (!(a->tunnel.flags & XDP_FLOW_TUN_CSUM))
		flags |= BPF_F_ZERO_CSUM_TX;
	if (a->tunnel.flags & XDP_FLOW_TUN_DF)
		flags |= BPF_F_DONT_FRAGMENT;
	return bpf_skb_set_tunnel_key(ctx, &k, sizeof(k), flags) ? -1 : 0;
}

/*
 * TUNNEL_OPTS: the Geneve options of the metadata TUNNEL_SET just set
 * (TC hook only), with bpf_skb_set_tunnel_opt().
 */
static __always_inline int ctx_tunnel_opts(void *ctx, const enum xf_hook hook,
					   const struct xdp_flow_action *a)
{
	void *data = (void *)a->tun_opts.data;
	long err;

	if (hook != XF_TC)
		return -1;
	/* Constant sizes: the verifier wants the helper's size bounded
	 * away from 0, which clang's merged range checks do not show it.
	 */
	switch (a->tun_opts.len) {
	case 4:
		err = bpf_skb_set_tunnel_opt(ctx, data, 4);
		break;
	case 8:
		err = bpf_skb_set_tunnel_opt(ctx, data, 8);
		break;
	case 12:
		err = bpf_skb_set_tunnel_opt(ctx, data, 12);
		break;
	default:
		return -1;
	}
	return err ? -1 : 0;
}
_Static_assert(XDP_FLOW_TUN_OPTS_MAX == 12, "ctx_tunnel_opts() has a case a size");

/* bpf_skb_get_tunnel_key()'s error for a frame without metadata, and for
 * metadata of the other family than asked for (any other sends the frame
 * to the stack); bpf_skb_get_tunnel_opt()'s for metadata without options.
 */
#define XF_EINVAL	22
#define XF_EPROTO	71
#define XF_ENOENT	2
/* TUNNEL_GENEVE_OPT, as bpf_skb_get_tunnel_key() gives the metadata's
 * flags (BPF_F_TUNINFO_FLAGS, Linux 6.0)
 */
#define XF_TUNNEL_GENEVE_OPT	bpf_htons(0x0800)
_Static_assert(sizeof(struct bpf_tunnel_key) == 44,
	       "bpf_skb_get_tunnel_key() gives the local address (Linux 6.0)");

/*
 * The metadata's tunnel options into @key's enc_opt_len and enc_opts, as
 * flower's dissector reads them: their length, their first bytes, zeros
 * past their end. bpf_skb_get_tunnel_opt() gives all of them or none, so
 * it reads into a buffer as large as any (xf_opt_buf). The key does not
 * hold the options' kind, which flower matches too: options of another
 * kind than Geneve's (@flags, the metadata's) send the frame to the
 * stack.
 */
static __always_inline int tc_tunnel_opts(struct __sk_buff *skb,
					  struct xdp_flow_key *key,
					  __be16 flags)
{
	__u32 zero = 0;
	__u8 *b = bpf_map_lookup_elem(&xf_opt_buf, &zero);
	long len;

	if (!b)
		return -1;
	len = bpf_skb_get_tunnel_opt(skb, b, XDP_FLOW_OPT_BUF);
	if (len == -XF_ENOENT)
		return 0;
	if (len < 0 || (len && !(flags & XF_TUNNEL_GENEVE_OPT)))
		return -1;
	key->enc_opt_len = len;
	__builtin_memcpy(key->enc_opts, b, XDP_FLOW_ENC_OPTS_LEN);
	return 0;
}

/*
 * The tunnel metadata the frame carries into the key's enc_ fields, as
 * flower's dissector reads it (skb_flow_dissect_tunnel_info()): the TC
 * hook's, its options too where @tun has XDP_FLOW_GEN_OPTS. Outer IPv6
 * addresses go into the key as their digests, and whole into xf_enc6_buf.
 * A function of its own, so that the 44 bytes it reads stay off the stack
 * of the deepest call chain (Linux 6.1 allows 512 bytes in all).
 */
__noinline int xdp_flow_tc_tunnel_key(struct __sk_buff *skb,
				      struct xdp_flow_key *key, __u64 tun)
{
	struct xdp_flow_enc6 *e6;
	struct bpf_tunnel_key k;
	__u32 zero = 0;
	long err;

	if (!skb || !key)
		return -1;
	err = bpf_skb_get_tunnel_key(skb, &k, sizeof(k), BPF_F_TUNINFO_FLAGS);
	if (err == -XF_EINVAL)
		return 0;
	if (err && err != -XF_EPROTO)
		return -1;
	if (err) {
		err = bpf_skb_get_tunnel_key(skb, &k, sizeof(k),
					     BPF_F_TUNINFO_FLAGS |
					     BPF_F_TUNINFO_IPV6);
		e6 = bpf_map_lookup_elem(&xf_enc6_buf, &zero);
		if (err || !e6)
			return -1;
		__builtin_memcpy(e6->src, k.remote_ipv6, sizeof(e6->src));
		__builtin_memcpy(e6->dst, k.local_ipv6, sizeof(e6->dst));
		key->enc_addr = XDP_FLOW_ENC_IPV6;
		key->enc_src = xdp_flow_enc6_digest(e6->src);
		key->enc_dst = xdp_flow_enc6_digest(e6->dst);
	} else {
		key->enc_addr = XDP_FLOW_ENC_IPV4;
		key->enc_src = bpf_htonl(k.remote_ipv4);
		key->enc_dst = bpf_htonl(k.local_ipv4);
	}
	key->enc_key_id = bpf_htonl(k.tunnel_id);
	key->enc_tos = k.tunnel_tos;
	key->enc_ttl = k.tunnel_ttl;
	if (tun & XDP_FLOW_GEN_OPTS)
		return tc_tunnel_opts(skb, key, k.tunnel_flags);
	return 0;
}

/* The tunnel metadata into the key (@kw's words 11 to 13 were left 0
 * by the parser), what @tun (tun_words_used()) asks for; an XDP frame
 * has none.
 */
static __always_inline int ctx_tunnel_key(void *ctx, const enum xf_hook hook,
					  xdp_flow_word *kw, __u64 tun)
{
	if (hook != XF_TC)
		return 0;
	return xdp_flow_tc_tunnel_key(ctx, (struct xdp_flow_key *)kw, tun);
}

/* Returns 0 also when there is no tag to pop (TC: nothing to pop). */
static __always_inline int ctx_vlan_pop(void *ctx, const enum xf_hook hook)
{
	void *data, *data_end;

	if (hook == XF_TC)
		return bpf_skb_vlan_pop(ctx) ? -1 : 0;
	data = ctx_data(ctx, hook);
	data_end = ctx_data_end(ctx, hook);
	if (data + ETH_HLEN + sizeof(struct vlan_tag) > data_end)
		return 0;
	if (!is_vlan(((__be16 *)data)[6]))
		return 0;
	return mac_pull(ctx, data, sizeof(struct vlan_tag));
}

/* The outer VLAN tag: 1 and its TCI, or 0 if there is none. */
static __always_inline int ctx_vlan_get(void *ctx, const enum xf_hook hook,
					__u16 *tci)
{
	void *data, *data_end;
	__be16 *h;

	if (hook == XF_TC)
		return ctx_vlan_meta(ctx, hook, tci);
	data = ctx_data(ctx, hook);
	data_end = ctx_data_end(ctx, hook);
	h = data;
	if (data + ETH_HLEN + sizeof(struct vlan_tag) > data_end)
		return 0;
	if (!is_vlan(h[6]))
		return 0;
	*tci = bpf_ntohs(h[7]);
	return 1;
}

/* The outer tag ctx_vlan_get() found, made @proto and @tci: 0, or -1. */
static __always_inline int ctx_vlan_set(void *ctx, const enum xf_hook hook,
					__be16 proto, __u16 tci)
{
	void *data, *data_end;
	__be16 *h;

	if (hook == XF_TC)
		return bpf_skb_vlan_pop(ctx) ||
		       bpf_skb_vlan_push(ctx, proto, tci) ? -1 : 0;
	data = ctx_data(ctx, hook);
	data_end = ctx_data_end(ctx, hook);
	h = data;
	if (data + ETH_HLEN + sizeof(struct vlan_tag) > data_end)
		return -1;
	h[6] = proto;
	h[7] = bpf_htons(tci);
	return 0;
}

#endif /* _XDP_FLOW_CTX_H */
