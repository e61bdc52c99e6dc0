#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A redirect whose target went away drops, as mirred does, also when a
# device of the same ifindex is there again. mirred lets go of a device
# that is unregistered or leaves the namespace; XDP redirects by ifindex,
# so the module turns the rules that redirect there into software rules.
# The rule (packets to 10.0.3.1 redirected out of xfv1 instead of routed
# out of xfv2) first runs in XDP; then xfv1 is moved to another namespace
# and back, or deleted and made again with its ifindex: TC alone drops
# every packet, so none may arrive at veth_b (or veth_c), and the rule
# counts them in software, none in hardware.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=300
NS_TMP=xf_gone

cleanup()
{
	ip netns del "$NS_TMP" 2>/dev/null
	xf_test_cleanup
}
trap cleanup EXIT

xf_test_setup || exit 1

# add_rule: the redirect at pref 1, in_hw.
add_rule()
{
	local st

	tc filter add dev xfv0 ingress pref 1 protocol ip flower \
		dst_ip 10.0.3.1 action mirred egress redirect dev xfv1
	check_err $? "tc filter add failed"
	st=$(tc_hw_state "" xfv0 1)
	[ "$st" = in_hw ]
	check_err $? "the rule shows $st, not in_hw"
}

hw_of_rule()
{
	tc_stat "" xfv0 1 hw_packets
}

# expect_xdp: $N packets redirected in XDP.
expect_xdp()
{
	local hw0 hw

	hw0=$(hw_of_rule)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+$N udp:xfc/veth_c+0
	hw=$(wait_value $((hw0 + N)) 5 hw_of_rule)
	[ "$hw" = $((hw0 + N)) ]
	check_err $? "the rule counted $((hw - hw0)) hardware packets, not $N"
}

# expect_dropped: $N packets dropped by TC's mirred, none by XDP.
expect_dropped()
{
	local hw0 pk0 pk why

	hw0=$(hw_of_rule)
	pk0=$(tc_stat "" xfv0 1 packets)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
	pk=$(wait_value $((pk0 + N)) 5 tc_stat "" xfv0 1 packets)
	[ "$pk" = $((pk0 + N)) ]
	check_err $? "the rule counted $((pk - pk0)) packets, not $N"
	[ "$(hw_of_rule)" = "$hw0" ]
	check_err $? "the rule counted hardware packets after its target went away"
	why=$(xf_rule_json xfv0 1 | jq -r 'select(.software) | .why')
	[[ "$why" == "redirect target gone"* ]]
	check_err $? "xdp-flow show lists the rule with '$why', not as a software rule"
}

# xfv1_up: xfv1's address and state, as xf_veth_topology gives them.
xfv1_up()
{
	echo 1 >/proc/sys/net/ipv6/conf/xfv1/disable_ipv6 &&
	ip addr add 10.0.2.254/24 dev xfv1 &&
	ip link set dev xfv1 up &&
	ip neigh replace 10.0.2.1 lladdr "$XF_MAC_VETH_B" dev xfv1 nud permanent
}

RET=0
xf_enable_xfv0
check_err $? "xdp-flow enable dev xfv0 failed or the device never got attached"
add_rule
[ $RET -eq 0 ] && expect_xdp
log_test "flower redirect to xfv1 runs in XDP"

# 1. xfv1 to another namespace and back: the same ifindex.
RET=0
idx=$(cat /sys/class/net/xfv1/ifindex)
ip netns add "$NS_TMP" &&
	ip link set dev xfv1 netns "$NS_TMP" &&
	ip -n "$NS_TMP" link set dev xfv1 netns 1 &&
	xfv1_up
check_err $? "cannot move xfv1 to $NS_TMP and back"
[ "$(cat /sys/class/net/xfv1/ifindex 2>/dev/null)" = "$idx" ]
check_err $? "xfv1 came back with another ifindex"
[ $RET -eq 0 ] && expect_dropped
log_test "target moved to another namespace and back: mirred drops all $N, XDP none"

# 2. xfv1 deleted and made again with its ifindex.
RET=0
tc filter del dev xfv0 ingress pref 1
add_rule
[ $RET -eq 0 ] && expect_xdp
ip link del dev xfv1 &&
	ip link add xfv1 index "$idx" address "$XF_MAC_XFV1" type veth \
		peer name veth_b address "$XF_MAC_VETH_B" netns xfb &&
	xfv1_up &&
	ip netns exec xfb ethtool -K veth_b gro on >/dev/null &&
	ip -n xfb link set dev veth_b up &&
	udp_counter_add xfb veth_b
check_err $? "cannot make xfv1 again with ifindex $idx"
[ $RET -eq 0 ] && expect_dropped
log_test "target deleted and made again with its ifindex: mirred drops all $N, XDP none"

exit $EXIT_STATUS
