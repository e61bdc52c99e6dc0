// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the maps of the helper's XDP program that the module uses
 * itself, without asking the helper. The module takes them from the
 * program the registered helper names in HELLO, and holds them: they are
 * pinned, so every later helper's program uses the same ones.
 *
 * The gate (XDP_FLOW_GATE_NAME), a word the module writes itself. Offloaded
 * traffic keeps flowing while no helper runs, on the tables the last helper
 * left; but a rule change that reaches no helper would leave those tables
 * wrong. The module then closes the gate, and every frame goes to the
 * stack, where TC has the change. A helper that has replayed every rule
 * opens it again. While the helper has rule changes to do that TC has
 * already made, the gate holds the lowest order among them (its limit):
 * frames whose rule has that order or a higher one go to the stack.
 *
 * The held rules (XDP_FLOW_HELD_NAME), the gate's other half: a count by
 * rule id of the changes in flight that hold that rule back by itself.
 * A flowtable's flows never overlap, so that one flow's change needs not
 * send the flows after it in order to the stack, as the limit would.
 *
 * The counters (XDP_FLOW_COUNTERS_NAME). TC and nftables ask for a rule's
 * counters under their locks, for every rule of a dump; the module reads
 * them from the map, so no stats request waits for the helper, and the
 * counters keep moving while no helper runs.
 *
 * The peers (XDP_FLOW_PEERS_NAME), the TC program's: which veths a redirect
 * may pass by; the egress (XDP_FLOW_EGRESS_NAME), the XDP program's: which
 * devices a redirect may go to with ndo_xdp_xmit; the ingress
 * (XDP_FLOW_INGRESS_NAME), the TC program's: which devices a redirect or a
 * mirror may enter at ingress. All three are written as peer.c decides,
 * one word an entry, by the same code.
 *
 * It owns the maps it holds and the gate's state; it calls params.c.
 */
#include <linux/bpf.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "xdp_flow.h"

/* Guards the maps held. */
static DEFINE_MUTEX(xdp_flow_dp_lock);
static struct bpf_map *xdp_flow_gate_map;
/* Also under xdp_flow_gate_lock, which xdp_flow_gate_hold() takes. */
static struct bpf_map *xdp_flow_held_map;
static struct bpf_map *xdp_flow_counters_map;
static struct bpf_map *xdp_flow_peers_map;
static struct bpf_map *xdp_flow_egress_map;
static struct bpf_map *xdp_flow_ingress_map;

/* Guards the gate's word and state; taken in any context but hard IRQ. */
static DEFINE_SPINLOCK(xdp_flow_gate_lock);
static u64 *xdp_flow_gate_word;
static bool xdp_flow_gate_closed;
static u64 xdp_flow_gate_limit = XDP_FLOW_NO_LIMIT;

/* Caller holds xdp_flow_gate_lock. */
static void xdp_flow_gate_write(void)
{
	u64 word = XDP_FLOW_GATE_OPEN;

	if (xdp_flow_gate_closed)
		word = XDP_FLOW_GATE_CLOSED;
	else if (xdp_flow_gate_limit != XDP_FLOW_NO_LIMIT)
		word = xdp_flow_gate_limit + 1;
	if (xdp_flow_gate_word)
		WRITE_ONCE(*xdp_flow_gate_word, word);
}

static bool xdp_flow_gate_is_ours(const struct bpf_map *map)
{
	return map->map_type == BPF_MAP_TYPE_ARRAY &&
	       map->key_size == sizeof(u32) && map->value_size == sizeof(u64) &&
	       map->max_entries == 1 &&
	       !strncmp(map->name, XDP_FLOW_GATE_NAME, sizeof(map->name));
}

static bool xdp_flow_held_is_ours(const struct bpf_map *map)
{
	return map->map_type == BPF_MAP_TYPE_ARRAY &&
	       map->key_size == sizeof(u32) && map->value_size == sizeof(u32) &&
	       map->max_entries >= xdp_flow_max_rules() &&
	       !strncmp(map->name, XDP_FLOW_HELD_NAME, sizeof(map->name));
}

/* An array of maps whose slots hold per-CPU arrays of counters. */
static bool xdp_flow_counters_are_ours(const struct bpf_map *map)
{
	const struct bpf_map *chunk = map->inner_map_meta;

	return map->map_type == BPF_MAP_TYPE_ARRAY_OF_MAPS &&
	       map->key_size == sizeof(u32) &&
	       (u64)map->max_entries * XDP_FLOW_COUNTER_CHUNK >=
	       xdp_flow_max_rules() &&
	       !strncmp(map->name, XDP_FLOW_COUNTERS_NAME, sizeof(map->name)) &&
	       chunk && chunk->map_type == BPF_MAP_TYPE_PERCPU_ARRAY &&
	       chunk->key_size == sizeof(u32) &&
	       chunk->value_size == sizeof(struct xdp_flow_counter) &&
	       chunk->max_entries == XDP_FLOW_COUNTER_CHUNK &&
	       !(chunk->map_flags & BPF_F_INNER_MAP);
}

/* Is @map one of peer.c's: a hash of one word an entry by ifindex? */
static bool xdp_flow_tx_map_is(const struct bpf_map *map, const char *name,
			       u32 value_size)
{
	return map->map_type == BPF_MAP_TYPE_HASH &&
	       map->key_size == sizeof(u32) &&
	       map->value_size == value_size &&
	       (map->map_flags & BPF_F_NO_PREALLOC) &&
	       !strncmp(map->name, name, sizeof(map->name));
}

static bool xdp_flow_peers_are_ours(const struct bpf_map *map)
{
	return xdp_flow_tx_map_is(map, XDP_FLOW_PEERS_NAME,
				  sizeof(union xdp_flow_peer));
}

static bool xdp_flow_egress_is_ours(const struct bpf_map *map)
{
	return xdp_flow_tx_map_is(map, XDP_FLOW_EGRESS_NAME, sizeof(u64));
}

static bool xdp_flow_ingress_is_ours(const struct bpf_map *map)
{
	return xdp_flow_tx_map_is(map, XDP_FLOW_INGRESS_NAME,
				  sizeof(union xdp_flow_ingress));
}

/* A reference to the map of @prog that @ours accepts, or NULL. */
static struct bpf_map *xdp_flow_prog_map(struct bpf_prog *prog,
					 bool (*ours)(const struct bpf_map *))
{
	struct bpf_map *map = NULL;
	u32 i;

	mutex_lock(&prog->aux->used_maps_mutex);
	for (i = 0; i < prog->aux->used_map_cnt; i++) {
		if (ours(prog->aux->used_maps[i])) {
			map = prog->aux->used_maps[i];
			bpf_map_inc(map);
			break;
		}
	}
	mutex_unlock(&prog->aux->used_maps_mutex);
	return map;
}

/* Holds @map (a reference, or NULL: the one held stays) in @slot. */
static void xdp_flow_dp_hold(struct bpf_map **slot, struct bpf_map *map)
{
	struct bpf_map *old;

	if (!map)
		return;
	mutex_lock(&xdp_flow_dp_lock);
	old = *slot;
	*slot = map;
	mutex_unlock(&xdp_flow_dp_lock);
	if (old)
		bpf_map_put(old);
}

/*
 * The map of the TC program @tc_prog_fd that @ours accepts (a reference),
 * or NULL.
 */
static struct bpf_map *xdp_flow_dp_tc_map(int tc_prog_fd,
					  bool (*ours)(const struct bpf_map *))
{
	struct bpf_prog *prog;
	struct bpf_map *map;

	if (tc_prog_fd < 0)
		return NULL;
	prog = bpf_prog_get_type_dev(tc_prog_fd, BPF_PROG_TYPE_SCHED_CLS,
				     false);
	if (IS_ERR(prog))
		return NULL;
	map = xdp_flow_prog_map(prog, ours);
	bpf_prog_put(prog);
	return map;
}

/**
 * xdp_flow_dp_maps_take() - take the gate, the held rules, the counters,
 *	the egress, the peers and the ingress from the helper's programs
 * @prog_fd: the helper's XDP program, a descriptor of the calling process
 * @tc_prog_fd: its TC program, or -1
 * @tx_taken: set when an egress, peers or ingress map was taken: the
 *	caller has their entries written anew (xdp_flow_peers_resync()), as a
 *	pinned map may hold entries of an earlier module
 *
 * Called in the registered helper's context. The gate keeps the state the
 * module gave it last. Maps the programs do not have are not replaced.
 *
 * Return: 0, or a negative errno when @prog_fd is no program of ours or
 * lacks the gate, the held rules or the counters.
 */
int xdp_flow_dp_maps_take(u32 prog_fd, int tc_prog_fd, bool *tx_taken)
{
	struct bpf_map *gate, *held, *counters, *egress, *peers, *ingress;
	struct bpf_map *old_gate = NULL, *old_held = NULL;
	struct bpf_prog *prog;
	u32 zero = 0;
	u64 *word = NULL;

	prog = bpf_prog_get_type_dev(prog_fd, BPF_PROG_TYPE_XDP, false);
	if (IS_ERR(prog))
		return PTR_ERR(prog);
	gate = xdp_flow_prog_map(prog, xdp_flow_gate_is_ours);
	held = xdp_flow_prog_map(prog, xdp_flow_held_is_ours);
	counters = xdp_flow_prog_map(prog, xdp_flow_counters_are_ours);
	egress = xdp_flow_prog_map(prog, xdp_flow_egress_is_ours);
	bpf_prog_put(prog);

	if (gate) {
		/* An array's values stay where they are while the map lives. */
		rcu_read_lock();
		word = gate->ops->map_lookup_elem(gate, &zero);
		rcu_read_unlock();
		if (!word) {
			bpf_map_put(gate);
			gate = NULL;
		}
	}

	mutex_lock(&xdp_flow_dp_lock);
	if (gate) {
		old_gate = xdp_flow_gate_map;
		xdp_flow_gate_map = gate;
		spin_lock_bh(&xdp_flow_gate_lock);
		xdp_flow_gate_word = word;
		xdp_flow_gate_write();
		spin_unlock_bh(&xdp_flow_gate_lock);
	}
	if (held) {
		old_held = xdp_flow_held_map;
		spin_lock_bh(&xdp_flow_gate_lock);
		xdp_flow_held_map = held;
		spin_unlock_bh(&xdp_flow_gate_lock);
	}
	mutex_unlock(&xdp_flow_dp_lock);
	if (old_gate)
		bpf_map_put(old_gate);
	if (old_held)
		bpf_map_put(old_held);
	peers = xdp_flow_dp_tc_map(tc_prog_fd, xdp_flow_peers_are_ours);
	ingress = xdp_flow_dp_tc_map(tc_prog_fd, xdp_flow_ingress_is_ours);
	xdp_flow_dp_hold(&xdp_flow_counters_map, counters);
	xdp_flow_dp_hold(&xdp_flow_egress_map, egress);
	xdp_flow_dp_hold(&xdp_flow_peers_map, peers);
	xdp_flow_dp_hold(&xdp_flow_ingress_map, ingress);
	*tx_taken = egress || peers || ingress;
	return gate && held && counters ? 0 : -ENOENT;
}

/*
 * Writes @ifindex's entry of the map held in @slot: @word, or none for
 * NULL. An entry that stays is rewritten in place, with one store: the
 * program reads either word.
 */
static int xdp_flow_dp_word_write(struct bpf_map **slot, u32 ifindex,
				  const u64 *word)
{
	struct bpf_map *map;
	u64 *cur;
	int err = 0;

	mutex_lock(&xdp_flow_dp_lock);
	map = *slot;
	if (!map) {
		mutex_unlock(&xdp_flow_dp_lock);
		return -ENOENT;
	}
	rcu_read_lock();
	cur = map->ops->map_lookup_elem(map, &ifindex);
	if (cur && word)
		WRITE_ONCE(*cur, *word);
	else if (word)
		err = map->ops->map_update_elem(map, &ifindex, (void *)word,
						BPF_NOEXIST);
	else if (cur)
		err = map->ops->map_delete_elem(map, &ifindex);
	if (err && word)
		map->ops->map_delete_elem(map, &ifindex);
	rcu_read_unlock();
	mutex_unlock(&xdp_flow_dp_lock);
	return err;
}

/**
 * xdp_flow_dp_peer_write() - say whether redirects to a veth may pass it by
 * @ifindex: the veth, in init_net
 * @peer: what its peer takes directly; NULL: nothing, the veth transmits
 *
 * Caller holds peer.c's lock, which orders the writes. An entry that stays
 * is rewritten in place, with one store: the TC hook reads either word.
 *
 * Return: 0, -ENOENT when the module holds no peers map, or the map's error
 * (then no entry is left for @ifindex: full or not, the frame is safe).
 */
int xdp_flow_dp_peer_write(u32 ifindex, const union xdp_flow_peer *peer)
{
	return xdp_flow_dp_word_write(&xdp_flow_peers_map, ifindex,
				      peer ? &peer->word : NULL);
}

/**
 * xdp_flow_dp_egress_write() - say whether XDP hook redirects to a device
 *	may go to its ndo_xdp_xmit
 * @ifindex: the device, in init_net
 * @empty: its egress path is empty; false: redirects there go to the stack
 *
 * Caller holds peer.c's lock, which orders the writes.
 *
 * Return: 0, -ENOENT when the module holds no egress map, or the map's
 * error (then no entry is left for @ifindex: the frame goes to the stack).
 */
int xdp_flow_dp_egress_write(u32 ifindex, bool empty)
{
	static const u64 word = XDP_FLOW_EGRESS_EMPTY;

	return xdp_flow_dp_word_write(&xdp_flow_egress_map, ifindex,
				      empty ? &word : NULL);
}

/**
 * xdp_flow_dp_ingress_write() - say whether redirects and mirrors into a
 *	device's receive path may be the TC hook's
 * @ifindex: the device, in init_net
 * @in: its address; NULL: no entry, such frames go to the stack
 *
 * Caller holds peer.c's lock, which orders the writes.
 *
 * Return: 0, -ENOENT when the module holds no ingress map, or the map's
 * error (then no entry is left for @ifindex: the frame goes to the stack).
 */
int xdp_flow_dp_ingress_write(u32 ifindex, const union xdp_flow_ingress *in)
{
	return xdp_flow_dp_word_write(&xdp_flow_ingress_map, ifindex,
				      in ? &in->word : NULL);
}

/* Removes every entry of the map held in @slot. */
static void xdp_flow_dp_clear(struct bpf_map **slot)
{
	struct bpf_map *map;
	u32 key;

	mutex_lock(&xdp_flow_dp_lock);
	map = *slot;
	while (map) {
		int err;

		rcu_read_lock();
		err = map->ops->map_get_next_key(map, NULL, &key);
		if (!err)
			err = map->ops->map_delete_elem(map, &key);
		rcu_read_unlock();
		if (err)
			break;
		cond_resched();
	}
	mutex_unlock(&xdp_flow_dp_lock);
}

/**
 * xdp_flow_dp_tx_clear() - remove every peers, egress and ingress entry
 *
 * Caller holds peer.c's lock. Entries a previous module or helper left
 * in a pinned map go too.
 */
void xdp_flow_dp_tx_clear(void)
{
	xdp_flow_dp_clear(&xdp_flow_egress_map);
	xdp_flow_dp_clear(&xdp_flow_peers_map);
	xdp_flow_dp_clear(&xdp_flow_ingress_map);
}

/**
 * xdp_flow_jiffies_to_ns() - when the XDP program last counted, as a clock
 * @j: a counter's @lastused: jiffies_64 at the last packet, made odd; 0 for
 *	never
 *
 * The XDP program keeps jiffies, which it reads with one load; user space
 * is told CLOCK_MONOTONIC time.
 *
 * Return: the CLOCK_MONOTONIC time in ns that @j stands for, 0 for never.
 */
u64 xdp_flow_jiffies_to_ns(u64 j)
{
	u64 now = get_jiffies_64(), ns = ktime_get_ns(), ago;

	if (!j)
		return 0;
	ago = time_after64(j, now) ? 0 : jiffies64_to_nsecs(now - j);
	return ns > ago ? ns - ago : 1;
}

/**
 * xdp_flow_counters_read() - a rule's counters, summed over the CPUs
 * @id: the rule id
 * @st: filled in: the totals the XDP program counted under @id
 *
 * Reads the map without the helper; the helper zeroes an id's counters
 * before it gives the id to a new rule. An id without counters yet (its
 * chunk is made as its rule goes in) reads as zero.
 *
 * Return: 0, or -ENOENT when the module holds no counters map.
 */
int xdp_flow_counters_read(u32 id, struct xdp_flow_stats *st)
{
	u32 slot = id / XDP_FLOW_COUNTER_CHUNK;
	const struct xdp_flow_counter *c;
	struct bpf_map *map, *chunk;
	struct bpf_array *array;
	void __percpu *pptr;
	u64 j, last = 0;
	int cpu;

	memset(st, 0, sizeof(*st));
	st->id = id;
	mutex_lock(&xdp_flow_dp_lock);
	map = xdp_flow_counters_map;
	if (!map || slot >= map->max_entries) {
		mutex_unlock(&xdp_flow_dp_lock);
		return -ENOENT;
	}
	/*
	 * The helper makes a chunk before the first rule of its ids is in
	 * XDP and frees it after the last one went, which is after the
	 * module asked for that rule's removal: the module reads the
	 * counters of rules it holds in XDP only. An array of maps gives
	 * its map under RCU: hold it while reading.
	 */
	rcu_read_lock();
	chunk = map->ops->map_lookup_elem(map, &slot);
	if (chunk)
		chunk = bpf_map_inc_not_zero(chunk);
	rcu_read_unlock();
	if (IS_ERR_OR_NULL(chunk)) {
		/* No chunk: no rule counted under @id. */
		mutex_unlock(&xdp_flow_dp_lock);
		return 0;
	}
	array = container_of(chunk, struct bpf_array, map);
	pptr = array->pptrs[(id % XDP_FLOW_COUNTER_CHUNK) & array->index_mask];
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(pptr, cpu);
		st->packets += READ_ONCE(c->packets);
		st->bytes += READ_ONCE(c->bytes);
		j = READ_ONCE(c->lastused);
		/* The later, not the larger: jiffies_64 wraps after boot. */
		if (j && (!last || time_after64(j, last)))
			last = j;
	}
	st->lastused_ns = xdp_flow_jiffies_to_ns(last);
	bpf_map_put(chunk);
	mutex_unlock(&xdp_flow_dp_lock);
	return 0;
}

/**
 * xdp_flow_gate_set() - close or open the gate
 * @closed: every frame goes to the stack from now on (a rule change reached
 *	no helper), or no longer (a helper has replayed every rule)
 *
 * May be called in any context but hard IRQ.
 */
void xdp_flow_gate_set(bool closed)
{
	bool was;

	spin_lock_bh(&xdp_flow_gate_lock);
	was = xdp_flow_gate_closed;
	xdp_flow_gate_closed = closed;
	xdp_flow_gate_write();
	spin_unlock_bh(&xdp_flow_gate_lock);
	if (closed && !was)
		pr_warn("xdp_flow: a rule change reached no helper: every frame goes to the stack until a helper has replayed the rules\n");
	else if (!closed && was)
		pr_info("xdp_flow: the helper has every rule again: offloaded rules run in XDP again\n");
}

/**
 * xdp_flow_gate_limit_set() - the lowest order XDP may not act on
 * @order: that order, or XDP_FLOW_NO_LIMIT
 *
 * Frames whose rule has @order or a higher one go to the stack. May be
 * called in any context but hard IRQ.
 */
void xdp_flow_gate_limit_set(u64 order)
{
	spin_lock_bh(&xdp_flow_gate_lock);
	xdp_flow_gate_limit = order;
	xdp_flow_gate_write();
	spin_unlock_bh(&xdp_flow_gate_lock);
}

/**
 * xdp_flow_gate_hold() - hold a rule back by itself, or let it go
 * @id: the rule id
 * @hold: one more change holds it (true), or one less (false)
 *
 * While the gate is not open (a limit is set), frames of a rule some
 * change holds go to the stack. May be called in any context but hard IRQ.
 */
void xdp_flow_gate_hold(u32 id, bool hold)
{
	u32 *count = NULL;

	spin_lock_bh(&xdp_flow_gate_lock);
	/* An array's lookup is the value's address, in any context. */
	if (xdp_flow_held_map)
		count = xdp_flow_held_map->ops->map_lookup_elem(xdp_flow_held_map,
								&id);
	/* A map taken since the change began starts at 0. */
	if (count && (hold || *count))
		WRITE_ONCE(*count, hold ? *count + 1 : *count - 1);
	spin_unlock_bh(&xdp_flow_gate_lock);
}

/**
 * xdp_flow_gate_is_closed() - whether every frame goes to the stack
 *
 * Return: true while the gate is closed.
 */
bool xdp_flow_gate_is_closed(void)
{
	return READ_ONCE(xdp_flow_gate_closed);
}

/**
 * xdp_flow_dp_maps_release() - let the maps go, at module exit
 */
void xdp_flow_dp_maps_release(void)
{
	struct bpf_map *held;

	mutex_lock(&xdp_flow_dp_lock);
	spin_lock_bh(&xdp_flow_gate_lock);
	xdp_flow_gate_word = NULL;
	held = xdp_flow_held_map;
	xdp_flow_held_map = NULL;
	spin_unlock_bh(&xdp_flow_gate_lock);
	if (xdp_flow_gate_map)
		bpf_map_put(xdp_flow_gate_map);
	if (held)
		bpf_map_put(held);
	if (xdp_flow_counters_map)
		bpf_map_put(xdp_flow_counters_map);
	if (xdp_flow_peers_map)
		bpf_map_put(xdp_flow_peers_map);
	if (xdp_flow_egress_map)
		bpf_map_put(xdp_flow_egress_map);
	if (xdp_flow_ingress_map)
		bpf_map_put(xdp_flow_ingress_map);
	xdp_flow_gate_map = NULL;
	xdp_flow_counters_map = NULL;
	xdp_flow_peers_map = NULL;
	xdp_flow_egress_map = NULL;
	xdp_flow_ingress_map = NULL;
	mutex_unlock(&xdp_flow_dp_lock);
}
