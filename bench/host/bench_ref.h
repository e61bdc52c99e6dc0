/* SPDX-License-Identifier: GPL-2.0 */
/* bench_ref.bpf.c's tables, as the program and bench_dp see them. */
#ifndef _BENCH_REF_H
#define _BENCH_REF_H

#include <linux/types.h>

#define REF_MAX_MASKS	64
#define REF_MAX_RULES	131072	/* per mask */

/* The textbook key: the 5-tuple, 16 bytes. */
struct ref_key {
	__be32	src;
	__be32	dst;
	__be16	sport;
	__be16	dport;
	__u8	proto;
	__u8	pad[3];
};

struct ref_mask {
	struct ref_key key;
	__u32	min_prio;	/* the lowest priority of its rules */
};

/* The masks in ascending order of min_prio. */
struct ref_masks {
	__u32	count;
	struct ref_mask masks[REF_MAX_MASKS];
};

/* ref_floor's rule and counter. */
struct ref_rule {
	__u32	action;		/* an XDP verdict */
};

struct ref_counter {
	__u64	packets;
	__u64	bytes;
	__u64	lastused;	/* jiffies */
};

#endif /* _BENCH_REF_H */
