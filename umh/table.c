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
 * This file adds and deletes rules in that order, does the quiet times'
 * work, and makes and frees the tables; tables.h lists the files of the
 * rest, one concept each.
 *
 * Owns: struct table's life, its rules by id and their counts.
 * May call: every table file below it in tables.h (not table_sync.c),
 * ftab.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tables.h"
#include "xdp_flow.skel.h"

unsigned int table_rule_count(const struct table *t)
{
	return t->nr_rules;
}

static bool rule_same(const struct xdp_flow_rule *a,
		      const struct xdp_flow_rule *b)
{
	return !memcmp(a, b, sizeof(*a));
}

int rule_unlink(struct table *t, struct trule *r)
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
		err = table_barrier(t);
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
	if (!chunks_surplus(t) || table_barrier(t))
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
	t->gen_map = mmap(NULL, XDP_FLOW_GEN_WORDS * sizeof(__u64),
			  PROT_READ | PROT_WRITE,
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
	/* Pinned: go on from a previous helper's generation; the tunnel
	 * word stays set until the first list is published.
	 */
	t->gen = *t->gen_map;
	t->tun_words = t->gen_map[1];
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
		munmap((void *)t->gen_map, XDP_FLOW_GEN_WORDS * sizeof(__u64));
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
