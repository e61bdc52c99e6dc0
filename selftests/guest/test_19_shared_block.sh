#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A shared block (`tc qdisc add dev X ingress_block 7 clsact`) over xfv0
# and xfv2, both enabled: every rule of the block runs in XDP on both
# devices, and `indev` limits a rule to one of them. 10.0.9.x is routed
# nowhere, so a frame to it that reaches veth_b (xfb) was redirected.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
M=15
BLOCK=7

xf_test_begin

# block_stat <pref> <field>: like tc_stat, for a rule of the block.
# shellcheck disable=SC2317  # called by counters_expect (fn:block_stat/...)
block_stat()
{
	tc -s -j filter show block "$BLOCK" ingress pref "$1" |
		jq -r "[.[] | select(.options != null)][0] |
		       (.options.actions[0].stats.$2 //
			(if \"$2\" | startswith(\"hw_\") then 0 else empty end))"
}

block_in_hw()
{
	tc -j filter show block "$BLOCK" ingress pref "$1" |
		jq -r '[.[] | select(.options != null)][0].options.in_hw // false'
}

RET=0
for dev in xfv0 xfv2; do
	xf_enable_dev $dev && wait_dev_attached $dev 10
	check_err $? "xdp-flow enable dev $dev failed or never attached"
	tc qdisc add dev $dev ingress_block $BLOCK clsact
	check_err $? "tc qdisc add dev $dev ingress_block $BLOCK clsact failed"
done
tc filter add block $BLOCK ingress pref 1 protocol ip flower \
	dst_ip 10.0.9.9 action mirred egress redirect dev xfv1
check_err $? "tc filter add block $BLOCK (pref 1) failed"
tc filter add block $BLOCK ingress pref 2 protocol ip flower indev xfv0 \
	dst_ip 10.0.9.8 action mirred egress redirect dev xfv1
check_err $? "tc filter add block $BLOCK (pref 2, indev xfv0) failed"
for p in 1 2; do
	[ "$(block_in_hw $p)" = true ]
	check_err $? "rule pref $p of block $BLOCK is not in_hw"
done
log_test "shared block $BLOCK over xfv0 and xfv2: its rules are in_hw"

RET=0
counters_snap udp:xfb/veth_b+$((N + M)) \
	fn:block_stat/1/hw_packets=$((N + M)) fn:block_stat/1/packets=$((N + M))
send_udp xfa 10.0.9.9 $N && send_udp xfc 10.0.9.9 $M
check_err $? "send_udp failed"
counters_expect
log_test "one rule of the block redirects in XDP from both devices ($N + $M hardware packets)"

RET=0
counters_snap udp:xfb/veth_b+$N \
	fn:block_stat/2/hw_packets=$N fn:block_stat/2/packets=$N
send_udp xfa 10.0.9.8 $N && send_udp xfc 10.0.9.8 $M
check_err $? "send_udp failed"
counters_expect
log_test "indev xfv0 on the shared block: $N frames from xfv0 redirected in XDP, none of $M from xfv2"

exit $EXIT_STATUS
