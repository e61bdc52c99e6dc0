#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deleting a rule takes it out of XDP at once; disabling the device detaches
# the XDP program and hands the rules back to TC, where they keep working
# (counted in software, no longer in_hw); enabling it again offloads them
# again.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

xf_test_begin

RET=0
xf_check_enable_xfv0
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ]
check_err $? "the rule is not in_hw"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 hw:xfv0/1=$N
log_test "an offloaded drop rule drops ($N hardware packets)"

RET=0
tc filter del dev xfv0 ingress pref 1
check_err $? "tc filter del failed"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+$N
n=$("$XF_CLI" -j show dev xfv0 | jq length)
[ "$n" = 0 ]
check_err $? "xdp-flow show still lists $n rules"
log_test "tc filter del: the next packets arrive at once, xdp-flow show lists nothing"

RET=0
wait_dev_state xfv0 idle 10
check_err $? "xfv0 is $(xf_dev_state xfv0) without offloaded rules, not idle"
end=$((SECONDS + 10))
while xf_dp_linked xfv0 || [ "$(xdp_prog_id "" xfv0)" != 0 ]; do
	[ $SECONDS -ge $end ] && break
	sleep 0.1
done
! xf_dp_linked xfv0 && [ "$(xdp_prog_id "" xfv0)" = 0 ]
check_err $? "the datapath stays on xfv0 after its last rule went"
log_test "the last rule gone: xfv0 idle, the datapath detached"

RET=0
tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" xfv0 2)" = in_hw ]
check_err $? "the new rule is not in_hw"
[ "$(xf_dev_state xfv0)" = attached ] && xf_dp_linked xfv0
check_err $? "xfv0 is $(xf_dev_state xfv0) after a new rule, not attached"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 hw:xfv0/2=$N
log_test "a new drop rule attaches the datapath again and is offloaded ($N hardware packets)"

RET=0
"$XF_CLI" disable dev xfv0
check_err $? "xdp-flow disable dev xfv0 failed"
wait_xdp_prog xfv0 absent 10 && ! xf_dp_linked xfv0
check_err $? "xfv0 still has the datapath: $(ip link show dev xfv0 | grep prog)"
st=$(xf_dev_state xfv0)
[ "$st" = none ]
check_err $? "xdp-flow status still lists xfv0 ($st)"
n=$("$XF_CLI" -j show | jq '[.[] | select(.dev == "xfv0")] | length')
[ "$n" = 0 ]
check_err $? "xdp-flow show still lists $n rules of xfv0"
log_test "xdp-flow disable dev xfv0 detaches XDP, the rule goes back to software"

RET=0
st=$(tc_hw_state "" xfv0 2)
[ "$st" != in_hw ]
check_err $? "the rule is still in_hw after disable"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 pk:xfv0/2+$N hw:xfv0/2+0
log_test "after disable the rule is not in_hw and drops in software ($N packets, hardware count unchanged)"

RET=0
xf_enable_dev xfv0 && wait_dev_attached xfv0 10
check_err $? "enabling xfv0 again failed, or it never got attached"
st=$(tc_hw_state "" xfv0 2)
[ "$st" = in_hw ]
check_err $? "the rule shows $st after enabling again, not in_hw"
# Smaller packets than before: counters that restarted in the helper must
# add up, not wrap around (the helper's counts start again from zero).
b0=$(tc_stat "" xfv0 2 bytes)
send_expect xfa 10.0.2.1 $N 9 1 -- udp:xfb/veth_b+0 hw:xfv0/2+$N
d=$(( $(tc_stat "" xfv0 2 bytes) - b0 ))
[ $((d % N)) = 0 ] && [ $d -ge $((N * 29)) ] && [ $d -lt $((N * 46)) ]
check_err $? "tc's byte count moved by $d for $N packets of 29 bytes"
log_test "enabling xfv0 again offloads the rule it kept ($N hardware packets, $d bytes)"

RET=0
# Counted in XDP, and offload disabled before TC asked for the counters
# (it asks only for rules in_hw): TC hears of them once the rule is in XDP
# again.
p0=$(tc_stat "" xfv0 2 hw_packets)
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0
"$XF_CLI" disable dev xfv0
check_err $? "xdp-flow disable dev xfv0 failed"
xf_enable_dev xfv0 && wait_dev_attached xfv0 10
check_err $? "enabling xfv0 again failed, or it never got attached"
d=$(( $(tc_stat "" xfv0 2 hw_packets) - p0 ))
[ "$d" = $N ]
check_err $? "tc's hardware count moved by $d for $N packets dropped in XDP before the disable"
log_test "what XDP counted before a disable reaches TC after the next enable ($d packets)"

exit $EXIT_STATUS
