// SPDX-License-Identifier: GPL-2.0
/*
 * The flow tables: what a rule must be to be taken (rule_check()), with
 * the message that says why not. Also the shields' mask (shield_mask),
 * kept for them alone.
 *
 * Owns: nothing of the tables' state; reads their limits.
 * May call: nothing of the other table files.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tables.h"

#define KEY_FIELD(f) { #f, offsetof(struct xdp_flow_key, f), \
		       sizeof(((struct xdp_flow_key *)0)->f) }

static const struct {
	const char *name;
	size_t off, size;
} key_fields[] = {
	KEY_FIELD(ifindex), KEY_FIELD(eth_dst), KEY_FIELD(eth_src),
	KEY_FIELD(n_proto), KEY_FIELD(vlan_tpid), KEY_FIELD(vlan_tci),
	KEY_FIELD(cvlan_tpid), KEY_FIELD(cvlan_tci), KEY_FIELD(ip_proto),
	KEY_FIELD(ip_tos), KEY_FIELD(ip_ttl), KEY_FIELD(ip_frag),
	KEY_FIELD(tcp_flags), KEY_FIELD(ip_src), KEY_FIELD(ip_dst),
	KEY_FIELD(l4_src), KEY_FIELD(l4_dst), KEY_FIELD(arp_sha),
	KEY_FIELD(arp_tha), KEY_FIELD(chain), KEY_FIELD(pppoe_sid),
	KEY_FIELD(ppp_proto), KEY_FIELD(enc_key_id), KEY_FIELD(enc_tos),
	KEY_FIELD(enc_ttl), KEY_FIELD(enc_addr), KEY_FIELD(enc_opt_len),
	KEY_FIELD(enc_src), KEY_FIELD(enc_dst), KEY_FIELD(enc_opts),
};

static const char *key_field_name(size_t off)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(key_fields); i++)
		if (off >= key_fields[i].off &&
		    off < key_fields[i].off + key_fields[i].size)
			return key_fields[i].name;
	return "padding";
}

static bool action_is_terminal(__u32 id)
{
	return id == XDP_FLOW_ACTION_DROP || id == XDP_FLOW_ACTION_PASS ||
	       id == XDP_FLOW_ACTION_REDIRECT || id == XDP_FLOW_ACTION_GOTO ||
	       id == XDP_FLOW_ACTION_REDIRECT_INGRESS;
}

/*
 * A PPPoE action (action @i) works on a frame without VLAN tags: the
 * rule's match must say how many tags its frames carry (the outer tag's
 * protocol is matched, 0 for none), and as many VLAN pops must come
 * before it, and no push.
 */
static bool pppoe_untagged(const struct xdp_flow_rule *r, unsigned int i)
{
	unsigned int tags, pops = 0, k;

	if (r->mask.vlan_tpid != 0xffff ||
	    (r->key.vlan_tpid && r->mask.cvlan_tpid != 0xffff))
		return false;
	tags = !!r->key.vlan_tpid + !!r->key.cvlan_tpid;
	for (k = 0; k < i; k++) {
		if (r->actions[k].id == XDP_FLOW_ACTION_VLAN_PUSH)
			return false;
		pops += r->actions[k].id == XDP_FLOW_ACTION_VLAN_POP;
	}
	return pops >= tags;
}

/*
 * Whether the actions after a tunnel unset (action @i) keep the metadata
 * it dropped from everything but veths: only mirrors and rewrites, and a
 * redirect last (the datapath checks that the outputs are such veths).
 */
static bool unset_outputs_only(const struct xdp_flow_rule *r, unsigned int i)
{
	unsigned int k;

	for (k = i + 1; k < r->nr_actions; k++) {
		switch (r->actions[k].id) {
		case XDP_FLOW_ACTION_PASS:
		case XDP_FLOW_ACTION_GOTO:
		case XDP_FLOW_ACTION_DROP:
		case XDP_FLOW_ACTION_REDIRECT_INGRESS:
		case XDP_FLOW_ACTION_MIRROR_INGRESS:
		case XDP_FLOW_ACTION_TUNNEL_SET:
			return false;
		}
	}
	return r->actions[r->nr_actions - 1].id == XDP_FLOW_ACTION_REDIRECT;
}

/* Whether one of the actions before action @i is a mirror. */
static bool mirror_before(const struct xdp_flow_rule *r, unsigned int i)
{
	unsigned int k;

	for (k = 0; k < i; k++)
		if (r->actions[k].id == XDP_FLOW_ACTION_MIRROR ||
		    r->actions[k].id == XDP_FLOW_ACTION_MIRROR_INGRESS)
			return true;
	return false;
}

/* What the XDP program relies on, checked again here so that a rule it
 * cannot execute is refused rather than run: rewrites (pedit and csum
 * before VLAN actions) and mirrors, then exactly one terminal action
 * (drop, pass, goto or redirect), the last; rewrites only before a
 * redirect, or before a pass after a mirror; a tunnel set only in a rule
 * that ends in a redirect, its options right after it, a tunnel unset
 * only before rewrites, mirrors and a redirect. A flowtable's
 * rule starts with FT_ROUTE, has its NAT actions before VLAN and PPPoE
 * actions, no pedit or csum, and ends in a redirect; its PPPoE actions
 * work on untagged frames, and it pops PPPoE only from frames its match
 * takes as PPPoE.
 */
static int action_check(const struct xdp_flow_rule *r, unsigned int i,
			bool *vlan, char *msg, size_t len)
{
	const struct xdp_flow_action *a = &r->actions[i];
	bool last = i + 1 == r->nr_actions;
	bool ft = r->actions[0].id == XDP_FLOW_ACTION_FT_ROUTE;

	if (action_is_terminal(a->id) != last) {
		snprintf(msg, len,
			 last ? "action %u: the last action is not drop, pass, goto or redirect" :
				"action %u follows a terminal action",
			 last ? i : i + 1);
		return -EINVAL;
	}
	if (last && r->nr_actions > 1 && a->id != XDP_FLOW_ACTION_REDIRECT &&
	    a->id != XDP_FLOW_ACTION_REDIRECT_INGRESS &&
	    (a->id != XDP_FLOW_ACTION_PASS || !mirror_before(r, i))) {
		snprintf(msg, len, "action %u: rewrites end only in a redirect", i);
		return -EINVAL;
	}
	if (ft && (a->id == XDP_FLOW_ACTION_MANGLE ||
		   a->id == XDP_FLOW_ACTION_ADD ||
		   a->id == XDP_FLOW_ACTION_CSUM)) {
		snprintf(msg, len, "action %u: pedit or csum in a flowtable's rule", i);
		return -EINVAL;
	}
	switch (a->id) {
	case XDP_FLOW_ACTION_FT_ROUTE:
		if (i || !a->ft_route.mtu || last) {
			snprintf(msg, len,
				 "action %u: ft_route not first, without an mtu or without a redirect",
				 i);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_FT_PORTS:
	case XDP_FLOW_ACTION_FT_SRC_ADDR:
	case XDP_FLOW_ACTION_FT_DST_ADDR:
		if (!ft || *vlan) {
			snprintf(msg, len,
				 "action %u: ft nat without ft_route first, or after a vlan action",
				 i);
			return -EINVAL;
		}
		if (a->id == XDP_FLOW_ACTION_FT_PORTS &&
		    (!a->ft_ports.which ||
		     a->ft_ports.which & ~(XDP_FLOW_FT_SPORT | XDP_FLOW_FT_DPORT))) {
			snprintf(msg, len, "action %u: ft ports 0x%x", i,
				 a->ft_ports.which);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_DROP:
	case XDP_FLOW_ACTION_PASS:
	case XDP_FLOW_ACTION_GOTO:
		return 0;
	case XDP_FLOW_ACTION_REDIRECT:
	case XDP_FLOW_ACTION_MIRROR:
	case XDP_FLOW_ACTION_REDIRECT_INGRESS:
	case XDP_FLOW_ACTION_MIRROR_INGRESS:
		if (!a->ifindex) {
			snprintf(msg, len, "action %u: redirect or mirror without ifindex",
				 i);
			return -EINVAL;
		}
		if (a->id != XDP_FLOW_ACTION_REDIRECT && ft) {
			snprintf(msg, len, "action %u: mirror or ingress in a flowtable's rule",
				 i);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_MANGLE:
	case XDP_FLOW_ACTION_ADD:
		if (*vlan) {
			snprintf(msg, len, "action %u: pedit after a vlan action", i);
			return -EINVAL;
		}
		if (a->mangle.htype >= __XDP_FLOW_HDR_MAX ||
		    a->mangle.offset % 4 || a->mangle.offset > 60) {
			snprintf(msg, len, "action %u: pedit of header %u offset %u",
				 i, a->mangle.htype, a->mangle.offset);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_CSUM:
		if (*vlan) {
			snprintf(msg, len, "action %u: csum after a vlan action", i);
			return -EINVAL;
		}
		if (a->csum_flags & ~(XDP_FLOW_CSUM_IPV4HDR | XDP_FLOW_CSUM_ICMP |
				      XDP_FLOW_CSUM_TCP | XDP_FLOW_CSUM_UDP)) {
			snprintf(msg, len, "action %u: csum flags 0x%x", i,
				 a->csum_flags);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_VLAN_PUSH:
	case XDP_FLOW_ACTION_VLAN_MODIFY:
		if (a->vlan.proto != htons(0x8100) && a->vlan.proto != htons(0x88a8)) {
			snprintf(msg, len, "action %u: vlan protocol 0x%04x", i,
				 ntohs(a->vlan.proto));
			return -EINVAL;
		}
		*vlan = true;
		return 0;
	case XDP_FLOW_ACTION_VLAN_POP:
		*vlan = true;
		return 0;
	case XDP_FLOW_ACTION_TUNNEL_SET:
		if (ft || !a->tunnel.dst ||
		    a->tunnel.flags & ~(XDP_FLOW_TUN_CSUM | XDP_FLOW_TUN_DF) ||
		    r->actions[r->nr_actions - 1].id != XDP_FLOW_ACTION_REDIRECT) {
			snprintf(msg, len,
				 "action %u: tunnel set without a destination, with flags 0x%x, in a flowtable's rule or in a rule that does not end in a redirect",
				 i, a->tunnel.flags);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_TUNNEL_OPTS:
		if (!i || r->actions[i - 1].id != XDP_FLOW_ACTION_TUNNEL_SET ||
		    !a->tun_opts.len || a->tun_opts.len > XDP_FLOW_TUN_OPTS_MAX ||
		    a->tun_opts.len % 4 || a->tun_opts.pad[0] ||
		    a->tun_opts.pad[1] || a->tun_opts.pad[2]) {
			snprintf(msg, len,
				 "action %u: tunnel options not right after a tunnel set, or of %u bytes",
				 i, a->tun_opts.len);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_TUNNEL_UNSET:
		if (ft || !unset_outputs_only(r, i)) {
			snprintf(msg, len,
				 "action %u: tunnel unset in a flowtable's rule, or before anything but rewrites, mirrors and a redirect",
				 i);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_PTYPE:
		if (a->ptype > 3 || ft) {	/* PACKET_OTHERHOST */
			snprintf(msg, len, "action %u: ptype %u, or in a flowtable's rule",
				 i, a->ptype);
			return -EINVAL;
		}
		return 0;
	case XDP_FLOW_ACTION_PPPOE_PUSH:
	case XDP_FLOW_ACTION_PPPOE_POP:
		if (!ft || !pppoe_untagged(r, i)) {
			snprintf(msg, len,
				 "action %u: pppoe outside a flowtable's rule, or on frames that may carry a vlan tag",
				 i);
			return -EINVAL;
		}
		if (a->id == XDP_FLOW_ACTION_PPPOE_POP &&
		    (r->mask.ppp_proto != 0xffff || !r->key.ppp_proto ||
		     r->mask.pppoe_sid != 0xffff)) {
			snprintf(msg, len,
				 "action %u: pppoe pop of frames not matched as a pppoe session",
				 i);
			return -EINVAL;
		}
		*vlan = true;
		return 0;
	}
	snprintf(msg, len, "action %u: unknown action id %u", i, a->id);
	return -EINVAL;
}

/* The shields' mask: the ifindex alone. No rule of TC's has it (theirs
 * always hold the chain too).
 */
const struct xdp_flow_key shield_mask = { .ifindex = 0xffffffff };

/* Shields have the top XDP_FLOW_MAX_SHIELDS ids of the @t->max_rules. */
static __u32 shield_id_base(const struct table *t)
{
	return t->max_rules - XDP_FLOW_MAX_SHIELDS;
}

static bool is_shield_id(const struct table *t, __u32 id)
{
	return id >= shield_id_base(t) && id < t->max_rules;
}

/*
 * A rule of outer IPv6 addresses: it matches IPv6 metadata, and its key
 * holds the digest of each address it names whole.
 */
static bool enc6_ok(const struct xdp_flow_rule *r)
{
	const struct xdp_flow_key *k = &r->key, *m = &r->mask;

	if (!(r->flags & XDP_FLOW_RULE_F_ENC6))
		return true;
	return k->enc_addr == XDP_FLOW_ENC_IPV6 && m->enc_addr == 0xff &&
	       (m->enc_src || m->enc_dst) &&
	       (!m->enc_src || (m->enc_src == 0xffffffff &&
				k->enc_src == xdp_flow_enc6_digest(r->enc6.src))) &&
	       (!m->enc_dst || (m->enc_dst == 0xffffffff &&
				k->enc_dst == xdp_flow_enc6_digest(r->enc6.dst)));
}

/* A shield matches every frame of one device and hands it to the stack. */
static bool shield_ok(const struct xdp_flow_rule *r)
{
	return (r->flags & XDP_FLOW_RULE_F_SOFTWARE) &&
	       !memcmp(&r->mask, &shield_mask, sizeof(shield_mask)) &&
	       !r->l4_src_range.max &&
	       !r->l4_dst_range.max;
}

int rule_check(const struct table *t, const struct xdp_flow_rule *r,
		      char *msg, size_t len)
{
	const __u8 *k = (const __u8 *)&r->key, *m = (const __u8 *)&r->mask;
	unsigned int i;
	bool vlan = false;
	int err;

	if (r->id >= t->max_rules) {
		snprintf(msg, len, "rule id %u out of range (max %u)", r->id,
			 t->max_rules - 1);
		return -EINVAL;
	}
	if (r->flags & ~(XDP_FLOW_RULE_F_SOFTWARE | XDP_FLOW_RULE_F_NFTABLES |
			 XDP_FLOW_RULE_F_SHIELD | XDP_FLOW_RULE_F_FLOWTABLE |
			 XDP_FLOW_RULE_F_ENC6)) {
		snprintf(msg, len, "unknown rule flags 0x%x", r->flags);
		return -EINVAL;
	}
	if (!enc6_ok(r)) {
		snprintf(msg, len,
			 "rule %u: outer IPv6 addresses are matched whole, by their digests in the key",
			 r->id);
		return -EINVAL;
	}
	if (!(r->flags & XDP_FLOW_RULE_F_SHIELD) != !is_shield_id(t, r->id) ||
	    (is_shield_id(t, r->id) && !shield_ok(r))) {
		snprintf(msg, len,
			 "rule %u: shields are software rules on the ifindex alone, with ids from %u",
			 r->id, shield_id_base(t));
		return -EINVAL;
	}
	if (r->nr_actions > XDP_FLOW_MAX_ACTIONS) {
		snprintf(msg, len, "%u actions, at most %u", r->nr_actions,
			 XDP_FLOW_MAX_ACTIONS);
		return -EINVAL;
	}
	if (!r->nr_actions && !(r->flags & XDP_FLOW_RULE_F_SOFTWARE)) {
		snprintf(msg, len, "rule %u has no actions", r->id);
		return -EINVAL;
	}
	for (i = 0; i < r->nr_actions; i++) {
		err = action_check(r, i, &vlan, msg, len);
		if (err)
			return err;
	}
	for (i = 0; i < sizeof(r->key); i++) {
		if (k[i] & ~m[i]) {
			snprintf(msg, len, "key has bits outside the mask in %s",
				 key_field_name(i));
			return -EINVAL;
		}
	}
	if ((r->l4_src_range.max && (r->mask.l4_src ||
				     r->l4_src_range.min > r->l4_src_range.max)) ||
	    (r->l4_dst_range.max && (r->mask.l4_dst ||
				     r->l4_dst_range.min > r->l4_dst_range.max))) {
		snprintf(msg, len, "port range %u-%u/%u-%u with the port also masked, or empty",
			 r->l4_src_range.min, r->l4_src_range.max,
			 r->l4_dst_range.min, r->l4_dst_range.max);
		return -EINVAL;
	}
	return 0;
}
