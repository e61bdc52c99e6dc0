// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: flowtable connections (xf_ft_conns).
 *
 * Both directions of a flowtable's flow carry its key (@ft_conn). The
 * datapath marks the key's entry in xf_ft_conns when a TCP FIN or RST of
 * the flow goes to the stack, and sends every frame of it there from then
 * on, as the flowtable does with a flow it tears down. The entry lives
 * while a rule has the key: here the rules of each key are counted (a
 * flow has two at most), in a table with linear probing.
 *
 * Owns: struct table's @conns.
 * May call: nothing of the other table files.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>

#include "tables.h"

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
int conn_ref(struct table *t, __u64 key)
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
void conn_unref(struct table *t, __u64 key)
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
void conn_prune(struct table *t)
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
