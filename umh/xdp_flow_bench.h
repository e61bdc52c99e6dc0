/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For bench/host/bench_dp only: frames that change from one repetition of
 * BPF_PROG_TEST_RUN to the next, so that a run is drawn from many flows and
 * not one frame that every cache keeps.
 *
 * BPF_PROG_TEST_RUN hands the program the same buffer on every repetition,
 * so a program can carry state in it: the benchmark's UDP/IPv4 frames carry
 * a struct bench_rotor right after the UDP header, and bench_rotate() steps
 * it and writes the frame's IPv4 source for the next flow: base +
 * (m << 16) + j, with m cycling through 0 .. nm - 1 fastest and j through
 * 0 .. nj - 1, so nm * nj flows in turn. The XDP program calls it only when
 * it is loaded with xf_cfg_bench set (never by the helper: the verifier
 * then drops the code); the benchmark's reference programs call it always.
 * Both pay the same few instructions.
 */
#ifndef _XDP_FLOW_BENCH_H
#define _XDP_FLOW_BENCH_H

#include <linux/types.h>

struct bench_rotor {
	__u32	base;		/* host order */
	__u16	m, nm;
	__u16	j, nj;
};

#ifdef __bpf__
static __always_inline void bench_rotate(void *data, void *data_end)
{
	/* Ethernet, an IPv4 header without options, UDP: the bench's frames. */
	struct iphdr *ip = data + 14;
	struct bench_rotor *r = data + 14 + 20 + 8;
	__u16 m, j;

	if ((void *)(r + 1) > data_end)
		return;
	m = r->m + 1;
	j = r->j;
	if (m >= r->nm) {
		m = 0;
		j++;
		if (j >= r->nj)
			j = 0;
		r->j = j;
	}
	r->m = m;
	ip->saddr = bpf_htonl(r->base + ((__u32)m << 16) + j);
}
#endif /* __bpf__ */

#endif /* _XDP_FLOW_BENCH_H */
