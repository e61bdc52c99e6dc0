#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flower drop rule on an enabled device runs in XDP: it shows in_hw, an
# XDP program sits on the device, the packets never reach their
# destination, TC reports them as hardware packets (and bytes as TC counts
# them), and xdp-flow show lists the rule with the same count. Packets that
# match no rule take the normal path. The verifier's work on the programs
# stays far from its budget.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

xf_test_begin

RET=0
xf_enable_xfv0
check_err $? "xdp-flow enable dev xfv0 hook $XF_HOOK failed"
st=$(xf_dev_state xfv0)
[ "$st" = idle ]
check_err $? "xfv0 is $st before any rule, not idle"
[ "$(xdp_prog_id "" xfv0)" = 0 ] && ! xf_dp_linked xfv0
check_err $? "a datapath is on xfv0 before any rule: $(ip link show dev xfv0 | grep prog)"
log_test "xdp-flow enable dev xfv0 hook $XF_HOOK: idle, nothing attached before a rule"
[ $RET -eq 0 ] || exit 1

# Before any rule: the miss path forwards, and tells how many bytes TC
# counts per packet.
RET=0
bb0=$(udp_bytes xfb veth_b)
check_err $? "cannot read the bytes counter of veth_b"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+$N
L=$(per_packet_bytes xfb veth_b "$bb0" $N)
check_err $? "cannot tell the size of a packet"
log_test "without rules, packets through xfv0 are forwarded ($N of $N, $L bytes each)"

RET=0
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
st=$(tc_hw_state "" xfv0 1)
[ "$st" = in_hw ]
check_err $? "the rule shows $st, not in_hw"
# The first rule waited for the attach (tc held no rtnl).
st=$(xf_dev_state xfv0)
[ "$st" = attached ] && xf_dp_linked xfv0
check_err $? "xfv0 is $st after tc filter add returned, not attached"
hook=$(xf_dev_hook xfv0)
if [ "$hook" = xdp ]; then
	ip link show dev xfv0 | grep -q 'prog/xdp ' &&
		[ "$(ip -j link show dev xfv0 | jq '.[0].xdp.mode')" = 1 ]
	check_err $? "no native XDP program on xfv0"
else
	[ "$(xdp_prog_id "" xfv0)" = 0 ]
	check_err $? "an XDP program on xfv0 with hook $hook"
	tc filter show dev xfv0 ingress | grep -q bpf
	check_fail $? "the tc hook shows in tc filter show"
fi
log_test "flower dst_ip 10.0.2.1 action drop is in_hw; the datapath (hook $XF_HOOK: $hook) attached before tc returned"

RET=0
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1=$N udp:xfb/veth_b+0
log_test "$N packets to 10.0.2.1 are dropped, none reaches veth_b"

RET=0
pk=$(tc_stat "" xfv0 1 packets)
[ "$pk" = $N ]
check_err $? "tc counts $pk packets in all (software + hardware), not $N"
hb=$(tc_stat "" xfv0 1 hw_bytes)
[ "$hb" = $((N * L)) ]
check_err $? "tc reports $hb hardware bytes, not $N x $L"
tc -s filter show dev xfv0 ingress pref 1 | grep -q "Sent hardware $((N * L)) bytes $N pkt"
check_err $? "tc -s filter show prints no 'Sent hardware $((N * L)) bytes $N pkt'"
log_test "tc -s filter show: Sent hardware $((N * L)) bytes $N pkt, nothing in software"

RET=0
rule=$(xf_rule_json xfv0 1)
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
"$XF_CLI" show dev xfv0 | grep -q "Sent hardware $((N * L)) bytes $N pkt"
check_err $? "xdp-flow show (text) prints no 'Sent hardware $((N * L)) bytes $N pkt'"
log_test "xdp-flow show lists the rule with $N packets"

RET=0
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N \
	hw:xfv0/1+0 pk:xfv0/1+0 udp:xfb/veth_b+0
log_test "packets to 10.0.3.1 (no rule) pass XDP and are forwarded"

# The helper says what the verifier took for each program: far from the
# budget, on every kernel (7.3's verifier once took 0.9 million, nearly
# all of it for the search's bpf_loop() step; 0.12 million since). The
# module's helper loads one hook's program at start and the other at its
# first device: a helper of the test driver loads both (--load-all).
RET=0
LIMIT=500000
ver=$(echo shutdown | timeout $((120 * XF_PACE)) "$XF_ROOT/umh/xdp_flow_umh" \
	--driver --no-pin --load-all --log=stderr --max-rules=2048 \
	--max-flows=1024 2>&1 |
      sed -n 's/.*xdp_flow_umh: \(xdp_flow[a-z_]*\): the verifier processed \([0-9]*\) instructions.*/\1 \2/p')
[ "$(echo "$ver" | awk 'NF == 2' | wc -l)" = 2 ]
check_err $? "the helper did not log what the verifier took for both programs: '$ver'"
while read -r prog n; do
	[ -n "$n" ] && [ "$n" -le $LIMIT ]
	check_err $? "the verifier processed ${n:-?} instructions for $prog, more than $LIMIT"
done <<<"$ver"
log_test "the verifier took at most $LIMIT of its 1,000,000 instructions: $(echo $ver)"

exit $EXIT_STATUS
