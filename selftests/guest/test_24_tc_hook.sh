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

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=50
TMPD=$(mktemp -d)

trap 'xf_test_cleanup; rm -rf "$TMPD"' EXIT

xf_test_setup || exit 1

kver=$(uname -r)
if [ "$(printf '%s\n' 6.6 "${kver%%-*}" | sort -V | head -n 1)" != 6.6 ]; then
	RET=0
	"$XF_CLI" enable dev xfv0
	check_err $? "xdp-flow enable dev xfv0 failed"
	[ "$(xf_dev_hook xfv0)" = xdp ]
	check_err $? "auto picked hook $(xf_dev_hook xfv0) on a kernel without tcx"
	why=$(xf_status_get '.devices[] | select(.dev == "xfv0") | .hook_why')
	[[ $why == *tcx* ]]
	check_err $? "status does not say why: '$why'"
	log_test "no tcx ($kver): auto picks xdp on xfv0 and says why ($why)"

	RET=0
	err=$("$XF_CLI" enable dev xfv2 hook tc 2>&1)
	check_fail $? "hook tc accepted without tcx"
	[[ $err == *"tcx"* ]]
	check_err $? "no reason given: $err"
	[ "$(xf_dev_state xfv2)" = none ]
	check_err $? "xfv2 enabled anyway"
	log_test "no tcx: hook tc is refused ($err)"
	exit "$EXIT_STATUS"
fi

RET=0
"$XF_CLI" enable dev xfv0
check_err $? "xdp-flow enable dev xfv0 failed"
[ "$(xf_dev_hook xfv0)" = tc ]
check_err $? "auto picked hook $(xf_dev_hook xfv0) on a veth"
why=$(xf_status_get '.devices[] | select(.dev == "xfv0") | .hook_why')
[[ $why == *"virtual device"* ]]
check_err $? "status does not say why: '$why'"
"$XF_CLI" status | grep -q "xfv0 .*idle, hook tc"
check_err $? "xdp-flow status: $("$XF_CLI" status | grep xfv0)"
! xf_dp_linked xfv0
check_err $? "a datapath on xfv0 before any rule"
log_test "auto picks the tc hook on xfv0 and says why ($why); idle before a rule"

RET=0
tc qdisc add dev xfv0 clsact
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ]
check_err $? "the drop rule is not in_hw"
[ "$(xf_dev_state xfv0)" = attached ] && xf_dp_linked xfv0
check_err $? "xfv0 is $(xf_dev_state xfv0) after the first rule, not attached"
[ "$(xdp_prog_id "" xfv0)" = 0 ]
check_err $? "an XDP program on xfv0 with the tc hook"
n=$(tc -j filter show dev xfv0 ingress | jq '[.[] | select(.options != null)] | length')
[ "$n" = 1 ] && ! tc filter show dev xfv0 ingress | grep -q bpf
check_err $? "tc filter show lists $n filters: $(tc filter show dev xfv0 ingress)"
log_test "the first rule attaches the tc hook (tcx), invisible in tc filter show"

RET=0
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1=$N pk:xfv0/1=$N udp:xfb/veth_b+0
log_test "drop at TC ingress: $N hardware packets, none in software, none arrive"

# What the hook does not handle goes on to the classic filters.
RET=0
tc filter add dev xfv0 ingress pref 9 protocol ip flower dst_ip 10.0.2.1 \
	ip_proto tcp action drop
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N
tc filter add dev xfv0 ingress pref 2 protocol ip flower verbose dst_ip 10.0.3.1 \
	action pedit ex munge ip ttl set 9 pipe action csum ip pipe \
	action mirred egress redirect dev xfv1 >"$TMPD/err" 2>&1
check_err $? "tc filter add (pedit) failed: $(cat "$TMPD/err")"
st=$(tc_hw_state "" xfv0 2)
[ "$st" != in_hw ]
check_err $? "the pedit rule is $st with the tc hook"
grep -q "tc hook does not offload pedit" "$TMPD/err"
check_err $? "tc did not pass on why: $(cat "$TMPD/err")"
# the software pedit rule
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+$N pk:xfv0/2=$N hw:xfv0/2=0
log_test "misses pass to TC; pedit + redirect stays in software (classic TC runs it, $N packets)"
tc filter del dev xfv0 ingress pref 2

RET=0
tc -n xfb qdisc add dev veth_b clsact 2>/dev/null
tc -n xfb filter add dev veth_b ingress pref 5 protocol 802.1Q flower vlan_id 10 action pass
check_err $? "cannot add the VLAN counter on veth_b"
tc filter add dev xfv0 ingress pref 3 protocol ip flower dst_ip 10.0.3.1 \
	action vlan push id 10 pipe action mirred egress redirect dev xfv1
check_err $? "tc filter add (vlan push, redirect) failed"
[ "$(tc_hw_state "" xfv0 3)" = in_hw ]
check_err $? "the vlan push + redirect rule is not in_hw"
# pk:xfb/veth_b/5: the packets tagged 10 that reach veth_b
send_expect xfa 10.0.3.1 $N -- hw:xfv0/3=$N pk:xfv0/3=$N \
	pk:xfb/veth_b/5=$N udp:xfc/veth_c+0
log_test "vlan push + redirect at TC ingress: $N tagged packets arrive at veth_b"

# OVS deletes and re-creates its ingress qdisc: the rules go, the hook
# with them; new rules bring it back.
RET=0
tc qdisc del dev xfv0 clsact
check_err $? "tc qdisc del failed"
wait_dev_state xfv0 idle 10
check_err $? "xfv0 is $(xf_dev_state xfv0) without rules, not idle"
! xf_dp_linked xfv0
check_err $? "the tc hook stays on xfv0 without rules"
tc qdisc add dev xfv0 clsact
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
[ "$(tc_hw_state "" xfv0 1)" = in_hw ] && [ "$(xf_dev_state xfv0)" = attached ]
check_err $? "after re-creating the qdisc: $(tc_hw_state "" xfv0 1), $(xf_dev_state xfv0)"
send_expect xfa 10.0.2.1 $N -- hw:xfv0/1=$N
log_test "qdisc deleted and re-created: idle, then attached again and dropping"

RET=0
"$XF_CLI" enable dev xfv2 hook xdp
check_err $? "xdp-flow enable dev xfv2 hook xdp failed"
[ "$(xf_dev_hook xfv2)" = xdp ] &&
	[ "$(xf_status_get '.devices[] | select(.dev == "xfv2") | .hook_why')" = "asked for" ]
check_err $? "xfv2: hook $(xf_dev_hook xfv2)"
"$XF_CLI" disable dev xfv0 && "$XF_CLI" disable dev xfv2
check_err $? "xdp-flow disable failed"
! xf_dp_linked xfv0 && [ -z "$(ls /sys/fs/bpf/xdp_flow | grep link_)" ]
check_err $? "links left: $(ls /sys/fs/bpf/xdp_flow)"
log_test "hook xdp when asked for; disable leaves no link"

exit "$EXIT_STATUS"
