#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flower drop rule on an enabled device runs in XDP: it shows in_hw, an
# XDP program sits on the device, the packets never reach their
# destination, TC reports them as hardware packets (and bytes as TC counts
# them), and xdp-flow show lists the rule with the same count. Packets that
# match no rule take the normal path.

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

trap xf_test_cleanup EXIT

xf_test_setup || exit 1

RET=0
xf_enable_veth0
check_err $? "xdp-flow enable dev veth0 hook $XF_HOOK failed"
st=$(xf_dev_state veth0)
[ "$st" = idle ]
check_err $? "veth0 is $st before any rule, not idle"
[ "$(xdp_prog_id "" veth0)" = 0 ] && ! xf_dp_linked veth0
check_err $? "a datapath is on veth0 before any rule: $(ip link show dev veth0 | grep prog)"
log_test "xdp-flow enable dev veth0 hook $XF_HOOK: idle, nothing attached before a rule"
[ $RET -eq 0 ] || exit 1

# Before any rule: the miss path forwards, and tells how many bytes TC
# counts per packet.
RET=0
b0=$(udp_count xfb veth_b) && bb0=$(udp_bytes xfb veth_b)
check_err $? "cannot read the counter of veth_b"
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
[ "$b1" = $((b0 + N)) ]
check_err $? "veth_b received $((b1 - b0)) of $N packets without any rule"
L=$(per_packet_bytes xfb veth_b "$bb0" $N)
check_err $? "cannot tell the size of a packet"
log_test "without rules, packets through veth0 are forwarded ($N of $N, $L bytes each)"

RET=0
tc filter add dev veth0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
st=$(tc_hw_state "" veth0 1)
[ "$st" = in_hw ]
check_err $? "the rule shows $st, not in_hw"
# The first rule waited for the attach (tc held no rtnl).
st=$(xf_dev_state veth0)
[ "$st" = attached ] && xf_dp_linked veth0
check_err $? "veth0 is $st after tc filter add returned, not attached"
hook=$(xf_dev_hook veth0)
if [ "$hook" = xdp ]; then
	ip link show dev veth0 | grep -q 'prog/xdp ' &&
		[ "$(ip -j link show dev veth0 | jq '.[0].xdp.mode')" = 1 ]
	check_err $? "no native XDP program on veth0"
else
	[ "$(xdp_prog_id "" veth0)" = 0 ]
	check_err $? "an XDP program on veth0 with hook $hook"
	tc filter show dev veth0 ingress | grep -q bpf
	check_fail $? "the tc hook shows in tc filter show"
fi
log_test "flower dst_ip 10.0.2.1 action drop is in_hw; the datapath (hook $XF_HOOK: $hook) attached before tc returned"

RET=0
b0=$(udp_count xfb veth_b)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
hw=$(wait_value $N 5 tc_stat "" veth0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets, not $N"
settle
b1=$(udp_count xfb veth_b)
[ "$b1" = "$b0" ]
check_err $? "$((b1 - b0)) packets reached veth_b despite the drop rule"
log_test "$N packets to 10.0.2.1 are dropped, none reaches veth_b"

RET=0
pk=$(tc_stat "" veth0 1 packets)
[ "$pk" = $N ]
check_err $? "tc counts $pk packets in all (software + hardware), not $N"
hb=$(tc_stat "" veth0 1 hw_bytes)
[ "$hb" = $((N * L)) ]
check_err $? "tc reports $hb hardware bytes, not $N x $L"
tc -s filter show dev veth0 ingress pref 1 | grep -q "Sent hardware $((N * L)) bytes $N pkt"
check_err $? "tc -s filter show prints no 'Sent hardware $((N * L)) bytes $N pkt'"
log_test "tc -s filter show: Sent hardware $((N * L)) bytes $N pkt, nothing in software"

RET=0
rule=$(xf_rule_json veth0 1)
check_err $? "xdp-flow show -j does not list the rule"
if [ $RET -eq 0 ]; then
	[ "$(echo "$rule" | jq -r '.stats.packets')" = $N ]
	check_err $? "xdp-flow counts $(echo "$rule" | jq -r '.stats.packets') packets, not $N"
	[ "$(echo "$rule" | jq -r '.stats.bytes')" = $((N * L)) ]
	check_err $? "xdp-flow counts $(echo "$rule" | jq -r '.stats.bytes') bytes, not $((N * L))"
	[ "$(echo "$rule" | jq -r '.key.dst_ip')" = 10.0.2.1/32 ]
	check_err $? "key shown as $(echo "$rule" | jq -c '.key')"
	[ "$(echo "$rule" | jq -c '[.software, .chain, [.actions[].kind]]')" = '[false,0,["drop"]]' ]
	check_err $? "rule shown as $rule"
	ago=$(echo "$rule" | jq -r '.stats.lastused_ms_ago')
	[[ "$ago" =~ ^[0-9]+$ ]] && [ "$ago" -lt 60000 ]
	check_err $? "lastused_ms_ago is $ago, not a recent use"
fi
"$XF_CLI" show dev veth0 | grep -q "Sent hardware $((N * L)) bytes $N pkt"
check_err $? "xdp-flow show (text) prints no 'Sent hardware $((N * L)) bytes $N pkt'"
log_test "xdp-flow show lists the rule with $N packets"

RET=0
c0=$(udp_count xfc veth_c)
b0=$(udp_count xfb veth_b)
hw0=$(tc_stat "" veth0 1 hw_packets)
pk0=$(tc_stat "" veth0 1 packets)
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
c1=$(wait_value $((c0 + N)) 5 udp_count xfc veth_c)
[ "$c1" = $((c0 + N)) ]
check_err $? "veth_c received $((c1 - c0)) of $N packets that match no rule"
hw=$(tc_stat "" veth0 1 hw_packets) && pk=$(tc_stat "" veth0 1 packets)
[ "$hw" = "$hw0" ] && [ "$pk" = "$pk0" ]
check_err $? "the drop rule's counters moved from $pk0 ($hw0 hw) to $pk ($hw hw)"
[ "$(udp_count xfb veth_b)" = "$b0" ]
check_err $? "packets to 10.0.3.1 reached veth_b"
log_test "packets to 10.0.3.1 (no rule) pass XDP and are forwarded"

exit $EXIT_STATUS
