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
 *   xf_flows     HASH, struct xdp_flow_flow_key -> rule id (the best rule of
 *                that mask and masked key)
 *   xf_masks     ARRAY_OF_MAPS, one slot holding the current mask list (an
 *                ARRAY of one struct xdp_flow_mask_list)
 *   xf_rule_defs HASH, rule id -> struct xdp_flow_rule as the module sent it;
 *                read only by the helper, to rebuild its tables on restart
 *   xf_mask_min  ARRAY, mask slot -> __u64: at most the lowest order of the
 *                rules in that mask (mmapable: the helper lowers it in place
 *                when a rule of a lower order joins a listed mask, so adding
 *                rules in descending prio never swaps the list)
 *   xf_gen       ARRAY of one __u64: the tables' generation, bumped by the
 *                helper after every change that may change a lookup
 *                (mmapable: the helper stores to it without a system call)
 *   xf_gate      ARRAY of one __u64, XDP_FLOW_GATE_NAME: written only by
 *                the module, which gets it through the program the helper
 *                names in HELLO. 0, or 1 + the lowest order XDP may not
 *                act on: frames of such rules go to the stack (the uapi
 *                header says when).
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
	struct xdp_flow_action actions[XDP_FLOW_MAX_ACTIONS];
};

/* The key is masked a 64-bit word at a time, through this type: keys are
 * written field by field and read as words, which only a type that may
 * alias anything makes defined.
 */
#define XDP_FLOW_KEY_WORDS	(sizeof(struct xdp_flow_key) / sizeof(__u64))
typedef __u64 __attribute__((__may_alias__)) xdp_flow_word;

struct xdp_flow_flow_key {
	__u32	mask_id;	/* never reused while the pinned maps live */
	__u32	pad;
	struct xdp_flow_key key;	/* already masked */
};

struct xdp_flow_dp_mask {
	__u32	id;
	__u32	slot;		/* its index in xf_mask_min */
	__u64	min_order;	/* its lowest order when the list was made */
	struct xdp_flow_key mask;
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
 */
#define XDP_FLOW_EMC_SET_BITS	12
#define XDP_FLOW_EMC_SETS	(1u << XDP_FLOW_EMC_SET_BITS)
#define XDP_FLOW_EMC_WAYS	4

struct xdp_flow_emc_set {
	__u64	gen;
	__u32	sig[XDP_FLOW_EMC_WAYS];
	__s32	rule[XDP_FLOW_EMC_WAYS];
	__u32	next;		/* the way the next answer replaces */
	__u32	pad;
	struct xdp_flow_key key[XDP_FLOW_EMC_WAYS];
};

#ifndef __always_inline
#define __always_inline	inline __attribute__((always_inline))
#endif

/*
 * The cache's hash of a whole key: each word times an odd constant of its
 * own, summed (the multiplications do not wait for each other), folded and
 * mixed once more. The top bits pick the set, the low ones (made odd: 0 is
 * a free way) are the signature.
 */
static __always_inline __u64 xdp_flow_emc_hash(const xdp_flow_word *kw)
{
	__u64 h = 0;
	__u32 j;

	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		h += kw[j] * (0x9e3779b97f4a7c15ULL + 2 * j);
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
