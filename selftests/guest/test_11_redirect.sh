#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flower redirect rule runs in XDP. Packets to 10.0.3.1 are routed out of
# xfv2; the rule sends them out of xfv1 instead, so where they arrive
# tells the redirect from routing, and the hardware counters tell XDP from
# TC doing the redirect in software.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

xf_test_begin

RET=0
xf_check_enable_xfv0
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.3.1 \
	action mirred egress redirect dev xfv1
check_err $? "tc filter add failed"
st=$(tc_hw_state "" xfv0 1)
[ "$st" = in_hw ]
check_err $? "the rule shows $st, not in_hw"
log_test "flower dst_ip 10.0.3.1 action mirred egress redirect dev xfv1 is in_hw"

RET=0
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+$N udp:xfc/veth_c+0
log_test "$N packets to 10.0.3.1 arrive at veth_b (redirect), none at veth_c"

RET=0
hw=$(wait_value $N 5 tc_stat "" xfv0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets, not $N"
pk=$(tc_stat "" xfv0 1 packets)
[ "$pk" = $N ]
check_err $? "tc counts $pk packets in all, not $N (redirected in software too?)"
rule=$(xf_rule_json xfv0 1)
check_err $? "xdp-flow show -j does not list the rule"
if [ $RET -eq 0 ]; then
	[ "$(echo "$rule" | jq -c '[.software, .stats.packets, [.actions[] | [.kind, .dev]]]')" = \
	  "[false,$N,[[\"redirect\",\"xfv1\"]]]" ]
	check_err $? "rule shown as $rule"
fi
"$XF_CLI" show dev xfv0 | grep -q "redirect dev xfv1"
check_err $? "xdp-flow show (text) prints no 'redirect dev xfv1'"
log_test "the redirect is counted as $N hardware packets (tc and xdp-flow show)"

exit $EXIT_STATUS
