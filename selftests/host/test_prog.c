// SPDX-License-Identifier: GPL-2.0
/*
 * Packet fixtures for the XDP program, through BPF_PROG_TEST_RUN: each case
 * installs rules with the helper's own table code, runs a frame, and checks
 * the verdict and the change of the rule's counters. No pinning: a helper
 * running on this machine is not disturbed.
 *
 * Output: one "ok - ..." / "not ok - ... # reason" line per check group.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "umh.h"
#include "xdp_flow_dp.h"
#include "xdp_flow.skel.h"
#include "tun_inject.h"
#include "tun_inject.skel.h"

#define IFINDEX		1	/* lo: BPF_PROG_TEST_RUN wants a real device */
#define NO_RULE		(~0u)

static struct xdp_flow_bpf *skel;
static struct table *tbl;
static int prog_fd;
/* The instance of the object that holds prog_fd (dp_hook_load()). */
static struct xdp_flow_bpf *prog_inst;
/* Running the TC hook's program: its verdicts are mapped to XDP's. */
static bool tc_hook;
static int failures, group_failed;
static char group_why[256];

/* --- reporting, in the style of selftests/lib.sh --- */

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (group_failed++)
		return;
	va_start(ap, fmt);
	vsnprintf(group_why, sizeof(group_why), fmt, ap);
	va_end(ap);
}

static void log_test(const char *desc)
{
	const char *hook = tc_hook ? "tc hook: " : "";

	if (group_failed) {
		printf("not ok - %s%s # %s\n", hook, desc, group_why);
		failures++;
	} else {
		printf("ok - %s%s\n", hook, desc);
	}
	group_failed = 0;
	fflush(stdout);
}

/* --- frames --- */

struct frame {
	__u8 b[256];
	size_t len;
};

static const __u8 mac_a[6] = { 2, 0, 0, 0, 0, 1 };
static const __u8 mac_b[6] = { 2, 0, 0, 0, 0, 2 };

static void put(struct frame *f, const void *p, size_t n)
{
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void put16(struct frame *f, __u16 v)
{
	v = htons(v);
	put(f, &v, 2);
}

static void eth(struct frame *f, const __u8 *dst, const __u8 *src, __u16 type)
{
	f->len = 0;
	memset(f->b, 0, sizeof(f->b));
	put(f, dst, 6);
	put(f, src, 6);
	put16(f, type);
}

static void vlan(struct frame *f, __u16 tci, __u16 next)
{
	put16(f, tci);
	put16(f, next);
}

static __u32 ip4(const char *s)
{
	__u32 a;

	inet_pton(AF_INET, s, &a);
	return a;
}

/* IPv4 header with @optlen option bytes; @l4len bytes follow it. */
static void ipv4(struct frame *f, const char *src, const char *dst,
		 __u8 proto, int optlen, __u16 frag, size_t l4len)
{
	__u8 h[60] = {};
	__u32 s = ip4(src), d = ip4(dst);
	__u16 tot = htons(20 + optlen + l4len), fo = htons(frag);

	h[0] = 0x40 | ((20 + optlen) / 4);
	h[1] = 0x10;
	memcpy(h + 2, &tot, 2);
	memcpy(h + 6, &fo, 2);
	h[8] = 64;
	h[9] = proto;
	memcpy(h + 12, &s, 4);
	memcpy(h + 16, &d, 4);
	if (optlen)
		h[20] = 1;	/* NOP options */
	memset(h + 20, 1, optlen);
	put(f, h, 20 + optlen);
}

static void ipv6(struct frame *f, const char *src, const char *dst,
		 __u8 nexthdr, size_t paylen)
{
	__u8 h[40] = {};

	h[0] = 0x60;
	h[4] = paylen >> 8;
	h[5] = paylen & 0xff;
	h[6] = nexthdr;
	h[7] = 64;
	inet_pton(AF_INET6, src, h + 8);
	inet_pton(AF_INET6, dst, h + 24);
	put(f, h, 40);
}

static void udp(struct frame *f, __u16 sport, __u16 dport, size_t paylen)
{
	__u8 zero[128] = {};

	put16(f, sport);
	put16(f, dport);
	put16(f, 8 + paylen);
	put16(f, 0);
	put(f, zero, paylen);
}

static void tcp(struct frame *f, __u16 sport, __u16 dport, __u16 flags)
{
	__u8 zero[12] = {};

	put16(f, sport);
	put16(f, dport);
	put(f, zero, 8);
	put16(f, 0x5000 | flags);
	put(f, zero, 6);
}

static struct frame udp4(const char *src, const char *dst, __u16 sport,
			 __u16 dport)
{
	struct frame f;

	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, src, dst, IPPROTO_UDP, 0, 0, 8 + 10);
	udp(&f, sport, dport, 10);
	return f;
}

static struct frame tcp4(const char *dst, __u16 dport, __u16 flags)
{
	struct frame f;

	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.9.9.9", dst, IPPROTO_TCP, 0, 0, 20);
	tcp(&f, 40000, dport, flags);
	return f;
}

static struct frame udp6(const char *src, const char *dst, __u16 dport)
{
	struct frame f;

	eth(&f, mac_b, mac_a, ETH_P_IPV6);
	ipv6(&f, src, dst, IPPROTO_UDP, 8 + 10);
	udp(&f, 1000, dport, 10);
	return f;
}

static struct frame arp(__u16 op, const char *sip, const char *tip)
{
	struct frame f;
	__u32 s = ip4(sip), t = ip4(tip);

	eth(&f, mac_b, mac_a, ETH_P_ARP);
	put16(&f, 1);
	put16(&f, ETH_P_IP);
	put(&f, "\x06\x04", 2);
	put16(&f, op);
	put(&f, mac_a, 6);
	put(&f, &s, 4);
	put(&f, mac_b, 6);
	put(&f, &t, 4);
	return f;
}

/* --- rules --- */

/* The rule of the test driver's text @fmt, formatted with @ap. */
static int parse_rule(struct xdp_flow_rule *r, char *msg, size_t len,
		      const char *fmt, va_list ap)
{
	char args[512];

	vsnprintf(args, sizeof(args), fmt, ap);
	return driver_parse_rule(args, r, msg, len);
}

static int add(const char *fmt, ...)
{
	struct xdp_flow_rule r;
	char msg[UMH_MSG_LEN] = "";
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = parse_rule(&r, msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!err)
		err = table_rule_add(tbl, &r, msg, sizeof(msg));
	if (err == -EINVAL || err == -ENOSPC || err == -E2BIG)
		return err;	/* the cases that expect it check it */
	if (err)
		fail("add %s: %s", fmt, msg);
	return err;
}

static void del(__u32 id)
{
	char msg[UMH_MSG_LEN];

	if (table_rule_del(tbl, id, msg, sizeof(msg)))
		fail("del %u: %s", id, msg);
}

static void del_all(void)
{
	struct xdp_flow_stats *st;
	size_t n, i;

	if (table_stats_all(tbl, &st, &n))
		return;
	for (i = 0; i < n; i++)
		del(st[i].id);
	free(st);
}

static struct xdp_flow_stats stats(__u32 id)
{
	struct xdp_flow_stats st = {};
	char msg[UMH_MSG_LEN];

	table_stats(tbl, id, &st, msg, sizeof(msg));
	return st;
}

/* --- running frames --- */

#ifndef TCX_NEXT
#define TCX_NEXT	-1
#endif

/* The TC hook's TCX_PASS: to the stack past TC's filters. */
#define VERDICT_DELIVER	100

/* The TC hook's verdict as the XDP program's. */
static int tc_verdict(int retval)
{
	switch (retval) {
	case TCX_NEXT:
		return XDP_PASS;
	case TC_ACT_OK:
		return VERDICT_DELIVER;
	case TC_ACT_SHOT:
		return XDP_DROP;
	case TC_ACT_REDIRECT:
		return XDP_REDIRECT;
	}
	return -1000 - retval;
}

/* Runs @f through the program of the hook under test (tc_hook). */
static int run_frame(const struct frame *f, int repeat, __u32 *duration)
{
	/* data_end must be the frame length (no metadata in front). */
	struct xdp_md xdp = { .data_end = f->len, .ingress_ifindex = IFINDEX };
	struct __sk_buff skb = { .ingress_ifindex = IFINDEX };
	__u8 out[256];
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = f->b, .data_size_in = f->len,
		    .data_out = out, .data_size_out = sizeof(out),
		    .ctx_in = tc_hook ? (void *)&skb : (void *)&xdp,
		    .ctx_size_in = tc_hook ? sizeof(skb) : sizeof(xdp),
		    .repeat = repeat);
	int err;

	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (err)
		return err;
	if (duration)
		*duration = opts.duration;
	return tc_hook ? tc_verdict((int)opts.retval) : (int)opts.retval;
}

static const char *verdict_name(int v)
{
	switch (v) {
	case XDP_DROP: return "DROP";
	case XDP_PASS: return "PASS";
	case XDP_REDIRECT: return "REDIRECT";
	case XDP_TX: return "TX";
	case VERDICT_DELIVER: return "DELIVER";
	}
	return "error";
}

/*
 * Runs @f once: the verdict must be @verdict and rule @id's counters must
 * grow by @packets and by @bytes (TC's bytes: without the Ethernet header
 * and the outer VLAN tag). Returns whether everything held.
 */
static bool expect(const char *what, const struct frame *f, int verdict,
		   __u32 id, __u64 packets, __u64 bytes)
{
	struct xdp_flow_stats before = {}, after = {};
	int got;

	if (id != NO_RULE)
		before = stats(id);
	got = run_frame(f, 1, NULL);
	if (id != NO_RULE)
		after = stats(id);
	if (got != verdict) {
		fail("%s: verdict %s (%d), expected %s", what,
		     verdict_name(got), got, verdict_name(verdict));
		return false;
	}
	if (id == NO_RULE)
		return true;
	if (after.packets - before.packets != packets ||
	    after.bytes - before.bytes != bytes) {
		fail("%s: rule %u counted %llu packets %llu bytes, expected %llu/%llu",
		     what, id,
		     (unsigned long long)(after.packets - before.packets),
		     (unsigned long long)(after.bytes - before.bytes),
		     (unsigned long long)packets, (unsigned long long)bytes);
		return false;
	}
	if (packets && !after.lastused_jiffies) {
		fail("%s: lastused_jiffies not set", what);
		return false;
	}
	return true;
}

/* TC's byte count of an untagged frame. */
static __u64 tcb(const struct frame *f)
{
	return f->len - ETH_HLEN;
}

/* --- the cases --- */

static void test_ipv4(void)
{
	struct frame f;

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	add("id=2 prio=1 dev=%d src_ip=192.168.1.0/24 action=drop", IFINDEX);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	expect("dst hit", &f, XDP_DROP, 1, 1, tcb(&f));
	f = udp4("10.9.9.9", "10.0.0.2", 1, 2);
	expect("dst miss", &f, XDP_PASS, 1, 0, 0);
	f = udp4("192.168.1.77", "10.0.0.3", 1, 2);
	expect("src /24 hit", &f, XDP_DROP, 2, 1, tcb(&f));
	f = udp4("192.168.2.77", "10.0.0.3", 1, 2);
	expect("src /24 miss", &f, XDP_PASS, 2, 0, 0);
	log_test("IPv4 dst exact and src /24 match, misses pass");
	del_all();
}

static void test_ipv6(void)
{
	struct frame f;

	add("id=1 prio=1 dev=%d dst_ip=2001:db8::/64 action=drop", IFINDEX);
	add("id=2 prio=1 dev=%d src_ip=2001:db8:1::7 action=drop", IFINDEX);
	f = udp6("2001:db8:2::1", "2001:db8::5", 53);
	expect("dst /64 hit", &f, XDP_DROP, 1, 1, tcb(&f));
	f = udp6("2001:db8:2::1", "2001:db9::5", 53);
	expect("dst /64 miss", &f, XDP_PASS, 1, 0, 0);
	f = udp6("2001:db8:1::7", "2001:db9::5", 53);
	expect("src hit", &f, XDP_DROP, 2, 1, tcb(&f));
	/* A hop-by-hop header: the program cannot key it, the stack does. */
	add("id=3 prio=9 dev=%d eth_type=ipv6 action=drop", IFINDEX);
	eth(&f, mac_b, mac_a, ETH_P_IPV6);
	ipv6(&f, "2001:db8:1::7", "2001:db8::5", 0, 8 + 8);
	put(&f, "\x11\x00\x01\x04\x00\x00\x00\x00", 8);
	udp(&f, 1, 53, 0);
	expect("extension header", &f, XDP_PASS, 3, 0, 0);
	log_test("IPv6 dst /64 and src match; extension header passes");
	del_all();
}

static void test_ports(void)
{
	struct frame f;

	add("id=1 prio=1 dev=%d ip_proto=tcp dst_port=80 action=drop", IFINDEX);
	add("id=2 prio=1 dev=%d ip_proto=udp src_port=5353 action=drop", IFINDEX);
	f = tcp4("10.0.0.1", 80, 0x10);
	expect("tcp dport hit", &f, XDP_DROP, 1, 1, tcb(&f));
	f = tcp4("10.0.0.1", 81, 0x10);
	expect("tcp dport miss", &f, XDP_PASS, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1000, 80);
	expect("udp to 80", &f, XDP_PASS, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 5353, 9);
	expect("udp sport hit", &f, XDP_DROP, 2, 1, tcb(&f));
	log_test("TCP and UDP ports");
	del_all();

	add("id=1 prio=1 dev=%d ip_proto=tcp tcp_flags=0x02/0x02 action=drop",
	    IFINDEX);
	f = tcp4("10.0.0.1", 80, 0x02);
	expect("syn", &f, XDP_DROP, 1, 1, tcb(&f));
	f = tcp4("10.0.0.1", 80, 0x10);
	expect("ack", &f, XDP_PASS, 1, 0, 0);
	add("id=2 prio=1 dev=%d ip_proto=icmp icmp_type=8 action=drop", IFINDEX);
	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.0.0.2", "10.0.0.1", IPPROTO_ICMP, 0, 0, 8);
	put(&f, "\x08\x00\x00\x00\x00\x01\x00\x01", 8);
	expect("echo request", &f, XDP_DROP, 2, 1, tcb(&f));
	f.b[34] = 0;
	expect("echo reply", &f, XDP_PASS, 2, 0, 0);
	f.b[34] = 8;
	f.len -= 4;
	f.b[17] -= 4;	/* tot_len agrees: a 4-byte ICMP header */
	expect("short ICMP header", &f, XDP_PASS, 2, 0, 0);
	log_test("TCP flags and ICMP type; a short ICMP header passes");
	del_all();
}

/* Every destination port through @what: dropped by rule @id iff in
 * [@lo, @hi] and not @hole, passed otherwise.
 */
static void sweep_ports(const char *what, __u32 id, unsigned int lo,
			unsigned int hi, int hole)
{
	struct xdp_flow_stats before = stats(id), after;
	unsigned int p, bad = 0, want = 0;
	struct frame f;
	int got, exp;

	for (p = 0; p <= 0xffff; p++) {
		f = udp4("10.9.9.9", "10.0.0.1", 7, p);
		exp = p >= lo && p <= hi && (int)p != hole ? XDP_DROP : XDP_PASS;
		want += exp == XDP_DROP;
		got = run_frame(&f, 1, NULL);
		if (got != exp && !bad++)
			fail("%s: port %u: verdict %s, expected %s", what, p,
			     verdict_name(got), verdict_name(exp));
	}
	after = stats(id);
	if (after.packets - before.packets != want)
		fail("%s: rule %u counted %llu packets, expected %u", what, id,
		     (unsigned long long)(after.packets - before.packets), want);
}

static void test_port_ranges(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 7, 1500);
	char msg[UMH_MSG_LEN];
	unsigned int masks;
	int err;

	add("id=1 prio=2 dev=%d ip_proto=udp dst_range=1000-2000 action=drop",
	    IFINDEX);
	masks = table_mask_count(tbl);
	printf("# dst_range 1000-2000 takes %u masks\n", masks);
	sweep_ports("range 1000-2000", 1, 1000, 2000, -1);
	log_test("port range 1000-2000: every port of 0..65535 right, counted once");

	/* A higher prio rule inside the range wins; a lower one outside. */
	add("id=2 prio=1 dev=%d ip_proto=udp dst_port=1500 action=pass", IFINDEX);
	sweep_ports("range under a prio 1 port", 1, 1000, 2000, 1500);
	add("id=3 prio=3 dev=%d ip_proto=udp dst_range=900-1100 action=drop",
	    IFINDEX);
	f = udp4("10.9.9.9", "10.0.0.1", 7, 950);
	expect("prio 3 range below", &f, XDP_DROP, 3, 1, tcb(&f));
	f = udp4("10.9.9.9", "10.0.0.1", 7, 1050);
	expect("prio 2 range over prio 3", &f, XDP_DROP, 1, 1, tcb(&f));
	f = udp4("10.9.9.9", "10.0.0.1", 7, 899);
	expect("below both", &f, XDP_PASS, 3, 0, 0);
	del(3);
	log_test("port ranges keep TC's prio order with ports and other ranges");

	/* Restart: the ranges are expanded again from the definitions. */
	table_free(tbl);
	tbl = table_new(skel);
	if (!tbl || table_recover(tbl)) {
		fail("recover failed");
		exit(1);
	}
	if (table_mask_count(tbl) < masks || table_rule_count(tbl) != 2)
		fail("recovered %u masks %u rules", table_mask_count(tbl),
		     table_rule_count(tbl));
	sweep_ports("range after restart", 1, 1000, 2000, 1500);
	log_test("port ranges survive a helper restart");

	/* Replace with a narrower range, then both ports as ranges. */
	del(2);
	add("id=1 prio=2 dev=%d ip_proto=udp dst_range=1024-1535 action=drop",
	    IFINDEX);
	if (table_mask_count(tbl) != 1)
		fail("an aligned range took %u masks", table_mask_count(tbl));
	sweep_ports("replaced by 1024-1535", 1, 1024, 1535, -1);
	add("id=1 prio=2 dev=%d ip_proto=udp src_range=5-9 dst_range=10-13 action=drop",
	    IFINDEX);
	f = udp4("10.9.9.9", "10.0.0.1", 7, 12);
	expect("both ranges", &f, XDP_DROP, 1, 1, tcb(&f));
	f = udp4("10.9.9.9", "10.0.0.1", 10, 12);
	expect("source out of range", &f, XDP_PASS, 1, 0, 0);
	log_test("a range rule replaced; ranges on both ports");

	/* Too many entries, and malformed ranges: refused, nothing lost. */
	err = add("id=4 prio=2 dev=%d ip_proto=udp src_range=1-65534 dst_range=1-65534 action=drop",
		  IFINDEX);
	if (err != -E2BIG)
		fail("900 entries gave %d, expected -E2BIG", err);
	err = add("id=5 prio=2 dev=%d ip_proto=udp dst_range=20-10 action=drop",
		  IFINDEX);
	if (err != -EINVAL)
		fail("range 20-10 gave %d, expected -EINVAL", err);
	err = add("id=6 prio=2 dev=%d ip_proto=udp dst_port=3 dst_range=1-10 action=drop",
		  IFINDEX);
	if (err != -EINVAL)
		fail("port and range gave %d, expected -EINVAL", err);
	if (table_rule_count(tbl) != 1 ||
	    table_stats(tbl, 4, &(struct xdp_flow_stats){}, msg, sizeof(msg)) != -ENOENT)
		fail("a refused range rule left something behind");
	expect("old rule intact", &f, XDP_PASS, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 9, 13);
	expect("old rule still drops", &f, XDP_DROP, 1, 1, tcb(&f));
	log_test("ranges beyond 64 entries or malformed are refused, nothing lost");
	del_all();
	if (table_mask_count(tbl))
		fail("%u masks left", table_mask_count(tbl));
}

static void test_eth_vlan_arp(void)
{
	struct frame f;

	add("id=1 prio=1 dev=%d dst_mac=02:00:00:00:00:09 action=drop", IFINDEX);
	add("id=2 prio=1 dev=%d src_mac=02:00:00:00:00:08 action=drop", IFINDEX);
	add("id=3 prio=1 dev=%d eth_type=0x0806 action=drop", IFINDEX);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	f.b[5] = 9;
	expect("eth dst", &f, XDP_DROP, 1, 1, tcb(&f));
	f.b[5] = 2;
	f.b[11] = 8;
	expect("eth src", &f, XDP_DROP, 2, 1, tcb(&f));
	f.b[11] = 1;
	expect("eth miss", &f, XDP_PASS, NO_RULE, 0, 0);
	f = arp(1, "10.0.0.2", "10.0.0.1");
	expect("eth type", &f, XDP_DROP, 3, 1, tcb(&f));
	log_test("Ethernet dst, src and type");
	del_all();

	add("id=1 prio=1 dev=%d eth_type=arp ip_proto=1 dst_ip=10.0.0.1 action=drop",
	    IFINDEX);
	f = arp(1, "10.0.0.2", "10.0.0.1");
	expect("arp request", &f, XDP_DROP, 1, 1, tcb(&f));
	f = arp(2, "10.0.0.2", "10.0.0.1");
	expect("arp reply", &f, XDP_PASS, 1, 0, 0);
	f = arp(1, "10.0.0.2", "10.0.0.1");
	f.b[19] = 5;	/* hlen 5: not keyed */
	expect("odd arp", &f, XDP_PASS, 1, 0, 0);
	log_test("ARP opcode and target address");
	del_all();

	add("id=1 prio=1 dev=%d vlan_id=100 action=drop", IFINDEX);
	eth(&f, mac_b, mac_a, ETH_P_8021Q);
	vlan(&f, 100 | 0x1000 /* DEI */, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_UDP, 0, 0, 8);
	udp(&f, 1, 2, 0);
	expect("vlan 100 (DEI set)", &f, XDP_DROP, 1, 1, f.len - ETH_HLEN - 4);
	f.b[15] = 101;
	expect("vlan 101", &f, XDP_PASS, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	expect("untagged", &f, XDP_PASS, 1, 0, 0);
	/* QinQ: outer 100 matches, TC counts without the outer tag only. */
	eth(&f, mac_b, mac_a, ETH_P_8021AD);
	f.b[12] = 0x81;	/* outer TPID 0x8100 so vlan_tpid matches */
	f.b[13] = 0x00;
	vlan(&f, 100, ETH_P_8021Q);
	vlan(&f, 7, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_UDP, 0, 0, 8);
	udp(&f, 1, 2, 0);
	expect("qinq", &f, XDP_DROP, 1, 1, f.len - ETH_HLEN - 4);
	eth(&f, mac_b, mac_a, ETH_P_8021Q);
	vlan(&f, 100, ETH_P_8021Q);
	vlan(&f, 7, ETH_P_8021Q);
	vlan(&f, 8, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_UDP, 0, 0, 8);
	udp(&f, 1, 2, 0);
	expect("three tags", &f, XDP_PASS, 1, 0, 0);
	log_test("VLAN id (DEI ignored, outer tag not counted), QinQ, three tags pass");
	del_all();
}

/* Two masks, the lower order wins whatever the mask and the add order. */
static void test_prio(bool reverse)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	int i;

	for (i = 0; i < 2; i++) {
		if (i == reverse)
			add("id=1 prio=2 dev=%d dst_ip=10.0.0.1 action=drop",
			    IFINDEX);
		else
			add("id=2 prio=1 dev=%d ip_proto=udp dst_port=53 action=redirect:%d",
			    IFINDEX, IFINDEX);
	}
	expect("both match", &f, XDP_REDIRECT, 2, 1, tcb(&f));
	expect("both match (loser)", &f, XDP_REDIRECT, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 54);
	expect("only prio 2", &f, XDP_DROP, 1, 1, tcb(&f));
	del(2);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	expect("after delete", &f, XDP_DROP, 1, 1, tcb(&f));
	log_test(reverse ? "prio across two masks (lower prio added first)" :
			   "prio across two masks (lower prio added last)");
	del_all();
}

/* The id of the mask list XDP walks: a new one after every swap. */
static __u32 list_id(void)
{
	__u32 id = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xf_masks), &(__u32){ 0 },
			    &id);
	return id;
}

/*
 * A rule that joins a listed mask with a lower order than the mask had
 * lowers the mask's order in place, without a list swap (a grace period
 * each), and still wins over a mask sorted ahead of it.
 */
static void test_prio_in_place(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	__u32 before;

	add("id=1 prio=10 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	add("id=2 prio=20 dev=%d ip_proto=udp dst_port=54 action=pass",
	    IFINDEX);
	expect("mask of prio 10 first", &f, XDP_DROP, 1, 1, tcb(&f));
	before = list_id();
	add("id=3 prio=5 dev=%d ip_proto=udp dst_port=53 action=redirect:%d",
	    IFINDEX, IFINDEX);
	if (list_id() != before)
		fail("the mask list was swapped for a rule of a listed mask");
	expect("prio 5 in the mask sorted second", &f, XDP_REDIRECT, 3, 1,
	       tcb(&f));
	del(3);
	expect("after delete", &f, XDP_DROP, 1, 1, tcb(&f));
	log_test("a lower prio joins a listed mask in place and wins");
	del_all();
}

/* The module's word in the gate: 0, or 1 + the lowest order XDP may not
 * act on (XDP_FLOW_GATE_CLOSED: none).
 */
static void gate_set(__u64 word)
{
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xf_gate), &(__u32){ 0 },
				&word, BPF_ANY))
		fail("cannot write the gate: %s", strerror(errno));
}

/* The module's count of changes in flight that hold rule @id back by
 * itself (xf_held).
 */
static void held_set(__u32 id, __u32 count)
{
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xf_held), &id, &count,
				BPF_ANY))
		fail("cannot write xf_held: %s", strerror(errno));
}

/* The module's entry for IFINDEX in xf_egress: a redirect there may go
 * to its ndo_xdp_xmit (@empty), or goes to the stack.
 */
static void egress_set(bool empty)
{
	__u64 word = XDP_FLOW_EGRESS_EMPTY;
	int fd = bpf_map__fd(skel->maps.xf_egress);

	if (empty ? bpf_map_update_elem(fd, &(__u32){ IFINDEX }, &word, BPF_ANY) :
	    bpf_map_delete_elem(fd, &(__u32){ IFINDEX }))
		fail("cannot write xf_egress: %s", strerror(errno));
}

/* The module's entry for IFINDEX in xf_ingress: its address @mac, or
 * none (NULL): frames may not enter it through the TC hook.
 */
static void ingress_set(const __u8 *mac)
{
	union xdp_flow_ingress in = {};
	int fd = bpf_map__fd(skel->maps.xf_ingress);

	if (mac)
		memcpy(in.mac, mac, 6);
	if (mac ? bpf_map_update_elem(fd, &(__u32){ IFINDEX }, &in, BPF_ANY) :
	    bpf_map_delete_elem(fd, &(__u32){ IFINDEX }))
		fail("cannot write xf_ingress: %s", strerror(errno));
}

/*
 * The program of @hook on skel's maps, as the helper loads it at the first
 * device of that hook, in prog_fd; the instance that held the last one is
 * the caller's to close.
 */
static int use_hook(enum dp_hook hook)
{
	prog_inst = dp_hook_load(skel, hook, NULL, NULL);
	prog_fd = prog_inst ? dp_hook_fd(prog_inst, hook) : -1;
	return prog_inst ? 0 : -1;
}

/* dp_open(), and IFINDEX taken as a target with an empty egress path. */
static struct xdp_flow_bpf *open_dp(unsigned int flow_entries,
				    unsigned int max_rules)
{
	skel = dp_open(-1, flow_entries, max_rules, NULL, NULL);
	if (skel)
		egress_set(true);
	return skel;
}

/*
 * A redirect of the XDP hook whose target has no xf_egress entry (its
 * egress path is not empty, or the module has not said) goes to the stack
 * before anything is rewritten, uncounted; the TC hook's redirects
 * transmit through the target's egress path anyway.
 */
static void test_egress(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=redirect:%d", IFINDEX,
	    IFINDEX);
	expect("target's egress path empty", &f, XDP_REDIRECT, 1, 1, tcb(&f));
	egress_set(false);
	if (tc_hook)
		expect("no entry: the TC hook", &f, XDP_REDIRECT, 1, 1,
		       tcb(&f));
	else
		expect("no entry: to the stack", &f, XDP_PASS, 1, 0, 0);
	egress_set(true);
	expect("entry back", &f, XDP_REDIRECT, 1, 1, tcb(&f));
	log_test("no xf_egress entry for the target: the XDP hook passes to the stack, the TC hook redirects");
	del_all();
}

/*
 * mirred egress mirror: the TC hook sends a copy (to lo here) and carries
 * out the rest of the rule, a redirect or a pass that TC's filters do not
 * see again (a drop after a mirror is refused: its counters would not be
 * TC's); the XDP hook leaves the frame to the stack.
 */
static void test_mirror(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	struct frame g = udp4("10.9.9.9", "10.0.0.2", 1, 53);
	struct frame h = udp4("10.9.9.9", "10.0.0.3", 1, 53);

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=mirror:%d action=redirect:%d",
	    IFINDEX, IFINDEX, IFINDEX);
	add("id=2 prio=1 dev=%d dst_ip=10.0.0.2 action=mirror:%d action=raw:%d action=redirect:%d",
	    IFINDEX, IFINDEX, XDP_FLOW_ACTION_VLAN_POP, IFINDEX);
	add("id=3 prio=1 dev=%d dst_ip=10.0.0.3 action=mirror:%d action=mirror:%d action=pass",
	    IFINDEX, IFINDEX, IFINDEX);
	if (tc_hook) {
		expect("mirror, redirect", &f, XDP_REDIRECT, 1, 1, tcb(&f));
		expect("mirror, vlan pop, redirect", &g, XDP_REDIRECT, 2, 1, tcb(&g));
		expect("mirrors, pass", &h, VERDICT_DELIVER, 3, 1, tcb(&h));
	} else {
		expect("mirror, redirect", &f, XDP_PASS, 1, 0, 0);
		expect("mirror, vlan pop, redirect", &g, XDP_PASS, 2, 0, 0);
		expect("mirrors, pass", &h, XDP_PASS, 3, 0, 0);
	}
	if (add("id=4 prio=1 dev=%d action=mirror:%d action=drop", IFINDEX,
		IFINDEX) != -EINVAL)
		fail("a drop after a mirror accepted");
	if (add("id=4 prio=1 dev=%d action=mirror:%d action=raw:%d", IFINDEX,
		IFINDEX, XDP_FLOW_ACTION_GOTO) != -EINVAL)
		fail("goto after a mirror accepted");
	if (add("id=4 prio=1 dev=%d action=raw:%d action=drop", IFINDEX,
		XDP_FLOW_ACTION_VLAN_POP) != -EINVAL)
		fail("a rewrite that ends in a drop without a mirror accepted");
	if (add("id=4 prio=1 dev=%d action=raw:%d action=drop", IFINDEX,
		XDP_FLOW_ACTION_MIRROR) != -EINVAL)
		fail("a mirror without a device accepted");
	log_test(tc_hook ? "mirror: the TC hook copies, then redirects or passes past TC" :
			   "mirror: the XDP hook leaves the frame to the stack");
	del_all();
}

/*
 * tunnel_key set before a redirect to a VXLAN device: the TC hook sets the
 * tunnel's metadata (bpf_skb_set_tunnel_key(), which the kernel takes here
 * as it would for a real device: its flags and sizes are checked) and
 * redirects the frame as it is, where the device's transmit path is empty
 * (its xf_egress entry), else leaves it to the stack untouched; the XDP
 * hook leaves it to the stack. The
 * helper refuses a tunnel set that does not end in a redirect, without a
 * destination, or with unknown flags.
 */
static void test_tunnel_set(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	struct frame g = udp4("10.9.9.9", "10.0.0.2", 1, 53);
	struct frame h = udp4("10.9.9.9", "10.0.0.4", 1, 53);

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=tunnel:42,10.0.2.254,10.0.2.1,0,64,1 action=redirect:%d",
	    IFINDEX, IFINDEX);
	add("id=2 prio=1 dev=%d dst_ip=10.0.0.2 action=tunnel:42,0.0.0.0,10.0.2.1,16,0,2 action=mirror:%d action=tunnel:43,0.0.0.0,10.0.2.3,0,0,0 action=redirect:%d",
	    IFINDEX, IFINDEX, IFINDEX);
	if (tc_hook) {
		expect("tunnel set, redirect", &f, XDP_REDIRECT, 1, 1, tcb(&f));
		expect("tunnel set, mirror, tunnel set, redirect", &g,
		       XDP_REDIRECT, 2, 1, tcb(&g));
		/* A queue on the tunnel device: no xf_egress entry. */
		egress_set(false);
		expect("tunnel set, redirect to a device with a queue", &f,
		       XDP_PASS, 1, 0, 0);
		expect("tunnel set, mirror to a device with a queue", &g,
		       XDP_PASS, 2, 0, 0);
		egress_set(true);
	} else {
		expect("tunnel set, redirect", &f, XDP_PASS, 1, 0, 0);
		expect("tunnel set, mirror, tunnel set, redirect", &g, XDP_PASS,
		       2, 0, 0);
	}
	if (add("id=3 prio=1 dev=%d action=tunnel:42,0.0.0.0,10.0.2.1,0,0,1 action=mirror:%d action=pass",
		IFINDEX, IFINDEX) != -EINVAL)
		fail("a tunnel set that ends in pass accepted");
	/* Geneve options: right after the tunnel set, whole words. */
	add("id=4 prio=1 dev=%d dst_ip=10.0.0.4 action=tunnel:42,0.0.0.0,10.0.2.1,0,0,1 action=tunopts:010200010000002a action=redirect:%d",
	    IFINDEX, IFINDEX);
	expect("tunnel set, Geneve options, redirect", &h,
	       tc_hook ? XDP_REDIRECT : XDP_PASS, 4, tc_hook, tc_hook ? tcb(&h) : 0);
	if (add("id=5 prio=1 dev=%d action=tunopts:010200010000002a action=redirect:%d",
		IFINDEX, IFINDEX) != -EINVAL)
		fail("tunnel options without a tunnel set accepted");
	if (add("id=5 prio=1 dev=%d action=tunnel:42,0.0.0.0,10.0.2.1,0,0,1 action=tunopts:010200 action=redirect:%d",
		IFINDEX, IFINDEX) != -EINVAL)
		fail("tunnel options of 3 bytes accepted");
	if (add("id=3 prio=1 dev=%d action=tunnel:42,0.0.0.0,0.0.0.0,0,0,1 action=redirect:%d",
		IFINDEX, IFINDEX) != -EINVAL)
		fail("a tunnel set without a destination accepted");
	if (add("id=3 prio=1 dev=%d action=tunnel:42,0.0.0.0,10.0.2.1,0,0,4 action=redirect:%d",
		IFINDEX, IFINDEX) != -EINVAL)
		fail("a tunnel set with unknown flags accepted");
	log_test(tc_hook ? "tunnel_key set: the TC hook sets the tunnel's metadata and Geneve options, then redirects (to the stack where the device has a queue)" :
			   "tunnel_key set: the XDP hook leaves the frame to the stack");
	del_all();
}

/* The module's entry for IFINDEX in xf_peers: a veth with an empty
 * transmit path whose peer has the address @mac, or none (NULL).
 */
static void peer_set(const __u8 *mac)
{
	union xdp_flow_peer p = { .mtu = 1500 };
	int fd = bpf_map__fd(skel->maps.xf_peers);

	if (mac)
		memcpy(p.mac, mac, 6);
	if (mac ? bpf_map_update_elem(fd, &(__u32){ IFINDEX }, &p, BPF_ANY) :
	    bpf_map_delete_elem(fd, &(__u32){ IFINDEX }))
		fail("cannot write xf_peers: %s", strerror(errno));
}

/* xf_gen[1]: which tunnel fields the tc hook reads (XDP_FLOW_GEN_*). */
static __u64 tun_gen(void)
{
	__u64 v = ~0ULL;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xf_gen), &(__u32){ 1 }, &v);
	return v;
}

/*
 * Decapsulated frames: a rule on the tunnel metadata (enc_*) matches no
 * frame without it (BPF_PROG_TEST_RUN gives none), the next rule does;
 * the tc hook reads the metadata only while a listed mask keeps a tunnel
 * field, and the options only while one keeps an option byte;
 * tunnel_key unset runs at the TC hook only before outputs to veths with
 * an empty transmit path (xf_peers), else the frame goes to the stack;
 * the tables refuse an unset before anything else. The guests' test_46
 * sends real VXLAN and Geneve.
 */
static void test_tunnel_decap(void)
{
	static const __u8 mac_p[6] = { 2, 0, 0, 0, 0, 0x78 };
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	struct frame g = udp4("10.9.9.9", "10.0.0.2", 1, 53);

	if (tun_gen())
		fail("xf_gen[1] is %llx with no tunnel rule", tun_gen());
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 enc_key_id=42 enc_src=10.0.2.1 action=drop",
	    IFINDEX);
	if (tun_gen() != XDP_FLOW_GEN_TUN)
		fail("xf_gen[1] is %llx with an enc_key_id rule", tun_gen());
	add("id=2 prio=2 dev=%d dst_ip=10.0.0.1 enc_key_id=0/0 action=drop",
	    IFINDEX);
	add("id=6 prio=2 dev=%d dst_ip=10.0.0.1 enc_opt_len=8/8 enc_opts=0x0102800100010000/0xffffff01ffff0000 action=drop",
	    IFINDEX);
	if (tun_gen() != (XDP_FLOW_GEN_TUN | XDP_FLOW_GEN_OPTS))
		fail("xf_gen[1] is %llx with an enc_opts rule", tun_gen());
	add("id=3 prio=3 dev=%d dst_ip=10.0.0.1 action=redirect:%d", IFINDEX,
	    IFINDEX);
	expect("no metadata: past the enc_ rules", &f, XDP_REDIRECT, 3, 1,
	       tcb(&f));
	del(6);
	if (tun_gen() != XDP_FLOW_GEN_TUN)
		fail("xf_gen[1] is %llx after the enc_opts rule went", tun_gen());
	add("id=4 prio=1 dev=%d dst_ip=10.0.0.2 action=tunnel_unset action=redirect:%d",
	    IFINDEX, IFINDEX);
	if (tc_hook) {
		expect("unset, redirect to a device not in xf_peers", &g,
		       XDP_PASS, 4, 0, 0);
		peer_set(mac_p);
		expect("unset, redirect to a veth in xf_peers", &g,
		       XDP_REDIRECT, 4, 1, tcb(&g));
		peer_set(NULL);
	} else {
		expect("unset, redirect", &g, XDP_PASS, 4, 0, 0);
	}
	if (add("id=5 prio=1 dev=%d action=tunnel_unset action=pass",
		IFINDEX) != -EINVAL)
		fail("a tunnel unset before a pass accepted");
	if (add("id=5 prio=1 dev=%d action=tunnel_unset action=ingress:%d",
		IFINDEX, IFINDEX) != -EINVAL)
		fail("a tunnel unset before an ingress redirect accepted");
	if (add("id=5 prio=1 dev=%d action=tunnel_unset action=drop",
		IFINDEX) != -EINVAL)
		fail("a tunnel unset before a drop accepted");
	log_test(tc_hook ? "decapsulated frames: enc_ rules need the metadata; tunnel_key unset before a redirect to a veth whose transmit path is empty" :
			   "decapsulated frames: enc_ rules need the metadata; the XDP hook leaves tunnel_key unset to the stack");
	del_all();
	if (tun_gen())
		fail("xf_gen[1] is %llx after the tunnel rules went", tun_gen());
}

/*
 * The tunnel metadata of a decapsulated frame, as a tunnel device's
 * receive path gives it: tun_inject sets it, then tail-calls the TC
 * program (BPF_PROG_TEST_RUN gives none). @opts: its options, in hex;
 * @v6: IPv6 metadata, @src and @dst IPv6 addresses.
 */
struct tun_meta {
	__u32 id;
	const char *src, *dst;
	const char *opts;	/* hex */
	bool v6;
};

static struct tun_inject *inject;

static bool expect_tun(const char *what, const struct frame *f,
		       const struct tun_meta *t, int verdict, __u32 id,
		       __u64 packets, __u64 bytes)
{
	struct tun_cfg c = {};
	unsigned int b, n = 0;
	const char *s;
	int saved = prog_fd;
	bool ok;

	c.key.tunnel_id = t->id;
	c.key.tunnel_ttl = 64;
	/* Set as transmit metadata, whose destination is the remote end:
	 * read back as received, with the addresses swapped.
	 */
	if (t->v6) {
		c.key_flags = BPF_F_TUNINFO_IPV6;
		inet_pton(AF_INET6, t->src, c.key.local_ipv6);
		inet_pton(AF_INET6, t->dst, c.key.remote_ipv6);
	} else {
		inet_pton(AF_INET, t->src, &c.key.local_ipv4);
		inet_pton(AF_INET, t->dst, &c.key.remote_ipv4);
		c.key.remote_ipv4 = ntohl(c.key.remote_ipv4);
		c.key.local_ipv4 = ntohl(c.key.local_ipv4);
	}
	for (s = t->opts; s && s[0] && s[1] && n < sizeof(c.opts); s += 2) {
		sscanf(s, "%2x", &b);
		c.opts[n++] = b;
	}
	c.opt_len = n;
	if (bpf_map_update_elem(bpf_map__fd(inject->maps.tun_cfg),
				&(__u32){ 0 }, &c, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(inject->maps.jmp), &(__u32){ 0 },
				&prog_fd, BPF_ANY)) {
		fail("%s: cannot set up tun_inject: %s", what, strerror(errno));
		return false;
	}
	prog_fd = bpf_program__fd(inject->progs.tun_inject);
	ok = expect(what, f, verdict, id, packets, bytes);
	prog_fd = saved;
	return ok;
}

static int digest_cmp(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The @i-th of a fixed sequence of addresses fd00::<64 bits>. */
static void digest_addr(__u8 *addr, __u64 i)
{
	__u64 x = (i + 1) * 0x9e3779b97f4a7c15ULL;	/* splitmix64 */

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	memset(addr, 0, 16);
	addr[0] = 0xfd;
	memcpy(addr + 8, &x, 8);
}

/*
 * Two outer IPv6 addresses of one digest (xdp_flow_enc6_digest()), found
 * by the birthday bound among 2^20 of them, into @a and @b.
 */
static bool digest_collision(char *a, char *b, size_t len)
{
	const unsigned int n = 1 << 20;
	__u64 *d = malloc(n * sizeof(*d));
	unsigned int i, x, y;
	__u8 addr[16];

	if (!d)
		return false;
	for (i = 0; i < n; i++) {
		digest_addr(addr, i);
		d[i] = (__u64)xdp_flow_enc6_digest(addr) << 32 | i;
	}
	qsort(d, n, sizeof(*d), digest_cmp);
	for (i = 1; i < n && d[i] >> 32 != d[i - 1] >> 32; i++)
		;
	if (i == n) {
		free(d);
		return false;
	}
	x = (__u32)d[i - 1];
	y = (__u32)d[i];
	free(d);
	digest_addr(addr, x);
	inet_ntop(AF_INET6, addr, a, len);
	digest_addr(addr, y);
	inet_ntop(AF_INET6, addr, b, len);
	return true;
}

/*
 * Decapsulated frames with their metadata (TC hook): the enc_ keys, and
 * Geneve options matched as flower matches them, the options' first bytes
 * and their length each under its mask (a rule of one 8-byte option
 * takes 8 and 12 bytes of options, not 16 or none); outer IPv6 addresses
 * matched whole, by their digests and then the rule's addresses (two
 * addresses of one digest: the other one goes to the stack).
 */
static void test_tunnel_meta(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	const struct tun_meta m42 = { 42, "10.0.2.1", "10.0.2.254", NULL, false };
	const struct tun_meta m43 = { 43, "10.0.2.1", "10.0.2.254", NULL, false };
	const struct tun_meta src2 = { 42, "10.0.2.2", "10.0.2.254", NULL, false };
	const struct tun_meta v6 = { 42, "fd00::1", "fd00::fe", NULL, true };
	const struct tun_meta v6src2 = { 42, "fd00::2", "fd00::fe", NULL, true };
	const struct tun_meta v6dst2 = { 42, "fd00::1", "fd00::fd", NULL, true };
	char ca[INET6_ADDRSTRLEN], cb[INET6_ADDRSTRLEN];
	struct tun_meta col_a = { 42, ca, "fd00::fe", NULL, true };
	struct tun_meta col_b = { 42, cb, "fd00::fe", NULL, true };
	const struct tun_meta o8 = { 42, "10.0.2.1", "10.0.2.254",
				     "0102800100010002", false };
	const struct tun_meta o8x = { 42, "10.0.2.1", "10.0.2.254",
				      "0102800100020002", false };
	const struct tun_meta o12 = { 42, "10.0.2.1", "10.0.2.254",
				      "010280010001000201028100", false };
	const struct tun_meta o16 = { 42, "10.0.2.1", "10.0.2.254",
				      "01028001000100020102810100000000", false };

	if (!tc_hook)
		return;
	if (!inject) {
		inject = tun_inject__open_and_load();
		if (!inject) {
			fail("cannot load tun_inject: %s", strerror(errno));
			log_test("decapsulated frames with their metadata");
			return;
		}
	}
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 enc_key_id=42 enc_src=10.0.2.1 enc_dst=10.0.2.254 action=drop",
	    IFINDEX);
	add("id=2 prio=2 dev=%d dst_ip=10.0.0.1 action=redirect:%d", IFINDEX,
	    IFINDEX);
	expect_tun("VNI 42 from 10.0.2.1", &f, &m42, XDP_DROP, 1, 1, tcb(&f));
	expect_tun("VNI 43", &f, &m43, XDP_REDIRECT, 2, 1, tcb(&f));
	expect_tun("from 10.0.2.2", &f, &src2, XDP_REDIRECT, 2, 1, tcb(&f));
	expect_tun("IPv6 metadata, IPv4 rule", &f, &v6, XDP_REDIRECT, 2, 1,
		   tcb(&f));
	expect("no metadata", &f, XDP_REDIRECT, 2, 1, tcb(&f));
	del(1);
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 enc_key_id=42 enc_src=fd00::1 enc_dst=fd00::fe action=drop",
	    IFINDEX);
	if (add("id=4 prio=1 dev=%d dst_ip=10.0.0.1 enc_src=fd00::/64 action=drop",
		IFINDEX) != -EINVAL)
		fail("an outer IPv6 prefix accepted");
	expect_tun("VNI 42 from fd00::1 to fd00::fe", &f, &v6, XDP_DROP, 1, 1,
		   tcb(&f));
	expect_tun("from fd00::2", &f, &v6src2, XDP_REDIRECT, 2, 1, tcb(&f));
	expect_tun("to fd00::fd", &f, &v6dst2, XDP_REDIRECT, 2, 1, tcb(&f));
	expect_tun("IPv4 metadata", &f, &m42, XDP_REDIRECT, 2, 1, tcb(&f));
	del(1);
	if (!digest_collision(ca, cb, sizeof(ca))) {
		fail("no two addresses of one digest among 2^20");
	} else {
		add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 enc_src=%s action=drop",
		    IFINDEX, ca);
		expect_tun("the rule's address", &f, &col_a, XDP_DROP, 1, 1,
			   tcb(&f));
		expect_tun("another address of its digest: the stack", &f,
			   &col_b, XDP_PASS, 1, 0, 0);
		del(1);
	}
	/* OVN's option, the low half of its data not matched */
	add("id=3 prio=1 dev=%d dst_ip=10.0.0.1 enc_key_id=42 enc_opt_len=8/8 enc_opts=0x0102800100010000/0xffffff01ffff0000 action=drop",
	    IFINDEX);
	expect_tun("8 bytes of options, matched", &f, &o8, XDP_DROP, 3, 1,
		   tcb(&f));
	expect_tun("8 bytes, other data", &f, &o8x, XDP_REDIRECT, 2, 1,
		   tcb(&f));
	expect_tun("12 bytes, the first 8 matched (12 & 8)", &f, &o12,
		   XDP_DROP, 3, 1, tcb(&f));
	expect_tun("16 bytes (16 & 8 is 0)", &f, &o16, XDP_REDIRECT, 2, 1,
		   tcb(&f));
	expect_tun("no options", &f, &m42, XDP_REDIRECT, 2, 1, tcb(&f));
	log_test("decapsulated frames with their metadata: enc_ keys and Geneve options as flower matches them; outer IPv6 addresses whole, a digest's other address to the stack");
	del_all();
}

/*
 * mirred ingress: the TC hook enters the frame into the target's receive
 * path where the module vouches for the target (xf_ingress) and the
 * target's address classifies the frame as the first device did
 * (BPF_PROG_TEST_RUN classifies it for lo: PACKET_OTHERHOST); else, and
 * at the XDP hook, the frame goes to the stack untouched.
 */
static void test_ingress(void)
{
	static const __u8 mac_x[6] = { 2, 0, 0, 0, 0, 0x77 };
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	struct frame g = udp4("10.9.9.9", "10.0.0.2", 1, 53);

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=ingress:%d", IFINDEX,
	    IFINDEX);
	add("id=2 prio=1 dev=%d dst_ip=10.0.0.2 action=mirror_ingress:%d action=redirect:%d",
	    IFINDEX, IFINDEX, IFINDEX);
	ingress_set(mac_x);
	if (tc_hook) {
		expect("redirect ingress", &f, XDP_REDIRECT, 1, 1, tcb(&f));
		expect("mirror ingress, redirect", &g, XDP_REDIRECT, 2, 1, tcb(&g));
	} else {
		expect("redirect ingress", &f, XDP_PASS, 1, 0, 0);
		expect("mirror ingress, redirect", &g, XDP_PASS, 2, 0, 0);
	}
	/* The target's own address: it would take the frame as its host's. */
	ingress_set(mac_b);
	expect("target classifies otherwise", &f, XDP_PASS, 1, 0, 0);
	expect("target classifies otherwise (mirror)", &g, XDP_PASS, 2, 0, 0);
	/* Unless skbedit ptype made it the host's first (Open vSwitch's
	 * output to an internal port).
	 */
	add("id=3 prio=1 dev=%d dst_ip=10.0.0.3 action=ptype:0 action=ingress:%d",
	    IFINDEX, IFINDEX);
	f = udp4("10.9.9.9", "10.0.0.3", 1, 53);
	expect("ptype host, then redirect ingress", &f,
	       tc_hook ? XDP_REDIRECT : XDP_PASS, 3, tc_hook, tc_hook ? tcb(&f) : 0);
	ingress_set(mac_x);
	expect("ptype host, target classifies otherwise", &f, XDP_PASS, 3, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	ingress_set(NULL);
	expect("no entry", &f, XDP_PASS, 1, 0, 0);
	expect("no entry (mirror)", &g, XDP_PASS, 2, 0, 0);
	log_test(tc_hook ? "mirred ingress: the TC hook enters the frame where exact, else the stack" :
			   "mirred ingress: the XDP hook leaves the frame to the stack");
	del_all();
}

/*
 * While rule changes are in flight, the module sets the gate's limit to the
 * lowest order among them: frames whose rule has that order or a higher
 * one go to the stack uncounted, frames of rules before it are decided in
 * XDP.
 */
static void test_gate(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 53);
	struct frame g = udp4("10.9.9.9", "10.0.0.2", 1, 53);
	struct frame h = udp4("10.9.9.9", "10.0.0.3", 1, 53);

	add("id=1 prio=2 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	add("id=2 prio=5 dev=%d dst_ip=10.0.0.2 action=drop", IFINDEX);
	add("id=3 prio=7 dev=%d ip_proto=udp dst_port=53 action=drop",
	    IFINDEX);
	gate_set((5ULL << 32) + 1);
	expect("rule before the limit", &f, XDP_DROP, 1, 1, tcb(&f));
	expect("rule at the limit", &g, XDP_PASS, 2, 0, 0);
	expect("rule after the limit", &h, XDP_PASS, 3, 0, 0);
	gate_set((5ULL << 32) + 2);
	expect("limit just above the rule", &g, XDP_DROP, 2, 1, tcb(&g));
	gate_set(XDP_FLOW_GATE_CLOSED);
	expect("closed", &f, XDP_PASS, 1, 0, 0);
	gate_set(XDP_FLOW_GATE_OPEN);
	expect("open again", &h, XDP_DROP, 3, 1, tcb(&h));
	log_test("the gate's limit: rules from its order on go to the stack");

	/* A rule held by itself (a flowtable's flow in flight): to the stack
	 * while the gate is not open, the others, after it too, go on.
	 */
	held_set(2, 1);
	expect("held, gate open", &g, XDP_DROP, 2, 1, tcb(&g));
	gate_set(~0ULL);	/* a limit no order reaches */
	expect("held", &g, XDP_PASS, 2, 0, 0);
	expect("held: a rule before it", &f, XDP_DROP, 1, 1, tcb(&f));
	expect("held: a rule after it", &h, XDP_DROP, 3, 1, tcb(&h));
	gate_set((7ULL << 32) + 1);
	expect("held, and a limit after it", &g, XDP_PASS, 2, 0, 0);
	expect("held, and a limit after it: the rule at the limit", &h,
	       XDP_PASS, 3, 0, 0);
	held_set(2, 0);
	expect("let go, the limit after it", &g, XDP_DROP, 2, 1, tcb(&g));
	gate_set(XDP_FLOW_GATE_OPEN);
	log_test("the held rules: one held rule to the stack while the gate is not open");
	del_all();
}

static void test_same_key(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.9", 1, 2);

	add("id=1 prio=5 dev=%d dst_ip=10.0.0.9 action=drop", IFINDEX);
	add("id=2 prio=3 dev=%d dst_ip=10.0.0.9 action=redirect:%d", IFINDEX,
	    IFINDEX);
	expect("better one", &f, XDP_REDIRECT, 2, 1, tcb(&f));
	del(2);
	expect("next best", &f, XDP_DROP, 1, 1, tcb(&f));
	del(1);
	expect("none", &f, XDP_PASS, NO_RULE, 0, 0);
	log_test("equal masked key, two prios: the better wins, then the next");
	del_all();
}

static __u64 gen_get(void)
{
	__u64 gen = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.xf_gen), &(__u32){ 0 },
			    &gen);
	return gen;
}

static void gen_set(__u64 gen)
{
	bpf_map_update_elem(bpf_map__fd(skel->maps.xf_gen), &(__u32){ 0 },
			    &gen, BPF_ANY);
}

/* What emc_find() changes in the ways it finds. */
struct emc_edit {
	const __u32 *act;	/* not NULL: the way's act becomes *act */
	int word;		/* >= 0: the key's word @word is flipped */
};

/*
 * Cache ways of generation @gen, on any CPU, that name rule @rule; the last
 * such way's set, key and act go to @set, @key and @act when not NULL, and
 * with @edit each such way is changed as it says.
 */
static int emc_find(__u64 gen, int rule, __u32 *set, struct xdp_flow_key *key,
		    __u32 *act, const struct emc_edit *edit)
{
	int ncpus = libbpf_num_possible_cpus(), n = 0, c, w;
	struct xdp_flow_emc_set *v = calloc(ncpus, sizeof(*v));
	__u32 i;

	for (i = 0; v && i < XDP_FLOW_EMC_SETS; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xf_emc), &i, v))
			break;
		for (c = 0; c < ncpus; c++) {
			if (v[c].gen != gen)
				continue;
			for (w = 0; w < XDP_FLOW_EMC_WAYS; w++) {
				if (!v[c].sig[w] || v[c].rule[w] != rule)
					continue;
				n++;
				if (set)
					*set = i;
				if (key)
					*key = v[c].key[w];
				if (act)
					*act = v[c].act[w];
				if (edit && edit->act)
					v[c].act[w] = *edit->act;
				if (edit && edit->word >= 0)
					((xdp_flow_word *)&v[c].key[w])[edit->word] ^= 1;
			}
		}
		if (edit && n &&
		    bpf_map_update_elem(bpf_map__fd(skel->maps.xf_emc), &i, v,
					BPF_EXIST))
			fail("cannot write cache set %u: %s", i, strerror(errno));
	}
	free(v);
	return n;
}

static int emc_entries(__u64 gen, int rule)
{
	return emc_find(gen, rule, NULL, NULL, NULL, NULL);
}

/* The act of rule @rule's one way of the current generation, or ~0 - 1. */
static __u32 emc_act_of(int rule)
{
	__u32 act = ~0u - 1;

	if (emc_find(gen_get(), rule, NULL, NULL, &act, NULL) != 1)
		fail("not one cache way for rule %d", rule);
	return act;
}

/*
 * A way keeps a lone drop's or redirect's verdict, and a cached frame of
 * such a rule takes it from there while the gate is open: a way whose act
 * is rewritten behind the program's back decides, and only then. Every
 * other rule's way keeps 0, and the gate still holds cached frames back.
 */
static void test_emc_verdict(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.7", 1, 2);
	struct frame g = udp4("10.9.9.9", "10.0.0.9", 1, 2);
	__u32 act;

	add("id=1 prio=5 dev=%d dst_ip=10.0.0.7 action=drop", IFINDEX);
	add("id=2 prio=5 dev=%d dst_ip=10.0.0.9 action=pass", IFINDEX);
	expect("drop, searched", &f, XDP_DROP, 1, 1, tcb(&f));
	act = emc_act_of(1);
	if (act != XDP_FLOW_EMC_DROP)
		fail("a drop rule's way keeps act %#x, not XDP_FLOW_EMC_DROP",
		     act);
	expect("drop, cached", &f, XDP_DROP, 1, 1, tcb(&f));
	act = IFINDEX;
	emc_find(gen_get(), 1, NULL, NULL, NULL,
		 &(struct emc_edit){ .act = &act, .word = -1 });
	expect("the way's act decides: a redirect", &f, XDP_REDIRECT, 1, 1,
	       tcb(&f));
	gate_set((5ULL << 32) + 1);
	expect("gate at the rule: to the stack, cached act or not", &f,
	       XDP_PASS, 1, 0, 0);
	gate_set(XDP_FLOW_GATE_OPEN);
	expect("pass, searched", &g, XDP_PASS, 2, 0, 0);
	expect("pass, cached", &g, XDP_PASS, 2, 0, 0);
	if (emc_act_of(2) != 0)
		fail("a pass rule's way keeps act %#x, not 0", emc_act_of(2));
	del(1);
	add("id=1 prio=5 dev=%d dst_ip=10.0.0.7 action=redirect:%d",
	    IFINDEX, IFINDEX);
	expect("replaced by a redirect: a new generation", &f, XDP_REDIRECT, 1,
	       1, tcb(&f));
	if (emc_act_of(1) != IFINDEX)
		fail("a redirect rule's way keeps act %#x, not its device %d",
		     emc_act_of(1), IFINDEX);
	expect("redirect, cached", &f, XDP_REDIRECT, 1, 1, tcb(&f));
	log_test("exact-match cache: a lone drop's or redirect's verdict kept in its way");
	del_all();
}

/*
 * A way answers only a frame whose key equals its own in every word: IPv6
 * and IPv4 alike, although an IPv4 frame is compared without the words the
 * parser keeps zero for IPv4 (a way with its EtherType has them zero too).
 * Each round caches the frame, makes its way's act a redirect that a hit
 * would show, checks that the way answers, then flips one bit of one of
 * the way's key words: the frame must be searched again (drop).
 */
static void test_emc_words(void)
{
	static const struct {
		const char *name;
		int v6;
	} fam[] = { { "IPv6", 1 }, { "IPv4", 0 } };
	__u32 act = IFINDEX;
	struct frame f;
	unsigned int i;
	unsigned int j;

	for (i = 0; i < ARRAY_SIZE(fam); i++) {
		for (j = 0; j < XDP_FLOW_KEY_WORDS; j++) {
			if (!fam[i].v6 && xdp_flow_emc_v4_zero(j))
				continue;
			if (fam[i].v6) {
				add("id=1 prio=5 dev=%d dst_ip=2001:db8::/64 action=drop",
				    IFINDEX);
				f = udp6("2001:db8:2::1", "2001:db8::5", 53);
			} else {
				add("id=1 prio=5 dev=%d dst_ip=10.0.0.7 action=drop",
				    IFINDEX);
				f = udp4("10.9.9.9", "10.0.0.7", 1, 2);
			}
			expect("searched", &f, XDP_DROP, 1, 1, tcb(&f));
			emc_find(gen_get(), 1, NULL, NULL, NULL,
				 &(struct emc_edit){ .act = &act, .word = -1 });
			expect("the way answers", &f, XDP_REDIRECT, 1, 1,
			       tcb(&f));
			emc_find(gen_get(), 1, NULL, NULL, NULL,
				 &(struct emc_edit){ .word = (int)j });
			if (run_frame(&f, 1, NULL) != XDP_DROP)
				fail("%s: a way whose key word %u differs answers",
				     fam[i].name, j);
			del_all();
		}
	}
	log_test("exact-match cache: a way answers only its whole key, IPv6 and IPv4");
}

/* The frame from @src to 10.0.0.7 that test_emc_ways() sends. */
static struct frame emc_frame(__u32 src)
{
	struct in_addr a = { .s_addr = htonl(src) };

	return udp4(inet_ntoa(a), "10.0.0.7", 1, 2);
}

/*
 * A set keeps 4 flows, and a fifth one replaces the oldest. Five sources
 * whose keys fall into one set are found with the cache's own hash, on the
 * key the program cached for the first one.
 */
static void test_emc_ways(void)
{
	__u32 src[XDP_FLOW_EMC_WAYS + 1], s, set = 0, n = 1, i;
	struct xdp_flow_key key;
	struct frame f;
	__u64 g0, g1;

	src[0] = 0x0a090909;
	add("id=1 prio=5 dev=%d dst_ip=10.0.0.7 action=drop", IFINDEX);
	f = emc_frame(src[0]);
	expect("first flow", &f, XDP_DROP, 1, 1, tcb(&f));
	g0 = gen_get();
	if (emc_find(g0, 1, &set, &key, NULL, NULL) != 1) {
		fail("the first flow is not cached");
		goto out;
	}
	for (s = src[0] + 1; n < ARRAY_SIZE(src) && s < src[0] + (1u << 24); s++) {
		key.ip_src[0] = htonl(s);
		if (xdp_flow_emc_set(xdp_flow_emc_hash((xdp_flow_word *)&key)) == set)
			src[n++] = s;
	}
	if (n < ARRAY_SIZE(src)) {
		fail("found %u sources in set %u, want %zu", n, set,
		     ARRAY_SIZE(src));
		goto out;
	}
	for (i = 1; i < XDP_FLOW_EMC_WAYS; i++) {
		f = emc_frame(src[i]);
		expect("more flows of the set", &f, XDP_DROP, 1, 1, tcb(&f));
	}
	if (emc_entries(g0, 1) != XDP_FLOW_EMC_WAYS)
		fail("%d flows cached, want %d", emc_entries(g0, 1),
		     XDP_FLOW_EMC_WAYS);
	/* A better rule for all of them; the old generation put back, so
	 * what the cache holds answers "drop" and a search "redirect".
	 */
	add("id=2 prio=3 dev=%d dst_ip=10.0.0.0/24 action=redirect:%d",
	    IFINDEX, IFINDEX);
	g1 = gen_get();
	gen_set(g0);
	for (i = 0; i < XDP_FLOW_EMC_WAYS; i++) {
		f = emc_frame(src[i]);
		expect("4 ways: every flow still cached", &f, XDP_DROP, 1, 1,
		       tcb(&f));
	}
	f = emc_frame(src[XDP_FLOW_EMC_WAYS]);
	expect("a fifth flow is searched", &f, XDP_REDIRECT, 2, 1, tcb(&f));
	f = emc_frame(src[0]);
	expect("and took the oldest flow's way", &f, XDP_REDIRECT, 2, 1,
	       tcb(&f));
	f = emc_frame(src[XDP_FLOW_EMC_WAYS - 1]);
	expect("the newest stays cached", &f, XDP_DROP, 1, 1, tcb(&f));
	gen_set(g1);
	log_test("exact-match cache: 4 ways a set, round robin");
out:
	del_all();
}

/*
 * The exact-match cache answers a flow it saw, and every table change makes
 * its answers stale. Shown by undoing a generation bump: the cache then
 * serves the answer from before the change, which proves it is consulted
 * and that the generation alone guards it.
 */
static void test_emc(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.7", 1, 2);
	cpu_set_t all, one;
	__u64 g0, g1;

	/* The cache is per CPU: every frame of this test on the same one. */
	CPU_ZERO(&one);
	if (sched_getaffinity(0, sizeof(all), &all)) {
		fail("sched_getaffinity: %s", strerror(errno));
		return;
	}
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		fail("sched_setaffinity: %s", strerror(errno));
		return;
	}
	add("id=1 prio=5 dev=%d dst_ip=10.0.0.7 action=drop", IFINDEX);
	expect("cached", &f, XDP_DROP, 1, 1, tcb(&f));
	g0 = gen_get();
	if (!g0 || emc_entries(g0, 1) != 1)
		fail("no cache entry of generation %llu for rule 1 (%d)",
		     (unsigned long long)g0, emc_entries(g0, 1));
	add("id=2 prio=3 dev=%d dst_ip=10.0.0.0/24 action=redirect:%d",
	    IFINDEX, IFINDEX);
	g1 = gen_get();
	if (g1 <= g0)
		fail("adding a rule left the generation at %llu",
		     (unsigned long long)g1);
	gen_set(g0);
	expect("stale generation: the cached answer", &f, XDP_DROP, 1, 1,
	       tcb(&f));
	gen_set(g1);
	expect("current generation: the new rule", &f, XDP_REDIRECT, 2, 1,
	       tcb(&f));
	expect("the new answer cached", &f, XDP_REDIRECT, 2, 1, tcb(&f));
	if (emc_entries(g1, 2) != 1)
		fail("no cache entry of generation %llu for rule 2",
		     (unsigned long long)g1);
	del(2);
	expect("deleted: the old rule again", &f, XDP_DROP, 1, 1, tcb(&f));
	f = udp4("10.9.9.9", "10.0.0.8", 1, 2);
	expect("a miss, cached", &f, XDP_PASS, NO_RULE, 0, 0);
	if (emc_entries(gen_get(), -1) < 1)
		fail("the miss is not cached");
	add("id=3 prio=9 dev=%d dst_ip=10.0.0.8 action=drop", IFINDEX);
	expect("the cached miss is stale after an add", &f, XDP_DROP, 3, 1,
	       tcb(&f));
	log_test("exact-match cache: hits and misses cached, stale after every change");
	del_all();
	test_emc_ways();
	test_emc_verdict();
	test_emc_words();
	sched_setaffinity(0, sizeof(all), &all);
}

/* --- the flow table's buckets --- */

/* The published mask list (the caller frees it). */
static struct xdp_flow_mask_list *mask_list(void)
{
	struct xdp_flow_mask_list *list = calloc(1, sizeof(*list));
	__u32 zero = 0, id;
	int fd;

	if (!list || bpf_map_lookup_elem(bpf_map__fd(skel->maps.xf_masks),
					 &zero, &id))
		goto fail;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		goto fail;
	if (bpf_map_lookup_elem(fd, &zero, list)) {
		close(fd);
		goto fail;
	}
	close(fd);
	return list;
fail:
	free(list);
	return NULL;
}

/* The masked key and mask of the rule @args describes. */
static int rule_key(const char *args, struct xdp_flow_key *key,
		    struct xdp_flow_key *mask)
{
	char buf[256], msg[UMH_MSG_LEN];
	struct xdp_flow_rule r;
	xdp_flow_word *kw = (xdp_flow_word *)key, *mw;
	unsigned int j;

	snprintf(buf, sizeof(buf), "%s", args);
	if (driver_parse_rule(buf, &r, msg, sizeof(msg)))
		return -1;
	*key = r.key;
	*mask = r.mask;
	mw = (xdp_flow_word *)mask;
	for (j = 0; j < XDP_FLOW_KEY_WORDS; j++)
		kw[j] &= mw[j];
	return 0;
}

#define FT_RULES	12	/* more than a bucket's ways */

static void ft_rule(char *buf, size_t len, __u32 id, __u32 dst)
{
	struct in_addr a = { .s_addr = htonl(dst) };

	snprintf(buf, len, "id=%u prio=5 dev=%d dst_ip=%s action=drop", id,
		 IFINDEX, inet_ntoa(a));
}

/*
 * More keys than a bucket holds, all with the same first bucket, found with
 * the table's own seeded hash: the bucket fills, the rest go to their
 * second buckets and are counted there, and every key is still found, in
 * XDP, as its rules are added and deleted. Then a forged signature
 * collision: a way with a key's signature that points at another key's
 * entry, ahead of the key's own way, must not match.
 */
static void test_ft_buckets(void)
{
	__u32 dst[FT_RULES], d, b1 = 0, sig, zero = 0, i, n = 0, mask_id = 0;
	struct xdp_flow_key key, mask;
	struct xdp_flow_ft_bucket bk, forged;
	struct xdp_flow_mask_list *list;
	struct xdp_flow_ft_hash fh;
	__u32 fb_base = 0;
	int fb_fd = bpf_map__fd(skel->maps.xf_fbuckets), w, o;
	char args[256];
	struct frame f;
	__u64 h;

	/* The mask's id and region come with its first rule; a 12-key mask
	 * has 8 buckets (it doubles past 2 keys a bucket).
	 */
	dst[0] = 0x0a050001;
	ft_rule(args, sizeof(args), 100, dst[0]);
	add("%s", args);
	list = mask_list();
	if (!list || list->count != 1 ||
	    bpf_map_lookup_elem(bpf_map__fd(skel->maps.xf_fhash), &zero, &fh)) {
		fail("no mask list or hash");
		goto out;
	}
	mask_id = list->masks[0].id;
	free(list);
	for (d = dst[0]; n < FT_RULES && d < dst[0] + (1u << 20); d++) {
		ft_rule(args, sizeof(args), 0, d);
		if (rule_key(args, &key, &mask))
			break;
		h = xdp_flow_ft_hash(&fh, mask_id, (xdp_flow_word *)&key,
				     (xdp_flow_word *)&mask);
		if (d == dst[0])
			b1 = h & 7;
		if ((h & 7) == b1)
			dst[n++] = d;
	}
	if (n < FT_RULES) {
		fail("found %u keys of bucket %u, want %u", n, b1, FT_RULES);
		goto out;
	}
	for (i = 1; i < FT_RULES; i++) {
		ft_rule(args, sizeof(args), 100 + i, dst[i]);
		add("%s", args);
	}
	list = mask_list();
	if (!list || list->count != 1 || list->masks[0].fb_mask != 7) {
		fail("the mask has %u buckets, want 8",
		     list ? list->masks[0].fb_mask + 1 : 0);
		free(list);
		goto out;
	}
	fb_base = list->masks[0].fb_base;
	free(list);
	d = fb_base + b1;
	if (bpf_map_lookup_elem(fb_fd, &d, &bk) || bk.spill != FT_RULES - XDP_FLOW_FT_WAYS) {
		fail("bucket %u counts %u keys in their second bucket, want %u",
		     b1, bk.spill, FT_RULES - XDP_FLOW_FT_WAYS);
		goto out;
	}
	for (i = 0; i < FT_RULES; i++) {
		struct in_addr a = { .s_addr = htonl(dst[i]) };

		f = udp4("10.9.9.9", inet_ntoa(a), 1, 2);
		expect("every key of a full bucket", &f, XDP_DROP, 100 + i, 1,
		       tcb(&f));
	}
	/* Out of the full bucket, and out of the second buckets. */
	del(100);
	del(100 + FT_RULES - 1);
	bpf_map_lookup_elem(fb_fd, &d, &bk);
	if (bk.spill != FT_RULES - XDP_FLOW_FT_WAYS - 1)
		fail("after deleting a spilled key, %u counted, want %u",
		     bk.spill, FT_RULES - XDP_FLOW_FT_WAYS - 1);
	for (i = 1; i < FT_RULES - 1; i++) {
		struct in_addr a = { .s_addr = htonl(dst[i]) };

		f = udp4("10.9.9.9", inet_ntoa(a), 1, 2);
		expect("the other keys after deletes", &f, XDP_DROP, 100 + i,
		       1, tcb(&f));
	}
	log_test("flow table: a full bucket spills into second buckets, all keys found");

	/*
	 * The forgery: way 0 of the bucket gets the signature of the key in
	 * its last way, and the slot of another key. The lookup of the last
	 * way's key meets way 0 first: the entry there is another key's.
	 */
	bpf_map_lookup_elem(fb_fd, &d, &bk);
	for (w = XDP_FLOW_FT_WAYS - 1; w > 0 && !bk.sig[w]; w--)
		;
	for (o = 0; o < XDP_FLOW_FT_WAYS && (o == w || !bk.sig[o]); o++)
		;
	if (w == 0 || o == XDP_FLOW_FT_WAYS) {
		fail("bucket %u has fewer than two keys", b1);
		goto out;
	}
	forged = bk;
	forged.sig[0] = bk.sig[w];
	forged.slot[0] = bk.slot[o];
	sig = bk.sig[w];
	bpf_map_update_elem(fb_fd, &d, &forged, BPF_ANY);
	gen_set(gen_get() + 1);		/* the cache must not answer */
	for (i = 1; i < FT_RULES - 1; i++) {
		struct in_addr a = { .s_addr = htonl(dst[i]) };

		ft_rule(args, sizeof(args), 0, dst[i]);
		rule_key(args, &key, &mask);
		h = xdp_flow_ft_hash(&fh, mask_id, (xdp_flow_word *)&key,
				     (xdp_flow_word *)&mask);
		if (xdp_flow_ft_sig(h) != sig)
			continue;
		f = udp4("10.9.9.9", inet_ntoa(a), 1, 2);
		expect("a signature that points at another key's entry", &f,
		       XDP_DROP, 100 + i, 1, tcb(&f));
		break;
	}
	if (i == FT_RULES - 1)
		fail("no key with the signature of way %d", w);
	bpf_map_update_elem(fb_fd, &d, &bk, BPF_ANY);
	log_test("flow table: a signature collision is settled by the whole key");
	del_all();
	return;
out:
	log_test("flow table: a full bucket spills into second buckets, all keys found");
	del_all();
}

/*
 * xdp_flow_ft_sig_match(), the program's test of 4 signatures at once:
 * never a miss for a lane that holds the signature, and no lane flagged
 * when none does. Random words, and words built to hold it in one lane.
 */
static void test_ft_sig_match(void)
{
	__u64 x = 0x9e3779b97f4a7c15ULL, w, m;
	unsigned int i, lane, bad = 0;
	__u16 sig, l;
	bool any;

	for (i = 0; i < 1000000 && bad < 5; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w = x;
		sig = (x >> 20) | 1;
		if (i & 1) {
			lane = (x >> 40) & 3;
			w &= ~(0xffffULL << (16 * lane));
			w |= (__u64)sig << (16 * lane);
		}
		m = xdp_flow_ft_sig_match(w, sig);
		any = false;
		for (lane = 0; lane < 4; lane++) {
			l = w >> (16 * lane);
			if (l == sig) {
				any = true;
				if (!(m & (0x8000ULL << (16 * lane))))
					bad++;
			}
		}
		if (!any && m)
			bad++;
	}
	if (bad)
		fail("%u words tested wrong", bad);
	log_test("flow table: signatures tested 4 at a time, none missed or invented");
}

/* Key @i of test_ft_room(): a 4-word key of mask 7. */
static void room_key(__u32 i, struct xdp_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->ip_dst[0] = htonl(0x0a000000 + i);
}

/*
 * Both buckets of a key full: the table moves one of the first bucket's own
 * keys to that key's second bucket and places the new key; with nowhere to
 * move, -ENOSPC and nothing changed. On a table of its own (ftab.c's
 * interface), 4 buckets in one region; the keys are chosen with the
 * table's seeded hash.
 */
static void test_ft_room(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	int bfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_fbuckets", 4,
				 sizeof(struct xdp_flow_ft_bucket), 64, &mm);
	int efd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_fentries", 4,
				 sizeof(struct xdp_flow_ft_entry), 256, &mm);
	int hfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_fhash", 4,
				 sizeof(struct xdp_flow_ft_hash), 1, &mm);
	__u32 a = 0, b = 0, mover = ~0u, k = ~0u, i, n = 0, zero = 0, sig;
	__u32 in_a[XDP_FLOW_FT_WAYS], in_b[XDP_FLOW_FT_WAYS], na = 0, nb = 0;
	struct xdp_flow_ft_hash fh;
	struct xdp_flow_key key;
	struct ftab_region r;
	struct ftab *f;
	__u64 h;

	f = bfd >= 0 && efd >= 0 && hfd >= 0 ? ftab_open(bfd, efd, hfd) : NULL;
	if (!f || ftab_region_alloc(f, 2, &r) ||
	    bpf_map_lookup_elem(hfd, &zero, &fh)) {
		fail("cannot make a flow table: %s", strerror(errno));
		goto out;
	}
#define W		XDP_FLOW_FT_WAYS
#define FIRST(i)	(room_key(i, &key),				\
			 h = xdp_flow_ft_hash(&fh, 7, (xdp_flow_word *)&key, \
					      (xdp_flow_word *)&key),	\
			 sig = xdp_flow_ft_sig(h), (__u32)(h & 3))
	/* K: its first bucket a, its second b; a and b filled with keys
	 * whose first bucket they are (a bucket's ways each); one of a's keys must have its
	 * second bucket elsewhere than b.
	 */
	for (i = 1; i < 100000 && k == ~0u; i++) {
		a = FIRST(i);
		b = xdp_flow_ft_alt(a, sig, 3);
		k = i;
	}
	for (i = 1; i < 100000 && (na < W || nb < W); i++) {
		__u32 first = FIRST(i);

		if (i == k)
			continue;
		if (first == a && na < W &&
		    (na < W - 1 || mover != ~0u ||
		     xdp_flow_ft_alt(a, sig, 3) != b)) {
			if (xdp_flow_ft_alt(a, sig, 3) != b && mover == ~0u)
				mover = i;
			in_a[na++] = i;
		} else if (first == b && nb < W) {
			in_b[nb++] = i;
		}
	}
	if (na < W || nb < W || mover == ~0u) {
		fail("found %u and %u keys for the two buckets", na, nb);
		goto out;
	}
	for (i = 0; i < W; i++) {
		room_key(in_a[i], &key);
		n += !ftab_set(f, &r, 7, &key, in_a[i], 1);
		room_key(in_b[i], &key);
		n += !ftab_set(f, &r, 7, &key, in_b[i], 1);
	}
	room_key(k, &key);
	if (n != 2 * W || ftab_spilled(f) ||
	    ftab_set(f, &r, 7, &key, k, 1) || ftab_spilled(f) != 1)
		fail("a key with both buckets full: %u placed, %u spilled", n,
		     ftab_spilled(f));
	for (i = 0; i < W; i++) {
		room_key(in_a[i], &key);
		if (ftab_lookup(f, &r, 7, &key) != (int)in_a[i])
			fail("key %u of the first bucket lost", in_a[i]);
		room_key(in_b[i], &key);
		if (ftab_lookup(f, &r, 7, &key) != (int)in_b[i])
			fail("key %u of the second bucket lost", in_b[i]);
	}
	room_key(k, &key);
	if (ftab_lookup(f, &r, 7, &key) != (int)k)
		fail("the new key is not found");
	log_test("flow table: both buckets full, a key moves to make room");
	/* Fill the region (4 buckets): the next key finds no room. */
	for (i = 100000; n < 4 * W - 1 && i < 200000; i++) {
		room_key(i, &key);
		n += !ftab_set(f, &r, 7, &key, i, 1);
	}
	room_key(i, &key);
	if (n != 4 * W - 1 || ftab_set(f, &r, 7, &key, i, 1) != -ENOSPC ||
	    ftab_lookup(f, &r, 7, &key) != -1)
		fail("a full region: %u keys, then not -ENOSPC", n + 1);
	room_key(k, &key);
	if (ftab_lookup(f, &r, 7, &key) != (int)k)
		fail("a refused key lost another");
	log_test("flow table: a full region refuses a key, -ENOSPC, nothing lost");
#undef FIRST
#undef W
out:
	ftab_free(f);
	close(bfd);
	close(efd);
	close(hfd);
}

/* --- concurrent changes under traffic --- */

struct race {
	struct frame y, x;
	int x_state;		/* RACE_STATE(): RACE_*, in its round */
	bool stop;
	unsigned long runs, y_missed, x_after_delete, x_missed, errors;
};

enum { RACE_DELETED, RACE_PRESENT, RACE_CHANGING };

/*
 * X's state with the round above it: a reader held up from before X's
 * delete until after its next add (a loaded machine does that) sees
 * RACE_PRESENT on both sides of a frame that met no X; only the round
 * tells the two apart.
 */
#define RACE_STATE(round, state)	((int)((round) << 2 | (state)))
#define RACE_OF(x_state)		((x_state) & 3)

#define RACE_ROUNDS	200

static void *race_reader(void *arg)
{
	struct race *r = arg;
	int before, after, v;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		v = run_frame(&r->y, 1, NULL);
		if (v != XDP_DROP)
			r->y_missed++;
		before = __atomic_load_n(&r->x_state, __ATOMIC_ACQUIRE);
		v = run_frame(&r->x, 1, NULL);
		after = __atomic_load_n(&r->x_state, __ATOMIC_ACQUIRE);
		if (v < 0)
			r->errors++;
		else if (before != after)
			;	/* X changed meanwhile: either verdict is right */
		else if (RACE_OF(before) == RACE_DELETED && v == XDP_REDIRECT)
			r->x_after_delete++;
		else if (RACE_OF(before) == RACE_PRESENT && v != XDP_REDIRECT)
			r->x_missed++;
		r->runs++;
	}
	return NULL;
}

/*
 * A reader runs frames while the tables change under it: rule Y stays and
 * must decide every one of its frames; rule X comes and goes and must
 * decide each of its frames that starts after its add returned and ends
 * before its delete begins, and none that starts after its delete
 * returned and ends before its next add begins. Around them, rules come
 * and go: in their mask, whose buckets double 5 times meanwhile, and in 8
 * others (masks made and freed, lists swapped, slots used again after
 * grace periods).
 */
static void test_race(void)
{
	struct race r = {
		.y = udp4("10.9.9.9", "10.6.0.1", 1, 2),
		.x = udp4("10.9.9.9", "10.6.0.2", 1, 2),
	};
	unsigned int i, k;
	pthread_t th;

	add("id=200 prio=5 dev=%d dst_ip=10.6.0.1 action=drop", IFINDEX);
	if (pthread_create(&th, NULL, race_reader, &r)) {
		fail("pthread_create");
		goto out;
	}
	for (i = 0; i < RACE_ROUNDS; i++) {
		__atomic_store_n(&r.x_state, RACE_STATE(i, RACE_CHANGING),
				 __ATOMIC_RELEASE);
		add("id=201 prio=5 dev=%d dst_ip=10.6.0.2 action=redirect:%d",
		    IFINDEX, IFINDEX);
		__atomic_store_n(&r.x_state, RACE_STATE(i, RACE_PRESENT),
				 __ATOMIC_RELEASE);
		/* Y's mask fills up to 66 keys: its buckets double 5 times. */
		if (i >= 64)
			del(400 + i % 64);
		add("id=%u prio=5 dev=%d dst_ip=10.8.%u.%u action=drop",
		    400 + i % 64, IFINDEX, i / 256, i % 256);
		for (k = 0; k < 8; k++)
			add("id=%u prio=%u dev=%d dst_ip=10.7.%u.0/%u action=drop",
			    300 + (i % 4) * 8 + k, 1 + k, IFINDEX, i % 256,
			    24 + k);
		if (i >= 3)
			for (k = 0; k < 8; k++)
				del(300 + ((i - 3) % 4) * 8 + k);
		__atomic_store_n(&r.x_state, RACE_STATE(i, RACE_CHANGING),
				 __ATOMIC_RELEASE);
		del(201);
		__atomic_store_n(&r.x_state, RACE_STATE(i, RACE_DELETED),
				 __ATOMIC_RELEASE);
		usleep(100);
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	if (r.y_missed || r.x_after_delete || r.x_missed || r.errors || !r.runs)
		fail("%lu runs: a staying rule missed %lu times, a deleted rule acted %lu times, a present rule missed %lu times, %lu errors",
		     r.runs, r.y_missed, r.x_after_delete, r.x_missed,
		     r.errors);
	else
		printf("# %lu frames under %u rounds of changes\n", r.runs,
		       RACE_ROUNDS);
	log_test("flow table: changes under traffic, no frame sees a deleted rule or misses a present one");
out:
	del_all();
}

static void test_software(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 2);

	add("id=1 prio=1 software dev=%d dst_ip=10.0.0.0/8 action=drop",
	    IFINDEX);
	add("id=2 prio=2 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	expect("shadowed drop", &f, XDP_PASS, 2, 0, 0);
	expect("software rule not counted", &f, XDP_PASS, 1, 0, 0);
	add("id=3 prio=0 dev=%d dst_ip=10.0.0.1 action=pass", IFINDEX);
	expect("pass rule not counted", &f, XDP_PASS, 3, 0, 0);
	del(1);
	del(3);
	expect("unshadowed", &f, XDP_DROP, 2, 1, tcb(&f));
	log_test("software rule shadows a drop; pass and software are not counted");
	del_all();
}

static void test_malformed_frames(void)
{
	struct frame f;

	add("id=1 prio=9 dev=%d eth_type=ipv4 action=drop", IFINDEX);
	add("id=2 prio=9 dev=%d action=drop", IFINDEX);	/* any frame */
	eth(&f, mac_b, mac_a, ETH_P_IP);
	/* BPF_PROG_TEST_RUN builds no skb for IPv4 frames this short
	 * (-EINVAL); the program's bounds checks are the XDP program's.
	 */
	if (tc_hook)
		printf("# tc hook: Ethernet-only and cut IPv4 header frames skipped: BPF_PROG_TEST_RUN refuses them\n");
	else
		expect("ethernet only", &f, XDP_PASS, 1, 0, 0);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_UDP, 0, 0, 8);
	f.len -= 6;
	if (!tc_hook)
		expect("IPv4 header cut", &f, XDP_PASS, 1, 0, 0);
	f = tcp4("10.0.0.1", 80, 0x10);
	f.len -= 10;
	f.b[17] -= 10;	/* tot_len agrees with the frame */
	expect("TCP header cut", &f, XDP_PASS, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	f.b[17] += 40;
	expect("tot_len beyond the frame", &f, XDP_PASS, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	f.b[14] = 0x44;
	expect("ihl 4", &f, XDP_PASS, 1, 0, 0);
	eth(&f, mac_b, mac_a, 0x88b5);
	put(&f, "0123456789abcdef", 16);
	expect("unknown EtherType", &f, XDP_PASS, 2, 0, 0);
	/* IPIP: flower would key the inner header, the program leaves it. */
	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_IPIP, 0, 0, 20 + 8);
	ipv4(&f, "10.8.8.8", "10.0.0.7", IPPROTO_UDP, 0, 0, 8);
	udp(&f, 1, 2, 0);
	expect("IPIP", &f, XDP_PASS, 1, 0, 0);
	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_GRE, 0, 0, 4 + 20 + 8);
	put(&f, "\x00\x00\x08\x00", 4);
	ipv4(&f, "10.8.8.8", "10.0.0.7", IPPROTO_UDP, 0, 0, 8);
	udp(&f, 1, 2, 0);
	expect("GRE", &f, XDP_PASS, 1, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	expect("control: whole frame", &f, XDP_DROP, 1, 1, tcb(&f));
	log_test("truncated or inconsistent frames, tunnels and unknown EtherTypes pass");
	del_all();
}

static void test_options_frags(void)
{
	struct frame f;

	add("id=1 prio=1 dev=%d ip_proto=udp dst_port=53 action=drop", IFINDEX);
	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_UDP, 8, 0, 8 + 4);
	udp(&f, 1, 53, 4);
	expect("IPv4 options", &f, XDP_DROP, 1, 1, tcb(&f));
	log_test("IPv4 with options: ports found after them");

	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_UDP, 0, 0x2000, 8 + 8);
	udp(&f, 1, 53, 8);
	expect("first fragment, ports not keyed", &f, XDP_PASS, 1, 0, 0);
	add("id=2 prio=2 dev=%d ip_proto=udp frag=3/3 action=drop", IFINDEX);
	add("id=3 prio=2 dev=%d ip_proto=udp frag=1/3 action=drop", IFINDEX);
	expect("first fragment", &f, XDP_DROP, 2, 1, tcb(&f));
	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.9.9.9", "10.0.0.1", IPPROTO_UDP, 0, 0x0003, 8 + 8);
	udp(&f, 1, 53, 8);	/* bytes that look like ports */
	expect("later fragment", &f, XDP_DROP, 3, 1, tcb(&f));
	log_test("IPv4 fragments: frag flags keyed, ports not");
	del_all();
}

static void test_replace(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	struct xdp_flow_stats st;

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	expect("hit", &f, XDP_DROP, 1, 1, tcb(&f));
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	st = stats(1);
	if (st.packets != 1)
		fail("identical re-add reset the counters");
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=redirect:%d", IFINDEX,
	    IFINDEX);
	st = stats(1);
	if (st.packets != 0)
		fail("changed rule kept the counters");
	expect("replaced", &f, XDP_REDIRECT, 1, 1, tcb(&f));
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.2 action=drop", IFINDEX);
	expect("old key gone", &f, XDP_PASS, 1, 0, 0);
	log_test("replace by id: identical keeps counters, changed resets them");
	del_all();
}

static void test_invalid(void)
{
	struct xdp_flow_rule r;
	char msg[UMH_MSG_LEN];
	unsigned int before = table_rule_count(tbl);
	int err;

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	before = table_rule_count(tbl);
#define BAD(what, ...) do {						\
	err = add(__VA_ARGS__);						\
	if (err != -EINVAL)						\
		fail("%s: got %d, expected -EINVAL", what, err);	\
} while (0)
	BAD("id out of range", "id=%u prio=1 action=drop", XDP_FLOW_MAX_RULES);
	BAD("unknown action", "id=2 prio=1 action=raw:9");
	BAD("unspec action", "id=2 prio=1 action=raw:0");
	BAD("redirect without ifindex", "id=2 prio=1 action=raw:3");
	BAD("bits outside mask", "id=2 prio=1 dst_ip=10.0.0.1/24 action=drop");
	BAD("action after terminal", "id=2 prio=1 action=drop action=pass");
	BAD("no actions", "id=2 prio=1 dst_ip=10.0.0.1");
	BAD("replacing with garbage", "id=1 prio=1 action=raw:77");

	memset(&r, 0, sizeof(r));
	r.id = 2;
	r.nr_actions = XDP_FLOW_MAX_ACTIONS + 1;
	if (table_rule_add(tbl, &r, msg, sizeof(msg)) != -EINVAL)
		fail("nr_actions too big accepted");
	r.nr_actions = 1;
	r.actions[0].id = XDP_FLOW_ACTION_DROP;
	r.flags = 0x10;
	if (table_rule_add(tbl, &r, msg, sizeof(msg)) != -EINVAL)
		fail("unknown flags accepted");
	if (table_rule_count(tbl) != before)
		fail("rule count changed");
	{
		struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 2);

		expect("rule 1 intact", &f, XDP_DROP, 1, 1, tcb(&f));
	}
	log_test("malformed rules: -EINVAL, tables unchanged");
	del_all();
}

/* --- nftables flowtables --- */

/* Ones' complement sum of @n bytes as 16-bit big-endian words, folded. */
static __u16 ocsum(const __u8 *p, size_t n, __u32 sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* The transport sum of the frame's IPv4 or IPv6 packet at @noff, pseudo
 * header included: 0xffff when its checksum is right.
 */
static __u16 l4_sum(const struct frame *f, size_t noff)
{
	const __u8 *ip = f->b + noff;
	bool v6 = (ip[0] >> 4) == 6;
	size_t hl = v6 ? 40 : (ip[0] & 15) * 4;
	size_t l4len = v6 ? (size_t)(ip[4] << 8 | ip[5]) :
			    (size_t)(ip[2] << 8 | ip[3]) - hl;
	__u8 proto = v6 ? ip[6] : ip[9];
	__u32 sum;

	sum = ocsum(ip + (v6 ? 8 : 12), v6 ? 32 : 8, 0);
	sum += proto + l4len;
	return ocsum(ip + hl, l4len, sum);
}

static __u16 ip4_sum(const struct frame *f, size_t noff)
{
	return ocsum(f->b + noff, (f->b[noff] & 15) * 4, 0);
}

/* The frame's checksum fields, zeroed. */
static void clear_csums(struct frame *f, size_t noff)
{
	__u8 *ip = f->b + noff;
	bool v6 = (ip[0] >> 4) == 6;
	size_t hl = v6 ? 40 : (ip[0] & 15) * 4;
	__u8 *c = ip + hl + ((v6 ? ip[6] : ip[9]) == IPPROTO_TCP ? 16 : 6);

	c[0] = c[1] = 0;
	if (!v6)
		ip[10] = ip[11] = 0;
}

/* Right checksums for the frame's packet at @noff. */
static void fix_csums(struct frame *f, size_t noff)
{
	__u8 *ip = f->b + noff;
	bool v6 = (ip[0] >> 4) == 6;
	size_t hl = v6 ? 40 : (ip[0] & 15) * 4;
	__u8 *c = ip + hl + ((v6 ? ip[6] : ip[9]) == IPPROTO_TCP ? 16 : 6);
	__u16 v;

	c[0] = c[1] = 0;
	v = ~l4_sum(f, noff);
	c[0] = v >> 8;
	c[1] = v;
	if (v6)
		return;
	ip[10] = ip[11] = 0;
	v = ~ip4_sum(f, noff);
	ip[10] = v >> 8;
	ip[11] = v;
}

/* Runs @f; @out gets the frame the program made of it. */
static int run_out(const struct frame *f, struct frame *out)
{
	struct xdp_md xdp = { .data_end = f->len, .ingress_ifindex = IFINDEX };
	struct __sk_buff skb = { .ingress_ifindex = IFINDEX };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = f->b, .data_size_in = f->len,
		    .data_out = out->b, .data_size_out = sizeof(out->b),
		    .ctx_in = tc_hook ? (void *)&skb : (void *)&xdp,
		    .ctx_size_in = tc_hook ? sizeof(skb) : sizeof(xdp));

	memset(out, 0, sizeof(*out));
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -1;
	out->len = opts.data_size_out;
	return tc_hook ? tc_verdict((int)opts.retval) : (int)opts.retval;
}

/* The connection key add_ft() gives its rules (0: none). */
static __u64 ft_conn_key;

/*
 * Adds the rule of add()'s text @fmt (a match and action=redirect:...)
 * with the @n flowtable actions @ft before its redirect.
 */
static int add_ft(const struct xdp_flow_action *ft, unsigned int n,
		  const char *fmt, ...)
{
	char msg[UMH_MSG_LEN] = "";
	struct xdp_flow_rule r;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = parse_rule(&r, msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err || r.nr_actions != 1 || n + 1 > XDP_FLOW_MAX_ACTIONS) {
		fail("add_ft %s: %s", fmt, msg);
		return -EINVAL;
	}
	r.actions[n] = r.actions[0];
	memcpy(r.actions, ft, n * sizeof(*ft));
	r.nr_actions = n + 1;
	r.ft_conn = ft_conn_key;
	err = table_rule_add(tbl, &r, msg, sizeof(msg));
	if (err && err != -EINVAL)
		fail("add_ft %s: %s", fmt, msg);
	return err;
}

static const __u8 mac_gw[6] = { 2, 0, 0, 0, 0, 0x0b };
static const __u8 mac_out[6] = { 2, 0, 0, 0, 0, 0x0c };

static struct xdp_flow_action ft_route(__u16 mtu)
{
	struct xdp_flow_action a = { .id = XDP_FLOW_ACTION_FT_ROUTE };

	a.ft_route.mtu = mtu;
	memcpy(a.ft_route.eth_dst, mac_gw, 6);
	memcpy(a.ft_route.eth_src, mac_out, 6);
	return a;
}

static struct xdp_flow_action ft_port(bool dst, __u16 port)
{
	struct xdp_flow_action a = { .id = XDP_FLOW_ACTION_FT_PORTS };

	a.ft_ports.which = dst ? XDP_FLOW_FT_DPORT : XDP_FLOW_FT_SPORT;
	*(dst ? &a.ft_ports.dst : &a.ft_ports.src) = htons(port);
	return a;
}

static struct xdp_flow_action ft_addr(bool dst, const char *addr)
{
	struct xdp_flow_action a = {
		.id = dst ? XDP_FLOW_ACTION_FT_DST_ADDR :
			    XDP_FLOW_ACTION_FT_SRC_ADDR,
	};

	if (inet_pton(AF_INET, addr, a.ft_addr) != 1)
		inet_pton(AF_INET6, addr, a.ft_addr);
	return a;
}

/*
 * Runs @f, which rule @id forwards: the verdict is a redirect, the rule
 * counts it, and the frame that leaves is @f with the addresses, ports and
 * TTL (or hop limit) the software path writes, and with the checksums'
 * residues it had: right ones stay right, a wrong one stays wrong by as
 * much, as incremental updates leave them.
 */
static void expect_ft(const char *what, const struct frame *f, __u32 id,
		      const struct frame *want)
{
	struct xdp_flow_stats before = stats(id), after;
	struct frame out;
	int got;

	got = run_out(f, &out);
	after = stats(id);
	if (got != XDP_REDIRECT) {
		fail("%s: verdict %s (%d), expected REDIRECT", what,
		     verdict_name(got), got);
		return;
	}
	if (after.packets - before.packets != 1)
		fail("%s: not counted", what);
	/* every byte but the checksums, which the residues check */
	if (out.len == want->len) {
		struct frame a = out, b = *want;

		clear_csums(&a, ETH_HLEN);
		clear_csums(&b, ETH_HLEN);
		if (memcmp(a.b, b.b, a.len))
			fail("%s: the frame that left differs from the software path's",
			     what);
	} else {
		fail("%s: %zu bytes left, not %zu", what, out.len, want->len);
	}
	if (l4_sum(&out, ETH_HLEN) != l4_sum(f, ETH_HLEN))
		fail("%s: transport checksum residue 0x%04x, was 0x%04x", what,
		     l4_sum(&out, ETH_HLEN), l4_sum(f, ETH_HLEN));
	if (f->b[ETH_HLEN] >> 4 == 4 &&
	    ip4_sum(&out, ETH_HLEN) != ip4_sum(f, ETH_HLEN))
		fail("%s: IPv4 header checksum residue 0x%04x, was 0x%04x",
		     what, ip4_sum(&out, ETH_HLEN), ip4_sum(f, ETH_HLEN));
}

/* Runs @f: to the stack, untouched and not counted. */
static void expect_ft_stack(const char *what, const struct frame *f,
			    __u32 id)
{
	struct xdp_flow_stats before = stats(id), after;
	struct frame out;
	int got;

	got = run_out(f, &out);
	after = stats(id);
	if (got != XDP_PASS)
		fail("%s: verdict %s (%d), expected PASS", what,
		     verdict_name(got), got);
	else if (out.len != f->len || memcmp(out.b, f->b, f->len))
		fail("%s: the frame was changed", what);
	if (after.packets != before.packets)
		fail("%s: counted", what);
}

/* The frame the software path makes of @f: MACs, TTL - 1, and @edit. */
static struct frame ft_want(const struct frame *f,
			    void (*edit)(struct frame *))
{
	struct frame w = *f;

	memcpy(w.b, mac_gw, 6);
	memcpy(w.b + 6, mac_out, 6);
	if (w.b[ETH_HLEN] >> 4 == 4)
		w.b[ETH_HLEN + 8]--;
	else
		w.b[ETH_HLEN + 7]--;
	if (edit)
		edit(&w);
	fix_csums(&w, ETH_HLEN);
	return w;
}

static void snat4_edit(struct frame *w)
{
	__u32 a = ip4("192.0.2.1");

	memcpy(w->b + ETH_HLEN + 12, &a, 4);
	w->b[ETH_HLEN + 20] = 40000 >> 8;
	w->b[ETH_HLEN + 21] = 40000 & 0xff;
}

static void dnat6_edit(struct frame *w)
{
	inet_pton(AF_INET6, "2001:db8:99::2", w->b + ETH_HLEN + 24);
	w->b[ETH_HLEN + 40 + 2] = 8080 >> 8;
	w->b[ETH_HLEN + 40 + 3] = 8080 & 0xff;
}

static void test_flowtable(void)
{
	struct xdp_flow_action snat[] = {
		ft_route(1500), ft_port(false, 40000), ft_addr(false, "192.0.2.1"),
	};
	struct xdp_flow_action dnat6[] = {
		ft_route(1500), ft_port(true, 8080),
		ft_addr(true, "2001:db8:99::2"),
	};
	struct xdp_flow_action route_only[] = { ft_route(1500) };
	struct xdp_flow_action route_1400[] = { ft_route(1400) };
	struct xdp_flow_action small_mtu[] = { ft_route(37) };
	struct frame f, w;

	/* IPv4 UDP, source NAT (a masquerading router's original direction) */
	add_ft(snat, 3, "id=1 prio=1 dev=%d src_ip=10.0.1.2 dst_ip=10.0.2.2 ip_proto=udp src_port=1000 dst_port=2000 action=redirect:%d",
	       IFINDEX, IFINDEX);
	f = udp4("10.0.1.2", "10.0.2.2", 1000, 2000);
	fix_csums(&f, ETH_HLEN);
	w = ft_want(&f, snat4_edit);
	expect_ft("IPv4 UDP SNAT", &f, 1, &w);
	f.b[ETH_HLEN + 20 + 8] ^= 0x5a;	/* payload: the checksum now wrong */
	w = ft_want(&f, snat4_edit);
	expect_ft("IPv4 UDP SNAT, wrong checksum", &f, 1, &w);
	f.b[ETH_HLEN + 20 + 8] ^= 0x5a;
	f.b[ETH_HLEN + 20 + 6] = f.b[ETH_HLEN + 20 + 7] = 0;
	fix_csums(&f, ETH_HLEN);
	f.b[ETH_HLEN + 20 + 6] = f.b[ETH_HLEN + 20 + 7] = 0;
	{
		struct frame out;

		if (run_out(&f, &out) != XDP_REDIRECT ||
		    out.b[ETH_HLEN + 20 + 6] || out.b[ETH_HLEN + 20 + 7])
			fail("IPv4 UDP without a checksum: one was written");
	}
	log_test("flowtable: IPv4 UDP SNAT, TTL - 1, MACs; checksums updated as the software path does");

	/* the frames the software path leaves to the stack */
	f = udp4("10.0.1.2", "10.0.2.2", 1000, 2000);
	f.b[ETH_HLEN + 8] = 1;
	fix_csums(&f, ETH_HLEN);
	expect_ft_stack("TTL 1", &f, 1);
	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.0.1.2", "10.0.2.2", IPPROTO_UDP, 4, 0, 8 + 10);
	udp(&f, 1000, 2000, 10);
	fix_csums(&f, ETH_HLEN);
	expect_ft_stack("IPv4 options", &f, 1);
	eth(&f, mac_b, mac_a, ETH_P_IP);
	ipv4(&f, "10.0.1.2", "10.0.2.2", IPPROTO_UDP, 0, 0x2000, 8 + 10);
	udp(&f, 1000, 2000, 10);
	expect_ft_stack("first fragment", &f, 1);
	add_ft(small_mtu, 1, "id=2 prio=1 dev=%d src_ip=10.0.1.3 ip_proto=udp action=redirect:%d",
	       IFINDEX, IFINDEX);
	f = udp4("10.0.1.3", "10.0.2.2", 1000, 2000);
	fix_csums(&f, ETH_HLEN);
	expect_ft_stack("over the MTU", &f, 2);
	add_ft(route_only, 1, "id=3 prio=1 dev=%d dst_ip=10.0.3.3 ip_proto=tcp action=redirect:%d",
	       IFINDEX, IFINDEX);
	f = tcp4("10.0.3.3", 80, 0x01);		/* FIN */
	fix_csums(&f, ETH_HLEN);
	expect_ft_stack("TCP FIN", &f, 3);
	f = tcp4("10.0.3.3", 80, 0x04);		/* RST */
	fix_csums(&f, ETH_HLEN);
	expect_ft_stack("TCP RST", &f, 3);
	f = tcp4("10.0.3.3", 80, 0x10);		/* ACK */
	fix_csums(&f, ETH_HLEN);
	w = ft_want(&f, NULL);
	expect_ft("TCP ACK, routed only", &f, 3, &w);
	log_test("flowtable: TTL 1, options, fragments, over the MTU, FIN and RST go to the stack untouched");

	/* IPv6 TCP, destination NAT: no header checksum, the transport's
	 * pseudo header changes
	 */
	add_ft(dnat6, 3, "id=4 prio=1 dev=%d dst_ip=2001:db8::1 ip_proto=tcp dst_port=80 action=redirect:%d",
	       IFINDEX, IFINDEX);
	eth(&f, mac_b, mac_a, ETH_P_IPV6);
	ipv6(&f, "2001:db8:1::5", "2001:db8::1", IPPROTO_TCP, 20);
	tcp(&f, 40000, 80, 0x10);
	fix_csums(&f, ETH_HLEN);
	w = ft_want(&f, dnat6_edit);
	expect_ft("IPv6 TCP DNAT", &f, 4, &w);
	f.b[ETH_HLEN + 7] = 1;
	fix_csums(&f, ETH_HLEN);
	expect_ft_stack("hop limit 1", &f, 4);
	log_test("flowtable: IPv6 TCP DNAT, hop limit - 1; hop limit 1 goes to the stack");

	/* A connection's end: a FIN of one direction goes to the stack, and
	 * the connection with it, both ways, until its rules go.
	 */
	{
		struct frame back, fin, wb;

		ft_conn_key = 0x1234;
		add_ft(route_only, 1, "id=6 prio=1 dev=%d dst_ip=10.0.6.6 ip_proto=tcp action=redirect:%d",
		       IFINDEX, IFINDEX);
		add_ft(route_only, 1, "id=7 prio=1 dev=%d src_ip=10.0.6.6 ip_proto=tcp action=redirect:%d",
		       IFINDEX, IFINDEX);
		ft_conn_key = 0;
		f = tcp4("10.0.6.6", 80, 0x10);
		fix_csums(&f, ETH_HLEN);
		w = ft_want(&f, NULL);
		eth(&back, mac_b, mac_a, ETH_P_IP);
		ipv4(&back, "10.0.6.6", "10.9.9.9", IPPROTO_TCP, 0, 0, 20);
		tcp(&back, 80, 40000, 0x10);
		fix_csums(&back, ETH_HLEN);
		wb = ft_want(&back, NULL);
		fin = tcp4("10.0.6.6", 80, 0x11);
		fix_csums(&fin, ETH_HLEN);
		expect_ft("connection: ACK out", &f, 6, &w);
		expect_ft("connection: ACK back", &back, 7, &wb);
		expect_ft_stack("connection: FIN out", &fin, 6);
		expect_ft_stack("connection: ACK out after the FIN", &f, 6);
		expect_ft_stack("connection: ACK back after the FIN", &back, 7);
		del(6);
		del(7);
		ft_conn_key = 0x1234;
		add_ft(route_only, 1, "id=6 prio=1 dev=%d dst_ip=10.0.6.6 ip_proto=tcp action=redirect:%d",
		       IFINDEX, IFINDEX);
		ft_conn_key = 0;
		expect_ft("connection: ACK out, its rule added again", &f, 6, &w);
		/* Its only rule replaced by another: the mark stays. */
		expect_ft_stack("connection: FIN out again", &fin, 6);
		ft_conn_key = 0x1234;
		add_ft(route_1400, 1, "id=6 prio=1 dev=%d dst_ip=10.0.6.6 ip_proto=tcp action=redirect:%d",
		       IFINDEX, IFINDEX);
		ft_conn_key = 0;
		expect_ft_stack("connection: ACK out after the FIN, its only rule replaced",
				&f, 6);
		del(6);
	}
	log_test("flowtable: a FIN takes its connection to the stack, both ways, until its rules go");

	/* A FIN the gate sends to the stack while the connection's rule is
	 * in flight marks the connection too: the flowtable tears the flow
	 * down there, before the gate lets the rule act.
	 */
	{
		struct frame fin;

		ft_conn_key = 0x5678;
		add_ft(route_only, 1, "id=8 prio=1 dev=%d dst_ip=10.0.6.7 ip_proto=tcp action=redirect:%d",
		       IFINDEX, IFINDEX);
		ft_conn_key = 0;
		f = tcp4("10.0.6.7", 80, 0x10);
		fix_csums(&f, ETH_HLEN);
		w = ft_want(&f, NULL);
		fin = tcp4("10.0.6.7", 80, 0x11);
		fix_csums(&fin, ETH_HLEN);
		gate_set(XDP_FLOW_GATE_CLOSED + 1);
		expect_ft_stack("gated: ACK", &f, 8);
		gate_set(XDP_FLOW_GATE_OPEN);
		expect_ft("gate open: ACK", &f, 8, &w);
		gate_set(XDP_FLOW_GATE_CLOSED + 1);
		expect_ft_stack("gated: FIN", &fin, 8);
		gate_set(XDP_FLOW_GATE_OPEN);
		expect_ft_stack("gate open: ACK after the gated FIN", &f, 8);
		del(8);
		/* closed: no helper answers */
		ft_conn_key = 0x5679;
		add_ft(route_only, 1, "id=8 prio=1 dev=%d dst_ip=10.0.6.7 ip_proto=tcp action=redirect:%d",
		       IFINDEX, IFINDEX);
		ft_conn_key = 0;
		expect_ft("another connection: ACK", &f, 8, &w);
		gate_set(XDP_FLOW_GATE_CLOSED);
		expect_ft_stack("gate closed: FIN", &fin, 8);
		gate_set(XDP_FLOW_GATE_OPEN);
		expect_ft_stack("gate open: ACK after the FIN at the closed gate",
				&f, 8);
		del(8);
	}
	log_test("flowtable: a FIN the gate holds back (limit or closed) takes its connection to the stack too");

	/* what the helper refuses */
	{
		struct xdp_flow_action nat_first[] = { ft_port(false, 1) };
		struct xdp_flow_action no_mtu[] = { ft_route(0) };
		struct xdp_flow_action ports_none[] = { ft_route(1500),
							ft_port(false, 1) };

		ports_none[1].ft_ports.which = 0;
		if (add_ft(nat_first, 1, "id=5 prio=1 dev=%d action=redirect:%d",
			   IFINDEX, IFINDEX) != -EINVAL)
			fail("NAT without ft_route first accepted");
		if (add_ft(no_mtu, 1, "id=5 prio=1 dev=%d action=redirect:%d",
			   IFINDEX, IFINDEX) != -EINVAL)
			fail("ft_route without an MTU accepted");
		if (add_ft(ports_none, 2, "id=5 prio=1 dev=%d action=redirect:%d",
			   IFINDEX, IFINDEX) != -EINVAL)
			fail("ft_ports without a port accepted");
	}
	log_test("flowtable: rules out of order or without their values are refused");
	del_all();
}

/* @f (untagged) in a PPPoE session @sid: the header after the addresses. */
static struct frame pppoe_wrap(const struct frame *f, __u16 sid)
{
	struct frame w;
	__u16 type = f->b[12] << 8 | f->b[13];

	eth(&w, f->b, f->b + 6, 0x8864);
	put(&w, "\x11\x00", 2);
	put16(&w, sid);
	put16(&w, f->len - ETH_HLEN + 2);
	put16(&w, type == ETH_P_IPV6 ? 0x0057 : 0x0021);
	put(&w, f->b + ETH_HLEN, f->len - ETH_HLEN);
	return w;
}

/*
 * Runs @f (its packet at @noff) that rule @id forwards: a redirect, counted
 * with the packet's bytes (@bytes), leaving as @want (packet at @wnoff),
 * every byte equal but the checksums, whose residues stay.
 */
static void expect_ft_encap(const char *what, const struct frame *f,
			    size_t noff, __u32 id, __u64 bytes,
			    const struct frame *want, size_t wnoff)
{
	struct xdp_flow_stats before = stats(id), after;
	struct frame out, a, b;
	int got;

	got = run_out(f, &out);
	after = stats(id);
	if (got != XDP_REDIRECT) {
		fail("%s: verdict %s (%d), expected REDIRECT", what,
		     verdict_name(got), got);
		return;
	}
	if (after.packets - before.packets != 1 ||
	    after.bytes - before.bytes != bytes)
		fail("%s: counted %llu packets, %llu bytes, not 1 and %llu",
		     what, (unsigned long long)(after.packets - before.packets),
		     (unsigned long long)(after.bytes - before.bytes),
		     (unsigned long long)bytes);
	if (out.len != want->len) {
		fail("%s: %zu bytes left, not %zu", what, out.len, want->len);
		return;
	}
	a = out;
	b = *want;
	clear_csums(&a, wnoff);
	clear_csums(&b, wnoff);
	if (memcmp(a.b, b.b, a.len))
		fail("%s: the frame that left differs from the software path's",
		     what);
	if (l4_sum(&out, wnoff) != l4_sum(f, noff))
		fail("%s: transport checksum residue changed", what);
}

/*
 * PPPoE, as a router with a PPPoE uplink has it: the flowtable pushes the
 * session's header on the way out (the offer's PPPOE_PUSH) and the module
 * adds the pop the offer leaves out for the way in, whose rule matches the
 * session. Frames of any other session, and plain frames, are not the
 * rule's; a PPPoE frame goes nowhere but through a flowtable's rule. The
 * TC hook leaves PPPoE to the stack (the module does not offer it there).
 */
static void test_pppoe(void)
{
	struct xdp_flow_action in[] = {
		ft_route(1500), ft_addr(true, "10.0.1.2"),
		{ .id = XDP_FLOW_ACTION_PPPOE_POP },
	};
	struct xdp_flow_action out4[] = {
		ft_route(1492), ft_addr(false, "192.0.2.1"),
		{ .id = XDP_FLOW_ACTION_PPPOE_PUSH },
	};
	struct xdp_flow_action out6[] = {
		ft_route(1492), { .id = XDP_FLOW_ACTION_PPPOE_PUSH },
	};
	struct xdp_flow_action small_mtu[] = {
		ft_route(20), { .id = XDP_FLOW_ACTION_PPPOE_POP },
	};
	struct frame f, p, w, pw;

	out4[2].pppoe_sid = htons(0x1234);
	out6[1].pppoe_sid = htons(0x1234);

	/* in: the session's frames lose the header, after DNAT */
	add_ft(in, 3, "id=1 prio=1 dev=%d vlan_tpid=0 pppoe_sid=0x1234 ppp_proto=ip dst_ip=192.0.2.1 ip_proto=udp action=redirect:%d",
	       IFINDEX, IFINDEX);
	f = udp4("198.51.100.7", "192.0.2.1", 53, 40000);
	fix_csums(&f, ETH_HLEN);
	p = pppoe_wrap(&f, 0x1234);
	w = ft_want(&f, NULL);
	memcpy(w.b + ETH_HLEN + 16, "\x0a\x00\x01\x02", 4);
	fix_csums(&w, ETH_HLEN);
	if (tc_hook) {
		expect_ft_stack("PPPoE in", &p, 1);
	} else {
		/* the flowtable counts the packet without the header */
		expect_ft_encap("PPPoE in: pop, DNAT, TTL - 1", &p, ETH_HLEN + 8,
				1, f.len - ETH_HLEN, &w, ETH_HLEN);
	}
	expect_ft_stack("PPPoE in, another session", (pw = pppoe_wrap(&f, 0x1235), &pw), 1);
	expect_ft_stack("the same packet outside the session", &f, 1);
	pw = p;
	pw.b[ETH_HLEN] = 0x12;
	expect_ft_stack("PPPoE version 2", &pw, 1);
	pw = p;
	pw.b[ETH_HLEN + 6] = 0x00;
	pw.b[ETH_HLEN + 7] = 0x57;
	expect_ft_stack("IPv4 labelled as IPv6 by PPP", &pw, 1);
	add_ft(small_mtu, 2, "id=2 prio=1 dev=%d vlan_tpid=0 pppoe_sid=0x1234 ppp_proto=ip dst_ip=192.0.2.9 ip_proto=udp action=redirect:%d",
	       IFINDEX, IFINDEX);
	f = udp4("198.51.100.7", "192.0.2.9", 53, 40000);
	fix_csums(&f, ETH_HLEN);
	p = pppoe_wrap(&f, 0x1234);
	expect_ft_stack("PPPoE in, over the MTU", &p, 2);

	/* out: the header pushed, its length and PPP protocol right */
	add_ft(out4, 3, "id=3 prio=1 dev=%d vlan_tpid=0 pppoe_sid=0/0xffff ppp_proto=0/0xffff src_ip=10.0.1.2 ip_proto=udp action=redirect:%d",
	       IFINDEX, IFINDEX);
	f = udp4("10.0.1.2", "198.51.100.7", 40000, 53);
	fix_csums(&f, ETH_HLEN);
	w = ft_want(&f, NULL);
	memcpy(w.b + ETH_HLEN + 12, "\xc0\x00\x02\x01", 4);
	fix_csums(&w, ETH_HLEN);
	w = pppoe_wrap(&w, 0x1234);
	if (tc_hook)
		expect_ft_stack("PPPoE out", &f, 3);
	else
		expect_ft_encap("PPPoE out: SNAT, TTL - 1, push", &f, ETH_HLEN,
				3, f.len - ETH_HLEN, &w, ETH_HLEN + 8);
	p = pppoe_wrap(&f, 0x1234);
	expect_ft_stack("a PPPoE frame of an outgoing flow", &p, 3);

	add_ft(out6, 2, "id=4 prio=1 dev=%d vlan_tpid=0 pppoe_sid=0/0xffff ppp_proto=0/0xffff dst_ip=2001:db8:99::1 ip_proto=udp action=redirect:%d",
	       IFINDEX, IFINDEX);
	f = udp6("2001:db8:1::2", "2001:db8:99::1", 53);
	fix_csums(&f, ETH_HLEN);
	w = pppoe_wrap((pw = ft_want(&f, NULL), &pw), 0x1234);
	if (tc_hook)
		expect_ft_stack("PPPoE out, IPv6", &f, 4);
	else
		expect_ft_encap("PPPoE out, IPv6: hop limit - 1, push", &f,
				ETH_HLEN, 4, f.len - ETH_HLEN, &w,
				ETH_HLEN + 8);
	del_all();

	/* A rule of TC's that would see the inner packet: the stack's. */
	add("id=5 prio=1 dev=%d eth_type=ipv4 dst_ip=192.0.2.1 action=drop",
	    IFINDEX);
	f = udp4("198.51.100.7", "192.0.2.1", 53, 40000);
	fix_csums(&f, ETH_HLEN);
	p = pppoe_wrap(&f, 0x1234);
	expect_ft_stack("PPPoE frame that a drop rule of TC's matches", &p, 5);
	del_all();
	log_test("flowtable: PPPoE pop on the way in, push on the way out, only for the rule's session");

	/* A VLAN flow: the flowtable keys the tag's whole TCI. */
	{
		struct xdp_flow_action pop[] = {
			ft_route(1500), { .id = XDP_FLOW_ACTION_VLAN_POP },
		};
		struct frame t;

		add_ft(pop, 2, "id=6 prio=1 dev=%d vlan_id=10 vlan_prio=0 dst_ip=10.0.8.8 ip_proto=udp action=redirect:%d",
		       IFINDEX, IFINDEX);
		f = udp4("10.0.1.2", "10.0.8.8", 1000, 2000);
		fix_csums(&f, ETH_HLEN);
		w = ft_want(&f, NULL);
		eth(&t, mac_b, mac_a, ETH_P_8021Q);
		vlan(&t, 10, ETH_P_IP);
		put(&t, f.b + ETH_HLEN, f.len - ETH_HLEN);
		expect_ft_encap("VLAN 10 in, popped", &t, ETH_HLEN + 4, 6,
				f.len - ETH_HLEN, &w, ETH_HLEN);
		t.b[14] |= 0x10;	/* DEI */
		expect_ft_stack("VLAN 10 with DEI", &t, 6);
		t.b[14] = 0x60;		/* priority 3 */
		expect_ft_stack("VLAN 10 with priority 3", &t, 6);
		expect_ft_stack("the flow's packet untagged", &f, 6);
		del_all();
	}
	log_test("flowtable: a VLAN flow takes its tag's whole TCI (priority 0, no DEI), and pops it");

	/* what the helper refuses */
	if (add_ft(in, 3, "id=1 prio=1 dev=%d vlan_tpid=0 dst_ip=192.0.2.1 action=redirect:%d",
		   IFINDEX, IFINDEX) != -EINVAL)
		fail("PPPoE pop of frames not matched as PPPoE accepted");
	if (add_ft(out4, 3, "id=1 prio=1 dev=%d src_ip=10.0.1.2 action=redirect:%d",
		   IFINDEX, IFINDEX) != -EINVAL)
		fail("PPPoE push on frames that may be tagged accepted");
	{
		struct xdp_flow_action pop_first[] = {
			{ .id = XDP_FLOW_ACTION_PPPOE_POP },
		};

		if (add_ft(pop_first, 1, "id=1 prio=1 dev=%d vlan_tpid=0 pppoe_sid=1 ppp_proto=ip action=redirect:%d",
			   IFINDEX, IFINDEX) != -EINVAL)
			fail("PPPoE pop outside a flowtable's rule accepted");
	}
	del_all();
	log_test("flowtable: PPPoE actions outside a flowtable's rule, or on frames not known untagged or PPPoE, are refused");
}

/* A shield, as the module sends one: from prio 5 on, IFINDEX's frames go
 * to the stack.
 */
static const struct xdp_flow_rule shield_rule = {
	.id = XDP_FLOW_SHIELD_ID_BASE,
	.flags = XDP_FLOW_RULE_F_SOFTWARE | XDP_FLOW_RULE_F_SHIELD,
	.order = 5ull << 32,
	.key.ifindex = IFINDEX,
	.mask.ifindex = 0xffffffff,
	.nr_actions = 1,
	.actions[0].id = XDP_FLOW_ACTION_PASS,
};

static void test_full(void)
{
	/* Source port 0xffff: masked by any of 1..255 it is never 0. */
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 0xffff, 2);
	/* Rules get all masks but one: the shields' is kept free. */
	const unsigned int most = XDP_FLOW_MAX_MASKS - 1;
	struct xdp_flow_rule no_flag;
	struct xdp_flow_stats st;
	char msg[UMH_MSG_LEN];
	struct timespec t0, t1;
	int i, err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* 255 distinct masks: src port masks 1..255, key 0. */
	for (i = 0; i < (int)most; i++)
		if (add("id=%d prio=%d dev=%d ip_proto=udp src_port=0/%d action=drop",
			i + 10, i + 10, IFINDEX, i + 1))
			break;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# %d masks added in %.1f ms (one mask list swap each)\n", i,
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (table_mask_count(tbl) != most)
		fail("%u masks, expected %u", table_mask_count(tbl), most);
	err = add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	if (err != -ENOSPC)
		fail("mask %u gave %d, expected -ENOSPC", most + 1, err);
	if (table_rule_count(tbl) != most ||
	    table_stats(tbl, 1, &st, msg, sizeof(msg)) != -ENOENT)
		fail("the refused rule left something behind");
	expect("refused rule not in XDP", &f, XDP_PASS, NO_RULE, 0, 0);
	/* A rule in an existing mask still fits. */
	if (add("id=2 prio=1 dev=%d ip_proto=udp src_port=1/1 action=drop",
		IFINDEX))
		fail("rule in an existing mask refused");
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	expect("rule in existing mask", &f, XDP_DROP, 2, 1, tcb(&f));
	log_test("mask table full: -ENOSPC, nothing changed");
	/* A shield still fits, and from its order on frames go to TC. Source
	 * port 2 meets rule 10 (prio 10, src_port 0/1), not rule 2.
	 */
	f = udp4("10.9.9.9", "10.0.0.1", 2, 2);
	expect("a filler drops before the shield", &f, XDP_DROP, 10, 1, tcb(&f));
	if (table_rule_add(tbl, &shield_rule, msg, sizeof(msg)))
		fail("the shield did not fit in the full tables: %s", msg);
	expect("the shield passes what a later rule would drop", &f, XDP_PASS,
	       10, 0, 0);
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	expect("an earlier rule acts before the shield", &f, XDP_DROP, 2, 1,
	       tcb(&f));
	no_flag = shield_rule;
	no_flag.flags = XDP_FLOW_RULE_F_SOFTWARE;
	if (table_rule_add(tbl, &no_flag, msg, sizeof(msg)) != -EINVAL)
		fail("a shield id without the shield flag was taken");
	del(XDP_FLOW_SHIELD_ID_BASE);
	log_test("full masks: a shield still fits and hands later prios to TC");
	del_all();
	if (table_mask_count(tbl) || table_rule_count(tbl))
		fail("%u masks %u rules left", table_mask_count(tbl),
		     table_rule_count(tbl));
	log_test("deleting every rule empties the tables");
}

/* Restart: a new table over the same maps keeps rules and counters. */
static void test_recover(void)
{
	struct frame f1 = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	struct frame f2 = udp4("10.9.9.9", "10.0.0.2", 1, 2);
	char msg[UMH_MSG_LEN];

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	add("id=2 prio=1 dev=%d dst_ip=10.0.0.2 action=drop", IFINDEX);
	expect("before", &f1, XDP_DROP, 1, 1, tcb(&f1));

	table_free(tbl);
	tbl = table_new(skel);
	if (!tbl || table_recover(tbl)) {
		fail("recover failed");
		log_test("restart: rules recovered from the maps");
		exit(1);
	}
	if (table_rule_count(tbl) != 2)
		fail("%u rules recovered", table_rule_count(tbl));
	expect("old state forwards", &f2, XDP_DROP, 2, 1, tcb(&f2));
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	if (stats(1).packets != 1)
		fail("replayed rule lost its counters");
	if (table_sync(tbl, msg, sizeof(msg)))
		fail("sync: %s", msg);
	expect("replayed rule", &f1, XDP_DROP, 1, 1, tcb(&f1));
	expect("rule not replayed is gone", &f2, XDP_PASS, NO_RULE, 0, 0);
	if (table_rule_count(tbl) != 1)
		fail("%u rules after sync", table_rule_count(tbl));
	log_test("restart: rules recovered, replay keeps counters, sync drops the rest");
	del_all();
}

/* The checks above must be able to fail: feed them wrong expectations. */
static void test_negative_control(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	bool caught_verdict, caught_count;

	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	caught_verdict = !expect("wrong verdict", &f, XDP_PASS, 1, 1, tcb(&f));
	group_failed = 0;
	caught_count = !expect("wrong count", &f, XDP_DROP, 1, 2, tcb(&f));
	group_failed = 0;
	if (!caught_verdict)
		fail("a wrong expected verdict went unnoticed");
	if (!caught_count)
		fail("a wrong expected count went unnoticed");
	log_test("negative control: wrong expectations are caught");
	del_all();
}

static void measure(void)
{
	struct frame f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	__u32 ns_hit = 0, ns_miss = 0, ns_empty = 0;

	run_frame(&f, 1000000, &ns_empty);
	add("id=1 prio=1 dev=%d dst_ip=10.0.0.1 action=drop", IFINDEX);
	if (run_frame(&f, 1000000, &ns_hit) != XDP_DROP)
		fail("hit not dropped");
	f = udp4("10.9.9.9", "10.0.0.2", 1, 2);
	run_frame(&f, 1000000, &ns_miss);
	printf("# %s1 mask: %u ns/packet on a hit (drop), %u ns on a miss; %u ns with no masks\n",
	       tc_hook ? "tc hook: " : "", ns_hit, ns_miss, ns_empty);
	log_test("BPF_PROG_TEST_RUN repeat (timing, see the comment line)");
	del_all();
}

/* How fast rules go in and out when their mask exists already. */
enum prio_order { PRIO_ASC, PRIO_DESC, PRIO_SHUFFLED };

/* Adds @n rules of one mask, prio in @order; us per add. */
static double insert_us(int n, enum prio_order order)
{
	struct timespec t0, t1;
	int i, prio;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		/* 7919 is prime, so i * 7919 mod n visits every prio once. */
		prio = order == PRIO_DESC ? n - i :
		       order == PRIO_SHUFFLED ? (int)((long)i * 7919 % n) + 1 :
		       i + 1;
		if (add("id=%d prio=%d dev=%d dst_ip=10.%d.%d.%d action=drop",
			i, prio, IFINDEX, i >> 16, (i >> 8) & 0xff, i & 0xff))
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (table_rule_count(tbl) != (unsigned int)n)
		fail("%u rules, not %d", table_rule_count(tbl), n);
	return ((t1.tv_sec - t0.tv_sec) * 1e9 +
		(t1.tv_nsec - t0.tv_nsec)) / 1e3 / n;
}

static void measure_insert(void)
{
	struct timespec t1, t2;
	double asc, desc, shuffled;
	int n = 10000;

	desc = insert_us(n, PRIO_DESC);
	del_all();
	shuffled = insert_us(n, PRIO_SHUFFLED);
	del_all();
	asc = insert_us(n, PRIO_ASC);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	del_all();
	clock_gettime(CLOCK_MONOTONIC, &t2);
	printf("# %d rules in one mask: %.1f us per add (%.1f in descending prio, %.1f shuffled), %.1f us per delete\n",
	       n, asc, desc, shuffled,
	       ((t2.tv_sec - t1.tv_sec) * 1e9 + (t2.tv_nsec - t1.tv_nsec)) /
	       1e3 / n);
	if (table_rule_count(tbl))
		fail("%u rules left", table_rule_count(tbl));
	log_test("10000 rules added in each prio order and deleted (timing, see the comment line)");
}

/* The fixtures' program and tables, kept while a case loads its own. */
struct fixtures {
	struct xdp_flow_bpf *skel;
	struct table *tbl;
	int prog_fd;
	struct xdp_flow_bpf *prog_inst;
};

/* Frees the case's own tables and program, and puts @keep back. */
static void own_tables_end(const struct fixtures *keep)
{
	table_free(tbl);
	if (prog_inst && prog_inst != keep->prog_inst)
		dp_close(prog_inst);
	if (skel)
		dp_close(skel);
	skel = keep->skel;
	tbl = keep->tbl;
	prog_fd = keep->prog_fd;
	prog_inst = keep->prog_inst;
}

/*
 * Capacity at its most: a flow table sized for XDP_FLOW_MAX_FLOWS (the
 * module's max_flows at its maximum) takes that many entries, 64 per rule
 * (two port ranges of 8 prefixes each); the next rule is refused
 * (-ENOSPC) while a shield still fits, and a frame meets the last rule.
 * On maps of its own, so the fixtures' tables stay as they are.
 */
static void test_capacity(void)
{
	struct fixtures keep = { skel, tbl, prog_fd, prog_inst };
	const unsigned int n = XDP_FLOW_MAX_FLOWS / 64;
	char msg[UMH_MSG_LEN], dst[32];
	struct timespec t0, t1;
	struct frame f;
	unsigned int i;
	int err;

	skel = open_dp(XDP_FLOW_MAX_FLOWS + XDP_FLOW_MAX_SHIELDS,
		       XDP_FLOW_MAX_RULES);
	tbl = skel ? table_new(skel) : NULL;
	if (!tbl || table_recover(tbl) ||
	    table_set_limits(tbl, XDP_FLOW_MAX_MASKS - 1, XDP_FLOW_MAX_FLOWS)) {
		fail("cannot set up tables for %u flow entries", XDP_FLOW_MAX_FLOWS);
		goto out;
	}
	if (use_hook(DP_HOOK_XDP)) {
		fail("cannot load the XDP program");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if (add("id=%u prio=1 dev=%d dst_ip=10.%u.%u.%u ip_proto=udp src_range=1-255 dst_range=1-255 action=drop",
			i, IFINDEX, 100 + (i >> 16), (i >> 8) & 0xff, i & 0xff))
			break;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# %u flow entries (%u rules of 64) added in %.1f s\n", i * 64,
	       i, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (i != n) {
		fail("only %u of %u rules of 64 flow entries fit", i, n);
		goto out;
	}
	--i;
	snprintf(dst, sizeof(dst), "10.%u.%u.%u", 100 + (i >> 16),
		 (i >> 8) & 0xff, i & 0xff);
	f = udp4("10.9.9.9", dst, 255, 128);
	expect("the last rule's last entry", &f, XDP_DROP, i, 1, tcb(&f));
	err = add("id=%u prio=1 dev=%d dst_ip=10.200.0.1 action=drop", n,
		  IFINDEX);
	if (err != -ENOSPC)
		fail("rule past %u flow entries gave %d, expected -ENOSPC",
		     XDP_FLOW_MAX_FLOWS, err);
	if (table_rule_count(tbl) != n)
		fail("%u rules, expected %u", table_rule_count(tbl), n);
	if (table_rule_add(tbl, &shield_rule, msg, sizeof(msg)))
		fail("a shield does not fit in a full table: %s", msg);
	expect("the last rule, before the shield", &f, XDP_DROP, i, 1, tcb(&f));
out:
	log_test("1,047,552 flow entries (max_flows at its most), then -ENOSPC; a shield still fits");
	own_tables_end(&keep);
}

/*
 * Fewer rule ids (max_rules at its least): the tables by id are sized for
 * them, the shields take the top XDP_FLOW_MAX_SHIELDS, and ids beyond are
 * refused.
 */
static void test_max_rules(void)
{
	struct fixtures keep = { skel, tbl, prog_fd, prog_inst };
	const __u32 base = XDP_FLOW_MIN_RULES - XDP_FLOW_MAX_SHIELDS;
	struct xdp_flow_rule shield = shield_rule;
	char msg[UMH_MSG_LEN];
	struct frame f;
	int err;

	skel = open_dp(XDP_FLOW_DEFAULT_FLOWS + XDP_FLOW_MAX_SHIELDS,
		       XDP_FLOW_MIN_RULES);
	tbl = skel ? table_new(skel) : NULL;
	if (!tbl || table_recover(tbl)) {
		fail("cannot set up tables for %u rule ids", XDP_FLOW_MIN_RULES);
		goto out;
	}
	if (use_hook(DP_HOOK_XDP)) {
		fail("cannot load the XDP program");
		goto out;
	}
	if (bpf_map__max_entries(skel->maps.xf_counters) !=
	    XDP_FLOW_MIN_RULES / XDP_FLOW_COUNTER_CHUNK)
		fail("counters sized for %u chunks",
		     bpf_map__max_entries(skel->maps.xf_counters));
	f = udp4("10.9.9.9", "10.0.0.1", 1, 2);
	if (add("id=%u prio=1 dev=%d dst_ip=10.0.0.1 action=drop", base - 1,
		IFINDEX))
		goto out;
	expect("the highest rule id", &f, XDP_DROP, base - 1, 1, tcb(&f));
	err = add("id=%u prio=1 dev=%d dst_ip=10.0.0.2 action=drop", base,
		  IFINDEX);
	if (err != -EINVAL)
		fail("a rule with a shield's id gave %d, expected -EINVAL", err);
	err = add("id=%u prio=1 dev=%d dst_ip=10.0.0.2 action=drop",
		  XDP_FLOW_MIN_RULES, IFINDEX);
	if (err != -EINVAL)
		fail("rule id %u gave %d, expected -EINVAL", XDP_FLOW_MIN_RULES,
		     err);
	shield.id = base;
	if (table_rule_add(tbl, &shield, msg, sizeof(msg)))
		fail("the first shield id %u refused: %s", base, msg);
out:
	log_test("2048 rule ids (max_rules at its least): tables sized for them, shields on top, ids beyond refused");
	own_tables_end(&keep);
}

/* Chunks of counters in xf_counters (each a map of XDP_FLOW_COUNTER_CHUNK). */
static unsigned int counter_chunks(void)
{
	int fd = bpf_map__fd(skel->maps.xf_counters);
	__u32 c, map_id;
	unsigned int n = 0;

	for (c = 0; c < bpf_map__max_entries(skel->maps.xf_counters); c++)
		n += !bpf_map_lookup_elem(fd, &c, &map_id);
	return n;
}

/*
 * Counters take per-CPU memory for the rule ids in use: chunks of
 * XDP_FLOW_COUNTER_CHUNK ids are made as rules need them (4 at least, or
 * twice those in use, at once), and freed in quiet times while there are
 * more than twice as many as rules use, plus one; a rule whose id is in a
 * new chunk counts from zero.
 */
static void test_counter_chunks(void)
{
	struct fixtures keep = { skel, tbl, prog_fd, prog_inst };
	const unsigned int many = 4 * XDP_FLOW_COUNTER_CHUNK;
	const __u32 last = many - 1;
	struct frame f = udp4("10.9.9.9", "10.1.15.255", 1, 2);
	unsigned int n;
	__u32 id;

	skel = open_dp(XDP_FLOW_DEFAULT_FLOWS + XDP_FLOW_MAX_SHIELDS,
		       8 * XDP_FLOW_COUNTER_CHUNK);
	tbl = skel ? table_new(skel) : NULL;
	if (!tbl || table_recover(tbl)) {
		fail("cannot set up tables");
		goto out;
	}
	if (use_hook(DP_HOOK_XDP)) {
		fail("cannot load the XDP program");
		goto out;
	}
	n = counter_chunks();
	if (n)
		fail("%u chunks of counters without a rule", n);
	if (add("id=0 prio=1 dev=%d src_ip=10.8.8.8 action=drop", IFINDEX))
		goto out;
	n = counter_chunks();
	if (n != 4)
		fail("%u chunks for rule 0, not 4 (made at once)", n);
	for (id = 1; id < many; id++)
		if (add("id=%u prio=2 dev=%d dst_ip=10.1.%u.%u action=drop", id,
			IFINDEX, id >> 8, id & 0xff))
			goto out;
	n = counter_chunks();
	if (n != many / XDP_FLOW_COUNTER_CHUNK)
		fail("%u chunks for rules 0-%u, not %u", n, last,
		     many / XDP_FLOW_COUNTER_CHUNK);
	expect("the rule of the last id counts", &f, XDP_DROP, last, 1,
	       tcb(&f));

	/* All but rules 0 and 1 go: rule changes free nothing; the quiet
	 * time after them leaves 3 chunks (2n+1) for 1 in use.
	 */
	for (id = 2; id < many; id++)
		del(id);
	n = counter_chunks();
	if (n != 4)
		fail("%u chunks right after the deletes, not 4", n);
	if (!table_idle_due(tbl))
		fail("no idle work with 4 chunks for 1 in use");
	table_idle(tbl);
	n = counter_chunks();
	if (n != 3)
		fail("%u chunks after the quiet time, with 1 in use: not 3", n);

	/* The last chunk was freed: a rule of its ids counts from zero. */
	if (add("id=%u prio=2 dev=%d dst_ip=10.1.15.255 action=drop", last,
		IFINDEX))
		goto out;
	if (stats(last).packets)
		fail("rule %u in a new chunk: %llu packets, not 0", last,
		     (unsigned long long)stats(last).packets);
	expect("a rule in a new chunk counts from zero", &f, XDP_DROP, last,
	       1, tcb(&f));
	/* Every rule gone: one chunk is kept. */
	del_all();
	table_idle(tbl);
	n = counter_chunks();
	if (n != 1 || table_idle_due(tbl))
		fail("%u chunks after every rule went and the quiet time, not 1", n);
out:
	log_test("counters: chunks of 1024 ids made as rules need them; the quiet time after changes frees down to 2n+1 for n in use");
	own_tables_end(&keep);
}

/* Every fixture case; each leaves the tables empty. */
static void test_all(void)
{
	test_negative_control();
	test_ipv4();
	test_ipv6();
	test_ports();
	test_port_ranges();
	test_eth_vlan_arp();
	test_prio(false);
	test_prio(true);
	test_prio_in_place();
	test_gate();
	test_egress();
	test_mirror();
	test_ingress();
	test_tunnel_set();
	test_tunnel_decap();
	test_tunnel_meta();
	test_same_key();
	test_emc();
	test_ft_sig_match();
	test_ft_buckets();
	test_ft_room();
	test_race();
	test_software();
	test_malformed_frames();
	test_options_frags();
	test_flowtable();
	test_pppoe();
	test_replace();
	test_invalid();
	test_recover();
}

int main(int argc, char **argv)
{
	log_init(LOG_DEST_STDERR, false);
	skel = open_dp(XDP_FLOW_DEFAULT_FLOWS + XDP_FLOW_MAX_SHIELDS,
		       XDP_FLOW_MAX_RULES);
	if (!skel) {
		printf("not ok - load the XDP program # %s\n", strerror(errno));
		return 1;
	}
	if (use_hook(DP_HOOK_XDP)) {
		printf("not ok - load the XDP program # %s\n", strerror(errno));
		return 1;
	}
	tbl = table_new(skel);
	if (!tbl || table_recover(tbl)) {
		printf("not ok - table setup\n");
		return 1;
	}
	printf("ok - load the XDP program and the tables\n");

	test_all();
	if (argc < 2 || strcmp(argv[1], "--quick")) {
		test_full();
		test_capacity();
	}
	test_max_rules();
	test_counter_chunks();
	measure();

	/* The same cases through the TC hook's program (same maps). */
	tc_hook = true;
	dp_close(prog_inst);
	if (use_hook(DP_HOOK_TC)) {
		printf("not ok - load the TC hook's program # %s\n",
		       strerror(errno));
		return 1;
	}
	test_all();
	measure();
	tc_hook = false;
	if (argc < 2 || strcmp(argv[1], "--quick"))
		measure_insert();

	table_free(tbl);
	tun_inject__destroy(inject);
	dp_close(prog_inst);
	dp_close(skel);
	return failures ? 1 : 0;
}
