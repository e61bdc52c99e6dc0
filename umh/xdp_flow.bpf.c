// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the XDP program that executes offloaded flow rules.
 *
 * Parses a frame once into struct xdp_flow_key, finds the rule TC flower
 * would choose (the lowest order among all matching rules) by tuple-space
 * search, counts it and applies its action. Whatever it cannot parse with
 * certainty, and every miss, goes to the stack (XDP_PASS), where TC gives
 * the same outcome more slowly.
 *
 * Concurrency with the helper, which changes the tables while this runs:
 * - The mask list is never written in place. The helper fills a new inner
 *   map and swaps it into the single slot of xf_masks; the kernel waits for
 *   an RCU grace period on every map-in-map update, so once the swap returns
 *   no program still walks the old list. A reader sees one whole list.
 * - A mask's lowest order (xf_mask_min) is one aligned 64-bit word. The
 *   helper lowers it before a rule of a lower order joins the mask, and
 *   raises it only in a list swap, after the rules that held it low have
 *   left; so it never exceeds the order of a rule that is in the mask.
 * - Flow entries are written in place, in the order xdp_flow_dp.h gives;
 *   a lookup compares the whole entry it found.
 * - A rule entry is written before any flow entry points at it and cleared
 *   only after none does (and after a list swap, when its content changes);
 *   an entry caught half-cleared reads as not VALID, or has no usable
 *   action, and the packet goes to the stack.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xdp_flow_dp.h"
#include "xdp_flow_bench.h"
#include "xdp_flow_parse.h"
#include "xdp_flow_maps.h"
#include "xdp_flow_lookup.h"
#include "xdp_flow_counters.h"
#include "xdp_flow_rewrite.h"

/*
 * Mutants: test builds whose datapath is wrong on purpose, one fault each,
 * that the differential test must catch (make -C umh mutants, run by
 * selftests/guest/test_21_diff_mutants.sh). Never in a real build. Each
 * fault's #ifdef XDP_FLOW_MUTANT_<name> sits in the code it breaks:
 * xdp_flow_lookup.h, xdp_flow_counters.h and xdp_flow_rewrite.h.
 *   mask_dst    false match: IPv4 destinations masked one bit short
 *   never_tcp   never-match: TCP frames always missed (TC then runs the
 *               rules in software, with the same outcome: only counters
 *               that tell hardware from software can see it)
 *   prio_last   priority inversion: the last matching rule wins
 *   count_path  wrong counter: rules that led here by goto not counted
 *   vlan_tci    wrong rewrite byte: vlan push/modify flip a VID bit of
 *               the tag's first byte
 *   vlan_tpid   TPID confusion: vlan push/modify write 802.1ad where
 *               the action asked for 802.1Q, and 802.1Q for 802.1ad
 *   mirror_vlan wrong copy: mirrors send their copies before the rule's
 *               VLAN actions (TC hook: the XDP hook leaves mirrors to TC)
 */

/*
 * What both hooks do with a frame: parse it, find the rule TC would run
 * (flow_decide()) and apply the rule's rewrites and mirrors. Returns
 * XDP_DROP, XDP_REDIRECT or XF_DELIVER (TC hook only) for the hook to
 * carry out and count (@v, and *@tc_len, the bytes TC counts), XDP_PASS
 * when the frame goes on to the stack untouched, XDP_ABORTED when a
 * rewrite failed half-way (the frame must be dropped).
 */
static __always_inline int flow_run(void *ctx, const enum xf_hook hook,
				    struct flow_verdict *v, __u64 *tc_len)
{
	struct xdp_flow_key key __attribute__((aligned(8)));	/* parsed */
	__u64 tun;
	int ret, err;

	ret = parse_frame(ctx_data(ctx, hook), ctx_data_end(ctx, hook),
			  ctx_len(ctx, hook), ctx_ifindex(ctx, hook),
			  ctx_vlan_key(ctx, hook), (xdp_flow_word *)&key,
			  tc_len);
	/* The tunnel metadata, while a rule may match it. */
	if (ret != PARSE_OK)
		return XDP_PASS;
	tun = hook == XF_TC ? tun_words_used() : 0;
	if (tun && ctx_tunnel_key(ctx, hook, (xdp_flow_word *)&key, tun))
		return XDP_PASS;
	/* No skb helper takes a PPPoE header off (bpf_skb_adjust_room()
	 * wants IP): PPPoE frames are the XDP hook's.
	 */
	if (hook == XF_TC && key.ppp_proto)
		return XDP_PASS;

	ret = flow_decide(&key, v);
	if (ret == XDP_PASS)
		return XDP_PASS;
	/* XDP's bpf_redirect() goes straight to the target's ndo_xdp_xmit,
	 * past what mirred would run: only where that is nothing (xf_egress
	 * has the target), else the stack, before anything is rewritten.
	 */
	if (hook == XF_XDP && ret == XDP_REDIRECT &&
	    !bpf_map_lookup_elem(&xf_egress, &v->ifindex))
		return XDP_PASS;
	/* A PPPoE frame: a flowtable's rule's, or the stack's. */
	if (key.ppp_proto && (ret != XDP_REDIRECT || v->n < 2))
		return XDP_PASS;
	/* Only after a mirror, which the XDP hook leaves to the stack. */
	if (hook == XF_XDP && ret == XF_DELIVER)
		return XDP_PASS;
	/* mirred ingress: the TC hook's, where that is exact (edit() checks
	 * the rules of more actions, whose ptype may change the frame's type).
	 */
	if (ret == XDP_REDIRECT && v->ingress &&
	    (hook == XF_XDP ||
	     (v->n == 1 &&
	      !xdp_flow_tc_ingress_ok(ctx, v->ifindex,
				      ((struct __sk_buff *)ctx)->pkt_type))))
		return XDP_PASS;
	if (v->n > 1) {
		err = hook == XF_XDP ? xdp_flow_edit(ctx, v->rule_id) :
				       xdp_flow_tc_edit(ctx, v->rule_id);
		if (err > 0)
			return XDP_PASS;
		if (err < 0)
			return XDP_ABORTED;
	}
	/* The flowtable counts the packet without its PPPoE header. */
	if (key.ppp_proto)
		*tc_len -= sizeof(struct pppoe_ses);
	return ret;
}

SEC("xdp")
int xdp_flow(struct xdp_md *ctx)
{
	struct flow_verdict v = {};
	__u64 tc_len = 0;
	int ret;

	if (xf_cfg_bench)
		bench_rotate((void *)(long)ctx->data,
			     (void *)(long)ctx->data_end);
	ret = flow_run(ctx, XF_XDP, &v, &tc_len);
	if (ret != XDP_DROP && ret != XDP_REDIRECT)
		return ret;
	flow_count(&v, 1, tc_len);
	return ret == XDP_DROP ? XDP_DROP : bpf_redirect(v.ifindex, 0);
}

/* ------------------------------------------------------------ the TC hook
 *
 * The same core at TC ingress (attached through tcx, ahead of the classic
 * filters), for devices where frames arrive as skbs anyway (veth, tap):
 * there XDP would cost every other packet a conversion. Differences: the
 * kernel has already moved the outer VLAN tag into skb metadata, rewrites
 * go through skb helpers (xdp_flow_ctx.h), and the frame TC should see is
 * handed on with TCX_NEXT (the classic filters run next, exactly as
 * without xdp_flow).
 */
#ifndef TCX_NEXT
#define TCX_NEXT	-1
#define TCX_PASS	0
#endif
#define TC_ACT_SHOT	2

/*
 * Redirects @skb to @ifindex as TC's mirred egress redirect would: through
 * @ifindex's transmit path, or, where the module vouches for the veth and
 * its peer (xf_peers) and the frame is one the peer would take as its own,
 * straight into the peer (net/xdp_flow/peer.c has the conditions).
 */
static __always_inline long tc_redirect(struct __sk_buff *skb, __u32 ifindex)
{
	const union xdp_flow_peer mac_only = {
		.mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	union xdp_flow_peer *p, peer, dst;

	p = bpf_map_lookup_elem(&xf_peers, &ifindex);
	if (!p || data + sizeof(dst) > data_end)
		return bpf_redirect(ifindex, 0);
	peer.word = *(volatile __u64 *)&p->word;
	__builtin_memcpy(&dst, data, sizeof(dst));
	if ((dst.word ^ peer.word) & mac_only.word)
		return bpf_redirect(ifindex, 0);
	/* veth's forwarding check: P's MTU, its header and a tag */
	if (skb->len > (__u32)peer.mtu + ETH_HLEN + sizeof(struct vlan_tag) &&
	    !skb->gso_size)
		return bpf_redirect(ifindex, 0);
	/* Crossing namespaces clears it (skb_scrub_packet()). */
	skb->mark = 0;
	return bpf_redirect_peer(ifindex, 0);
}

SEC("tc")
int xdp_flow_tc(struct __sk_buff *skb)
{
	struct flow_verdict v = {};
	__u64 tc_len = 0;
	int ret;

	ret = flow_run(skb, XF_TC, &v, &tc_len);
	if (ret == XDP_ABORTED)
		return TC_ACT_SHOT;
	if (ret != XDP_DROP && ret != XDP_REDIRECT && ret != XF_DELIVER)
		return TCX_NEXT;
	flow_count(&v, skb->gso_segs ?: 1, tc_len);
	if (ret == XF_DELIVER)
		return TCX_PASS;
	if (ret == XDP_DROP)
		return TC_ACT_SHOT;
	if (v.ingress)
		return bpf_redirect(v.ifindex, BPF_F_INGRESS);
	return tc_redirect(skb, v.ifindex);
}

/* ------------------------------------------------------ the module's maps
 *
 * The module takes the maps it writes itself (the gate, the held rules, the
 * counters, the egress, peers and ingress: net/xdp_flow/dpmaps.c) from the
 * programs the helper names in HELLO, by the maps those programs use. These
 * two use them and do nothing else, and are never attached: the helper
 * loads them at once, and each hook's program above only when the first
 * device of that hook is attached, so that a helper start verifies one
 * program, not both.
 */
SEC("xdp")
int xf_maps(struct xdp_md *ctx)
{
	__u32 zero = 0;

	bpf_map_lookup_elem(&xf_gate, &zero);
	bpf_map_lookup_elem(&xf_held, &zero);
	bpf_map_lookup_elem(&xf_counters, &zero);
	bpf_map_lookup_elem(&xf_egress, &zero);
	return XDP_PASS;
}

SEC("tc")
int xf_maps_tc(struct __sk_buff *skb)
{
	__u32 zero = 0;

	bpf_map_lookup_elem(&xf_peers, &zero);
	bpf_map_lookup_elem(&xf_ingress, &zero);
	return TCX_NEXT;
}

char LICENSE[] SEC("license") = "GPL";
