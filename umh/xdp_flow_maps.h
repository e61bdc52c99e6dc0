/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: the maps the program keeps its tables in
 * (xdp_flow_dp.h says what each holds, as the helper sees it too), and
 * what is frozen into .rodata at load. The csum action's scratch buffer
 * is xdp_flow_csum.h's.
 *
 * May use: xdp_flow_dp.h.
 */
#ifndef _XDP_FLOW_MAPS_H
#define _XDP_FLOW_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xdp_flow_dp.h"

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
	__uint(max_entries, XDP_FLOW_GEN_WORDS);
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

/* Written by the module, never by the helper (see xdp_flow_dp.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDP_FLOW_MAX_RULES);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_held SEC(".maps");

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

/* The devices a TC hook redirect or mirror may enter at ingress: written
 * by the module only (net/xdp_flow/peer.c), read by
 * xdp_flow_tc_ingress_ok().
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDP_FLOW_MAX_INGRESS);
	__type(key, __u32);
	__type(value, union xdp_flow_ingress);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xf_ingress SEC(".maps");

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

/*
 * The tc hook's record of the outer IPv6 addresses of the frame being
 * classified, whose key holds their digests (xdp_flow_ctx.h), for the
 * rules that match them whole (xdp_flow_lookup.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdp_flow_enc6);
} xf_enc6_buf SEC(".maps");

/* The tc hook's buffer for a frame's tunnel options (xdp_flow_ctx.h): at
 * least as large as any (their length is a u8).
 */
#define XDP_FLOW_OPT_BUF	256
struct xdp_flow_opt_buf {
	__u8	b[XDP_FLOW_OPT_BUF];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdp_flow_opt_buf);
} xf_opt_buf SEC(".maps");

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

#endif /* _XDP_FLOW_MAPS_H */
