#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Offload leaves every packet's fate as TC alone decides it, also where
# more than offloaded flower rules are on the path. Each part first shows
# an offloaded flower redirect at pref 2 (packets to 10.0.3.1, routed out
# of xfv2, redirected out of xfv1) running in XDP, then changes what is
# around it: where the packets arrive and what each rule counted are what
# TC alone gives, and the flower rule counts no hardware packet where TC
# must run it.
#
# 1. Rules of classifiers other than flower (matchall, u32, bpf) at pref 1
#    stay in TC, and XDP hands the frames that reach their prio to the
#    stack, so that the flower rule never acts before them. Deleting the
#    rule gives the flower rule back to XDP.
# 2. A redirect whose target went away drops, as mirred does, also when a
#    device of the same ifindex is there again: mirred lets go of a device
#    that is unregistered or leaves the namespace, while XDP redirects by
#    ifindex, so the module turns the rules that redirect there into
#    software rules. The target moves to another namespace and back, then
#    is deleted and made again with its ifindex.

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

# add_redirect: the flower redirect at pref 2, in_hw.
add_redirect()
{
	local st

	tc filter add dev xfv0 ingress pref 2 protocol ip flower \
		dst_ip 10.0.3.1 action mirred egress redirect dev xfv1
	check_err $? "tc filter add (flower) failed"
	st=$(tc_hw_state "" xfv0 2)
	[ "$st" = in_hw ]
	check_err $? "the flower rule shows $st, not in_hw"
}

hw_of_flower()
{
	tc_stat "" xfv0 2 hw_packets
}

# rule_packets <pref>: the packets the first action of the rule at <pref>
# counted (a u32 prio lists its hash table before its rules).
rule_packets()
{
	local v

	v=$(timeout 20 tc -s -j filter show dev xfv0 ingress pref "$1" |
	    jq -r '[.[] | select(.options.actions != null)] | .[0].options.actions[0].stats.packets // empty')
	[ -n "$v" ] || { xf_err "no action stats for pref $1"; return 1; }
	echo "$v"
}

# expect_xdp: $N packets redirected in XDP.
expect_xdp()
{
	local hw0 hw

	hw0=$(hw_of_flower)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+$N udp:xfc/veth_c+0
	hw=$(wait_value $((hw0 + N)) 5 hw_of_flower)
	[ "$hw" = $((hw0 + N)) ]
	check_err $? "the flower rule counted $((hw - hw0)) hardware packets, not $N"
}

# expect_shielded <what> <pref> [<before>]: after a send of $N, the rule
# at <pref> counted all of them in software (<before> plus $N), and the
# flower rule no hardware packet since hw0.
expect_shielded()
{
	local want=$((${3:-0} + N)) pk hw

	pk=$(wait_value $want 5 rule_packets "$2")
	[ "$pk" = $want ]
	check_err $? "the $1 rule counted $((pk - ${3:-0})) packets, not $N"
	hw=$(hw_of_flower)
	[ "$hw" = "$hw0" ]
	check_err $? "the flower rule counted $((hw - hw0)) hardware packets behind the $1 rule"
}

# drop_case <what> <tc filter args...>: a drop rule of classifier <what>
# at pref 1 drops all $N packets; the flower rule redirects none in XDP.
drop_case()
{
	local what=$1

	shift
	RET=0
	tc filter add dev xfv0 ingress pref 1 protocol ip "$@" action drop
	check_err $? "tc filter add ($what) failed"
	hw0=$(hw_of_flower)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
	expect_shielded "$what" 1
	log_test "$what drop at pref 1 drops all $N packets, none redirected in XDP"
}

RET=0
xf_enable_xfv0
check_err $? "xdp-flow enable dev xfv0 failed or the device never got attached"
add_redirect
[ $RET -eq 0 ] && expect_xdp
log_test "flower redirect at pref 2 runs in XDP"

# ---- 1. other classifiers ----

# matchall police, as Open vSwitch's ingress_policing_rate: TC alone lets
# the burst through to the rules after it (conform: continue) and drops
# the rest.
RET=0
mark=$(dmesg_mark)
tc filter add dev xfv0 ingress pref 1 protocol ip matchall \
	action police rate 8bit burst 2k conform-exceed drop/continue
check_err $? "tc filter add (matchall police) failed"
hw0=$(hw_of_flower)
b0=$(udp_count xfb veth_b)
c0=$(udp_count xfc veth_c)
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
expect_shielded matchall 1
got=$(($(udp_count xfb veth_b) - b0))
[ "$got" -lt $((N / 3)) ]
check_err $? "$got of $N packets passed a policer of 8 bit/s with a 2 KiB burst"
[ "$(udp_count xfc veth_c)" = "$c0" ]
check_err $? "packets were routed out of xfv2 past the redirect"
dmesg_since "$mark" |
	grep -q "xfv0: matchall rules at chain 0 prio 1 stay in software"
check_err $? "no kernel log line says the matchall prio stays in software"
why=$(xf_rule_json xfv0 1 | jq -r 'select(.software) | .why')
[[ "$why" == "matchall rules stay in software"* ]]
check_err $? "xdp-flow show lists the matchall prio as '$why', not a software rule"
log_test "matchall police at pref 1 polices all $N packets ($got passed), none redirected in XDP"

RET=0
tc filter del dev xfv0 ingress pref 1
expect_xdp
log_test "matchall police deleted: the flower redirect runs in XDP again"

# u32 drop; it is kept across disabling and enabling offload (the module
# keeps its place while the device is not enabled).
drop_case u32 u32 match ip dst 10.0.3.1/32

RET=0
"$XF_CLI" disable dev xfv0 >/dev/null
check_err $? "xdp-flow disable dev xfv0 failed"
xf_enable_dev xfv0 >/dev/null && wait_dev_attached xfv0 10
check_err $? "xdp-flow enable dev xfv0 failed again"
for _ in $(seq 50); do
	st=$(tc_hw_state "" xfv0 2)
	[ "$st" = in_hw ] && break
	sleep 0.2
done
[ "$st" = in_hw ]
check_err $? "the flower rule shows $st after enabling again, not in_hw"
hw0=$(hw_of_flower)
before=$(rule_packets 1)
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
expect_shielded u32 1 "$before"
log_test "the u32 rule still comes first after offload is disabled and enabled again"
tc filter del dev xfv0 ingress pref 1

# bpf: a classic BPF program that matches every frame, action drop.
drop_case bpf bpf bytecode '1,6 0 0 4294967295,'

RET=0
tc filter del dev xfv0 ingress pref 1
expect_xdp
log_test "u32 and bpf drop deleted: the flower redirect runs in XDP again"

# ---- 2. the redirect's target goes away ----

# expect_dropped: $N packets dropped by TC's mirred, none by XDP.
expect_dropped()
{
	local hw0 pk0 pk why

	hw0=$(hw_of_flower)
	pk0=$(tc_stat "" xfv0 2 packets)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
	pk=$(wait_value $((pk0 + N)) 5 tc_stat "" xfv0 2 packets)
	[ "$pk" = $((pk0 + N)) ]
	check_err $? "the rule counted $((pk - pk0)) packets, not $N"
	[ "$(hw_of_flower)" = "$hw0" ]
	check_err $? "the rule counted hardware packets after its target went away"
	why=$(xf_rule_json xfv0 2 | jq -r 'select(.software) | .why')
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

# To another namespace and back: the same ifindex.
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

# Deleted and made again with its ifindex.
RET=0
tc filter del dev xfv0 ingress pref 2
add_redirect
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
