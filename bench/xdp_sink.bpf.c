// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's sink: attached to the far end of the redirect target,
 * it counts every frame and drops it. Its program also gives veth the NAPI
 * context that XDP redirects into the near end need. The rate itself is
 * read from the device's rx_packets (veth counts every frame its NAPI
 * takes, so every frame this program sees); the map shows that the
 * frames did reach XDP here.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct sink_stats {
	__u64 pkts;
	__u64 bytes;
};

/* Per CPU: no atomics on the fast path. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_stats);
} sink_stats SEC(".maps");

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	struct sink_stats *st;
	__u32 key = 0;

	st = bpf_map_lookup_elem(&sink_stats, &key);
	if (!st)
		return XDP_DROP;
	st->pkts++;
	st->bytes += ctx->data_end - ctx->data;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
