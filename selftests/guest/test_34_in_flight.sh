#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tc filter add and del return before the helper has done the change
# (posted, not waited for); until it has, XDP must not act against it.
# With the helper stopped, so that changes stay in flight: a prio 10
# "pass" exception added over an offloaded prio 100 drop lets its frames
# through at once (the gate's limit sends frames of rules from prio 10 on
# to the stack), while an offloaded prio 5 drop, before every change in
# flight, keeps acting in XDP; deleting that drop lets its frames through
# at once too. Once the helper goes on, the changes are in XDP, nothing
# was restarted, and the counters agree.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=20
HELPER=

cleanup()
{
	[ -n "$HELPER" ] && kill -CONT "$HELPER" 2>/dev/null
	xf_test_cleanup
}
trap cleanup EXIT

# The helper is stopped for a few seconds below (for minutes on a slow
# kernel): no restart for that.
xf_test_setup "$(xf_helper_timeout_param 30000)" || exit 1

RET=0
xf_enable_xfv0
check_err $? "xdp-flow enable dev xfv0 hook $XF_HOOK failed"
tc filter add dev xfv0 ingress pref 100 protocol ip flower dst_ip 10.0.2.1 action drop &&
	tc filter add dev xfv0 ingress pref 5 protocol ip flower dst_ip 10.0.3.1 action drop
check_err $? "tc filter add failed"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/100+$N udp:xfb/veth_b+0
send_expect xfa 10.0.3.1 $N -- hw:xfv0/5+$N udp:xfc/veth_c+0
log_test "prio 100 drop of 10.0.2.1 and prio 5 drop of 10.0.3.1 act in XDP"
[ $RET -eq 0 ] || exit 1

RET=0
restarts=$(xf_status_get .helper_restarts)
mark=$(dmesg_mark "test_34")
HELPER=$(xf_status_get .helper_pid)
kill -STOP "$HELPER"
check_err $? "cannot stop the helper (pid $HELPER)"
tc filter add dev xfv0 ingress pref 10 protocol ip flower dst_ip 10.0.2.1 action pass
check_err $? "tc filter add of the exception failed (helper stopped)"
fl=$(xf_status_get .in_flight)
[[ "$fl" =~ ^[0-9]+$ ]] && [ "$fl" -ge 1 ]
check_err $? "xdp-flow status counts ${fl:-no} rule changes in flight, not at least 1"
rule=$(xf_rule_json xfv0 10)
[ "$(echo "$rule" | jq -r '[.in_flight, .software, .waiting] | @tsv')" = "$(printf 'true\tfalse\tfalse')" ]
check_err $? "xdp-flow show does not list the exception as in flight: $rule"
"$XF_CLI" show dev xfv0 | grep -q "^dev xfv0 chain 0 prio 10 .* in_flight$"
check_err $? "xdp-flow show (text) does not print the exception as in_flight: $("$XF_CLI" show dev xfv0 | grep "prio 10 ")"
XF_NO_SETTLE=1 send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+$N hw:xfv0/100+0 pk:xfv0/100+0
XF_NO_SETTLE=1 send_expect xfa 10.0.3.1 $N -- hw:xfv0/5+$N udp:xfc/veth_c+0
log_test "helper stopped, a prio 10 pass over the prio 100 drop in flight (so xdp-flow show says): its $N frames get through, the prio 5 drop still acts in XDP"

RET=0
tc filter del dev xfv0 ingress pref 5
check_err $? "tc filter del of the prio 5 drop failed (helper stopped)"
XF_NO_SETTLE=1 send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N
log_test "helper stopped, the prio 5 drop deleted: its $N frames get through at once"

RET=0
kill -CONT "$HELPER"
HELPER=
"$XF_CLI" wait timeout $((20 * XF_PACE))
check_err $? "xdp-flow wait failed after the helper went on"
fl=$(xf_status_get .in_flight)
[ "$fl" = 0 ]
check_err $? "$fl rule changes still in flight"
[ "$(xf_status_get .helper_restarts)" = "$restarts" ]
check_err $? "the helper was restarted"
st=$(tc_hw_state "" xfv0 10)
[ "$st" = in_hw ]
check_err $? "the exception shows $st, not in_hw"
rule=$(xf_rule_json xfv0 10)
[ "$(echo "$rule" | jq -r .in_flight)" = false ]
check_err $? "xdp-flow show still lists the exception as in flight: $rule"
n=$("$XF_CLI" -j show dev xfv0 | jq '[.[] | select(.prio == 5)] | length')
[ "$n" = 0 ]
check_err $? "xdp-flow show lists ${n:-?} rules of the deleted prio 5"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+$N hw:xfv0/100+0
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "helper going on: no change in flight, no restart, the exception in_hw, frames still through, kernel log clean"

RET=0
tc filter del dev xfv0 ingress pref 10
check_err $? "tc filter del of the exception failed"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/100+$N udp:xfb/veth_b+0
log_test "the exception deleted: the prio 100 drop acts in XDP again"

exit $EXIT_STATUS
