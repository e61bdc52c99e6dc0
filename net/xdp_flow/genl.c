// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the generic netlink family, shared by the xdp-flow command
 * (enable, disable, status, show) and the helper (HELLO, REPLY, and the
 * requests the module sends it). The protocol is described in
 * include/uapi/linux/xdp_flow.h.
 */
#include <linux/completion.h>
#include <linux/spinlock.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "xdp_flow.h"

static struct genl_family xdp_flow_genl_family;

/* --- requests to the helper and their replies --- */

struct xdp_flow_request {
	struct list_head list;
	u32 seq;
	int err;
	bool have_stats;
	struct xdp_flow_stats stats;
	char msg[128];
	struct completion done;
};

static LIST_HEAD(xdp_flow_requests);
static DEFINE_SPINLOCK(xdp_flow_requests_lock);
static u32 xdp_flow_next_seq;

static struct xdp_flow_request *xdp_flow_request_find(u32 seq)
{
	struct xdp_flow_request *req;

	list_for_each_entry(req, &xdp_flow_requests, list)
		if (req->seq == seq)
			return req;
	return NULL;
}

/**
 * xdp_flow_helper_send() - send one request to the helper
 * @cmd: XDP_FLOW_CMD_*
 * @seq: set to the request's sequence number
 * @ifindex: for DEV_ATTACH and DEV_DETACH
 * @rule_id: for RULE_DEL and STATS_GET
 * @xdp_mode: for DEV_ATTACH
 * @rule: for RULE_ADD
 *
 * The request stays pending until the helper's REPLY; collect it with
 * xdp_flow_helper_wait() or drop it with xdp_flow_helper_cancel().
 *
 * Return: 0, or a negative errno when it could not be sent.
 */
int xdp_flow_helper_send(u8 cmd, u32 *seq, u32 ifindex, u32 rule_id,
			 u32 xdp_mode, const struct xdp_flow_rule *rule)
{
	struct xdp_flow_request *req;
	struct sk_buff *skb;
	void *hdr;
	int err;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	init_completion(&req->done);

	skb = genlmsg_new(rule ? nla_total_size(sizeof(*rule)) + 64 :
			  NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb) {
		kfree(req);
		return -ENOMEM;
	}

	spin_lock_bh(&xdp_flow_requests_lock);
	req->seq = ++xdp_flow_next_seq;
	list_add_tail(&req->list, &xdp_flow_requests);
	spin_unlock_bh(&xdp_flow_requests_lock);

	err = -EMSGSIZE;
	hdr = genlmsg_put(skb, 0, req->seq, &xdp_flow_genl_family, 0, cmd);
	if (!hdr)
		goto err_free;
	if (nla_put_u32(skb, XDP_FLOW_ATTR_SEQ, req->seq))
		goto err_free;
	if (ifindex && nla_put_u32(skb, XDP_FLOW_ATTR_IFINDEX, ifindex))
		goto err_free;
	if ((cmd == XDP_FLOW_CMD_RULE_DEL || cmd == XDP_FLOW_CMD_STATS_GET) &&
	    nla_put_u32(skb, XDP_FLOW_ATTR_RULE_ID, rule_id))
		goto err_free;
	if (cmd == XDP_FLOW_CMD_DEV_ATTACH &&
	    nla_put_u32(skb, XDP_FLOW_ATTR_XDP_MODE, xdp_mode))
		goto err_free;
	if (rule && nla_put(skb, XDP_FLOW_ATTR_RULE, sizeof(*rule), rule))
		goto err_free;
	genlmsg_end(skb, hdr);

	err = genlmsg_unicast(&init_net, skb, READ_ONCE(xdp_flow_helper.portid));
	if (err) {
		xdp_flow_helper_cancel(req->seq);
		if (err == -ECONNREFUSED)
			xdp_flow_umh_broken("its socket is gone");
		return err;
	}
	*seq = req->seq;
	return 0;

err_free:
	nlmsg_free(skb);
	xdp_flow_helper_cancel(req->seq);
	return err;
}

/**
 * xdp_flow_helper_wait() - wait for the helper's reply to a request
 * @seq: from xdp_flow_helper_send()
 * @timeout_ms: how long
 * @stats: where the reply's counters go, or NULL
 * @msg: where the reply's message goes, or NULL
 * @msg_len: size of @msg
 *
 * Return: the helper's error (0 or a negative errno), -ETIMEDOUT, or the
 * error that made the module give the request up (-ESRCH: the helper died).
 */
int xdp_flow_helper_wait(u32 seq, unsigned int timeout_ms,
			 struct xdp_flow_stats *stats, char *msg,
			 size_t msg_len)
{
	struct xdp_flow_request *req;
	unsigned long left;
	int err;

	spin_lock_bh(&xdp_flow_requests_lock);
	req = xdp_flow_request_find(seq);
	spin_unlock_bh(&xdp_flow_requests_lock);
	if (!req)
		return -ENOENT;

	left = wait_for_completion_timeout(&req->done,
					   msecs_to_jiffies(timeout_ms));

	spin_lock_bh(&xdp_flow_requests_lock);
	list_del(&req->list);
	spin_unlock_bh(&xdp_flow_requests_lock);

	if (!left && !completion_done(&req->done)) {
		err = -ETIMEDOUT;
	} else {
		err = req->err;
		if (stats && req->have_stats)
			*stats = req->stats;
		if (msg && msg_len)
			strscpy(msg, req->msg, msg_len);
	}
	kfree(req);
	return err;
}

/**
 * xdp_flow_helper_cancel() - forget a request; its reply will be ignored
 * @seq: from xdp_flow_helper_send()
 */
void xdp_flow_helper_cancel(u32 seq)
{
	struct xdp_flow_request *req;

	spin_lock_bh(&xdp_flow_requests_lock);
	req = xdp_flow_request_find(seq);
	if (req)
		list_del(&req->list);
	spin_unlock_bh(&xdp_flow_requests_lock);
	kfree(req);
}

/**
 * xdp_flow_helper_fail_all() - complete every pending request with an error
 * @err: the error, e.g. -ESRCH when the helper went away
 */
void xdp_flow_helper_fail_all(int err)
{
	struct xdp_flow_request *req;

	spin_lock_bh(&xdp_flow_requests_lock);
	list_for_each_entry(req, &xdp_flow_requests, list) {
		if (completion_done(&req->done))
			continue;
		req->err = err;
		complete(&req->done);
	}
	spin_unlock_bh(&xdp_flow_requests_lock);
}

static const struct nla_policy xdp_flow_policy[XDP_FLOW_ATTR_MAX + 1] = {
	[XDP_FLOW_ATTR_IFINDEX]		= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_XDP_MODE]	= NLA_POLICY_MAX(NLA_U32, XDP_FLOW_XDP_MODE_AUTO),
	[XDP_FLOW_ATTR_DEV_STATE]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_RULE_COUNT]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_ERROR]		= { .type = NLA_S32 },
	[XDP_FLOW_ATTR_MSG]		= { .type = NLA_NUL_STRING, .len = 255 },
	[XDP_FLOW_ATTR_RULE]		= NLA_POLICY_EXACT_LEN(sizeof(struct xdp_flow_rule)),
	[XDP_FLOW_ATTR_RULE_ID]		= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_STATS]		= NLA_POLICY_MIN_LEN(sizeof(struct xdp_flow_stats)),
	[XDP_FLOW_ATTR_SEQ]		= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_VERSION]		= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_PID]		= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_HELPER_STATE]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_HELPER_PID]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_HELPER_RESTARTS]	= { .type = NLA_U32 },
};

/* --- operations of the helper --- */

static bool xdp_flow_from_helper(struct genl_info *info)
{
	return xdp_flow_helper.state != XDP_FLOW_HELPER_STOPPED &&
	       info->snd_portid == READ_ONCE(xdp_flow_helper.portid);
}

static int xdp_flow_cmd_hello(struct sk_buff *skb, struct genl_info *info)
{
	u32 version, pid;

	if (GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_VERSION) ||
	    GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_PID))
		return -EINVAL;
	version = nla_get_u32(info->attrs[XDP_FLOW_ATTR_VERSION]);
	pid = nla_get_u32(info->attrs[XDP_FLOW_ATTR_PID]);
	return xdp_flow_umh_hello(info->snd_portid, version, pid, info->extack);
}

static int xdp_flow_cmd_reply(struct sk_buff *skb, struct genl_info *info)
{
	struct xdp_flow_request *req;
	struct nlattr *a;
	u32 seq;

	if (!xdp_flow_from_helper(info)) {
		NL_SET_ERR_MSG_MOD(info->extack, "only the registered helper may reply");
		return -EPERM;
	}
	if (GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_SEQ) ||
	    GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_ERROR))
		return -EINVAL;
	seq = nla_get_u32(info->attrs[XDP_FLOW_ATTR_SEQ]);

	spin_lock_bh(&xdp_flow_requests_lock);
	req = xdp_flow_request_find(seq);
	if (!req || completion_done(&req->done)) {
		spin_unlock_bh(&xdp_flow_requests_lock);
		return 0;	/* given up on, or not waited for */
	}
	req->err = (int)nla_get_u32(info->attrs[XDP_FLOW_ATTR_ERROR]);
	if (req->err > 0 || req->err < -MAX_ERRNO)
		req->err = -EPROTO;
	a = info->attrs[XDP_FLOW_ATTR_MSG];
	if (a)
		nla_strscpy(req->msg, a, sizeof(req->msg));
	a = info->attrs[XDP_FLOW_ATTR_STATS];
	if (a && nla_len(a) >= sizeof(req->stats)) {
		memcpy(&req->stats, nla_data(a), sizeof(req->stats));
		req->have_stats = true;
	}
	complete(&req->done);
	spin_unlock_bh(&xdp_flow_requests_lock);
	return 0;
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
	err = xdp_flow_dev_enable(dev, mode, info->extack);
	dev_put(dev);
	return err;
}

static int xdp_flow_cmd_dev_disable(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, XDP_FLOW_ATTR_IFINDEX))
		return -EINVAL;
	return xdp_flow_dev_disable(nla_get_u32(info->attrs[XDP_FLOW_ATTR_IFINDEX]),
				    info->extack);
}

static int xdp_flow_fill_status(struct sk_buff *msg, u32 portid, u32 seq,
				int flags)
{
	void *hdr;

	hdr = genlmsg_put(msg, portid, seq, &xdp_flow_genl_family, flags,
			  XDP_FLOW_CMD_STATUS_GET);
	if (!hdr)
		return -EMSGSIZE;
	mutex_lock(&xdp_flow_lock);
	if (nla_put_u32(msg, XDP_FLOW_ATTR_HELPER_STATE, xdp_flow_helper.state) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_HELPER_PID, xdp_flow_helper.pid) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_HELPER_RESTARTS,
			xdp_flow_helper.restarts) ||
	    nla_put_u32(msg, XDP_FLOW_ATTR_RULE_COUNT, xdp_flow_rule_count())) {
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
		    nla_put_s32(skb, XDP_FLOW_ATTR_ERROR, xdev->err)) {
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
	    nla_put(ctx->skb, XDP_FLOW_ATTR_STATS, sizeof(st), &st)) {
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
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1];
	unsigned long pos = cb->args[0];
	u32 ifindex = 0;
	int err;

	err = nlmsg_parse(cb->nlh, GENL_HDRLEN, tb, XDP_FLOW_ATTR_MAX,
			  xdp_flow_policy, cb->extack);
	if (err)
		return err;
	if (tb[XDP_FLOW_ATTR_IFINDEX])
		ifindex = nla_get_u32(tb[XDP_FLOW_ATTR_IFINDEX]);

	mutex_lock(&xdp_flow_lock);
	xdp_flow_walk_entries(ifindex, &pos, &visitor);
	mutex_unlock(&xdp_flow_lock);
	cb->args[0] = pos;
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
	{
		.cmd = XDP_FLOW_CMD_REPLY,
		.doit = xdp_flow_cmd_reply,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family xdp_flow_genl_family __ro_after_init = {
	.name		= XDP_FLOW_GENL_NAME,
	.version	= XDP_FLOW_GENL_VERSION,
	.maxattr	= XDP_FLOW_ATTR_MAX,
	.policy		= xdp_flow_policy,
	/* The helper answers while a caller of ours waits in a doit. */
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
