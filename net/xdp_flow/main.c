// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: flow rules offloaded to XDP.
 *
 * An indirect flow-block offload driver for devices without offload
 * hardware: TC flower (and nftables) rules are translated and handed to a
 * user-mode helper, carried in the module, which runs them in an XDP
 * program.
 *
 * It owns the order in which the parts start and stop; it calls helper.c,
 * genl.c, peer.c, offload.c, switch.c and dpmaps.c. xdp_flow.h lists the
 * files from the top down: each calls only files below it.
 */
#include <linux/module.h>

#include "xdp_flow.h"

/*
 * No more talking to the helper; then nobody can reach the module through
 * the family (what runs there returns first); then no helper and no
 * datapath, whatever state the helper was in; last the blocks, whose rules
 * TC goes on running in software.
 */
static void xdp_flow_teardown(void)
{
	xdp_flow_helper_stop();
	xdp_flow_genl_exit();
	xdp_flow_helper_exit();
	xdp_flow_offload_exit();
	xdp_flow_peer_exit();
	xdp_flow_dp_maps_release();
}

static int __init xdp_flow_init(void)
{
	int err;

	err = xdp_flow_helper_init(&xdp_flow_genl_family,
				   xdp_flow_switch_replay);
	if (err)
		return err;
	err = xdp_flow_genl_init();
	if (err)
		goto err_helper;
	err = xdp_flow_peer_init();
	if (err)
		goto err_genl;
	err = xdp_flow_offload_init();
	if (err)
		goto err_peer;
	/* Before the switch: a device whose feature is on already waits
	 * for the helper being started, rather than being refused.
	 */
	xdp_flow_helper_start();
	err = xdp_flow_switch_init();
	if (err) {
		xdp_flow_teardown();
		return err;
	}
	return 0;

err_peer:
	xdp_flow_peer_exit();
err_genl:
	xdp_flow_genl_exit();
err_helper:
	xdp_flow_helper_stop();
	xdp_flow_helper_exit();
	return err;
}

static void __exit xdp_flow_exit(void)
{
	/* First the ethtool switch: a switch may be waiting for the helper. */
	xdp_flow_switch_exit();
	xdp_flow_teardown();
}

module_init(xdp_flow_init);
module_exit(xdp_flow_exit);

MODULE_DESCRIPTION("Flow rules offloaded to XDP");
MODULE_LICENSE("GPL");
