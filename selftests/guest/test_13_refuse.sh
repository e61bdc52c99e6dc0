#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A rule the XDP program cannot execute exactly is refused: tc keeps it in
# software (not_in_hw), says why (the module's extack message), and it keeps
# working. A refused rule with a lower prio number than an offloaded one
# still wins for the packets both match, as it does in TC.
#
# TC hands its extack to offload drivers only for skip_sw or "verbose"
# filters (tc_cls_common_offload_init), so the refused rule is added with
# "flower verbose" to see the module's message.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

xf_test_begin

RET=0
xf_check_enable_xfv0
out=$(tc filter add dev xfv0 ingress pref 1 protocol ip flower verbose \
	dst_ip 10.0.3.1 action skbedit priority 5 2>&1)
check_err $? "tc filter add failed: $out"
st=$(tc_hw_state "" xfv0 1)
[ "$st" = not_in_hw ]
check_err $? "the skbedit rule shows $st, not not_in_hw"
echo "$out" | grep -q '^Warning: .*xdp_flow'
check_err $? "tc printed no warning from xdp_flow: '$out'"
echo "$out" | grep -qi 'skbedit priority'
check_err $? "the warning does not name the action: '$out'"
log_test "skbedit priority is refused with a reason ($out)"

RET=0
tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 action drop
check_err $? "tc filter add failed"
st=$(tc_hw_state "" xfv0 2)
[ "$st" = in_hw ]
check_err $? "the drop rule shows $st, not in_hw"
rule=$(xf_rule_json xfv0 1)
check_err $? "xdp-flow show does not list the refused rule"
[ "$(echo "$rule" | jq -r .software)" = true ]
check_err $? "the refused rule is not marked software: $rule"
echo "$rule" | jq -r .why | grep -qi 'skbedit priority'
check_err $? "xdp-flow show does not say why the rule is in software: $rule"
"$XF_CLI" show dev xfv0 | grep -qi "^  why: .*skbedit priority"
check_err $? "xdp-flow show prints no why line for the refused rule"
rule=$(xf_rule_json xfv0 2)
check_err $? "xdp-flow show does not list the drop rule"
[ "$(echo "$rule" | jq -r .software)" = false ]
check_err $? "the drop rule is marked software: $rule"
log_test "prio 2 drop is in_hw; xdp-flow show marks prio 1 software"

# In TC, prio 1 matches first: it sets the packet's priority, the packet
# goes on (pipe) and is routed to veth_c; prio 2 never sees it. Dropping
# in XDP would lose it.
RET=0
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N udp:xfb/veth_b+0
log_test "prio 1 (software) wins over prio 2 (XDP): $N forwarded, none dropped"

RET=0
pk=$(wait_value $N 5 tc_stat "" xfv0 1 packets)
[ "$pk" = $N ]
check_err $? "the skbedit rule counted $pk packets, not $N"
hw=$(tc_stat "" xfv0 1 hw_packets)
[ "$hw" = 0 ]
check_err $? "the refused rule has $hw hardware packets"
pk=$(tc_stat "" xfv0 2 packets) && hw=$(tc_stat "" xfv0 2 hw_packets)
check_err $? "cannot read the drop rule's counters"
[ "$pk" = 0 ] && [ "$hw" = 0 ]
check_err $? "the drop rule counted $pk packets ($hw in hardware), not 0"
log_test "counters: prio 1 $N in software, prio 2 none"

RET=0
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+$N
log_test "packets matching neither rule are forwarded"

exit $EXIT_STATUS
