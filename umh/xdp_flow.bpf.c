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

#define VLAN_DEI	0x1000
#define IP_MF		0x2000
#define IP_OFFSET	0x1fff

struct vlan_tag {
	__be16	tci;
	__be16	encap_proto;
};

/* A PPPoE session header (RFC 2516) and the PPP protocol after it. */
struct pppoe_ses {
	__u8	vertype;	/* version 1, type 1: 0x11 */
	__u8	code;		/* 0 in session frames */
	__be16	sid;
	__be16	length;		/* of what follows the header, PPP protocol
				 * included
				 */
	__be16	ppp_proto;
};

#define PPPOE_VERTYPE	0x11
#define PPP_IP		0x0021
#define PPP_IPV6	0x0057

/* ARP for Ethernet and IPv4, the only kind the flow dissector keys on. */
struct arp_eth_ipv4 {
	__be16	hrd;
	__be16	pro;
	__u8	hln;
	__u8	pln;
	__be16	op;
	__u8	sha[ETH_ALEN];
	__u8	sip[4];
	__u8	tha[ETH_ALEN];
	__u8	tip[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDP_FLOW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct xdp_flow_dp_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_rules SEC(".maps");

struct xf_counters_chunk {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDP_FLOW_COUNTER_CHUNK);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct xdp_flow_counter));
};

/* Sized by the helper at load: max_rules / XDP_FLOW_COUNTER_CHUNK. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XDP_FLOW_MAX_RULES / XDP_FLOW_COUNTER_CHUNK);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct xf_counters_chunk);
} xf_counters SEC(".maps");

/* Sized by the helper at load (dp_open()), as here for the default
 * max_flows: buckets for about two flow entries each, twice over (masks
 * get regions of a power of 2 of them, which double as they fill), and
 * entries for max_flows, the shields' and an eighth more.
 */
#define XF_FLOW_ENTRIES	(XDP_FLOW_DEFAULT_FLOWS + XDP_FLOW_MAX_SHIELDS)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XF_FLOW_ENTRIES);	/* a power of 2 already */
	__type(key, __u32);
	__type(value, struct xdp_flow_ft_bucket);
	__uint(map_flags, BPF_F_MMAPABLE);	/* written in place */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_fbuckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDP_FLOW_FT_ENTRIES(XF_FLOW_ENTRIES));
	__type(key, __u32);
	__type(value, struct xdp_flow_ft_entry);
	__uint(map_flags, BPF_F_MMAPABLE);	/* written in place */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_fentries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdp_flow_ft_hash);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_fhash SEC(".maps");

/* Sizes rather than types: clang would emit the value type as a forward
 * declaration only, which libbpf cannot size.
 */
struct xf_mask_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct xdp_flow_mask_list));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct xf_mask_inner);
} xf_masks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDP_FLOW_MAX_MASKS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_MMAPABLE);	/* the helper lowers it in place */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_mask_min SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_MMAPABLE);	/* the helper bumps it in place */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_gen SEC(".maps");

/* Written by the module, never by the helper (see xdp_flow_dp.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_gate SEC(".maps");

/* The veths a TC hook redirect may pass by: written by the module only
 * (net/xdp_flow/peer.c), read by tc_redirect().
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDP_FLOW_MAX_PEERS);
	__type(key, __u32);
	__type(value, union xdp_flow_peer);
	/* A deleted entry is freed after the readers, not reused at once. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_peers SEC(".maps");

/* The devices an XDP hook redirect may go to at once, their egress path
 * being empty: written by the module only (net/xdp_flow/peer.c), read by
 * xdp_flow(). No entry: the frame goes to the stack, where mirred sends it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDP_FLOW_MAX_EGRESS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_egress SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDP_FLOW_EMC_SETS);
	__type(key, __u32);
	__type(value, struct xdp_flow_emc_set);
} xf_emc SEC(".maps");

/* Frozen at load: the exact-match cache (off only to measure the search),
 * the floor build of the benchmark (no lookup at all: every frame the
 * parser takes gets rule 0, to price everything but the classification),
 * and the benchmark's frames that change flow at every repetition
 * (xdp_flow_bench.h). The helper leaves all three as they are.
 */
const volatile __u8 xf_cfg_emc = 1;
const volatile __u8 xf_cfg_floor;
const volatile __u8 xf_cfg_bench;

/* Flowtable connections whose end went to the stack (xdp_flow_dp.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDP_FLOW_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_ft_conns SEC(".maps");

/* Not used here: the helper's record of each rule, kept across restarts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDP_FLOW_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct xdp_flow_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_rule_defs SEC(".maps");

/*
 * Mutants: test builds whose datapath is wrong on purpose, one fault each,
 * that the differential test must catch (make -C umh mutants, run by
 * selftests/guest/test_21_diff_mutants.sh). Never in a real build.
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

/* A 16-bit length read from the packet, with its bounds made explicit:
 * the verifiers of 6.1 and 6.12 lose them across a byte swap, and then
 * refuse to add the length to a packet pointer.
 */
static __always_inline __u32 pkt_len16(__be16 v)
{
	__u32 len = bpf_ntohs(v);

	asm volatile("%[len] &= 0xffff" : [len] "+r"(len));
	return len;
}

/*
 * The parser builds the key in the 64-bit words that the lookup hashes and
 * compares, each word in a register, and stores each once, whole: a word
 * stored in pieces and then loaded whole waits for the pieces to reach the
 * cache (no store-to-load forwarding), and zeroing the key first would
 * store it twice. KEY_AT() places a field's value, @size bytes in memory
 * order, where the field lies in its word; KEY_WORD() is the word a field
 * lies in. Header fields are loaded as the words they span: the verifier
 * lets a program read packet data unaligned wherever the CPU can (every
 * architecture with efficient unaligned access). They go through the
 * pkt_*() functions: given a field of a packed header, clang would split
 * the load into bytes.
 */
typedef __u16 __attribute__((__may_alias__)) xf_u16;
typedef __u32 __attribute__((__may_alias__)) xf_u32;
typedef __u64 __attribute__((__may_alias__)) xf_u64;

static __always_inline __u16 pkt_u16(const void *p)
{
	return *(const xf_u16 *)p;
}

static __always_inline __u32 pkt_u32(const void *p)
{
	return *(const xf_u32 *)p;
}

static __always_inline __u64 pkt_u64(const void *p)
{
	return *(const xf_u64 *)p;
}

#define KEY_OFF(field)	__builtin_offsetof(struct xdp_flow_key, field)
#define KEY_WORD(field)	(KEY_OFF(field) / 8)
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define KEY_BE		1
#else
#define KEY_BE		0
#endif
#define KEY_AT(v, field, size)						\
	((__u64)(v) << 8 * (KEY_BE ? 8 - KEY_OFF(field) % 8 - (size) :	\
			    KEY_OFF(field) % 8))

_Static_assert(KEY_OFF(eth_dst) == 4 && KEY_OFF(eth_src) == 10 &&
	       KEY_WORD(n_proto) == 2 && KEY_WORD(cvlan_tpid) == 2 &&
	       KEY_WORD(cvlan_tci) == 3 && KEY_WORD(tcp_flags) == 3 &&
	       KEY_OFF(ip_src) == 32 && KEY_OFF(ip_dst) == 48 &&
	       KEY_WORD(l4_src) == 8 && KEY_OFF(arp_sha) == 68 &&
	       KEY_OFF(arp_tha) == 74 && KEY_OFF(chain) == 80 &&
	       KEY_WORD(pppoe_sid) == 10 && KEY_WORD(ppp_proto) == 10 &&
	       XDP_FLOW_KEY_WORDS == 11,
	       "the parser's words follow struct xdp_flow_key");

/* Values of XDP_PASS and below stop parsing with that verdict. */
#define PARSE_OK	(-1)

static __always_inline int is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) ||
	       proto == bpf_htons(ETH_P_8021AD);
}

/*
 * The EtherType of what a PPPoE session header carries: IPv4 or IPv6, else
 * 0 (the frame is not parsed on). Only a well-formed header of version 1,
 * type 1, code 0 counts; with a compressed (one-byte) PPP protocol the
 * flowtable's software path finds no flow either.
 */
static __always_inline __be16 pppoe_inner(const struct pppoe_ses *ps)
{
	if (ps->vertype != PPPOE_VERTYPE || ps->code)
		return 0;
	if (ps->ppp_proto == bpf_htons(PPP_IP))
		return bpf_htons(ETH_P_IP);
	if (ps->ppp_proto == bpf_htons(PPP_IPV6))
		return bpf_htons(ETH_P_IPV6);
	return 0;
}

/*
 * An L4 header must lie within the IP packet (@end), and the verifier wants
 * every access checked against the frame (@data_end) itself. Where clang
 * knows that @end is at most @data_end (clang 19 does, from the parser's
 * earlier checks), it drops the second test as implied by the first, and
 * the verifier refuses the access: @end is opaque to it here.
 */
static __always_inline int l4_short(void *l4, __u32 size, void *end,
				    void *data_end)
{
	barrier_var(end);
	return l4 + size > end || l4 + size > data_end;
}

/*
 * The L4 part of the key: the ports (or ICMP type and code) into @kw's
 * word 8 and the TCP flags into *@w3. @proto is the IP protocol.
 */
static __always_inline int parse_l4(void *l4, void *end, void *data_end,
				    __u8 proto, xdp_flow_word *kw, __u64 *w3)
{
	__u32 size = 4;

	switch (proto) {
	case IPPROTO_IPIP:
	case IPPROTO_IPV6:
	case IPPROTO_GRE:
	case IPPROTO_MPLS:
		/* Flower's dissector goes on into the inner packet and keys
		 * its addresses and ports instead of the outer ones.
		 */
		return XDP_PASS;
	case IPPROTO_TCP: {
		struct tcphdr *th = l4;

		if (l4_short(th, sizeof(*th), end, data_end))
			return XDP_PASS;
		/* The dissector leaves the flags unset below doff 5. */
		if (th->doff < 5)
			return XDP_PASS;
		*w3 |= KEY_AT(pkt_u16((void *)th + 12) & bpf_htons(0x0fff),
			      tcp_flags, 2);
		break;
	}
	case IPPROTO_UDP:
		size = sizeof(struct udphdr);
		break;
	case IPPROTO_SCTP:
		size = 12;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		__u8 *icmp = l4;

		/* The dissector keys type and code only with a whole
		 * struct icmphdr (8 bytes) present.
		 */
		if (l4_short(icmp, 8, end, data_end))
			return XDP_PASS;
		kw[8] = KEY_AT(bpf_htons(icmp[0]), l4_src, 2) |
			KEY_AT(bpf_htons(icmp[1]), l4_dst, 2);
		return PARSE_OK;
	}
	default:
		kw[8] = 0;
		return PARSE_OK;
	}
	/* TCP, UDP, SCTP: both ports, as they lie in the header. */
	if (l4_short(l4, size, end, data_end))
		return XDP_PASS;
	kw[8] = KEY_AT(pkt_u32(l4), l4_src, 4);
	return PARSE_OK;
}

/* Words 3 to 9 for IPv4; @w3 holds the inner VLAN tag, @avail the bytes
 * of the frame from @nh on (past @data_end too in a nonlinear skb).
 */
static __always_inline int parse_ipv4(void *nh, void *data_end, __u32 avail,
				      xdp_flow_word *kw, __u64 w3)
{
	struct iphdr *iph = nh;
	__u32 hlen, tot_len;
	__u16 frag;
	int ret;

	if ((void *)(iph + 1) > data_end)
		return XDP_PASS;
	if (iph->version != 4 || iph->ihl < 5)
		return XDP_PASS;
	hlen = iph->ihl * 4;
	tot_len = pkt_len16(iph->tot_len);
	if (nh + hlen > data_end || tot_len < hlen || tot_len > avail)
		return XDP_PASS;

	w3 |= KEY_AT(iph->protocol, ip_proto, 1) |
	      KEY_AT(iph->tos, ip_tos, 1) | KEY_AT(iph->ttl, ip_ttl, 1);
	kw[4] = KEY_AT(iph->saddr, ip_src, 4);
	kw[5] = 0;
	kw[6] = KEY_AT(iph->daddr, ip_dst, 4);
	kw[7] = 0;
	kw[9] = 0;

	frag = bpf_ntohs(iph->frag_off);
	if (frag & (IP_MF | IP_OFFSET)) {
		/* Like flower's dissector: no L4 fields in any fragment. */
		__u8 f = XDP_FLOW_FRAG_IS;

		if (!(frag & IP_OFFSET))
			f |= XDP_FLOW_FRAG_FIRST;
		kw[3] = w3 | KEY_AT(f, ip_frag, 1);
		kw[8] = 0;
		return PARSE_OK;
	}
	ret = parse_l4(nh + hlen, nh + tot_len, data_end, iph->protocol, kw,
		       &w3);
	kw[3] = w3;
	return ret;
}

static __always_inline int ipv6_is_ext_hdr(__u8 nexthdr)
{
	switch (nexthdr) {
	case 0: case 43: case 44: case 50: case 51: case 60:
	case 135: case 139: case 140:
		return 1;
	}
	return 0;
}

/* Words 3 to 9 for IPv6; @w3 and @avail as for parse_ipv4(). */
static __always_inline int parse_ipv6(void *nh, void *data_end, __u32 avail,
				      xdp_flow_word *kw, __u64 w3)
{
	struct ipv6hdr *ip6h = nh;
	void *end;
	__u8 tos;
	int ret;

	if ((void *)(ip6h + 1) > data_end)
		return XDP_PASS;
	if (ip6h->version != 6)
		return XDP_PASS;
	if (pkt_len16(ip6h->payload_len) > avail - sizeof(*ip6h))
		return XDP_PASS;
	end = (void *)(ip6h + 1) + pkt_len16(ip6h->payload_len);
	if (ipv6_is_ext_hdr(ip6h->nexthdr))
		return XDP_PASS;

	tos = (ip6h->priority << 4) | (ip6h->flow_lbl[0] >> 4);
	w3 |= KEY_AT(ip6h->nexthdr, ip_proto, 1) | KEY_AT(tos, ip_tos, 1) |
	      KEY_AT(ip6h->hop_limit, ip_ttl, 1);
	/* Source and destination, as they lie in the header. */
	kw[4] = pkt_u64(&ip6h->saddr);
	kw[5] = pkt_u64((void *)&ip6h->saddr + 8);
	kw[6] = pkt_u64(&ip6h->daddr);
	kw[7] = pkt_u64((void *)&ip6h->daddr + 8);
	kw[9] = 0;
	ret = parse_l4(ip6h + 1, end, data_end, ip6h->nexthdr, kw, &w3);
	kw[3] = w3;
	return ret;
}

/* Words 3 to 9 for ARP; @w3 holds the inner VLAN tag. */
static __always_inline int parse_arp(void *nh, void *data_end,
				     xdp_flow_word *kw, __u64 w3)
{
	struct arp_eth_ipv4 *arp = nh;

	if ((void *)(arp + 1) > data_end)
		return XDP_PASS;
	/* What __skb_flow_dissect_arp() accepts; anything else is "bad". */
	if (arp->hrd != bpf_htons(1) || arp->pro != bpf_htons(ETH_P_IP) ||
	    arp->hln != ETH_ALEN || arp->pln != 4 ||
	    (arp->op != bpf_htons(1) && arp->op != bpf_htons(2)))
		return XDP_PASS;

	kw[3] = w3 | KEY_AT(bpf_ntohs(arp->op) & 0xff, ip_proto, 1);
	kw[4] = KEY_AT(pkt_u32(arp->sip), ip_src, 4);
	kw[5] = 0;
	kw[6] = KEY_AT(pkt_u32(arp->tip), ip_dst, 4);
	kw[7] = 0;
	/* No ports; the hardware addresses' first 4 and last 2 + 6 bytes. */
	kw[8] = KEY_AT(pkt_u32(arp->sha), arp_sha, 4);
	kw[9] = KEY_AT(pkt_u16(&arp->sha[4]), arp_sha[4], 2) |
		KEY_AT(pkt_u16(arp->tha), arp_tha, 2) |
		KEY_AT(pkt_u32(&arp->tha[2]), arp_tha[2], 4);
	return PARSE_OK;
}

/*
 * Parses the frame at @data, @len bytes long (of which the headers must be
 * in @data .. @data_end), into the key @kw, received on device @ifindex.
 * @vlan is the key's outer VLAN tag when the kernel already took it into
 * skb metadata (the TC hook; its KEY_AT() bits), else 0 and the tag is read
 * from the frame. Returns PARSE_OK, or the verdict for a frame the program
 * leaves to the stack; *@tc_len is the length TC counts.
 */
static __always_inline int parse_frame(void *data, void *data_end, __u64 len,
				       __u32 ifindex, __u64 vlan,
				       xdp_flow_word *kw, __u64 *tc_len)
{
	struct ethhdr *eth = data;
	struct vlan_tag *vt;
	__u64 w2, w3 = 0;
	__u32 off = ETH_HLEN;	/* of nh in the frame */
	__be16 proto;
	void *nh;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	/* Destination and source, as they lie in the header. */
	kw[0] = KEY_AT(ifindex, ifindex, 4) |
		KEY_AT(pkt_u32(eth->h_dest), eth_dst, 4);
	kw[1] = pkt_u64(&eth->h_dest[4]);
	kw[10] = 0;	/* chain 0, no PPPoE */
	proto = pkt_u16(&eth->h_proto);
	nh = eth + 1;
	/* TC sees the frame without its Ethernet header... */
	*tc_len = len - ETH_HLEN;

	w2 = vlan;
	if (is_vlan(proto) && !vlan) {
		vt = nh;
		if ((void *)(vt + 1) > data_end)
			return XDP_PASS;
		w2 = KEY_AT(proto, vlan_tpid, 2) |
		     KEY_AT(vt->tci & ~bpf_htons(VLAN_DEI), vlan_tci, 2);
		proto = vt->encap_proto;
		nh = vt + 1;
		off += sizeof(*vt);
		/* ...and without the outer tag, popped into skb metadata. */
		*tc_len -= sizeof(*vt);
	}
	if (is_vlan(proto)) {
		vt = nh;
		if ((void *)(vt + 1) > data_end)
			return XDP_PASS;
		w2 |= KEY_AT(proto, cvlan_tpid, 2);
		w3 = KEY_AT(vt->tci & ~bpf_htons(VLAN_DEI), cvlan_tci, 2);
		proto = vt->encap_proto;
		nh = vt + 1;
		off += sizeof(*vt);
		if (is_vlan(proto))
			return XDP_PASS;
	}
	/*
	 * A PPPoE session: keyed on what it carries, as flower's dissector
	 * does, and on the session. Only a flowtable's rule acts on such a
	 * frame (xdp_flow()); TC counts the header, the flowtable does not.
	 */
	if (proto == bpf_htons(ETH_P_PPP_SES)) {
		struct pppoe_ses *ps = nh;

		if ((void *)(ps + 1) > data_end)
			return XDP_PASS;
		proto = pppoe_inner(ps);
		if (!proto)
			return XDP_PASS;
		kw[10] = KEY_AT(ps->sid, pppoe_sid, 2) |
			 KEY_AT(ps->ppp_proto, ppp_proto, 2);
		nh = ps + 1;
		off += sizeof(*ps);
	}
	kw[2] = w2 | KEY_AT(proto, n_proto, 2);

	switch (proto) {
	case bpf_htons(ETH_P_IP):
		return parse_ipv4(nh, data_end, len - off, kw, w3);
	case bpf_htons(ETH_P_IPV6):
		return parse_ipv6(nh, data_end, len - off, kw, w3);
	case bpf_htons(ETH_P_ARP):
		return parse_arp(nh, data_end, kw, w3);
	}
	return XDP_PASS;
}

/* Where a tuple-space search stands: scalars only (a global function's
 * argument).
 */
struct search_state {
	__u64 best_order;	/* the best rule's order so far */
	__u32 n;		/* masks in the list */
	int best;		/* the best rule so far, or -1 */
};

/* The context of the search's bpf_loop() steps. */
struct lookup_ctx {
	const struct xdp_flow_key *key;
	struct xdp_flow_mask_list *list;
	struct search_state st;
};

#ifndef XDP_FLOW_MUTANT_prio_last
/* Whether mask @m may hold a rule of a lower order than @best. */
static __always_inline int mask_may_beat(const struct xdp_flow_dp_mask *m,
					 __u64 best)
{
	__u32 slot = m->slot;
	__u64 *min = bpf_map_lookup_elem(&xf_mask_min, &slot);

	return !min || *min <= best;
}
#endif

/*
 * Word @j of the key @kw as the search sees it. The mask_dst mutant clears
 * the lowest bit of the IPv4 destination (IPv6's fourth byte, ARP's target).
 */
static __always_inline __u64 search_word(const xdp_flow_word *kw, __u32 j)
{
#ifdef XDP_FLOW_MUTANT_mask_dst
	if (j == KEY_WORD(ip_dst))
		return kw[j] & ~KEY_AT(bpf_htonl(1), ip_dst, 4);
#endif
	return kw[j];
}

/*
 * The rule of way @w of bucket @bk if its entry is (@m, @kw masked with
 * it), or -1.
 */
static __always_inline int ft_way(const struct xdp_flow_ft_bucket *bk,
				  __u32 w, const struct xdp_flow_dp_mask *m,
				  const xdp_flow_word *kw)
{
	const xdp_flow_word *mw = (const xdp_flow_word *)&m->mask;
	const struct xdp_flow_ft_entry *e;
	const xdp_flow_word *ew;
	__u32 slot = bk->slot[w], j;
	__u64 diff = 0;

	e = bpf_map_lookup_elem(&xf_fentries, &slot);
	if (!e || e->mask_id != m->id)
		return -1;
	ew = (const xdp_flow_word *)&e->key;
#pragma unroll
	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		diff |= ew[j] ^ (search_word(kw, j) & mw[j]);
	return diff ? -1 : (int)e->rule;
}

/*
 * The rule of the entry among @bk's ways whose signature is @sig and whose
 * key is (@m, @key masked with it), or -1. Called only for a bucket whose
 * signatures flag @sig: a global function, so that the verifier checks its
 * 8 ways once, not once for every mask of a search step.
 */
__noinline int xdp_flow_ft_ways(const struct xdp_flow_ft_bucket *bk,
				const struct xdp_flow_dp_mask *m,
				const struct xdp_flow_key *key, __u32 sig)
{
	const xdp_flow_word *kw = (const xdp_flow_word *)key;
	__u32 w;
	int ret;

	if (!bk || !m || !key)
		return -1;
#pragma unroll
	for (w = 0; w < XDP_FLOW_FT_WAYS; w++) {
		if (bk->sig[w] != sig)
			continue;
		ret = ft_way(bk, w, m, kw);
		if (ret >= 0)
			return ret;
	}
	return -1;
}

/*
 * The rule bucket @bk holds for (@m, @kw masked with it), whose signature
 * is @sig, or -1. The signatures are tested 4 at a time; the lowest way
 * they flag always holds @sig (a borrow flags only ways above one that
 * does), and it is the one that matches unless two keys of the bucket
 * share a signature: it is compared inline, any other case is left to the
 * global function.
 */
static __always_inline int ft_bucket(const struct xdp_flow_ft_bucket *bk,
				     const struct xdp_flow_dp_mask *m,
				     const xdp_flow_word *kw, __u16 sig)
{
	__u64 m0 = xdp_flow_ft_sig_match(bk->sigw[0], sig);
	__u64 m1 = xdp_flow_ft_sig_match(bk->sigw[1], sig);
	__u32 w = 0;
	int ret;

	if (!(m0 | m1))
		return -1;
	if (!m0) {
		m0 = m1;
		w = 4;
	}
	/* The lowest flagged lane, 1 << 16 * lane after the shift, made its
	 * number by a multiply that lines that lane's field up at the top.
	 */
	m0 = (m0 & -m0) >> 15;
	w = (w + ((m0 * 0x0000000100020003ULL) >> 48)) & (XDP_FLOW_FT_WAYS - 1);
	ret = ft_way(bk, w, m, kw);
	if (ret >= 0)
		return ret;
	return xdp_flow_ft_ways(bk, m, (const void *)kw, sig);
}

/* Word @j's term of xdp_flow_ft_hash(). */
static __always_inline __u64 ft_word(const struct xdp_flow_ft_hash *fh,
				     const xdp_flow_word *kw,
				     const xdp_flow_word *mw, __u32 j)
{
	return (search_word(kw, j) & mw[j]) * fh->mul[j];
}

/*
 * The rule the flow table holds for (@m, @kw masked with it): its id, or
 * -1. The first bucket of the mask's region, and the second only when the
 * first one's keys spilled there.
 */
static __always_inline int ft_lookup(const struct xdp_flow_ft_hash *fh,
				     const struct xdp_flow_dp_mask *m,
				     const xdp_flow_word *kw)
{
	const xdp_flow_word *mw = (const xdp_flow_word *)&m->mask;
	__u64 h = xdp_flow_ft_start(fh, m->id);
	struct xdp_flow_ft_bucket *bk;
	__u32 b, idx;
	__u16 sig;
	int ret;

	/* Straight on, the words of XDP_FLOW_WIDE_WORDS only if the mask
	 * keeps one: a loop over the words it keeps costs more.
	 */
	h += ft_word(fh, kw, mw, 0) + ft_word(fh, kw, mw, 2) +
	     ft_word(fh, kw, mw, 3) + ft_word(fh, kw, mw, 4) +
	     ft_word(fh, kw, mw, 6) + ft_word(fh, kw, mw, 8) +
	     ft_word(fh, kw, mw, 10);
	if (m->wide)
		h += ft_word(fh, kw, mw, 1) + ft_word(fh, kw, mw, 5) +
		     ft_word(fh, kw, mw, 7) + ft_word(fh, kw, mw, 9);
	h = xdp_flow_ft_mix(h);
	b = h & m->fb_mask;
	sig = xdp_flow_ft_sig(h);
	idx = m->fb_base + b;
	bk = bpf_map_lookup_elem(&xf_fbuckets, &idx);
	if (!bk)
		return -1;
	ret = ft_bucket(bk, m, kw, sig);
	if (ret >= 0 || !bk->spill)
		return ret;
	idx = m->fb_base + xdp_flow_ft_alt(b, sig, m->fb_mask);
	bk = bpf_map_lookup_elem(&xf_fbuckets, &idx);
	if (!bk)
		return -1;
	return ft_bucket(bk, m, kw, sig);
}

/* Masks searched per bpf_loop() step: a call per mask would cost more
 * than the lookup (every call and return is dear with the kernel's
 * speculation mitigations).
 */
#define LOOKUP_STEP	16

/*
 * Masks @i * LOOKUP_STEP on of the tuple-space search of @key in @list,
 * from and into @st. Returns 1 when no mask is left, 0 otherwise.
 */
static __always_inline int search_step(__u32 i, const struct xdp_flow_key *key,
				       struct xdp_flow_mask_list *list,
				       const struct xdp_flow_ft_hash *fh,
				       struct search_state *st)
{
	const xdp_flow_word *kw = (const xdp_flow_word *)key;
	struct xdp_flow_dp_rule *rule;
	struct xdp_flow_dp_mask *m;
	__u64 mi;
	__u32 k, id;
	int ret;

	for (k = 0; k < LOOKUP_STEP; k++) {
		mi = (__u64)i * LOOKUP_STEP + k;
		if (mi >= st->n || mi >= XDP_FLOW_MAX_MASKS)
			return 1;
		/* Keep the index checked and the pointer: clang would derive
		 * them again from @i, whose bounds the verifier no longer
		 * knows there.
		 */
		asm volatile("" : "+r"(mi));
		m = &list->masks[mi];
		asm volatile("" : "+r"(m));
		/*
		 * No rule of this mask can beat the best so far. Later masks
		 * may: their lowest order may have dropped since the list
		 * was sorted.
		 */
#ifndef XDP_FLOW_MUTANT_prio_last
		if (st->best >= 0 && !mask_may_beat(m, st->best_order))
			continue;
#endif
		ret = ft_lookup(fh, m, kw);
		if (ret < 0)
			continue;
		id = ret;
		rule = bpf_map_lookup_elem(&xf_rules, &id);
		if (!rule || !(rule->flags & XDP_FLOW_DP_F_VALID))
			continue;
#ifdef XDP_FLOW_MUTANT_prio_last
		if (st->best < 0 || rule->order > st->best_order) {
#else
		if (rule->order < st->best_order) {
#endif
			st->best = id & 0x7fffffff;
			st->best_order = rule->order;
		}
	}
	return 0;
}

/*
 * A step of the search: search_step() as a global function, which the
 * verifier checks once. Inline in the bpf_loop() callback, the step was
 * checked again for every state the callback could start from until they
 * converged: on Linux 7.3 that took 0.9 million instructions of the
 * verifier's 1 million.
 */
__noinline int xdp_flow_search_step(__u32 i, const struct xdp_flow_key *key,
				    struct xdp_flow_mask_list *list,
				    struct search_state *st)
{
	const struct xdp_flow_ft_hash *fh;
	__u32 zero = 0;

	if (!key || !list || !st)
		return 1;
	fh = bpf_map_lookup_elem(&xf_fhash, &zero);
	if (!fh)
		return 1;
	return search_step(i, key, list, fh, st);
}

/*
 * The steps after the first: bpf_loop() callback, which must return 0 or 1.
 * The verifier does not know what a global function returns; clang 19
 * does, and drops a "? 1 : 0" it sees as a no-op: the value is opaque to
 * it here.
 */
static int lookup_masks(__u32 i, struct lookup_ctx *lc)
{
	int more = xdp_flow_search_step(i + 1, lc->key, lc->list, &lc->st);

	barrier_var(more);
	return more ? 1 : 0;
}

/*
 * Tuple-space search with TC's semantics: every mask may hold a match, the
 * lowest order wins, whatever the mask. Returns the winning rule id or -1.
 *
 * Global functions and bpf_loop() keep verification cheap: a global
 * function is checked once, whatever calls it, and a bpf_loop() body far
 * fewer times than there are iterations (an open-coded loop over all
 * masks took the verifier 1.5 s); the body only calls
 * xdp_flow_search_step(), whose comment says why. The first step is a
 * call of it too: inline here, where the verifier tracks the search's
 * state on the stack, its 16 masks made 90,000 of the 128,000
 * instructions the verifier processed for the program (Linux 6.18), and
 * the verifier is most of the helper's start-up in an emulated guest.
 */
__noinline int xdp_flow_search(struct xdp_flow_key *key)
{
	struct lookup_ctx lc = { .key = key };
	__u32 zero = 0, n;
	void *inner;

	if (!key)
		return -1;
	inner = bpf_map_lookup_elem(&xf_masks, &zero);
	if (!inner)
		return -1;
	lc.list = bpf_map_lookup_elem(inner, &zero);
	if (!lc.list)
		return -1;
	/*
	 * "No rule yet": no rule id, and an order no rule has (prio is 16
	 * bits). They are computed from list->pad, which is always 0, rather
	 * than written as constants: kernels before 6.7 check a bpf_loop()
	 * callback once, with the caller's constants, and would take the
	 * comparisons with them for always true or false and drop the other
	 * branch as dead code.
	 */
	lc.st.best = -1 - (int)lc.list->pad;
	lc.st.best_order = ~0ULL - lc.list->pad;
	n = lc.list->count;
	if (n > XDP_FLOW_MAX_MASKS)
		n = XDP_FLOW_MAX_MASKS;
	lc.st.n = n;
	if (!xdp_flow_search_step(0, lc.key, lc.list, &lc.st) &&
	    n > LOOKUP_STEP)
		bpf_loop((n - 1) / LOOKUP_STEP, lookup_masks, &lc, 0);
	return lc.st.best;
}

/* @key's cache hash, when the program has a cache to probe (else 0). */
static __always_inline __u64 emc_hash(struct xdp_flow_key *key)
{
	if (!xf_cfg_emc || xf_cfg_floor)
		return 0;
	return xdp_flow_emc_hash((xdp_flow_word *)key);
}

/*
 * Whether a way's key @a is the key @b. Where @b is an IPv4 key, a way
 * with the same word 2 (its EtherType) holds one too, parsed as @b was:
 * the words the parser keeps zero for IPv4 are zero in both.
 */
static __always_inline int emc_key_equal(const xdp_flow_word *a,
					 const xdp_flow_word *b, int v4)
{
	__u64 diff = 0;
	__u32 j;

	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		if (!v4 || !xdp_flow_emc_v4_zero(j))
			diff |= a[j] ^ b[j];
	return !diff;
}

/*
 * The winning rule id for @key, or -1. A frame of a flow this CPU saw since
 * the tables last changed costs one probe of the cache, inline; any other
 * pays the tuple-space search (a call), whose answer the cache then keeps
 * in one of its set's ways, round robin. The generation is read before
 * the search, so an answer found while the helper changed the tables is
 * kept under the old generation and never counts. On a hit, *@act is what
 * the way knows the rule does (xdp_flow_emc_set.act); on a miss it is 0,
 * and *@slot is where the caller may write that once it has read the rule.
 * @h is the key's xdp_flow_emc_hash(); @v4ok lets an IPv4 key be
 * compared as one (emc_key_equal()), 0 has every word compared.
 */
static __always_inline int xdp_flow_lookup(struct xdp_flow_key *key,
					   __u64 h, int v4ok, __u32 **slot,
					   __u32 *act)
{
	struct xdp_flow_emc_set *s = NULL;
	xdp_flow_word *kw = (xdp_flow_word *)key;
	__u64 *g, gen = 0;
	__u32 zero = 0, idx, sig = 0, w;
	int best;

	if (xf_cfg_emc) {
		g = bpf_map_lookup_elem(&xf_gen, &zero);
		if (g)
			gen = *g;
	}
	if (gen) {
		idx = xdp_flow_emc_set(h);
		sig = xdp_flow_emc_sig(h);
		s = bpf_map_lookup_elem(&xf_emc, &idx);
	}
	if (s && s->gen == gen) {
#pragma unroll
		for (w = 0; w < XDP_FLOW_EMC_WAYS; w++)
			if (s->sig[w] == sig &&
			    emc_key_equal((xdp_flow_word *)&s->key[w], kw,
					  v4ok && xdp_flow_emc_v4(kw))) {
				*act = s->act[w];
				return s->rule[w];
			}
	}
	best = xdp_flow_search(key);
	if (s) {
		if (s->gen != gen) {
#pragma unroll
			for (w = 0; w < XDP_FLOW_EMC_WAYS; w++)
				s->sig[w] = 0;
			s->next = 0;
			s->gen = gen;
		}
		w = s->next++ & (XDP_FLOW_EMC_WAYS - 1);
		s->sig[w] = sig;
		s->rule[w] = best;
		s->act[w] = 0;
		s->key[w] = *key;
		*slot = &s->act[w];
	}
	return best;
}

static __always_inline void count(__u32 rule_id, __u32 packets, __u64 bytes)
{
	__u32 chunk = rule_id / XDP_FLOW_COUNTER_CHUNK;
	__u32 idx = rule_id % XDP_FLOW_COUNTER_CHUNK;
	struct xdp_flow_counter *c;
	void *counters;

	/* The helper makes a rule's chunk before it links the rule. */
	counters = bpf_map_lookup_elem(&xf_counters, &chunk);
	if (!counters)
		return;
	c = bpf_map_lookup_elem(counters, &idx);
	if (!c)
		return;
	/* Per-CPU and XDP runs with bottom halves off: no atomics needed. */
	c->packets += packets;
	c->bytes += bytes;
	/* TC keeps jiffies too; the verifier makes this one load. Odd, so
	 * that 0 still means never.
	 */
	c->lastused = bpf_jiffies64() | 1;
}

/* ------------------------------------------------------------ rewrites
 *
 * A rule with more than one action rewrites the frame, then redirects it
 * (the module and the helper allow no other shape). Everything a rewrite
 * needs is checked before the first byte changes: a frame TC would treat
 * in a way this code does not reproduce goes to the stack untouched, and
 * TC handles it.
 */

/* Where TC's actions find the headers of the frame. */
struct edit_layout {
	__u32	noff;		/* network header: after the outer tag */
	__u32	l4off;		/* transport header, 0 if none */
	__u32	l4len;		/* IP length minus the IP header */
	__be16	proto;		/* EtherType after the outer tag */
	__u8	l4proto;	/* 0 for a non-first IPv4 fragment */
	__u8	ihl;		/* IPv4 header length in bytes */
	__u8	ttl;		/* IPv4 TTL or IPv6 hop limit */
	__u8	frag;		/* an IPv4 fragment, the first included */
	__u8	tcp_fin_rst;	/* a TCP header with FIN or RST */
	__u8	l4hlen;		/* TCP or UDP header length */
	__u8	pppoe;		/* a PPPoE session header before noff */
	__u8	vlan_dei;	/* the outer VLAN tag has DEI set */
};

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

/* Finds the headers the way TC's pedit and csum actions will. @whole:
 * the IP length must be within the bytes at hand (a checksum is summed
 * over them); else only the headers must be.
 */
static __always_inline int edit_layout(void *data, void *data_end,
				       struct edit_layout *l, int whole)
{
	struct ethhdr *eth = data;
	__be16 proto;
	__u32 noff = ETH_HLEN;

	if ((void *)(eth + 1) > data_end)
		return -1;
	proto = pkt_u16(&eth->h_proto);
	if (is_vlan(proto)) {
		struct vlan_tag *vt = (void *)(eth + 1);

		if ((void *)(vt + 1) > data_end)
			return -1;
		proto = vt->encap_proto;
		noff += sizeof(*vt);
		l->vlan_dei = !!(vt->tci & bpf_htons(VLAN_DEI));
		/* An inner tag: TC's network header would sit on it, and
		 * act_csum walks it. Left to TC.
		 */
		if (is_vlan(proto))
			return -1;
	}
	/* Only a flowtable's rule edits a PPPoE frame (xdp_flow_edit()). */
	if (proto == bpf_htons(ETH_P_PPP_SES)) {
		struct pppoe_ses *ps = data + noff;

		if ((void *)(ps + 1) > data_end)
			return -1;
		proto = pppoe_inner(ps);
		if (!proto)
			return -1;
		noff += sizeof(*ps);
		l->pppoe = 1;
	}
	l->noff = noff;
	l->proto = proto;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = data + noff;
		__u32 tot;

		if ((void *)(iph + 1) > data_end)
			return -1;
		l->ihl = iph->ihl * 4;
		tot = pkt_len16(iph->tot_len);
		if (l->ihl < sizeof(*iph) || tot < l->ihl ||
		    (whole && data + noff + tot > data_end))
			return -1;
		l->l4len = tot - l->ihl;
		l->l4proto = iph->frag_off & bpf_htons(IP_OFFSET) ?
			     0 : iph->protocol;
		l->l4off = noff + l->ihl;
		l->ttl = iph->ttl;
		l->frag = !!(iph->frag_off & bpf_htons(IP_MF | IP_OFFSET));
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = data + noff;
		__u32 plen;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		plen = pkt_len16(ip6h->payload_len);
		if (whole && data + noff + sizeof(*ip6h) + plen > data_end)
			return -1;
		l->l4len = plen;
		l->l4proto = ip6h->nexthdr;
		l->l4off = noff + sizeof(*ip6h);
		l->ttl = ip6h->hop_limit;
	}
	if (l->l4proto == IPPROTO_TCP && l->l4len >= sizeof(struct tcphdr)) {
		struct tcphdr *th = data + (l->l4off & 0xff);

		if ((void *)(th + 1) > data_end)
			return -1;
		l->tcp_fin_rst = th->fin || th->rst;
		l->l4hlen = th->doff * 4;
	} else if (l->l4proto == IPPROTO_UDP) {
		l->l4hlen = sizeof(struct udphdr);
	}
	return 0;
}

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

/* goto chain: at most this many in a row, then TC decides (it allows 16,
 * and drops the packet after that).
 */
#define XDP_FLOW_MAX_GOTOS	4

/* What the lookup decided for a frame, for either hook to carry out. */
struct flow_verdict {
	__u32 rule_id;		/* the rule whose action decides */
	__u32 n;		/* its number of actions */
	__u32 ifindex;		/* XDP_REDIRECT: the device */
	__u32 hops;		/* goto rules that led to it */
	__u32 path[XDP_FLOW_MAX_GOTOS];
};

/* What the cache may keep of a rule whose only action is @act. */
static __always_inline __u32 emc_act(const struct xdp_flow_action *act)
{
	if (act->id == XDP_FLOW_ACTION_DROP)
		return XDP_FLOW_EMC_DROP;
	if (act->id == XDP_FLOW_ACTION_REDIRECT)
		return act->ifindex;	/* 0 would be "read the rule" */
	return 0;
}

/*
 * One step of the goto chain, the @hops-th: looks @key up and reads the
 * rule. Returns 1 when the rule is a goto to follow (@key's chain is set
 * for the next step), 0 when the rule decides (@act and @n are its last
 * action and its number of actions), 2 when the cache knew that the rule
 * is a lone drop or redirect (@v has it all), -1 when the frame goes to TC.
 */
static __always_inline int flow_step(struct xdp_flow_key *key, __u64 h,
				     struct flow_verdict *v, __u64 limit,
				     __u32 hops, struct xdp_flow_action **act,
				     __u32 *n)
{
	struct xdp_flow_dp_rule *rule;
	__u32 *slot = NULL, hint = 0;
	int ret;

	/* A goto's step looks up a key with another chain, and compares
	 * every word: the rare steps' code stays small.
	 */
	if (hops)
		h = emc_hash(key);
	ret = xf_cfg_floor ? 0 : xdp_flow_lookup(key, h, !hops, &slot, &hint);
	if (ret < 0)
		return -1;
	v->rule_id = ret;
	/* A drop or a redirect the cache knows, while no change is pending
	 * (the gate is open): the rule need not be read.
	 */
	if (hint && !limit) {
		v->hops = hops;
		v->n = 1;
		v->ifindex = hint == XDP_FLOW_EMC_DROP ? 0 : hint;
		return 2;
	}
	rule = bpf_map_lookup_elem(&xf_rules, &v->rule_id);
	if (!rule || (limit && rule->order >= limit - 1))
		return -1;
	/* Rules TC executes itself, and "pass", are counted by TC; so are
	 * the rules that led here, as TC runs them again.
	 */
	*n = rule->nr_actions;
	if (rule->flags & XDP_FLOW_RULE_F_SOFTWARE || *n == 0 ||
	    *n > XDP_FLOW_MAX_ACTIONS)
		return -1;
	/* The last action decides; rewrites come before a redirect only. */
	*act = &rule->actions[(*n - 1) & (XDP_FLOW_MAX_ACTIONS - 1)];
	if ((*act)->id != XDP_FLOW_ACTION_GOTO) {
		v->hops = hops;
		if (slot && *n == 1)
			*slot = emc_act(*act);
		return 0;
	}
	if (*n > 1 || hops >= XDP_FLOW_MAX_GOTOS)
		return -1;
	v->path[hops] = v->rule_id;
	key->chain = (*act)->chain;
	return 1;
}

/*
 * The core both hooks share: finds the rule TC would run for @key,
 * following goto chains. Returns XDP_DROP or XDP_REDIRECT for the hook to
 * carry out (then count, with flow_count()), or XDP_PASS: the frame goes
 * to TC (a miss, a pass action, a rule TC executes itself).
 */
static __always_inline int flow_decide(struct xdp_flow_key *key,
				       struct flow_verdict *v)
{
	struct xdp_flow_action *act = NULL;
	__u32 n = 0, zero = 0;
	__u64 *gate, limit, h;
	int r;

	/* Hashed first, while the parser's words are at hand. */
	h = emc_hash(key);

	/* Rule changes the helper has not done yet: what they may decide
	 * goes to the stack (all of it, from XDP_FLOW_GATE_CLOSED on).
	 */
	gate = bpf_map_lookup_elem(&xf_gate, &zero);
	if (!gate)
		return XDP_PASS;
	limit = *gate;
	if (limit == XDP_FLOW_GATE_CLOSED)
		return XDP_PASS;
#ifdef XDP_FLOW_MUTANT_never_tcp
	if (key->ip_proto == IPPROTO_TCP && !key->ip_frag)
		return XDP_PASS;
#endif
	/*
	 * The chain's steps one after the other, not in a loop: with the
	 * lookup inline, clang may lay such a loop out so that it closes
	 * through an edge that is not a jump, which 6.1's verifier
	 * refuses ("back-edge").
	 */
	r = flow_step(key, h, v, limit, 0, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 1, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 2, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 3, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 4, &act, &n);
	if (r == 2)
		return v->ifindex ? XDP_REDIRECT : XDP_DROP;
	if (r != 0 || !act)
		return XDP_PASS;
	v->n = n;

	switch (act->id) {
	case XDP_FLOW_ACTION_DROP:
		if (n > 1)
			return XDP_PASS;
		return XDP_DROP;
	case XDP_FLOW_ACTION_REDIRECT:
		if (!act->ifindex)
			return XDP_PASS;
		v->ifindex = act->ifindex;
		return XDP_REDIRECT;
	}
	/* PASS, or an entry caught while being cleared. */
	return XDP_PASS;
}

/* Counts a frame of @tc_len bytes (as TC counts it) that @v handled: as
 * @packets packets (a GSO skb's segments, as TC counts them).
 */
static __always_inline void flow_count(const struct flow_verdict *v,
				       __u32 packets, __u64 tc_len)
{
#ifndef XDP_FLOW_MUTANT_count_path
	__u32 n;

	for (n = 0; n < XDP_FLOW_MAX_GOTOS; n++) {
		if (n >= v->hops)
			break;
		count(v->path[n], packets, tc_len);
	}
#endif
	count(v->rule_id, packets, tc_len);
}

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
