// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the module's parameters, read by the rest through the
 * functions below: the size of the XDP tables and of the rule ids, how
 * long the helper may take to answer, and a helper binary to run for
 * development. (redirect_peer stays in peer.c: setting it rewrites the
 * peers at once.)
 *
 * It owns the parameters' values and their checks; it calls nothing of
 * the module.
 */
#include <linux/moduleparam.h>
#include <linux/printk.h>

#include "xdp_flow.h"

static char *umh_path;
module_param(umh_path, charp, 0444);
MODULE_PARM_DESC(umh_path,
		 "Development only: run this helper binary instead of the embedded one");

/* Capacity of the XDP tables for rules (the shields have theirs). */
static unsigned int max_masks = XDP_FLOW_MAX_MASKS - 1;
static unsigned int max_flows = XDP_FLOW_DEFAULT_FLOWS;
static unsigned int max_rules = XDP_FLOW_MAX_RULES;

static int xdp_flow_max_masks_set(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, XDP_FLOW_MAX_MASKS - 1);
}

static int xdp_flow_max_flows_set(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, XDP_FLOW_MAX_FLOWS);
}

static int xdp_flow_max_rules_set(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, XDP_FLOW_MIN_RULES,
				     XDP_FLOW_MAX_RULES);
}

static const struct kernel_param_ops xdp_flow_max_rules_ops = {
	.set = xdp_flow_max_rules_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops xdp_flow_max_masks_ops = {
	.set = xdp_flow_max_masks_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops xdp_flow_max_flows_ops = {
	.set = xdp_flow_max_flows_set,
	.get = param_get_uint,
};

module_param_cb(max_masks, &xdp_flow_max_masks_ops, &max_masks, 0444);
MODULE_PARM_DESC(max_masks,
		 "Distinct masks rules may use in the XDP tables (1-255, default 255); each slows every lookup a little");
module_param_cb(max_rules, &xdp_flow_max_rules_ops, &max_rules, 0444);
MODULE_PARM_DESC(max_rules,
		 "Rule ids, the top 1024 for shields (2048-131072, default 131072); each takes 176 bytes, and those in use 24 bytes per CPU for their counters");
module_param_cb(max_flows, &xdp_flow_max_flows_ops, &max_flows, 0444);
MODULE_PARM_DESC(max_flows,
		 "Flow entries rules may use in the XDP tables (1-1047552, default 130048); the table takes 96 bytes per entry and 64 per bucket (as many as entries, rounded up to a power of two), and the helper about 120 bytes per entry in use");

/**
 * xdp_flow_max_rules() - rule ids, from 0: the module parameter max_rules
 *
 * The top XDP_FLOW_MAX_SHIELDS of them are the shields'.
 *
 * Return: how many.
 */
unsigned int xdp_flow_max_rules(void)
{
	return max_rules;
}

static unsigned int helper_timeout_ms = 2000;

static int xdp_flow_timeout_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 100, 60000);
}

static const struct kernel_param_ops xdp_flow_timeout_ops = {
	.set = xdp_flow_timeout_set,
	.get = param_get_uint,
};

module_param_cb(helper_timeout_ms, &xdp_flow_timeout_ops, &helper_timeout_ms,
		0644);
MODULE_PARM_DESC(helper_timeout_ms,
		 "How long to wait for the helper's answer before restarting it (100-60000)");

/**
 * xdp_flow_max_masks() - the module parameter max_masks
 *
 * Return: the distinct masks rules may use in the XDP tables.
 */
unsigned int xdp_flow_max_masks(void)
{
	return max_masks;
}

/**
 * xdp_flow_max_flows() - the module parameter max_flows
 *
 * Return: the flow entries rules may use in the XDP tables.
 */
unsigned int xdp_flow_max_flows(void)
{
	return max_flows;
}

/**
 * xdp_flow_helper_timeout_ms() - the module parameter helper_timeout_ms
 *
 * Return: how long to wait for the helper's answer, in ms, right now.
 */
unsigned int xdp_flow_helper_timeout_ms(void)
{
	return READ_ONCE(helper_timeout_ms);
}

/**
 * xdp_flow_umh_path() - the module parameter umh_path
 *
 * Return: the helper binary to run instead of the embedded one, or NULL.
 */
const char *xdp_flow_umh_path(void)
{
	return umh_path;
}

/**
 * xdp_flow_umh_path_check() - check umh_path, at load
 *
 * An empty umh_path is none.
 *
 * Return: 0, or -EINVAL when it is not an absolute path.
 */
int xdp_flow_umh_path_check(void)
{
	if (umh_path && !*umh_path)
		umh_path = NULL;
	if (umh_path && umh_path[0] != '/') {
		pr_err("xdp_flow: umh_path must be an absolute path\n");
		return -EINVAL;
	}
	return 0;
}
