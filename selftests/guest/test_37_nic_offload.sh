#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A device with TC offload of its own (netdevsim, which accepts flower
# rules without running them) on a kernel with the patch series under
# drivers/: with flow-offload-xdp off its rules go to its driver exactly
# as before (in_hw, nothing in xdp_flow); with it on they go to xdp_flow
# and run in XDP (hardware counters move); the feature cannot change
# while the device's blocks are bound, and the kernel says so.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=40
NSIM_A=$((1000 + RANDOM % 1000))
NSIM_B=$((NSIM_A + 1))

cleanup()
{
	[ -n "${nsfd_a:-}" ] && exec {nsfd_a}<&-
	[ -n "${nsfd_b:-}" ] && exec {nsfd_b}<&-
	if [ -w /sys/bus/netdevsim/del_device ]; then
		echo "$NSIM_A" >/sys/bus/netdevsim/del_device 2>/dev/null
		echo "$NSIM_B" >/sys/bus/netdevsim/del_device 2>/dev/null
	fi
	ip netns del xfn 2>/dev/null
	xf_unload >/dev/null 2>&1
}
trap cleanup EXIT

if ! ethtool -k lo | grep -q '^flow-offload-xdp:'; then
	log_skip "rules of a device with TC offload of its own go to XDP with flow-offload-xdp on" \
		"this kernel has no flow-offload-xdp (the patch series under drivers/)"
	exit "$EXIT_STATUS"
fi

# wait_enabled_by <dev> <switch or "">
wait_enabled_by()
{
	local end=$((SECONDS + 10))

	until [ "$(xf_dev_switch "$1")" = "$2" ]; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# add_rule: xfn0's clsact qdisc and its drop rule (prio 1).
add_rule()
{
	tc qdisc add dev xfn0 clsact &&
		tc filter add dev xfn0 ingress pref 1 protocol ip flower \
			dst_ip 10.0.9.1 action drop
	check_err $? "tc filter add failed"
}

# expect_driver_rule <what>: the rule went to netdevsim's own offload:
# in_hw, nothing in xdp_flow, and TC drops the packets in software.
expect_driver_rule()
{
	local n

	[ "$(tc_hw_state "" xfn0 1)" = in_hw ]
	check_err $? "netdevsim did not take the rule (not in_hw)"
	n=$("$XF_CLI" -j show | jq length)
	[ "$n" = 0 ]
	check_err $? "xdp_flow holds $n rules with flow-offload-xdp off"
	send_expect xfn 10.0.9.1 $N -- pk:xfn0/1+$N hw:xfn0/1+0
}

# expect_refused <state>: `ethtool -K xfn0 flow-offload-xdp` to the other
# state is refused while a block is bound, the request is dropped (not
# "off [requested on]", which nothing would apply), and the kernel log
# says why.
expect_refused()
{
	local mark line other=on

	[ "$1" = on ] && other=off
	mark=$(dmesg_mark "refused-$other")
	ethtool -K xfn0 flow-offload-xdp "$other" 2>/dev/null
	line=$(ethtool -k xfn0 | grep '^flow-offload-xdp:')
	[ "$line" = "flow-offload-xdp: $1" ]
	check_err $? "ethtool -k after the refused request: '$line', not 'flow-offload-xdp: $1'"
	dmesg_since "$mark" | grep -q "xfn0: flow-offload-xdp cannot change while flow blocks are bound"
	check_err $? "the kernel log does not say why: $(dmesg_since "$mark" | tail -n 3)"
}

# nsim_netdev <id>: the netdev of netdevsim device <id>.
nsim_netdev()
{
	ls "/sys/bus/netdevsim/devices/netdevsim$1/net/" 2>/dev/null | head -n 1
}

RET=0
xf_load && xf_wait_helper
check_err $? "the module or its helper did not come up"
modprobe netdevsim &&
	echo "$NSIM_A 1" >/sys/bus/netdevsim/new_device &&
	echo "$NSIM_B 1" >/sys/bus/netdevsim/new_device
check_err $? "cannot create netdevsim devices"
# udev (the guest runs it) renames new devices (eth0 to eni<id>np1): the
# names once it is done.
command -v udevadm >/dev/null && udevadm settle -t 10
a=$(nsim_netdev "$NSIM_A") b=$(nsim_netdev "$NSIM_B")
err=$( { ip link set dev "$a" name xfn0 && ip netns add xfn &&
	 ip link set dev "$b" netns xfn name xfn1; } 2>&1)
rc=$?
ns_register xfn
check_err $rc "cannot name the netdevsim devices ($a, $b): $err"
exec {nsfd_a}</proc/self/ns/net {nsfd_b}</var/run/netns/xfn
echo "$nsfd_a:$(cat /sys/class/net/xfn0/ifindex) $nsfd_b:$(ip netns exec xfn cat /sys/class/net/xfn1/ifindex)" \
	>/sys/bus/netdevsim/link_device
check_err $? "cannot link xfn0 and xfn1"
ip addr add 10.0.9.1/24 dev xfn0 && ip link set dev xfn0 up &&
	ip -n xfn addr add 10.0.9.2/24 dev xfn1 && ip -n xfn link set dev xfn1 up &&
	ip -n xfn neigh replace 10.0.9.1 lladdr "$(cat /sys/class/net/xfn0/address)" dev xfn1 nud permanent
check_err $? "cannot address xfn0 and xfn1"
ethtool -K xfn0 hw-tc-offload on && ethtool -k xfn0 | grep -q '^hw-tc-offload: on'
check_err $? "netdevsim's own hw-tc-offload does not go on: $(ethtool -k xfn0 | grep hw-tc-offload)"
log_setup "setup: module, two linked netdevsim devices, xfn0 in this namespace"
[ $RET -eq 0 ] || exit "$EXIT_STATUS"

RET=0
add_rule
expect_driver_rule
log_test "flow-offload-xdp off: the rule goes to netdevsim's own offload (in_hw, nothing in xdp_flow, TC drops $N packets)"

RET=0
expect_refused off
log_test "flow-offload-xdp cannot go on while netdevsim has the block: request dropped, the kernel log says why"

RET=0
tc qdisc del dev xfn0 clsact && ethtool -K xfn0 flow-offload-xdp on
check_err $? "ethtool -K xfn0 flow-offload-xdp on failed with no block bound"
wait_enabled_by xfn0 flow-offload-xdp
check_err $? "xfn0 was not enabled: $("$XF_CLI" status 2>&1)"
add_rule
wait_dev_attached xfn0 10
check_err $? "the datapath is not on xfn0"
[ "$(tc_hw_state "" xfn0 1)" = in_hw ]
check_err $? "the rule is not in_hw"
n=$("$XF_CLI" -j show dev xfn0 | jq length)
[ "$n" = 1 ]
check_err $? "xdp_flow holds $n rules of xfn0, not 1"
send_expect xfn 10.0.9.1 $N -- hw:xfn0/1+$N
log_test "flow-offload-xdp on: the rule goes to xdp_flow and drops in XDP ($N hardware packets)"

RET=0
expect_refused on
log_test "flow-offload-xdp cannot go off while xdp_flow has the block: request dropped, the kernel log says why"

RET=0
tc qdisc del dev xfn0 clsact && ethtool -K xfn0 flow-offload-xdp off
check_err $? "ethtool -K xfn0 flow-offload-xdp off failed with no block bound"
wait_enabled_by xfn0 ""
check_err $? "xfn0 is still enabled after flow-offload-xdp went off"
add_rule
expect_driver_rule
log_test "flow-offload-xdp off again (its block removed first): the rule goes to netdevsim as before"

exit $EXIT_STATUS
