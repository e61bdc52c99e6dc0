// SPDX-License-Identifier: GPL-2.0
/*
 * The datapath's cost per frame on the host's real CPU, through
 * BPF_PROG_TEST_RUN, against references run in the same process and the
 * same rounds (bench_ref.bpf.c): the textbook parser, and the textbook
 * tuple-space search (one kernel hash map per mask, 16-byte keys).
 *
 * Every program steps its frame to the next flow at each repetition
 * (xdp_flow_bench.h), so a run is drawn from N flows, not one frame. The
 * rules of a configuration of M masks: mask m matches the IPv4 source on a
 * prefix of 32 - m % 8 bits and, by m / 8, the destination address, the
 * UDP destination port and the UDP source port; its rules all have
 * priority m + 1, so the masks are searched in the order of m. The flows
 * are spread evenly over the masks (flow src 10.m.0.j hits mask m's
 * rules and no earlier mask's, so a hit searches m + 1 masks and the early
 * exit skips the rest); a single flow hits the last mask. Rules beyond
 * those the 4,096 flows need ("filler", 11.0.0.0/8) are spread over all
 * masks, so that 100,000 rules touch memory.
 *
 * Variants (one CSV line each per configuration and flow count):
 *   empty          ref_empty: test-run and rotation overhead
 *   ref_parse      the textbook parser alone
 *   ref_floor      the textbook parser, then rule 0's action read and its
 *                  counters (per-CPU array) updated: what the floor must
 *                  do at least
 *   ref_search     the textbook search, a hit
 *   ref_miss       the textbook search, a miss over 65,535 flows (every
 *                  mask searched)
 *   floor          xdp_flow without the lookup (parse, rule 0, count, act)
 *   cached_hit     xdp_flow, a hit, with its exact-match cache
 *   search_hit     xdp_flow, a hit, the cache off (the search alone)
 *   uncached_miss  xdp_flow with its cache, a miss over 65,535 flows: no
 *                  flow comes back before the cache has forgotten it
 * The variants run interleaved: each round runs every (variant, flows)
 * case once, after one warm-up round.
 *
 * Output: "dp,<variant>,<masks>,<rules>,<flows>,<ns_min>,<ns_median>" on
 * stdout (ns per frame over the rounds), and a readable table with the
 * ratios to the references on stderr.
 *
 * Usage: bench_dp [--quick] [--masks 1|16|64] [--profile VARIANT FLOWS]
 *   --quick    3 rounds of 16,384 frames (a smoke run, not for figures)
 *   --masks    only the configurations of that many masks
 *   --profile  no figures: run one case (of the first configuration
 *              selected) for about 10 s, for perf record -a to sample
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umh.h"
#include "xdp_flow_dp.h"
#include "xdp_flow_bench.h"
#include "xdp_flow.skel.h"
#include "bench_ref.h"
#include "bench_ref.skel.h"

#define IFINDEX		1	/* lo: BPF_PROG_TEST_RUN wants a real device */
#define MAX_ROUNDS	15
#define COVER_FLOWS	4096	/* the most flows a hit case draws from */
#define MISS_FLOWS	65535
#define SRC_FLOWS	0x0a000000u	/* 10.0.0.0: flow src 10.m.0.j */
#define SRC_MISS	0x0ac80000u	/* 10.200.0.0: no rule */
#define SRC_FILL	0x0b000000u	/* 11.0.0.0/8: filler rules */
#define DST		0xc0000201u	/* 192.0.2.1 */
#define SPORT		1000
#define DPORT		53

enum xf_prog { XF_CACHED, XF_SEARCH, XF_FLOOR, NR_XF };

enum variant {
	V_EMPTY, V_REF_PARSE, V_REF_FLOOR, V_REF_SEARCH, V_REF_MISS,
	V_FLOOR, V_CACHED_HIT, V_SEARCH_HIT, V_UNCACHED_MISS, NR_VARIANTS
};

static const char *const variant_names[NR_VARIANTS] = {
	"empty", "ref_parse", "ref_floor", "ref_search", "ref_miss",
	"floor", "cached_hit", "search_hit", "uncached_miss",
};

static const unsigned int hit_flows[] = { 1, 256, 1024, 4096 };

struct bench_case {
	enum variant v;
	unsigned int flows;
	double ns[MAX_ROUNDS];
};

static struct xdp_flow_bpf *xf[NR_XF];
static struct bench_ref_bpf *ref;
static struct table *tbl;
static int rounds = 5, repeat = 131072;

/* Loads xdp_flow's program as @p; the others share the first one's maps. */
static struct xdp_flow_bpf *xf_load(enum xf_prog p)
{
	struct xdp_flow_bpf *s = xdp_flow_bpf__open();
	struct bpf_map *map, *first;
	int err;

	if (!s)
		return NULL;
	bpf_object__for_each_map(map, s->obj)
		bpf_map__set_pin_path(map, NULL);
	s->rodata->xf_cfg_emc = p == XF_CACHED;
	s->rodata->xf_cfg_floor = p == XF_FLOOR;
	s->rodata->xf_cfg_bench = 1;
	if (p != XF_CACHED) {
		bpf_object__for_each_map(map, s->obj) {
			first = bpf_object__find_map_by_name(xf[XF_CACHED]->obj,
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

static int prog_fd(enum variant v)
{
	switch (v) {
	case V_EMPTY:
		return bpf_program__fd(ref->progs.ref_empty);
	case V_REF_PARSE:
		return bpf_program__fd(ref->progs.ref_parse);
	case V_REF_FLOOR:
		return bpf_program__fd(ref->progs.ref_floor);
	case V_REF_SEARCH:
	case V_REF_MISS:
		return bpf_program__fd(ref->progs.ref_search);
	case V_FLOOR:
		return bpf_program__fd(xf[XF_FLOOR]->progs.xdp_flow);
	case V_SEARCH_HIT:
		return bpf_program__fd(xf[XF_SEARCH]->progs.xdp_flow);
	default:
		return bpf_program__fd(xf[XF_CACHED]->progs.xdp_flow);
	}
}

static int want_verdict(enum variant v)
{
	return v == V_REF_MISS || v == V_UNCACHED_MISS ? XDP_PASS : XDP_DROP;
}

/*
 * The first frame of a run of case @c with @masks masks: UDP/IPv4 from
 * 10.m.0.j:1000 to 192.0.2.1:53, with the rotor that steps it through the
 * case's flows.
 */
static size_t frame(__u8 *b, const struct bench_case *c, unsigned int masks)
{
	struct ethhdr *eth = (void *)b;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct bench_rotor *r = (void *)(udp + 1);
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
	ip->daddr = htonl(DST);
	udp->source = htons(SPORT);
	udp->dest = htons(DPORT);
	udp->len = htons(len - sizeof(*eth) - sizeof(*ip));

	if (c->v == V_REF_MISS || c->v == V_UNCACHED_MISS) {
		r->base = SRC_MISS;
		r->nm = 1;
		r->nj = c->flows;
	} else if (c->flows == 1) {
		/* One flow: the last mask's, so every mask is searched. */
		r->base = SRC_FLOWS | (masks - 1) << 16;
		r->nm = 1;
		r->nj = 1;
	} else {
		r->base = SRC_FLOWS;
		r->nm = masks;
		r->nj = c->flows / masks;
	}
	ip->saddr = htonl(r->base);
	return len;
}

/* ns per frame of one run of @c. */
static double run(const struct bench_case *c, unsigned int masks)
{
	struct xdp_md ctx = { .ingress_ifindex = IFINDEX };
	__u8 b[128], out[128];
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = b, .data_out = out,
		    .data_size_out = sizeof(out),
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = repeat);

	ctx.data_end = frame(b, c, masks);
	o.data_size_in = ctx.data_end;
	if (bpf_prog_test_run_opts(prog_fd(c->v), &o) ||
	    (int)o.retval != want_verdict(c->v)) {
		fprintf(stderr, "bench_dp: %s, %u flows: verdict %d, want %d (%s)\n",
			variant_names[c->v], c->flows, o.retval,
			want_verdict(c->v), strerror(errno));
		exit(1);
	}
	return o.duration;
}

/* --- the rules, in xdp_flow's tables and in the reference's --- */

static unsigned int mask_plen(unsigned int m)
{
	return 32 - m % 8;
}

static void ref_mask_of(unsigned int m, struct ref_key *k)
{
	unsigned int plen = mask_plen(m), c = m / 8;

	memset(k, 0, sizeof(*k));
	k->src = htonl(~0u << (32 - plen));
	if (c & 1)
		k->dst = 0xffffffff;
	if (c & 6)
		k->proto = 0xff;
	if (c & 2)
		k->dport = 0xffff;
	if (c & 4)
		k->sport = 0xffff;
}

/* Rule @id in mask @m, for source @src (masked here). */
static int add_rule(__u32 id, unsigned int m, __u32 src, int inner_fd)
{
	unsigned int plen = mask_plen(m), c = m / 8;
	char args[256], msg[UMH_MSG_LEN] = "";
	struct ref_key mask, key;
	struct xdp_flow_rule r;
	struct in_addr a;
	__u32 prio = m + 1;
	int err;

	src &= ~0u << (32 - plen);
	a.s_addr = htonl(src);
	snprintf(args, sizeof(args),
		 "id=%u prio=%u ifindex=%d src_ip=%s/%u%s%s%s%s action=drop",
		 id, prio, IFINDEX, inet_ntoa(a), plen,
		 c & 1 ? " dst_ip=192.0.2.1" : "", c & 6 ? " ip_proto=udp" : "",
		 c & 2 ? " dst_port=53" : "", c & 4 ? " src_port=1000" : "");
	err = driver_parse_rule(args, &r, msg, sizeof(msg));
	if (!err)
		err = table_rule_add(tbl, &r, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "bench_dp: %s: %s\n", args, msg);
		return err;
	}

	ref_mask_of(m, &mask);
	memset(&key, 0, sizeof(key));
	key.src = htonl(src);
	key.dst = htonl(DST) & mask.dst;
	key.proto = IPPROTO_UDP & mask.proto;
	key.sport = htons(SPORT) & mask.sport;
	key.dport = htons(DPORT) & mask.dport;
	if (bpf_map_update_elem(inner_fd, &key, &prio, BPF_NOEXIST)) {
		fprintf(stderr, "bench_dp: reference rule %s: %s\n", args,
			strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Installs the rules of @masks masks, at least those @COVER_FLOWS flows
 * need, filled up to @rules; returns how many, or -1.
 */
static int rules_setup(unsigned int masks, unsigned int rules)
{
	unsigned int m, j, step, per_mask = COVER_FLOWS / masks, cover = 0;
	unsigned int size[REF_MAX_MASKS];
	struct ref_masks rm = { .count = masks };
	int fds[REF_MAX_MASKS];
	__u32 id = 0, zero = 0, fill;

	/* Each mask's table sized for its rules, as a real one would be. */
	for (m = 0; m < masks; m++) {
		size[m] = (per_mask + (1u << m % 8) - 1) >> m % 8;
		cover += size[m];
	}
	for (m = 0; rules > cover && m < masks; m++)
		size[m] += (rules - cover) / masks + 1;
	for (m = 0; m < masks; m++) {
		fds[m] = bpf_map_create(BPF_MAP_TYPE_HASH, "ref_inner",
					sizeof(struct ref_key), sizeof(__u32),
					size[m],
					&(struct bpf_map_create_opts){
						.sz = sizeof(struct bpf_map_create_opts),
						.map_flags = BPF_F_NO_PREALLOC });
		if (fds[m] < 0 ||
		    bpf_map_update_elem(bpf_map__fd(ref->maps.ref_tables), &m,
					&fds[m], BPF_ANY)) {
			perror("bench_dp: reference table");
			return -1;
		}
		ref_mask_of(m, &rm.masks[m].key);
		rm.masks[m].min_prio = m + 1;
	}
	if (bpf_map_update_elem(bpf_map__fd(ref->maps.ref_masks), &zero, &rm,
				BPF_ANY)) {
		perror("bench_dp: reference masks");
		return -1;
	}
	/* What the flows hit: per mask, one rule per prefix they fall in. */
	for (m = 0; m < masks; m++) {
		step = 1u << (32 - mask_plen(m));
		for (j = 0; j < per_mask; j += step)
			if (add_rule(id++, m, SRC_FLOWS | m << 16 | j, fds[m]))
				return -1;
	}
	/* The rest, round robin over the masks, under 11.0.0.0/8. */
	for (fill = 0; id < rules; fill++) {
		m = fill % masks;
		if (add_rule(id++, m, SRC_FILL | fill << 7, fds[m]))
			return -1;
	}
	for (m = 0; m < masks; m++)
		close(fds[m]);	/* ref_tables holds them */
	return id;
}

static void rules_clear(void)
{
	struct xdp_flow_stats *st;
	char msg[UMH_MSG_LEN];
	size_t n, i;

	if (!table_stats_all(tbl, &st, &n)) {
		for (i = 0; i < n; i++)
			table_rule_del(tbl, st[i].id, msg, sizeof(msg));
		free(st);
	}
	if (table_rule_count(tbl)) {
		fprintf(stderr, "bench_dp: rules left\n");
		exit(1);
	}
}

/*
 * Proof that the frames change: after a warm-up of @c, the rules that
 * counted packets must be as many as the distinct rules its flows hit.
 */
static void check_spread(unsigned int masks, const struct bench_case *c)
{
	struct xdp_flow_stats *st;
	size_t n, i, hit = 0;

	if (table_stats_all(tbl, &st, &n)) {
		fprintf(stderr, "bench_dp: cannot read counters\n");
		exit(1);
	}
	for (i = 0; i < n; i++)
		hit += st[i].packets > 0;
	free(st);
	/* At least one rule per mask, and one per flow in the /32 mask 0. */
	if (hit < masks || hit < c->flows / masks) {
		fprintf(stderr, "bench_dp: %u flows over %u masks hit %zu rules: the frames do not change\n",
			c->flows, masks, hit);
		exit(1);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *ns, double *min)
{
	double s[MAX_ROUNDS];

	memcpy(s, ns, rounds * sizeof(*s));
	qsort(s, rounds, sizeof(*s), cmp_double);
	*min = s[0];
	return rounds % 2 ? s[rounds / 2] :
			    (s[rounds / 2 - 1] + s[rounds / 2]) / 2;
}

static struct bench_case *find(struct bench_case *cs, int n, enum variant v,
			       unsigned int flows)
{
	int i;

	for (i = 0; i < n; i++)
		if (cs[i].v == v && cs[i].flows == flows)
			return &cs[i];
	return NULL;
}

static double med(struct bench_case *cs, int n, enum variant v,
		  unsigned int flows)
{
	struct bench_case *c = find(cs, n, v, flows);
	double min;

	return c ? median(c->ns, &min) : 0;
}

/* ref_floor's rule 0 takes @action. */
static int ref_rule_set(__u32 action)
{
	struct ref_rule rule = { .action = action };
	__u32 zero = 0;

	return bpf_map_update_elem(bpf_map__fd(ref->maps.ref_rules), &zero,
				   &rule, BPF_ANY);
}

/* Runs case (@v, @flows) for about 10 s, for a profiler to sample. */
static void profile(unsigned int masks, unsigned int want_rules,
		    enum variant v, unsigned int flows)
{
	struct bench_case c = { .v = v, .flows = flows };
	double ns = 0, min = 1e9, one;
	unsigned int runs = 0;

	if (rules_setup(masks, want_rules) < 0)
		exit(1);
	while (ns < 10e9) {
		one = run(&c, masks);
		if (one < min)
			min = one;
		ns += one * repeat;
		runs++;
	}
	fprintf(stderr, "%s, %u masks, %u flows: %.1f ns per frame (mean), %.1f (min of %u runs)\n",
		variant_names[v], masks, flows, ns / runs / repeat, min, runs);
	rules_clear();
}

static void bench_config(unsigned int masks, unsigned int want_rules)
{
	struct bench_case cs[32];
	unsigned int i, f;
	int n = 0, r, nr;
	double mn, md;

	nr = rules_setup(masks, want_rules);
	if (nr < 0)
		exit(1);
	cs[n++] = (struct bench_case){ .v = V_EMPTY, .flows = 1 };
	cs[n++] = (struct bench_case){ .v = V_REF_PARSE, .flows = 1 };
	cs[n++] = (struct bench_case){ .v = V_REF_FLOOR, .flows = 1 };
	cs[n++] = (struct bench_case){ .v = V_FLOOR, .flows = 1 };
	for (i = 0; i < ARRAY_SIZE(hit_flows); i++) {
		f = hit_flows[i];
		cs[n++] = (struct bench_case){ .v = V_REF_SEARCH, .flows = f };
		cs[n++] = (struct bench_case){ .v = V_CACHED_HIT, .flows = f };
		cs[n++] = (struct bench_case){ .v = V_SEARCH_HIT, .flows = f };
	}
	cs[n++] = (struct bench_case){ .v = V_REF_MISS, .flows = MISS_FLOWS };
	cs[n++] = (struct bench_case){ .v = V_UNCACHED_MISS,
				       .flows = MISS_FLOWS };

	/* Warm-up round, not counted; then the spread is checked. */
	for (i = 0; i < (unsigned int)n; i++)
		run(&cs[i], masks);
	check_spread(masks, find(cs, n, V_SEARCH_HIT, COVER_FLOWS));
	for (r = 0; r < rounds; r++)
		for (i = 0; i < (unsigned int)n; i++)
			cs[i].ns[r] = run(&cs[i], masks);

	for (i = 0; i < (unsigned int)n; i++) {
		md = median(cs[i].ns, &mn);
		printf("dp,%s,%u,%d,%u,%.1f,%.1f\n", variant_names[cs[i].v],
		       masks, nr, cs[i].flows, mn, md);
	}
	fflush(stdout);

	fprintf(stderr, "\n%u masks, %d rules (medians, ns per frame; empty %.1f)\n",
		masks, nr, med(cs, n, V_EMPTY, 1));
	fprintf(stderr, "  ref_parse %.1f  ref_floor %.1f (%.2fx)  floor %.1f (%.2fx)\n",
		med(cs, n, V_REF_PARSE, 1), med(cs, n, V_REF_FLOOR, 1),
		med(cs, n, V_REF_FLOOR, 1) / med(cs, n, V_REF_PARSE, 1),
		med(cs, n, V_FLOOR, 1),
		med(cs, n, V_FLOOR, 1) / med(cs, n, V_REF_PARSE, 1));
	fprintf(stderr, "  %6s | %8s %8s %6s | %8s %6s %7s\n", "flows",
		"ref", "search", "x ref", "cached", "x ref", "x 1flow");
	for (i = 0; i < ARRAY_SIZE(hit_flows); i++) {
		double rs, sh, ch;

		f = hit_flows[i];
		rs = med(cs, n, V_REF_SEARCH, f);
		sh = med(cs, n, V_SEARCH_HIT, f);
		ch = med(cs, n, V_CACHED_HIT, f);
		fprintf(stderr, "  %6u | %8.1f %8.1f %6.2f | %8.1f %6.2f %7.2f\n",
			f, rs, sh, sh / rs, ch, ch / med(cs, n, V_REF_PARSE, 1),
			ch / med(cs, n, V_CACHED_HIT, 1));
	}
	fprintf(stderr, "  miss, %u flows: ref %.1f, uncached %.1f (%.2fx)\n",
		MISS_FLOWS, med(cs, n, V_REF_MISS, MISS_FLOWS),
		med(cs, n, V_UNCACHED_MISS, MISS_FLOWS),
		med(cs, n, V_UNCACHED_MISS, MISS_FLOWS) /
		med(cs, n, V_REF_MISS, MISS_FLOWS));
	rules_clear();
}

int main(int argc, char **argv)
{
	static const unsigned int masks[] = { 1, 16, 64 };
	unsigned int mi, only = 0, pflows = 0;
	enum variant pv = NR_VARIANTS;
	cpu_set_t one;
	enum xf_prog p;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--quick")) {
			rounds = 3;
			repeat = 16384;
		} else if (!strcmp(argv[a], "--masks") && a + 1 < argc) {
			only = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--profile") && a + 2 < argc) {
			for (pv = 0; pv < NR_VARIANTS; pv++)
				if (!strcmp(argv[a + 1], variant_names[pv]))
					break;
			pflows = atoi(argv[a + 2]);
			a += 2;
			if (pv == NR_VARIANTS || !pflows)
				goto usage;
		} else {
usage:
			fprintf(stderr, "usage: bench_dp [--quick] [--masks 1|16|64] %s\n",
				"[--profile VARIANT FLOWS]");
			return 2;
		}
	}
	log_init(LOG_DEST_STDERR, false);
	/* One CPU: the cache is per CPU, and so is the noise. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (p = 0; p < NR_XF; p++) {
		xf[p] = xf_load(p);
		if (!xf[p]) {
			fprintf(stderr, "bench_dp: cannot load xdp_flow's program: %s\n",
				strerror(errno));
			return 1;
		}
	}
	ref = bench_ref_bpf__open_and_load();
	if (!ref || ref_rule_set(XDP_DROP)) {
		fprintf(stderr, "bench_dp: cannot load the reference programs: %s\n",
			strerror(errno));
		return 1;
	}
	tbl = table_new(xf[XF_CACHED]);
	if (!tbl)
		return 1;

	printf("dp,variant,masks,rules,flows,ns_min,ns_median\n");
	for (mi = 0; mi < ARRAY_SIZE(masks); mi++) {
		if (only && masks[mi] != only)
			continue;
		if (pv != NR_VARIANTS) {
			profile(masks[mi], 0, pv, pflows);
			break;
		}
		bench_config(masks[mi], 0);
		bench_config(masks[mi], 100000);
	}
	table_free(tbl);
	bench_ref_bpf__destroy(ref);
	for (p = 0; p < NR_XF; p++)
		xdp_flow_bpf__destroy(xf[p]);
	return 0;
}
