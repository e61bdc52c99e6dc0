#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flower redirect rule runs in XDP. Packets to 10.0.3.1 are routed out of
# veth2; the rule sends them out of veth1 instead, so where they arrive
# tells the redirect from routing, and the hardware counters tell XDP from
# TC doing the redirect in software.

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

trap xf_test_cleanup EXIT

xf_test_setup || exit 1

RET=0
xf_enable_veth0
check_err $? "xdp-flow enable dev veth0 failed or the device never got attached"
tc filter add dev veth0 ingress pref 1 protocol ip flower dst_ip 10.0.3.1 \
	action mirred egress redirect dev veth1
check_err $? "tc filter add failed"
st=$(tc_hw_state "" veth0 1)
[ "$st" = in_hw ]
check_err $? "the rule shows $st, not in_hw"
log_test "flower dst_ip 10.0.3.1 action mirred egress redirect dev veth1 is in_hw"

RET=0
b0=$(udp_count xfb veth_b) && c0=$(udp_count xfc veth_c)
check_err $? "cannot read the counters"
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
[ "$b1" = $((b0 + N)) ]
check_err $? "veth_b received $((b1 - b0)) of $N redirected packets"
settle
c1=$(udp_count xfc veth_c)
[ "$c1" = "$c0" ]
check_err $? "$((c1 - c0)) packets were routed to veth_c instead"
log_test "$N packets to 10.0.3.1 arrive at veth_b (redirect), none at veth_c"

RET=0
hw=$(wait_value $N 5 tc_stat "" veth0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets, not $N"
pk=$(tc_stat "" veth0 1 packets)
[ "$pk" = $N ]
check_err $? "tc counts $pk packets in all, not $N (redirected in software too?)"
rule=$(xf_rule_json veth0 1)
check_err $? "xdp-flow show -j does not list the rule"
if [ $RET -eq 0 ]; then
	[ "$(echo "$rule" | jq -c '[.software, .stats.packets, [.actions[] | [.kind, .dev]]]')" = \
	  "[false,$N,[[\"redirect\",\"veth1\"]]]" ]
	check_err $? "rule shown as $rule"
fi
"$XF_CLI" show dev veth0 | grep -q "redirect dev veth1"
check_err $? "xdp-flow show (text) prints no 'redirect dev veth1'"
log_test "the redirect is counted as $N hardware packets (tc and xdp-flow show)"

exit $EXIT_STATUS
