// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: tuple-space search with TC's semantics.
 *
 * The helper keeps the rules in memory and mirrors them into the XDP maps
 * (see xdp_flow_dp.h): the rule entry by id, one flow entry per distinct
 * (mask, masked key) pointing at the best (lowest order) rule with that key,
 * the list of masks sorted by their lowest order, and each mask's lowest
 * order, which a rule joining a listed mask lowers in place.
 *
 * Order of writes, so that a concurrent XDP reader never meets a rule id
 * whose entry is not ready:
 *   add:    rule definition, rule entry, counters, mask's lowest order,
 *           flow entry, mask list
 *   delete: mask list, flow entry, rule entry, rule definition
 * A rule entry that gets new content (an id reused, a rule replaced) is
 * rewritten only after an RCU grace period has passed since the last flow
 * entry pointing at its old content was removed, and so is a flow entry's
 * slot (ftab.c). The mask list swap waits for one (the kernel does for
 * every map-in-map update), so it doubles as the barrier.
 *
 * Restart: the pinned maps are the state. table_recover() rebuilds the
 * in-memory tables from the rule definitions whose rule entry is live,
 * repairs the flow entries and the mask list a killed helper may have left
 * half-written, and marks every rule as not yet replayed. The module's
 * replay re-adds them (an identical rule is a no-op that keeps its
 * counters; a different one is replaced) and SYNC deletes those it did not
 * replay. Until then the XDP program keeps running on the old state.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umh.h"
#include "xdp_flow_dp.h"
#include "xdp_flow.skel.h"

#define FLOW_BUCKETS	(1u << 16)

struct tmask {
	bool used;
	bool listed;			/* in the published list */
	bool has_reg;			/* @reg is allocated */
	bool has_old;			/* @old waits for the next list */
	__u32 id;
	unsigned int nr_entries;	/* flow entries of rules in this mask */
	unsigned int nr_flows;		/* of them, distinct keys */
	struct ftab_region reg;		/* its buckets */
	struct ftab_region old;		/* its buckets in the published list */
	struct xdp_flow_key mask;
};

struct trule;

/* One (mask, masked key) of a rule: one, or one per prefix of its port
 * ranges.
 */
struct tentry {
	struct trule *rule;
	struct tmask *mask;
	struct xdp_flow_key key;	/* masked with mask->mask */
	struct tentry *hnext;		/* entries hashed to the same bucket */
};

struct trule {
	struct xdp_flow_rule rule;
	unsigned int epoch;		/* replay epoch that last added it */
	unsigned int nr_entries;	/* linked into the tables */
	struct tentry entries[];
};

/* A flow entry before it is placed. */
struct texp {
	struct xdp_flow_key key, mask;
};

/* A flowtable connection's rules (struct xdp_flow_rule's @ft_conn). */
struct tconn {
	__u64 key;			/* 0: a free slot */
	__u32 refs;
};

struct table {
	int rules_fd, counters_fd, masks_fd, defs_fd, gen_fd, conns_fd;
	struct ftab *ft;		/* the XDP flow table */
	int list_fd;			/* the published inner map */
	int ncpus;
	struct trule **rules;		/* by id */
	struct tentry **buckets;
	struct tmask masks[XDP_FLOW_MAX_MASKS];
	__u32 next_mask_id;
	unsigned int nr_rules;
	unsigned int nr_flows;		/* entries in the XDP flow table */
	unsigned int max_masks;		/* for rules; the shields get one more */
	unsigned int max_flows;		/* for rules; the shields get theirs */
	unsigned int max_rules;		/* rule ids: the maps' size */
	bool grown;			/* a mask's buckets wait for a list */
	unsigned int epoch;
	/* Grace periods: bumped at every list swap. del_barrier[id] is its
	 * value when rule @id was last unlinked.
	 */
	__u32 barrier_seq;
	__u32 *del_barrier;
	__u64 gen;			/* the value last written to xf_gen */
	volatile __u64 *gen_map;	/* xf_gen's value, mapped */
	volatile __u64 *mask_min;	/* xf_mask_min's values, mapped */
	/* Ids whose counters may not be zero: a rule had the id since the
	 * counters were last zeroed.
	 */
	bool *counters_dirty;
	/* The counters' chunks (xf_counters' inner maps), each for
	 * XDP_FLOW_COUNTER_CHUNK ids: its map (-1: none), the rules with an
	 * id in it, and the barrier_seq when it last had none (0: it has
	 * some, or no map): it may be freed after a barrier since then.
	 */
	unsigned int nr_chunks;
	unsigned int chunks_made;	/* with a map */
	unsigned int chunks_used;	/* with a rule */
	int *chunk_fd;
	unsigned int *chunk_rules;
	__u32 *chunk_empty;
	struct xdp_flow_counter *zero_counters;	/* one per CPU */
	struct xdp_flow_counter *percpu_buf;		/* one per CPU */
	struct texp *exp;		/* XDP_FLOW_MAX_RULE_ENTRIES, for adds */
	struct tconn *conns;		/* open addressing, by key */
	size_t conn_cap, nr_conns;
	void (*progress)(void *arg);	/* long work calls it at each step */
	void *progress_arg;
};

/* One step of long work (a SYNC, a takeover). */
static void tick(struct table *t)
{
	if (t->progress)
		t->progress(t->progress_arg);
}

/**
 * table_set_progress() - what long work calls to report progress
 * @t: the tables
 * @fn: called at each step of a SYNC or a takeover (it rate-limits)
 * @arg: its argument
 */
void table_set_progress(struct table *t, void (*fn)(void *arg), void *arg)
{
	t->progress = fn;
	t->progress_arg = arg;
}

/* --- field names, for error messages --- */

#define KEY_FIELD(f) { #f, offsetof(struct xdp_flow_key, f), \
		       sizeof(((struct xdp_flow_key *)0)->f) }

static const struct {
	const char *name;
	size_t off, size;
} key_fields[] = {
	KEY_FIELD(ifindex), KEY_FIELD(eth_dst), KEY_FIELD(eth_src),
	KEY_FIELD(n_proto), KEY_FIELD(vlan_tpid), KEY_FIELD(vlan_tci),
	KEY_FIELD(cvlan_tpid), KEY_FIELD(cvlan_tci), KEY_FIELD(ip_proto),
	KEY_FIELD(ip_tos), KEY_FIELD(ip_ttl), KEY_FIELD(ip_frag),
	KEY_FIELD(tcp_flags), KEY_FIELD(ip_src), KEY_FIELD(ip_dst),
	KEY_FIELD(l4_src), KEY_FIELD(l4_dst), KEY_FIELD(arp_sha),
	KEY_FIELD(arp_tha), KEY_FIELD(chain), KEY_FIELD(pppoe_sid),
	KEY_FIELD(ppp_proto),
};

static const char *key_field_name(size_t off)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(key_fields); i++)
		if (off >= key_fields[i].off &&
		    off < key_fields[i].off + key_fields[i].size)
			return key_fields[i].name;
	return "padding";
}

/* --- validation --- */

static bool action_is_terminal(__u32 id)
{
	return id == XDP_FLOW_ACTION_DROP || id == XDP_FLOW_ACTION_PASS ||
	       id == XDP_FLOW_ACTION_REDIRECT || id == XDP_FLOW_ACTION_GOTO;
}

/*
 * A PPPoE action (action @i) works on a frame without VLAN tags: the
 * rule's match must say how many tags its frames carry (the outer tag's
 * protocol is matched, 0 for none), and as many VLAN pops must come
 * before it, and no push.
 */
static bool pppoe_untagged(const struct xdp_flow_rule *r, unsigned int i)
{
	unsigned int tags, pops = 0, k;

	if (r->mask.vlan_tpid != 0xffff ||
	    (r->key.vlan_tpid && r->mask.cvlan_tpid != 0xffff))
		return false;
	tags = !!r->key.vlan_tpid + !!r->key.cvlan_tpid;
	for (k = 0; k < i; k++) {
		if (r->actions[k].id == XDP_FLOW_ACTION_VLAN_PUSH)
			return false;
		pops += r->actions[k].id == XDP_FLOW_ACTION_VLAN_POP;
	}
	return pops >= tags;
}

/* What the XDP program relies on, checked again here so that a rule it
 * cannot execute is refused rather than run: rewrites (pedit and csum
 * before VLAN actions), then exactly one terminal action (drop, pass, goto
 * or redirect), the last; rewrites only before a redirect. A flowtable's
 * rule starts with FT_ROUTE, has its NAT actions before VLAN and PPPoE
 * actions, no pedit or csum, and ends in a redirect; its PPPoE actions
 * work on untagged frames, and it pops PPPoE only from frames its match
 * takes as PPPoE.
 */
static int action_check(const struct xdp_flow_rule *r, unsigned int i,
			bool *vlan, char *msg, size_t len)
{
	const struct xdp_flow_action *a = &r->actions[i];
	bool last = i + 1 == r->nr_actions;
	bool ft = r->actions[0].id == XDP_FLOW_ACTION_FT_ROUTE;

	if (action_is_terminal(a->id) != last) {
		snprintf(msg, len,
			 last ? "action %u: the last action is not drop, pass, goto or redirect" :
				"action %u follows a terminal action",
			 last ? i : i + 1);
		return -EINVAL;
	}
	if (last && r->nr_actions > 1 && a->id != XDP_FLOW_ACTION_REDIRECT) {
		snprintf(msg, len, "action %u: rewrites end only in a redirect", i);
		return -EINVAL;
	}
	if (ft && (a->id == XDP_FLOW_ACTION_MANGLE ||
		   a->id == XDP_FLOW_ACTION_ADD ||
		   a->id == XDP_FLOW_ACTION_CSUM)) {
		snprintf(msg, len, "action %u: pedit or csum in a flowtable's rule", i);
		return -EINVAL;
	}
	switch (a->id) {
	case XDP_FLOW_ACTION_FT_ROUTE:
		if (i || !a->ft_route.mtu || last) {
			snprintf(msg, len,
				 "action %u: ft_route not first, without an mtu or without a redirect",
				 i);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_FT_PORTS:
	case XDP_FLOW_ACTION_FT_SRC_ADDR:
	case XDP_FLOW_ACTION_FT_DST_ADDR:
		if (!ft || *vlan) {
			snprintf(msg, len,
				 "action %u: ft nat without ft_route first, or after a vlan action",
				 i);
			return -EINVAL;
		}
		if (a->id == XDP_FLOW_ACTION_FT_PORTS &&
		    (!a->ft_ports.which ||
		     a->ft_ports.which & ~(XDP_FLOW_FT_SPORT | XDP_FLOW_FT_DPORT))) {
			snprintf(msg, len, "action %u: ft ports 0x%x", i,
				 a->ft_ports.which);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_DROP:
	case XDP_FLOW_ACTION_PASS:
	case XDP_FLOW_ACTION_GOTO:
		return 0;
	case XDP_FLOW_ACTION_REDIRECT:
		if (!a->ifindex) {
			snprintf(msg, len, "action %u: redirect without ifindex", i);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_MANGLE:
	case XDP_FLOW_ACTION_ADD:
		if (*vlan) {
			snprintf(msg, len, "action %u: pedit after a vlan action", i);
			return -EINVAL;
		}
		if (a->mangle.htype >= __XDP_FLOW_HDR_MAX ||
		    a->mangle.offset % 4 || a->mangle.offset > 60) {
			snprintf(msg, len, "action %u: pedit of header %u offset %u",
				 i, a->mangle.htype, a->mangle.offset);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_CSUM:
		if (*vlan) {
			snprintf(msg, len, "action %u: csum after a vlan action", i);
			return -EINVAL;
		}
		if (a->csum_flags & ~(XDP_FLOW_CSUM_IPV4HDR | XDP_FLOW_CSUM_ICMP |
				      XDP_FLOW_CSUM_TCP | XDP_FLOW_CSUM_UDP)) {
			snprintf(msg, len, "action %u: csum flags 0x%x", i,
				 a->csum_flags);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_VLAN_PUSH:
	case XDP_FLOW_ACTION_VLAN_MODIFY:
		if (a->vlan.proto != htons(0x8100) && a->vlan.proto != htons(0x88a8)) {
			snprintf(msg, len, "action %u: vlan protocol 0x%04x", i,
				 ntohs(a->vlan.proto));
			return -EINVAL;
		}
		*vlan = true;
		return 0;
	case XDP_FLOW_ACTION_VLAN_POP:
		*vlan = true;
		return 0;
	case XDP_FLOW_ACTION_PPPOE_PUSH:
	case XDP_FLOW_ACTION_PPPOE_POP:
		if (!ft || !pppoe_untagged(r, i)) {
			snprintf(msg, len,
				 "action %u: pppoe outside a flowtable's rule, or on frames that may carry a vlan tag",
				 i);
			return -EINVAL;
		}
		if (a->id == XDP_FLOW_ACTION_PPPOE_POP &&
		    (r->mask.ppp_proto != 0xffff || !r->key.ppp_proto ||
		     r->mask.pppoe_sid != 0xffff)) {
			snprintf(msg, len,
				 "action %u: pppoe pop of frames not matched as a pppoe session",
				 i);
			return -EINVAL;
		}
		*vlan = true;
		return 0;
	}
	snprintf(msg, len, "action %u: unknown action id %u", i, a->id);
	return -EINVAL;
}

/* The shields' mask: the ifindex alone. No rule of TC's has it (theirs
 * always hold the chain too).
 */
static const struct xdp_flow_key shield_mask = { .ifindex = 0xffffffff };

/* Shields have the top XDP_FLOW_MAX_SHIELDS ids of the @t->max_rules. */
static __u32 shield_id_base(const struct table *t)
{
	return t->max_rules - XDP_FLOW_MAX_SHIELDS;
}

static bool is_shield_id(const struct table *t, __u32 id)
{
	return id >= shield_id_base(t) && id < t->max_rules;
}

/* A shield matches every frame of one device and hands it to the stack. */
static bool shield_ok(const struct xdp_flow_rule *r)
{
	return (r->flags & XDP_FLOW_RULE_F_SOFTWARE) &&
	       !memcmp(&r->mask, &shield_mask, sizeof(shield_mask)) &&
	       !r->l4_src_range.max &&
	       !r->l4_dst_range.max;
}

static int rule_check(const struct table *t, const struct xdp_flow_rule *r,
		      char *msg, size_t len)
{
	const __u8 *k = (const __u8 *)&r->key, *m = (const __u8 *)&r->mask;
	unsigned int i;
	bool vlan = false;
	int err;

	if (r->id >= t->max_rules) {
		snprintf(msg, len, "rule id %u out of range (max %u)", r->id,
			 t->max_rules - 1);
		return -EINVAL;
	}
	if (r->flags & ~(XDP_FLOW_RULE_F_SOFTWARE | XDP_FLOW_RULE_F_NFTABLES |
			 XDP_FLOW_RULE_F_SHIELD | XDP_FLOW_RULE_F_FLOWTABLE)) {
		snprintf(msg, len, "unknown rule flags 0x%x", r->flags);
		return -EINVAL;
	}
	if (!(r->flags & XDP_FLOW_RULE_F_SHIELD) != !is_shield_id(t, r->id) ||
	    (is_shield_id(t, r->id) && !shield_ok(r))) {
		snprintf(msg, len,
			 "rule %u: shields are software rules on the ifindex alone, with ids from %u",
			 r->id, shield_id_base(t));
		return -EINVAL;
	}
	if (r->nr_actions > XDP_FLOW_MAX_ACTIONS) {
		snprintf(msg, len, "%u actions, at most %u", r->nr_actions,
			 XDP_FLOW_MAX_ACTIONS);
		return -EINVAL;
	}
	if (!r->nr_actions && !(r->flags & XDP_FLOW_RULE_F_SOFTWARE)) {
		snprintf(msg, len, "rule %u has no actions", r->id);
		return -EINVAL;
	}
	for (i = 0; i < r->nr_actions; i++) {
		err = action_check(r, i, &vlan, msg, len);
		if (err)
			return err;
	}
	for (i = 0; i < sizeof(r->key); i++) {
		if (k[i] & ~m[i]) {
			snprintf(msg, len, "key has bits outside the mask in %s",
				 key_field_name(i));
			return -EINVAL;
		}
	}
	if ((r->l4_src_range.max && (r->mask.l4_src ||
				     r->l4_src_range.min > r->l4_src_range.max)) ||
	    (r->l4_dst_range.max && (r->mask.l4_dst ||
				     r->l4_dst_range.min > r->l4_dst_range.max))) {
		snprintf(msg, len, "port range %u-%u/%u-%u with the port also masked, or empty",
			 r->l4_src_range.min, r->l4_src_range.max,
			 r->l4_dst_range.min, r->l4_dst_range.max);
		return -EINVAL;
	}
	return 0;
}

/* --- port ranges --- */

#define RANGE_MAX_PREFIXES	32	/* a 16-bit range needs at most 30 */

/* The masked ports (value, mask) that together cover exactly @r. */
static unsigned int range_cover(const struct xdp_flow_port_range *r,
				__u16 *val, __u16 *mask)
{
	__u32 lo = r->min, hi = r->max;
	unsigned int n = 0, bits;

	while (lo <= hi && n < RANGE_MAX_PREFIXES) {
		bits = lo ? __builtin_ctz(lo) : 16;
		while (bits && lo + (1u << bits) - 1 > hi)
			bits--;
		val[n] = lo;
		mask[n] = (__u16)(0xffffu << bits);
		n++;
		lo += 1u << bits;
	}
	return n;
}

/*
 * The flow entries of @r: its key and mask, or for port ranges one per
 * combination of the prefixes covering them. Returns how many, or -E2BIG
 * beyond XDP_FLOW_MAX_RULE_ENTRIES.
 */
static int rule_expand(const struct xdp_flow_rule *r, struct texp *out)
{
	__u16 sv[RANGE_MAX_PREFIXES] = {}, sm[RANGE_MAX_PREFIXES] = {};
	__u16 dv[RANGE_MAX_PREFIXES] = {}, dm[RANGE_MAX_PREFIXES] = {};
	unsigned int ns = 1, nd = 1, i, j, n = 0;

	if (r->l4_src_range.max)
		ns = range_cover(&r->l4_src_range, sv, sm);
	if (r->l4_dst_range.max)
		nd = range_cover(&r->l4_dst_range, dv, dm);
	if (ns * nd > XDP_FLOW_MAX_RULE_ENTRIES)
		return -E2BIG;
	for (i = 0; i < ns; i++) {
		for (j = 0; j < nd; j++, n++) {
			out[n].key = r->key;
			out[n].mask = r->mask;
			if (r->l4_src_range.max) {
				out[n].key.l4_src = htons(sv[i]);
				out[n].mask.l4_src = htons(sm[i]);
			}
			if (r->l4_dst_range.max) {
				out[n].key.l4_dst = htons(dv[j]);
				out[n].mask.l4_dst = htons(dm[j]);
			}
		}
	}
	return n;
}

/* --- in-memory lookups --- */

static __u32 flow_hash(__u32 mask_id, const struct xdp_flow_key *key)
{
	const __u8 *p = (const __u8 *)key;
	__u32 h = 2166136261u ^ mask_id;	/* FNV-1a */
	size_t i;

	for (i = 0; i < sizeof(*key); i++)
		h = (h ^ p[i]) * 16777619u;
	return h & (FLOW_BUCKETS - 1);
}

static bool same_flow(const struct tentry *e, const struct tmask *mask,
		      const struct xdp_flow_key *key)
{
	return e->mask == mask && !memcmp(&e->key, key, sizeof(*key));
}

static bool rule_better(const struct trule *a, const struct trule *b)
{
	if (a->rule.order != b->rule.order)
		return a->rule.order < b->rule.order;
	return a->rule.id < b->rule.id;
}

/* The entry of the best rule of the flow (@mask, @key), leaving out @skip. */
static struct tentry *flow_best(struct table *t, struct tmask *mask,
				const struct xdp_flow_key *key,
				const struct trule *skip)
{
	struct tentry *e, *best = NULL;

	for (e = t->buckets[flow_hash(mask->id, key)]; e; e = e->hnext)
		if (e->rule != skip && same_flow(e, mask, key) &&
		    (!best || rule_better(e->rule, best->rule)))
			best = e;
	return best;
}

static void flow_link(struct table *t, struct tentry *e)
{
	struct tentry **head = &t->buckets[flow_hash(e->mask->id, &e->key)];

	e->hnext = *head;
	*head = e;
}

static void flow_unlink(struct table *t, struct tentry *e)
{
	struct tentry **p = &t->buckets[flow_hash(e->mask->id, &e->key)];

	for (; *p; p = &(*p)->hnext) {
		if (*p == e) {
			*p = e->hnext;
			return;
		}
	}
}

static struct tmask *mask_find(struct table *t, const struct xdp_flow_key *m)
{
	unsigned int i;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		if (t->masks[i].used &&
		    !memcmp(&t->masks[i].mask, m, sizeof(*m)))
			return &t->masks[i];
	return NULL;
}

static struct tmask *mask_find_id(struct table *t, __u32 id)
{
	unsigned int i;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		if (t->masks[i].used && t->masks[i].id == id)
			return &t->masks[i];
	return NULL;
}

/* A free slot; its id is assigned by the caller. */
static struct tmask *mask_alloc(struct table *t, const struct xdp_flow_key *m)
{
	unsigned int i;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++) {
		struct tmask *tm = &t->masks[i];

		if (!tm->used) {
			memset(tm, 0, sizeof(*tm));
			tm->used = true;
			tm->mask = *m;
			return tm;
		}
	}
	return NULL;
}

/* Frees the masks no flow entry uses, which no published list names. */
static void mask_gc(struct table *t)
{
	unsigned int i;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++) {
		struct tmask *tm = &t->masks[i];

		if (!tm->used || tm->nr_entries || tm->listed)
			continue;
		tm->used = false;
		if (tm->has_reg)
			ftab_region_free(t->ft, &tm->reg);
		if (tm->has_old)
			ftab_region_free(t->ft, &tm->old);
		tm->has_reg = false;
		tm->has_old = false;
	}
}

/* Gives @tm buckets of its own if it has none. */
static int mask_region(struct table *t, struct tmask *tm)
{
	if (tm->has_reg)
		return 0;
	if (ftab_region_alloc(t->ft, 1, &tm->reg))
		return -ENOSPC;
	tm->has_reg = true;
	return 0;
}

/*
 * Doubles @tm's buckets when a new key would put more than 2 in a bucket
 * on average. Readers keep the old ones until the next list is published
 * (the caller publishes one); if they cannot be had, the mask goes on
 * fuller.
 */
static bool mask_grow(struct table *t, struct tmask *tm)
{
	struct ftab_region to;

	if (tm->nr_flows + 1 <= 2u << tm->reg.order ||
	    ftab_grow(t->ft, &tm->reg, tm->id, &to))
		return false;
	if (tm->has_old || !tm->listed)
		ftab_region_free(t->ft, &tm->reg);	/* never published */
	else
		tm->old = tm->reg;
	tm->has_old = tm->listed;
	tm->reg = to;
	/* Until a list names the new buckets, keys added to them are not
	 * found: whatever happens next, the next change publishes one.
	 */
	t->grown = true;
	return true;
}

/* How many masks are in use once @old (may be NULL) is replaced by a rule
 * with the @n flow entries @exp.
 */
static unsigned int masks_after(struct table *t, const struct trule *old,
				const struct texp *exp, unsigned int n)
{
	unsigned int left[XDP_FLOW_MAX_MASKS], i, j, count = 0;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		left[i] = t->masks[i].used ? t->masks[i].nr_entries : 0;
	for (i = 0; old && i < old->nr_entries; i++)
		left[old->entries[i].mask - t->masks]--;
	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		count += left[i] > 0;
	for (i = 0; i < n; i++) {
		struct tmask *tm = mask_find(t, &exp[i].mask);

		if (tm) {
			if (!left[tm - t->masks]) {
				left[tm - t->masks] = 1;
				count++;
			}
			continue;
		}
		for (j = 0; j < i; j++)
			if (!memcmp(&exp[j].mask, &exp[i].mask, sizeof(exp[i].mask)))
				break;
		count += j == i;
	}
	return count;
}

/* Whether the shields' mask (the ifindex alone) is in use: it is kept free
 * for them, and only they use it.
 */
static unsigned int shield_mask_used(struct table *t)
{
	struct tmask *tm = mask_find(t, &shield_mask);

	return tm && tm->nr_entries;
}

/* How many of the @n flow entries @exp are not in the flow map yet. */
static unsigned int flows_new(struct table *t, const struct texp *exp,
			      unsigned int n)
{
	unsigned int i, j, count = 0;

	for (i = 0; i < n; i++) {
		struct tmask *tm = mask_find(t, &exp[i].mask);

		if (tm && flow_best(t, tm, &exp[i].key, NULL))
			continue;
		for (j = 0; j < i; j++)
			if (!memcmp(&exp[j], &exp[i], sizeof(exp[i])))
				break;
		count += j == i;
	}
	return count;
}

unsigned int table_mask_count(const struct table *t)
{
	unsigned int i, n = 0;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		n += t->masks[i].used;
	return n;
}

unsigned int table_rule_count(const struct table *t)
{
	return t->nr_rules;
}

/* --- counters, in chunks made for the rule ids in use --- */

/* Makes a chunk's map: a fresh one counts zero. */
static int chunk_create(void)
{
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "xf_counters_c",
			    sizeof(__u32), sizeof(struct xdp_flow_counter),
			    XDP_FLOW_COUNTER_CHUNK, NULL);
	return fd < 0 ? -errno : fd;
}

/* Chunks made at once: at least this many, or twice those in use. */
#define CHUNKS_AT_ONCE	4

/*
 * The map of chunk @c. A missing one is made with the missing chunks above
 * it (the module keeps rule ids low, so those are the next to be used), up
 * to twice as many as rules use, CHUNKS_AT_ONCE at least, in one update of
 * xf_counters: every map-in-map update waits for an RCU grace period, so
 * chunks come in growing steps rather than one at a time (10,000 rules
 * wait for 2).
 */
static int chunk_get(struct table *t, unsigned int c)
{
	unsigned int want = 2 * t->chunks_used, n = 0, i;
	__u32 keys[XDP_FLOW_MAX_RULES / XDP_FLOW_COUNTER_CHUNK];
	int fds[XDP_FLOW_MAX_RULES / XDP_FLOW_COUNTER_CHUNK];
	__u32 count;
	int fd, err = 0;

	if (t->chunk_fd[c] >= 0)
		return t->chunk_fd[c];
	if (want < CHUNKS_AT_ONCE)
		want = CHUNKS_AT_ONCE;
	for (i = c; i < t->nr_chunks && n < want; i++) {
		if (t->chunk_fd[i] >= 0)
			continue;
		fd = chunk_create();
		if (fd < 0) {
			if (!n)
				return fd;
			break;
		}
		keys[n] = i;
		fds[n++] = fd;
	}
	count = n;
	if (bpf_map_update_batch(t->counters_fd, keys, fds, &count, NULL)) {
		err = -errno;
		/* None put in (no batches here?): the one needed now. */
		if (!count && !bpf_map_update_elem(t->counters_fd, &keys[0],
						   &fds[0], BPF_ANY))
			count = 1;
	}
	for (i = 0; i < n; i++) {
		if (i >= count) {
			close(fds[i]);
			continue;
		}
		t->chunk_fd[keys[i]] = fds[i];
		/* No rule in it yet: chunks_gc() may take it back. */
		t->chunk_empty[keys[i]] = t->barrier_seq;
		memset(&t->counters_dirty[keys[i] * XDP_FLOW_COUNTER_CHUNK], 0,
		       XDP_FLOW_COUNTER_CHUNK * sizeof(*t->counters_dirty));
		t->chunks_made++;
	}
	return count ? fds[0] : err;
}

/* More chunks than twice those the rules use, plus one. */
static bool chunks_surplus(const struct table *t)
{
	return t->chunks_made > 2 * t->chunks_used + 1;
}

/*
 * Frees chunks no rule has had an id in since before the last barrier (no
 * XDP reader can still count into them) while there is a surplus. Each
 * free waits for a grace period: table_idle() calls this, not rule changes.
 */
static void chunks_gc(struct table *t)
{
	unsigned int c;
	__u32 key;

	for (c = t->nr_chunks; c-- > 0 && chunks_surplus(t);) {
		if (t->chunk_fd[c] < 0 || t->chunk_rules[c] ||
		    t->chunk_empty[c] == t->barrier_seq)
			continue;
		key = c;
		if (bpf_map_delete_elem(t->counters_fd, &key) &&
		    errno != ENOENT)
			continue;
		close(t->chunk_fd[c]);
		t->chunk_fd[c] = -1;
		t->chunk_empty[c] = 0;
		t->chunks_made--;
	}
}

/* Rule @id takes (@in) or leaves its chunk. */
static void chunk_account(struct table *t, __u32 id, bool in)
{
	unsigned int c = id / XDP_FLOW_COUNTER_CHUNK;

	if (in) {
		t->chunks_used += !t->chunk_rules[c]++;
		t->chunk_empty[c] = 0;
	} else if (!--t->chunk_rules[c]) {
		t->chunks_used--;
		t->chunk_empty[c] = t->barrier_seq;
	}
}

/* Zeroes rule @id's counters, unless they are zero already. */
static int counters_zero(struct table *t, __u32 id)
{
	__u32 idx = id % XDP_FLOW_COUNTER_CHUNK;
	int fd = chunk_get(t, id / XDP_FLOW_COUNTER_CHUNK);

	if (fd < 0)
		return fd;
	if (t->counters_dirty[id] &&
	    bpf_map_update_elem(fd, &idx, t->zero_counters, BPF_ANY))
		return -errno;
	t->counters_dirty[id] = true;	/* the rule will count */
	return 0;
}

/*
 * Zeroes the counters of every id no rule has, so that adding a rule need
 * not: a previous helper may have left counts behind. Called after a list
 * swap, so no XDP reader still holds an id of a rule gone before it.
 */
static void counters_zero_free(struct table *t)
{
	__u32 keys[XDP_FLOW_COUNTER_CHUNK], id, count;
	unsigned int c, n, i;
	void *vals;

	vals = calloc(XDP_FLOW_COUNTER_CHUNK * t->ncpus,
		      sizeof(*t->zero_counters));
	if (!vals)
		return;
	for (c = 0; c < t->nr_chunks; c++) {
		/* No chunk: a new one counts zero (chunk_get()). */
		if (t->chunk_fd[c] < 0)
			continue;
		for (n = 0, i = 0; i < XDP_FLOW_COUNTER_CHUNK; i++) {
			id = c * XDP_FLOW_COUNTER_CHUNK + i;
			if (id < t->max_rules && !t->rules[id])
				keys[n++] = i;
		}
		count = n;
		if (count && bpf_map_update_batch(t->chunk_fd[c], keys, vals,
						  &count, NULL)) {
			pr_info("cannot zero free counters: %s; zeroing one rule at a time",
				strerror(errno));
			break;
		}
		for (i = 0; i < n; i++)
			t->counters_dirty[c * XDP_FLOW_COUNTER_CHUNK + keys[i]] = false;
	}
	free(vals);
}

/*
 * Takes the chunks a previous helper left in xf_counters; table_idle()
 * frees those the rules do not need.
 */
static void chunks_recover(struct table *t)
{
	__u32 key, map_id, id;
	unsigned int c;

	for (c = 0; c < t->nr_chunks; c++) {
		key = c;
		if (bpf_map_lookup_elem(t->counters_fd, &key, &map_id))
			continue;
		t->chunk_fd[c] = bpf_map_get_fd_by_id(map_id);
		if (t->chunk_fd[c] < 0) {
			pr_info("cannot open the counters of rule ids %u-%u: %s",
				c * XDP_FLOW_COUNTER_CHUNK,
				(c + 1) * XDP_FLOW_COUNTER_CHUNK - 1,
				strerror(errno));
			t->chunk_fd[c] = -1;
			continue;
		}
		t->chunk_empty[c] = t->barrier_seq;
		t->chunks_made++;
	}
	for (id = 0; id < t->max_rules; id++)
		if (t->rules[id])
			chunk_account(t, id, true);
}

/* --- flowtable connections (xf_ft_conns) ---
 *
 * Both directions of a flowtable's flow carry its key (@ft_conn). The
 * datapath marks the key's entry in xf_ft_conns when a TCP FIN or RST of
 * the flow goes to the stack, and sends every frame of it there from then
 * on, as the flowtable does with a flow it tears down. The entry lives
 * while a rule has the key: here the rules of each key are counted (a
 * flow has two at most), in a table with linear probing.
 */

static size_t conn_hash(__u64 k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	return k ^ (k >> 33);
}

/* @key's slot, or the free slot where it would go. */
static struct tconn *conn_find(const struct table *t, __u64 key)
{
	size_t mask = t->conn_cap - 1, i = conn_hash(key) & mask;

	while (t->conns[i].key && t->conns[i].key != key)
		i = (i + 1) & mask;
	return &t->conns[i];
}

static int conn_grow(struct table *t)
{
	size_t cap = t->conn_cap ? t->conn_cap * 2 : 256, i;
	struct tconn *old = t->conns, *n = calloc(cap, sizeof(*n));
	size_t old_cap = t->conn_cap;

	if (!n)
		return -ENOMEM;
	t->conns = n;
	t->conn_cap = cap;
	for (i = 0; i < old_cap; i++)
		if (old[i].key)
			*conn_find(t, old[i].key) = old[i];
	free(old);
	return 0;
}

/*
 * One more rule of connection @key; the first makes its entry, which a
 * previous helper may have left (with the mark it has: kept).
 */
static int conn_ref(struct table *t, __u64 key)
{
	struct tconn *c;
	__u32 zero = 0;

	if ((t->nr_conns + 1) * 2 > t->conn_cap && conn_grow(t))
		return -ENOMEM;
	c = conn_find(t, key);
	if (!c->key) {
		if (bpf_map_update_elem(t->conns_fd, &key, &zero, BPF_NOEXIST) &&
		    errno != EEXIST)
			return errno == E2BIG ? -ENOSPC : -errno;
		c->key = key;
		c->refs = 0;
		t->nr_conns++;
	}
	c->refs++;
	return 0;
}

/* One rule of connection @key fewer; the last takes its entry out. */
static void conn_unref(struct table *t, __u64 key)
{
	size_t mask, i, j, h;
	struct tconn *c;

	if (!t->conn_cap)
		return;
	c = conn_find(t, key);
	if (!c->key || --c->refs)
		return;
	bpf_map_delete_elem(t->conns_fd, &key);
	t->nr_conns--;
	/* Backward shift: no later key of the run is left behind a hole. */
	mask = t->conn_cap - 1;
	i = c - t->conns;
	for (j = (i + 1) & mask; t->conns[j].key; j = (j + 1) & mask) {
		h = conn_hash(t->conns[j].key) & mask;
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			t->conns[i] = t->conns[j];
			i = j;
		}
	}
	t->conns[i].key = 0;
	t->conns[i].refs = 0;
}

/* After a restart: the entries no adopted rule has go. */
static void conn_prune(struct table *t)
{
	__u64 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(t->conns_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!t->conn_cap || !conn_find(t, key)->key) {
			bpf_map_delete_elem(t->conns_fd, &key);
			prev = NULL;	/* the walk restarts after a delete */
		}
	}
}

/* --- the XDP maps --- */

static void rule_to_dp(const struct xdp_flow_rule *r, struct xdp_flow_dp_rule *dp)
{
	memset(dp, 0, sizeof(*dp));
	dp->order = r->order;
	dp->flags = r->flags | XDP_FLOW_DP_F_VALID;
	dp->nr_actions = r->nr_actions;
	dp->ft_conn = r->ft_conn;
	memcpy(dp->actions, r->actions, sizeof(dp->actions));
}

static int barrier(struct table *t);

/* Points the XDP flow entry of @e's mask and key at @e's rule. */
static int flow_write(struct table *t, const struct tentry *e)
{
	int err = ftab_set(t->ft, &e->mask->reg, e->mask->id, &e->key,
			   e->rule->rule.id, t->barrier_seq);

	/* Every free slot may still be in a reader's hands. */
	if (err == -EAGAIN) {
		err = barrier(t);
		if (!err)
			err = ftab_set(t->ft, &e->mask->reg, e->mask->id,
				       &e->key, e->rule->rule.id,
				       t->barrier_seq);
	}
	if (err == -ENOSPC)
		pr_info("flow table: no room for a key of mask %u (both of its buckets full)",
			e->mask->id);
	return err;
}

static int flow_erase(struct table *t, const struct tentry *e)
{
	ftab_del(t->ft, &e->mask->reg, e->mask->id, &e->key, t->barrier_seq);
	return 0;
}

/* Whether @m keeps a word of XDP_FLOW_WIDE_WORDS. */
static __u32 mask_wide(const struct xdp_flow_key *m)
{
	const xdp_flow_word *mw = (const xdp_flow_word *)m;
	__u32 j;

	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		if (mw[j] && (XDP_FLOW_WIDE_WORDS & (1u << j)))
			return 1;
	return 0;
}

static int mask_cmp(const void *a, const void *b)
{
	const struct xdp_flow_dp_mask *x = a, *y = b;

	if (x->min_order != y->min_order)
		return x->min_order < y->min_order ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Publishes the masks that hold rules, sorted by their lowest order, as a
 * new inner map swapped into xf_masks. Readers see the old list or the new
 * one, and when this returns none sees the old one any more.
 */
static int list_publish(struct table *t)
{
	struct xdp_flow_mask_list *list;
	__u64 min[XDP_FLOW_MAX_MASKS];
	unsigned int i, n = 0;
	__u32 zero = 0;
	int fd, err = 0;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		min[i] = ~0ULL;
	for (i = 0; i < t->max_rules; i++) {
		struct trule *r = t->rules[i];
		unsigned int j, m;

		for (j = 0; r && j < r->nr_entries; j++) {
			m = r->entries[j].mask - t->masks;
			if (r->rule.order < min[m])
				min[m] = r->rule.order;
		}
	}

	list = calloc(1, sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++) {
		struct tmask *tm = &t->masks[i];

		if (!tm->used || !tm->nr_entries)
			continue;
		list->masks[n].id = tm->id;
		list->masks[n].slot = i;
		list->masks[n].min_order = min[i];
		list->masks[n].mask = tm->mask;
		list->masks[n].wide = mask_wide(&tm->mask);
		list->masks[n].fb_base = tm->reg.base;
		list->masks[n].fb_mask = (1u << tm->reg.order) - 1;
		n++;
	}
	list->count = n;
	qsort(list->masks, n, sizeof(list->masks[0]), mask_cmp);
	/*
	 * Exact again: raised where the rules that held a mask low are gone,
	 * which readers of the old list may see too (those rules are on
	 * their way out), and set for the masks the new list brings.
	 */
	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		__atomic_store_n(&t->mask_min[i], min[i], __ATOMIC_RELEASE);

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xf_mask_list", sizeof(__u32),
			    sizeof(*list), 1, NULL);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (bpf_map_update_elem(fd, &zero, list, BPF_ANY) ||
	    bpf_map_update_elem(t->masks_fd, &zero, &fd, BPF_ANY)) {
		err = -errno;
		close(fd);
		goto out;
	}
	if (t->list_fd >= 0)
		close(t->list_fd);
	t->list_fd = fd;
	t->barrier_seq++;
	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++) {
		struct tmask *tm = &t->masks[i];

		tm->listed = tm->used && tm->nr_entries;
		/* The swap waited for the readers of the old list. */
		if (tm->has_old)
			ftab_region_free(t->ft, &tm->old);
		tm->has_old = false;
	}
	t->grown = false;
out:
	free(list);
	if (err)
		pr_err("cannot publish the mask list: %s", strerror(-err));
	return err;
}

/* Waits for XDP readers that may still hold a stale rule id. */
static int barrier(struct table *t)
{
	__u32 zero = 0;

	if (t->list_fd < 0)
		return list_publish(t);
	if (bpf_map_update_elem(t->masks_fd, &zero, &t->list_fd, BPF_ANY))
		return -errno;
	t->barrier_seq++;
	return 0;
}

/*
 * Makes every answer the XDP program's exact-match cache holds stale: called
 * after each change that may change a lookup, and before a rule id that a
 * cached answer may name is used again (that waits for a barrier, which
 * comes after this).
 */
static int gen_bump(struct table *t)
{
	/*
	 * xf_gen is mapped: one aligned 64-bit store, no system call. The map
	 * updates this orders after were system calls, and whatever must
	 * follow it (a barrier before an id is reused) is one too.
	 */
	t->gen++;
	__atomic_store_n(t->gen_map, t->gen, __ATOMIC_RELEASE);
	return 0;
}

/* --- add and delete --- */

static bool rule_same(const struct xdp_flow_rule *a,
		      const struct xdp_flow_rule *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static int rule_unlink(struct table *t, struct trule *r)
{
	struct xdp_flow_dp_rule dp = {};
	__u32 id = r->rule.id;
	bool publish = false;
	unsigned int i;
	int err = 0;

	t->rules[id] = NULL;
	t->nr_rules--;
	for (i = 0; i < r->nr_entries; i++) {
		struct tmask *tm = r->entries[i].mask;

		tm->nr_entries--;
		publish |= !tm->nr_entries && tm->listed;
	}
	/* Also when an add that grew a mask's buckets failed: its list. */
	if (publish || t->grown)
		err = list_publish(t);

	for (i = 0; i < r->nr_entries; i++) {
		struct tentry *e = &r->entries[i], *next;
		bool was_best = flow_best(t, e->mask, &e->key, NULL) == e;

		next = flow_best(t, e->mask, &e->key, r);
		flow_unlink(t, e);
		if (was_best && !next) {
			t->nr_flows--;
			e->mask->nr_flows--;
		}
		if (was_best && !err)
			err = next ? flow_write(t, next) : flow_erase(t, e);
	}

	if (!err && bpf_map_update_elem(t->rules_fd, &id, &dp, BPF_ANY))
		err = -errno;
	if (!err && bpf_map_delete_elem(t->defs_fd, &id) && errno != ENOENT)
		err = -errno;
	if (!err)
		err = gen_bump(t);
	t->del_barrier[id] = t->barrier_seq;
	chunk_account(t, id, false);
	mask_gc(t);
	if (r->rule.ft_conn)
		conn_unref(t, r->rule.ft_conn);
	free(r);
	return err;
}

int table_rule_del(struct table *t, __u32 id, char *msg, size_t len)
{
	int err;

	if (id >= t->max_rules || !t->rules[id]) {
		snprintf(msg, len, "no rule %u", id);
		return -ENOENT;
	}
	err = rule_unlink(t, t->rules[id]);
	if (err)
		snprintf(msg, len, "deleting rule %u: %s", id, strerror(-err));
	return err;
}

/* Undoes the rule definition and rule entry of a failed rule_link(). */
static void rule_link_undo(struct table *t, __u32 id)
{
	struct xdp_flow_dp_rule dp = {};

	bpf_map_update_elem(t->rules_fd, &id, &dp, BPF_ANY);
	bpf_map_delete_elem(t->defs_fd, &id);
}

/*
 * Links @r, whose @n entries have their mask and key, into the tables and
 * the maps. On failure nothing of it is left, @r is freed, and masks that
 * were allocated for it are free again.
 */
static int rule_link(struct table *t, struct trule *r, unsigned int n)
{
	struct xdp_flow_dp_rule dp;
	__u32 id = r->rule.id;
	bool publish = false;
	unsigned int i;
	int err;

	rule_to_dp(&r->rule, &dp);
	/* the connection's entry before a frame can meet the rule */
	if (r->rule.ft_conn) {
		err = conn_ref(t, r->rule.ft_conn);
		if (err)
			goto fail_free;
	}

	/* A reader may still hold this id from a rule just deleted. */
	if (t->del_barrier[id] == t->barrier_seq) {
		err = barrier(t);
		if (err)
			goto fail;
	}
	if (bpf_map_update_elem(t->defs_fd, &id, &r->rule, BPF_ANY) ||
	    bpf_map_update_elem(t->rules_fd, &id, &dp, BPF_ANY)) {
		err = errno == E2BIG ? -ENOSPC : -errno;
		goto fail_undo;
	}
	err = counters_zero(t, id);
	if (err)
		goto fail_undo;

	t->rules[id] = r;
	t->nr_rules++;
	chunk_account(t, id, true);
	for (i = 0; i < n; i++) {
		struct tentry *e = &r->entries[i];
		struct tentry *prev = flow_best(t, e->mask, &e->key, NULL);
		unsigned int slot = e->mask - t->masks;

		/*
		 * A listed mask gets its new lowest order in place, before its
		 * flow entry: readers may search it needlessly, never skip it
		 * wrongly. Only a new mask swaps the list.
		 */
		if (!e->mask->listed)
			publish = true;
		else if (r->rule.order < t->mask_min[slot])
			__atomic_store_n(&t->mask_min[slot], r->rule.order,
					 __ATOMIC_RELEASE);
		if (!prev && mask_grow(t, e->mask))
			publish = true;
		if (!prev || rule_better(r, prev->rule)) {
			err = flow_write(t, e);
			if (err)
				break;
		}
		t->nr_flows += !prev;
		e->mask->nr_flows += !prev;
		flow_link(t, e);
		e->mask->nr_entries++;
		r->nr_entries++;
	}
	if (!err && (publish || t->grown))
		err = list_publish(t);
	if (!err)
		err = gen_bump(t);
	if (err) {
		/* Nothing half-done stays: take it out again. */
		rule_unlink(t, r);
		return err;
	}
	return 0;

fail_undo:
	rule_link_undo(t, id);
fail:
	if (r->rule.ft_conn)
		conn_unref(t, r->rule.ft_conn);
fail_free:
	free(r);
	mask_gc(t);
	return err;
}

/*
 * Adds @rule, or replaces the rule with its id. An identical rule (a replay
 * after a restart) changes nothing and keeps its counters.
 */
int table_rule_add(struct table *t, const struct xdp_flow_rule *rule,
		   char *msg, size_t len)
{
	struct trule *old, *r;
	struct texp *exp;
	bool held = false;
	unsigned int i;
	int n, err;

	err = rule_check(t, rule, msg, len);
	if (err)
		return err;
	old = t->rules[rule->id];
	if (old && rule_same(&old->rule, rule)) {
		old->epoch = t->epoch;
		return 0;
	}

	exp = t->exp;
	n = rule_expand(rule, exp);
	if (n < 0) {
		snprintf(msg, len, "port ranges %u-%u/%u-%u need more than %u masked entries",
			 rule->l4_src_range.min, rule->l4_src_range.max,
			 rule->l4_dst_range.min, rule->l4_dst_range.max,
			 XDP_FLOW_MAX_RULE_ENTRIES);
		return n;
	}
	/* Refuse before touching anything: a failed add loses nothing. */
	if (!(rule->flags & XDP_FLOW_RULE_F_SHIELD)) {
		if (masks_after(t, old, exp, n) - shield_mask_used(t) >
		    t->max_masks) {
			snprintf(msg, len, "mask table full (%u masks)",
				 t->max_masks);
			return -ENOSPC;
		}
		if (t->nr_flows + flows_new(t, exp, n) > t->max_flows) {
			snprintf(msg, len, "flow table full (%u entries)",
				 t->max_flows);
			return -ENOSPC;
		}
	}
	r = calloc(1, sizeof(*r) + n * sizeof(r->entries[0]));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	if (old) {
		/*
		 * A flowtable connection's entry, and the mark a FIN left
		 * in it, outlive the replacement of its only rule: the new
		 * rule's reference is taken before the old one's goes.
		 */
		if (rule->ft_conn) {
			err = conn_ref(t, rule->ft_conn);
			if (err) {
				free(r);
				goto out;
			}
			held = true;
		}
		err = rule_unlink(t, old);
		if (err) {
			free(r);
			goto out_held;
		}
	}
	r->rule = *rule;
	r->epoch = t->epoch;
	for (i = 0; i < (unsigned int)n; i++) {
		struct tmask *tm = mask_find(t, &exp[i].mask);

		if (!tm) {
			/* There is room: masks_after() said so. */
			tm = mask_alloc(t, &exp[i].mask);
			tm->id = t->next_mask_id++;
		}
		if (mask_region(t, tm)) {
			free(r);
			mask_gc(t);
			if (held)
				conn_unref(t, rule->ft_conn);
			snprintf(msg, len, "flow table full (no buckets for a new mask)");
			return -ENOSPC;
		}
		r->entries[i].rule = r;
		r->entries[i].mask = tm;
		r->entries[i].key = exp[i].key;
	}
	err = rule_link(t, r, n);
out_held:
	if (held)
		conn_unref(t, rule->ft_conn);
out:
	if (err)
		snprintf(msg, len, "adding rule %u: %s", rule->id,
			 strerror(-err));
	return err;
}

/**
 * table_idle_due() - whether table_idle() has work
 * @t: the tables
 *
 * Return: true while there are more counter chunks than the rules need.
 */
bool table_idle_due(const struct table *t)
{
	return chunks_surplus(t);
}

/**
 * table_idle() - work left for a quiet moment
 * @t: the tables
 *
 * Frees the counter chunks the rules no longer need, after a barrier. Each
 * map-in-map update waits for an RCU grace period, which rule changes
 * should not wait for: call this when none came for a while.
 */
void table_idle(struct table *t)
{
	if (!chunks_surplus(t) || barrier(t))
		return;
	chunks_gc(t);
}

/* What rules may still take; as table_rule_add() counts it, less nothing. */
void table_room(struct table *t, struct xdp_flow_room *room)
{
	unsigned int masks = masks_after(t, NULL, NULL, 0) -
			     shield_mask_used(t);

	room->masks = masks < t->max_masks ? t->max_masks - masks : 0;
	room->flows = t->nr_flows < t->max_flows ?
		      t->max_flows - t->nr_flows : 0;
}

/* --- stats --- */

int table_stats(struct table *t, __u32 id, struct xdp_flow_stats *st,
		char *msg, size_t len)
{
	__u32 idx = id % XDP_FLOW_COUNTER_CHUNK;
	struct xdp_flow_counter *c = t->percpu_buf;
	int i, fd;

	memset(st, 0, sizeof(*st));
	st->id = id;
	if (id >= t->max_rules || !t->rules[id]) {
		snprintf(msg, len, "no rule %u", id);
		return -ENOENT;
	}
	fd = t->chunk_fd[id / XDP_FLOW_COUNTER_CHUNK];
	if (fd < 0) {
		snprintf(msg, len, "rule %u has no counters", id);
		return -ENOENT;
	}
	if (bpf_map_lookup_elem(fd, &idx, c)) {
		snprintf(msg, len, "reading counters of rule %u: %s", id,
			 strerror(errno));
		return -errno;
	}
	for (i = 0; i < t->ncpus; i++) {
		st->packets += c[i].packets;
		st->bytes += c[i].bytes;
		/* The later, not the larger: jiffies_64 wraps 5 minutes
		 * after boot.
		 */
		if (c[i].lastused && (!st->lastused_jiffies ||
				      (__s64)(c[i].lastused -
					      st->lastused_jiffies) > 0))
			st->lastused_jiffies = c[i].lastused;
	}
	return 0;
}

int table_stats_all(struct table *t, struct xdp_flow_stats **st, size_t *nr)
{
	char msg[UMH_MSG_LEN];
	size_t n = 0;
	__u32 id;
	int err;

	*st = calloc(t->nr_rules ? t->nr_rules : 1, sizeof(**st));
	if (!*st)
		return -ENOMEM;
	for (id = 0; id < t->max_rules && n < t->nr_rules; id++) {
		if (!t->rules[id])
			continue;
		err = table_stats(t, id, &(*st)[n], msg, sizeof(msg));
		if (err) {
			free(*st);
			*st = NULL;
			return err;
		}
		n++;
	}
	*nr = n;
	return 0;
}

/* --- replay and sync --- */

/* Rules added from now on belong to the replay; the others are stale. */
void table_begin_replay(struct table *t)
{
	t->epoch++;
}

int table_sync(struct table *t, char *msg, size_t len)
{
	unsigned int removed = 0;
	int err, ret = 0;
	__u32 id;

	for (id = 0; id < t->max_rules; id++) {
		struct trule *r = t->rules[id];

		if (!r || r->epoch == t->epoch)
			continue;
		tick(t);
		err = rule_unlink(t, r);
		if (err && !ret) {
			snprintf(msg, len, "removing stale rule %u: %s", id,
				 strerror(-err));
			ret = err;
		}
		removed++;
	}
	if (removed)
		pr_info("sync: removed %u stale rules, %u remain", removed,
			t->nr_rules);
	return ret;
}

/* --- restart --- */

/* Takes over the mask ids of the published list, so that flow entries
 * written by the previous helper stay valid.
 */
static int recover_list(struct table *t)
{
	struct xdp_flow_mask_list *list;
	__u32 zero = 0, inner_id;
	unsigned int i;
	int fd;

	if (bpf_map_lookup_elem(t->masks_fd, &zero, &inner_id))
		return 0;	/* nothing published yet */
	fd = bpf_map_get_fd_by_id(inner_id);
	if (fd < 0)
		return -errno;
	list = calloc(1, sizeof(*list));
	if (!list) {
		close(fd);
		return -ENOMEM;
	}
	if (bpf_map_lookup_elem(fd, &zero, list)) {
		free(list);
		close(fd);
		return -errno;
	}
	t->list_fd = fd;
	for (i = 0; i < list->count && i < XDP_FLOW_MAX_MASKS; i++) {
		struct tmask *tm = mask_find(t, &list->masks[i].mask);

		if (tm) {
			tm->id = list->masks[i].id;
			tm->listed = true;
			tm->reg.base = list->masks[i].fb_base;
			tm->reg.order = __builtin_popcount(list->masks[i].fb_mask);
			tm->has_reg = list->masks[i].fb_mask + 1 ==
				      1u << tm->reg.order &&
				      !ftab_region_claim(t->ft, &tm->reg);
			if (tm->has_reg)
				ftab_repair(t->ft, &tm->reg, tm->id);
		}
		if (list->masks[i].id >= t->next_mask_id)
			t->next_mask_id = list->masks[i].id + 1;
	}
	free(list);
	return 0;
}

/* Adopts each rule whose definition and live rule entry agree. */
static int recover_rules(struct table *t)
{
	struct xdp_flow_dp_rule dp, want;
	struct xdp_flow_rule def;
	__u32 id, next, *prev = NULL;
	char msg[UMH_MSG_LEN];
	struct texp *exp;
	struct trule *r;
	int i, n;

	exp = calloc(XDP_FLOW_MAX_RULE_ENTRIES, sizeof(*exp));
	if (!exp)
		return -ENOMEM;
	while (!bpf_map_get_next_key(t->defs_fd, prev, &next)) {
		id = next;
		prev = &id;
		tick(t);
		if (bpf_map_lookup_elem(t->defs_fd, &id, &def) ||
		    bpf_map_lookup_elem(t->rules_fd, &id, &dp))
			continue;
		rule_to_dp(&def, &want);
		if (def.id != id || rule_check(t, &def, msg, sizeof(msg)) ||
		    memcmp(&dp, &want, sizeof(dp)) || t->rules[id]) {
			/* Left over by an add or delete cut short. */
			continue;
		}
		n = rule_expand(&def, exp);
		if (n < 0)
			continue;
		r = calloc(1, sizeof(*r) + n * sizeof(r->entries[0]));
		if (!r) {
			free(exp);
			return -ENOMEM;
		}
		for (i = 0; i < n; i++) {
			struct tmask *tm = mask_find(t, &exp[i].mask);

			if (!tm) {
				tm = mask_alloc(t, &exp[i].mask);
				if (!tm)
					break;
				tm->id = ~0u;	/* assigned in recover_ids() */
			}
			r->entries[i].rule = r;
			r->entries[i].mask = tm;
			r->entries[i].key = exp[i].key;
		}
		if (i < n) {
			free(r);
			mask_gc(t);
			continue;
		}
		for (i = 0; i < n; i++)
			r->entries[i].mask->nr_entries++;
		r->rule = def;
		r->nr_entries = n;
		r->epoch = 0;
		t->rules[id] = r;
		t->nr_rules++;
		if (def.ft_conn && conn_ref(t, def.ft_conn)) {
			free(exp);
			return -ENOMEM;
		}
	}
	free(exp);
	return 0;
}

static void recover_id(void *arg, const struct xdp_flow_ft_entry *e)
{
	struct table *t = arg;

	if (e->mask_id >= t->next_mask_id)
		t->next_mask_id = e->mask_id + 1;
}

static void recover_ids(struct table *t)
{
	unsigned int i;

	/* Mask ids are never reused: skip past every id still in a flow. */
	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		if (t->masks[i].has_reg)
			ftab_walk(t->ft, &t->masks[i].reg, recover_id, t);
	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		if (t->masks[i].used && t->masks[i].id == ~0u)
			t->masks[i].id = t->next_mask_id++;
}

/* The rule the flow entry (@mask_id, @key) should name, or -1. */
static int recover_keep(void *arg, __u32 mask_id,
			const struct xdp_flow_key *key)
{
	struct table *t = arg;
	struct tmask *tm = mask_find_id(t, mask_id);
	struct tentry *best = tm ? flow_best(t, tm, key, NULL) : NULL;

	return best ? (int)best->rule->rule.id : -1;
}

/* Deletes flow entries that no rule explains (and stale rule defs). */
static void recover_prune(struct table *t)
{
	__u32 id, next, *pid = NULL;
	unsigned int i;
	size_t n = 0;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		if (t->masks[i].has_reg)
			ftab_prune(t->ft, &t->masks[i].reg, recover_keep, t,
				   t->barrier_seq);

	while (!bpf_map_get_next_key(t->defs_fd, pid, &next)) {
		id = next;
		pid = &id;
		if (id >= t->max_rules || !t->rules[id]) {
			struct xdp_flow_dp_rule dp = {};

			bpf_map_update_elem(t->rules_fd, &id, &dp, BPF_ANY);
			bpf_map_delete_elem(t->defs_fd, &id);
			pid = NULL;	/* the walk restarts after a delete */
			n++;
		}
	}
	if (n)
		pr_info("recover: dropped %zu half-written rules", n);
}

/*
 * Rebuilds the tables from the pinned maps a previous helper left, and
 * makes flow entries and mask list agree with the rules again.
 */
int table_recover(struct table *t)
{
	unsigned int i, j;
	int err;

	err = recover_rules(t);
	if (!err)
		err = recover_list(t);
	if (err)
		return err;
	conn_prune(t);
	recover_ids(t);
	/* Masks the published list did not name get buckets now. */
	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++) {
		if (t->masks[i].used && mask_region(t, &t->masks[i])) {
			pr_err("flow table: no buckets for mask %u",
			       t->masks[i].id);
			return -ENOSPC;
		}
	}
	chunks_recover(t);
	for (i = 0; i < t->max_rules; i++) {
		struct trule *r = t->rules[i];

		for (j = 0; r && j < r->nr_entries; j++)
			flow_link(t, &r->entries[j]);
	}
	for (i = 0; i < t->max_rules; i++) {
		struct trule *r = t->rules[i];

		for (j = 0; r && j < r->nr_entries; j++) {
			struct tentry *e = &r->entries[j];

			if (flow_best(t, e->mask, &e->key, NULL) != e)
				continue;
			tick(t);
			mask_grow(t, e->mask);
			t->nr_flows++;
			e->mask->nr_flows++;
			err = flow_write(t, e);
			if (err)
				return err;
		}
	}
	err = list_publish(t);
	if (err)
		return err;
	recover_prune(t);
	counters_zero_free(t);
	err = gen_bump(t);
	if (err)
		return err;
	t->epoch = 1;
	if (t->nr_rules)
		pr_info("recovered %u rules in %u masks from pinned maps",
			t->nr_rules, table_mask_count(t));
	return 0;
}

/* --- life cycle --- */

/**
 * table_set_limits() - how many masks and flow entries rules may use
 * @t: the tables
 * @masks: 1 .. XDP_FLOW_MAX_MASKS - 1 (one more is kept for the shields)
 * @flows: 1 .. XDP_FLOW_MAX_FLOWS (the XDP table must have room for them
 *	and XDP_FLOW_MAX_SHIELDS more: see dp_open())
 *
 * Return: 0, or -EINVAL for a limit out of range.
 */
int table_set_limits(struct table *t, unsigned int masks, unsigned int flows)
{
	if (!masks || masks > XDP_FLOW_MAX_MASKS - 1 || !flows ||
	    flows > XDP_FLOW_MAX_FLOWS)
		return -EINVAL;
	t->max_masks = masks;
	t->max_flows = flows;
	return 0;
}

struct table *table_new(struct xdp_flow_bpf *skel)
{
	struct table *t = calloc(1, sizeof(*t));
	unsigned int i;

	if (!t)
		return NULL;
	t->list_fd = -1;
	t->max_masks = XDP_FLOW_MAX_MASKS - 1;
	t->max_flows = XDP_FLOW_DEFAULT_FLOWS;
	/* As dp_open() sized the maps. */
	t->max_rules = bpf_map__max_entries(skel->maps.xf_rules);
	t->ncpus = libbpf_num_possible_cpus();
	t->rules = calloc(t->max_rules, sizeof(*t->rules));
	t->del_barrier = calloc(t->max_rules, sizeof(*t->del_barrier));
	t->buckets = calloc(FLOW_BUCKETS, sizeof(*t->buckets));
	t->exp = calloc(XDP_FLOW_MAX_RULE_ENTRIES, sizeof(*t->exp));
	/* As many ids as the chunks cover, max_rules or a few more. */
	t->nr_chunks = bpf_map__max_entries(skel->maps.xf_counters);
	t->counters_dirty = malloc(t->nr_chunks * XDP_FLOW_COUNTER_CHUNK *
				   sizeof(*t->counters_dirty));
	if (t->counters_dirty)
		memset(t->counters_dirty, 1, t->nr_chunks *
		       XDP_FLOW_COUNTER_CHUNK * sizeof(*t->counters_dirty));
	t->chunk_fd = malloc(t->nr_chunks * sizeof(*t->chunk_fd));
	if (t->chunk_fd)
		for (i = 0; i < t->nr_chunks; i++)
			t->chunk_fd[i] = -1;
	t->chunk_rules = calloc(t->nr_chunks, sizeof(*t->chunk_rules));
	t->chunk_empty = calloc(t->nr_chunks, sizeof(*t->chunk_empty));
	if (t->ncpus > 0) {
		t->zero_counters = calloc(t->ncpus, sizeof(*t->zero_counters));
		t->percpu_buf = calloc(t->ncpus, sizeof(*t->percpu_buf));
	}
	if (!t->rules || !t->del_barrier || !t->buckets || !t->zero_counters ||
	    !t->percpu_buf || !t->counters_dirty || !t->exp || !t->chunk_fd ||
	    !t->chunk_rules || !t->chunk_empty) {
		table_free(t);
		return NULL;
	}
	t->rules_fd = bpf_map__fd(skel->maps.xf_rules);
	t->counters_fd = bpf_map__fd(skel->maps.xf_counters);
	t->ft = ftab_open(bpf_map__fd(skel->maps.xf_fbuckets),
			  bpf_map__fd(skel->maps.xf_fentries),
			  bpf_map__fd(skel->maps.xf_fhash));
	if (!t->ft) {
		pr_err("cannot take over the flow table: %s", strerror(errno));
		table_free(t);
		return NULL;
	}
	t->masks_fd = bpf_map__fd(skel->maps.xf_masks);
	t->defs_fd = bpf_map__fd(skel->maps.xf_rule_defs);
	t->conns_fd = bpf_map__fd(skel->maps.xf_ft_conns);
	t->gen_fd = bpf_map__fd(skel->maps.xf_gen);
	t->gen_map = mmap(NULL, sizeof(__u64), PROT_READ | PROT_WRITE,
			  MAP_SHARED, t->gen_fd, 0);
	if (t->gen_map == MAP_FAILED) {
		pr_err("cannot map xf_gen: %s", strerror(errno));
		t->gen_map = NULL;
		table_free(t);
		return NULL;
	}
	t->mask_min = mmap(NULL, XDP_FLOW_MAX_MASKS * sizeof(__u64),
			   PROT_READ | PROT_WRITE, MAP_SHARED,
			   bpf_map__fd(skel->maps.xf_mask_min), 0);
	if (t->mask_min == MAP_FAILED) {
		pr_err("cannot map xf_mask_min: %s", strerror(errno));
		t->mask_min = NULL;
		table_free(t);
		return NULL;
	}
	/* Pinned: go on from a previous helper's generation. */
	t->gen = *t->gen_map;
	gen_bump(t);
	t->barrier_seq = 1;	/* del_barrier[] starts at 0: no wait needed */
	t->epoch = 1;
	return t;
}

void table_free(struct table *t)
{
	unsigned int i;

	if (!t)
		return;
	if (t->rules)
		for (i = 0; i < t->max_rules; i++)
			free(t->rules[i]);
	if (t->list_fd >= 0)
		close(t->list_fd);
	ftab_free(t->ft);
	if (t->chunk_fd)
		for (i = 0; i < t->nr_chunks; i++)
			if (t->chunk_fd[i] >= 0)
				close(t->chunk_fd[i]);
	free(t->chunk_fd);
	free(t->chunk_rules);
	free(t->chunk_empty);
	if (t->gen_map)
		munmap((void *)t->gen_map, sizeof(__u64));
	if (t->mask_min)
		munmap((void *)t->mask_min, XDP_FLOW_MAX_MASKS * sizeof(__u64));
	free(t->counters_dirty);
	free(t->exp);
	free(t->rules);
	free(t->del_barrier);
	free(t->buckets);
	free(t->zero_counters);
	free(t->percpu_buf);
	free(t->conns);
	free(t);
}
