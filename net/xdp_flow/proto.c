// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_flow: the protocol of the generic netlink family as the module
 * checks it (include/uapi/linux/xdp_flow.h describes it): the attribute
 * policy, which the family (genl.c) applies to what the xdp-flow command
 * and the helper send, and the parser of the helper's REPLY messages,
 * which do not come over generic netlink (see reply.c).
 *
 * It owns the policy; it calls nothing of the module.
 */
#include <net/genetlink.h>
#include <net/netlink.h>

#include "xdp_flow.h"

const struct nla_policy xdp_flow_policy[XDP_FLOW_ATTR_MAX + 1] = {
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
	[XDP_FLOW_ATTR_WAITING]		= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_PROG_FD]		= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_TC_PROG_FD]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_TO_STACK]	= { .type = NLA_FLAG },
	[XDP_FLOW_ATTR_SHIELD_PRIO]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_PROGRESS]	= { .type = NLA_FLAG },
	[XDP_FLOW_ATTR_RULE_IDS]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_ROOM]		= NLA_POLICY_EXACT_LEN(sizeof(struct xdp_flow_room)),
	[XDP_FLOW_ATTR_IN_FLIGHT]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_MAX_RULES]	= { .type = NLA_U32 },
	[XDP_FLOW_ATTR_POSTED]		= { .type = NLA_FLAG },
};

/**
 * xdp_flow_parse_reply() - parse a REPLY the helper wrote
 * @buf: the message, a generic netlink message of the family's format
 * @len: its length
 * @tb: gets its attributes, checked against the family's policy
 *
 * The helper does not send its replies over generic netlink (see
 * reply.c): this parses them as the family would.
 *
 * Return: 0, or a negative errno for a malformed message.
 */
int xdp_flow_parse_reply(const void *buf, size_t len, struct nlattr **tb)
{
	const struct nlmsghdr *nlh = buf;
	const struct genlmsghdr *gh;

	if (len < NLMSG_HDRLEN + GENL_HDRLEN || nlh->nlmsg_len != len)
		return -EINVAL;
	gh = nlmsg_data(nlh);
	if (gh->cmd != XDP_FLOW_CMD_REPLY)
		return -EINVAL;
	return nlmsg_parse(nlh, GENL_HDRLEN, tb, XDP_FLOW_ATTR_MAX,
			   xdp_flow_policy, NULL);
}
