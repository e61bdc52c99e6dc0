/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xdp_flow: flow rules offloaded to XDP.
 *
 * This header is the one definition of everything that crosses a boundary
 * between the kernel module (net/xdp_flow/), the user-mode helper and its
 * XDP program (umh/), and the xdp-flow command: the flow key and mask, the
 * action list, the rule, the per-rule counters, and the generic netlink
 * family with its commands and attributes.
 *
 * Generic netlink protocol (family XDP_FLOW_GENL_NAME, version
 * XDP_FLOW_GENL_VERSION, every command needs CAP_NET_ADMIN, initial network
 * namespace only):
 *
 * xdp-flow command -> module (request, reply as usual):
 *   DEV_ENABLE  IFINDEX [XDP_MODE]       enable offload on a device (default
 *                                        XDP_MODE_AUTO)
 *   DEV_DISABLE IFINDEX                  disable it; rules go back to software
 *   DEV_GET     (dump)                   one message per enabled device:
 *                                        IFINDEX DEV_STATE XDP_MODE
 *                                        HOOK_WHY RULE_COUNT SWITCH
 *                                        [ERROR] [WAITING SHIELD_PRIO]
 *   RULE_GET    (dump) [IFINDEX]         one message per rule the module
 *                                        knows: RULE STATS [MSG] [WAITING]
 *                                        [IN_FLIGHT] (MSG: why a software
 *                                        rule is not in XDP; WAITING 1: the
 *                                        XDP tables had no room for it;
 *                                        IN_FLIGHT 1: the helper has not
 *                                        put it in yet)
 *   STATUS_GET                           HELPER_STATE HELPER_PID
 *                                        HELPER_RESTARTS RULE_COUNT
 *                                        RULE_IDS IN_FLIGHT [TO_STACK]
 *
 * helper -> module (HELLO over the family, accepted only from the process
 * the module started, which it identifies itself; REPLY, in the family's
 * message format, on the SOCK_SEQPACKET descriptor the module gives the
 * helper at start, --reply-fd=N, one or more whole messages per send,
 * each at an NLMSG_ALIGNTO boundary: never over the family, whose receive
 * path takes genetlink's global lock):
 *   HELLO  VERSION [PROG_FD]             the helper (re)registers; the module
 *                                        answers with the usual ack, then
 *                                        replays: RULE_DEL and DEV_DETACH for
 *                                        what went away while no helper ran,
 *                                        DEV_ATTACH for each enabled device,
 *                                        RULE_ADD for each rule in ascending
 *                                        order, then SYNC.
 *   REPLY  SEQ ERROR [MSG] [STATS]       the answer to one module request;
 *          [ROOM]                        RULE_ADD, RULE_DEL and SYNC also
 *                                        say what the tables have free
 *                                        after it (struct xdp_flow_room)
 *
 * module -> helper (unicast to the port that sent HELLO; each carries SEQ
 * and is answered by exactly one REPLY with the same SEQ; the helper takes
 * messages from the kernel only):
 *   RULE_ADD    SEQ RULE                 add, or replace the rule with the
 *                                        same id; -ENOSPC when a table is full
 *   RULE_DEL    SEQ RULE_ID
 *   DEV_ATTACH  SEQ IFINDEX XDP_MODE     attach the datapath (XDP_MODE is
 *                                        never AUTO), while the device has
 *                                        offloaded rules; the module
 *                                        does not wait for the REPLY (it may
 *                                        hold rtnl, which attaching needs)
 *   DEV_DETACH  SEQ IFINDEX              likewise asynchronous
 *   STATS_GET   SEQ [RULE_ID]            REPLY carries STATS for that rule,
 *                                        or for every rule without RULE_ID
 *                                        (then in several STATS attributes
 *                                        when one cannot hold them all)
 *   SYNC        SEQ                      the replay after HELLO is complete:
 *                                        drop every rule and attachment that
 *                                        was not replayed since HELLO
 *   SHUTDOWN    SEQ                      detach everything, unpin
 *                                        everything, REPLY, exit (the module
 *                                        itself, going away, kills the helper
 *                                        and runs it once more with
 *                                        --cleanup, which does the same)
 */
#ifndef _UAPI_LINUX_XDP_FLOW_H
#define _UAPI_LINUX_XDP_FLOW_H

#include <linux/types.h>

#define XDP_FLOW_GENL_NAME	"xdp_flow"
#define XDP_FLOW_GENL_VERSION	1

/* Bumped whenever a structure below changes; the module refuses a helper
 * whose HELLO carries another version.
 */
#define XDP_FLOW_ABI_VERSION	21

/* Table sizes, shared by the module's checks and the XDP program's maps. */
/*
 * Rule ids are 0 .. max_rules - 1, max_rules a module parameter from
 * XDP_FLOW_MIN_RULES to XDP_FLOW_MAX_RULES (the default); the tables by
 * rule id are sized for it when the helper loads them.
 */
#define XDP_FLOW_MAX_RULES	131072
#define XDP_FLOW_MIN_RULES	2048
#define XDP_FLOW_MAX_MASKS	256	/* distinct masks in the XDP tables */
#define XDP_FLOW_MAX_ACTIONS	8
/*
 * Shields: the top XDP_FLOW_MAX_SHIELDS rule ids (of max_rules), one per
 * enabled device.
 * A device's shield is a software rule (XDP_FLOW_RULE_F_SHIELD) that
 * matches every frame of the device, with the order of the first rule the
 * helper had no room for: from that rule on, the device's frames go to the
 * stack until the rule is in. The helper keeps a mask and
 * XDP_FLOW_MAX_SHIELDS flow entries free for shields, so a shield always
 * fits.
 */
#define XDP_FLOW_MAX_SHIELDS	1024
#define XDP_FLOW_SHIELD_ID_BASE	(XDP_FLOW_MAX_RULES - XDP_FLOW_MAX_SHIELDS)	/* by default */
/*
 * Flow entries rules may use: the module parameter max_flows, by default
 * XDP_FLOW_DEFAULT_FLOWS, at most XDP_FLOW_MAX_FLOWS. The helper sizes the
 * XDP flow table for that many plus XDP_FLOW_MAX_SHIELDS when it loads it.
 */
#define XDP_FLOW_DEFAULT_FLOWS	((1u << 17) - XDP_FLOW_MAX_SHIELDS)
#define XDP_FLOW_MAX_FLOWS	((1u << 20) - XDP_FLOW_MAX_SHIELDS)
/* Flow entries one rule may take: a port range is matched as the prefixes
 * that cover it, one masked entry each (a range on both ports: the product).
 */
#define XDP_FLOW_MAX_RULE_ENTRIES	64

/* Where the helper pins what must outlive it (bpffs). */
#define XDP_FLOW_PIN_DIR	"/sys/fs/bpf/xdp_flow"

/*
 * The gate: a map of the XDP program (an array of one __u64) that only the
 * module writes; it finds it by this name among the maps of the program
 * the helper names in HELLO (PROG_FD). 0: XDP acts on every rule it holds.
 * Otherwise 1 + the lowest order XDP may not act on: a frame whose rule
 * (or a rule on its way through goto chains) has that order or a higher
 * one goes to the stack, and 1 sends every frame there. The module lowers
 * it to the order of each rule change it sent that the helper has not done
 * yet (XDP never acts on tables that lack a change TC has made), sets it
 * to 1 when a rule change reaches no helper, and back to 0 when nothing is
 * pending.
 */
#define XDP_FLOW_GATE_NAME	"xf_gate"
#define XDP_FLOW_GATE_OPEN	0ULL
#define XDP_FLOW_GATE_CLOSED	1ULL

/*
 * The held rules: a map of the XDP program (an array of __u32 by rule id,
 * at least as many as rule ids) that only the module writes, found like
 * the gate. While the gate is not open, a frame whose rule's entry is not
 * 0 goes to the stack too, whatever the rule's order. The module holds
 * back a flowtable's flow that way while its change is in flight: such
 * flows never overlap, so that the others, newer flows (of later orders)
 * too, go on in XDP. The entry counts the changes in flight that hold
 * the rule.
 */
#define XDP_FLOW_HELD_NAME	"xf_held"

/*
 * The counters: struct xdp_flow_counter per rule id and CPU. The XDP
 * program's map XDP_FLOW_COUNTERS_NAME is an array of maps: slot
 * id / XDP_FLOW_COUNTER_CHUNK holds a per-CPU array of the counters of the
 * XDP_FLOW_COUNTER_CHUNK ids from there. The helper makes chunks as rules
 * need them and frees those without rules while there are more than twice
 * as many as the rules use, and the module gives out low ids first: per-CPU
 * memory follows the rules in use, not max_rules. The module finds the map
 * as it finds the gate and reads it itself, so that no stats request of TC
 * or nftables waits for the helper.
 */
#define XDP_FLOW_COUNTERS_NAME	"xf_counters"
#define XDP_FLOW_COUNTER_CHUNK	1024

/*
 * Redirects that may enter a veth's peer directly: the TC hook's map
 * XDP_FLOW_PEERS_NAME (a hash of struct xdp_flow_peer by the veth's
 * ifindex) that only the module writes; it finds it among the maps of the
 * program the helper names in HELLO (TC_PROG_FD). An entry says that a
 * redirect to that veth may use bpf_redirect_peer(), for the frames the
 * entry admits (net/xdp_flow/peer.c says which); no entry: the veth
 * transmits the frame, as TC's mirred does.
 */
#define XDP_FLOW_PEERS_NAME	"xf_peers"
#define XDP_FLOW_MAX_PEERS	16384

/*
 * Redirects the XDP hook may carry out itself: the XDP program's map
 * XDP_FLOW_EGRESS_NAME (a hash of __u64 by ifindex) that only the module
 * writes; it finds it among the maps of the program the helper names in
 * HELLO (PROG_FD). An entry (value XDP_FLOW_EGRESS_EMPTY) says that the
 * device of init_net with that ifindex takes XDP frames (or is a VXLAN or
 * Geneve device, for the tc hook's TUNNEL_SET) and transmits what mirred
 * sends it with nothing on the way: no queueing qdisc, no egress filter,
 * tcx program or netfilter egress hook. No entry: a redirect there (a
 * TUNNEL_SET's output) goes to the stack untouched and uncounted, and
 * TC's mirred transmits it (net/xdp_flow/peer.c says when entries
 * change).
 */
#define XDP_FLOW_EGRESS_NAME	"xf_egress"
#define XDP_FLOW_MAX_EGRESS	16384
#define XDP_FLOW_EGRESS_EMPTY	1ULL

/*
 * Redirects and mirrors into a device's receive path (mirred ingress): the
 * TC hook's map XDP_FLOW_INGRESS_NAME (a hash of union xdp_flow_ingress by
 * the target's ifindex) that only the module writes. The TC hook enters
 * the frame with bpf_redirect() or bpf_clone_redirect() and BPF_F_INGRESS,
 * which classifies it for the target anew (eth_type_trans()) and zeroes
 * its priority; mirred keeps both. An entry says that the target is up
 * with carrier (mirred's condition), runs no XDP program (mirred's frames
 * skip generic XDP) and nothing at its ingress: no tcx program, TC filter
 * or netfilter hook, which could send the frame on again (mirred's
 * nesting limit ends a loop of redirects that the backlog would not). The
 * frames whose class the target's address would not change and whose
 * priority is 0 may then take the path. No entry: the frame goes to the
 * stack untouched, where TC's mirred enters it (net/xdp_flow/peer.c says
 * when entries change).
 */
#define XDP_FLOW_INGRESS_NAME	"xf_ingress"
#define XDP_FLOW_MAX_INGRESS	16384

/**
 * union xdp_flow_ingress - a device a frame may enter through the TC hook
 * @mac: the device's address
 * @pad: zero
 * @word: the entry as one word, which the module writes at once; never 0
 */
union xdp_flow_ingress {
	struct {
		__u8	mac[6];
		__u16	pad;
	};
	__u64	word;
};

/**
 * union xdp_flow_peer - a veth whose peer may take redirected frames directly
 * @mac: the peer's address: only frames to it (the peer would classify any
 *	other frame otherwise than bpf_redirect_peer() does)
 * @mtu: the peer's MTU: longer frames are left to the veth, which drops
 *	them
 * @word: the entry as one word, which the module writes at once; never 0
 */
union xdp_flow_peer {
	struct {
		__u8	mac[6];
		__u16	mtu;
	};
	__u64	word;
};

/**
 * struct xdp_flow_counter - what the XDP program counted for a rule on one CPU
 * @packets: packets
 * @bytes: their bytes, counted as TC does at ingress (without the Ethernet
 *	header)
 * @lastused: jiffies_64 at the last packet, made odd (bpf_jiffies64() | 1):
 *	0 if none. Jiffies, not a clock read: the XDP program reads them with
 *	one load, and the kernel converts them (xdp_flow_jiffies_to_ns()).
 */
struct xdp_flow_counter {
	__u64	packets;
	__u64	bytes;
	__u64	lastused;
};

/* xdp_flow_key.ip_frag bits, as the kernel's flow dissector sets them. */
#define XDP_FLOW_FRAG_IS	0x01	/* any IPv4/IPv6 fragment */
#define XDP_FLOW_FRAG_FIRST	0x02	/* the fragment at offset 0 */

/* xdp_flow_key.enc_opts: the tunnel option bytes a rule can match */
#define XDP_FLOW_ENC_OPTS_LEN	8

/**
 * struct xdp_flow_key - the fields a packet is classified on
 * @ifindex: ingress device
 * @eth_dst: Ethernet destination address
 * @eth_src: Ethernet source address
 * @n_proto: EtherType after all VLAN tags the program parsed (after a
 *	PPPoE session header, that of the protocol it carries)
 * @vlan_tpid: outer VLAN tag protocol (0 when the frame carries no tag)
 * @vlan_tci: outer VLAN TCI (priority and id; the DEI bit is never matched)
 * @cvlan_tpid: inner VLAN tag protocol (0 without an inner tag)
 * @cvlan_tci: inner VLAN TCI
 * @ip_proto: IP protocol (IPv4 protocol or IPv6 next header), or for ARP the
 *	low byte of the opcode
 * @ip_tos: IPv4 TOS or IPv6 traffic class
 * @ip_ttl: IPv4 TTL or IPv6 hop limit
 * @ip_frag: XDP_FLOW_FRAG_* bits
 * @tcp_flags: TCP flags (the low 12 bits of the data offset word)
 * @ip_src: source address; IPv4 in ip_src[0]; ARP sender protocol address
 * @ip_dst: destination address; IPv4 in ip_dst[0]; ARP target address
 * @l4_src: TCP/UDP/SCTP source port, or htons(ICMP type)
 * @l4_dst: TCP/UDP/SCTP destination port, or htons(ICMP code)
 * @arp_sha: ARP sender hardware address
 * @arp_tha: ARP target hardware address
 * @chain: the TC chain being classified in (0, or a goto's target)
 * @pppoe_sid: PPPoE session id, when a PPPoE session header follows the
 *	VLAN tags (@n_proto is then the EtherType of the PPP protocol it
 *	carries, as flower's dissector has it)
 * @ppp_proto: that header's PPP protocol (PPP_IP or PPP_IPV6, the only
 *	ones the program parses on); 0 without a PPPoE header
 * @enc_key_id: the tunnel key (VNI) of the tunnel metadata the frame
 *	carries, as flower's enc_key_id (the receive path of a VXLAN or
 *	Geneve device in external mode gives it); only the tc hook reads
 *	the metadata
 * @enc_tos: the outer IPv4 TOS or IPv6 traffic class of that metadata
 * @enc_ttl: its outer TTL or hop limit
 * @enc_addr: XDP_FLOW_ENC_IPV4 or XDP_FLOW_ENC_IPV6 when the frame
 *	carries IPv4 or IPv6 tunnel metadata, else 0 (with every enc_ field
 *	0, as flower's dissector leaves them for a frame without metadata)
 * @enc_opt_len: the length of the metadata's tunnel options (Geneve's
 *	option TLVs, as the receive path of a Geneve device in external
 *	mode gives them), as flower's enc_opts length; 0 without options
 * @enc_src: the outer IPv4 source (the remote end); over IPv6,
 *	xdp_flow_enc6_digest() of the outer source (see struct
 *	xdp_flow_rule's @enc6)
 * @enc_dst: the outer IPv4 destination (the local end); over IPv6, the
 *	digest of the outer destination
 * @enc_opts: the first XDP_FLOW_ENC_OPTS_LEN bytes of those options, 0
 *	past their length, as flower's enc_opts data (the tc hook reads
 *	them only while a rule matches them)
 *
 * All multi-byte fields are in network byte order except @ifindex. The size
 * is a multiple of 8 so that the XDP program can mask it a word at a time.
 * A field the packet does not have is zero (ports of a fragment, say), as
 * the kernel's flow dissector leaves it for TC flower.
 */
struct xdp_flow_key {
	__u32	ifindex;
	__u8	eth_dst[6];
	__u8	eth_src[6];
	__be16	n_proto;
	__be16	vlan_tpid;
	__be16	vlan_tci;
	__be16	cvlan_tpid;
	__be16	cvlan_tci;
	__u8	ip_proto;
	__u8	ip_tos;
	__u8	ip_ttl;
	__u8	ip_frag;
	__be16	tcp_flags;
	__be32	ip_src[4];
	__be32	ip_dst[4];
	__be16	l4_src;
	__be16	l4_dst;
	__u8	arp_sha[6];
	__u8	arp_tha[6];
	__u32	chain;
	__be16	pppoe_sid;
	__be16	ppp_proto;
	__be32	enc_key_id;
	__u8	enc_tos;
	__u8	enc_ttl;
	__u8	enc_addr;
	__u8	enc_opt_len;
	__be32	enc_src;
	__be32	enc_dst;
	__u8	enc_opts[XDP_FLOW_ENC_OPTS_LEN];
};

/* xdp_flow_key.enc_addr */
#define XDP_FLOW_ENC_IPV4	1
#define XDP_FLOW_ENC_IPV6	2

/*
 * The key holds an outer IPv6 address as this digest of its 16 bytes
 * (FNV-1a), which the module, the helper and the program compute alike;
 * a rule that matches one keeps the whole address (struct xdp_flow_rule's
 * @enc6), and a frame whose digest matches but whose address does not
 * goes to the stack.
 */
static __inline__ __u32 xdp_flow_enc6_digest(const __u8 *addr)
{
	__u32 h = 2166136261U;
	int i;

	for (i = 0; i < 16; i++) {
		h ^= addr[i];
		h *= 16777619U;
	}
	return h;
}

enum xdp_flow_action_id {
	XDP_FLOW_ACTION_UNSPEC,
	XDP_FLOW_ACTION_DROP,		/* drop, counted */
	XDP_FLOW_ACTION_PASS,		/* hand to the stack; TC counts it */
	XDP_FLOW_ACTION_REDIRECT,	/* transmit out of @ifindex, counted */
	XDP_FLOW_ACTION_MANGLE,		/* pedit set: word = (word & mask) ^ val */
	XDP_FLOW_ACTION_ADD,		/* pedit add: word = (word & mask) ^
					 *	((word + val) & ~mask)
					 */
	XDP_FLOW_ACTION_CSUM,		/* recompute the checksums in csum_flags */
	XDP_FLOW_ACTION_VLAN_PUSH,	/* push an outer tag */
	XDP_FLOW_ACTION_VLAN_POP,	/* pop the outer tag, if any */
	XDP_FLOW_ACTION_VLAN_MODIFY,	/* rewrite the outer tag, if any */
	XDP_FLOW_ACTION_GOTO,		/* classify again in chain @chain */
	/*
	 * An nftables flowtable's forwarding (TC_SETUP_FT), done as its
	 * software path does it (net/netfilter/nf_flow_table_ip.c), with
	 * incremental checksum updates. FT_ROUTE comes first; the frame
	 * goes to the stack untouched where the software path would leave
	 * it to the stack (see XDP_FLOW_FT_*).
	 */
	XDP_FLOW_ACTION_FT_ROUTE,	/* checks, TTL or hop limit - 1, set
					 * the Ethernet addresses
					 */
	XDP_FLOW_ACTION_FT_PORTS,	/* NAT: TCP or UDP ports */
	XDP_FLOW_ACTION_FT_SRC_ADDR,	/* NAT: IPv4 or IPv6 source */
	XDP_FLOW_ACTION_FT_DST_ADDR,	/* NAT: IPv4 or IPv6 destination */
	XDP_FLOW_ACTION_PPPOE_PUSH,	/* push a PPPoE session header */
	XDP_FLOW_ACTION_PPPOE_POP,	/* pop the PPPoE session header */
	XDP_FLOW_ACTION_MIRROR,		/* a copy out of @ifindex (tc hook) */
	XDP_FLOW_ACTION_REDIRECT_INGRESS, /* into @ifindex's receive path */
	XDP_FLOW_ACTION_MIRROR_INGRESS,	/* a copy into it (tc hook) */
	XDP_FLOW_ACTION_PTYPE,		/* set the packet type (tc hook) */
	XDP_FLOW_ACTION_TUNNEL_SET,	/* encapsulation to come (tc hook) */
	XDP_FLOW_ACTION_TUNNEL_UNSET,	/* the tunnel metadata dropped (tc
					 * hook)
					 */
	XDP_FLOW_ACTION_TUNNEL_OPTS,	/* Geneve options of the tunnel set
					 * before (tc hook)
					 */
	__XDP_FLOW_ACTION_MAX,
};

/* The most bytes of Geneve options a TUNNEL_OPTS carries. */
#define XDP_FLOW_TUN_OPTS_MAX	12

/* xdp_flow_action.tunnel.flags */
#define XDP_FLOW_TUN_CSUM	0x1	/* outer UDP checksum */
#define XDP_FLOW_TUN_DF		0x2	/* outer IPv4 don't fragment */

/* xdp_flow_action.ft_ports.which */
#define XDP_FLOW_FT_SPORT	0x1
#define XDP_FLOW_FT_DPORT	0x2

/* xdp_flow_action.mangle.htype: the header an offset counts from, as in
 * TC pedit (Ethernet: the frame; IPv4, IPv6: the network header after the
 * outer VLAN tag; TCP, UDP: the transport header).
 */
enum xdp_flow_hdr {
	XDP_FLOW_HDR_ETH,
	XDP_FLOW_HDR_IP4,
	XDP_FLOW_HDR_IP6,
	XDP_FLOW_HDR_TCP,
	XDP_FLOW_HDR_UDP,
	__XDP_FLOW_HDR_MAX,
};

/* xdp_flow_action.csum_flags: the checksums XDP_FLOW_ACTION_CSUM
 * recomputes, the bits of TC's csum action that XDP executes.
 */
#define XDP_FLOW_CSUM_IPV4HDR	0x01
#define XDP_FLOW_CSUM_ICMP	0x02
#define XDP_FLOW_CSUM_TCP	0x08
#define XDP_FLOW_CSUM_UDP	0x10

/**
 * struct xdp_flow_action - one action of a rule
 * @id: enum xdp_flow_action_id
 * @ifindex: REDIRECT: the target device; MIRROR: the device a copy of the
 *	frame, as the actions before made it, is sent out of, as TC's mirred
 *	egress mirror sends it (through the device's transmit path); the
 *	frame goes on to the next action. Only the tc hook executes it: a
 *	rule of the XDP hook with a MIRROR leaves its frames to the stack.
 *	After a MIRROR, a rule may end in PASS (not DROP: TC counts a drop on
 *	its gact alone), which then hands the frame to the stack past TC's
 *	classic filters, as TC's own pass would, not back to TC.
 *	REDIRECT_INGRESS (terminal) and
 *	MIRROR_INGRESS: the frame, or a copy, enters @ifindex's receive
 *	path, as TC's mirred ingress redirect and mirror do, where the TC
 *	hook can do it exactly (XDP_FLOW_INGRESS_NAME); else the frame goes
 *	to the stack untouched. MIRROR_INGRESS counts as a MIRROR above
 * @csum_flags: CSUM: XDP_FLOW_CSUM_* bits
 * @ptype: PTYPE: the packet type (PACKET_HOST, _BROADCAST, _MULTICAST or
 *	_OTHERHOST) TC's skbedit ptype gives the frame, which the stack, a
 *	mirror and an ingress redirect see after it (Open vSwitch sets
 *	PACKET_HOST before its output to an internal port). Only the tc hook
 *	executes it
 * @tunnel: TUNNEL_SET: what TC's tunnel_key set gives the frame for the
 *	tunnel device it is sent to next (a Geneve device, or a VXLAN device
 *	in external mode whose own destination port the rule uses; over
 *	IPv4; a TUNNEL_OPTS after it gives Geneve options): the tunnel's
 *	metadata, as bpf_skb_set_tunnel_key() sets it. Only the tc hook
 *	executes it
 * @tunnel.id: the key (VNI), host order
 * @tunnel.src: the outer IPv4 source, 0 for the route's
 * @tunnel.dst: the outer IPv4 destination
 * @tunnel.tos: the outer TOS
 * @tunnel.ttl: the outer TTL, 0 for the route's
 * @tunnel.flags: XDP_FLOW_TUN_*.
 *	TUNNEL_UNSET (no operand): TC's tunnel_key unset drops the tunnel
 *	metadata the frame arrived with. The tc hook cannot drop it: it runs
 *	such a rule only where nothing after it reads the metadata, whose
 *	outputs are all veths with an empty transmit path (an entry in
 *	XDP_FLOW_PEERS_NAME; veth drops the metadata as it hands the frame
 *	to its peer), else the frame goes to the stack untouched. The module
 *	gives it no rule that ends in anything but such a redirect or a drop
 * @tun_opts: TUNNEL_OPTS, right after a TUNNEL_SET: the Geneve options of
 *	that metadata, as bpf_skb_set_tunnel_opt() sets them (the outputs
 *	after it are Geneve devices). Only the tc hook executes it
 * @tun_opts.len: the bytes of @tun_opts.data, a multiple of 4, 4 to
 *	XDP_FLOW_TUN_OPTS_MAX
 * @tun_opts.pad: zero
 * @tun_opts.data: the options, TLVs as on the wire (class, type, length
 *	in 4-byte words, data)
 * @chain: GOTO: the chain
 * @vlan: VLAN_PUSH and VLAN_MODIFY: the tag
 * @vlan.proto: tag protocol (TPID)
 * @vlan.tci: TCI in host order; VLAN_MODIFY: the bits it sets
 * @vlan.keep: VLAN_MODIFY: the TCI bits kept from the frame's tag
 * @vlan.pad: zero
 * @mangle: MANGLE and ADD: one 32-bit word of a header, as TC pedit
 * @mangle.htype: enum xdp_flow_hdr
 * @mangle.offset: byte offset of the word from the start of the header
 * @mangle.mask: bits of the word kept (the word as loaded from the frame,
 *	in host order, as TC pedit has it)
 * @mangle.val: the value, same order
 * @ft_route: FT_ROUTE: a frame goes to the stack untouched when it is an
 *	IPv4 fragment or has IPv4 options, when its TTL or hop limit is 1 or
 *	less, or when more than @mtu bytes follow its link-layer headers;
 *	else its TTL (and IPv4 header checksum) or hop limit is decremented
 *	as ip_decrease_ttl() does, and its Ethernet addresses are set
 * @ft_route.mtu: the output route's MTU
 * @ft_route.eth_dst: the new destination address
 * @ft_route.eth_src: the new source address
 * @ft_ports: FT_PORTS: the ports XDP_FLOW_FT_* in @which are set, the
 *	transport checksum updated as inet_proto_csum_replace2() does (a UDP
 *	checksum of 0 stays 0)
 * @ft_ports.src: the new source port
 * @ft_ports.dst: the new destination port
 * @ft_ports.which: XDP_FLOW_FT_SPORT, XDP_FLOW_FT_DPORT
 * @pppoe_sid: PPPOE_PUSH: the session id of the header pushed after the
 *	Ethernet header (version 1, type 1, code 0, the length of what
 *	follows it, and the PPP protocol of the frame's IPv4 or IPv6), as
 *	the PPPoE device or the flowtable's software path writes it.
 *	PPPOE_POP takes the header out again, the PPP protocol becoming the
 *	EtherType (the frame must be a flowtable rule's own, whose match
 *	holds the session).
 * @ft_addr: FT_SRC_ADDR, FT_DST_ADDR: the address is set (IPv4 in
 *	@ft_addr[0]), the IPv4 header checksum and the transport checksum
 *	(pseudo header) updated as csum_replace4() and
 *	inet_proto_csum_replace4() or inet_proto_csum_replace16() do
 */
struct xdp_flow_action {
	__u32	id;
	union {
		__u32	ifindex;
		__u32	csum_flags;
		__u32	ptype;
		__u32	chain;
		struct {
			__be16	proto;
			__u16	tci;
			__u16	keep;
			__u16	pad;
		} vlan;
		struct {
			__u32	htype;
			__u32	offset;
			__u32	mask;
			__u32	val;
		} mangle;
		struct {
			__u16	mtu;
			__u8	eth_dst[6];
			__u8	eth_src[6];
			__u16	pad;
		} ft_route;
		struct {
			__be16	src;
			__be16	dst;
			__u32	which;
		} ft_ports;
		__be32	ft_addr[4];
		__be16	pppoe_sid;
		struct {
			__u32	id;
			__be32	src;
			__be32	dst;
			__u8	tos;
			__u8	ttl;
			__u16	flags;
		} tunnel;
		struct {
			__u8	len;
			__u8	pad[3];
			__u8	data[XDP_FLOW_TUN_OPTS_MAX];
		} tun_opts;
	};
};

/**
 * struct xdp_flow_port_range - an inclusive range of TCP, UDP or SCTP ports
 * @min: lowest port, host order
 * @max: highest port, host order; 0 when the rule has no range here
 */
struct xdp_flow_port_range {
	__u16	min;
	__u16	max;
};

/**
 * struct xdp_flow_enc6 - outer IPv6 addresses of tunnel metadata
 * @src: the source (the remote end)
 * @dst: the destination (the local end)
 */
struct xdp_flow_enc6 {
	__u8	src[16];
	__u8	dst[16];
};

/* xdp_flow_rule.flags */
#define XDP_FLOW_RULE_F_SOFTWARE	0x1	/* a rule TC keeps in software:
						 * the key is a superset of its
						 * match, and packets that hit
						 * it go to the stack
						 */
#define XDP_FLOW_RULE_F_NFTABLES	0x2	/* offered by an nftables
						 * netdev ingress chain of
						 * flags offload, not by TC
						 */
#define XDP_FLOW_RULE_F_SHIELD		0x4	/* a device's shield: with
						 * F_SOFTWARE, id among the
						 * top XDP_FLOW_MAX_SHIELDS
						 * of max_rules, key and
						 * mask the ifindex
						 */
#define XDP_FLOW_RULE_F_FLOWTABLE	0x8	/* one direction of a flow of
						 * an nftables flowtable
						 * (TC_SETUP_FT)
						 */
#define XDP_FLOW_RULE_F_ENC6		0x10	/* matches outer IPv6
						 * addresses: @enc6 has them
						 */

/* Added to an nftables chain's priority (1 .. 65535) in a rule's @order:
 * the netdev ingress hook runs after TC's, so its rules come after TC's.
 */
#define XDP_FLOW_ORDER_NFT_BASE		0x10000

/**
 * struct xdp_flow_rule - a rule as the module hands it to the helper
 * @id: index of the rule in the helper's tables, chosen by the module and
 *	stable for the rule's life (also across helper restarts)
 * @flags: XDP_FLOW_RULE_F_*
 * @order: (TC prio << 32) | (the rule's flower mask rank within that prio
 *	<< 1) | 1 for an offloaded rule, 0 for a software one; among the
 *	rules that match a packet, the lowest @order wins, which is the rule
 *	TC flower would have chosen, or a software rule that hands the packet
 *	to TC where XDP cannot tell (port ranges of one mask that overlap).
 *	An nftables rule (XDP_FLOW_RULE_F_NFTABLES) has
 *	(XDP_FLOW_ORDER_NFT_BASE + its chain's priority) << 32 |
 *	(its position in the chain << 1) | 1: the netdev ingress hook runs
 *	after TC's, and a chain runs its rules in
 *	the order they were added
 * @cookie: TC's cookie of the rule (for display)
 * @ft_conn: XDP_FLOW_RULE_F_FLOWTABLE: the connection the rule is a
 *	direction of, the same (non-zero) value for both directions of a
 *	flowtable's flow; 0 otherwise. Once a frame of it with TCP FIN or
 *	RST has gone to the stack (where the flowtable tears the flow down),
 *	every frame of the connection, both ways, goes there until its
 *	rules are deleted, as the flowtable's software path sends them
 * @chain: TC chain index
 * @nr_actions: number of valid entries in @actions
 * @key: the values to match, already masked with @mask
 * @mask: set bits are matched
 * @l4_src_range: source ports matched as a range (@mask.l4_src is then 0)
 * @l4_dst_range: destination ports matched as a range (@mask.l4_dst is
 *	then 0)
 * @actions: the actions, applied in order
 * @enc6: XDP_FLOW_RULE_F_ENC6: the outer IPv6 source and destination the
 *	rule matches, each where @mask.enc_src or @mask.enc_dst is set (a
 *	whole address: @key holds its digest), 0 elsewhere
 */
struct xdp_flow_rule {
	__u32	id;
	__u32	flags;
	__u64	order;
	__u64	cookie;
	__u64	ft_conn;
	__u32	chain;
	__u32	nr_actions;
	struct xdp_flow_key key;
	struct xdp_flow_key mask;
	struct xdp_flow_port_range l4_src_range;
	struct xdp_flow_port_range l4_dst_range;
	struct xdp_flow_action actions[XDP_FLOW_MAX_ACTIONS];
	struct xdp_flow_enc6 enc6;
};

/**
 * struct xdp_flow_stats - counters of one rule
 * @id: rule id
 * @pad: zero
 * @packets: packets the rule handled in XDP
 * @bytes: their bytes, counted as TC does at ingress (without the Ethernet
 *	header)
 * @lastused_ns: from the module: CLOCK_MONOTONIC time of the last packet,
 *	0 if none
 * @lastused_jiffies: from the helper instead: struct xdp_flow_counter's
 *	@lastused, which only the kernel can convert
 *
 * Counters are totals since the rule was added; the module turns them into
 * the deltas TC expects.
 */
struct xdp_flow_stats {
	__u32	id;
	__u32	pad;
	__u64	packets;
	__u64	bytes;
	union {
		__u64	lastused_ns;
		__u64	lastused_jiffies;
	};
};

/**
 * struct xdp_flow_room - what the helper's tables have free
 * @masks: masks a rule may still take
 * @flows: flow entries rules may still take
 *
 * A rule without port ranges takes at most one of each: the module sends
 * such rules without waiting for the reply while the room it last heard
 * of, less the rules it sent since, holds them.
 */
struct xdp_flow_room {
	__u32	masks;
	__u32	flows;
};

/*
 * Where the datapath runs on a device (the hook). XDP_MODE_AUTO only in
 * DEV_ENABLE: the module picks TC where frames arrive as skbs anyway
 * (virtual devices) and the kernel has tcx, XDP native mode elsewhere, and
 * says why in HOOK_WHY.
 */
enum xdp_flow_xdp_mode {
	XDP_FLOW_XDP_MODE_NATIVE,	/* XDP, driver mode */
	XDP_FLOW_XDP_MODE_GENERIC,	/* XDP, skb mode, only when asked */
	XDP_FLOW_XDP_MODE_TC,		/* TC-BPF at ingress through tcx */
	XDP_FLOW_XDP_MODE_AUTO,		/* DEV_ENABLE: the module chooses */
};

enum xdp_flow_dev_state {
	XDP_FLOW_DEV_STATE_ATTACHING,	/* enabled, helper not done yet */
	XDP_FLOW_DEV_STATE_ATTACHED,	/* the datapath on the device */
	XDP_FLOW_DEV_STATE_ERROR,	/* the helper failed; see ERROR */
	XDP_FLOW_DEV_STATE_IDLE,	/* enabled, no offloaded rule: the
					 * datapath is not on the device
					 */
};

/*
 * What turned offload on for a device (DEV_GET's SWITCH). Either switch
 * turns it off: the ethtool feature follows DEV_ENABLE and DEV_DISABLE on
 * the devices that have it, and `ethtool -K` enables and disables.
 */
enum xdp_flow_switch {
	XDP_FLOW_SWITCH_GENL,		/* DEV_ENABLE (xdp-flow enable) */
	XDP_FLOW_SWITCH_HW_TC,		/* ethtool's hw-tc-offload, which
					 * the module offers on the devices
					 * without an offload of their own
					 */
	XDP_FLOW_SWITCH_FLOW_OFFLOAD_XDP, /* ethtool's flow-offload-xdp,
					   * on kernels that have it
					   */
};

enum xdp_flow_helper_state {
	XDP_FLOW_HELPER_STOPPED,	/* never started, or given up */
	XDP_FLOW_HELPER_STARTING,	/* started, HELLO not seen yet */
	XDP_FLOW_HELPER_RUNNING,
};

enum xdp_flow_cmd {
	XDP_FLOW_CMD_UNSPEC,
	XDP_FLOW_CMD_DEV_ENABLE,
	XDP_FLOW_CMD_DEV_DISABLE,
	XDP_FLOW_CMD_DEV_GET,
	XDP_FLOW_CMD_RULE_GET,
	XDP_FLOW_CMD_STATUS_GET,
	XDP_FLOW_CMD_HELLO,
	XDP_FLOW_CMD_REPLY,
	XDP_FLOW_CMD_RULE_ADD,
	XDP_FLOW_CMD_RULE_DEL,
	XDP_FLOW_CMD_DEV_ATTACH,
	XDP_FLOW_CMD_DEV_DETACH,
	XDP_FLOW_CMD_STATS_GET,
	XDP_FLOW_CMD_SYNC,
	XDP_FLOW_CMD_SHUTDOWN,
	__XDP_FLOW_CMD_MAX,
};

#define XDP_FLOW_CMD_MAX (__XDP_FLOW_CMD_MAX - 1)

enum xdp_flow_attr {
	XDP_FLOW_ATTR_UNSPEC,
	XDP_FLOW_ATTR_IFINDEX,		/* u32 */
	XDP_FLOW_ATTR_XDP_MODE,		/* u32, enum xdp_flow_xdp_mode */
	XDP_FLOW_ATTR_DEV_STATE,	/* u32, enum xdp_flow_dev_state */
	XDP_FLOW_ATTR_RULE_COUNT,	/* u32 */
	XDP_FLOW_ATTR_ERROR,		/* s32, 0 or a negative errno */
	XDP_FLOW_ATTR_MSG,		/* string, why ERROR happened */
	XDP_FLOW_ATTR_RULE,		/* binary, struct xdp_flow_rule */
	XDP_FLOW_ATTR_RULE_ID,		/* u32 */
	XDP_FLOW_ATTR_STATS,		/* binary, array of xdp_flow_stats */
	XDP_FLOW_ATTR_SEQ,		/* u32 */
	XDP_FLOW_ATTR_VERSION,		/* u32, XDP_FLOW_ABI_VERSION */
	XDP_FLOW_ATTR_PID,		/* u32, unused: ignored in HELLO */
	XDP_FLOW_ATTR_HELPER_STATE,	/* u32, enum xdp_flow_helper_state */
	XDP_FLOW_ATTR_HELPER_PID,	/* u32 */
	XDP_FLOW_ATTR_HELPER_RESTARTS,	/* u32 */
	XDP_FLOW_ATTR_PAD,
	XDP_FLOW_ATTR_HOOK_WHY,		/* string, why this hook (DEV_GET) */
	XDP_FLOW_ATTR_WAITING,		/* u32, rules that wait for room in
					 * the XDP tables (DEV_GET)
					 */
	XDP_FLOW_ATTR_PROG_FD,		/* u32, HELLO: the helper's XDP
					 * program, whose maps hold the gate
					 */
	XDP_FLOW_ATTR_TO_STACK,		/* flag, STATUS_GET: the gate is
					 * closed, every frame goes to the
					 * stack
					 */
	XDP_FLOW_ATTR_SHIELD_PRIO,	/* u32, TC prio (nftables: chain
					 * priority + XDP_FLOW_ORDER_NFT_BASE)
					 * from which the device's frames go
					 * to the stack (DEV_GET, with WAITING)
					 */
	XDP_FLOW_ATTR_PROGRESS,		/* flag, REPLY: no answer yet, the
					 * helper is still at request SEQ
					 * (0: taking over the pinned state,
					 * before HELLO); the module waits on
					 */
	XDP_FLOW_ATTR_RULE_IDS,		/* u32, STATUS_GET: rule ids in use
					 * (of max_rules): enabled
					 * devices' rules and shields
					 */
	XDP_FLOW_ATTR_ROOM,		/* binary, REPLY: struct
					 * xdp_flow_room
					 */
	XDP_FLOW_ATTR_IN_FLIGHT,	/* u32, STATUS_GET: rule changes TC
					 * made that the helper has not done
					 * yet (what they may match goes to
					 * the stack meanwhile); RULE_GET: 1
					 * while the rule's add is one
					 */
	XDP_FLOW_ATTR_MAX_RULES,	/* u32, STATUS_GET: rule ids there
					 * are (module parameter max_rules)
					 */
	XDP_FLOW_ATTR_POSTED,		/* flag, RULE_ADD and RULE_DEL: the
					 * module does not wait for the
					 * answer, so the helper may hold it
					 * back a moment to answer several in
					 * one write
					 */
	XDP_FLOW_ATTR_TC_PROG_FD,	/* u32, HELLO: the helper's TC
					 * program, whose maps hold the peers
					 */
	XDP_FLOW_ATTR_SWITCH,		/* u32, DEV_GET: enum
					 * xdp_flow_switch
					 */
	XDP_FLOW_ATTR_ALL_PRIO,		/* u32, DEV_GET: TC prio (nftables:
					 * as SHIELD_PRIO) of the device's
					 * first rule that hands every frame
					 * reaching it to the stack
					 */
	XDP_FLOW_ATTR_ALL_KIND,		/* string, DEV_GET: that rule's
					 * classifier ("matchall", "u32",
					 * "bpf", "flower", "nftables")
					 */
	XDP_FLOW_ATTR_ALL_BEFORE,	/* u32, DEV_GET: offloaded rules of
					 * chain 0 that come before it (0:
					 * nothing of the device runs in XDP)
					 */
	__XDP_FLOW_ATTR_MAX,
};

#define XDP_FLOW_ATTR_MAX (__XDP_FLOW_ATTR_MAX - 1)

#endif /* _UAPI_LINUX_XDP_FLOW_H */
