// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the replay, which gives a new helper everything it must hold.
 *
 * After a helper said HELLO (and after every restart), the module first
 * has it take out what the last one may hold stale, then attach the
 * datapath where it was attached, put back the shields, install every
 * rule in TC's order and drop, with SYNC, whatever else it found pinned.
 * Only then does the gate open again.
 *
 * It owns the order of these steps; it calls install.c, shield.c,
 * table.c, requests.c and dpmaps.c (the gate).
 */
#include <linux/mutex.h>

#include "xdp_flow.h"

/**
 * xdp_flow_replay() - give a (new) helper everything it must hold
 *
 * Called after HELLO, not under rtnl. First what was deleted or disabled
 * while no helper answered, then the attachments (without waiting, the
 * helper does them in the background), then the rules in TC's order, then
 * SYNC, which makes the helper drop whatever was not replayed.
 *
 * Return: 0 or a negative errno.
 */
int xdp_flow_replay(void)
{
	struct xdp_flow_dev *xdev;
	int err;

	mutex_lock(&xdp_flow_lock);
	/* What the last helper refused or left, before anything else. */
	xdp_flow_flights_refused_handle();
	err = xdp_flow_remove_stale();
	if (err)
		goto out;
	list_for_each_entry(xdev, &xdp_flow_devs, list) {
		if (!xdev->attached)
			continue;
		err = xdp_flow_helper_post(XDP_FLOW_CMD_DEV_ATTACH,
					   xdev->ifindex, xdev->xdp_mode);
		if (err)
			goto out;
	}
	/* The shields first: what waited for room before still waits. */
	list_for_each_entry(xdev, &xdp_flow_devs, list) {
		if (xdev->shield_order == XDP_FLOW_NO_SHIELD)
			continue;
		err = xdp_flow_shield_send(xdev, xdev->shield_order);
		if (err)
			goto out;
	}
	err = xdp_flow_install_all(0);
	if (err)
		goto out;
	list_for_each_entry(xdev, &xdp_flow_devs, list)
		xdp_flow_shield_set(xdev, xdp_flow_waiting_min(xdev));
	err = xdp_flow_helper_call(XDP_FLOW_CMD_SYNC, 0, 0, 0, NULL, NULL, NULL);
	/* The helper has every rule: XDP may act again. */
	if (!err)
		xdp_flow_gate_set(false);
out:
	mutex_unlock(&xdp_flow_lock);
	return err;
}
