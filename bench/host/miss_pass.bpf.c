// SPDX-License-Identifier: GPL-2.0
/*
 * The miss benchmark's references (bench_miss.sh): programs that pass
 * every frame and do nothing else, so that what any program at the hook
 * costs can be told apart from what xdp_flow's lookup costs.
 *
 *   xdp_pass  SEC("xdp"): as xdp_flow's XDP program (no frags support)
 *   tc_pass   SEC("tc"): a cls_bpf direct-action program, TC_ACT_OK
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

SEC("tc")
int tc_pass(struct __sk_buff *skb)
{
	(void)skb;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
