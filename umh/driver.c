// SPDX-License-Identifier: GPL-2.0
/*
 * The test driver: requests as text lines on stdin, one reply line each on
 * stdout, so the helper can be exercised without the module. Each line is
 * turned into the same struct umh_request the generic netlink transport
 * builds, and served by the same code.
 *
 *   attach <dev|ifindex> [generic|tc]   detach <dev|ifindex>
 *   add id=N (prio=P | order=O) [software] [dev=D | ifindex=I]
 *       [dst_mac=M[/M]] [src_mac=M[/M]] [eth_type=T] [vlan_id=V]
 *       [vlan_prio=P] [vlan_tpid=T[/M]] [pppoe_sid=S[/M]]
 *       [ppp_proto=ip|ipv6|N] [ip_proto=udp|tcp|sctp|icmp|icmpv6|N] [tos=T[/M]]
 *       [ttl=T[/M]] [src_ip=A[/len]] [dst_ip=A[/len]] [src_port=P[/M]]
 *       [dst_port=P[/M]] [src_range=MIN-MAX] [dst_range=MIN-MAX]
 *       [tcp_flags=F[/M]] [frag=F[/M]] [icmp_type=T]
 *       [icmp_code=C] [enc_key_id=K[/M]] [enc_src=A[/len]]
 *       [enc_dst=A[/len]] (an IPv6 one whole) [enc_tos=T[/M]] [enc_ttl=T[/M]]
 *       [enc_opt_len=L[/M]] [enc_opts=0x<16 hex digits>[/M]]
 *       action=drop|pass|redirect:<dev|ifindex>|tunnel_unset|...
 *   del id=N      stats [id=N]      hello      sync      shutdown
 *
 * Values are taken as given, not masked: "dst_ip=10.0.0.1/24" is a key with
 * bits outside its mask, which the tables must refuse.
 *
 * Replies: "ok", "ok id=N packets=P bytes=B lastused_jiffies=J[ ; id=...]", or
 * "err <-errno> <message>".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>

#include "umh.h"

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void driver_reply(void *transport, const struct umh_reply *r)
{
	size_t i;

	(void)transport;
	pthread_mutex_lock(&out_lock);
	if (r->err) {
		printf("err %d %s\n", r->err, r->msg[0] ? r->msg : strerror(-r->err));
	} else {
		printf("ok");
		for (i = 0; i < r->nr_stats; i++)
			printf("%s id=%u packets=%llu bytes=%llu lastused_jiffies=%llu",
			       i ? " ;" : "", r->stats[i].id,
			       (unsigned long long)r->stats[i].packets,
			       (unsigned long long)r->stats[i].bytes,
			       (unsigned long long)r->stats[i].lastused_jiffies);
		printf("\n");
	}
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static int parse_dev(const char *s, __u32 *ifindex)
{
	char *end;

	*ifindex = strtoul(s, &end, 0);
	if (*s && !*end)
		return 0;
	*ifindex = if_nametoindex(s);
	return *ifindex ? 0 : -ENODEV;
}

/* "value[/mask]" as a number of @bytes bytes, into big-endian @key/@mask. */
static int parse_num(const char *s, void *key, void *mask, int bytes)
{
	unsigned long long v, m = bytes == 8 ? ~0ULL : (1ULL << (8 * bytes)) - 1;
	const char *slash = strchr(s, '/');
	char *end;
	__u8 *k = key, *mk = mask;
	int i;

	v = strtoull(s, &end, 0);
	if (end == s || (*end && *end != '/'))
		return -EINVAL;
	if (slash) {
		m = strtoull(slash + 1, &end, 0);
		if (*end)
			return -EINVAL;
	}
	for (i = bytes - 1; i >= 0; i--, v >>= 8, m >>= 8) {
		k[i] = v & 0xff;
		mk[i] = m & 0xff;
	}
	return 0;
}

static int parse_mac(const char *s, __u8 *key, __u8 *mask)
{
	unsigned int b[6], i;
	const char *slash = strchr(s, '/');

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		key[i] = b[i];
		mask[i] = 0xff;
	}
	if (slash) {
		if (sscanf(slash + 1, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2],
			   &b[3], &b[4], &b[5]) != 6)
			return -EINVAL;
		for (i = 0; i < 6; i++)
			mask[i] = b[i];
	}
	return 0;
}

/* "addr[/prefix]", IPv4 or IPv6; returns the EtherType it implies. */
static int parse_ip(const char *s, __be32 *key, __be32 *mask, __be16 *proto)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	int plen, bits, i;
	__u8 *m = (__u8 *)mask;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (inet_pton(AF_INET, buf, key) == 1) {
		bits = 32;
		*proto = htons(ETH_P_IP);
	} else if (inet_pton(AF_INET6, buf, key) == 1) {
		bits = 128;
		*proto = htons(ETH_P_IPV6);
	} else {
		return -EINVAL;
	}
	plen = slash ? atoi(slash + 1) : bits;
	if (plen < 0 || plen > bits)
		return -EINVAL;
	memset(mask, 0, 16);
	for (i = 0; i < plen / 8; i++)
		m[i] = 0xff;
	if (plen % 8)
		m[i] = 0xff << (8 - plen % 8);
	return 0;
}

static int parse_proto(const char *s, struct xdp_flow_key *k,
		       struct xdp_flow_key *m)
{
	static const struct { const char *name; __u8 proto; } names[] = {
		{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP },
		{ "sctp", IPPROTO_SCTP }, { "icmp", IPPROTO_ICMP },
		{ "icmpv6", IPPROTO_ICMPV6 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(s, names[i].name)) {
			k->ip_proto = names[i].proto;
			m->ip_proto = 0xff;
			return 0;
		}
	}
	return parse_num(s, &k->ip_proto, &m->ip_proto, 1);
}

/* The actions named "<kind>:<dev>": their id, and the device in @dev. */
static __u32 dev_action(const char *s, const char **dev)
{
	static const struct {
		const char *prefix;
		__u32 id;
	} kinds[] = {
		{ "redirect:", XDP_FLOW_ACTION_REDIRECT },
		{ "mirror:", XDP_FLOW_ACTION_MIRROR },
		{ "ingress:", XDP_FLOW_ACTION_REDIRECT_INGRESS },
		{ "mirror_ingress:", XDP_FLOW_ACTION_MIRROR_INGRESS },
	};
	size_t i, n;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		n = strlen(kinds[i].prefix);
		if (!strncmp(s, kinds[i].prefix, n)) {
			*dev = s + n;
			return kinds[i].id;
		}
	}
	return 0;
}

/* "tunnel:<id>,<src>,<dst>,<tos>,<ttl>,<flags>": a TUNNEL_SET. */
static int parse_tunnel(const char *s, struct xdp_flow_action *a)
{
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	unsigned int id, tos, ttl, flags;

	if (sscanf(s, "%u,%15[0-9.],%15[0-9.],%u,%u,%u", &id, src, dst, &tos,
		   &ttl, &flags) != 6 || tos > 255 || ttl > 255 ||
	    inet_pton(AF_INET, src, &a->tunnel.src) != 1 ||
	    inet_pton(AF_INET, dst, &a->tunnel.dst) != 1)
		return -EINVAL;
	a->id = XDP_FLOW_ACTION_TUNNEL_SET;
	a->tunnel.id = id;
	a->tunnel.tos = tos;
	a->tunnel.ttl = ttl;
	a->tunnel.flags = flags;
	return 0;
}

/* "<hex>": a TUNNEL_OPTS of those bytes (the tables check their length). */
static int parse_tun_opts(const char *s, struct xdp_flow_action *a)
{
	unsigned int n = 0, b;

	a->id = XDP_FLOW_ACTION_TUNNEL_OPTS;
	while (s[0] && s[1]) {
		if (n == XDP_FLOW_TUN_OPTS_MAX || sscanf(s, "%2x", &b) != 1)
			return -EINVAL;
		a->tun_opts.data[n++] = b;
		s += 2;
	}
	if (*s)
		return -EINVAL;
	a->tun_opts.len = n;
	return 0;
}

static int parse_action(const char *s, struct xdp_flow_rule *r)
{
	struct xdp_flow_action *a = &r->actions[r->nr_actions];
	const char *dev;
	__u32 dev_id;

	if (r->nr_actions == XDP_FLOW_MAX_ACTIONS)
		return -E2BIG;
	if (!strcmp(s, "drop")) {
		a->id = XDP_FLOW_ACTION_DROP;
	} else if (!strcmp(s, "pass")) {
		a->id = XDP_FLOW_ACTION_PASS;
	} else if (!strcmp(s, "tunnel_unset")) {
		a->id = XDP_FLOW_ACTION_TUNNEL_UNSET;
	} else if ((dev_id = dev_action(s, &dev))) {
		a->id = dev_id;
		if (parse_dev(dev, &a->ifindex))
			return -ENODEV;
	} else if (!strncmp(s, "ptype:", 6)) {
		a->id = XDP_FLOW_ACTION_PTYPE;
		a->ptype = strtoul(s + 6, NULL, 0);
	} else if (!strncmp(s, "tunnel:", 7)) {
		if (parse_tunnel(s + 7, a))
			return -EINVAL;
	} else if (!strncmp(s, "tunopts:", 8)) {	/* hex bytes */
		if (parse_tun_opts(s + 8, a))
			return -EINVAL;
	} else if (!strncmp(s, "raw:", 4)) {	/* any id, for tests */
		a->id = strtoul(s + 4, NULL, 0);
	} else {
		return -EINVAL;
	}
	r->nr_actions++;
	return 0;
}

/*
 * enc_<name>=<val>: a tunnel metadata field, of IPv4 metadata unless an
 * address is IPv6 (whole: the key gets its digest, @r->enc6 the address).
 */
static int parse_enc(const char *name, const char *val,
		     struct xdp_flow_rule *r)
{
	struct xdp_flow_key *k = &r->key, *m = &r->mask;
	__be32 a[4], am[4];
	__u8 *addr;
	__be16 proto;
	int err;

	if (!k->enc_addr)
		k->enc_addr = XDP_FLOW_ENC_IPV4;
	m->enc_addr = 0xff;
	if (!strcmp(name, "key_id"))
		return parse_num(val, &k->enc_key_id, &m->enc_key_id, 4);
	if (!strcmp(name, "tos"))
		return parse_num(val, &k->enc_tos, &m->enc_tos, 1);
	if (!strcmp(name, "ttl"))
		return parse_num(val, &k->enc_ttl, &m->enc_ttl, 1);
	if (!strcmp(name, "opt_len"))
		return parse_num(val, &k->enc_opt_len, &m->enc_opt_len, 1);
	if (!strcmp(name, "opts"))
		return parse_num(val, k->enc_opts, m->enc_opts,
				 XDP_FLOW_ENC_OPTS_LEN);
	if (strcmp(name, "src") && strcmp(name, "dst"))
		return -ENOENT;
	err = parse_ip(val, a, am, &proto);
	if (err)
		return -EINVAL;
	if (proto == htons(ETH_P_IPV6)) {
		if ((am[0] & am[1] & am[2] & am[3]) != 0xffffffff)
			return -EINVAL;
		addr = !strcmp(name, "src") ? r->enc6.src : r->enc6.dst;
		memcpy(addr, a, 16);
		k->enc_addr = XDP_FLOW_ENC_IPV6;
		r->flags |= XDP_FLOW_RULE_F_ENC6;
		a[0] = xdp_flow_enc6_digest(addr);
		am[0] = 0xffffffff;
	}
	if (!strcmp(name, "src")) {
		k->enc_src = a[0];
		m->enc_src = am[0];
	} else {
		k->enc_dst = a[0];
		m->enc_dst = am[0];
	}
	return 0;
}

/* "MIN-MAX", taken as given (the tables check it). */
static int parse_range(const char *s, struct xdp_flow_port_range *r)
{
	unsigned int min, max;

	if (sscanf(s, "%u-%u", &min, &max) != 2 || min > 0xffff || max > 0xffff)
		return -EINVAL;
	r->min = min;
	r->max = max;
	return 0;
}

static int parse_field(const char *name, const char *val,
		       struct xdp_flow_rule *r, bool *eth_type_set,
		       __be16 *ip_eth_type)
{
	struct xdp_flow_key *k = &r->key, *m = &r->mask;
	__be16 tci, tcim;
	__u32 ifindex;

	if (!strcmp(name, "id")) {
		r->id = strtoul(val, NULL, 0);
		return 0;
	}
	if (!strcmp(name, "prio")) {
		r->order = (r->order & 0xffffffff) |
			   (__u64)strtoul(val, NULL, 0) << 32;
		return 0;
	}
	if (!strcmp(name, "order")) {
		r->order = strtoull(val, NULL, 0);
		return 0;
	}
	if (!strcmp(name, "cookie")) {
		r->cookie = strtoull(val, NULL, 0);
		return 0;
	}
	if (!strcmp(name, "dev") || !strcmp(name, "ifindex")) {
		if (parse_dev(val, &ifindex))
			return -ENODEV;
		k->ifindex = ifindex;
		m->ifindex = ~0u;
		return 0;
	}
	if (!strcmp(name, "dst_mac"))
		return parse_mac(val, k->eth_dst, m->eth_dst);
	if (!strcmp(name, "src_mac"))
		return parse_mac(val, k->eth_src, m->eth_src);
	if (!strcmp(name, "eth_type")) {
		*eth_type_set = true;
		return parse_num(!strcmp(val, "ipv4") ? "0x0800" :
				 !strcmp(val, "ipv6") ? "0x86dd" :
				 !strcmp(val, "arp") ? "0x0806" : val,
				 &k->n_proto, &m->n_proto, 2);
	}
	if (!strcmp(name, "vlan_id") || !strcmp(name, "vlan_prio")) {
		bool id = !strcmp(name, "vlan_id");
		unsigned long v = strtoul(val, NULL, 0);

		tci = htons(id ? v & 0xfff : (v & 7) << 13);
		tcim = htons(id ? 0xfff : 0xe000);
		k->vlan_tci |= tci;
		m->vlan_tci |= tcim;
		k->vlan_tpid = htons(ETH_P_8021Q);
		m->vlan_tpid = 0xffff;
		return 0;
	}
	if (!strcmp(name, "vlan_tpid"))
		return parse_num(val, &k->vlan_tpid, &m->vlan_tpid, 2);
	if (!strcmp(name, "pppoe_sid"))
		return parse_num(val, &k->pppoe_sid, &m->pppoe_sid, 2);
	if (!strcmp(name, "ppp_proto"))
		return parse_num(!strcmp(val, "ip") ? "0x0021" :
				 !strcmp(val, "ipv6") ? "0x0057" : val,
				 &k->ppp_proto, &m->ppp_proto, 2);
	if (!strcmp(name, "ip_proto"))
		return parse_proto(val, k, m);
	if (!strcmp(name, "tos"))
		return parse_num(val, &k->ip_tos, &m->ip_tos, 1);
	if (!strcmp(name, "ttl"))
		return parse_num(val, &k->ip_ttl, &m->ip_ttl, 1);
	if (!strcmp(name, "frag"))
		return parse_num(val, &k->ip_frag, &m->ip_frag, 1);
	if (!strcmp(name, "tcp_flags"))
		return parse_num(val, &k->tcp_flags, &m->tcp_flags, 2);
	if (!strcmp(name, "src_ip"))
		return parse_ip(val, k->ip_src, m->ip_src, ip_eth_type);
	if (!strcmp(name, "dst_ip"))
		return parse_ip(val, k->ip_dst, m->ip_dst, ip_eth_type);
	if (!strcmp(name, "src_port") || !strcmp(name, "icmp_type"))
		return parse_num(val, &k->l4_src, &m->l4_src, 2);
	if (!strcmp(name, "dst_port") || !strcmp(name, "icmp_code"))
		return parse_num(val, &k->l4_dst, &m->l4_dst, 2);
	if (!strncmp(name, "enc_", 4))
		return parse_enc(name + 4, val, r);
	if (!strcmp(name, "src_range"))
		return parse_range(val, &r->l4_src_range);
	if (!strcmp(name, "dst_range"))
		return parse_range(val, &r->l4_dst_range);
	if (!strcmp(name, "action"))
		return parse_action(val, r);
	return -ENOENT;
}

/* Also used by the host tests to write their rules as text. */
int driver_parse_rule(char *args, struct xdp_flow_rule *r, char *msg,
		      size_t len)
{
	bool eth_type_set = false;
	__be16 ip_eth_type = 0;
	char *tok, *save, *eq;
	int err;

	memset(r, 0, sizeof(*r));
	for (tok = strtok_r(args, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(tok, "software")) {
			r->flags |= XDP_FLOW_RULE_F_SOFTWARE;
			continue;
		}
		eq = strchr(tok, '=');
		if (!eq) {
			snprintf(msg, len, "expected name=value: %s", tok);
			return -EINVAL;
		}
		*eq = '\0';
		err = parse_field(tok, eq + 1, r, &eth_type_set, &ip_eth_type);
		if (err) {
			snprintf(msg, len, "%s %s=%s",
				 err == -ENOENT ? "unknown field" :
				 "bad value", tok, eq + 1);
			return -EINVAL;
		}
	}
	/* Like flower, addresses imply the protocol. */
	if (ip_eth_type && !eth_type_set) {
		r->key.n_proto = ip_eth_type;
		r->mask.n_proto = 0xffff;
	}
	return 0;
}

static int parse_id(char *args, __u32 *id)
{
	char *end;

	if (strncmp(args, "id=", 3))
		return -EINVAL;
	*id = strtoul(args + 3, &end, 0);
	return *end && *end != ' ' && *end != '\n' ? -EINVAL : 0;
}

/* Builds the request for one line; returns 1 for a line with no request. */
static int parse_line(struct umh *u, char *line, struct umh_request *req,
		      char *msg, size_t len)
{
	char *cmd, *args, *arg2;

	line[strcspn(line, "\r\n#")] = '\0';
	cmd = strtok_r(line, " \t", &args);
	if (!cmd)
		return 1;
	while (*args == ' ' || *args == '\t')
		args++;

	if (!strcmp(cmd, "add")) {
		req->cmd = XDP_FLOW_CMD_RULE_ADD;
		return driver_parse_rule(args, &req->rule, msg, len);
	}
	if (!strcmp(cmd, "del")) {
		req->cmd = XDP_FLOW_CMD_RULE_DEL;
		return parse_id(args, &req->rule_id);
	}
	if (!strcmp(cmd, "stats")) {
		req->cmd = XDP_FLOW_CMD_STATS_GET;
		req->has_rule_id = *args;
		return *args ? parse_id(args, &req->rule_id) : 0;
	}
	if (!strcmp(cmd, "attach") || !strcmp(cmd, "detach")) {
		req->cmd = cmd[0] == 'a' ? XDP_FLOW_CMD_DEV_ATTACH :
					   XDP_FLOW_CMD_DEV_DETACH;
		arg2 = strpbrk(args, " \t");
		if (arg2)
			*arg2++ = '\0';
		if (parse_dev(args, &req->ifindex)) {
			snprintf(msg, len, "no device %s", args);
			return -ENODEV;
		}
		if (arg2 && strstr(arg2, "generic"))
			req->xdp_mode = XDP_FLOW_XDP_MODE_GENERIC;
		else if (arg2 && strstr(arg2, "tc"))
			req->xdp_mode = XDP_FLOW_XDP_MODE_TC;
		return 0;
	}
	if (!strcmp(cmd, "sync")) {
		req->cmd = XDP_FLOW_CMD_SYNC;
		return 0;
	}
	if (!strcmp(cmd, "shutdown")) {
		req->cmd = XDP_FLOW_CMD_SHUTDOWN;
		return 0;
	}
	if (!strcmp(cmd, "hello")) {
		umh_begin_replay(u);
		snprintf(msg, len, "replay started");
		return 1;
	}
	snprintf(msg, len, "unknown command %s", cmd);
	return -EINVAL;
}

int driver_run(struct umh *u)
{
	struct umh_request req;
	char *line = NULL;
	size_t cap = 0;
	struct umh_reply r;
	int err;

	u->reply = driver_reply;
	u->transport = NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);

	while (!u->exiting && getline(&line, &cap, stdin) > 0) {
		memset(&req, 0, sizeof(req));
		memset(&r, 0, sizeof(r));
		err = parse_line(u, line, &req, r.msg, sizeof(r.msg));
		if (err == 1 && !r.msg[0])
			continue;	/* blank line or comment */
		if (err) {
			r.err = err == 1 ? 0 : err;
			driver_reply(NULL, &r);
			continue;
		}
		umh_handle(u, &req);
		/* One reply per line, in order: wait for the worker too. */
		attach_wait_idle(u->attach);
	}
	free(line);
	return 0;
}
