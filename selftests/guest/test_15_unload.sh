#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unloading the module with offloaded rules cleans up everything: no XDP
# program on any device, nothing pinned under XDP_FLOW_PIN_DIR, no helper
# process, no kernel warning; and the rules keep working in TC.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50
PIN_DIR=/sys/fs/bpf/xdp_flow

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
counters_snap udp:xfb/veth_b+$N hw:xfv0/1=$N hw:xfv0/2=$N
send_udp xfa 10.0.2.1 $N && send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
counters_expect
pid=$(xf_status_get .helper_pid)
[ -n "$pid" ] && [ "$pid" -gt 0 ] && kill -0 "$pid"
check_err $? "no helper pid in xdp-flow status ($pid)"
log_test "before unload: drop and redirect offloaded, helper pid $pid"

RET=0
mark=$(dmesg_mark)
xf_unload
check_err $? "xf_unload failed"
[ ! -e /sys/module/xdp_flow ]
check_err $? "the module is still loaded"
progs=$(xdp_progs_anywhere)
[ -z "$progs" ]
check_err $? "XDP programs left on: $progs"
left=$(ls -A "$PIN_DIR" 2>/dev/null)
[ -z "$left" ]
check_err $? "left pinned in $PIN_DIR: $left"
for _ in $(seq 30); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
! kill -0 "$pid" 2>/dev/null
check_err $? "the helper (pid $pid) is still running"
pids=$(helper_pids)
[ -z "$pids" ]
check_err $? "helper processes still running: $pids"
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel warnings: $bad"
log_test "unload: no XDP program, nothing pinned, no helper, no warning"

RET=0
st1=$(tc_hw_state "" xfv0 1) && st2=$(tc_hw_state "" xfv0 2)
[ -n "$st1" ] && [ -n "$st2" ] && [ "$st1" != in_hw ] && [ "$st2" != in_hw ]
check_err $? "after unload the rules show '$st1' and '$st2', not out of hardware"
counters_snap pk:xfv0/1+$N pk:xfv0/2+$N udp:xfb/veth_b+$N udp:xfc/veth_c+0
send_udp xfa 10.0.2.1 $N && send_udp xfa 10.0.3.1 $N
check_err $? "send_udp failed"
counters_expect
log_test "after unload the rules work in software (no longer in_hw, drop and redirect)"

# Loading again, the module binds to the blocks that exist (the kernel
# replays their binds); their rules were never offered to it, so enabling
# is refused until the qdisc is made anew. Deleting the qdisc must unbind
# that replayed binding: it used to stay behind, its block freed, and the
# next unload walked the freed block (list corruption, kernel BUG).
RET=0
xf_load && xf_wait_helper
check_err $? "the module did not load again"
"$XF_CLI" enable dev xfv0 hook "$XF_HOOK" 2>/dev/null
check_fail $? "enable succeeded on a device whose rules predate the module"
tc qdisc del dev xfv0 clsact
check_err $? "cannot delete xfv0's clsact"
xf_enable_xfv0
check_err $? "enable refused after the qdisc that predated the module went"
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop &&
	[ "$(tc_hw_state "" xfv0 1)" = in_hw ]
check_err $? "a rule on the new qdisc is not in_hw"
xf_unload
check_err $? "rmmod failed"
log_test "a block bound when the module loaded is unbound when its qdisc goes"

exit $EXIT_STATUS
