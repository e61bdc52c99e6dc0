// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the tunnel_key actions, for the tc hook: set (with Geneve
 * options) before the outputs to VXLAN and Geneve devices it checks, and
 * unset before outputs to veths.
 *
 * It owns what a rule's tunnel_key actions become; it calls netdev.c
 * (whether a device is a veth).
 */
#include <linux/netdevice.h>
#include <net/flow_offload.h>
#include <net/geneve.h>
#include <net/ip_tunnels.h>
#include <net/vxlan.h>

#include "xdp_flow.h"
#include "act_state.h"

/**
 * xdp_flow_tunnel_out() - may an output after a tunnel_key set go to @dev
 * @dev: the output's device
 * @s: the rule's state
 *
 * The tc hook sets the metadata with bpf_skb_set_tunnel_key(), which has
 * no destination port. A Geneve device always sends to its own port (and
 * one not in external mode ignores the metadata altogether, as after TC's
 * action); a VXLAN device takes the metadata's port, or its own when
 * there is none: exact for one in external mode (collect_md) whose port
 * is the rule's, or when the rule gives none (the kernel refuses to
 * change either later). Geneve options go to Geneve devices only.
 *
 * Return: NULL, or why not.
 */
const char *xdp_flow_tunnel_out(const struct net_device *dev,
				const struct xdp_flow_act_state *s)
{
	const struct vxlan_dev *vxlan;

	if (!s->tunnel || netif_is_geneve(dev))
		return NULL;
	if (!netif_is_vxlan(dev))
		return "xdp_flow: tunnel_key set to another device than VXLAN or Geneve";
	if (s->tun_opts)
		return "xdp_flow: tunnel_key set with options to another device than Geneve";
	vxlan = netdev_priv(dev);
	if (!(vxlan->cfg.flags & VXLAN_F_COLLECT_METADATA))
		return "xdp_flow: cannot offload tunnel_key set to a VXLAN device not external";
	if (s->tun_port && s->tun_port != vxlan->cfg.dst_port)
		return "xdp_flow: tunnel_key set dst_port is not the VXLAN device's";
	return NULL;
}

/**
 * xdp_flow_unset_out() - may an output after a tunnel_key unset go to @dev
 * @dev: the output's device
 * @s: the rule's state
 *
 * The tc hook cannot drop the metadata: a veth drops it as it hands the
 * frame to its peer; the datapath checks per frame that nothing runs on
 * its transmit path before (the uapi header's XDP_FLOW_ACTION_TUNNEL_UNSET).
 *
 * Return: NULL, or why not.
 */
const char *xdp_flow_unset_out(const struct net_device *dev,
			       const struct xdp_flow_act_state *s)
{
	if (s->unset && !xdp_flow_is_veth(dev))
		return "xdp_flow: tunnel_key unset is offloaded only before outputs to veths";
	return NULL;
}

/* Whether tunnel_key set gave the metadata flag @bit, on every kernel. */
#ifdef IP_TUNNEL_DECLARE_FLAGS
#define xdp_flow_tun_flag(key, bit)	test_bit(IP_TUNNEL_##bit##_BIT, (key)->tun_flags)
#else
#define xdp_flow_tun_flag(key, bit)	(!!((key)->tun_flags & TUNNEL_##bit))
#endif

/*
 * tunnel_key set's Geneve options (geneve_opts, as OVN sends them): a
 * TUNNEL_OPTS after the TUNNEL_SET, which bpf_skb_set_tunnel_opt() sets.
 * That helper marks the metadata as carrying options of every kind, where
 * act_tunnel_key marks Geneve's only: the same to a Geneve device, which
 * is all xdp_flow_tunnel_out() lets the rule send to.
 */
static const char *xdp_flow_tunnel_opts(const struct ip_tunnel_info *info,
					struct xdp_flow_act_state *s)
{
	struct xdp_flow_action *xo = s->xa + 1;

	if (!xdp_flow_tun_flag(&info->key, GENEVE_OPT))
		return "xdp_flow: cannot offload tunnel_key set with options other than Geneve's";
	if (info->options_len > XDP_FLOW_TUN_OPTS_MAX || info->options_len % 4)
		return "xdp_flow: cannot offload tunnel_key set with more than 12 bytes of options";
	if (!s->room)
		return XDP_FLOW_OPTS_ROOM;
	xo->id = XDP_FLOW_ACTION_TUNNEL_OPTS;
	xo->tun_opts.len = info->options_len;
	ip_tunnel_info_opts_get(xo->tun_opts.data, info);
	s->extra = 1;
	s->tun_opts = true;
	return NULL;
}

/**
 * xdp_flow_act_tunnel_set() - the XDP actions of a tunnel_key set
 * @act: the action
 * @s: the rule's state; @s->xa gets the TUNNEL_SET, the action after it
 *	the TUNNEL_OPTS of Geneve options
 *
 * The metadata the outputs after it (which xdp_flow_tunnel_out() checks)
 * encapsulate the frame by. The tc hook sets it as act_tunnel_key does,
 * with bpf_skb_set_tunnel_key(), over IPv4, and its Geneve options
 * (xdp_flow_tunnel_opts()).
 *
 * Return: NULL, or why it cannot be offloaded.
 */
const char *xdp_flow_act_tunnel_set(const struct flow_action_entry *act,
				    struct xdp_flow_act_state *s)
{
	const struct ip_tunnel_info *info = act->tunnel;
	u64 id;

	if (!info || !(info->mode & IP_TUNNEL_INFO_TX))
		return "xdp_flow: cannot offload this tunnel_key action";
	if (s->unset)
		return "xdp_flow: cannot offload tunnel_key set after unset";
	if (ip_tunnel_info_af(info) != AF_INET)
		return "xdp_flow: cannot offload tunnel_key set over IPv6";
	s->tun_opts = false;
	if (info->options_len) {
		const char *why = xdp_flow_tunnel_opts(info, s);

		if (why)
			return why;
	}
	id = be64_to_cpu(info->key.tun_id);
	if (id > U32_MAX || info->key.tp_src)
		return "xdp_flow: cannot offload this tunnel_key set";
	s->xa->id = XDP_FLOW_ACTION_TUNNEL_SET;
	s->xa->tunnel.id = id;
	s->xa->tunnel.src = info->key.u.ipv4.src;
	s->xa->tunnel.dst = info->key.u.ipv4.dst;
	s->xa->tunnel.tos = info->key.tos;
	s->xa->tunnel.ttl = info->key.ttl;
	if (xdp_flow_tun_flag(&info->key, CSUM))
		s->xa->tunnel.flags |= XDP_FLOW_TUN_CSUM;
	if (xdp_flow_tun_flag(&info->key, DONT_FRAGMENT))
		s->xa->tunnel.flags |= XDP_FLOW_TUN_DF;
	s->tunnel = true;
	s->tun_port = info->key.tp_dst;
	s->rewrites = true;
	return NULL;
}

/**
 * xdp_flow_act_tunnel_unset() - the XDP action of a tunnel_key unset
 * @act: the action
 * @s: the rule's state
 *
 * TC drops the tunnel metadata the frame arrived with (a decapsulated
 * frame's, from a VXLAN or Geneve device in external mode). The tc hook
 * cannot drop it; it runs the rule where nothing after it reads the
 * metadata: outputs to veths only (xdp_flow_unset_out()), a redirect last.
 *
 * Return: NULL.
 */
const char *xdp_flow_act_tunnel_unset(const struct flow_action_entry *act,
				      struct xdp_flow_act_state *s)
{
	s->xa->id = XDP_FLOW_ACTION_TUNNEL_UNSET;
	s->unset = true;
	s->rewrites = true;
	return NULL;
}
