#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deleting a rule takes it out of XDP at once; disabling the device detaches
# the XDP program and hands the rules back to TC, where they keep working
# (counted in software).
#
# TC keeps a rule's in_hw flag from the time the rule was offered: no driver
# can clear it later without the block being unbound. So after disable the
# test asserts where packets are handled (XDP detached, the software counter
# moves, the hardware counter does not), not the flag.

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

trap xf_test_cleanup EXIT

xf_test_setup || exit 1

# drop_check <pref> <hw expected after>: N packets to 10.0.2.1 are dropped.
drop_check()
{
	local b0 b1

	b0=$(udp_count xfb veth_b) || return 1
	send_udp xfa 10.0.2.1 $N || return 1
	settle
	b1=$(udp_count xfb veth_b) || return 1
	if [ "$b1" != "$b0" ]; then
		xf_err "$((b1 - b0)) of $N packets reached veth_b"
		return 1
	fi
}

RET=0
xf_enable_veth0
check_err $? "xdp-flow enable dev veth0 failed or the device never got attached"
tc filter add dev veth0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" veth0 1)" = in_hw ]
check_err $? "the rule is not in_hw"
drop_check
check_err $? "the offloaded rule does not drop"
hw=$(wait_value $N 5 tc_stat "" veth0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets, not $N"
log_test "an offloaded drop rule drops ($N hardware packets)"

RET=0
tc filter del dev veth0 ingress pref 1
check_err $? "tc filter del failed"
b0=$(udp_count xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
[ "$b1" = $((b0 + N)) ]
check_err $? "only $((b1 - b0)) of $N packets arrive after the rule was deleted"
n=$("$XF_CLI" -j show dev veth0 | jq length)
[ "$n" = 0 ]
check_err $? "xdp-flow show still lists $n rules"
log_test "tc filter del: the next packets arrive at once, xdp-flow show lists nothing"

RET=0
wait_dev_state veth0 idle 10
check_err $? "veth0 is $(xf_dev_state veth0) without offloaded rules, not idle"
end=$((SECONDS + 10))
while xf_dp_linked veth0 || [ "$(xdp_prog_id "" veth0)" != 0 ]; do
	[ $SECONDS -ge $end ] && break
	sleep 0.1
done
! xf_dp_linked veth0 && [ "$(xdp_prog_id "" veth0)" = 0 ]
check_err $? "the datapath stays on veth0 after its last rule went"
log_test "the last rule gone: veth0 idle, the datapath detached"

RET=0
tc filter add dev veth0 ingress pref 2 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" veth0 2)" = in_hw ]
check_err $? "the new rule is not in_hw"
[ "$(xf_dev_state veth0)" = attached ] && xf_dp_linked veth0
check_err $? "veth0 is $(xf_dev_state veth0) after a new rule, not attached"
drop_check
check_err $? "the new rule does not drop"
hw=$(wait_value $N 5 tc_stat "" veth0 2 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets, not $N"
log_test "a new drop rule attaches the datapath again and is offloaded ($N hardware packets)"

RET=0
"$XF_CLI" disable dev veth0
check_err $? "xdp-flow disable dev veth0 failed"
wait_xdp_prog veth0 absent 10 && ! xf_dp_linked veth0
check_err $? "veth0 still has the datapath: $(ip link show dev veth0 | grep prog)"
st=$(xf_dev_state veth0)
[ "$st" = none ]
check_err $? "xdp-flow status still lists veth0 ($st)"
n=$("$XF_CLI" -j show | jq '[.[] | select(.dev == "veth0")] | length')
[ "$n" = 0 ]
check_err $? "xdp-flow show still lists $n rules of veth0"
log_test "xdp-flow disable dev veth0 detaches XDP, the rule goes back to software"

RET=0
hw0=$(tc_stat "" veth0 2 hw_packets) && pk0=$(tc_stat "" veth0 2 packets)
check_err $? "cannot read the rule's counters"
drop_check
check_err $? "the rule no longer drops in software"
pk=$(wait_value $((pk0 + N)) 5 tc_stat "" veth0 2 packets)
[ "$pk" = $((pk0 + N)) ]
check_err $? "software counted $((pk - pk0)) packets, not $N"
hw=$(tc_stat "" veth0 2 hw_packets)
[ "$hw" = "$hw0" ]
check_err $? "the hardware count moved from $hw0 to $hw without XDP"
log_test "after disable the rule drops in software ($N packets, hardware count unchanged)"

exit $EXIT_STATUS
