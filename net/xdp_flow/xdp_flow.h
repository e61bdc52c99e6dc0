/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow: what the files of the module share.
 *
 * First the lock and the types that several files use; then what each
 * file offers the others, under its name, the files from the top down:
 * each calls only files listed after it (main.c, which starts and stops
 * them, is above them all).
 */
#ifndef _XDP_FLOW_H
#define _XDP_FLOW_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rhashtable-types.h>
#include <linux/slab.h>
#include <linux/types.h>
#include <net/flow_offload.h>
#include <net/genetlink.h>
#include <uapi/linux/xdp_flow.h>

/* Built out of tree for kernels older than kmalloc_obj() and kzalloc_obj(). */
#ifndef kzalloc_obj
#define kmalloc_obj(P, gfp)	kmalloc(sizeof(P), gfp)
#define kzalloc_obj(P, gfp)	kzalloc(sizeof(P), gfp)
#endif

/* Serialises the device, binding and rule tables and every exchange with the
 * helper. Taken by TC's offload callbacks, which may hold rtnl; so whoever
 * holds it must never wait for anything that needs rtnl (XDP attach).
 */
extern struct mutex xdp_flow_lock;

/**
 * struct xdp_flow_peer_tx - what enabling a veth took from its peer
 * @wanted: XDP_FLOW_PEER_TX_OFF features turned off
 * @fixed: XDP_FLOW_PEER_TX_OFF features taken out of its hw_features
 */
struct xdp_flow_peer_tx {
	netdev_features_t wanted;
	netdev_features_t fixed;
};

/**
 * struct xdp_flow_dev - a device offload is enabled on
 * @list: in xdp_flow_devs
 * @ifindex: the device
 * @state: enum xdp_flow_dev_state
 * @xdp_mode: enum xdp_flow_xdp_mode, the hook (never AUTO)
 * @why: why this hook, for xdp-flow status
 * @via: enum xdp_flow_switch, what enabled it
 * @err: the helper's error when @state is XDP_FLOW_DEV_STATE_ERROR
 * @nr_offloaded: offloaded rules installed for the device
 * @attached: the datapath is (being) attached: the device had offloaded
 *	rules when xdp_flow_attach_work last looked, or lost the last one
 *	less than XDP_FLOW_LINGER_MS before
 * @idle_since: when the device lost its last offloaded rule (jiffies)
 * @peer_tx: VLAN insertion and checksum offloads turned off on the
 *	device's veth peer while offload is enabled, to restore
 * @shield_id: the rule id of the device's shield (see XDP_FLOW_MAX_SHIELDS)
 * @shield_order: the order of the shield the helper holds, or
 *	XDP_FLOW_NO_SHIELD
 * @nr_waiting: rules of the device the helper had no room for
 * @lost_order: the lowest order of the device's rules the module had no
 *	memory to keep, or XDP_FLOW_NO_SHIELD: its shield stays there at most
 * @replaying: being enabled: its rules are being offered again, and the
 *	enable installs them all
 */
struct xdp_flow_dev {
	struct list_head list;
	int ifindex;
	u32 state;
	u32 xdp_mode;
	const char *why;
	u32 via;
	int err;
	unsigned int nr_offloaded;
	bool attached;
	unsigned long idle_since;
	struct xdp_flow_peer_tx peer_tx;
	u32 shield_id;
	u64 shield_order;
	unsigned int nr_waiting;
	u64 lost_order;
	bool replaying;
};

#define XDP_FLOW_NO_SHIELD	U64_MAX

/* An entry's rule.id while it has none: only rules of enabled devices do. */
#define XDP_FLOW_NO_ID		U32_MAX

/**
 * struct xdp_flow_binding - one flow block of one device the module is bound to
 * @list: in xdp_flow_bindings
 * @dev: the device
 * @ifindex: its ifindex
 * @block: TC's (or nftables') flow block
 * @entries: the rules offered on this block while offload was enabled on
 *	the device, or since (struct xdp_flow_entry)
 * @cookies: the same rules by TC's (or nftables') cookie
 * @places: TC's rules offered while offload is not enabled on the device:
 *	only their place in TC's order (struct xdp_flow_place)
 * @place_cookies: the same by TC's cookie
 * @others: the chains and prios of TC's classifiers other than flower, and
 *	their rules (struct xdp_flow_other, classifiers.c)
 * @masks: flower masks of those rules, to rank rules of equal prio, by
 *	chain, prio and mask (struct xdp_flow_mask_ref): one per prio at least,
 *	so a table that grows (10,000 prios are common)
 * @next_rank: rank of the next new flower mask
 * @unseen_rules: the block may hold rules the module was never offered
 *	(it existed before the module was loaded)
 * @nft: the block of an nftables netdev ingress chain, not TC's
 * @ft: the block of an nftables flowtable (TC_SETUP_FT), not TC's
 * @prio: nftables: the chain's or the flowtable's hook priority
 * @owner: nftables: the base chain or the flowtable (compared, never
 *	dereferenced: what its ingress hook has as priv)
 */
struct xdp_flow_binding {
	struct list_head list;
	struct net_device *dev;
	int ifindex;
	struct flow_block *block;
	struct list_head entries;
	struct rhashtable cookies;
	struct list_head places;
	struct rhashtable place_cookies;
	struct list_head others;
	struct rhashtable masks;
	u32 next_rank;
	bool unseen_rules;
	bool nft;
	bool ft;
	int prio;
	void *owner;
};

/**
 * enum xdp_flow_entry_kind - what the XDP program does with a rule
 * @XDP_FLOW_ENTRY_OFFLOAD: executes it; TC shows it in_hw
 * @XDP_FLOW_ENTRY_SOFTWARE: TC executes it; XDP sends what might match it
 *	to the stack, so that no offloaded rule of a higher prio overtakes it
 */
enum xdp_flow_entry_kind {
	XDP_FLOW_ENTRY_OFFLOAD,
	XDP_FLOW_ENTRY_SOFTWARE,
};

/**
 * struct xdp_flow_entry - a rule offered by TC, offloaded or not
 * @list: in the binding's entries
 * @node: in the binding's cookies
 * @binding: the block and device it was offered on
 * @cookie: TC's cookie
 * @mask: the flower mask it belongs to (ranks equal prios)
 * @kind: enum xdp_flow_entry_kind
 * @installed: the helper has it in the XDP tables
 * @waiting: the helper had no room for it: its device's shield hands what
 *	it may match to the stack until it is in
 * @stale: a helper may hold it though the module asked for its removal
 *	(no helper answered): the next helper removes it first
 * @flight: its RULE_ADD is posted and the helper has not done it yet
 *	(see struct xdp_flow_flight); under xdp_flow_flight_lock
 * @rule: the rule as the helper receives it; @rule.id is ours
 * @why: why a software rule is not executed in XDP (a message of the
 *	module's own, as TC's extack gets it), for xdp-flow show
 * @l4_src_range: the rule's source port range, also when @rule, being a
 *	software rule, leaves it out
 * @l4_dst_range: likewise, destination ports
 * @hw: totals the helper reported last (packets, bytes, last use)
 * @base: totals carried over from before the helper's counters restarted
 * @reported: what TC has already been told
 */
struct xdp_flow_entry {
	struct list_head list;
	struct rhash_head node;
	struct xdp_flow_binding *binding;
	unsigned long cookie;
	struct xdp_flow_mask_ref *mask;
	enum xdp_flow_entry_kind kind;
	bool installed;
	bool waiting;
	bool stale;
	struct xdp_flow_flight *flight;
	struct xdp_flow_rule rule;
	const char *why;
	struct xdp_flow_port_range l4_src_range;
	struct xdp_flow_port_range l4_dst_range;
	struct xdp_flow_stats hw;
	struct xdp_flow_stats base;
	struct xdp_flow_stats reported;
};

/**
 * struct xdp_flow_mask_key - what tells flower masks of a binding apart
 * @fl_mask: flower's mask (identity only, never dereferenced)
 * @chain: TC chain
 * @prio: TC prio
 */
struct xdp_flow_mask_key {
	const void *fl_mask;
	u32 chain;
	u32 prio;
};

/**
 * struct xdp_flow_mask_ref - a flower mask seen on a binding
 * @node: in the binding's masks
 * @key: chain, prio and mask
 * @binding: the binding
 * @refcnt: rules of ours that use it
 * @rank: order of creation, which is the order flower tries its masks in
 */
struct xdp_flow_mask_ref {
	struct rhash_head node;
	struct xdp_flow_mask_key key;
	struct xdp_flow_binding *binding;
	unsigned int refcnt;
	u32 rank;
};

/**
 * struct xdp_flow_place - a TC rule of a device where offload is not enabled
 * @list: in the binding's places
 * @node: in the binding's place_cookies
 * @cookie: TC's cookie
 * @mask: its flower mask, which ranks it among the rules of its prio
 * @packets: packets XDP counted for the rule that TC was not told of (TC
 *	asks only for the counters of rules in_hw, and offload was disabled
 *	since); they reach TC once the rule is in XDP again
 * @bytes: their bytes
 *
 * TC offers a block's rules to a driver only as it binds the block, and
 * what it offers again later (reoffload) does not say in which order
 * flower tries its masks. So the module is bound to every block and keeps
 * this much of each rule: enough for enabling the device to offload them
 * all in TC's order. The rest is made only then (xdp_flow_places_take()).
 */
struct xdp_flow_place {
	struct list_head list;
	struct rhash_head node;
	unsigned long cookie;
	struct xdp_flow_mask_ref *mask;
	u64 packets;
	u64 bytes;
};

/**
 * struct xdp_flow_all - a device's first rule that hands every frame
 *	reaching it to the stack (xdp_flow_dev_first_all())
 * @order: its order (the TC prio in the upper half)
 * @kind: its classifier: "matchall", "u32", "bpf", "flower" or "nftables"
 * @before: offloaded rules of chain 0 that come before it; 0 when nothing
 *	of the device runs in XDP
 */
struct xdp_flow_all {
	u64 order;
	const char *kind;
	unsigned int before;
};

/**
 * struct xdp_flow_visitor - what xdp_flow_walk_entries() calls
 * @fn: called for each entry; a non-zero return stops the walk
 * @arg: passed to @fn
 */
struct xdp_flow_visitor {
	int (*fn)(struct xdp_flow_entry *entry, void *arg);
	void *arg;
};

/**
 * struct xdp_flow_walk_pos - where a walk of the entries stopped
 * @n: entries visited so far
 * @binding: the binding of the last one (compared, never dereferenced)
 * @cookie: the last one's cookie
 */
struct xdp_flow_walk_pos {
	unsigned long n;
	const void *binding;
	unsigned long cookie;
};

/**
 * struct xdp_flow_target - the device a rule is offered on, as translation
 *	needs to know it
 * @dev: the device (valid while its block is bound)
 * @ifindex: its ifindex
 * @vlan_hidden: XDP on @dev may see a tagged frame without its tag (see
 *	xdp_flow_dev_hides_vlan())
 * @nft: the rule comes from nftables, whose protocol is skb->protocol
 *	after the stack took the outer VLAN tag off (0: any)
 * @tc_hook: the device runs the datapath at TC ingress, on skbs (rewrites
 *	other than VLAN ones stay in software; any device can be redirected to)
 */
struct xdp_flow_target {
	struct net_device *dev;
	int ifindex;
	bool vlan_hidden;
	bool nft;
	bool tc_hook;
};

/**
 * struct xdp_flow_ft_flow - what a flowtable's offer leaves out, read from
 *	the flow it offers
 * @conn: the flow's key, the same for both directions (non-zero)
 * @mtu: the MTU of the flow's route in this direction
 * @encaps: the VLAN tags and PPPoE sessions its frames arrive in (those
 *	of the flow's tuple that the device does not add itself)
 * @vlan_proto: the VLAN tag's protocol, 0 for none
 * @vlan_tci: its TCI (the software path matches the whole of it)
 * @pppoe: the frames arrive in a PPPoE session
 * @pppoe_sid: that session's id
 * @torn_down: the flowtable tore the flow down (xdp_flow_ft_torn_down())
 */
struct xdp_flow_ft_flow {
	u64 conn;
	u16 mtu;
	u8 encaps;
	__be16 vlan_proto;
	u16 vlan_tci;
	bool pppoe;
	u16 pppoe_sid;
	bool torn_down;
};

/**
 * struct xdp_flow_link - where requests go, and whom to tell that the
 *	helper misbehaves
 * @state: enum xdp_flow_helper_state
 * @portid: the generic netlink port the helper said HELLO from, while
 *	RUNNING
 * @progressed: a progress report came before HELLO
 * @family: the generic netlink family requests go out on
 * @broken: restarts the helper (helper.c)
 *
 * helper.c writes @state, @portid and @progressed under its lock; others
 * read them with READ_ONCE().
 */
struct xdp_flow_link {
	u32 state;
	u32 portid;
	bool progressed;
	const struct genl_family *family;
	void (*broken)(const char *why);
};

/* genl.c: the generic netlink family */
extern struct genl_family xdp_flow_genl_family;
int xdp_flow_genl_init(void);
void xdp_flow_genl_exit(void);

/* switch.c: the ethtool switch */
int xdp_flow_switch_init(void);
void xdp_flow_switch_exit(void);
int xdp_flow_switch_enable(struct net_device *dev, u32 xdp_mode,
			   struct netlink_ext_ack *extack);
int xdp_flow_switch_disable(int ifindex, struct netlink_ext_ack *extack);
int xdp_flow_switch_replay(void);

/* offload.c: the rule half, started and stopped */
int xdp_flow_offload_init(void);
void xdp_flow_offload_exit(void);

/* block.c: the indirect flow-block driver */
int xdp_flow_block_init(void);
void xdp_flow_block_exit(void);

/* dev.c: offload on a device */
int xdp_flow_dev_enable(struct net_device *dev, u32 xdp_mode, u32 via,
			struct netlink_ext_ack *extack);
int xdp_flow_dev_disable(int ifindex, struct netlink_ext_ack *extack);
int xdp_flow_dev_init(void);
void xdp_flow_dev_exit(void);

/* replay.c: everything, to a new helper */
int xdp_flow_replay(void);

/* rules.c: a rule offered or withdrawn */
int xdp_flow_entry_translate(struct xdp_flow_entry *entry,
			     struct flow_cls_offload *f,
			     const struct xdp_flow_dev *xdev,
			     struct netlink_ext_ack *report);
int xdp_flow_cls_replace(struct xdp_flow_binding *b, struct flow_cls_offload *f);
int xdp_flow_cls_destroy(struct xdp_flow_binding *b, struct flow_cls_offload *f);

/* stats.c: the counters of offloaded rules */
void xdp_flow_entry_refresh_stats(struct xdp_flow_entry *entry);
int xdp_flow_cls_stats(struct xdp_flow_binding *b, struct flow_cls_offload *f,
		       bool refresh);
void xdp_flow_refresh_all(int ifindex);
int xdp_flow_nft_stats(struct xdp_flow_binding *b, struct flow_cls_offload *f);
void xdp_flow_nft_stats_later(void);
void xdp_flow_stats_exit(void);

/* show.c: the table as xdp-flow shows it */
unsigned int xdp_flow_rule_count(void);
bool xdp_flow_dev_first_all(const struct xdp_flow_dev *xdev,
			    struct xdp_flow_all *all);
int xdp_flow_walk_entries(int ifindex, struct xdp_flow_walk_pos *pos,
			  const struct xdp_flow_visitor *v);

/* install.c: installing rules in the helper */
bool xdp_flow_entry_set_installed(struct xdp_flow_entry *entry, bool installed);
int xdp_flow_entry_install(struct xdp_flow_entry *entry,
			   struct netlink_ext_ack *extack);
void xdp_flow_entry_refused(struct xdp_flow_entry *entry, int err);
void xdp_flow_flight_forget(struct xdp_flow_entry *entry);
void xdp_flow_flights_refused_handle(void);
unsigned int xdp_flow_in_flight(void);
bool xdp_flow_entry_in_flight(struct xdp_flow_entry *entry);
int xdp_flow_entry_post(struct xdp_flow_entry *entry, bool offer);
void xdp_flow_entry_uninstall(struct xdp_flow_entry *entry);
void xdp_flow_entry_free(struct xdp_flow_entry *entry);
void xdp_flow_retry_waiting(void);
int xdp_flow_install_all(int ifindex);
void xdp_flow_uninstall_all(int ifindex);
void xdp_flow_flights_exit(void);

/* shield.c: shields and the rules that wait for room */
extern unsigned int xdp_flow_nr_waiting;
int xdp_flow_shield_send(struct xdp_flow_dev *xdev, u64 order);
void xdp_flow_shield_set(struct xdp_flow_dev *xdev, u64 order);
u64 xdp_flow_waiting_min(const struct xdp_flow_dev *xdev);
void xdp_flow_dev_lost(struct xdp_flow_dev *xdev,
		       const struct flow_cls_offload *f);
void xdp_flow_entry_wait(struct xdp_flow_entry *entry);
void xdp_flow_entry_unwait(struct xdp_flow_entry *entry);
void xdp_flow_shield_free(struct xdp_flow_dev *xdev);

/* attach.c: the datapath on a device */
extern bool xdp_flow_attach_due;
void xdp_flow_attach_wait(int passes);
void xdp_flow_attach_now(void);
void xdp_flow_attach_after_linger(void);
int xdp_flow_attach_passes_read(void);
void xdp_flow_attach_flush(void);
void xdp_flow_attach_exit(void);

/* table.c: the rule table */
extern struct list_head xdp_flow_devs;
extern struct list_head xdp_flow_bindings;
struct xdp_flow_dev *xdp_flow_dev_find(int ifindex);
void xdp_flow_undelivered(void);
void xdp_flow_stale_link(int ifindex);
int xdp_flow_remove_stale(void);
void xdp_flow_stale_free(void);
void xdp_flow_table_stop(void);
struct xdp_flow_mask_ref *xdp_flow_mask_get(struct xdp_flow_binding *b,
					    u32 chain, u16 prio,
					    const void *fl_mask);
void xdp_flow_mask_put(struct xdp_flow_mask_ref *ref);
void xdp_flow_id_free(u32 id);
void xdp_flow_id_put(u32 id, bool held);
int xdp_flow_id_get(void);
int xdp_flow_shield_id_get(void);
unsigned int xdp_flow_ids_in_use(void);
struct xdp_flow_entry *xdp_flow_entry_find(struct xdp_flow_binding *b,
					   unsigned long cookie);
struct xdp_flow_entry *xdp_flow_entry_alloc(struct xdp_flow_binding *b,
					    unsigned long cookie);
void xdp_flow_entry_dealloc(struct xdp_flow_entry *entry);
int xdp_flow_entry_insert(struct xdp_flow_entry *entry);
void xdp_flow_entry_remove(struct xdp_flow_entry *entry);
struct xdp_flow_place *xdp_flow_place_find(struct xdp_flow_binding *b,
					   unsigned long cookie);
void xdp_flow_place_free(struct xdp_flow_binding *b,
			 struct xdp_flow_place *place);
const void *xdp_flow_fl_mask(const struct flow_cls_offload *f);
int xdp_flow_place_add(struct xdp_flow_binding *b, struct flow_cls_offload *f);
struct xdp_flow_place *xdp_flow_place_alloc(void);
void xdp_flow_place_dealloc(struct xdp_flow_place *place);
int xdp_flow_place_insert(struct xdp_flow_binding *b,
			  struct xdp_flow_place *place);
u64 xdp_flow_order(const struct xdp_flow_entry *entry);
void xdp_flow_entry_to_software(struct xdp_flow_entry *entry);
bool xdp_flow_range_conflict(const struct xdp_flow_entry *entry);
int xdp_flow_order_cmp(const void *a, const void *b);
struct xdp_flow_entry **xdp_flow_sorted_entries(int ifindex, unsigned int *n);
int xdp_flow_binding_tables_init(struct xdp_flow_binding *b);
void xdp_flow_binding_tables_destroy(struct xdp_flow_binding *b);
int xdp_flow_table_init(void);
void xdp_flow_table_exit(void);

/* translate.c: a flow_rule as the rule the XDP program runs */
int xdp_flow_translate(struct flow_cls_offload *f,
		       const struct xdp_flow_target *t,
		       struct xdp_flow_rule *rule,
		       struct netlink_ext_ack *extack);

bool xdp_flow_ft_torn_down(unsigned long cookie);
int xdp_flow_translate_ft(struct flow_cls_offload *f,
			  const struct xdp_flow_target *t,
			  struct xdp_flow_rule *rule,
			  struct netlink_ext_ack *extack);
int xdp_flow_translate_other(struct flow_cls_offload *f,
			     const struct xdp_flow_target *t,
			     struct xdp_flow_rule *rule,
			     struct netlink_ext_ack *extack);

/* match.c: the XDP key of a rule */
const char *xdp_flow_match(struct flow_rule *fr, __be16 proto, u32 chain,
			   const struct xdp_flow_target *t,
			   struct xdp_flow_rule *rule);
const char *xdp_flow_match_ports_range(struct flow_rule *fr,
				       struct xdp_flow_rule *rule);

/* actions.c: the XDP actions of a rule (tunnel.c: its tunnel_key actions) */
const char *xdp_flow_actions(struct flow_rule *fr,
			     const struct xdp_flow_target *t, u32 classid,
			     struct xdp_flow_rule *rule,
			     struct netlink_ext_ack *extack);
const char *xdp_flow_ft_actions(struct flow_rule *fr,
				const struct xdp_flow_target *t,
				const struct xdp_flow_ft_flow *flow,
				bool v6, struct xdp_flow_rule *r);

/* classifiers.c: the rules of classifiers other than flower */
u8 xdp_flow_other_cookie(unsigned long cookie);
const char *xdp_flow_other_name(u8 type);
bool xdp_flow_other_offer(struct xdp_flow_binding *b, enum tc_setup_type type,
			  void *type_data, struct flow_cls_offload *f);
bool xdp_flow_other_reoffer(enum tc_setup_type type, void *type_data,
			    struct flow_cls_offload *f);
void xdp_flow_others_free(struct xdp_flow_binding *b);

/* helper.c: the helper's life */
/* The helper's image (umh_blob.S), init data: later it is in a shmem file. */
extern const char xdp_flow_umh_start[], xdp_flow_umh_end[];
int xdp_flow_helper_init(const struct genl_family *family, int (*replay)(void));
void xdp_flow_helper_start(void);
void xdp_flow_helper_stop(void);
void xdp_flow_helper_exit(void);
int xdp_flow_helper_hello(u32 portid, u32 version, int prog_fd,
			  int tc_prog_fd, struct netlink_ext_ack *extack);
void xdp_flow_helper_status(u32 *state, pid_t *pid, u32 *restarts);

/* reply.c: the channel the helper's answers come on */
int xdp_flow_reply_init(void);
struct socket *xdp_flow_reply_open(void);
void xdp_flow_reply_exit(void);

/* requests.c: requests to the helper and their answers */

extern struct xdp_flow_link xdp_flow_link;
void xdp_flow_requests_init(const struct genl_family *family,
			    void (*broken)(const char *why));
void xdp_flow_requests_stop(void);
void xdp_flow_requests_exit(void);
void xdp_flow_requests_fail(int err);
int xdp_flow_helper_reply(struct nlattr **attrs);
u32 xdp_flow_helper_state(void);
bool xdp_flow_helper_running(void);
int xdp_flow_helper_call(u8 cmd, u32 ifindex, u32 rule_id, u32 xdp_mode,
			 const struct xdp_flow_rule *rule,
			 struct xdp_flow_stats *stats,
			 struct netlink_ext_ack *extack);
int xdp_flow_helper_post(u8 cmd, u32 ifindex, u32 xdp_mode);
int xdp_flow_helper_post_rule(u8 cmd, u32 rule_id,
			      const struct xdp_flow_rule *rule,
			      void (*posted)(void *arg, int err), void *arg);

/* peer.c: where a redirect may skip the transmit path */
int xdp_flow_peer_init(void);
void xdp_flow_peer_exit(void);
void xdp_flow_peers_resync(void);

/* dpmaps.c: the datapath's maps the module holds */
int xdp_flow_dp_maps_take(u32 prog_fd, int tc_prog_fd, bool *tx_taken);
u64 xdp_flow_jiffies_to_ns(u64 j);
int xdp_flow_counters_read(u32 id, struct xdp_flow_stats *st);
void xdp_flow_gate_set(bool closed);
/* No gate limit: XDP may act on rules of any order. */
#define XDP_FLOW_NO_LIMIT	U64_MAX
void xdp_flow_gate_limit_set(u64 order);
void xdp_flow_gate_hold(u32 id, bool hold);
bool xdp_flow_gate_is_closed(void);
void xdp_flow_dp_maps_release(void);
int xdp_flow_dp_peer_write(u32 ifindex, const union xdp_flow_peer *peer);
int xdp_flow_dp_egress_write(u32 ifindex, bool empty);
int xdp_flow_dp_ingress_write(u32 ifindex, const union xdp_flow_ingress *in);
void xdp_flow_dp_tx_clear(void);

/* netdev.c: what the module knows of devices */
/* VLAN tag insertion offloads: a veth's peer must not use them. */
#define XDP_FLOW_VLAN_TX (NETIF_F_HW_VLAN_CTAG_TX | NETIF_F_HW_VLAN_STAG_TX)
/* What a veth's peer does itself while offload is enabled on the veth. */
#define XDP_FLOW_PEER_TX_OFF (XDP_FLOW_VLAN_TX | NETIF_F_CSUM_MASK | \
			      NETIF_F_SCTP_CRC)

bool xdp_flow_is_veth(const struct net_device *dev);
bool xdp_flow_is_tunnel(const struct net_device *dev);
__be16 xdp_flow_tunnel_port(const struct net_device *dev);
struct net_device *xdp_flow_veth_peer(struct net_device *dev);
bool xdp_flow_can_xmit(const struct net_device *dev);
bool xdp_flow_dev_hides_vlan(struct net_device *dev, u32 xdp_mode);
void xdp_flow_peer_tx_off(struct net_device *dev, struct xdp_flow_peer_tx *tx);
void xdp_flow_peer_tx_restore(struct net_device *dev,
			      const struct xdp_flow_peer_tx *tx);

/* proto.c: the family's policy, the REPLY parser */
extern const struct nla_policy xdp_flow_policy[XDP_FLOW_ATTR_MAX + 1];
int xdp_flow_parse_reply(const void *buf, size_t len, struct nlattr **tb);

/* params.c: the module's parameters */
unsigned int xdp_flow_max_masks(void);
unsigned int xdp_flow_max_flows(void);
unsigned int xdp_flow_max_rules(void);
unsigned int xdp_flow_helper_timeout_ms(void);
const char *xdp_flow_umh_path(void);
int xdp_flow_umh_path_check(void);

#endif /* _XDP_FLOW_H */
