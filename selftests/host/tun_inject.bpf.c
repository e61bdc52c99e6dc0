// SPDX-License-Identifier: GPL-2.0
/*
 * For test_prog: gives a frame the tunnel metadata a tunnel device's
 * receive path would (bpf_skb_set_tunnel_key() and, with options,
 * bpf_skb_set_tunnel_opt(), as tun_cfg says), then tail-calls the
 * datapath's TC program in jmp[0], which reads it back as it reads a
 * decapsulated frame's. BPF_PROG_TEST_RUN gives a frame no metadata of
 * its own.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "tun_inject.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tun_cfg);
} tun_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} jmp SEC(".maps");

SEC("tc")
int tun_inject(struct __sk_buff *skb)
{
	__u32 zero = 0, len;
	struct tun_cfg *c = bpf_map_lookup_elem(&tun_cfg, &zero);

	if (!c)
		return TC_ACT_SHOT;
	if (bpf_skb_set_tunnel_key(skb, &c->key, sizeof(c->key), c->key_flags))
		return TC_ACT_SHOT;
	len = c->opt_len;
	if (len > sizeof(c->opts))
		return TC_ACT_SHOT;
	if (len && bpf_skb_set_tunnel_opt(skb, c->opts, len))
		return TC_ACT_SHOT;
	bpf_tail_call(skb, &jmp, 0);
	return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "GPL";
