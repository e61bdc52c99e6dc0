// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: what the XDP program reads, written so that a
 * concurrent reader never meets a rule id whose entry is not ready (see
 * table.c for the order). A rule's entry (rule_to_dp()), a key's flow
 * entry, the mask list swapped in whole (list_publish()), the barrier that
 * waits for the readers of the old list (table_barrier()), and the
 * generation that makes the exact-match cache's answers stale
 * (gen_bump()).
 *
 * Owns: the published list (struct table's @list_fd), the barriers
 * (@barrier_seq) and the generation (@gen, xf_gen); it sets each mask's
 * lowest order in xf_mask_min at a swap (table.c lowers one in place).
 * May call: ftab.c; nothing of the other table files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "tables.h"

void rule_to_dp(const struct xdp_flow_rule *r, struct xdp_flow_dp_rule *dp)
{
	memset(dp, 0, sizeof(*dp));
	dp->order = r->order;
	dp->flags = r->flags | XDP_FLOW_DP_F_VALID;
	dp->nr_actions = r->nr_actions;
	dp->ft_conn = r->ft_conn;
	memcpy(dp->actions, r->actions, sizeof(dp->actions));
}

/* Points the XDP flow entry of @e's mask and key at @e's rule. */
int flow_write(struct table *t, const struct tentry *e)
{
	int err = ftab_set(t->ft, &e->mask->reg, e->mask->id, &e->key,
			   e->rule->rule.id, t->barrier_seq);

	/* Every free slot may still be in a reader's hands. */
	if (err == -EAGAIN) {
		err = table_barrier(t);
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

int flow_erase(struct table *t, const struct tentry *e)
{
	ftab_del(t->ft, &e->mask->reg, e->mask->id, &e->key, t->barrier_seq);
	return 0;
}

/* Which of XDP_FLOW_WIDE_WORDS and XDP_FLOW_TUN_WORDS @m keeps a word
 * of: XDP_FLOW_MASK_* bits.
 */
static __u32 mask_wide(const struct xdp_flow_key *m)
{
	const xdp_flow_word *mw = (const xdp_flow_word *)m;
	__u32 j, wide = 0;

	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++) {
		if (!mw[j])
			continue;
		if (XDP_FLOW_WIDE_WORDS & (1u << j))
			wide |= XDP_FLOW_MASK_WIDE;
		if (XDP_FLOW_TUN_WORDS & (1u << j))
			wide |= XDP_FLOW_MASK_TUN;
	}
	return wide;
}

/* Which tunnel fields the tc hook must read for listed mask @m: the
 * XDP_FLOW_GEN_* bits of xf_gen[1].
 */
static __u64 mask_tun(const struct xdp_flow_dp_mask *m)
{
	static const __u8 zero[XDP_FLOW_ENC_OPTS_LEN];
	__u64 tun = XDP_FLOW_GEN_TUN;

	if (!(m->wide & XDP_FLOW_MASK_TUN))
		return 0;
	if (m->mask.enc_opt_len || memcmp(m->mask.enc_opts, zero, sizeof(zero)))
		tun |= XDP_FLOW_GEN_OPTS;
	return tun;
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
int list_publish(struct table *t)
{
	struct xdp_flow_mask_list *list;
	__u64 min[XDP_FLOW_MAX_MASKS];
	unsigned int i, n = 0;
	__u64 tun = 0;
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
	for (i = 0; i < n; i++)
		tun |= mask_tun(&list->masks[i]);
	/* The first mask of a tunnel word (or of the options): the tc hook
	 * reads the metadata (its options) before any frame can meet the
	 * mask (the swap below waits for the frames that started without).
	 */
	if (tun & ~t->tun_words) {
		t->tun_words |= tun;
		__atomic_store_n(&t->gen_map[1], t->tun_words, __ATOMIC_RELEASE);
	}
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
	/* No mask of a tunnel word (of the options) is listed any more. */
	if (t->tun_words & ~tun) {
		t->tun_words = tun;
		__atomic_store_n(&t->gen_map[1], tun, __ATOMIC_RELEASE);
	}
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
int table_barrier(struct table *t)
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
int gen_bump(struct table *t)
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
