// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: a new helper taking over, and the module's replay.
 *
 * Restart: the pinned maps are the state. table_recover() rebuilds the
 * in-memory tables from the rule definitions whose rule entry is live,
 * repairs the flow entries and the mask list a killed helper may have left
 * half-written, and marks every rule as not yet replayed. The module's
 * replay re-adds them (an identical rule is a no-op that keeps its
 * counters; a different one is replaced) and SYNC deletes those it did not
 * replay. Until then the XDP program keeps running on the old state.
 *
 * Owns: the replay's epoch (struct table's @epoch, which table.c stamps
 * on the rules it adds) and the progress callback.
 * May call: every other table file (table.c's rule_unlink() for SYNC),
 * ftab.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "tables.h"

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
