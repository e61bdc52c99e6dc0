// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the gate (XDP_FLOW_GATE_NAME). Offloaded traffic keeps flowing
 * while no helper runs, on the tables the last helper left; but a rule
 * change that reaches no helper would leave those tables wrong. The module
 * then closes the gate, a word in a map of the XDP program that it writes
 * itself, and every frame goes to the stack, where TC has the change. A
 * helper that has replayed every rule opens it again.
 *
 * The module takes the map from the program the registered helper names in
 * HELLO, and holds it: the map is pinned, so every later helper's program
 * uses the same one.
 */
#include <linux/bpf.h>
#include <linux/err.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include "xdp_flow.h"

static DEFINE_MUTEX(xdp_flow_gate_lock);
static struct bpf_map *xdp_flow_gate_map;
static u32 *xdp_flow_gate_word;
static bool xdp_flow_gate_closed;

static bool xdp_flow_gate_is_ours(const struct bpf_map *map)
{
	return map->map_type == BPF_MAP_TYPE_ARRAY &&
	       map->key_size == sizeof(u32) && map->value_size == sizeof(u32) &&
	       map->max_entries == 1 &&
	       !strncmp(map->name, XDP_FLOW_GATE_NAME, sizeof(map->name));
}

/**
 * xdp_flow_gate_take() - find the gate among the maps of the helper's program
 * @prog_fd: the helper's XDP program, a descriptor of the calling process
 *
 * Called in the registered helper's context. The gate keeps the state the
 * module gave it last.
 *
 * Return: 0, or a negative errno when @prog_fd is no program of ours.
 */
int xdp_flow_gate_take(u32 prog_fd)
{
	struct bpf_map *map = NULL, *old;
	struct bpf_prog *prog;
	u32 i, zero = 0;
	u32 *word;

	prog = bpf_prog_get_type_dev(prog_fd, BPF_PROG_TYPE_XDP, false);
	if (IS_ERR(prog))
		return PTR_ERR(prog);
	mutex_lock(&prog->aux->used_maps_mutex);
	for (i = 0; i < prog->aux->used_map_cnt; i++) {
		if (xdp_flow_gate_is_ours(prog->aux->used_maps[i])) {
			map = prog->aux->used_maps[i];
			bpf_map_inc(map);
			break;
		}
	}
	mutex_unlock(&prog->aux->used_maps_mutex);
	bpf_prog_put(prog);
	if (!map)
		return -ENOENT;

	/* An array's values stay where they are while the map lives. */
	rcu_read_lock();
	word = map->ops->map_lookup_elem(map, &zero);
	rcu_read_unlock();
	if (!word) {
		bpf_map_put(map);
		return -ENOENT;
	}

	mutex_lock(&xdp_flow_gate_lock);
	old = xdp_flow_gate_map;
	xdp_flow_gate_map = map;
	xdp_flow_gate_word = word;
	WRITE_ONCE(*word, xdp_flow_gate_closed);
	mutex_unlock(&xdp_flow_gate_lock);
	if (old)
		bpf_map_put(old);
	return 0;
}

/**
 * xdp_flow_gate_set() - close or open the gate
 * @closed: every frame goes to the stack from now on (a rule change reached
 *	no helper), or no longer (a helper has replayed every rule)
 */
void xdp_flow_gate_set(bool closed)
{
	bool was;

	mutex_lock(&xdp_flow_gate_lock);
	was = xdp_flow_gate_closed;
	xdp_flow_gate_closed = closed;
	if (xdp_flow_gate_word)
		WRITE_ONCE(*xdp_flow_gate_word, closed);
	mutex_unlock(&xdp_flow_gate_lock);
	if (closed && !was)
		pr_warn("xdp_flow: a rule change reached no helper: every frame goes to the stack until a helper has replayed the rules\n");
	else if (!closed && was)
		pr_info("xdp_flow: the helper has every rule again: offloaded rules run in XDP again\n");
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
 * xdp_flow_gate_release() - let the gate's map go, at module exit
 */
void xdp_flow_gate_release(void)
{
	mutex_lock(&xdp_flow_gate_lock);
	if (xdp_flow_gate_map)
		bpf_map_put(xdp_flow_gate_map);
	xdp_flow_gate_map = NULL;
	xdp_flow_gate_word = NULL;
	mutex_unlock(&xdp_flow_gate_lock);
}
