// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: the in-memory index of the flow entries. Every entry
 * of every rule, hashed by (mask, masked key), so that the best rule of a
 * key (the lowest order, then the lowest id) is found again when a rule
 * comes or goes; and how many new keys a change would add.
 *
 * Owns: struct table's @buckets.
 * May call: table_masks.c (mask_find()).
 */
#include <string.h>

#include "tables.h"

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

bool rule_better(const struct trule *a, const struct trule *b)
{
	if (a->rule.order != b->rule.order)
		return a->rule.order < b->rule.order;
	return a->rule.id < b->rule.id;
}

/* The entry of the best rule of the flow (@mask, @key), leaving out @skip. */
struct tentry *flow_best(struct table *t, struct tmask *mask,
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

void flow_link(struct table *t, struct tentry *e)
{
	struct tentry **head = &t->buckets[flow_hash(e->mask->id, &e->key)];

	e->hnext = *head;
	*head = e;
}

void flow_unlink(struct table *t, struct tentry *e)
{
	struct tentry **p = &t->buckets[flow_hash(e->mask->id, &e->key)];

	for (; *p; p = &(*p)->hnext) {
		if (*p == e) {
			*p = e->hnext;
			return;
		}
	}
}

/* How many of the @n flow entries @exp are not in the flow map yet. */
unsigned int flows_new(struct table *t, const struct texp *exp,
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
