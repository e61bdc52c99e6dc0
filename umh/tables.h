/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The helper's flow tables from inside: what the table*.c files share.
 * The rest of the helper sees only umh.h's table_*() functions.
 *
 * One concept a file; each calls only the files below it here:
 *   table_sync.c      a new helper taking over (table_recover()), replay
 *                     and SYNC
 *   table.c           adding and deleting rules, quiet-time work, room;
 *                     the tables' life
 *   table_publish.c   writing what the XDP program reads: rule and flow
 *                     entries, the mask list, barriers, the generation
 *   table_counters.c  the counters' chunks, zeroing, stats
 *   table_conns.c     flowtable connections (xf_ft_conns)
 *   table_flows.c     the in-memory index of flow entries: a key's best
 *                     rule
 *   table_masks.c     mask slots, their buckets, how many a change needs
 *   table_ranges.c    port ranges as masked entries
 *   table_check.c     what a rule must be to be taken
 */
#ifndef _XDP_FLOW_TABLES_H
#define _XDP_FLOW_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "umh.h"
#include "xdp_flow_dp.h"

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
	volatile __u64 *gen_map;	/* xf_gen's values, mapped */
	__u64 tun_words;		/* the value last written to xf_gen[1] */
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

/* table.c */
int rule_unlink(struct table *t, struct trule *r);

/* table_publish.c */
void rule_to_dp(const struct xdp_flow_rule *r, struct xdp_flow_dp_rule *dp);
int flow_write(struct table *t, const struct tentry *e);
int flow_erase(struct table *t, const struct tentry *e);
int list_publish(struct table *t);
int table_barrier(struct table *t);
int gen_bump(struct table *t);

/* table_counters.c */
bool chunks_surplus(const struct table *t);
void chunks_gc(struct table *t);
void chunk_account(struct table *t, __u32 id, bool in);
int counters_zero(struct table *t, __u32 id);
void counters_zero_free(struct table *t);
void chunks_recover(struct table *t);

/* table_conns.c */
int conn_ref(struct table *t, __u64 key);
void conn_unref(struct table *t, __u64 key);
void conn_prune(struct table *t);

/* table_flows.c */
bool rule_better(const struct trule *a, const struct trule *b);
struct tentry *flow_best(struct table *t, struct tmask *mask,
			 const struct xdp_flow_key *key,
			 const struct trule *skip);
void flow_link(struct table *t, struct tentry *e);
void flow_unlink(struct table *t, struct tentry *e);
unsigned int flows_new(struct table *t, const struct texp *exp,
		       unsigned int n);

/* table_masks.c */
struct tmask *mask_find(struct table *t, const struct xdp_flow_key *m);
struct tmask *mask_find_id(struct table *t, __u32 id);
struct tmask *mask_alloc(struct table *t, const struct xdp_flow_key *m);
void mask_gc(struct table *t);
int mask_region(struct table *t, struct tmask *tm);
bool mask_grow(struct table *t, struct tmask *tm);
unsigned int masks_after(struct table *t, const struct trule *old,
			 const struct texp *exp, unsigned int n);
unsigned int shield_mask_used(struct table *t);

/* table_ranges.c */
int rule_expand(const struct xdp_flow_rule *r, struct texp *out);

/* table_check.c */
extern const struct xdp_flow_key shield_mask;
int rule_check(const struct table *t, const struct xdp_flow_rule *r,
	       char *msg, size_t len);

#endif /* _XDP_FLOW_TABLES_H */
