// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: the masks. A slot each, found by mask or by id; the
 * buckets of the XDP flow table each has (a region, doubled as its keys
 * grow); freeing the masks no rule uses any more; and how many masks a
 * change would leave in use, so that an add is refused before it touches
 * anything.
 *
 * Owns: the mask slots and their buckets (struct table's @masks); the
 * callers give a new mask its id, and table_publish.c marks which are
 * listed.
 * May call: table_check.c (the shields' mask), ftab.c.
 */
#include <errno.h>
#include <string.h>

#include "tables.h"

struct tmask *mask_find(struct table *t, const struct xdp_flow_key *m)
{
	unsigned int i;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		if (t->masks[i].used &&
		    !memcmp(&t->masks[i].mask, m, sizeof(*m)))
			return &t->masks[i];
	return NULL;
}

struct tmask *mask_find_id(struct table *t, __u32 id)
{
	unsigned int i;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		if (t->masks[i].used && t->masks[i].id == id)
			return &t->masks[i];
	return NULL;
}

/* A free slot; its id is assigned by the caller. */
struct tmask *mask_alloc(struct table *t, const struct xdp_flow_key *m)
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
void mask_gc(struct table *t)
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
int mask_region(struct table *t, struct tmask *tm)
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
bool mask_grow(struct table *t, struct tmask *tm)
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
unsigned int masks_after(struct table *t, const struct trule *old,
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
unsigned int shield_mask_used(struct table *t)
{
	struct tmask *tm = mask_find(t, &shield_mask);

	return tm && tm->nr_entries;
}

unsigned int table_mask_count(const struct table *t)
{
	unsigned int i, n = 0;

	for (i = 0; i < XDP_FLOW_MAX_MASKS; i++)
		n += t->masks[i].used;
	return n;
}
