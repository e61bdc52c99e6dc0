#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rig itself, without xdp_flow: the standard topology forwards, a
# software flower drop rule drops and counts, deleting it lets traffic
# through again, and native XDP programs attach to veth (a pass program lets
# traffic through; a redirect program's frames reach the peer of the
# device it redirects to, which needs the GRO the topology turns on).
# This proves netns, veth, cls_flower, act_gact, XDP and the test helpers
# in the guest kernel.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

N=10
TMPD=$(mktemp -d /tmp/xf-rig.XXXXXX)

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup()
{
	ip link set dev xfv0 xdp off 2>/dev/null
	xf_topology_cleanup
	rm -rf "$TMPD"
}
trap cleanup EXIT

# wait_rx <ns> <dev> <expected> [timeout_s]: poll rx_packets until it
# reaches <expected>; prints the last value.
wait_rx()
{
	local t=$((${4:-5} * 10)) v

	while :; do
		v=$(ns_rx_packets "$1" "$2") || return 1
		[ "$v" -ge "$3" ] && break
		t=$((t - 1))
		[ $t -le 0 ] && break
		sleep 0.1
	done
	echo "$v"
}

RET=0
xf_modprobe_deps
check_err $? "modprobe of cls_flower act_gact act_mirred sch_ingress veth failed"
xf_veth_topology
check_err $? "xf_veth_topology failed"
log_test "standard topology (xfa, xfb, xfc; xfv0-2)" || exit 1

RET=0
b0=$(ns_rx_packets xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp xfa -> 10.0.2.1 failed"
b1=$(wait_rx xfb veth_b $((b0 + N)))
[ "$b1" -eq $((b0 + N)) ]
check_err $? "veth_b received $((b1 - b0)) of $N packets"
c0=$(ns_rx_packets xfc veth_c)
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp xfa -> 10.0.3.1 failed"
c1=$(wait_rx xfc veth_c $((c0 + N)))
[ "$c1" -eq $((c0 + N)) ]
check_err $? "veth_c received $((c1 - c0)) of $N packets"
a0=$(ns_rx_packets xfa veth_a)
send_udp xfc 10.0.1.1 $N
check_err $? "send_udp xfc -> 10.0.1.1 failed"
a1=$(wait_rx xfa veth_a $((a0 + N)))
[ "$a1" -ge $((a0 + N)) ]
check_err $? "veth_a received $((a1 - a0)) of $N packets"
log_test "send_udp: $N datagrams each xfa->xfb, xfa->xfc, xfc->xfa are forwarded"

RET=0
send_udp "" fd00:1::1 $N
check_err $? "send_udp root -> fd00:1::1 failed"
ip netns exec xfa ping -6 -q -c 1 -W 5 fd00:1::254 >/dev/null
check_err $? "no IPv6 between xfa and the root namespace"
log_test "IPv6 on the a link (fd00:1::/64)"

RET=0
tc qdisc add dev xfv0 clsact
check_err $? "tc qdisc add dev xfv0 clsact failed"
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add ... flower dst_ip 10.0.2.1 action drop failed"
log_test "software flower drop rule on xfv0 ingress" || exit 1

RET=0
b0=$(ns_rx_packets xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
sleep 0.5
b1=$(ns_rx_packets xfb veth_b)
[ "$b1" -eq "$b0" ]
check_err $? "$((b1 - b0)) packets reached veth_b despite the drop rule"
out=$(tc -s filter show dev xfv0 ingress)
echo "$out" | grep -Eq "Sent [0-9]+ bytes $N pkt"
check_err $? "the rule does not count $N packets: $(echo "$out" | grep Sent | tr -s ' ')"
log_test "flower drop: $N packets dropped and counted, none reaches veth_b"

RET=0
tc filter del dev xfv0 ingress pref 1
check_err $? "tc filter del failed"
b0=$(ns_rx_packets xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
b1=$(wait_rx xfb veth_b $((b0 + N)))
[ "$b1" -eq $((b0 + N)) ]
check_err $? "veth_b received $((b1 - b0)) of $N packets after the rule was deleted"
tc qdisc del dev xfv0 clsact
check_err $? "tc qdisc del failed"
log_test "after deleting the rule, $N of $N packets arrive"

# Trivial XDP programs, compiled here with no headers at all.
cat >"$TMPD/xdp.c" <<'EOF'
#define SEC(n) __attribute__((section(n), used))
struct xdp_md {
	unsigned int data, data_end, data_meta, ingress_ifindex,
		     rx_queue_index, egress_ifindex;
};
static long (*bpf_redirect)(unsigned int ifindex, unsigned long long flags) = (void *)23;

SEC("xdp") int xdp_pass(struct xdp_md *ctx)
{
	return 2;	/* XDP_PASS */
}

/* IPv4 UDP to REDIR_IFINDEX; everything else passes */
SEC("xdp") int xdp_redir(struct xdp_md *ctx)
{
	unsigned char *d = (void *)(long)ctx->data;
	unsigned char *e = (void *)(long)ctx->data_end;

	if (d + 34 > e || d[12] != 0x08 || d[13] != 0x00 || d[23] != 17)
		return 2;
	return bpf_redirect(REDIR_IFINDEX, 0);
}
char _license[] SEC("license") = "GPL";
EOF

RET=0
ifi=$(cat /sys/class/net/xfv1/ifindex)
clang -O2 -target bpf -DREDIR_IFINDEX="$ifi" -c "$TMPD/xdp.c" -o "$TMPD/xdp.o" 2>&1
check_err $? "clang -target bpf failed"
log_test "compile XDP programs with clang -target bpf" || exit 1

RET=0
ip link set dev xfv0 xdpdrv obj "$TMPD/xdp.o" sec xdp program xdp_pass 2>"$TMPD/err" ||
	ip link set dev xfv0 xdpdrv obj "$TMPD/xdp.o" sec xdp 2>"$TMPD/err"
check_err $? "ip link set dev xfv0 xdpdrv obj ... failed: $(tr '\n' ' ' <"$TMPD/err")"
ip link show dev xfv0 | grep -q 'prog/xdp id'
check_err $? "ip link shows no native XDP program on xfv0"
b0=$(ns_rx_packets xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
b1=$(wait_rx xfb veth_b $((b0 + N)))
[ "$b1" -eq $((b0 + N)) ]
check_err $? "veth_b received $((b1 - b0)) of $N packets through XDP_PASS"
ip link set dev xfv0 xdpdrv off
check_err $? "detaching the XDP program failed"
log_test "native XDP_PASS program on xfv0 attaches, traffic passes"

# The redirect program is the second one in section xdp; ip(8) loads the
# first program of a section unless told with 'program', which older
# iproute2 lacks: then skip.
RET=0
if ip link set dev xfv0 xdpdrv obj "$TMPD/xdp.o" sec xdp program xdp_redir 2>"$TMPD/err"; then
	b0=$(ns_rx_packets xfb veth_b)
	c0=$(ns_rx_packets xfc veth_c)
	send_udp xfa 10.0.3.1 $N
	check_err $? "send_udp failed"
	b1=$(wait_rx xfb veth_b $((b0 + N)))
	[ "$b1" -eq $((b0 + N)) ]
	check_err $? "veth_b received $((b1 - b0)) of $N redirected frames"
	c1=$(ns_rx_packets xfc veth_c)
	[ "$c1" -eq "$c0" ]
	check_err $? "veth_c received $((c1 - c0)) frames that were to be redirected"
	ip link set dev xfv0 xdpdrv off
	check_err $? "detaching the XDP program failed"
	log_test "XDP_REDIRECT from xfv0 into xfv1 reaches veth_b ($N of $N)"
else
	log_skip "XDP_REDIRECT from xfv0 into xfv1" \
		"ip cannot pick a program by name: $(tr '\n' ' ' <"$TMPD/err")"
fi

exit $EXIT_STATUS
