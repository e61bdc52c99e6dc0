// SPDX-License-Identifier: GPL-2.0
/*
 * Offline test of xdp-flow's output: feeds crafted module replies to the
 * reply handlers (no module needed) and prints what the tool would print.
 * run.sh compares the output with expected.txt and checks the JSON with jq.
 */
#define main xdp_flow_main
#include "../xdp-flow.c"
#undef main

static struct nlattr *mk_attr(int type, const void *data, int len)
{
	struct nlattr *a = calloc(1, NLA_HDRLEN + NLA_ALIGN(len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	return a;
}

static void ip4(__be32 *a, const char *s)
{
	inet_pton(AF_INET, s, a);
}

/* A rule as RULE_GET sends it: @why and @waiting as the module adds them
 * to software rules (NULL, 0: none).
 */
static void rule_msg(const struct xdp_flow_rule *r, const struct xdp_flow_stats *s,
		     const char *why, uint32_t waiting)
{
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1] = { 0 };

	tb[XDP_FLOW_ATTR_RULE] = mk_attr(XDP_FLOW_ATTR_RULE, r, sizeof(*r));
	if (s)
		tb[XDP_FLOW_ATTR_STATS] = mk_attr(XDP_FLOW_ATTR_STATS, s, sizeof(*s));
	if (why)
		tb[XDP_FLOW_ATTR_MSG] = mk_attr(XDP_FLOW_ATTR_MSG, why, strlen(why) + 1);
	if (waiting)
		tb[XDP_FLOW_ATTR_WAITING] = mk_attr(XDP_FLOW_ATTR_WAITING, &waiting,
						    sizeof(waiting));
	rule_handler(tb, NULL);
}

static void one_rule(const struct xdp_flow_rule *r, const struct xdp_flow_stats *s)
{
	rule_msg(r, s, NULL, 0);
}

static void rules(void)
{
	struct xdp_flow_rule r;
	struct xdp_flow_stats s = { 0 };
	uint32_t lo = if_nametoindex("lo");

	/* dst_ip 10.0.2.1 action drop, 50 packets */
	memset(&r, 0, sizeof(r));
	r.id = 3;
	r.order = (1ull << 32) | 0;
	r.cookie = 0xffff888012345678ull;
	r.key.ifindex = lo;
	r.mask.ifindex = 0xffffffff;
	r.key.n_proto = htons(0x0800);
	r.mask.n_proto = 0xffff;
	r.mask.vlan_tpid = 0xffff;	/* untagged */
	r.mask.cvlan_tpid = 0xffff;
	ip4(r.key.ip_dst, "10.0.2.1");
	ip4(r.mask.ip_dst, "255.255.255.255");
	r.nr_actions = 1;
	r.actions[0].id = XDP_FLOW_ACTION_DROP;
	s.id = 3;
	s.packets = 50;
	s.bytes = 2100;
	s.lastused_ns = 0;
	one_rule(&r, &s);

	/* software rule: src_ip 10.0.0.0/24, udp dport 53, vlan, macs */
	memset(&r, 0, sizeof(r));
	r.id = 4;
	r.flags = XDP_FLOW_RULE_F_SOFTWARE;
	r.order = (2ull << 32) | 1;
	r.chain = 1;
	r.cookie = 0x10;
	r.key.ifindex = lo;
	r.key.vlan_tpid = htons(0x8100);
	r.mask.vlan_tpid = 0xffff;
	r.key.vlan_tci = htons(10);
	r.mask.vlan_tci = htons(0x0fff);
	r.key.n_proto = htons(0x0800);
	r.mask.n_proto = 0xffff;
	memcpy(r.key.eth_dst, "\xaa\xbb\xcc\xdd\xee\xff", 6);
	memset(r.mask.eth_dst, 0xff, 6);
	memcpy(r.key.eth_src, "\x02\x00\x00\x00\x00\x00", 6);
	memcpy(r.mask.eth_src, "\xff\xff\xff\x00\x00\x00", 6);
	ip4(r.key.ip_src, "10.0.0.0");
	ip4(r.mask.ip_src, "255.255.255.0");
	ip4(r.key.ip_dst, "10.1.0.1");
	ip4(r.mask.ip_dst, "255.0.255.255");
	r.key.ip_proto = IPPROTO_UDP;
	r.mask.ip_proto = 0xff;
	r.key.l4_dst = htons(53);
	r.mask.l4_dst = 0xffff;
	r.l4_src_range.min = 1024;
	r.l4_src_range.max = 2047;
	r.key.ip_tos = 0x10;
	r.mask.ip_tos = 0xfc;
	r.key.ip_frag = XDP_FLOW_FRAG_IS;
	r.mask.ip_frag = XDP_FLOW_FRAG_IS | XDP_FLOW_FRAG_FIRST;
	r.nr_actions = 1;
	r.actions[0].id = XDP_FLOW_ACTION_PASS;
	s.id = 4;
	s.packets = 0;
	s.bytes = 0;
	rule_msg(&r, &s, "xdp_flow: cannot offload a match of this rule", 0);

	/* the same, waiting for room in the XDP tables */
	r.id = 7;
	s.id = 7;
	rule_msg(&r, &s, "xdp_flow: no room in the XDP tables", 1);

	/* ipv6 icmpv6 echo request redirected to lo, used just now */
	memset(&r, 0, sizeof(r));
	r.id = 5;
	r.order = (49152ull << 32);
	r.cookie = 0x20;
	r.key.ifindex = lo;
	r.key.n_proto = htons(0x86dd);
	r.mask.n_proto = 0xffff;
	inet_pton(AF_INET6, "2001:db8::1", r.key.ip_dst);
	memset(r.mask.ip_dst, 0xff, 16);
	r.key.ip_proto = IPPROTO_ICMPV6;
	r.mask.ip_proto = 0xff;
	r.key.l4_src = htons(128);
	r.mask.l4_src = htons(0xff);
	r.key.tcp_flags = 0;
	r.nr_actions = 1;
	r.actions[0].id = XDP_FLOW_ACTION_REDIRECT;
	r.actions[0].ifindex = lo;
	s.id = 5;
	s.packets = 7;
	s.bytes = 700;
	s.lastused_ns = now_ns() - 2500000000ull;
	one_rule(&r, &s);

	/* nftables chain of priority 10, its second rule: ip daddr drop */
	memset(&r, 0, sizeof(r));
	r.id = 6;
	r.flags = XDP_FLOW_RULE_F_NFTABLES;
	r.order = ((XDP_FLOW_ORDER_NFT_BASE + 10ull) << 32) | (1 << 1) | 1;
	r.cookie = 0x30;
	r.key.ifindex = lo;
	r.key.n_proto = htons(0x0800);
	r.mask.n_proto = 0xffff;
	r.mask.cvlan_tpid = 0xffff;
	r.key.ip_dst[0] = htonl(0x0a000301);
	r.mask.ip_dst[0] = 0xffffffff;
	r.nr_actions = 1;
	r.actions[0].id = XDP_FLOW_ACTION_DROP;
	s.id = 6;
	s.packets = 3;
	s.bytes = 126;
	s.lastused_ns = 0;
	one_rule(&r, &s);

	/* a flowtable's flow arriving in PPPoE session 0x1234: route, NAT,
	 * pop the session's header, redirect
	 */
	memset(&r, 0, sizeof(r));
	r.id = 7;
	r.flags = XDP_FLOW_RULE_F_FLOWTABLE;
	r.order = (XDP_FLOW_ORDER_NFT_BASE + 0ull) << 32;
	r.cookie = 0x40;
	r.key.ifindex = lo;
	r.key.n_proto = htons(0x0800);
	r.mask.n_proto = 0xffff;
	r.mask.vlan_tpid = 0xffff;
	r.key.pppoe_sid = htons(0x1234);
	r.mask.pppoe_sid = 0xffff;
	r.key.ppp_proto = htons(0x0021);
	r.mask.ppp_proto = 0xffff;
	r.key.ip_proto = IPPROTO_UDP;
	r.mask.ip_proto = 0xff;
	r.key.ip_dst[0] = htonl(0xc0000201);
	r.mask.ip_dst[0] = 0xffffffff;
	r.nr_actions = 4;
	r.actions[0].id = XDP_FLOW_ACTION_FT_ROUTE;
	r.actions[0].ft_route.mtu = 1500;
	memcpy(r.actions[0].ft_route.eth_dst, "\x02\x00\x00\x00\x00\x0b", 6);
	memcpy(r.actions[0].ft_route.eth_src, "\x02\x00\x00\x00\x00\x0c", 6);
	r.actions[1].id = XDP_FLOW_ACTION_FT_DST_ADDR;
	ip4(r.actions[1].ft_addr, "10.0.1.2");
	r.actions[2].id = XDP_FLOW_ACTION_PPPOE_POP;
	r.actions[3].id = XDP_FLOW_ACTION_REDIRECT;
	r.actions[3].ifindex = lo;
	s.id = 7;
	s.packets = 2;
	s.bytes = 92;
	one_rule(&r, &s);

	/* its other direction: pushed into the session */
	r.id = 8;
	r.key.pppoe_sid = 0;
	r.key.ppp_proto = 0;
	r.key.ip_dst[0] = 0;
	r.mask.ip_dst[0] = 0;
	r.actions[1].id = XDP_FLOW_ACTION_FT_SRC_ADDR;
	ip4(r.actions[1].ft_addr, "192.0.2.1");
	r.actions[2].id = XDP_FLOW_ACTION_PPPOE_PUSH;
	r.actions[2].pppoe_sid = htons(0x1234);
	s.id = 8;
	one_rule(&r, &s);

	/* a flood: copies out and in, a tag between them, into a port */
	memset(&r, 0, sizeof(r));
	r.id = 9;
	r.order = (5ULL << 32) | 1;
	r.key.ifindex = lo;
	r.mask.ifindex = ~0u;
	r.nr_actions = 5;
	r.actions[0].id = XDP_FLOW_ACTION_MIRROR;
	r.actions[0].ifindex = lo;
	r.actions[1].id = XDP_FLOW_ACTION_VLAN_PUSH;
	r.actions[1].vlan.proto = htons(0x8100);
	r.actions[1].vlan.tci = 10;
	r.actions[2].id = XDP_FLOW_ACTION_MIRROR_INGRESS;
	r.actions[2].ifindex = lo;
	r.actions[3].id = XDP_FLOW_ACTION_PTYPE;
	r.actions[3].ptype = 0;
	r.actions[4].id = XDP_FLOW_ACTION_REDIRECT_INGRESS;
	r.actions[4].ifindex = lo;
	s.id = 9;
	one_rule(&r, &s);

	/* an encapsulation into a VXLAN device */
	memset(&r, 0, sizeof(r));
	r.id = 10;
	r.order = (6ULL << 32) | 1;
	r.key.ifindex = lo;
	r.mask.ifindex = ~0u;
	r.nr_actions = 2;
	r.actions[0].id = XDP_FLOW_ACTION_TUNNEL_SET;
	r.actions[0].tunnel.id = 42;
	ip4(&r.actions[0].tunnel.src, "192.0.2.1");
	ip4(&r.actions[0].tunnel.dst, "192.0.2.2");
	r.actions[0].tunnel.tos = 0x10;
	r.actions[0].tunnel.ttl = 64;
	r.actions[0].tunnel.flags = XDP_FLOW_TUN_DF;
	r.actions[1].id = XDP_FLOW_ACTION_REDIRECT;
	r.actions[1].ifindex = lo;
	s.id = 10;
	one_rule(&r, &s);

	/* the same into a Geneve device, with OVN's option */
	r.id = 12;
	r.order = (8ULL << 32) | 1;
	r.nr_actions = 3;
	r.actions[2] = r.actions[1];
	memset(&r.actions[1], 0, sizeof(r.actions[1]));
	r.actions[1].id = XDP_FLOW_ACTION_TUNNEL_OPTS;
	r.actions[1].tun_opts.len = 8;
	memcpy(r.actions[1].tun_opts.data,
	       "\x01\x02\x80\x01\x00\x00\x00\x2a", 8);
	s.id = 12;
	one_rule(&r, &s);

	/* a decapsulated frame's rule, on the tunnel metadata */
	memset(&r, 0, sizeof(r));
	r.id = 11;
	r.order = (7ULL << 32) | 1;
	r.key.ifindex = lo;
	r.mask.ifindex = ~0u;
	r.key.enc_addr = XDP_FLOW_ENC_IPV4;
	r.mask.enc_addr = 0xff;
	ip4(&r.key.enc_src, "192.0.2.2");
	ip4(&r.mask.enc_src, "255.255.255.255");
	ip4(&r.key.enc_dst, "192.0.2.0");
	ip4(&r.mask.enc_dst, "255.255.255.0");
	r.key.enc_key_id = htonl(42);
	r.mask.enc_key_id = htonl(0xffffffff);
	r.key.enc_tos = 0x10;
	r.mask.enc_tos = 0xfc;
	r.key.enc_ttl = 64;
	r.mask.enc_ttl = 0xff;
	/* OVN's option, the low half of its data unmatched */
	r.key.enc_opt_len = 8;
	r.mask.enc_opt_len = 8;
	memcpy(r.key.enc_opts, "\x01\x02\x80\x01\x00\x01\x00\x00", 8);
	memcpy(r.mask.enc_opts, "\xff\xff\xff\x01\xff\xff\x00\x00", 8);
	r.nr_actions = 2;
	r.actions[0].id = XDP_FLOW_ACTION_TUNNEL_UNSET;
	r.actions[1].id = XDP_FLOW_ACTION_REDIRECT;
	r.actions[1].ifindex = lo;
	s.id = 11;
	one_rule(&r, &s);

	/* over an IPv6 underlay: the key has the digests, the rule the
	 * addresses
	 */
	memset(&r.key.enc_opts, 0, sizeof(r.key.enc_opts));
	memset(&r.mask.enc_opts, 0, sizeof(r.mask.enc_opts));
	r.key.enc_opt_len = 0;
	r.mask.enc_opt_len = 0;
	r.id = 13;
	r.order = (20ULL << 32) | 1;
	r.flags = XDP_FLOW_RULE_F_ENC6;
	r.key.enc_addr = XDP_FLOW_ENC_IPV6;
	inet_pton(AF_INET6, "2001:db8::2", r.enc6.src);
	inet_pton(AF_INET6, "2001:db8::1", r.enc6.dst);
	r.key.enc_src = xdp_flow_enc6_digest(r.enc6.src);
	r.key.enc_dst = xdp_flow_enc6_digest(r.enc6.dst);
	r.mask.enc_src = 0xffffffff;
	r.mask.enc_dst = 0xffffffff;
	s.id = 13;
	one_rule(&r, &s);
}

static void devices(void)
{
	struct nlattr *tb[XDP_FLOW_ATTR_MAX + 1] = { 0 };
	uint32_t lo = if_nametoindex("lo"), v;
	int32_t e = -ENODEV;

	tb[XDP_FLOW_ATTR_IFINDEX] = mk_attr(XDP_FLOW_ATTR_IFINDEX, &lo, 4);
	v = XDP_FLOW_DEV_STATE_ATTACHED;
	tb[XDP_FLOW_ATTR_DEV_STATE] = mk_attr(XDP_FLOW_ATTR_DEV_STATE, &v, 4);
	v = XDP_FLOW_XDP_MODE_NATIVE;
	tb[XDP_FLOW_ATTR_XDP_MODE] = mk_attr(XDP_FLOW_ATTR_XDP_MODE, &v, 4);
	v = 2;
	tb[XDP_FLOW_ATTR_RULE_COUNT] = mk_attr(XDP_FLOW_ATTR_RULE_COUNT, &v, 4);
	dev_handler(tb, NULL);

	v = XDP_FLOW_DEV_STATE_ERROR;
	tb[XDP_FLOW_ATTR_DEV_STATE] = mk_attr(XDP_FLOW_ATTR_DEV_STATE, &v, 4);
	v = XDP_FLOW_XDP_MODE_GENERIC;
	tb[XDP_FLOW_ATTR_XDP_MODE] = mk_attr(XDP_FLOW_ATTR_XDP_MODE, &v, 4);
	tb[XDP_FLOW_ATTR_ERROR] = mk_attr(XDP_FLOW_ATTR_ERROR, &e, 4);
	tb[XDP_FLOW_ATTR_MSG] = mk_attr(XDP_FLOW_ATTR_MSG, "attach \"failed\"", 16);
	dev_handler(tb, NULL);

	v = XDP_FLOW_DEV_STATE_IDLE;
	tb[XDP_FLOW_ATTR_DEV_STATE] = mk_attr(XDP_FLOW_ATTR_DEV_STATE, &v, 4);
	v = XDP_FLOW_XDP_MODE_TC;
	tb[XDP_FLOW_ATTR_XDP_MODE] = mk_attr(XDP_FLOW_ATTR_XDP_MODE, &v, 4);
	v = 0;
	tb[XDP_FLOW_ATTR_RULE_COUNT] = mk_attr(XDP_FLOW_ATTR_RULE_COUNT, &v, 4);
	tb[XDP_FLOW_ATTR_ERROR] = NULL;
	tb[XDP_FLOW_ATTR_MSG] = NULL;
	tb[XDP_FLOW_ATTR_HOOK_WHY] = mk_attr(XDP_FLOW_ATTR_HOOK_WHY,
					     "auto: \"virtual\" device", 24);
	v = XDP_FLOW_SWITCH_HW_TC;
	tb[XDP_FLOW_ATTR_SWITCH] = mk_attr(XDP_FLOW_ATTR_SWITCH, &v, 4);
	dev_handler(tb, NULL);
}

int main(int argc, char **argv)
{
	json = argc > 1 && strchr(argv[1], 'j');
	pretty = argc > 1 && strchr(argv[1], 'p');

	if (json) {
		jw_obj_open(NULL);
		jw_arr_open("rules");
		rules();
		jw_arr_close();
		jw_arr_open("devices");
		devices();
		jw_arr_close();
		jw_obj_close();
	} else {
		rules();
		devices();
	}
	return 0;
}
