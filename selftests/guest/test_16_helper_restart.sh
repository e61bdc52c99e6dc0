#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The datapath survives the helper: after SIGKILL, offloaded traffic keeps
# being handled in XDP, the module starts a new helper by itself, the new
# helper gets every rule back, and the hardware counters carry on from
# where they were (TC's counters must equal what software would count).

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50

xf_test_begin

RET=0
xf_check_enable_xfv0
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
tc filter add dev xfv0 ingress pref 2 protocol ip flower dst_ip 10.0.3.1 \
	action mirred egress redirect dev xfv1
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ] && [ "$(tc_hw_state "" xfv0 2)" = in_hw ]
check_err $? "the rules are not in_hw"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1=$N
pid=$(xf_status_get .helper_pid)
restarts=$(xf_status_get .helper_restarts)
[ "$(xf_status_get .helper_state)" = running ] && [ "$pid" -gt 0 ] && kill -0 "$pid"
check_err $? "xdp-flow status: no running helper (pid '$pid')"
prog=$(xdp_prog_id "" xfv0)
log_test "before the kill: rules offloaded, helper pid $pid, $restarts restarts"
[ $RET -eq 0 ] || exit 1

RET=0
counters_snap udp:xfb/veth_b+0
kill -KILL "$pid"
check_err $? "kill -KILL $pid failed"
# At once, before a new helper can have replayed anything.
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
counters_expect
log_test "SIGKILL the helper: offloaded traffic is still dropped"

RET=0
new=0
end=$((SECONDS + XF_HELPER_WAIT))
while [ $SECONDS -lt $end ]; do
	if [ "$(xf_status_get .helper_state)" = running ]; then
		new=$(xf_status_get .helper_pid)
		[ "$new" -gt 0 ] && [ "$new" != "$pid" ] && break
	fi
	sleep 0.1
done
[ "$new" -gt 0 ] && [ "$new" != "$pid" ] && kill -0 "$new"
check_err $? "no new helper within $XF_HELPER_WAIT s (pid $new, old $pid)"
! kill -0 "$pid" 2>/dev/null
check_err $? "the old helper $pid still exists"
r=$(xf_status_get .helper_restarts)
[ "$r" = $((restarts + 1)) ]
check_err $? "helper_restarts is $r, not $((restarts + 1))"
wait_dev_attached xfv0 5
check_err $? "xfv0 is not attached after the restart"
log_test "the helper comes back by itself (pid $new, restarts $r)"

RET=0
n=$("$XF_CLI" -j show dev xfv0 | jq '[.[] | select(.software == false)] | length')
[ "$n" = 2 ]
check_err $? "xdp-flow show lists $n offloaded rules, not 2"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ] && [ "$(tc_hw_state "" xfv0 2)" = in_hw ]
check_err $? "the rules are no longer in_hw"
xf_dp_linked xfv0 && { [ "$(xf_dev_hook xfv0)" != xdp ] || [ "$(xdp_prog_id "" xfv0)" != 0 ]; }
check_err $? "xfv0 lost its datapath (XDP program was $prog)"
log_test "after the restart both rules are back in XDP"

RET=0
# The drop rule's counts: N before, during and after the restart.
counters_snap udp:xfb/veth_b+$N udp:xfc/veth_c+0 \
	hw:xfv0/1=$((3 * N)) pk:xfv0/1=$((3 * N)) xf:xfv0/1=$((3 * N)) \
	hw:xfv0/2=$N
send_udp xfa 10.0.2.1 $N
check_err $? "send_udp failed"
send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
counters_expect
log_test "after the restart: drop and redirect in XDP, counters carry on ($((3 * N)) and $N)"

exit $EXIT_STATUS
