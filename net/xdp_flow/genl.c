// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the generic netlink family: the xdp-flow command's operations
 * (enable, disable, status, show), and HELLO, which the helper sends
 * (helper.c takes it; the module's requests go out on the family from
 * requests.c, the helper's REPLY comes back on reply.c's socket pair). The
 * protocol is described in include/uapi/linux/xdp_flow.h, its policy is
 * proto.c's.
 *
 * It owns the family; it calls switch.c (enable, disable), helper.c,
 * show.c, stats.c, install.c, table.c, dpmaps.c, params.c and proto.c
 * (what status and show report).
 */
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "xdp_flow.h"

/* --- operations of the helper (helper.c checks who sends them) --- */

static int xdp_flow_cmd_hello(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_VERSION))
		return -EINVAL;
	struct nlattr *fd = info->attrs[XDP_FLOW_ATTR_PROG_FD];
	struct nlattr *tc_fd = info->attrs[XDP_FLOW_ATTR_TC_PROG_FD];

	return xdp_flow_helper_hello(info->snd_portid,
				     nla_get_u32(info->attrs[XDP_FLOW_ATTR_VERSION]),
				     fd ? nla_get_u32(fd) : -1,
				     tc_fd ? nla_get_u32(tc_fd) : -1,
				     info->extack);
}

/* --- operations of the xdp-flow command --- */

static int xdp_flow_cmd_dev_enable(struct sk_buff *skb, struct genl_info *info)
{
	u32 mode = XDP_FLOW_XDP_MODE_AUTO;
	struct net_device *dev;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_IFINDEX))
		return -EINVAL;
	if (info->attrs[XDP_FLOW_ATTR_XDP_MODE])
		mode = nla_get_u32(info->attrs[XDP_FLOW_ATTR_XDP_MODE]);

	dev = dev_get_by_index(&init_net,
			       nla_get_u32(info->attrs[XDP_FLOW_ATTR_IFINDEX]));
	if (!dev) {
		NL_SET_ERR_MSG_MOD(info->extack, "no such device");
		return -ENODEV;
	}
	err = xdp_flow_switch_enable(dev, mode, info->extack);
	dev_put(dev);
	return err;
}

static int xdp_flow_cmd_dev_disable(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_IFINDEX))
		return -EINVAL;
	return xdp_flow_switch_disable(nla_get_u32(info->attrs[XDP_FLOW_ATTR_IFINDEX]),
				       info->extack);
}

static int xdp_flow_fill_status(struct sk_buff *msg, u32 portid, u32 seq,
				int flags)
{
	u32 state, restarts;
	void *hdr;
	pid_t pid;

	hdr = genlmsg_put(msg, portid, seq, &xdp_flow_genl_family, flags,
			  XDP_FLOW_CMD_STATUS_GET);
	if (!hdr)
		return -EMSGSIZE;
	xdp_flow_helper_status(&state, &pid, &restarts);
	mutex_lock(&xdp_flow_lock);
	if (nla_put_u32(msg, XDP_FLOW_ATTR_HELPER_STATE, state) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_HELPER_PID, pid) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_HELPER_RESTARTS, restarts) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_RULE_COUNT, xdp_flow_rule_count()) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_RULE_IDS, xdp_flow_ids_in_use()) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_IN_FLIGHT, xdp_flow_in_flight()) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_MAX_RULES, xdp_flow_max_rules()) ||
	    (xdp_flow_gate_is_closed() &&
	     nla_put_flag(msg, XDP_FLOW_ATTR_TO_STACK))) {
		mutex_unlock(&xdp_flow_lock);
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	mutex_unlock(&xdp_flow_lock);
	genlmsg_end(msg, hdr);
	return 0;
}

static int xdp_flow_cmd_status_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	int err;

	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	err = xdp_flow_fill_status(msg, info->snd_portid, info->snd_seq, 0);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int xdp_flow_dump_devs(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct xdp_flow_all all;
	struct xdp_flow_dev *xdev;
	long i = 0;
	void *hdr;

	mutex_lock(&xdp_flow_lock);
	list_for_each_entry(xdev, &xdp_flow_devs, list) {
		if (i++ < cb->args[0])
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &xdp_flow_genl_family,
				  NLM_F_MULTI, XDP_FLOW_CMD_DEV_GET);
		if (!hdr)
			break;
		if (nla_put_u32(skb, XDP_FLOW_ATTR_IFINDEX, xdev->ifindex) ||
		    nla_put_u32(skb, XDP_FLOW_ATTR_DEV_STATE, xdev->state) ||
		    nla_put_u32(skb, XDP_FLOW_ATTR_XDP_MODE, xdev->xdp_mode) ||
		    nla_put_string(skb, XDP_FLOW_ATTR_HOOK_WHY, xdev->why) ||
		    nla_put_u32(skb, XDP_FLOW_ATTR_RULE_COUNT,
				xdev->nr_offloaded) ||
		    nla_put_u32(skb, XDP_FLOW_ATTR_SWITCH, xdev->via) ||
		    nla_put_s32(skb, XDP_FLOW_ATTR_ERROR, xdev->err) ||
		    (xdev->nr_waiting &&
		     (nla_put_u32(skb, XDP_FLOW_ATTR_WAITING,
				  xdev->nr_waiting) ||
		      nla_put_u32(skb, XDP_FLOW_ATTR_SHIELD_PRIO,
				  xdev->shield_order >> 32))) ||
		    (xdp_flow_dev_first_all(xdev, &all) &&
		     (nla_put_u32(skb, XDP_FLOW_ATTR_ALL_PRIO, all.order >> 32) ||
		      nla_put_string(skb, XDP_FLOW_ATTR_ALL_KIND, all.kind) ||
		      nla_put_u32(skb, XDP_FLOW_ATTR_ALL_BEFORE, all.before)))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
	}
	mutex_unlock(&xdp_flow_lock);
	return skb->len;
}

struct xdp_flow_dump_ctx {
	struct sk_buff *skb;
	struct netlink_callback *cb;
};

static int xdp_flow_dump_one_rule(struct xdp_flow_entry *entry, void *arg)
{
	struct xdp_flow_dump_ctx *ctx = arg;
	struct xdp_flow_stats st = {};
	void *hdr;

	xdp_flow_entry_refresh_stats(entry);
	st.id = entry->rule.id;
	st.packets = entry->base.packets + entry->hw.packets;
	st.bytes = entry->base.bytes + entry->hw.bytes;
	st.lastused_ns = entry->hw.lastused_ns;

	hdr = genlmsg_put(ctx->skb, NETLINK_CB(ctx->cb->skb).portid,
			  ctx->cb->nlh->nlmsg_seq, &xdp_flow_genl_family,
			  NLM_F_MULTI, XDP_FLOW_CMD_RULE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(ctx->skb, XDP_FLOW_ATTR_IFINDEX,
			entry->binding->ifindex) ||
	    nla_put(ctx->skb, XDP_FLOW_ATTR_RULE, sizeof(entry->rule),
		    &entry->rule) ||
	    nla_put(ctx->skb, XDP_FLOW_ATTR_STATS, sizeof(st), &st) ||
	    (entry->kind == XDP_FLOW_ENTRY_SOFTWARE && entry->why &&
	     nla_put_string(ctx->skb, XDP_FLOW_ATTR_MSG, entry->why)) ||
	    (entry->waiting &&
	     nla_put_u32(ctx->skb, XDP_FLOW_ATTR_WAITING, 1)) ||
	    (xdp_flow_entry_in_flight(entry) &&
	     nla_put_u32(ctx->skb, XDP_FLOW_ATTR_IN_FLIGHT, 1))) {
		genlmsg_cancel(ctx->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(ctx->skb, hdr);
	return 0;
}

static int xdp_flow_dump_rules(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct xdp_flow_dump_ctx ctx = { .skb = skb, .cb = cb };
	struct xdp_flow_visitor visitor = {
		.fn = xdp_flow_dump_one_rule,
		.arg = &ctx,
	};
	struct xdp_flow_walk_pos *pos = (void *)cb->ctx;
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1];
	u32 ifindex = 0;
	int err;

	BUILD_BUG_ON(sizeof(*pos) > sizeof(cb->ctx));
	err = nlmsg_parse(cb->nlh, GENL_HDRLEN, tb, XDP_FLOW_ATTR_MAX,
			  xdp_flow_policy, cb->extack);
	if (err)
		return err;
	if (tb[XDP_FLOW_ATTR_IFINDEX])
		ifindex = nla_get_u32(tb[XDP_FLOW_ATTR_IFINDEX]);

	mutex_lock(&xdp_flow_lock);
	xdp_flow_walk_entries(ifindex, pos, &visitor);
	mutex_unlock(&xdp_flow_lock);
	return skb->len;
}

static const struct genl_small_ops xdp_flow_genl_ops[] = {
	{
		.cmd = XDP_FLOW_CMD_DEV_ENABLE,
		.doit = xdp_flow_cmd_dev_enable,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = XDP_FLOW_CMD_DEV_DISABLE,
		.doit = xdp_flow_cmd_dev_disable,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = XDP_FLOW_CMD_DEV_GET,
		.dumpit = xdp_flow_dump_devs,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = XDP_FLOW_CMD_RULE_GET,
		.dumpit = xdp_flow_dump_rules,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = XDP_FLOW_CMD_STATUS_GET,
		.doit = xdp_flow_cmd_status_get,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = XDP_FLOW_CMD_HELLO,
		.doit = xdp_flow_cmd_hello,
		.flags = GENL_ADMIN_PERM,
	},
};

struct genl_family xdp_flow_genl_family __ro_after_init = {
	.name		= XDP_FLOW_GENL_NAME,
	.version	= XDP_FLOW_GENL_VERSION,
	.maxattr	= XDP_FLOW_ATTR_MAX,
	.policy		= xdp_flow_policy,
	/* Callers of ours wait in a doit while the helper works. */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.small_ops	= xdp_flow_genl_ops,
	.n_small_ops	= ARRAY_SIZE(xdp_flow_genl_ops),
};

int xdp_flow_genl_init(void)
{
	return genl_register_family(&xdp_flow_genl_family);
}

void xdp_flow_genl_exit(void)
{
	genl_unregister_family(&xdp_flow_genl_family);
}
