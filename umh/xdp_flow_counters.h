/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: the rules' per-CPU counters, kept as TC counts.
 *
 * May use: xdp_flow_lookup.h (the verdict it counts), xdp_flow_maps.h.
 */
#ifndef _XDP_FLOW_COUNTERS_H
#define _XDP_FLOW_COUNTERS_H

#include "xdp_flow_lookup.h"
#include "xdp_flow_maps.h"

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

#endif /* _XDP_FLOW_COUNTERS_H */
