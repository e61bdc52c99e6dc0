#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The datapath survives the helper: after SIGKILL, offloaded traffic keeps
# being handled in XDP, the module starts a new helper by itself, the new
# helper gets every rule back, and the hardware counters carry on from
# where they were (TC's counters must equal what software would count).

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

trap xf_test_cleanup EXIT

xf_test_setup || exit 1

RET=0
xf_enable_veth0
check_err $? "xdp-flow enable dev veth0 failed or the device never got attached"
tc filter add dev veth0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
tc filter add dev veth0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 \
	action mirred egress redirect dev veth1
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" veth0 1)" = in_hw ] && [ "$(tc_hw_state "" veth0 2)" = in_hw ]
check_err $? "the rules are not in_hw"
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
hw=$(wait_value $N 5 tc_stat "" veth0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets, not $N"
pid=$(xf_status_get .helper_pid)
restarts=$(xf_status_get .helper_restarts)
[ "$(xf_status_get .helper_state)" = running ] && [ "$pid" -gt 0 ] && kill -0 "$pid"
check_err $? "xdp-flow status: no running helper (pid '$pid')"
prog=$(xdp_prog_id "" veth0)
log_test "before the kill: rules offloaded, helper pid $pid, $restarts restarts"
[ $RET -eq 0 ] || exit 1

RET=0
b0=$(udp_count xfb veth_b)
kill -KILL "$pid"
check_err $? "kill -KILL $pid failed"
# At once, before a new helper can have replayed anything.
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
settle
b1=$(udp_count xfb veth_b)
[ "$b1" = "$b0" ]
check_err $? "$((b1 - b0)) of $N packets got through while the helper was down"
log_test "SIGKILL the helper: offloaded traffic is still dropped"

RET=0
new=0
end=$((SECONDS + 10))
while [ $SECONDS -lt $end ]; do
	if [ "$(xf_status_get .helper_state)" = running ]; then
		new=$(xf_status_get .helper_pid)
		[ "$new" -gt 0 ] && [ "$new" != "$pid" ] && break
	fi
	sleep 0.1
done
[ "$new" -gt 0 ] && [ "$new" != "$pid" ] && kill -0 "$new"
check_err $? "no new helper within 10 s (pid $new, old $pid)"
! kill -0 "$pid" 2>/dev/null
check_err $? "the old helper $pid still exists"
r=$(xf_status_get .helper_restarts)
[ "$r" = $((restarts + 1)) ]
check_err $? "helper_restarts is $r, not $((restarts + 1))"
wait_dev_attached veth0 5
check_err $? "veth0 is not attached after the restart"
log_test "the helper comes back by itself (pid $new, restarts $r)"

RET=0
n=$("$XF_CLI" -j show dev veth0 | jq '[.[] | select(.software == false)] | length')
[ "$n" = 2 ]
check_err $? "xdp-flow show lists $n offloaded rules, not 2"
[ "$(tc_hw_state "" veth0 1)" = in_hw ] && [ "$(tc_hw_state "" veth0 2)" = in_hw ]
check_err $? "the rules are no longer in_hw"
xf_dp_linked veth0 && { [ "$(xf_dev_hook veth0)" != xdp ] || [ "$(xdp_prog_id "" veth0)" != 0 ]; }
check_err $? "veth0 lost its datapath (XDP program was $prog)"
log_test "after the restart both rules are back in XDP"

RET=0
b0=$(udp_count xfb veth_b) && c0=$(udp_count xfc veth_c)
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
[ "$b1" = $((b0 + N)) ]
check_err $? "veth_b received $((b1 - b0)) packets, not the $N redirected ones"
settle
[ "$(udp_count xfc veth_c)" = "$c0" ]
check_err $? "redirected packets were routed to veth_c"
hw1=$(wait_value $((3 * N)) 5 tc_stat "" veth0 1 hw_packets)
[ "$hw1" = $((3 * N)) ]
check_err $? "the drop rule has $hw1 hardware packets, not $((3 * N)) ($N before, during and after the restart)"
pk1=$(tc_stat "" veth0 1 packets)
[ "$pk1" = $((3 * N)) ]
check_err $? "the drop rule counted $pk1 packets in all, not $((3 * N))"
hw2=$(wait_value $N 5 tc_stat "" veth0 2 hw_packets)
[ "$hw2" = $N ]
check_err $? "the redirect rule has $hw2 hardware packets, not $N"
x=$(xf_rule_json veth0 1 | jq -r .stats.packets)
[ "$x" = $((3 * N)) ]
check_err $? "xdp-flow show counts $x packets for the drop rule, not $((3 * N))"
log_test "after the restart: drop and redirect in XDP, counters carry on ($((3 * N)) and $N)"

exit $EXIT_STATUS
