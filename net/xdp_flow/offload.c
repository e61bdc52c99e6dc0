// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the rule half of the module, started and stopped.
 *
 * The table comes first, then the notifier that follows devices going
 * away, then the flow-block driver, which TC and nftables call from then
 * on; at exit the driver goes first (TC's cleanup takes the rules off),
 * then the work items, then the enabled devices, whose veth peers get
 * back what enabling took.
 *
 * It owns the order; it calls block.c, dev.c, stats.c, attach.c,
 * install.c, table.c and netdev.c.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "xdp_flow.h"

/**
 * xdp_flow_offload_init() - the rule half of the module, before TC or a
 *	device can call it
 *
 * Return: 0 or a negative errno.
 */
int xdp_flow_offload_init(void)
{
	int err;

	err = xdp_flow_table_init();
	if (err)
		return err;
	err = xdp_flow_dev_init();
	if (err)
		goto err_table;
	err = xdp_flow_block_init();
	if (err)
		goto err_notifier;
	return 0;

err_notifier:
	xdp_flow_dev_exit();
err_table:
	xdp_flow_table_exit();
	return err;
}

/**
 * xdp_flow_offload_exit() - no binding, no rule, no enabled device
 *
 * After the helper is gone. Not under rtnl: TC's cleanup of our blocks
 * takes it.
 */
void xdp_flow_offload_exit(void)
{
	struct xdp_flow_dev *xdev, *tmp;

	xdp_flow_table_stop();
	xdp_flow_block_exit();
	xdp_flow_dev_exit();
	/* No binding is left to ask for counters or to have any. */
	xdp_flow_stats_exit();
	xdp_flow_attach_exit();
	/* The helper is gone: every flight has had its answer. */
	xdp_flow_flights_exit();

	rtnl_lock();
	mutex_lock(&xdp_flow_lock);
	xdp_flow_flights_refused_handle();
	xdp_flow_stale_free();
	list_for_each_entry_safe(xdev, tmp, &xdp_flow_devs, list) {
		struct net_device *dev;

		dev = __dev_get_by_index(&init_net, xdev->ifindex);
		if (dev)
			xdp_flow_peer_tx_restore(dev, &xdev->peer_tx);
		xdp_flow_id_free(xdev->shield_id);
		list_del(&xdev->list);
		kfree(xdev);
	}
	mutex_unlock(&xdp_flow_lock);
	rtnl_unlock();
	/* Every binding, and every rule with it, went with the unregister. */
	xdp_flow_table_exit();
}
