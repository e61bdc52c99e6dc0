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
 */

SEC("xdp")
int xdp_flow(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xdp_flow_key key __attribute__((aligned(8)));	/* parsed */
	struct flow_verdict v = {};
	__u64 tc_len = 0;
	int ret;

	if (xf_cfg_bench)
		bench_rotate(data, data_end);
	ret = parse_frame(data, data_end, data_end - data,
			  ctx->ingress_ifindex, 0, (xdp_flow_word *)&key,
			  &tc_len);
	if (ret != PARSE_OK)
		return ret;

	ret = flow_decide(&key, &v);
	if (ret == XDP_PASS)
		return XDP_PASS;
	/* bpf_redirect() goes straight to the target's ndo_xdp_xmit, past
	 * what mirred would run: only where that is nothing (xf_egress has
	 * the target), else the stack, before anything is rewritten.
	 */
	if (ret == XDP_REDIRECT && !bpf_map_lookup_elem(&xf_egress, &v.ifindex))
		return XDP_PASS;
	/* A PPPoE frame: a flowtable's rule's, or the stack's. */
	if (key.ppp_proto && (ret != XDP_REDIRECT || v.n < 2))
		return XDP_PASS;
	if (ret == XDP_REDIRECT && v.n > 1) {
		int err = xdp_flow_edit(ctx, v.rule_id);

		if (err > 0)
			return XDP_PASS;
		if (err < 0)
			return XDP_ABORTED;
	}
	/* The flowtable counts the packet without its PPPoE header. */
	if (key.ppp_proto)
		tc_len -= sizeof(struct pppoe_ses);
	flow_count(&v, 1, tc_len);
	return ret == XDP_DROP ? XDP_DROP : bpf_redirect(v.ifindex, 0);
}

/* ------------------------------------------------------------ the TC hook
 *
 * The same core at TC ingress (attached through tcx, ahead of the classic
 * filters), for devices where frames arrive as skbs anyway (veth, tap):
 * there XDP would cost every other packet a conversion. Differences: the
 * kernel has already moved the outer VLAN tag into skb metadata, rewrites
 * go through skb helpers, and the frame TC should see is handed on with
 * TCX_NEXT (the classic filters run next, exactly as without xdp_flow).
 */
#ifndef TCX_NEXT
#define TCX_NEXT	-1
#endif
#define TC_ACT_SHOT	2

/*
 * A flowtable's rewrites at TC ingress, through the helpers that update
 * the checksums as inet_proto_csum_replace*() do, CHECKSUM_PARTIAL
 * included (the addresses with the pseudo header, ports without; UDP's
 * zero checksum kept, a zero result sent as CSUM_MANGLED_0).
 */
__noinline int xdp_flow_tc_ft_act(struct __sk_buff *skb,
				  const struct edit_layout *l,
				  const struct xdp_flow_action *a)
{
	__u32 mm0, l4check, from[4], to[4];
	__u16 check;
	__u8 ttl;
	__s64 diff;
	int i, dst;

	if (!skb || !l || !a)
		return -1;
	mm0 = l->l4proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;
	l4check = ft_l4_check_off(l);
	switch (a->id) {
	case XDP_FLOW_ACTION_FT_ROUTE:
		if (bpf_skb_store_bytes(skb, 0, a->ft_route.eth_dst,
					ETH_ALEN * 2, 0))
			return -1;
		ttl = l->ttl - 1;
		if (l->proto == bpf_htons(ETH_P_IPV6))
			return bpf_skb_store_bytes(skb, l->noff +
				__builtin_offsetof(struct ipv6hdr, hop_limit),
				&ttl, 1, 0) ? -1 : 0;
		/* ip_decrease_ttl() */
		if (bpf_skb_load_bytes(skb, l->noff +
				       __builtin_offsetof(struct iphdr, check),
				       &check, 2))
			return -1;
		from[0] = check;
		from[0] += (__u16)bpf_htons(0x0100);
		check = from[0] + (from[0] >= 0xffff);
		if (bpf_skb_store_bytes(skb, l->noff +
					__builtin_offsetof(struct iphdr, check),
					&check, 2, 0) ||
		    bpf_skb_store_bytes(skb, l->noff +
					__builtin_offsetof(struct iphdr, ttl),
					&ttl, 1, 0))
			return -1;
		return 0;
	case XDP_FLOW_ACTION_FT_PORTS:
		for (i = 0; i < 2; i++) {
			__be16 old, new;

			if (!(a->ft_ports.which & (i ? XDP_FLOW_FT_DPORT :
						       XDP_FLOW_FT_SPORT)))
				continue;
			new = i ? a->ft_ports.dst : a->ft_ports.src;
			if (bpf_skb_load_bytes(skb, l->l4off + i * 2, &old, 2) ||
			    bpf_skb_store_bytes(skb, l->l4off + i * 2, &new, 2, 0) ||
			    bpf_l4_csum_replace(skb, l4check, old, new, mm0 | 2))
				return -1;
		}
		return 0;
	case XDP_FLOW_ACTION_FT_SRC_ADDR:
	case XDP_FLOW_ACTION_FT_DST_ADDR:
		dst = a->id == XDP_FLOW_ACTION_FT_DST_ADDR;
		__builtin_memcpy(to, a->ft_addr, sizeof(to));
		if (l->proto == bpf_htons(ETH_P_IP)) {
			__u32 off = l->noff + (dst ?
				__builtin_offsetof(struct iphdr, daddr) :
				__builtin_offsetof(struct iphdr, saddr));

			if (bpf_skb_load_bytes(skb, off, from, 4) ||
			    bpf_skb_store_bytes(skb, off, to, 4, 0) ||
			    bpf_l3_csum_replace(skb, l->noff +
				__builtin_offsetof(struct iphdr, check),
				from[0], to[0], 4) ||
			    bpf_l4_csum_replace(skb, l4check, from[0], to[0],
						BPF_F_PSEUDO_HDR | mm0 | 4))
				return -1;
			return 0;
		} else {
			__u32 off = l->noff + (dst ?
				__builtin_offsetof(struct ipv6hdr, daddr) :
				__builtin_offsetof(struct ipv6hdr, saddr));

			if (bpf_skb_load_bytes(skb, off, from, 16) ||
			    bpf_skb_store_bytes(skb, off, to, 16, 0))
				return -1;
			diff = bpf_csum_diff(from, 16, to, 16, 0);
			if (diff < 0 ||
			    bpf_l4_csum_replace(skb, l4check, 0, diff,
						BPF_F_PSEUDO_HDR | mm0))
				return -1;
			return 0;
		}
	case XDP_FLOW_ACTION_VLAN_PUSH:
		return bpf_skb_vlan_push(skb, MUTANT_TPID(a->vlan.proto),
					 MUTANT_TCI(a->vlan.tci)) ? -1 : 0;
	case XDP_FLOW_ACTION_VLAN_POP:
		return bpf_skb_vlan_pop(skb) ? -1 : 0;
	}
	return -1;
}

/* A flowtable's rule at TC ingress: the same checks as in XDP, on the
 * skb's headers (a GSO skb's segments must fit the MTU). Returns as
 * tc_edit().
 */
__noinline int xdp_flow_tc_ft_edit(struct __sk_buff *skb, __u32 rule_id)
{
	struct xdp_flow_dp_rule *rule;
	struct edit_layout l = {};
	void *data, *data_end;
	__u32 i, id, n;

	if (!skb)
		return 1;
	rule = bpf_map_lookup_elem(&xf_rules, &rule_id);
	if (!rule)
		return 1;
	n = rule->nr_actions;
	if (n < 2 || n > XDP_FLOW_MAX_ACTIONS)
		return 1;
	n--;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (edit_layout(data, data_end, &l, 0))
		return 1;
	if (skb->vlan_present)
		l.vlan_dei = !!(skb->vlan_tci & VLAN_DEI);
	if (ft_conn_ended(rule, &l) ||
	    ft_route_check(&l, &rule->actions[0], skb->len, skb->gso_size))
		return 1;
	for (i = 1; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		id = rule->actions[i].id;
		if (id != XDP_FLOW_ACTION_FT_PORTS &&
		    id != XDP_FLOW_ACTION_FT_SRC_ADDR &&
		    id != XDP_FLOW_ACTION_FT_DST_ADDR &&
		    id != XDP_FLOW_ACTION_VLAN_PUSH &&
		    id != XDP_FLOW_ACTION_VLAN_POP)
			return 1;
	}
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		if (xdp_flow_tc_ft_act(skb, &l, &rule->actions[i]))
			return -1;
	}
	return 0;
}

/*
 * Applies rule @rule_id's rewrites to @skb: VLAN push, pop and modify, with
 * the skb helpers that TC's vlan action uses. Returns 0 when done, 1 when
 * the frame is left to TC untouched (a rewrite the hook does not do here:
 * pedit and csum), -1 when a rewrite failed half-way (drop the frame).
 */
static __always_inline int tc_edit(struct __sk_buff *skb, __u32 rule_id)
{
	struct xdp_flow_dp_rule *rule;
	struct xdp_flow_action *a;
	__u32 i, n, tci;

	rule = bpf_map_lookup_elem(&xf_rules, &rule_id);
	if (!rule)
		return 1;
	n = rule->nr_actions;
	if (n < 2 || n > XDP_FLOW_MAX_ACTIONS)
		return 1;
	n--;
	if (rule->actions[0].id == XDP_FLOW_ACTION_FT_ROUTE)
		return xdp_flow_tc_ft_edit(skb, rule_id);
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		a = &rule->actions[i];
		if (a->id != XDP_FLOW_ACTION_VLAN_PUSH &&
		    a->id != XDP_FLOW_ACTION_VLAN_POP &&
		    a->id != XDP_FLOW_ACTION_VLAN_MODIFY)
			return 1;
	}
	/*
	 * At ingress the outermost tag of a tagged frame is always in
	 * metadata, and skb_vlan_pop() moves the next one there: so pop then
	 * push is TC's modify, and each step does what act_vlan does.
	 */
	for (i = 0; i < XDP_FLOW_MAX_ACTIONS - 1; i++) {
		if (i >= n)
			break;
		a = &rule->actions[i];
		switch (a->id) {
		case XDP_FLOW_ACTION_VLAN_PUSH:
			if (bpf_skb_vlan_push(skb, MUTANT_TPID(a->vlan.proto),
					      MUTANT_TCI(a->vlan.tci)))
				return -1;
			break;
		case XDP_FLOW_ACTION_VLAN_POP:
			if (bpf_skb_vlan_pop(skb))
				return -1;
			break;
		case XDP_FLOW_ACTION_VLAN_MODIFY:
			if (!skb->vlan_present)
				break;	/* TC: no tag, nothing to modify */
			tci = (skb->vlan_tci & a->vlan.keep) | a->vlan.tci;
			if (bpf_skb_vlan_pop(skb) ||
			    bpf_skb_vlan_push(skb, MUTANT_TPID(a->vlan.proto),
					      MUTANT_TCI(tci)))
				return -1;
			break;
		}
	}
	return 0;
}

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
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct xdp_flow_key key __attribute__((aligned(8)));	/* parsed */
	struct flow_verdict v = {};
	__u64 tc_len = 0, vlan = 0;
	int ret;

	if (skb->vlan_present)
		vlan = KEY_AT((__be16)skb->vlan_proto, vlan_tpid, 2) |
		       KEY_AT(bpf_htons(skb->vlan_tci & ~VLAN_DEI), vlan_tci, 2);
	ret = parse_frame(data, data_end, skb->len, skb->ingress_ifindex, vlan,
			  (xdp_flow_word *)&key, &tc_len);
	/* No skb helper takes a PPPoE header off (bpf_skb_adjust_room()
	 * wants IP): PPPoE frames are the XDP hook's.
	 */
	if (ret != PARSE_OK || key.ppp_proto)
		return TCX_NEXT;

	ret = flow_decide(&key, &v);
	if (ret == XDP_PASS)
		return TCX_NEXT;
	if (ret == XDP_REDIRECT && v.n > 1) {
		int err = tc_edit(skb, v.rule_id);

		if (err > 0)
			return TCX_NEXT;
		if (err < 0)
			return TC_ACT_SHOT;
	}
	flow_count(&v, skb->gso_segs ?: 1, tc_len);
	return ret == XDP_DROP ? TC_ACT_SHOT : tc_redirect(skb, v.ifindex);
}

char LICENSE[] SEC("license") = "GPL";
