#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ethtool is a switch for offload, as on a NIC: on a stock kernel the
# module offers hw-tc-offload on the devices it serves (which have no TC
# offload of their own, so the core leaves the bit alone); on a kernel with
# the patch series under drivers/ the core offers flow-offload-xdp on every
# Ethernet device. `ethtool -K DEV <feature> on|off` enables and disables
# offload exactly as xdp-flow enable and disable do; those turn the feature
# on and off in turn. The bit means nothing where the module does not
# serve the device (another namespace, loopback), waits while no helper
# runs, goes off again when enabling fails (the kernel log says why), and
# hw-tc-offload goes with the module.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=40
TMP=$(mktemp -d)

trap 'xf_test_cleanup; rm -rf "$TMP"' EXIT

# The switch: flow-offload-xdp where the kernel has it (CORE=1: the core
# offers it), hw-tc-offload otherwise (the module offers it).
if ethtool -k lo | grep -q '^flow-offload-xdp:'; then
	FEAT=flow-offload-xdp CORE=1
else
	FEAT=hw-tc-offload CORE=0
fi

# hw_tc <ns> <dev>: what `ethtool -k` says of $FEAT ("off", "on",
# "off [fixed]"...).
hw_tc()
{
	local -a ns=()

	[ -n "$1" ] && ns=(ip netns exec "$1")
	"${ns[@]}" ethtool -k "$2" | sed -n "s/^$FEAT: //p"
}

# wait_switch <dev> <switch|none> [timeout_s]: xdp-flow status shows
# <dev> enabled by <switch> (xdp-flow, hw-tc-offload), or not at all.
wait_switch()
{
	local end=$((SECONDS + ${3:-10})) got

	while :; do
		got=$(xf_dev_switch "$1" |
		      awk 'BEGIN { s = "none" } { s = $0 } END { print s }')
		[ "$got" = "$2" ] && return 0
		[ $SECONDS -ge $end ] && { xf_err "$1: switch $got, not $2"; return 1; }
		sleep 0.1
	done
}

# wait_hw_tc <dev> <state> [timeout_s]
wait_hw_tc()
{
	local end=$((SECONDS + ${3:-10}))

	until [ "$(hw_tc "" "$1")" = "$2" ]; do
		[ $SECONDS -ge $end ] && { xf_err "$1: $FEAT $(hw_tc "" "$1"), not $2"; return 1; }
		sleep 0.1
	done
}

xf_test_setup || exit 1

RET=0
st=$(hw_tc "" xfv0)
[ "$st" = off ]
check_err $? "xfv0: $FEAT is '$st', not 'off' (offered, off by default)"
st=$(hw_tc "" lo)
[ "$st" = "off [fixed]" ]
check_err $? "lo: $FEAT is '$st', not 'off [fixed]'"
if [ $CORE = 0 ]; then
	st=$(hw_tc xfa veth_a)
	[ "$st" = "off [fixed]" ]
	check_err $? "veth_a in namespace xfa: $FEAT is '$st', not 'off [fixed]'"
	ip netns exec xfa ethtool -K veth_a "$FEAT" on 2>/dev/null
	[ "$(hw_tc xfa veth_a)" = "off [fixed]" ]
	check_err $? "veth_a's $FEAT turned on outside the initial namespace"
	log_test "$FEAT offered on xfv0 (off), fixed off on lo and in other namespaces"
else
	ip netns exec xfa ethtool -K veth_a "$FEAT" on
	check_err $? "ethtool -K veth_a $FEAT on in namespace xfa failed"
	sleep 1
	n=$(xf_status_get '.devices | length')
	[ "$n" = 0 ]
	check_err $? "$n devices enabled after veth_a's $FEAT went on in another namespace"
	ip netns exec xfa ethtool -K veth_a "$FEAT" off
	log_test "$FEAT offered on xfv0 (off), fixed off on lo; on in another namespace, it enables nothing"
fi

RET=0
tc qdisc add dev xfv0 clsact &&
	tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "tc filter add failed"
ethtool -K xfv0 "$FEAT" on
check_err $? "ethtool -K xfv0 "$FEAT" on failed"
wait_switch xfv0 "$FEAT" && wait_dev_attached xfv0 10
check_err $? "ethtool's switch did not enable xfv0: $("$XF_CLI" status 2>&1)"
"$XF_CLI" status | grep -q "switched on by: ethtool $FEAT"
check_err $? "xdp-flow status does not name the switch: $("$XF_CLI" status 2>&1)"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ]
check_err $? "the rule is not in_hw after ethtool on"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 hw:xfv0/1+$N
log_test "ethtool -K xfv0 "$FEAT" on: the rule it had goes in_hw and drops in XDP ($N hardware packets)"

RET=0
ethtool -K xfv0 "$FEAT" off
check_err $? "ethtool -K xfv0 "$FEAT" off failed"
wait_switch xfv0 none
check_err $? "ethtool's switch did not disable xfv0"
wait_xdp_prog xfv0 absent 10 && ! xf_dp_linked xfv0
check_err $? "the datapath stays on xfv0 after ethtool off"
st=$(tc_hw_state "" xfv0 1)
[ "$st" != in_hw ]
check_err $? "the rule is still in_hw after ethtool off"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 pk:xfv0/1+$N hw:xfv0/1+0
log_test "ethtool -K xfv0 "$FEAT" off: the rule drops in software ($N packets, hardware count unchanged)"

RET=0
xf_enable_dev xfv0 && wait_dev_attached xfv0 10
check_err $? "xdp-flow enable dev xfv0 failed"
wait_hw_tc xfv0 on
check_err $? "xdp-flow enable left $FEAT off"
wait_switch xfv0 xdp-flow
check_err $? "xdp-flow status does not say xdp-flow enabled xfv0"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 hw:xfv0/1+$N
ethtool -K xfv0 "$FEAT" off
check_err $? "ethtool -K xfv0 "$FEAT" off failed"
wait_switch xfv0 none
check_err $? "ethtool off did not disable what xdp-flow enabled"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 pk:xfv0/1+$N hw:xfv0/1+0
xf_enable_dev xfv0 && wait_dev_attached xfv0 10
check_err $? "xdp-flow enable dev xfv0 failed the second time"
"$XF_CLI" disable dev xfv0
check_err $? "xdp-flow disable dev xfv0 failed"
wait_hw_tc xfv0 off
check_err $? "xdp-flow disable left $FEAT on"
log_test "xdp-flow enable and disable turn $FEAT on and off; ethtool off disables what xdp-flow enabled"

RET=0
ethtool -K xfv0 "$FEAT" on
check_err $? "ethtool -K xfv0 "$FEAT" on failed"
wait_switch xfv0 "$FEAT" && wait_dev_attached xfv0 10
check_err $? "ethtool's switch did not enable xfv0 again"
mark=$(dmesg_mark unload)
xf_unload
check_err $? "rmmod xdp_flow failed"
# hw-tc-offload goes with the module; flow-offload-xdp is the core's,
# and says what the user wants.
want="off [fixed]"
[ $CORE = 1 ] && want=on
st=$(hw_tc "" xfv0)
[ "$st" = "$want" ]
check_err $? "after rmmod xfv0's $FEAT is '$st', not '$want'"
[ "$(xdp_prog_id "" xfv0)" = 0 ] && ! xf_dp_linked xfv0
check_err $? "the datapath stays on xfv0 after rmmod"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 pk:xfv0/1+$N
bad=$(dmesg_bad_since "$mark")
[ -z "$bad" ]
check_err $? "kernel log: $bad"
log_test "rmmod with $FEAT on: the datapath goes, $FEAT is $want, TC drops in software"

# The module starts a wrapper that holds its helper back: meanwhile no
# helper has registered.
wrapper=$(xf_held_umh "$TMP") && touch "$TMP/hold" || exit 1

RET=0
xf_load umh_path="$wrapper"
check_err $? "modprobe xdp_flow failed"
want=off
[ $CORE = 1 ] && want=on
st=$(hw_tc "" xfv0)
[ "$st" = "$want" ]
check_err $? "after modprobe xfv0's $FEAT is '$st', not '$want'"
mark=$(dmesg_mark held)
ethtool -K xfv0 "$FEAT" on && ethtool -K xfv1 "$FEAT" on
check_err $? "ethtool -K $FEAT on failed"
sleep 1
[ "$(hw_tc "" xfv0)" = on ] && [ "$(hw_tc "" xfv1)" = on ]
check_err $? "$FEAT did not stay on while no helper runs: xfv0 $(hw_tc "" xfv0), xfv1 $(hw_tc "" xfv1)"
[ "$(xf_dev_state xfv1)" = none ]
check_err $? "xfv1 is enabled ($(xf_dev_state xfv1)) with no helper registered"
log_test "ethtool on while no helper has registered: the feature stays on, the device waits"

RET=0
rm -f "$TMP/hold"
xf_wait_helper "$(xf_helper_wait_min 45)"
check_err $? "the helper did not come up"
wait_switch xfv1 "$FEAT" 20
check_err $? "xfv1 was not enabled once the helper registered"
wait_hw_tc xfv0 off 20
check_err $? "xfv0's $FEAT stays on, although its ingress rules predate the module"
dmesg_since "$mark" | grep -q "xdp_flow: xfv0: $FEAT on: cannot enable offload: the device's ingress rules predate the module"
check_err $? "the kernel log does not say why xfv0 was not enabled: $(dmesg_since "$mark" | grep xdp_flow)"
[ "$(xf_dev_state xfv0)" = none ]
check_err $? "xfv0 is enabled although its rules predate the module"
ethtool -K xfv1 "$FEAT" off && wait_switch xfv1 none
check_err $? "xfv1 was not disabled"
log_test "once a helper registered: xfv1 is enabled; xfv0, whose ingress rules predate the module, is not, its feature goes off and the kernel log says why"

RET=0
tc qdisc del dev xfv0 clsact && tc qdisc add dev xfv0 clsact &&
	tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.2.1 action drop
check_err $? "cannot re-create xfv0's clsact qdisc and rule"
ethtool -K xfv0 "$FEAT" on
check_err $? "ethtool -K xfv0 "$FEAT" on failed"
wait_switch xfv0 "$FEAT" && wait_dev_attached xfv0 10
check_err $? "ethtool's switch did not enable xfv0"
[ "$(tc_hw_state "" xfv0 1)" = in_hw ]
check_err $? "the rule is not in_hw"
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+0 hw:xfv0/1+$N
log_test "its clsact re-created, ethtool on offloads xfv0's rule again ($N hardware packets)"

RET=0
ip link add xfsw0 type veth peer name xfsw1 &&
	ethtool -K xfsw0 "$FEAT" on
check_err $? "cannot add a veth pair and turn xfsw0's $FEAT on"
wait_switch xfsw0 "$FEAT"
check_err $? "xfsw0 was not enabled"
ip netns add xfsw && ns_register xfsw && ip link set dev xfsw0 netns xfsw
check_err $? "cannot move xfsw0 to namespace xfsw"
wait_switch xfsw0 none 5
check_err $? "xfsw0 is still listed after leaving the initial namespace"
want="off [fixed]"
[ $CORE = 1 ] && want=on
st=$(hw_tc xfsw xfsw0)
[ "$st" = "$want" ]
check_err $? "xfsw0 in namespace xfsw: $FEAT is '$st', not '$want'"
ip -n xfsw link set dev xfsw0 netns 1
check_err $? "cannot move xfsw0 back"
if [ $CORE = 0 ]; then
	st=$(hw_tc "" xfsw0)
	[ "$st" = off ]
	check_err $? "xfsw0 back in the initial namespace: $FEAT is '$st', not 'off'"
	what="loses hw-tc-offload; back, it is offered again, off"
else
	wait_switch xfsw0 "$FEAT"
	check_err $? "xfsw0, back with $FEAT on, was not enabled again"
	what="keeps flow-offload-xdp; back, it is enabled again"
fi
ip link del dev xfsw0
ip netns del xfsw
log_test "a device that leaves the namespace is disabled and $what"

exit $EXIT_STATUS
