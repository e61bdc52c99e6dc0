#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The hooks: `xdp-flow enable` without a hook (auto) picks the TC hook on a
# veth where the kernel has tcx, and says why; the datapath goes on the
# device with its first offloaded rule and off with its last; at TC ingress
# it drops, redirects and pushes VLAN tags ahead of the classic filters,
# invisible in `tc filter show`, and what it leaves passes to them; pedit
# stays in software there. On a kernel without tcx (6.1), auto picks XDP
# and `hook tc` is refused with the reason.

source "$XF_ROOT/selftests/lib.sh"
source "$XF_ROOT/selftests/guest/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50
TMPD=$(mktemp -d)

trap 'xf_test_cleanup; rm -rf "$TMPD"' EXIT

xf_test_setup || exit 1

kver=$(uname -r)
if [ "$(printf '%s\n' 6.6 "${kver%%-*}" | sort -V | head -n 1)" != 6.6 ]; then
	RET=0
	"$XF_CLI" enable dev veth0
	check_err $? "xdp-flow enable dev veth0 failed"
	[ "$(xf_dev_hook veth0)" = xdp ]
	check_err $? "auto picked hook $(xf_dev_hook veth0) on a kernel without tcx"
	why=$(xf_status_get '.devices[] | select(.dev == "veth0") | .hook_why')
	[[ $why == *tcx* ]]
	check_err $? "status does not say why: '$why'"
	log_test "no tcx ($kver): auto picks xdp on veth0 and says why ($why)"

	RET=0
	err=$("$XF_CLI" enable dev veth2 hook tc 2>&1)
	check_fail $? "hook tc accepted without tcx"
	[[ $err == *"tcx"* ]]
	check_err $? "no reason given: $err"
	[ "$(xf_dev_state veth2)" = none ]
	check_err $? "veth2 enabled anyway"
	log_test "no tcx: hook tc is refused ($err)"
	exit "$EXIT_STATUS"
fi

RET=0
"$XF_CLI" enable dev veth0
check_err $? "xdp-flow enable dev veth0 failed"
[ "$(xf_dev_hook veth0)" = tc ]
check_err $? "auto picked hook $(xf_dev_hook veth0) on a veth"
why=$(xf_status_get '.devices[] | select(.dev == "veth0") | .hook_why')
[[ $why == *"virtual device"* ]]
check_err $? "status does not say why: '$why'"
"$XF_CLI" status | grep -q "veth0 .*idle, hook tc"
check_err $? "xdp-flow status: $("$XF_CLI" status | grep veth0)"
! xf_dp_linked veth0
check_err $? "a datapath on veth0 before any rule"
log_test "auto picks the tc hook on veth0 and says why ($why); idle before a rule"

RET=0
tc qdisc add dev veth0 clsact
tc filter add dev veth0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" veth0 1)" = in_hw ]
check_err $? "the drop rule is not in_hw"
[ "$(xf_dev_state veth0)" = attached ] && xf_dp_linked veth0
check_err $? "veth0 is $(xf_dev_state veth0) after the first rule, not attached"
[ "$(xdp_prog_id "" veth0)" = 0 ]
check_err $? "an XDP program on veth0 with the tc hook"
n=$(tc -j filter show dev veth0 ingress | jq '[.[] | select(.options != null)] | length')
[ "$n" = 1 ] && ! tc filter show dev veth0 ingress | grep -q bpf
check_err $? "tc filter show lists $n filters: $(tc filter show dev veth0 ingress)"
log_test "the first rule attaches the tc hook (tcx), invisible in tc filter show"

RET=0
b0=$(udp_count xfb veth_b) && bb0=$(udp_bytes xfb veth_b)
send_udp xfa 10.0.2.1 $N
hw=$(wait_value $N 5 tc_stat "" veth0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets, not $N"
pk=$(tc_stat "" veth0 1 packets)
[ "$pk" = $N ]
check_err $? "tc counts $pk packets in all, not $N"
settle
[ "$(udp_count xfb veth_b)" = "$b0" ]
check_err $? "dropped packets reached veth_b"
log_test "drop at TC ingress: $N hardware packets, none in software, none arrive"

# What the hook does not handle goes on to the classic filters.
RET=0
tc filter add dev veth0 ingress pref 9 protocol ip flower dst_ip 10.0.2.1 \
	ip_proto tcp action drop
c0=$(udp_count xfc veth_c)
send_udp xfa 10.0.3.1 $N
c1=$(wait_value $((c0 + N)) 5 udp_count xfc veth_c)
[ "$c1" = $((c0 + N)) ]
check_err $? "veth_c received $((c1 - c0)) of $N packets that match no rule"
b0=$(udp_count xfb veth_b)
tc filter add dev veth0 ingress pref 2 protocol ip flower verbose dst_ip 10.0.3.1 \
	action pedit ex munge ip ttl set 9 pipe action csum ip pipe \
	action mirred egress redirect dev veth1 >"$TMPD/err" 2>&1
check_err $? "tc filter add (pedit) failed: $(cat "$TMPD/err")"
st=$(tc_hw_state "" veth0 2)
[ "$st" != in_hw ]
check_err $? "the pedit rule is $st with the tc hook"
grep -q "tc hook does not offload pedit" "$TMPD/err"
check_err $? "tc did not pass on why: $(cat "$TMPD/err")"
send_udp xfa 10.0.3.1 $N
b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
sw=$(wait_value $N 5 tc_stat "" veth0 2 packets)
[ "$b1" = $((b0 + N)) ] && [ "$sw" = $N ] &&
	[ "$(tc_stat "" veth0 2 hw_packets)" = 0 ]
check_err $? "the software pedit rule: $((b1 - b0)) arrived at veth_b, counted $sw (hw $(tc_stat "" veth0 2 hw_packets))"
log_test "misses pass to TC; pedit + redirect stays in software (classic TC runs it, $N packets)"
tc filter del dev veth0 ingress pref 2

RET=0
tc -n xfb qdisc add dev veth_b clsact 2>/dev/null
tc -n xfb filter add dev veth_b ingress pref 5 protocol 802.1Q flower vlan_id 10 action pass
check_err $? "cannot add the VLAN counter on veth_b"
tc filter add dev veth0 ingress pref 3 protocol ip flower dst_ip 10.0.3.1 \
	action vlan push id 10 pipe action mirred egress redirect dev veth1
check_err $? "tc filter add (vlan push, redirect) failed"
[ "$(tc_hw_state "" veth0 3)" = in_hw ]
check_err $? "the vlan push + redirect rule is not in_hw"
c0=$(udp_count xfc veth_c)
send_udp xfa 10.0.3.1 $N
hw=$(wait_value $N 5 tc_stat "" veth0 3 hw_packets)
[ "$hw" = $N ] && [ "$(tc_stat "" veth0 3 packets)" = $N ]
check_err $? "tc reports $hw hardware packets of $(tc_stat "" veth0 3 packets), not $N"
v=$(wait_value $N 5 tc_stat xfb veth_b 5 packets)
[ "$v" = $N ]
check_err $? "veth_b received $v packets tagged 10, not $N"
settle
[ "$(udp_count xfc veth_c)" = "$c0" ]
check_err $? "packets were routed to veth_c"
log_test "vlan push + redirect at TC ingress: $N tagged packets arrive at veth_b"

# OVS deletes and re-creates its ingress qdisc: the rules go, the hook
# with them; new rules bring it back.
RET=0
tc qdisc del dev veth0 clsact
check_err $? "tc qdisc del failed"
wait_dev_state veth0 idle 10
check_err $? "veth0 is $(xf_dev_state veth0) without rules, not idle"
! xf_dp_linked veth0
check_err $? "the tc hook stays on veth0 without rules"
tc qdisc add dev veth0 clsact
tc filter add dev veth0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
[ "$(tc_hw_state "" veth0 1)" = in_hw ] && [ "$(xf_dev_state veth0)" = attached ]
check_err $? "after re-creating the qdisc: $(tc_hw_state "" veth0 1), $(xf_dev_state veth0)"
send_udp xfa 10.0.2.1 $N
hw=$(wait_value $N 5 tc_stat "" veth0 1 hw_packets)
[ "$hw" = $N ]
check_err $? "tc reports $hw hardware packets after re-creating the qdisc, not $N"
log_test "qdisc deleted and re-created: idle, then attached again and dropping"

RET=0
"$XF_CLI" enable dev veth2 hook xdp
check_err $? "xdp-flow enable dev veth2 hook xdp failed"
[ "$(xf_dev_hook veth2)" = xdp ] &&
	[ "$(xf_status_get '.devices[] | select(.dev == "veth2") | .hook_why')" = "asked for" ]
check_err $? "veth2: hook $(xf_dev_hook veth2)"
"$XF_CLI" disable dev veth0 && "$XF_CLI" disable dev veth2
check_err $? "xdp-flow disable failed"
! xf_dp_linked veth0 && [ -z "$(ls /sys/fs/bpf/xdp_flow | grep link_)" ]
check_err $? "links left: $(ls /sys/fs/bpf/xdp_flow)"
log_test "hook xdp when asked for; disable leaves no link"

exit "$EXIT_STATUS"
