// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: the rules' counters. xf_counters holds them in chunks
 * of XDP_FLOW_COUNTER_CHUNK rule ids (per-CPU arrays), made before a rule
 * of their ids is linked and freed in quiet times once no rule needs
 * them; a rule's counters are zeroed before it counts. Also the stats
 * requests, which read them.
 *
 * Owns: struct table's chunk and counter fields.
 * May call: nothing of the other table files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "tables.h"

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
	/* Zeroed: gcc cannot see that one chunk at least is made. */
	__u32 keys[XDP_FLOW_MAX_RULES / XDP_FLOW_COUNTER_CHUNK] = {};
	int fds[XDP_FLOW_MAX_RULES / XDP_FLOW_COUNTER_CHUNK] = {};
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
bool chunks_surplus(const struct table *t)
{
	return t->chunks_made > 2 * t->chunks_used + 1;
}

/*
 * Frees chunks no rule has had an id in since before the last barrier (no
 * XDP reader can still count into them) while there is a surplus. Each
 * free waits for a grace period: table_idle() calls this, not rule changes.
 */
void chunks_gc(struct table *t)
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
void chunk_account(struct table *t, __u32 id, bool in)
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
int counters_zero(struct table *t, __u32 id)
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
void counters_zero_free(struct table *t)
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
void chunks_recover(struct table *t)
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
