// SPDX-License-Identifier: GPL-2.0
/*
 * The datapath's cost per frame on the host's real CPU, through
 * BPF_PROG_TEST_RUN: the XDP program with its exact-match cache, the same
 * program with the cache off (the tuple-space search alone), and the floor
 * (the same program built to skip the lookup: it parses the same headers,
 * takes rule 0 and applies its action and counters). All three share one
 * set of maps, filled by the helper's own table code.
 *
 * For each number of masks and rules: a hit (the frame matches the rule of
 * the last mask, and every mask must be searched: all rules have one prio)
 * and a miss (no rule matches; every mask is searched). Each figure is the
 * median of several runs of BPF_PROG_TEST_RUN with a repeat count, as ns per
 * frame.
 *
 * Output: CSV lines "datapath,<config>,<metric>,<value>,ns" on stdout, and a
 * readable table on stderr.
 *
 * Usage: bench_dp [--quick]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umh.h"
#include "xdp_flow_dp.h"
#include "xdp_flow.skel.h"

#define IFINDEX		1	/* lo: BPF_PROG_TEST_RUN wants a real device */
#define RUNS		5

enum mode { M_EMC, M_SEARCH, M_FLOOR, NR_MODES };
static const char *const mode_names[NR_MODES] = {
	"xdp_flow", "search_only", "floor",
};

static struct xdp_flow_bpf *skels[NR_MODES];
static struct table *tbl;

/* Loads the program of @mode; every mode but the first shares its maps. */
static struct xdp_flow_bpf *load(enum mode mode)
{
	struct xdp_flow_bpf *s = xdp_flow_bpf__open();
	struct bpf_map *map, *first;
	int err;

	if (!s)
		return NULL;
	bpf_object__for_each_map(map, s->obj)
		bpf_map__set_pin_path(map, NULL);
	s->rodata->xf_cfg_emc = mode == M_EMC;
	s->rodata->xf_cfg_floor = mode == M_FLOOR;
	if (mode != M_EMC) {
		bpf_object__for_each_map(map, s->obj) {
			first = bpf_object__find_map_by_name(skels[M_EMC]->obj,
							     bpf_map__name(map));
			/* .rodata and the per-CPU cache stay each program's */
			if (!first || map == s->maps.rodata ||
			    map == s->maps.xf_emc)
				continue;
			err = bpf_map__reuse_fd(map, bpf_map__fd(first));
			if (err)
				goto fail;
		}
	}
	err = xdp_flow_bpf__load(s);
	if (!err)
		return s;
fail:
	xdp_flow_bpf__destroy(s);
	errno = -err;
	return NULL;
}

/* A UDP/IPv4 frame from 192.0.2.@src:1000 to @dst:53. */
static size_t frame(__u8 *b, __u32 src, __u32 dst)
{
	struct ethhdr *eth = (void *)b;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	size_t len = sizeof(*eth) + sizeof(*ip) + sizeof(*udp) + 18;

	memset(b, 0, len);
	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(len - sizeof(*eth));
	ip->saddr = htonl(0xc0000200 | src);
	ip->daddr = htonl(dst);
	udp->source = htons(1000);
	udp->dest = htons(53);
	udp->len = htons(len - sizeof(*eth) - sizeof(*ip));
	return len;
}

/* ns per frame: the median of RUNS runs of @repeat frames. */
static double run(enum mode mode, __u32 src, __u32 dst, int repeat,
		  int want)
{
	struct xdp_md ctx = { .ingress_ifindex = IFINDEX };
	__u32 d[RUNS], t;
	__u8 b[128], out[128];
	int i, j;

	ctx.data_end = frame(b, src, dst);
	for (i = 0; i < RUNS; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o,
			    .data_in = b, .data_size_in = ctx.data_end,
			    .data_out = out, .data_size_out = sizeof(out),
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
			    .repeat = repeat);

		if (bpf_prog_test_run_opts(bpf_program__fd(skels[mode]->progs.xdp_flow),
					   &o) || (int)o.retval != want) {
			fprintf(stderr, "bench_dp: %s: verdict %d, want %d (%s)\n",
				mode_names[mode], o.retval, want,
				strerror(errno));
			exit(1);
		}
		d[i] = o.duration;
	}
	/* insertion sort: RUNS is small */
	for (i = 1; i < RUNS; i++)
		for (j = i; j > 0 && d[j - 1] > d[j]; j--) {
			t = d[j];
			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return d[RUNS / 2];
}

/*
 * Mask m: the IPv4 source 192.0.2.(m + 1), so that a frame matches rules of
 * one mask only; a destination prefix of 32 - m % 16 bits; and with m / 16
 * = 1, 2, 3 the UDP destination port, source port, or both.
 */
static int add_rule(__u32 id, unsigned int m, __u32 k)
{
	unsigned int plen = 32 - m % 16, ports = m / 16;
	char args[256], msg[UMH_MSG_LEN] = "";
	struct xdp_flow_rule r;
	struct in_addr a;
	int err;

	a.s_addr = htonl((k + 1) << (32 - plen));
	snprintf(args, sizeof(args),
		 "id=%u prio=1 ifindex=%d src_ip=192.0.2.%u dst_ip=%s/%u%s%s action=drop",
		 id, IFINDEX, m + 1, inet_ntoa(a), plen, ports ? " ip_proto=udp" : "",
		 ports == 1 ? " dst_port=53" : ports == 2 ? " src_port=1000" :
		 ports == 3 ? " src_port=1000 dst_port=53" : "");
	err = driver_parse_rule(args, &r, msg, sizeof(msg));
	if (!err)
		err = table_rule_add(tbl, &r, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "bench_dp: %s: %s\n", args, msg);
	return err;
}

static void del_all(void)
{
	struct xdp_flow_stats *st;
	char msg[UMH_MSG_LEN];
	size_t n, i;

	if (table_stats_all(tbl, &st, &n))
		return;
	for (i = 0; i < n; i++)
		table_rule_del(tbl, st[i].id, msg, sizeof(msg));
	free(st);
}

static void csv(const char *mode, unsigned int masks, unsigned int rules,
		const char *what, double ns)
{
	printf("datapath,%s,%u masks %u rules %s,%.1f,ns\n", mode, masks,
	       rules, what, ns);
}

int main(int argc, char **argv)
{
	static const unsigned int masks[] = { 1, 4, 16, 64 };
	static const unsigned int rules[] = { 1, 1000, 100000 };
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	int repeat = quick ? 20000 : 200000;
	unsigned int mi, ri, m, i;
	cpu_set_t one;
	enum mode md;

	log_init(LOG_DEST_STDERR, false);
	/* One CPU: the cache is per CPU, and so is the noise. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (md = 0; md < NR_MODES; md++) {
		skels[md] = load(md);
		if (!skels[md]) {
			fprintf(stderr, "bench_dp: cannot load the %s program: %s\n",
				mode_names[md], strerror(errno));
			return 1;
		}
	}
	tbl = table_new(skels[M_EMC]);
	if (!tbl)
		return 1;

	fprintf(stderr, "%6s %7s | %7s | %8s %8s %7s | %8s %8s\n", "masks",
		"rules", "floor", "hit", "search", "hit/fl", "miss",
		"search");
	for (mi = 0; mi < ARRAY_SIZE(masks); mi++) {
		for (ri = 0; ri < ARRAY_SIZE(rules); ri++) {
			unsigned int nm = masks[mi], nr = rules[ri];
			double fl, hit, hit_s, miss, miss_s;
			__u32 hit_dst;

			if (nr < nm)
				continue;
			/* Rule 0, the hit, in the last mask; the others
			 * round-robin over all masks, distinct keys.
			 */
			if (add_rule(0, nm - 1, 0))
				return 1;
			for (i = 1; i < nr; i++) {
				m = (i - 1) % nm;
				if (add_rule(i, m, (i - 1) / nm + (m == nm - 1)))
					return 1;
			}
			hit_dst = 1u << (nm - 1) % 16;
			fl = run(M_FLOOR, nm, hit_dst, repeat, XDP_DROP);
			hit = run(M_EMC, nm, hit_dst, repeat, XDP_DROP);
			hit_s = run(M_SEARCH, nm, hit_dst, repeat, XDP_DROP);
			miss = run(M_EMC, nm, 0xfffffffe, repeat, XDP_PASS);
			miss_s = run(M_SEARCH, nm, 0xfffffffe, repeat,
				     XDP_PASS);
			fprintf(stderr, "%6u %7u | %7.1f | %8.1f %8.1f %7.2f | %8.1f %8.1f\n",
				nm, nr, fl, hit, hit_s, hit / fl, miss, miss_s);
			csv("floor", nm, nr, "hit", fl);
			csv("xdp_flow", nm, nr, "hit", hit);
			csv("search_only", nm, nr, "hit", hit_s);
			csv("xdp_flow", nm, nr, "miss", miss);
			csv("search_only", nm, nr, "miss", miss_s);
			fflush(stdout);
			del_all();
			if (table_rule_count(tbl)) {
				fprintf(stderr, "bench_dp: rules left\n");
				return 1;
			}
		}
	}
	table_free(tbl);
	for (md = 0; md < NR_MODES; md++)
		xdp_flow_bpf__destroy(skels[md]);
	return 0;
}
