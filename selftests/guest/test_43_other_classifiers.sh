#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Rules of classifiers other than flower (matchall, u32, bpf) stay in TC,
# and no offloaded flower rule of a later prio acts before them: XDP hands
# the frames that reach their prio to the stack. Each case puts such a
# rule at pref 1 ahead of an offloaded flower redirect at pref 2 (packets
# to 10.0.3.1, routed out of xfv2, redirected out of xfv1): where the
# packets arrive and what each rule counted are what TC alone gives, and
# the flower rule counts no hardware packet while the other rule is there.
# Deleting it gives the flower rule back to XDP.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=300

trap xf_test_cleanup EXIT

xf_test_setup || exit 1

RET=0
xf_enable_xfv0
check_err $? "xdp-flow enable dev xfv0 failed or the device never got attached"
tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 \
	action mirred egress redirect dev xfv1
check_err $? "tc filter add (flower) failed"
st=$(tc_hw_state "" xfv0 2)
[ "$st" = in_hw ]
check_err $? "the flower rule shows $st, not in_hw"
log_test "flower redirect at pref 2 is in_hw"

# hw_of_flower: the flower rule's hardware packets.
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

# expect_shielded <what> <pref>: after a send of $N, the rule at <pref>
# counted all of them in software and the flower rule no hardware packet.
expect_shielded()
{
	local pk hw

	pk=$(wait_value $N 5 rule_packets "$2")
	[ "$pk" = $N ]
	check_err $? "the $1 rule counted $pk packets, not $N"
	hw=$(hw_of_flower)
	[ "$hw" = "$hw0" ]
	check_err $? "the flower rule counted $((hw - hw0)) hardware packets behind the $1 rule"
}

# expect_xdp_again <what>: with the rule at pref 1 gone, $N packets are
# redirected in XDP.
expect_xdp_again()
{
	local hw

	RET=0
	hw0=$(hw_of_flower)
	send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+$N udp:xfc/veth_c+0
	hw=$(wait_value $((hw0 + N)) 5 hw_of_flower)
	[ "$hw" = $((hw0 + N)) ]
	check_err $? "the flower rule counted $((hw - hw0)) hardware packets, not $N"
	log_test "$1 deleted: the flower redirect runs in XDP again"
}

# 1. matchall police, as Open vSwitch's ingress_policing_rate: TC alone
# lets the burst through to the rules after it (conform: continue) and
# drops the rest.
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

tc filter del dev xfv0 ingress pref 1
expect_xdp_again "matchall police"

# 2. u32 drop; it is kept across disabling and enabling offload (the
# module keeps its place while the device is not enabled).
RET=0
tc filter add dev xfv0 ingress pref 1 protocol ip u32 \
	match ip dst 10.0.3.1/32 action drop
check_err $? "tc filter add (u32) failed"
hw0=$(hw_of_flower)
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
expect_shielded u32 1
log_test "u32 drop at pref 1 drops all $N packets, none redirected in XDP"

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
pk=$(wait_value $((before + N)) 5 rule_packets 1)
[ "$pk" = $((before + N)) ]
check_err $? "the u32 rule counted $((pk - before)) more packets, not $N"
[ "$(hw_of_flower)" = "$hw0" ]
check_err $? "the flower rule counted hardware packets behind the u32 rule"
log_test "the u32 rule still comes first after offload is disabled and enabled again"

tc filter del dev xfv0 ingress pref 1
expect_xdp_again "u32 drop"

# 3. bpf: a classic BPF program that matches every frame, action drop.
RET=0
tc filter add dev xfv0 ingress pref 1 protocol ip bpf \
	bytecode '1,6 0 0 4294967295,' action drop
check_err $? "tc filter add (bpf) failed"
hw0=$(hw_of_flower)
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 udp:xfc/veth_c+0
expect_shielded bpf 1
log_test "bpf drop at pref 1 drops all $N packets, none redirected in XDP"

tc filter del dev xfv0 ingress pref 1
expect_xdp_again "bpf drop"

exit $EXIT_STATUS
