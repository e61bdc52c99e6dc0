// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: flow rules offloaded to XDP.
 *
 * An indirect flow-block offload driver for devices without offload
 * hardware: TC flower (and nftables) rules are translated and handed to a
 * user-mode helper, which runs them in an XDP program.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "xdp_flow.h"

char *umh_path = "/usr/local/sbin/xdp_flow_umh";
module_param(umh_path, charp, 0644);
MODULE_PARM_DESC(umh_path, "Path of the user-mode helper xdp_flow_umh");

unsigned int helper_timeout_ms = 2000;
module_param(helper_timeout_ms, uint, 0644);
MODULE_PARM_DESC(helper_timeout_ms,
		 "How long to wait for the helper's answer before restarting it");

static int __init xdp_flow_init(void)
{
	int err;

	err = xdp_flow_genl_init();
	if (err)
		return err;
	err = xdp_flow_offload_init();
	if (err)
		goto err_genl;
	err = xdp_flow_umh_init();
	if (err)
		goto err_offload;
	return 0;

err_offload:
	xdp_flow_offload_exit();
err_genl:
	xdp_flow_genl_exit();
	return err;
}

static void __exit xdp_flow_exit(void)
{
	/* Rules first (TC destroys them as we unbind), then the helper, which
	 * detaches and unpins what is left, then the family it talks on.
	 */
	xdp_flow_offload_exit();
	xdp_flow_umh_exit();
	xdp_flow_genl_exit();
}

module_init(xdp_flow_init);
module_exit(xdp_flow_exit);

MODULE_DESCRIPTION("Flow rules offloaded to XDP");
MODULE_LICENSE("GPL");
