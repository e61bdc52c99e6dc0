/* SPDX-License-Identifier: GPL-2.0 */
/* tun_inject.bpf.c's configuration, written by test_prog. */
#ifndef _TUN_INJECT_H
#define _TUN_INJECT_H

#include <linux/bpf.h>

struct tun_cfg {
	struct bpf_tunnel_key key;
	__u64	key_flags;	/* BPF_F_TUNINFO_IPV6 */
	__u32	opt_len;	/* a multiple of 4, at most 252; 0: none */
	__u8	opts[252];
};

#endif
