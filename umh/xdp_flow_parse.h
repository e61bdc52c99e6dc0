/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: the frame's headers, read once into the key the lookup
 * takes (parse_frame()), and again where the rewrites need them
 * (edit_layout()).
 *
 * May use: xdp_flow_dp.h (the key's layout).
 */
#ifndef _XDP_FLOW_PARSE_H
#define _XDP_FLOW_PARSE_H

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
	       KEY_OFF(enc_key_id) == 88 && KEY_OFF(enc_src) == 96 &&
	       KEY_OFF(enc_opts) == 104 && XDP_FLOW_KEY_WORDS == 14,
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
	kw[11] = 0;	/* no tunnel metadata: the hook reads it */
	kw[12] = 0;
	kw[13] = 0;
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
	/* Only a flowtable's rule edits a PPPoE frame (edit()). */
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

#endif /* _XDP_FLOW_PARSE_H */
