// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP flow table (xf_fbuckets, xf_fentries, xf_fhash; the layout and
 * the rules of concurrent use are in xdp_flow_dp.h): signature buckets and
 * entries, mapped into the helper and written in place while XDP reads
 * them. Every store a reader may meet is one aligned word, in the order
 * that keeps each lookup exact, and the compiler is kept from reordering
 * them (release stores).
 *
 * Each mask has a region of the buckets of its own, a power of 2 of them
 * at an offset aligned to its size (a buddy allocator over xf_fbuckets),
 * published in the mask list: a small mask's buckets stay in the CPU's
 * cache, as a textbook table per mask would. A region that fills up is
 * replaced by one twice its size (ftab_grow()), which the caller publishes
 * before it frees the old one.
 *
 * A deleted entry's slot is used again only after a barrier (an RCU grace
 * period, table_barrier()) since the delete: a reader may still hold
 * the slot it found. The caller numbers its barriers; ftab_set() returns
 * -EAGAIN when every free slot waits for the next one. The same holds for
 * a freed region: the caller frees it only after the list that named it
 * was replaced.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <bpf/bpf.h>

#include "umh.h"
#include "xdp_flow_dp.h"

struct ftab {
	struct xdp_flow_ft_bucket *b;
	unsigned int order;		/* nb is 1 << order */
	/* Buddy allocator: free[o] has a bit per block of 1 << o buckets. */
	__u64 *free[32];
	struct xdp_flow_ft_entry *e;
	struct xdp_flow_ft_hash *hp;	/* xf_fhash, mapped */
	size_t b_len, e_len, h_len;
	__u32 nb, ne;
	/* Per slot: SLOT_FREE (never used, or free since the maps were taken
	 * over), SLOT_USED (a way points at it) or SLOT_RING (deleted).
	 */
	unsigned char *state;
	/* Deleted slots, oldest first, each with the barrier number of its
	 * delete; then never used slots from @fresh on.
	 */
	__u32 *ring, *ring_seq;
	__u32 ring_head, ring_len;
	__u32 fresh;
	__u32 spilled;			/* keys in their second bucket */
};

enum { SLOT_FREE, SLOT_USED, SLOT_RING };

#define store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

static void *map_mmap(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static __u32 region_mask(const struct ftab_region *r)
{
	return (1u << r->order) - 1;
}

static __u64 key_hash(const struct ftab *f, __u32 mask_id,
		      const struct xdp_flow_key *key)
{
	const xdp_flow_word *kw = (const xdp_flow_word *)key;

	/* The key is masked already: masking it with itself changes nothing. */
	return xdp_flow_ft_hash(f->hp, mask_id, kw, kw);
}

static bool entry_is(const struct xdp_flow_ft_entry *e, __u32 mask_id,
		     const struct xdp_flow_key *key)
{
	return e->mask_id == mask_id && !memcmp(&e->key, key, sizeof(*key));
}

/* The first bucket and the signature of (@mask_id, @key) in @r. */
static __u32 key_bucket(const struct ftab *f, const struct ftab_region *r,
			__u32 mask_id, const struct xdp_flow_key *key,
			__u32 *sig)
{
	__u64 h = key_hash(f, mask_id, key);

	*sig = xdp_flow_ft_sig(h);
	return r->base + (h & region_mask(r));
}

/* The other bucket of a key whose first bucket in @r is @b. */
static __u32 alt_bucket(const struct ftab_region *r, __u32 b, __u32 sig)
{
	return r->base + xdp_flow_ft_alt(b - r->base, sig, region_mask(r));
}

/* The way of (@mask_id, @key) in @r: its bucket in *@bi; -1 if none. */
static int find(const struct ftab *f, const struct ftab_region *r,
		__u32 mask_id, const struct xdp_flow_key *key, __u32 *bi)
{
	const struct xdp_flow_ft_bucket *bk;
	__u32 sig, b = key_bucket(f, r, mask_id, key, &sig);
	int pass, w;

	for (pass = 0; pass < 2; pass++) {
		bk = &f->b[b];
		for (w = 0; w < XDP_FLOW_FT_WAYS; w++) {
			if (bk->sig[w] == sig && bk->slot[w] < f->ne &&
			    entry_is(&f->e[bk->slot[w]], mask_id, key)) {
				*bi = b;
				return w;
			}
		}
		if (!bk->spill)
			break;
		b = alt_bucket(r, b, sig);
	}
	return -1;
}

static int free_way(const struct xdp_flow_ft_bucket *bk)
{
	int w;

	for (w = 0; w < XDP_FLOW_FT_WAYS; w++)
		if (!bk->sig[w])
			return w;
	return -1;
}

/* A slot that no reader can still hold, or -1. */
static int slot_alloc(struct ftab *f, __u32 seq)
{
	__u32 s;

	if (f->ring_len && f->ring_seq[f->ring_head] != seq) {
		s = f->ring[f->ring_head];
		f->ring_head = (f->ring_head + 1) % f->ne;
		f->ring_len--;
		f->state[s] = SLOT_USED;
		return s;
	}
	while (f->fresh < f->ne && f->state[f->fresh] != SLOT_FREE)
		f->fresh++;
	if (f->fresh == f->ne)
		return -1;
	f->state[f->fresh] = SLOT_USED;
	return f->fresh++;
}

/* Gives back slot @s of a key that was never published: at once. */
static void slot_unalloc(struct ftab *f, __u32 s)
{
	f->state[s] = SLOT_FREE;
	if (s < f->fresh)
		f->fresh = s;
}

static void slot_free(struct ftab *f, __u32 s, __u32 seq)
{
	__u32 tail = (f->ring_head + f->ring_len) % f->ne;

	f->state[s] = SLOT_RING;
	f->ring[tail] = s;
	f->ring_seq[tail] = seq;
	f->ring_len++;
}

/* Publishes slot @s with signature @sig in way @w of bucket @b. */
static void way_set(struct ftab *f, __u32 b, int w, __u32 sig, __u32 s)
{
	store_release(&f->b[b].slot[w], s);
	store_release(&f->b[b].sig[w], sig);
}

/*
 * Makes room in bucket @b of @r, which is full: moves one of its own keys
 * (those whose first bucket it is) to that key's second bucket, if one has
 * room. The key is in both buckets for a moment, never in neither.
 */
static int make_room(struct ftab *f, const struct ftab_region *r, __u32 b)
{
	struct xdp_flow_ft_bucket *bk = &f->b[b];
	__u32 s, sig, alt, first;
	int w, aw;

	for (w = 0; w < XDP_FLOW_FT_WAYS; w++) {
		s = bk->slot[w];
		first = key_bucket(f, r, f->e[s].mask_id, &f->e[s].key, &sig);
		if (first != b)
			continue;	/* already in its second bucket */
		alt = alt_bucket(r, b, sig);
		aw = free_way(&f->b[alt]);
		if (aw < 0)
			continue;
		store_release(&bk->spill, bk->spill + 1);
		way_set(f, alt, aw, sig, s);
		store_release(&bk->sig[w], 0);
		f->spilled++;
		return w;
	}
	return -1;
}

/*
 * Places slot @s of a key new to @r: in its first bucket @b1, else in its
 * second, else in its first after make_room(); or returns -ENOSPC.
 */
static int place(struct ftab *f, const struct ftab_region *r, __u32 b1,
		 __u32 sig, __u32 s)
{
	__u32 b2 = alt_bucket(r, b1, sig);
	int w;

	w = free_way(&f->b[b1]);
	if (w < 0 && free_way(&f->b[b2]) < 0)
		w = make_room(f, r, b1);
	if (w >= 0) {
		way_set(f, b1, w, sig, s);
		return 0;
	}
	w = free_way(&f->b[b2]);
	if (w < 0)
		return -ENOSPC;
	/* Counted before it can be found there. */
	store_release(&f->b[b1].spill, f->b[b1].spill + 1);
	way_set(f, b2, w, sig, s);
	f->spilled++;
	return 0;
}

/**
 * ftab_set() - point (@mask_id, @key) at rule @rule, adding the entry if new
 * @f: the flow table
 * @r: the mask's region
 * @mask_id: the mask's id
 * @key: the key, masked with the mask
 * @rule: the rule id
 * @seq: the caller's current barrier number
 *
 * Return: 0; -EAGAIN when no free slot is out of readers' reach until the
 * next barrier; -ENOSPC when the table or both of the key's buckets are
 * full (nothing changed).
 */
int ftab_set(struct ftab *f, const struct ftab_region *r, __u32 mask_id,
	     const struct xdp_flow_key *key, __u32 rule, __u32 seq)
{
	__u32 sig, b1 = key_bucket(f, r, mask_id, key, &sig), bi;
	struct xdp_flow_ft_entry *e;
	int w, s, err;

	w = find(f, r, mask_id, key, &bi);
	if (w >= 0) {
		store_release(&f->e[f->b[bi].slot[w]].rule, rule);
		return 0;
	}
	s = slot_alloc(f, seq);
	if (s < 0)
		return f->ring_len ? -EAGAIN : -ENOSPC;
	/* Not reachable yet: plain stores, ordered by the release below. */
	e = &f->e[s];
	e->mask_id = mask_id;
	e->key = *key;
	e->rule = rule;
	err = place(f, r, b1, sig, s);
	if (err)
		slot_unalloc(f, s);
	return err;
}

/*
 * Takes way @w of bucket @b out: the key's signature first, then, if
 * @b is the key's second bucket, the count in its first one, @b1; the slot
 * waits for a barrier after @seq.
 */
static void way_del(struct ftab *f, __u32 b, int w, __u32 b1, __u32 seq)
{
	store_release(&f->b[b].sig[w], 0);
	if (b != b1) {
		/* Gone from the second bucket before the count drops. */
		store_release(&f->b[b1].spill, f->b[b1].spill - 1);
		f->spilled--;
	}
	slot_free(f, f->b[b].slot[w], seq);
}

/**
 * ftab_del() - remove the entry of (@mask_id, @key)
 * @f: the flow table
 * @r: the mask's region
 * @mask_id: the mask's id
 * @key: the key, masked with the mask
 * @seq: the caller's current barrier number: the slot is used again only
 *	after a later one
 *
 * Return: 0, or -ENOENT when there is no such entry.
 */
int ftab_del(struct ftab *f, const struct ftab_region *r, __u32 mask_id,
	     const struct xdp_flow_key *key, __u32 seq)
{
	__u32 sig, b1 = key_bucket(f, r, mask_id, key, &sig), bi;
	int w;

	w = find(f, r, mask_id, key, &bi);
	if (w < 0)
		return -ENOENT;
	way_del(f, bi, w, b1, seq);
	return 0;
}

/**
 * ftab_lookup() - the rule of (@mask_id, @key), as XDP would find it
 * @f: the flow table
 * @r: the mask's region
 * @mask_id: the mask's id
 * @key: the key, masked with the mask
 *
 * Return: the rule id, or -1.
 */
int ftab_lookup(const struct ftab *f, const struct ftab_region *r,
		__u32 mask_id, const struct xdp_flow_key *key)
{
	__u32 bi;
	int w = find(f, r, mask_id, key, &bi);

	return w < 0 ? -1 : (int)f->e[f->b[bi].slot[w]].rule;
}

/**
 * ftab_walk() - call @fn for every entry of region @r
 * @f: the flow table
 * @r: a region
 * @fn: gets each entry
 * @arg: for @fn
 */
void ftab_walk(const struct ftab *f, const struct ftab_region *r,
	       void (*fn)(void *arg, const struct xdp_flow_ft_entry *e),
	       void *arg)
{
	__u32 b;
	int w;

	for (b = r->base; b <= r->base + region_mask(r); b++)
		for (w = 0; w < XDP_FLOW_FT_WAYS; w++)
			if (f->b[b].sig[w])
				fn(arg, &f->e[f->b[b].slot[w]]);
}

/**
 * ftab_spilled() - how many keys sit in their second bucket
 * @f: the flow table
 *
 * Return: that number.
 */
unsigned int ftab_spilled(const struct ftab *f)
{
	return f->spilled;
}

/**
 * ftab_prune() - in region @r, remove every entry that @keep does not
 *	want, and set the rule of every other to what @keep says
 * @f: the flow table
 * @r: a region
 * @keep: returns the rule (mask id, key) should have, or -1 for none
 * @arg: for @keep
 * @seq: the caller's current barrier number
 */
void ftab_prune(struct ftab *f, const struct ftab_region *r,
		int (*keep)(void *arg, __u32 mask_id,
			    const struct xdp_flow_key *key),
		void *arg, __u32 seq)
{
	__u32 b, b1, sig;
	int w, rule;

	for (b = r->base; b <= r->base + region_mask(r); b++) {
		for (w = 0; w < XDP_FLOW_FT_WAYS; w++) {
			struct xdp_flow_ft_entry *e;

			if (!f->b[b].sig[w])
				continue;
			e = &f->e[f->b[b].slot[w]];
			rule = keep(arg, e->mask_id, &e->key);
			if (rule >= 0) {
				if (e->rule != (__u32)rule)
					store_release(&e->rule, rule);
				continue;
			}
			b1 = key_bucket(f, r, e->mask_id, &e->key, &sig);
			way_del(f, b, w, b1, seq);
		}
	}
}

/**
 * ftab_repair() - make region @r, which a previous helper left, consistent
 * @f: the flow table
 * @r: the region of mask @mask_id, as the published list named it
 * @mask_id: its mask
 *
 * Ways that point nowhere, at an entry of another mask or at one that does
 * not hash there, and a key's second copy (a move cut short), are cleared;
 * spill counts are recounted; the slots in use noted. Call it for every
 * published region before anything else changes the table.
 */
void ftab_repair(struct ftab *f, const struct ftab_region *r, __u32 mask_id)
{
	__u32 n = region_mask(r) + 1, b, b1, bi, sig;
	__u32 *spill = calloc(n, sizeof(*spill));
	unsigned int dropped = 0;
	int w, ow;

	for (b = r->base; b < r->base + n; b++) {
		struct xdp_flow_ft_bucket *bk = &f->b[b];

		for (w = 0; w < XDP_FLOW_FT_WAYS; w++) {
			struct xdp_flow_ft_entry *e;

			if (!bk->sig[w])
				continue;
			e = bk->slot[w] < f->ne ? &f->e[bk->slot[w]] : NULL;
			b1 = e ? key_bucket(f, r, e->mask_id, &e->key, &sig) : 0;
			ow = e ? find(f, r, e->mask_id, &e->key, &bi) : -1;
			if (!e || e->mask_id != mask_id || sig != bk->sig[w] ||
			    (b != b1 && b != alt_bucket(r, b1, sig)) ||
			    f->state[bk->slot[w]] == SLOT_USED ||
			    (ow >= 0 && (bi != b || ow != w))) {
				store_release(&bk->sig[w], 0);
				dropped++;
				continue;
			}
			f->state[bk->slot[w]] = SLOT_USED;
			if (b != b1 && spill)
				spill[b1 - r->base]++;
		}
	}
	for (b = 0; spill && b < n; b++) {
		if (f->b[r->base + b].spill != spill[b])
			store_release(&f->b[r->base + b].spill, spill[b]);
		f->spilled += spill[b];
	}
	free(spill);
	if (dropped)
		pr_info("flow table: dropped %u ways a previous helper left half-written",
			dropped);
}

/* --- regions: a buddy allocator over the buckets --- */

static bool block_free(const struct ftab *f, unsigned int o, __u32 base)
{
	__u32 i = base >> o;

	return f->free[o][i / 64] >> (i % 64) & 1;
}

static void block_mark(struct ftab *f, unsigned int o, __u32 base, bool free)
{
	__u32 i = base >> o;

	if (free)
		f->free[o][i / 64] |= 1ull << (i % 64);
	else
		f->free[o][i / 64] &= ~(1ull << (i % 64));
}

/**
 * ftab_region_alloc() - a region of 1 << @order buckets, all of them empty
 * @f: the flow table
 * @order: its size
 * @r: filled in
 *
 * Return: 0, or -ENOSPC.
 */
int ftab_region_alloc(struct ftab *f, unsigned int order,
		      struct ftab_region *r)
{
	unsigned int o;
	__u32 i, words, base;

	for (o = order; o <= f->order; o++) {
		words = ((f->nb >> o) + 63) / 64;
		for (i = 0; i < words; i++)
			if (f->free[o][i])
				break;
		if (i < words)
			break;
	}
	if (o > f->order)
		return -ENOSPC;
	base = (i * 64 + __builtin_ctzll(f->free[o][i])) << o;
	block_mark(f, o, base, false);
	/* Split down: the upper halves stay free. */
	while (o > order) {
		o--;
		block_mark(f, o, base + (1u << o), true);
	}
	r->base = base;
	r->order = order;
	/* Not published yet: no reader sees it being cleared. */
	memset(&f->b[base], 0, (sizeof(*f->b)) << order);
	return 0;
}

/**
 * ftab_region_free() - give region @r back
 * @f: the flow table
 * @r: a region no published list names any more
 */
void ftab_region_free(struct ftab *f, const struct ftab_region *r)
{
	unsigned int o = r->order;
	__u32 base = r->base, buddy;

	while (o < f->order) {
		buddy = base ^ (1u << o);
		if (!block_free(f, o, buddy))
			break;
		block_mark(f, o, buddy, false);
		base &= ~(1u << o);
		o++;
	}
	block_mark(f, o, base, true);
}

/**
 * ftab_region_claim() - take region @r over from a previous helper
 * @f: the flow table
 * @r: a region a published list names
 *
 * Return: 0, or -EINVAL when @r is not a free, well-formed region.
 */
int ftab_region_claim(struct ftab *f, const struct ftab_region *r)
{
	unsigned int o;
	__u32 base;

	if (r->order > f->order || r->base & region_mask(r) ||
	    r->base >= f->nb)
		return -EINVAL;
	/* The free block that holds it, then split down to it. */
	for (o = r->order; o <= f->order; o++)
		if (block_free(f, o, r->base & ~((1u << o) - 1)))
			break;
	if (o > f->order)
		return -EINVAL;
	base = r->base & ~((1u << o) - 1);
	block_mark(f, o, base, false);
	while (o > r->order) {
		o--;
		/* Keep the half with @r, free the other. */
		if (r->base & (1u << o)) {
			block_mark(f, o, base, true);
			base += 1u << o;
		} else {
			block_mark(f, o, base + (1u << o), true);
		}
	}
	return 0;
}

/**
 * ftab_grow() - a region twice the size of @r, with the same entries
 * @f: the flow table
 * @r: the mask's region
 * @mask_id: the mask
 * @to: filled in
 *
 * @r is left as it is: readers keep using it until the caller publishes
 * @to, and frees @r after that.
 *
 * Return: 0, or -ENOSPC.
 */
int ftab_grow(struct ftab *f, const struct ftab_region *r, __u32 mask_id,
	      struct ftab_region *to)
{
	__u32 b, b1, sig, s, spilled = f->spilled;
	int w, err;

	err = ftab_region_alloc(f, r->order + 1, to);
	if (err)
		return err;
	for (b = r->base; b <= r->base + region_mask(r); b++) {
		for (w = 0; w < XDP_FLOW_FT_WAYS; w++) {
			if (!f->b[b].sig[w])
				continue;
			s = f->b[b].slot[w];
			b1 = key_bucket(f, to, mask_id, &f->e[s].key, &sig);
			if (place(f, to, b1, sig, s)) {
				ftab_region_free(f, to);
				f->spilled = spilled;
				return -ENOSPC;
			}
		}
	}
	/* The old region's spills go with it. */
	for (b = r->base; b <= r->base + region_mask(r); b++)
		f->spilled -= f->b[b].spill;
	return 0;
}

static int map_size(int fd, __u32 value_size, __u32 *entries)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != value_size || !info.max_entries)
		return -EINVAL;
	*entries = info.max_entries;
	return 0;
}

/**
 * ftab_open() - take over the flow table's maps
 * @buckets_fd: xf_fbuckets
 * @entries_fd: xf_fentries
 * @hash_fd: xf_fhash
 *
 * New maps (a zero seed) get a random hash; maps a previous helper left go
 * on with theirs: the caller then claims the regions the published list
 * names (ftab_region_claim()) and repairs them (ftab_repair()).
 *
 * Return: the table, or NULL (errno says why).
 */
struct ftab *ftab_open(int buckets_fd, int entries_fd, int hash_fd)
{
	struct ftab *f = calloc(1, sizeof(*f));
	__u32 one, j;
	int err;

	if (!f)
		return NULL;
	err = map_size(buckets_fd, sizeof(*f->b), &f->nb);
	if (!err)
		err = map_size(entries_fd, sizeof(*f->e), &f->ne);
	if (!err)
		err = map_size(hash_fd, sizeof(*f->hp), &one);
	if (!err && (f->nb < 2 || (f->nb & (f->nb - 1))))
		err = -EINVAL;
	if (err)
		goto fail;
	f->b_len = (size_t)f->nb * sizeof(*f->b);
	f->e_len = (size_t)f->ne * sizeof(*f->e);
	f->h_len = sizeof(*f->hp);
	f->b = map_mmap(buckets_fd, f->b_len);
	f->e = map_mmap(entries_fd, f->e_len);
	f->hp = map_mmap(hash_fd, f->h_len);
	f->state = calloc(f->ne, 1);
	f->ring = calloc(f->ne, sizeof(*f->ring));
	f->ring_seq = calloc(f->ne, sizeof(*f->ring_seq));
	if (!f->b || !f->e || !f->hp || !f->state || !f->ring ||
	    !f->ring_seq) {
		err = -errno ?: -ENOMEM;
		goto fail;
	}
	for (f->order = 0; (1u << f->order) < f->nb; f->order++)
		;
	for (j = 0; j <= f->order; j++) {
		f->free[j] = calloc((f->nb >> j) / 64 + 1, sizeof(__u64));
		if (!f->free[j]) {
			err = -ENOMEM;
			goto fail;
		}
	}
	block_mark(f, f->order, 0, true);
	if (!f->hp->seed) {
		struct xdp_flow_ft_hash h = {};

		if (getrandom(&h.mul, sizeof(h.mul), 0) != sizeof(h.mul) ||
		    getrandom(&h.seed, sizeof(h.seed), 0) != sizeof(h.seed)) {
			err = -errno ?: -EIO;
			goto fail;
		}
		for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
			h.mul[j] |= 1;
		h.seed |= 1;
		/* New maps: no reader can find an entry yet. */
		*f->hp = h;
	}
	return f;
fail:
	ftab_free(f);
	errno = -err;
	return NULL;
}

void ftab_free(struct ftab *f)
{
	unsigned int j;

	if (!f)
		return;
	if (f->b)
		munmap(f->b, f->b_len);
	if (f->e)
		munmap(f->e, f->e_len);
	if (f->hp)
		munmap(f->hp, f->h_len);
	for (j = 0; j < 32; j++)
		free(f->free[j]);
	free(f->state);
	free(f->ring);
	free(f->ring_seq);
	free(f);
}
