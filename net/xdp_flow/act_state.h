/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_flow: what the operations of a rule's actions share (actions.c and
 * tunnel.c, which makes the tunnel_key actions).
 */
#ifndef _XDP_FLOW_ACT_STATE_H
#define _XDP_FLOW_ACT_STATE_H

#include <linux/types.h>
#include <net/flow_offload.h>

#include "xdp_flow.h"

/*
 * What a flowtable's offer rewrites, gathered from its pedit-style
 * entries (net/netfilter/nf_flow_table_offload.c) before the XDP actions
 * are made from it. @eth and @l4 hold the rewritten bytes, @eth_set and
 * @l4_set which of them were written; @addr the addresses (IPv4 in word
 * 0), @addr_set the words written, source then destination; @first which
 * side (0 source, 1 destination) the offer rewrote first.
 */
struct xdp_flow_ft_edit {
	u8 eth[12];
	u16 eth_set;
	u8 l4[4];
	u8 l4_set;
	__be32 addr[2][4];
	u8 addr_set[2];
	int first;
};

/**
 * struct xdp_flow_act_state - what the operations of a rule's actions share
 * @t: the device the rule is offered on
 * @rule: the rule being made
 * @xa: TC: the XDP action the action at hand becomes
 * @rewrites: TC: a rewrite (pedit, csum, VLAN) came before
 * @vlan: TC: a VLAN action came before
 * @mirror: TC: a mirror came before
 * @tunnel: TC: a tunnel_key set came before: the outputs after it must be
 *	tunnel devices that take the metadata as TC gives it
 * @tun_port: TC: that tunnel_key set's destination port, 0 for none
 * @tun_opts: TC: that tunnel_key set has Geneve options: its outputs must
 *	be Geneve devices
 * @room: TC: the XDP actions free after @xa, for an operation that makes
 *	more than one
 * @extra: TC: the XDP actions the operation made after @xa
 * @unset: TC: a tunnel_key unset came before: the outputs after it must be
 *	veths, and the rule must end in a redirect
 * @done: TC: a terminal action (drop, pass, goto chain, redirect) came
 *	before
 * @edit: flowtable: what its rewrites write
 * @vlans: flowtable: its VLAN and PPPoE actions, the pops first
 * @npop: flowtable: the pops among them
 * @nvlan: flowtable: how many there are
 * @out: flowtable: the output device
 */
struct xdp_flow_act_state {
	const struct xdp_flow_target *t;
	struct xdp_flow_rule *rule;
	struct xdp_flow_action *xa;
	bool rewrites;
	bool vlan;
	bool mirror;
	bool tunnel;
	__be16 tun_port;
	bool tun_opts;
	unsigned int room;
	unsigned int extra;
	bool unset;
	bool done;
	struct xdp_flow_ft_edit edit;
	struct xdp_flow_action vlans[XDP_FLOW_MAX_ACTIONS];
	unsigned int npop;
	unsigned int nvlan;
	struct net_device *out;
};

/* Geneve options take an XDP action of their own. */
#define XDP_FLOW_OPTS_ROOM \
	"xdp_flow: cannot offload more than 8 actions (Geneve options count one more)"

/* tunnel.c: the tunnel_key actions */
const char *xdp_flow_tunnel_out(const struct net_device *dev,
				const struct xdp_flow_act_state *s);
const char *xdp_flow_unset_out(const struct net_device *dev,
			       const struct xdp_flow_act_state *s);
const char *xdp_flow_act_tunnel_set(const struct flow_action_entry *act,
				    struct xdp_flow_act_state *s);
const char *xdp_flow_act_tunnel_unset(const struct flow_action_entry *act,
				      struct xdp_flow_act_state *s);

#endif /* _XDP_FLOW_ACT_STATE_H */
