/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow datapath: which rule TC would run for a key. The flow table's
 * buckets, the tuple-space search over the mask list, the exact-match
 * cache in front of it, and the goto chain and the gate on top
 * (flow_decide()).
 *
 * May use: xdp_flow_parse.h (the key's words), xdp_flow_maps.h.
 */
#ifndef _XDP_FLOW_LOOKUP_H
#define _XDP_FLOW_LOOKUP_H

#include "xdp_flow_parse.h"
#include "xdp_flow_maps.h"

/* Where a tuple-space search stands: scalars only (a global function's
 * argument).
 */
struct search_state {
	__u64 best_order;	/* the best rule's order so far */
	__u32 n;		/* masks in the list */
	int best;		/* the best rule so far, or -1 */
};

/* The context of the search's bpf_loop() steps. */
struct lookup_ctx {
	const struct xdp_flow_key *key;
	struct xdp_flow_mask_list *list;
	struct search_state st;
};

#ifndef XDP_FLOW_MUTANT_prio_last
/* Whether mask @m may hold a rule of a lower order than @best. */
static __always_inline int mask_may_beat(const struct xdp_flow_dp_mask *m,
					 __u64 best)
{
	__u32 slot = m->slot;
	__u64 *min = bpf_map_lookup_elem(&xf_mask_min, &slot);

	return !min || *min <= best;
}
#endif

/*
 * Word @j of the key @kw as the search sees it. The mask_dst mutant clears
 * the lowest bit of the IPv4 destination (IPv6's fourth byte, ARP's target).
 */
static __always_inline __u64 search_word(const xdp_flow_word *kw, __u32 j)
{
#ifdef XDP_FLOW_MUTANT_mask_dst
	if (j == KEY_WORD(ip_dst))
		return kw[j] & ~KEY_AT(bpf_htonl(1), ip_dst, 4);
#endif
	return kw[j];
}

/*
 * The rule of way @w of bucket @bk if its entry is (@m, @kw masked with
 * it), or -1.
 */
static __always_inline int ft_way(const struct xdp_flow_ft_bucket *bk,
				  __u32 w, const struct xdp_flow_dp_mask *m,
				  const xdp_flow_word *kw)
{
	const xdp_flow_word *mw = (const xdp_flow_word *)&m->mask;
	const struct xdp_flow_ft_entry *e;
	const xdp_flow_word *ew;
	__u32 slot = bk->slot[w], j;
	__u64 diff = 0;

	e = bpf_map_lookup_elem(&xf_fentries, &slot);
	if (!e || e->mask_id != m->id)
		return -1;
	ew = (const xdp_flow_word *)&e->key;
#pragma unroll
	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		diff |= ew[j] ^ (search_word(kw, j) & mw[j]);
	return diff ? -1 : (int)e->rule;
}

/*
 * The rule of the entry among @bk's ways whose signature is @sig and whose
 * key is (@m, @key masked with it), or -1. Called only for a bucket whose
 * signatures flag @sig: a global function, so that the verifier checks its
 * 8 ways once, not once for every mask of a search step.
 */
__noinline int xdp_flow_ft_ways(const struct xdp_flow_ft_bucket *bk,
				const struct xdp_flow_dp_mask *m,
				const struct xdp_flow_key *key, __u32 sig)
{
	const xdp_flow_word *kw = (const xdp_flow_word *)key;
	__u32 w;
	int ret;

	if (!bk || !m || !key)
		return -1;
#pragma unroll
	for (w = 0; w < XDP_FLOW_FT_WAYS; w++) {
		if (bk->sig[w] != sig)
			continue;
		ret = ft_way(bk, w, m, kw);
		if (ret >= 0)
			return ret;
	}
	return -1;
}

/*
 * The rule bucket @bk holds for (@m, @kw masked with it), whose signature
 * is @sig, or -1. The signatures are tested 4 at a time; the lowest way
 * they flag always holds @sig (a borrow flags only ways above one that
 * does), and it is the one that matches unless two keys of the bucket
 * share a signature: it is compared inline, any other case is left to the
 * global function.
 */
static __always_inline int ft_bucket(const struct xdp_flow_ft_bucket *bk,
				     const struct xdp_flow_dp_mask *m,
				     const xdp_flow_word *kw, __u16 sig)
{
	__u64 m0 = xdp_flow_ft_sig_match(bk->sigw[0], sig);
	__u64 m1 = xdp_flow_ft_sig_match(bk->sigw[1], sig);
	__u32 w = 0;
	int ret;

	if (!(m0 | m1))
		return -1;
	if (!m0) {
		m0 = m1;
		w = 4;
	}
	/* The lowest flagged lane, 1 << 16 * lane after the shift, made its
	 * number by a multiply that lines that lane's field up at the top.
	 */
	m0 = (m0 & -m0) >> 15;
	w = (w + ((m0 * 0x0000000100020003ULL) >> 48)) & (XDP_FLOW_FT_WAYS - 1);
	ret = ft_way(bk, w, m, kw);
	if (ret >= 0)
		return ret;
	return xdp_flow_ft_ways(bk, m, (const void *)kw, sig);
}

/* Word @j's term of xdp_flow_ft_hash(). */
static __always_inline __u64 ft_word(const struct xdp_flow_ft_hash *fh,
				     const xdp_flow_word *kw,
				     const xdp_flow_word *mw, __u32 j)
{
	return (search_word(kw, j) & mw[j]) * fh->mul[j];
}

/*
 * The rule the flow table holds for (@m, @kw masked with it): its id, or
 * -1. The first bucket of the mask's region, and the second only when the
 * first one's keys spilled there.
 */
static __always_inline int ft_lookup(const struct xdp_flow_ft_hash *fh,
				     const struct xdp_flow_dp_mask *m,
				     const xdp_flow_word *kw)
{
	const xdp_flow_word *mw = (const xdp_flow_word *)&m->mask;
	__u64 h = xdp_flow_ft_start(fh, m->id);
	struct xdp_flow_ft_bucket *bk;
	__u32 b, idx;
	__u16 sig;
	int ret;

	/* Straight on, the words of XDP_FLOW_WIDE_WORDS and
	 * XDP_FLOW_TUN_WORDS only if the mask keeps one: a loop over the
	 * words it keeps costs more.
	 */
	h += ft_word(fh, kw, mw, 0) + ft_word(fh, kw, mw, 2) +
	     ft_word(fh, kw, mw, 3) + ft_word(fh, kw, mw, 4) +
	     ft_word(fh, kw, mw, 6) + ft_word(fh, kw, mw, 8) +
	     ft_word(fh, kw, mw, 10);
	if (m->wide & XDP_FLOW_MASK_WIDE)
		h += ft_word(fh, kw, mw, 1) + ft_word(fh, kw, mw, 5) +
		     ft_word(fh, kw, mw, 7) + ft_word(fh, kw, mw, 9);
	if (m->wide & XDP_FLOW_MASK_TUN)
		h += ft_word(fh, kw, mw, 11) + ft_word(fh, kw, mw, 12) +
		     ft_word(fh, kw, mw, 13);
	h = xdp_flow_ft_mix(h);
	b = h & m->fb_mask;
	sig = xdp_flow_ft_sig(h);
	idx = m->fb_base + b;
	bk = bpf_map_lookup_elem(&xf_fbuckets, &idx);
	if (!bk)
		return -1;
	ret = ft_bucket(bk, m, kw, sig);
	if (ret >= 0 || !bk->spill)
		return ret;
	idx = m->fb_base + xdp_flow_ft_alt(b, sig, m->fb_mask);
	bk = bpf_map_lookup_elem(&xf_fbuckets, &idx);
	if (!bk)
		return -1;
	return ft_bucket(bk, m, kw, sig);
}

/* Masks searched per bpf_loop() step: a call per mask would cost more
 * than the lookup (every call and return is dear with the kernel's
 * speculation mitigations).
 */
#define LOOKUP_STEP	16

/*
 * Masks @i * LOOKUP_STEP on of the tuple-space search of @key in @list,
 * from and into @st. Returns 1 when no mask is left, 0 otherwise.
 */
static __always_inline int search_step(__u32 i, const struct xdp_flow_key *key,
				       struct xdp_flow_mask_list *list,
				       const struct xdp_flow_ft_hash *fh,
				       struct search_state *st)
{
	const xdp_flow_word *kw = (const xdp_flow_word *)key;
	struct xdp_flow_dp_rule *rule;
	struct xdp_flow_dp_mask *m;
	__u64 mi;
	__u32 k, id;
	int ret;

	for (k = 0; k < LOOKUP_STEP; k++) {
		mi = (__u64)i * LOOKUP_STEP + k;
		if (mi >= st->n || mi >= XDP_FLOW_MAX_MASKS)
			return 1;
		/* Keep the index checked and the pointer: clang would derive
		 * them again from @i, whose bounds the verifier no longer
		 * knows there.
		 */
		asm volatile("" : "+r"(mi));
		m = &list->masks[mi];
		asm volatile("" : "+r"(m));
		/*
		 * No rule of this mask can beat the best so far. Later masks
		 * may: their lowest order may have dropped since the list
		 * was sorted.
		 */
#ifndef XDP_FLOW_MUTANT_prio_last
		if (st->best >= 0 && !mask_may_beat(m, st->best_order))
			continue;
#endif
		ret = ft_lookup(fh, m, kw);
		if (ret < 0)
			continue;
		id = ret;
		rule = bpf_map_lookup_elem(&xf_rules, &id);
		if (!rule || !(rule->flags & XDP_FLOW_DP_F_VALID))
			continue;
#ifdef XDP_FLOW_MUTANT_prio_last
		if (st->best < 0 || rule->order > st->best_order) {
#else
		if (rule->order < st->best_order) {
#endif
			st->best = id & 0x7fffffff;
			st->best_order = rule->order;
		}
	}
	return 0;
}

/*
 * A step of the search: search_step() as a global function, which the
 * verifier checks once. Inline in the bpf_loop() callback, the step was
 * checked again for every state the callback could start from until they
 * converged: on Linux 7.3 that took 0.9 million instructions of the
 * verifier's 1 million.
 */
__noinline int xdp_flow_search_step(__u32 i, const struct xdp_flow_key *key,
				    struct xdp_flow_mask_list *list,
				    struct search_state *st)
{
	const struct xdp_flow_ft_hash *fh;
	__u32 zero = 0;

	if (!key || !list || !st)
		return 1;
	fh = bpf_map_lookup_elem(&xf_fhash, &zero);
	if (!fh)
		return 1;
	return search_step(i, key, list, fh, st);
}

/*
 * The steps after the first: bpf_loop() callback, which must return 0 or 1.
 * The verifier does not know what a global function returns; clang 19
 * does, and drops a "? 1 : 0" it sees as a no-op: the value is opaque to
 * it here.
 */
static int lookup_masks(__u32 i, struct lookup_ctx *lc)
{
	int more = xdp_flow_search_step(i + 1, lc->key, lc->list, &lc->st);

	barrier_var(more);
	return more ? 1 : 0;
}

/*
 * Tuple-space search with TC's semantics: every mask may hold a match, the
 * lowest order wins, whatever the mask. Returns the winning rule id or -1.
 *
 * Global functions and bpf_loop() keep verification cheap: a global
 * function is checked once, whatever calls it, and a bpf_loop() body far
 * fewer times than there are iterations (an open-coded loop over all
 * masks took the verifier 1.5 s); the body only calls
 * xdp_flow_search_step(), whose comment says why. The first step is a
 * call of it too: inline here, where the verifier tracks the search's
 * state on the stack, its 16 masks made 90,000 of the 128,000
 * instructions the verifier processed for the program (Linux 6.18), and
 * the verifier is most of the helper's start-up in an emulated guest.
 */
__noinline int xdp_flow_search(struct xdp_flow_key *key)
{
	struct lookup_ctx lc = { .key = key };
	__u32 zero = 0, n;
	void *inner;

	if (!key)
		return -1;
	inner = bpf_map_lookup_elem(&xf_masks, &zero);
	if (!inner)
		return -1;
	lc.list = bpf_map_lookup_elem(inner, &zero);
	if (!lc.list)
		return -1;
	/*
	 * "No rule yet": no rule id, and an order no rule has (prio is 16
	 * bits). They are computed from list->pad, which is always 0, rather
	 * than written as constants: kernels before 6.7 check a bpf_loop()
	 * callback once, with the caller's constants, and would take the
	 * comparisons with them for always true or false and drop the other
	 * branch as dead code.
	 */
	lc.st.best = -1 - (int)lc.list->pad;
	lc.st.best_order = ~0ULL - lc.list->pad;
	n = lc.list->count;
	if (n > XDP_FLOW_MAX_MASKS)
		n = XDP_FLOW_MAX_MASKS;
	lc.st.n = n;
	if (!xdp_flow_search_step(0, lc.key, lc.list, &lc.st) &&
	    n > LOOKUP_STEP)
		bpf_loop((n - 1) / LOOKUP_STEP, lookup_masks, &lc, 0);
	return lc.st.best;
}

/* @key's cache hash, when the program has a cache to probe (else 0). */
static __always_inline __u64 emc_hash(struct xdp_flow_key *key)
{
	if (!xf_cfg_emc || xf_cfg_floor)
		return 0;
	return xdp_flow_emc_hash((xdp_flow_word *)key);
}

/*
 * Which of the key's tunnel fields a listed mask keeps (xf_gen[1],
 * XDP_FLOW_GEN_* bits): the others, left 0, match every mask alike.
 */
static __always_inline __u64 tun_words_used(void)
{
	__u32 one = 1;
	__u64 *w = bpf_map_lookup_elem(&xf_gen, &one);

	return w ? *w : 0;
}

/*
 * Whether a way's key @a is the key @b. Where @b is an IPv4 key, a way
 * with the same word 2 (its EtherType) holds one too, parsed as @b was:
 * the words the parser keeps zero for IPv4 are zero in both.
 */
static __always_inline int emc_key_equal(const xdp_flow_word *a,
					 const xdp_flow_word *b, int v4)
{
	__u64 diff = 0;
	__u32 j;

	XDP_FLOW_UNROLL
	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		if (!v4 || !xdp_flow_emc_v4_zero(j))
			diff |= a[j] ^ b[j];
	return !diff;
}

/*
 * The winning rule id for @key, or -1. A frame of a flow this CPU saw since
 * the tables last changed costs one probe of the cache, inline; any other
 * pays the tuple-space search (a call), whose answer the cache then keeps
 * in one of its set's ways, round robin. The generation is read before
 * the search, so an answer found while the helper changed the tables is
 * kept under the old generation and never counts. On a hit, *@act is what
 * the way knows the rule does (xdp_flow_emc_set.act); on a miss it is 0,
 * and *@slot is where the caller may write that once it has read the rule.
 * @h is the key's xdp_flow_emc_hash(); @v4ok lets an IPv4 key be
 * compared as one (emc_key_equal()), 0 has every word compared.
 */
static __always_inline int xdp_flow_lookup(struct xdp_flow_key *key,
					   __u64 h, int v4ok, __u32 **slot,
					   __u32 *act)
{
	struct xdp_flow_emc_set *s = NULL;
	xdp_flow_word *kw = (xdp_flow_word *)key;
	__u64 *g, gen = 0;
	__u32 zero = 0, idx, sig = 0, w;
	int best;

	if (xf_cfg_emc) {
		g = bpf_map_lookup_elem(&xf_gen, &zero);
		if (g)
			gen = *g;
	}
	if (gen) {
		idx = xdp_flow_emc_set(h);
		sig = xdp_flow_emc_sig(h);
		s = bpf_map_lookup_elem(&xf_emc, &idx);
	}
	if (s && s->gen == gen) {
#pragma unroll
		for (w = 0; w < XDP_FLOW_EMC_WAYS; w++)
			if (s->sig[w] == sig &&
			    emc_key_equal((xdp_flow_word *)&s->key[w], kw,
					  v4ok && xdp_flow_emc_v4(kw))) {
				*act = s->act[w];
				return s->rule[w];
			}
	}
	best = xdp_flow_search(key);
	if (s) {
		if (s->gen != gen) {
#pragma unroll
			for (w = 0; w < XDP_FLOW_EMC_WAYS; w++)
				s->sig[w] = 0;
			s->next = 0;
			s->gen = gen;
		}
		w = s->next++ & (XDP_FLOW_EMC_WAYS - 1);
		s->sig[w] = sig;
		s->rule[w] = best;
		s->act[w] = 0;
		s->key[w] = *key;
		*slot = &s->act[w];
	}
	return best;
}

/* goto chain: at most this many in a row, then TC decides (it allows 16,
 * and drops the packet after that).
 */
#define XDP_FLOW_MAX_GOTOS	4

/*
 * A verdict of the lookup besides the XDP ones: the rule's actions end in
 * a pass after a mirror, which TC would not see again: the frame goes to
 * the stack past TC's filters (TCX_PASS). Never an XDP program's return.
 */
#define XF_DELIVER	16

/* What the lookup decided for a frame, for either hook to carry out. */
struct flow_verdict {
	__u32 rule_id;		/* the rule whose action decides */
	__u32 n;		/* its number of actions */
	__u32 ifindex;		/* XDP_REDIRECT: the device */
	__u32 hops;		/* goto rules that led to it */
	__u32 path[XDP_FLOW_MAX_GOTOS];
	__u32 ingress;		/* XDP_REDIRECT: into @ifindex's receive path */
};

/* What the cache may keep of a rule whose only action is @act. */
static __always_inline __u32 emc_act(const struct xdp_flow_action *act)
{
	if (act->id == XDP_FLOW_ACTION_DROP)
		return XDP_FLOW_EMC_DROP;
	if (act->id == XDP_FLOW_ACTION_REDIRECT)
		return act->ifindex;	/* 0 would be "read the rule" */
	return 0;
}

/*
 * A TCP FIN or RST of a flowtable's connection, which the gate sends to
 * the stack while its rule's change is in flight: the flowtable tears the
 * flow down there, so the connection is marked as ft_conn_ended()
 * (xdp_flow_flowtable.h) marks it, before the gate lets the rule act.
 */
static __always_inline void ft_conn_gated(const struct xdp_flow_dp_rule *rule,
					  const struct xdp_flow_key *key)
{
	__u32 *ended;

	if (!rule->ft_conn || key->ip_proto != IPPROTO_TCP ||
	    !(key->tcp_flags & bpf_htons(0x0005)))	/* RST, FIN */
		return;
	ended = bpf_map_lookup_elem(&xf_ft_conns, &rule->ft_conn);
	if (ended)
		*ended = 1;
}

/*
 * Whether the gate (@limit, not open) holds @rule back: its order is the
 * limit's or higher, or the module holds the rule itself (xf_held: a
 * flowtable's flow whose change is in flight).
 */
static __always_inline int rule_gated(const struct xdp_flow_dp_rule *rule,
				      __u32 id, __u64 limit)
{
	__u32 *held;

	if (rule->order >= limit - 1)
		return 1;
	held = bpf_map_lookup_elem(&xf_held, &id);
	return held && *held;
}

/*
 * Whether the outer IPv6 addresses of the frame (xf_enc6_buf) are those
 * rule @id matches, whose digests the key found it by: a collision of
 * digests sends the frame to the stack. A global function, checked once.
 */
__noinline int xdp_flow_enc6_same(__u32 id)
{
	const struct xdp_flow_rule *def;
	const struct xdp_flow_enc6 *e6;
	const __u32 *a, *b;
	__u32 zero = 0;
	int i;

	def = bpf_map_lookup_elem(&xf_rule_defs, &id);
	e6 = bpf_map_lookup_elem(&xf_enc6_buf, &zero);
	if (!def || !e6)
		return 0;
	a = (const __u32 *)def->enc6.src;
	b = (const __u32 *)e6->src;
	for (i = 0; i < 4 && def->mask.enc_src; i++)
		if (a[i] != b[i])
			return 0;
	a = (const __u32 *)def->enc6.dst;
	b = (const __u32 *)e6->dst;
	for (i = 0; i < 4 && def->mask.enc_dst; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/*
 * One step of the goto chain, the @hops-th: looks @key up and reads the
 * rule. Returns 1 when the rule is a goto to follow (@key's chain is set
 * for the next step), 0 when the rule decides (@act and @n are its last
 * action and its number of actions), 2 when the cache knew that the rule
 * is a lone drop or redirect (@v has it all), -1 when the frame goes to TC.
 */
static __always_inline int flow_step(struct xdp_flow_key *key, __u64 h,
				     struct flow_verdict *v, __u64 limit,
				     __u32 hops, struct xdp_flow_action **act,
				     __u32 *n)
{
	struct xdp_flow_dp_rule *rule;
	__u32 *slot = NULL, hint = 0;
	int ret;

	/* A goto's step looks up a key with another chain, and compares
	 * every word: the rare steps' code stays small.
	 */
	if (hops)
		h = emc_hash(key);
	ret = xf_cfg_floor ? 0 : xdp_flow_lookup(key, h, !hops, &slot, &hint);
	if (ret < 0)
		return -1;
	v->rule_id = ret;
	/* A drop or a redirect the cache knows, while no change is pending
	 * (the gate is open): the rule need not be read.
	 */
	if (hint && !limit) {
		v->hops = hops;
		v->n = 1;
		v->ifindex = hint == XDP_FLOW_EMC_DROP ? 0 : hint;
		return 2;
	}
	rule = bpf_map_lookup_elem(&xf_rules, &v->rule_id);
	if (!rule)
		return -1;
	if (limit && rule_gated(rule, v->rule_id, limit)) {
		ft_conn_gated(rule, key);
		return -1;
	}
	/* Rules TC executes itself, and "pass", are counted by TC; so are
	 * the rules that led here, as TC runs them again.
	 */
	*n = rule->nr_actions;
	if (rule->flags & XDP_FLOW_RULE_F_SOFTWARE || *n == 0 ||
	    *n > XDP_FLOW_MAX_ACTIONS)
		return -1;
	if (rule->flags & XDP_FLOW_RULE_F_ENC6 &&
	    !xdp_flow_enc6_same(v->rule_id))
		return -1;
	/* The last action decides; rewrites come before a redirect only. */
	*act = &rule->actions[(*n - 1) & (XDP_FLOW_MAX_ACTIONS - 1)];
	if ((*act)->id != XDP_FLOW_ACTION_GOTO) {
		v->hops = hops;
		/* Not for a rule that also compares what the key only
		 * holds digests of.
		 */
		if (slot && *n == 1 && !(rule->flags & XDP_FLOW_RULE_F_ENC6))
			*slot = emc_act(*act);
		return 0;
	}
	if (*n > 1 || hops >= XDP_FLOW_MAX_GOTOS)
		return -1;
	v->path[hops] = v->rule_id;
	key->chain = (*act)->chain;
	return 1;
}

/*
 * Finds the rule TC would run for @key, following goto chains (for
 * flow_run(), which both hooks run). Returns XDP_DROP or XDP_REDIRECT for the hook to
 * carry out (then count, with flow_count()), or XDP_PASS: the frame goes
 * to TC (a miss, a pass action, a rule TC executes itself).
 */
static __always_inline int flow_decide(struct xdp_flow_key *key,
				       struct flow_verdict *v)
{
	struct xdp_flow_action *act = NULL;
	__u32 n = 0, zero = 0;
	__u64 *gate, limit, h;
	int r;

	/* Hashed first, while the parser's words are at hand. */
	h = emc_hash(key);

	/* Rule changes the helper has not done yet: what they may decide
	 * goes to the stack (all of it, from XDP_FLOW_GATE_CLOSED on). A
	 * closed gate still looks the rule up: a flowtable connection's FIN
	 * marks it there (ft_conn_gated()) while no helper answers.
	 */
	gate = bpf_map_lookup_elem(&xf_gate, &zero);
	if (!gate)
		return XDP_PASS;
	limit = *gate;
#ifdef XDP_FLOW_MUTANT_never_tcp
	if (key->ip_proto == IPPROTO_TCP && !key->ip_frag)
		return XDP_PASS;
#endif
	/*
	 * The chain's steps one after the other, not in a loop: with the
	 * lookup inline, clang may lay such a loop out so that it closes
	 * through an edge that is not a jump, which 6.1's verifier
	 * refuses ("back-edge").
	 */
	r = flow_step(key, h, v, limit, 0, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 1, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 2, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 3, &act, &n);
	if (r == 1)
		r = flow_step(key, h, v, limit, 4, &act, &n);
	if (r == 2)
		return v->ifindex ? XDP_REDIRECT : XDP_DROP;
	if (r != 0 || !act)
		return XDP_PASS;
	v->n = n;

	switch (act->id) {
	case XDP_FLOW_ACTION_DROP:
		if (n > 1)
			return XDP_PASS;
		return XDP_DROP;
	case XDP_FLOW_ACTION_REDIRECT:
		if (!act->ifindex)
			return XDP_PASS;
		v->ifindex = act->ifindex;
		return XDP_REDIRECT;
	case XDP_FLOW_ACTION_REDIRECT_INGRESS:
		if (!act->ifindex)
			return XDP_PASS;
		v->ifindex = act->ifindex;
		v->ingress = 1;
		return XDP_REDIRECT;
	case XDP_FLOW_ACTION_PASS:
		/* After a mirror, TC is done with the frame. */
		return n > 1 ? XF_DELIVER : XDP_PASS;
	}
	/* An entry caught while being cleared. */
	return XDP_PASS;
}

#endif /* _XDP_FLOW_LOOKUP_H */
