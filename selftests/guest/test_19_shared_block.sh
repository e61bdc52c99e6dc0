#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A shared block (`tc qdisc add dev X ingress_block 7 clsact`) over veth0
# and veth2, both enabled: every rule of the block runs in XDP on both
# devices, and `indev` limits a rule to one of them. 10.0.9.x is routed
# nowhere, so a frame to it that reaches veth_b (xfb) was redirected.

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
M=15
BLOCK=7

trap xf_test_cleanup EXIT

xf_test_setup || exit 1

# block_stat <pref> <field>: like tc_stat, for a rule of the block.
block_stat()
{
	tc -s -j filter show block $BLOCK ingress pref "$1" |
		jq -r "[.[] | select(.options != null)][0] |
		       (.options.actions[0].stats.$2 //
			(if \"$2\" | startswith(\"hw_\") then 0 else empty end))"
}

block_in_hw()
{
	tc -j filter show block $BLOCK ingress pref "$1" |
		jq -r '[.[] | select(.options != null)][0].options.in_hw // false'
}

RET=0
for dev in veth0 veth2; do
	xf_enable_dev $dev && wait_dev_attached $dev 10
	check_err $? "xdp-flow enable dev $dev failed or never attached"
	tc qdisc add dev $dev ingress_block $BLOCK clsact
	check_err $? "tc qdisc add dev $dev ingress_block $BLOCK clsact failed"
done
tc filter add block $BLOCK ingress pref 1 protocol ip flower \
	dst_ip 10.0.9.9 action mirred egress redirect dev veth1
check_err $? "tc filter add block $BLOCK (pref 1) failed"
tc filter add block $BLOCK ingress pref 2 protocol ip flower indev veth0 \
	dst_ip 10.0.9.8 action mirred egress redirect dev veth1
check_err $? "tc filter add block $BLOCK (pref 2, indev veth0) failed"
for p in 1 2; do
	[ "$(block_in_hw $p)" = true ]
	check_err $? "rule pref $p of block $BLOCK is not in_hw"
done
log_test "shared block $BLOCK over veth0 and veth2: its rules are in_hw"

RET=0
b0=$(udp_count xfb veth_b)
check_err $? "cannot read the counters"
send_udp xfa 10.0.9.9 $N && send_udp xfc 10.0.9.9 $M
check_err $? "send_udp failed"
b1=$(wait_value $((b0 + N + M)) 5 udp_count xfb veth_b)
[ "$b1" = $((b0 + N + M)) ]
check_err $? "veth_b received $((b1 - b0)) of $((N + M)) frames redirected from veth0 and veth2"
hw=$(wait_value $((N + M)) 5 block_stat 1 hw_packets)
[ "$hw" = $((N + M)) ]
check_err $? "the block's rule counted $hw hardware packets, not $((N + M))"
pk=$(block_stat 1 packets)
[ "$pk" = $((N + M)) ]
check_err $? "the block's rule counted $pk packets in all, not $((N + M))"
log_test "one rule of the block redirects in XDP from both devices ($N + $M hardware packets)"

RET=0
send_udp xfa 10.0.9.8 $N && send_udp xfc 10.0.9.8 $M
check_err $? "send_udp failed"
b2=$(wait_value $((b1 + N)) 5 udp_count xfb veth_b)
settle
b2=$(udp_count xfb veth_b)
[ "$b2" = $((b1 + N)) ]
check_err $? "veth_b received $((b2 - b1)) frames for the indev veth0 rule, not $N"
hw=$(block_stat 2 hw_packets)
[ "$hw" = $N ]
check_err $? "the indev veth0 rule counted $hw hardware packets, not $N"
pk=$(block_stat 2 packets)
[ "$pk" = $N ]
check_err $? "the indev veth0 rule counted $pk packets in all, not $N"
log_test "indev veth0 on the shared block: $N frames from veth0 redirected in XDP, none of $M from veth2"

exit $EXIT_STATUS
