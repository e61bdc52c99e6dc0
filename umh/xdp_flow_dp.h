/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The XDP program's tables, as the program and the helper both see them.
 * Internal to umh/: what crosses the module boundary is in
 * include/uapi/linux/xdp_flow.h.
 *
 * Maps (all pinned by name under XDP_FLOW_PIN_DIR):
 *   xf_rules     ARRAY, rule id -> struct xdp_flow_dp_rule (what XDP executes)
 *   xf_counters  ARRAY_OF_MAPS, rule id / XDP_FLOW_COUNTER_CHUNK -> a
 *                PERCPU_ARRAY (xf_counters_c), rule id % the chunk -> struct
 *                xdp_flow_counter; chunks are made before a rule of their
 *                ids is linked, and those no rule needs are freed in quiet
 *                times (table_idle()) (the uapi header's
 *                XDP_FLOW_COUNTERS_NAME: the module reads it too)
 *   xf_fbuckets  ARRAY of struct xdp_flow_ft_bucket, the flow table's
 *                buckets (mmapable: the helper writes them in place)
 *   xf_fentries  ARRAY of struct xdp_flow_ft_entry, its entries: per
 *                distinct (mask, masked key), the best (lowest order) rule
 *                (mmapable)
 *   xf_fhash     ARRAY of one struct xdp_flow_ft_hash, the flow table's
 *                seeded hash, chosen at random by the helper that made the
 *                maps (mmapable)
 *   xf_masks     ARRAY_OF_MAPS, one slot holding the current mask list (an
 *                ARRAY of one struct xdp_flow_mask_list)
 *   xf_rule_defs HASH, rule id -> struct xdp_flow_rule as the module sent it;
 *                read only by the helper, to rebuild its tables on restart
 *   xf_mask_min  ARRAY, mask slot -> __u64: at most the lowest order of the
 *                rules in that mask (mmapable: the helper lowers it in place
 *                when a rule of a lower order joins a listed mask, so adding
 *                rules in descending prio never swaps the list)
 *   xf_gen       ARRAY of two __u64: [0] the tables' generation, bumped by
 *                the helper after every change that may change a lookup;
 *                [1] XDP_FLOW_GEN_TUN while a listed mask keeps a word of
 *                XDP_FLOW_TUN_WORDS, XDP_FLOW_GEN_OPTS while one keeps
 *                a byte of the tunnel options (enc_opt_len, enc_opts),
 *                else 0: the tc hook reads a frame's tunnel metadata (a
 *                helper call a frame), and its options (another), only
 *                then; a bit is set before the list that brings the first
 *                such mask is swapped in, cleared after the one without
 *                any (mmapable: the helper stores to it without a system
 *                call)
 *   xf_ft_conns  HASH, a flowtable connection's key (struct xdp_flow_rule's
 *                @ft_conn) -> __u32, 1 once a TCP FIN or RST of it went to
 *                the stack (written by the program): an entry while a rule
 *                has the key (the helper counts them)
 *   xf_gate      ARRAY of one __u64, XDP_FLOW_GATE_NAME: written only by
 *                the module, which gets it through the program the helper
 *                names in HELLO. 0, or 1 + the lowest order XDP may not
 *                act on: frames of such rules go to the stack (the uapi
 *                header says when).
 *   xf_held      ARRAY, rule id -> __u32, XDP_FLOW_HELD_NAME: written only
 *                by the module, found like xf_gate: while the gate is not
 *                open, frames of a rule whose entry is not 0 go to the
 *                stack as well (a flowtable's flow whose change is in
 *                flight).
 *   xf_egress    HASH, ifindex -> __u64, XDP_FLOW_EGRESS_NAME: written
 *                only by the module, found like xf_gate: an entry for each
 *                device an XDP hook redirect may go to at once (its egress
 *                path is empty); without one the frame goes to the stack.
 *   xf_ingress   HASH, ifindex -> union xdp_flow_ingress,
 *                XDP_FLOW_INGRESS_NAME: written only by the module, found
 *                through the TC program: the devices a TC hook redirect
 *                or mirror may enter at ingress.
 *
 * Not pinned: xf_emc, the exact-match cache (PERCPU_ARRAY of struct
 * xdp_flow_emc_set), valid only for sets of the current generation.
 */
#ifndef _XDP_FLOW_DP_H
#define _XDP_FLOW_DP_H

#include <linux/types.h>
#include <uapi/linux/xdp_flow.h>

/* xdp_flow_dp_rule.flags: the uapi XDP_FLOW_RULE_F_* bits plus this one. */
#define XDP_FLOW_DP_F_VALID	0x80000000u	/* the entry is a live rule */

struct xdp_flow_dp_rule {
	__u64	order;
	__u32	flags;
	__u32	nr_actions;
	__u64	ft_conn;	/* struct xdp_flow_rule's */
	struct xdp_flow_action actions[XDP_FLOW_MAX_ACTIONS];
};

/* The key is masked a 64-bit word at a time, through this type: keys are
 * written field by field and read as words, which only a type that may
 * alias anything makes defined.
 */
#define XDP_FLOW_KEY_WORDS	(sizeof(struct xdp_flow_key) / sizeof(__u64))
typedef __u64 __attribute__((__may_alias__)) xdp_flow_word;

/*
 * The flow table. Each mask has a region of the buckets of its own (a power
 * of 2 of them, named in the mask list), so that a small mask's buckets
 * stay in the CPU's cache. An entry is found by a hash of its mask id and
 * masked key (xdp_flow_ft_hash()): the low bits pick its first bucket in
 * the region, the top 16 make its signature. A bucket (a cache line) holds
 * up to XDP_FLOW_FT_WAYS signatures and, beside each, the entry's slot;
 * the program tests the signatures 4 at a time (xdp_flow_ft_sig_match()),
 * and only one that matches costs a look at the entry. A key whose first
 * bucket is full goes to its second one (xdp_flow_ft_alt()), and its first
 * bucket's @spill counts it, so a lookup reads the second bucket only when
 * @spill says that some key may be there. A key whose two buckets are both
 * full first moves one of the first bucket's own keys to that key's second
 * bucket; when that too finds no room, the rule is refused as if the table
 * were full (it stays in software).
 *
 * The helper writes in place, in an order that keeps every lookup exact:
 * an entry is filled before its slot and then its signature are stored,
 * and a spill is counted before the signature in the second bucket; a
 * delete clears the signature first; an entry that changes rule gets the
 * new id in one aligned store; a moved key is in its new bucket before it
 * leaves the old one; a slot is used again only after an RCU grace period
 * since its delete (see table_barrier()). The reader compares the
 * whole entry (mask id and key) after the signature matched, so a slot it
 * read while the helper reused a way cannot make it take a wrong entry.
 */
#define XDP_FLOW_FT_WAYS	8

/* Entries for @flows keys: an eighth more, so that deleted slots can wait
 * for a grace period before they are used again (dp_open() sizes
 * xf_fentries so).
 */
#define XDP_FLOW_FT_ENTRIES(flows)	((flows) + (flows) / 8)

struct xdp_flow_ft_bucket {
	union {
		__u16	sig[XDP_FLOW_FT_WAYS];	/* 0: a free way */
		__u64	sigw[XDP_FLOW_FT_WAYS / 4];	/* read 4 at a time */
	};
	__u32	slot[XDP_FLOW_FT_WAYS];	/* index in xf_fentries */
	__u32	spill;		/* keys of this first bucket in their second */
	__u32	pad[3];
};

struct xdp_flow_ft_entry {
	__u32	mask_id;	/* never reused while the pinned maps live */
	__u32	rule;		/* the best rule of this mask and key */
	struct xdp_flow_key key;	/* already masked */
};

struct xdp_flow_ft_hash {
	__u64	mul[XDP_FLOW_KEY_WORDS];	/* random and odd */
	__u64	seed;			/* random; 0: the maps are new */
};

/* The helper's builds inline these at -O2 anyway; libbpf's BPF headers
 * define the real one for the datapath.
 */
#ifndef __always_inline
#define __always_inline	inline
#endif

/* A loop over the key's words, unrolled in the datapath: clang leaves a
 * loop of 14 words rolled, which costs a lookup more than the words do.
 */
#ifdef __bpf__
#define XDP_FLOW_UNROLL	_Pragma("unroll")
#else
#define XDP_FLOW_UNROLL
#endif

/*
 * The key words few masks keep: the rest of the Ethernet addresses (word
 * 1), the second halves of the IPv6 addresses (5, 7) and most of ARP's
 * hardware addresses (9); fewer still keep the tunnel metadata (11 to
 * 13), which only rules on tunnel devices match. The others hold the device and
 * the start of the Ethernet destination, the protocols and tags, the IPv4
 * addresses (and the IPv6 ones' first halves), the ports and the chain.
 */
#define XDP_FLOW_WIDE_WORDS	((1u << 1) | (1u << 5) | (1u << 7) | (1u << 9))
#define XDP_FLOW_TUN_WORDS	((1u << 11) | (1u << 12) | (1u << 13))
_Static_assert(XDP_FLOW_KEY_WORDS == 14,
	       "the XDP program hashes the key's words one by one");

/* xf_gen[1] */
#define XDP_FLOW_GEN_TUN	1
#define XDP_FLOW_GEN_OPTS	2
#define XDP_FLOW_GEN_WORDS	2

/* xdp_flow_dp_mask.wide: which of those a mask keeps a word of. */
#define XDP_FLOW_MASK_WIDE	0x1	/* XDP_FLOW_WIDE_WORDS */
#define XDP_FLOW_MASK_TUN	0x2	/* XDP_FLOW_TUN_WORDS */

/*
 * The hash of (@mask_id, @kw masked with @mw): a sum of the masked words
 * times random odd multipliers (independent multiplications), then mixed.
 * A word the mask clears adds nothing, so the XDP program leaves out the
 * words few masks keep (XDP_FLOW_WIDE_WORDS) for a mask that keeps none of
 * them, and gets the same hash.
 */
static __always_inline __u64 xdp_flow_ft_start(const struct xdp_flow_ft_hash *fh,
					       __u32 mask_id)
{
	return fh->seed + mask_id * 0x9e3779b97f4a7c15ULL;
}

static __always_inline __u64 xdp_flow_ft_mix(__u64 h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

static __always_inline __u64 xdp_flow_ft_hash(const struct xdp_flow_ft_hash *fh,
					      __u32 mask_id,
					      const xdp_flow_word *kw,
					      const xdp_flow_word *mw)
{
	__u64 h = xdp_flow_ft_start(fh, mask_id);
	__u32 j;

	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		h += (kw[j] & mw[j]) * fh->mul[j];
	return xdp_flow_ft_mix(h);
}

static __always_inline __u16 xdp_flow_ft_sig(__u64 h)
{
	return (__u16)(h >> 48) | 1;
}

/*
 * Which of the 4 signatures in @sigw may be @sig: the top bit of each
 * 16-bit lane whose signature equals it, and possibly of lanes above such
 * a lane (a borrow), never of a lane when no lane is equal. A bucket is
 * thus tested 4 ways at a time without a branch per way; the ways it
 * flags are then compared one by one.
 */
static __always_inline __u64 xdp_flow_ft_sig_match(__u64 sigw, __u16 sig)
{
	__u64 x = sigw ^ (sig * 0x0001000100010001ULL);

	return (x - 0x0001000100010001ULL) & ~x & 0x8000800080008000ULL;
}

/* The second bucket of a key (both relative to the region): never its
 * first one.
 */
static __always_inline __u32 xdp_flow_ft_alt(__u32 bucket, __u32 sig,
					     __u32 bucket_mask)
{
	return (bucket ^ ((sig >> 1) | 1)) & bucket_mask;
}

struct xdp_flow_dp_mask {
	__u32	id;
	__u32	slot;		/* its index in xf_mask_min */
	__u64	min_order;	/* its lowest order when the list was made */
	struct xdp_flow_key mask;
	__u32	wide;		/* XDP_FLOW_MASK_* */
	__u32	pad[3];
	/* Its region of xf_fbuckets: fb_mask + 1 buckets from fb_base on. */
	__u32	fb_base;
	__u32	fb_mask;
};

/*
 * The masks in the order the program tries them: ascending min_order as it
 * was when the list was made. A mask's current lowest order is in
 * xf_mask_min, which may since have dropped below it: the program skips a
 * mask whose current lowest order cannot beat what it found, and goes on.
 */
struct xdp_flow_mask_list {
	__u32	count;
	__u32	pad;
	struct xdp_flow_dp_mask masks[XDP_FLOW_MAX_MASKS];
};

/*
 * The exact-match cache: per CPU, 4-way set-associative by a hash of the
 * whole parsed key, the result of the tuple-space search for that key (a
 * rule id, or -1 for none). A set's ways count only while its @gen is the
 * current generation (a set met with an old one is emptied first); 0 is
 * never a current generation, so zeroed sets never count. A way is found
 * by its signature (other bits of the hash, odd: 0 is empty), then its
 * whole key compared. 4,096 sets of 4: 16,384 flows, 1.6 MiB per CPU; at
 * 4,096 active flows per CPU about 2% of them share a set with 4 others.
 *
 * A way also keeps what its rule does when that is a single drop or a
 * redirect (@act: XDP_FLOW_EMC_DROP or the device's ifindex), read from
 * the rule after the generation was, so that a cached frame need not read
 * the rule; 0 means "read the rule" (any other rule, no rule, or not read
 * yet). Every change of a rule's entry is followed by a new generation.
 */
#define XDP_FLOW_EMC_SET_BITS	12
#define XDP_FLOW_EMC_SETS	(1u << XDP_FLOW_EMC_SET_BITS)
#define XDP_FLOW_EMC_WAYS	4

struct xdp_flow_emc_set {
	__u64	gen;
	__u32	sig[XDP_FLOW_EMC_WAYS];
	__s32	rule[XDP_FLOW_EMC_WAYS];
	__u32	act[XDP_FLOW_EMC_WAYS];
	__u32	next;		/* the way the next answer replaces */
	__u32	pad;
	struct xdp_flow_key key[XDP_FLOW_EMC_WAYS];
};

#define XDP_FLOW_EMC_DROP	0xffffffffu	/* xdp_flow_emc_set.act */

/*
 * The cache's hash of a whole key: each word times an odd constant of its
 * own, summed (the multiplications do not wait for each other), folded and
 * mixed once more. The words' constants fit an instruction's 32-bit
 * immediate (sign-extended); only the last one takes a 64-bit load. An
 * IPv4 key leaves out the words that the parser keeps zero for IPv4
 * (xdp_flow_emc_v4_zero(): the addresses' last 8 bytes, and the word that
 * only ARP's hardware addresses use): they would add nothing. The top bits
 * pick the set, the low ones (made odd: 0 is a free way) are the
 * signature.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define XDP_FLOW_EMC_IPV4	__builtin_bswap16(0x0800)	/* ETH_P_IP */
#else
#define XDP_FLOW_EMC_IPV4	0x0800
#endif

/* Whether word @j of an IPv4 key is one the parser keeps zero. */
static __always_inline int xdp_flow_emc_v4_zero(__u32 j)
{
	return j == 5 || j == 7 || j == 9;
}

static __always_inline int xdp_flow_emc_v4(const xdp_flow_word *kw)
{
	return ((const struct xdp_flow_key *)kw)->n_proto ==
	       XDP_FLOW_EMC_IPV4;
}

static __always_inline __u64 xdp_flow_emc_hash(const xdp_flow_word *kw)
{
	int v4 = xdp_flow_emc_v4(kw);
	__u64 h = 0;
	__u32 j;

	XDP_FLOW_UNROLL
	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		if (!v4 || !xdp_flow_emc_v4_zero(j))
			h += kw[j] * (__u64)(__s64)(__s32)(0x9e3779b1u + 2 * j);
	h ^= h >> 29;
	return h * 0xbf58476d1ce4e5b9ULL;
}

static __always_inline __u32 xdp_flow_emc_set(__u64 h)
{
	return h >> (64 - XDP_FLOW_EMC_SET_BITS);
}

static __always_inline __u32 xdp_flow_emc_sig(__u64 h)
{
	return (__u32)h | 1;
}

#endif /* _XDP_FLOW_DP_H */
