// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's floor: what any XDP forwarding costs at the least. Every
 * frame is redirected to one device, with no parsing and no lookup; the
 * ifindex is a global the loader writes into the object's .bss map before
 * the program sees traffic (a plain load, no map lookup on the fast path).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__u32 floor_ifindex;	/* 0 until set: bpf_redirect(0) fails, frames drop */

SEC("xdp")
int xdp_floor(struct xdp_md *ctx __attribute__((unused)))
{
	return bpf_redirect(floor_ifindex, 0);
}

char _license[] SEC("license") = "GPL";
