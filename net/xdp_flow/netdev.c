// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: what the module needs to know of the devices it serves, and
 * what it changes on a veth's peer: whether a device is a veth and which
 * its peer is, whether it is a tunnel device, whether it takes XDP
 * frames, whether XDP on it may see a tagged frame without its tag, and
 * the peer's transmit offloads, turned off while offload is enabled on
 * the veth.
 *
 * It owns no state of its own (what it changed is kept by its callers);
 * it calls nothing of the module.
 */
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <net/geneve.h>
#include <net/rtnetlink.h>
#include <net/vxlan.h>

#include "xdp_flow.h"

/**
 * xdp_flow_is_veth() - is a device a veth
 * @dev: the device
 *
 * Return: true for a veth.
 */
bool xdp_flow_is_veth(const struct net_device *dev)
{
	return dev->rtnl_link_ops && !strcmp(dev->rtnl_link_ops->kind, "veth");
}

/**
 * xdp_flow_is_tunnel() - whether a device encapsulates by the metadata
 *	TC's tunnel_key set gives a frame
 * @dev: the device
 *
 * Return: true for a VXLAN or Geneve device.
 */
bool xdp_flow_is_tunnel(const struct net_device *dev)
{
	return netif_is_vxlan(dev) || netif_is_geneve(dev);
}

/**
 * xdp_flow_tunnel_port() - the UDP port a tunnel device receives on
 * @dev: the device
 *
 * A VXLAN device's is in its configuration; a Geneve device's is private
 * to its driver, which says it in its link attributes. Neither can change
 * it once the device is made.
 *
 * Return: the port in network order, or 0 for another kind of device (or
 * no memory to ask).
 */
__be16 xdp_flow_tunnel_port(const struct net_device *dev)
{
	const struct rtnl_link_ops *ops = dev->rtnl_link_ops;
	const struct nlattr *port;
	struct sk_buff *skb;
	__be16 ret = 0;

	if (netif_is_vxlan(dev))
		return ((const struct vxlan_dev *)netdev_priv(dev))->cfg.dst_port;
	if (!netif_is_geneve(dev) || !ops->fill_info || !ops->get_size)
		return 0;
	skb = alloc_skb(ops->get_size(dev), GFP_KERNEL);
	if (!skb)
		return 0;
	if (!ops->fill_info(skb, dev)) {
		port = nla_find((const struct nlattr *)skb->data, skb->len,
				IFLA_GENEVE_PORT);
		if (port)
			ret = nla_get_be16(port);
	}
	kfree_skb(skb);
	return ret;
}

/**
 * xdp_flow_veth_peer() - the other end of a veth
 * @dev: the device
 *
 * Caller holds rtnl, which keeps the peer alive.
 *
 * Return: @dev's peer when @dev is a veth that has one, else NULL.
 */
struct net_device *xdp_flow_veth_peer(struct net_device *dev)
{
	struct net_device *peer;

	ASSERT_RTNL();
	if (!xdp_flow_is_veth(dev) || !dev->netdev_ops->ndo_get_peer_dev)
		return NULL;
	rcu_read_lock();
	peer = dev->netdev_ops->ndo_get_peer_dev(dev);
	rcu_read_unlock();
	return peer;
}

/**
 * xdp_flow_can_xmit() - whether a device takes XDP frames
 * @dev: the device
 *
 * Return: true when @dev has ndo_xdp_xmit and, where the kernel says so
 * in xdp_features, takes frames with it now.
 */
bool xdp_flow_can_xmit(const struct net_device *dev)
{
	if (!dev->netdev_ops->ndo_xdp_xmit)
		return false;
#ifdef XDP_FLOW_HAVE_XDP_FEATURES
	/* veth can take XDP frames only while its peer runs NAPI (an XDP
	 * program or GRO on the peer); it says so in xdp_features.
	 */
	if (!(dev->xdp_features & NETDEV_XDP_ACT_NDO_XMIT))
		return false;
#endif
	return true;
}

/**
 * xdp_flow_dev_hides_vlan() - may XDP on a device see a tagged frame untagged?
 * @dev: the device
 * @xdp_mode: enum xdp_flow_xdp_mode it is (to be) attached in
 *
 * Generic XDP runs on an skb whose outer tag may sit in skb metadata, and
 * drivers that strip tags in hardware hand XDP the frame without them. A
 * veth receives the skbs its peer sends, with the tag in metadata when the
 * peer offloads VLAN insertion; enabling offload on a veth turns that off
 * (xdp_flow_peer_tx_off()), and then every tag is in the frame.
 *
 * Return: true when VLAN matches cannot be decided in XDP on @dev.
 */
bool xdp_flow_dev_hides_vlan(struct net_device *dev, u32 xdp_mode)
{
	struct net_device *peer;
	bool hidden;

	if (xdp_mode == XDP_FLOW_XDP_MODE_TC)
		return false;	/* the tag is read from skb metadata */
	if (xdp_mode == XDP_FLOW_XDP_MODE_GENERIC)
		return true;
	/* veth claims rx VLAN offload but strips nothing itself. */
	if (!xdp_flow_is_veth(dev))
		return dev->features & (NETIF_F_HW_VLAN_CTAG_RX |
					NETIF_F_HW_VLAN_STAG_RX);
	if (!dev->netdev_ops->ndo_get_peer_dev)
		return true;
	/* TC may offer rules without rtnl: RCU keeps the peer. */
	rcu_read_lock();
	peer = dev->netdev_ops->ndo_get_peer_dev(dev);
	hidden = !peer || (READ_ONCE(peer->features) & XDP_FLOW_VLAN_TX);
	rcu_read_unlock();
	return hidden;
}

/*
 * A veth receives the skbs its peer transmits, with some work left in skb
 * metadata that an XDP program on the veth never sees:
 * - with VLAN insertion offloaded, the tag: XDP would see the frame
 *   untagged and match it differently from TC;
 * - with checksum offload, a TCP or UDP checksum still to be computed:
 *   a frame XDP redirects leaves without it, and the receiver drops it.
 * So while offload is enabled on a veth (native XDP) its peer does both
 * itself. The stack pops tags into metadata again on receive, so TC sees
 * what it saw before. (veth likewise takes GSO away from the peer of a
 * device running XDP.)
 */

/**
 * xdp_flow_peer_tx_off() - turn a veth's peer's transmit offloads off
 * @dev: the device offload is enabled on
 * @tx: gets what was changed, for xdp_flow_peer_tx_restore()
 *
 * Caller holds rtnl. Turns the XDP_FLOW_PEER_TX_OFF features off on @dev's
 * veth peer and takes them out of its hw_features, as veth takes GSO from
 * the peer of a device running XDP: nobody can turn them on again while
 * offload is enabled, not even for the moment a notifier would need to
 * undo it. Adds what it changed to @tx.
 */
void xdp_flow_peer_tx_off(struct net_device *dev, struct xdp_flow_peer_tx *tx)
{
	struct net_device *peer = xdp_flow_veth_peer(dev);
	netdev_features_t wanted, fixed;

	if (!peer)
		return;
	wanted = peer->wanted_features & XDP_FLOW_PEER_TX_OFF;
	if (wanted) {
		peer->wanted_features &= ~wanted;
		netdev_update_features(peer);
	}
	/* Only what is off now: a feature left out of hw_features stays as
	 * it is.
	 */
	fixed = peer->hw_features & XDP_FLOW_PEER_TX_OFF & ~peer->features;
	peer->hw_features &= ~fixed;
	tx->wanted |= wanted;
	tx->fixed |= fixed;
}

/**
 * xdp_flow_peer_tx_restore() - give a veth's peer back what was turned off
 * @dev: the device offload was enabled on
 * @tx: what xdp_flow_peer_tx_off() changed
 *
 * Caller holds rtnl.
 */
void xdp_flow_peer_tx_restore(struct net_device *dev,
			      const struct xdp_flow_peer_tx *tx)
{
	struct net_device *peer;

	if (!tx->wanted && !tx->fixed)
		return;
	peer = xdp_flow_veth_peer(dev);
	if (!peer)
		return;
	peer->hw_features |= tx->fixed;
	peer->wanted_features |= tx->wanted;
	netdev_update_features(peer);
}

