#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Nothing is offloaded on a device where offload is not enabled: rules show
# not_in_hw, no XDP program appears, and the rules work in software. Checked
# on veth0 before it is enabled, and on veth2 while veth0 is enabled.

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

trap xf_test_cleanup EXIT

xf_test_setup || exit 1

RET=0
tc qdisc add dev veth0 clsact
check_err $? "tc qdisc add failed"
tc filter add dev veth0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
st=$(tc_hw_state "" veth0 1)
[ "$st" = not_in_hw ]
check_err $? "the rule on veth0 shows $st before enable"
id=$(xdp_prog_id "" veth0)
[ "$id" = 0 ]
check_err $? "veth0 has XDP program $id before enable"
log_test "veth0 not enabled: the rule is not_in_hw, no XDP program"

RET=0
b0=$(udp_count xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
pk=$(wait_value $N 5 tc_stat "" veth0 1 packets)
[ "$pk" = $N ]
check_err $? "software counted $pk packets, not $N"
hw=$(tc_stat "" veth0 1 hw_packets)
[ "$hw" = 0 ]
check_err $? "$hw hardware packets on a device that is not enabled"
settle
[ "$(udp_count xfb veth_b)" = "$b0" ]
check_err $? "packets reached veth_b despite the rule"
log_test "veth0 not enabled: the rule drops in software ($N packets, 0 in hardware)"

RET=0
tc qdisc del dev veth0 clsact
check_err $? "tc qdisc del failed"
xf_enable_veth0
check_err $? "xdp-flow enable dev veth0 failed or the device never got attached"
tc qdisc add dev veth2 clsact
check_err $? "tc qdisc add failed"
tc filter add dev veth2 ingress pref 1 protocol ip flower dst_ip 10.0.1.1 action drop
check_err $? "tc filter add failed"
st=$(tc_hw_state "" veth2 1)
[ "$st" = not_in_hw ]
check_err $? "the rule on veth2 shows $st"
id=$(xdp_prog_id "" veth2)
[ "$id" = 0 ]
check_err $? "veth2 has XDP program $id"
st=$(xf_dev_state veth2)
[ "$st" = none ]
check_err $? "xdp-flow status lists veth2 as $st"
n=$("$XF_CLI" -j show | jq '[.[] | select(.dev == "veth2")] | length')
[ "$n" = 0 ]
check_err $? "xdp-flow show lists $n rules of veth2"
log_test "veth0 enabled, veth2 not: veth2's rule is not_in_hw, no XDP program on veth2"

RET=0
a0=$(udp_count xfa veth_a)
send_udp xfc 10.0.1.1 $N
check_err $? "send_udp failed"
pk=$(wait_value $N 5 tc_stat "" veth2 1 packets)
[ "$pk" = $N ]
check_err $? "software counted $pk packets, not $N"
hw=$(tc_stat "" veth2 1 hw_packets)
[ "$hw" = 0 ]
check_err $? "$hw hardware packets on veth2"
settle
[ "$(udp_count xfa veth_a)" = "$a0" ]
check_err $? "packets reached veth_a despite the rule"
log_test "veth2's rule drops in software ($N packets, 0 in hardware)"

exit $EXIT_STATUS
