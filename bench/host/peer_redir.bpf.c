// SPDX-License-Identifier: GPL-2.0
/*
 * bench_peer.sh's programs: the two ways a TC ingress program can hand a
 * frame to a veth, without any lookup, so that only the kernel's paths
 * are compared. The target is the veth with ifindex PEER_TARGET, which
 * bench_peer.sh creates with that index.
 *
 *   plain  bpf_redirect(): the veth transmits (as mirred egress redirect)
 *   peer   bpf_redirect_peer(): straight into the veth's peer, the mark
 *          cleared as xdp_flow's TC hook clears it
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define PEER_TARGET	4242

SEC("classifier/plain")
int plain(struct __sk_buff *skb)
{
	(void)skb;
	return bpf_redirect(PEER_TARGET, 0);
}

SEC("classifier/peer")
int peer(struct __sk_buff *skb)
{
	skb->mark = 0;
	return bpf_redirect_peer(PEER_TARGET, 0);
}

char _license[] SEC("license") = "GPL";
