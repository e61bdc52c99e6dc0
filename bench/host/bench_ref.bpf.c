// SPDX-License-Identifier: GPL-2.0
/*
 * bench_dp's references, run in the same process and rounds as the XDP
 * program they are compared with, on the same frames (xdp_flow_bench.h):
 *
 *   ref_empty   steps the frame to its next flow and drops it: what
 *               BPF_PROG_TEST_RUN and the rotation cost, with no work
 *   ref_parse   also parses Ethernet, IPv4 and UDP or TCP into a 16-byte
 *               5-tuple key: the textbook parser
 *   ref_floor   also does what any offload must do for a frame once it
 *               knows its rule (here rule 0): read the rule's action from
 *               an array map and count the rule's packets, bytes and last
 *               use (what TC reports) in a per-CPU array: the textbook
 *               counterpart of xdp_flow's floor
 *   ref_search  also runs the textbook tuple-space search on that key: one
 *               kernel hash map per mask, the masks in ascending order of
 *               their lowest priority, stopping when no later mask can
 *               hold a better rule (the same early exit as xdp_flow's).
 *               Drops on a match, passes on none.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xdp_flow_bench.h"
#include "bench_ref.h"

struct ref_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, REF_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ref_key);
	__type(value, __u32);		/* the rule's priority */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, REF_MAX_MASKS);
	__type(key, __u32);
	__array(values, struct ref_inner);
} ref_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ref_masks);
} ref_masks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ref_rule);
} ref_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ref_counter);
} ref_counters SEC(".maps");

static __always_inline int ref_parse_key(void *data, void *data_end,
					 struct ref_key *k)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *l4;

	if ((void *)(ip + 1) > data_end ||
	    eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return -1;
	k->src = ip->saddr;
	k->dst = ip->daddr;
	k->proto = ip->protocol;
	if (ip->protocol != IPPROTO_UDP && ip->protocol != IPPROTO_TCP)
		return 0;
	l4 = (void *)(ip + 1);
	if ((void *)(l4 + 1) > data_end)
		return -1;
	k->sport = l4->source;
	k->dport = l4->dest;
	return 0;
}

SEC("xdp")
int ref_empty(struct xdp_md *ctx)
{
	bench_rotate((void *)(long)ctx->data, (void *)(long)ctx->data_end);
	return XDP_DROP;
}

SEC("xdp")
int ref_parse(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ref_key k = {};

	bench_rotate(data, data_end);
	if (ref_parse_key(data, data_end, &k))
		return XDP_PASS;
	/* Keep the key alive: a parser whose result is unused is no parser. */
	return k.src | k.dst | k.sport | k.dport | k.proto ? XDP_DROP :
							      XDP_ABORTED;
}

SEC("xdp")
int ref_floor(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ref_counter *c;
	struct ref_rule *rule;
	struct ref_key k = {};
	__u32 id = 0;

	bench_rotate(data, data_end);
	if (ref_parse_key(data, data_end, &k) || !(k.src | k.dst))
		return XDP_PASS;
	rule = bpf_map_lookup_elem(&ref_rules, &id);
	c = bpf_map_lookup_elem(&ref_counters, &id);
	if (!rule || !c)
		return XDP_PASS;
	c->packets++;
	c->bytes += data_end - data;
	c->lastused = bpf_jiffies64();
	return rule->action;
}

SEC("xdp")
int ref_search(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, i, best = ~0u, *prio;
	struct ref_key k = {}, mk;
	struct ref_masks *ms;
	void *table;

	bench_rotate(data, data_end);
	if (ref_parse_key(data, data_end, &k))
		return XDP_PASS;
	ms = bpf_map_lookup_elem(&ref_masks, &zero);
	if (!ms)
		return XDP_PASS;
	for (i = 0; i < REF_MAX_MASKS && i < ms->count; i++) {
		struct ref_mask *m = &ms->masks[i];

		if (m->min_prio > best)
			break;
		mk.src = k.src & m->key.src;
		mk.dst = k.dst & m->key.dst;
		mk.sport = k.sport & m->key.sport;
		mk.dport = k.dport & m->key.dport;
		mk.proto = k.proto & m->key.proto;
		mk.pad[0] = mk.pad[1] = mk.pad[2] = 0;
		table = bpf_map_lookup_elem(&ref_tables, &i);
		if (!table)
			break;
		prio = bpf_map_lookup_elem(table, &mk);
		if (prio && *prio < best)
			best = *prio;
	}
	return best != ~0u ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
