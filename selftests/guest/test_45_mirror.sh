#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Several outputs: mirred egress mirror, as Open vSwitch writes floods and
# mirror ports. The tc hook sends the copy with bpf_clone_redirect(),
# through the target's transmit path as mirred does, then carries out the
# rest of the rule: a redirect, or TC's pass of the frame to the stack
# (past TC's filters, which would otherwise mirror it again). The XDP
# hook refuses mirrors: the rule stays in software and TC runs it. A drop
# after a mirror is refused on both (offloaded counters would give the
# mirror the drop's drops). Either way the same frames arrive where TC
# alone sends them; on the tc hook the rules it runs are in_hw and count
# every packet as hardware packets.
#
# The copies go to a dummy device, xfm, whose transmit counter counts
# them. Deleting xfm turns the rules that mirror there into software
# rules: mirred lets go of a device that went away and sends no copy,
# while the tc hook mirrors by ifindex.
#
# Internal ports: mirred ingress redirect and mirror into a dummy device,
# xfi, whose stack forwards the frames on to veth_c. The tc hook enters
# them with bpf_redirect() (or bpf_clone_redirect()) and BPF_F_INGRESS,
# which classifies the frame for xfi anew: where xfi's address would
# classify it otherwise than xfv0's did (PACKET_HOST there), the frame
# goes to TC, which enters it as it is. With xfi's address that of xfv0,
# the tc hook does it; with another, TC does, and the same frames arrive.
# skbedit ptype before the redirect (Open vSwitch's way into an internal
# port) gives the frame the type the check compares: PACKET_OTHERHOST,
# which xfi's own address gives too, runs in XDP, and xfi's stack drops
# the frames, as with TC alone.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=100

cleanup()
{
	ip link del xfm 2>/dev/null
	ip link del xfi 2>/dev/null
	xf_test_cleanup
}

# tx_packets <dev>: what <dev> transmitted.
tx_packets()
{
	cat "/sys/class/net/$1/statistics/tx_packets"
}

trap cleanup EXIT
xf_test_setup || exit 1

RET=0
ip link add xfm type dummy && ip link set xfm up
check_err $? "cannot add the dummy device xfm"
xf_check_enable_xfv0
hook=$(xf_dev_hook xfv0)
out=$(tc filter add dev xfv0 ingress pref 1 protocol ip flower verbose \
	dst_ip 10.0.2.1 action mirred egress mirror dev xfm \
	action mirred egress redirect dev xfv1 2>&1)
check_err $? "tc filter add pref 1 failed: $out"
tc filter add dev xfv0 ingress pref 2 protocol ip flower \
	dst_ip 10.0.3.1 action mirred egress mirror dev xfm
check_err $? "tc filter add pref 2 failed"
tc filter add dev xfv0 ingress pref 3 protocol ip flower \
	dst_ip 10.0.3.2 action mirred egress mirror dev xfm action drop
check_err $? "tc filter add pref 3 failed"
log_setup "setup: three mirror rules on xfv0 (hook $hook)"

# What each pref's rule shows and counts: in_hw with every packet counted
# in hardware on the tc hook; in software, none counted there, on the XDP
# hook. Pref 3 (a drop after the mirror) in software on both.
RET=0
[ "$(tc_hw_state "" xfv0 3)" = not_in_hw ]
check_err $? "the drop after a mirror is in_hw"
for pref in 1 2; do
	st=$(tc_hw_state "" xfv0 $pref)
	if [ "$hook" = tc ]; then
		[ "$st" = in_hw ]
	else
		[ "$st" = not_in_hw ]
	fi
	check_err $? "pref $pref shows $st on the $hook hook"
done
if [ "$hook" = tc ]; then
	[ "$(xf_rule_json xfv0 2 | jq -c '[.actions[].kind]')" = '["mirror","pass"]' ]
	check_err $? "xdp-flow show lists pref 2's actions as $(xf_rule_json xfv0 2 | jq -c '[.actions[].kind]')"
	log_test "tc hook: the mirror rules are in_hw; xdp-flow show lists mirror and the pass TC does after it"
else
	echo "$out" | grep -q 'XDP hook does not offload mirror'
	check_err $? "tc printed no reason naming the hook: '$out'"
	log_test "XDP hook: the mirror rules stay in software, with the reason ($out)"
fi

if [ "$hook" = tc ]; then
	hw="hw:xfv0/1+$N"
else
	hw="hw:xfv0/1+0"
fi
RET=0
send_expect xfa 10.0.2.1 $N -- fn:tx_packets/xfm+$N udp:xfb/veth_b+$N \
	udp:xfc/veth_c+0 pk:xfv0/1+$N "$hw"
log_test "mirror, redirect: $N copies out of xfm, $N frames to veth_b"

RET=0
send_expect xfa 10.0.3.1 $N -- fn:tx_packets/xfm+$N udp:xfc/veth_c+$N \
	udp:xfb/veth_b+0 pk:xfv0/2+$N "${hw/\/1+/\/2+}"
log_test "mirror alone: $N copies, and the stack routes the $N frames to veth_c"

RET=0
send_expect xfa 10.0.3.2 $N -- fn:tx_packets/xfm+$N udp:xfc/veth_c+0 \
	udp:xfb/veth_b+0 pk:xfv0/3+$N hw:xfv0/3+0
log_test "mirror, drop (in TC): $N copies, no frame arrives"

# The target goes away: the rules become software rules; TC sends no copy
# and goes on with the rest of the rule.
RET=0
ip link del xfm
check_err $? "cannot delete xfm"
for pref in 1 2 3; do
	why=$(xf_rule_json xfv0 $pref | jq -r 'select(.software) | .why')
	# pref 3 (a drop after the mirror) is in software from the start
	if [ "$hook" = tc ] && [ $pref != 3 ]; then
		[[ "$why" == "mirror target gone"* ]]
	else
		[ -n "$why" ]
	fi
	check_err $? "xdp-flow show lists pref $pref with '$why', not as a software rule"
done
send_expect xfa 10.0.2.1 $N -- udp:xfb/veth_b+$N pk:xfv0/1+$N hw:xfv0/1+0
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N hw:xfv0/2+0
log_test "mirror target deleted: the rules go to software, TC sends the frames on without copies"

# ---- mirred ingress ----
RET=0
for pref in 1 2 3; do
	tc filter del dev xfv0 ingress pref $pref
done
ip link add xfi address "$XF_MAC_XFV0" type dummy &&
	sysctl -qw net.ipv4.conf.xfi.rp_filter=0 && ip link set xfi up
check_err $? "cannot add the dummy device xfi"
out=$(tc filter add dev xfv0 ingress pref 4 protocol ip flower verbose \
	dst_ip 10.0.3.1 action mirred ingress redirect dev xfi 2>&1)
check_err $? "tc filter add pref 4 failed: $out"
if [ "$hook" = tc ]; then
	[ "$(tc_hw_state "" xfv0 4)" = in_hw ]
	check_err $? "the ingress redirect is not in_hw on the tc hook"
	hw4="hw:xfv0/4+$N"
else
	echo "$out" | grep -q 'XDP hook does not offload mirred ingress'
	check_err $? "tc printed no reason naming the hook: '$out'"
	hw4="hw:xfv0/4+0"
fi
log_setup "setup: xfi, a dummy with xfv0's address, and a mirred ingress redirect into it"

RET=0
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N udp:xfb/veth_b+0 \
	pk:xfv0/4+$N "$hw4"
log_test "ingress redirect into xfi, which forwards the $N frames to veth_c ($([ "$hook" = tc ] && echo "in XDP, tc hook" || echo "TC, $hook hook"))"

# Another address: bpf_redirect() would take the frames as PACKET_OTHERHOST
# on xfi, mirred keeps PACKET_HOST: TC does it.
RET=0
ip link set xfi address 02:00:00:00:07:07
check_err $? "cannot change xfi's address"
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N pk:xfv0/4+$N hw:xfv0/4+0
log_test "xfi with its own address: TC enters the $N frames as they are, none in XDP"

RET=0
ip link set xfi address "$XF_MAC_XFV0"
check_err $? "cannot give xfi xfv0's address back"
tc filter del dev xfv0 ingress pref 4
tc filter add dev xfv0 ingress pref 5 protocol ip flower dst_ip 10.0.3.1 \
	action mirred ingress mirror dev xfi action mirred egress redirect dev xfv1
check_err $? "tc filter add pref 5 failed"
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+$N udp:xfb/veth_b+$N \
	pk:xfv0/5+$N "${hw4/\/4+/\/5+}"
log_test "ingress mirror into xfi, then redirect: $N copies forwarded to veth_c, $N frames to veth_b"

RET=0
tc filter del dev xfv0 ingress pref 5
ip link set xfi address 02:00:00:00:07:07
check_err $? "cannot change xfi's address"
tc filter add dev xfv0 ingress pref 6 protocol ip flower dst_ip 10.0.3.1 \
	action skbedit ptype otherhost action mirred ingress redirect dev xfi
check_err $? "tc filter add pref 6 failed"
send_expect xfa 10.0.3.1 $N -- udp:xfc/veth_c+0 pk:xfv0/6+$N \
	"${hw4/\/4+/\/6+}"
log_test "skbedit ptype otherhost, then ingress redirect into xfi (its own address): xfi's stack drops the $N frames"

exit $EXIT_STATUS
