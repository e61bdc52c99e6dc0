#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demonstration behind `make demo` (run in a guest by tools/demo.sh):
# load xdp_flow, build the standard topology, enable offload on xfv0, add a
# drop rule and a redirect rule with plain tc, send traffic, and show what
# tc, ip and xdp-flow report. Exits non-zero if any outcome is not the
# expected one.
#
#   xfa: veth_a 10.0.1.1 -- xfv0 (root, XDP) -- xfv1 -- veth_b 10.0.2.1 (xfb)
#                                             -- xfv2 -- veth_c 10.0.3.1 (xfc)

XF_ROOT=${XF_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$XF_ROOT" || exit 1
source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=100
failed=0

step()
{
	if [ -t 1 ]; then
		printf '\n\033[1m==> %s\033[0m\n' "$*"
	else
		printf '\n==> %s\n' "$*"
	fi
}

# show <command...>: print the command, then run it.
show()
{
	printf '$ %s\n' "$*"
	"$@"
}

# expect <description> <status>
expect()
{
	if [ "$2" -eq 0 ]; then
		printf '    [ok] %s\n' "$1"
	else
		printf '    [FAILED] %s\n' "$1"
		failed=1
	fi
}

demo_cleanup()
{
	xf_topology_cleanup >/dev/null 2>&1
	xf_unload >/dev/null 2>&1
}
trap demo_cleanup EXIT

# xdp-flow and Debian's tools first, whatever the host's PATH had (lib.sh
# mounted bpffs)
export PATH=$XF_ROOT/tools/xdp-flow:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

step "Load the module (it carries its helper and starts it: no helper file)"
xf_modprobe_deps >/dev/null
show modprobe xdp_flow
expect "module loaded" $?
xf_wait_helper
expect "the helper is running" $?
show ps -o pid,comm,args -C xdp_flow_umh
[ $failed -eq 0 ] || exit 1

step "Build the topology: xfa -> xfv0 -> (routing) -> xfv1 -> xfb, xfv2 -> xfc"
xf_veth_topology && warm_neighbours &&
	udp_counter_add xfb veth_b && udp_counter_add xfc veth_c
expect "three namespaces forwarding through the root namespace" $?

step "Enable offload on xfv0 in XDP, then add rules with plain tc"
# (The default hook, auto, picks the TC hook on a veth where the kernel has
# tcx: packets that match no rule then pay nothing. This demo shows XDP.)
show xdp-flow enable dev xfv0 hook xdp
[ "$(xf_dev_state xfv0)" = idle ]
expect "xfv0 enabled, idle: no datapath until it has an offloaded rule" $?
show tc qdisc add dev xfv0 clsact
show tc filter add dev xfv0 ingress pref 1 protocol ip flower \
	dst_ip 10.0.2.1 action drop
show tc filter add dev xfv0 ingress pref 2 protocol ip flower \
	dst_ip 10.0.3.1 action mirred egress redirect dev xfv1
[ "$(tc_hw_state "" xfv0 1)" = in_hw ] && [ "$(tc_hw_state "" xfv0 2)" = in_hw ]
expect "both rules in_hw" $?
wait_dev_attached xfv0 10 && [ "$(xf_dev_state xfv0)" = attached ]
expect "xfv0 attached (the first rule brought the XDP program)" $?

step "Send $N UDP packets from xfa to 10.0.2.1 (dropped) and $N to 10.0.3.1 (redirected to xfv1)"
b0=$(udp_count xfb veth_b) c0=$(udp_count xfc veth_c)
show send_udp xfa 10.0.2.1 $N
show send_udp xfa 10.0.3.1 $N
b1=$(wait_value $((b0 + N)) 5 udp_count xfb veth_b)
settle
b1=$(udp_count xfb veth_b) c1=$(udp_count xfc veth_c)
echo "    veth_b (xfb) received $((b1 - b0)) UDP packets, veth_c (xfc) $((c1 - c0))"
[ $((b1 - b0)) -eq $N ] && [ $((c1 - c0)) -eq 0 ]
expect "veth_b got exactly the $N redirected packets, veth_c none; the dropped ones went nowhere" $?

step "What tc reports: in_hw, and the packets counted by XDP as 'Sent hardware'"
show tc -s filter show dev xfv0 ingress
hw1=$(wait_value $N 5 tc_stat "" xfv0 1 hw_packets)
hw2=$(wait_value $N 5 tc_stat "" xfv0 2 hw_packets)
[ "$hw1" = $N ] && [ "$hw2" = $N ]
expect "hardware counters: drop $hw1, redirect $hw2 (expected $N each)" $?

step "The XDP program on xfv0"
show ip link show dev xfv0
[ "$(xdp_prog_id "" xfv0)" != 0 ]
expect "xfv0 carries an XDP program" $?

step "xdp-flow status and show"
show xdp-flow status
show xdp-flow show
n=$("$XF_CLI" -j show dev xfv0 | jq '[.[] | select(.software == false)] | length')
[ "$n" = 2 ]
expect "xdp-flow show lists the 2 offloaded rules" $?

step "Unload: XDP program, pins and helper go away; the rules stay in TC"
show rmmod xdp_flow
[ -z "$(xdp_progs_anywhere)" ] && [ -z "$(ls -A /sys/fs/bpf/xdp_flow 2>/dev/null)" ] &&
	[ -z "$(helper_pids)" ]
expect "no XDP program, nothing pinned, no helper" $?
show tc filter show dev xfv0 ingress
st=$(tc_hw_state "" xfv0 1)
[ -n "$st" ] && [ "$st" != in_hw ]
expect "the rules are back in software (no longer in_hw)" $?

echo
if [ $failed -eq 0 ]; then
	echo "demo: every outcome as expected"
else
	echo "demo: some outcomes were NOT as expected (see [FAILED] above)"
fi
exit $failed
