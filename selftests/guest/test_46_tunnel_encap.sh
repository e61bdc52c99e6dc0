#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Encapsulation: tunnel_key set, then a redirect to a tunnel device, as
# Open vSwitch writes the output of a VM's frames to a remote hypervisor:
# a VXLAN device in external mode (OVS's vxlan_sys_4789) and a Geneve
# device (genev_sys_6081), also with a Geneve option as OVN gives one.
# The tc hook sets the tunnel's metadata with bpf_skb_set_tunnel_key()
# (and bpf_skb_set_tunnel_opt()) and redirects the frame to the device, whose
# transmit path encapsulates it as it does after TC's act_tunnel_key: the
# rule is in_hw, every packet counted in hardware, and the outer packets
# are those TC alone sends, byte for byte but the IPv4 ids and what
# checksums cover them (see capture()). The XDP hook refuses
# the rule with a message naming the hook; TC runs it and the same frames
# arrive.
#
# The remote hypervisor is xfb: a VXLAN device, vxb, and a Geneve device,
# gnb (VNI 42 both), over veth_b, the underlay, whose other end is xfv1
# (10.0.2.254). xfa, the VM, sends through xfv0, where the rules are: to
# 192.168.42.2 over VXLAN, to 192.168.43.2 over Geneve.
#
# With a queueing qdisc on the tunnel device the tc hook leaves the frames
# to TC (bpf_skb_set_tunnel_key()'s metadata is per CPU: a frame that
# waited in the queue would leave with the next frame's).
#
# Refused on both hooks, in software where TC runs them: a VXLAN
# destination port other than the device's (bpf_skb_set_tunnel_key() has
# no port, so the device would use its own) and a redirect after
# tunnel_key set to another kind of device.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"
source "$XF_ROOT/selftests/guest/tunnel_lib.sh"

N=50
# the counters of the rule at pref 1: all its packets, and XDP's
PK=fn:tunnel_act_stat/xfv0/1/packets
HW=fn:tunnel_act_stat/xfv0/1/hw_packets
TMPD=$(mktemp -d)

cleanup()
{
	tunnel_cleanup
	rm -rf "$TMPD"
	xf_test_cleanup
}

# encap_rule <pref> <inner dst> <dev> [tc flags] [tunnel_key args]: the
# rule on xfv0 for <inner dst>, out of <dev>; prints tc's output.
encap_rule()
{
	local pref=$1 dst=$2 dev=$3 flags=${4:-} tun=${5:-}

	tc filter add dev xfv0 ingress pref "$pref" protocol ip flower \
		verbose $flags dst_ip "$dst" \
		action tunnel_key set src_ip 10.0.2.254 dst_ip 10.0.2.1 \
		id $TUN_VNI $tun ttl 64 \
		action mirred egress redirect dev "$dev" 2>&1
}

# capture <name> <inner dst> <udp port> <inner dev> <check>...: N
# datagrams from xfa to <inner dst> (from a fixed port: the outer UDP
# source port is the inner flow's hash), checked to arrive at veth_b and at
# <inner dev> in xfb, and by the other checks; the outer packets
# captured at veth_b in $TMPD/<name>, with what differs between two runs
# of the same datagrams zeroed: the outer IPv4 id and header checksum (the
# kernel numbers each packet), the inner IPv4 id and header checksum
# (xfa's numbering goes on from one run to the next), and the outer UDP
# checksum, which covers them. The inner frame follows an 8-byte VXLAN or
# Geneve header and the options (OPTS bytes): its IPv4 header is at byte
# 64 + OPTS.
capture()
{
	local name=$1 dst=$2 port=$3 dev=$4 ip=$((64 + OPTS))

	shift 4
	tunnel_capture "$TMPD/$name" xfb veth_b \
		"src host 10.0.2.254 and udp dst port $port" \
		"18-20,24-26,40-42,$((ip + 4))-$((ip + 6)),$((ip + 10))-$((ip + 12))" \
		xfa "$dst" $N 9 18 4242 -- udp:xfb/veth_b+$N "udp:xfb/$dev+$N" "$@"
}

# tunnel_case <kind> <inner dst> <udp port> <host dev> <inner dev>
# [<geneve_opts>]: the same traffic with TC alone (the rule skip_hw),
# then offered to xdp_flow; with Geneve options (one of 4 bytes), a
# tunnel_key set that gives them.
tunnel_case()
{
	local kind=$1 dst=$2 port=$3 dev=$4 idev=$5 opts=${6:-} out st kinds
	local want='["tunnel_set","redirect"]' tun=""

	OPTS=0
	if [ -n "$opts" ]; then
		tun="geneve_opts $opts"
		want='["tunnel_set","tunnel_opts","redirect"]'
		OPTS=8
	fi
	RET=0
	out=$(encap_rule 1 "$dst" "$dev" skip_hw "$tun")
	check_err $? "tc filter add (skip_hw) failed: $out"
	capture "$kind-software" "$dst" "$port" "$idev" $PK+$N $HW+0
	tc filter del dev xfv0 ingress pref 1
	check_err $? "tc filter del failed"
	log_test "$kind, TC alone: $N datagrams reach $idev in xfb"

	RET=0
	out=$(encap_rule 1 "$dst" "$dev" "" "$tun")
	check_err $? "tc filter add failed: $out"
	st=$(tc_hw_state "" xfv0 1)
	if [ "$hook" = tc ]; then
		[ "$st" = in_hw ]
		check_err $? "the rule is $st on the tc hook"
		kinds=$(xf_rule_json xfv0 1 | jq -c '[.actions[].kind]')
		[ "$kinds" = "$want" ]
		check_err $? "xdp-flow show lists the actions as $kinds"
		capture "$kind-offload" "$dst" "$port" "$idev" $PK+$N $HW+$N
	else
		[ "$st" = not_in_hw ]
		check_err $? "the rule is $st on the XDP hook"
		echo "$out" | grep -q "XDP hook does not offload tunnel_key set"
		check_err $? "tc printed no reason naming the hook: '$out'"
		capture "$kind-offload" "$dst" "$port" "$idev" $PK+$N $HW+0
	fi
	tunnel_compare "$TMPD/$kind-software" "$TMPD/$kind-offload" $N
	if [ "$hook" = tc ]; then
		log_test "$kind, tc hook: tunnel_key set and the redirect to $dev in_hw, $N packets counted in hardware; the outer packets are TC's, byte for byte"
	else
		log_test "$kind, XDP hook: the rule stays in software ($out); the outer packets are TC's"
	fi
	if [ "$hook" = tc ]; then
		# The metadata the tc hook sets is per CPU: with a queue on
		# the device, TC sends the frames (the module takes the
		# device out of xf_egress as the qdisc is announced).
		RET=0
		tunnel_queue_check "$dev" $PK $HW $N xfa "$dst" $N 9 18 4242 -- \
			udp:xfb/veth_b+$N "udp:xfb/$idev+$N"
		log_test "$kind, tc hook: with a qdisc on $dev TC sends the $N frames; without, XDP again"
	fi
	tc filter del dev xfv0 ingress pref 1
}

trap cleanup EXIT
require_cmd tcpdump
tunnel_require
xf_test_setup || exit 1

RET=0
tunnel_setup
check_err $? "cannot set up the tunnel devices"
xf_check_enable_xfv0
hook=$(xf_dev_hook xfv0)
log_setup "setup: xfx (VXLAN, external) and xfg (Geneve, external) on the host, vxb and gnb (VNI $TUN_VNI) in xfb, offload on xfv0 (hook $hook)"

tunnel_case vxlan 192.168.42.2 4789 xfx vxb
tunnel_case geneve 192.168.43.2 6081 xfg gnb
# OVN's option class (0x0102), of a type without the critical bit, which
# gnb, not in external mode, would drop
tunnel_case geneve-options 192.168.43.2 6081 xfg gnb 0102:00:0000002a

RET=0
out=$(encap_rule 2 192.168.42.2 xfx "" "dst_port 4790")
check_err $? "tc filter add (dst_port 4790) failed: $out"
[ "$(tc_hw_state "" xfv0 2)" = not_in_hw ]
check_err $? "a tunnel_key set with another port than xfx's is in_hw"
if [ "$hook" = tc ]; then
	echo "$out" | grep -q "dst_port is not the VXLAN device's"
	check_err $? "tc printed no reason about the port: '$out'"
fi
tc filter del dev xfv0 ingress pref 2
out=$(encap_rule 3 192.168.42.2 xfv1)
check_err $? "tc filter add (redirect to xfv1) failed: $out"
[ "$(tc_hw_state "" xfv0 3)" = not_in_hw ]
check_err $? "a tunnel_key set before a redirect to a veth is in_hw"
if [ "$hook" = tc ]; then
	echo "$out" | grep -q "to another device than VXLAN or Geneve"
	check_err $? "tc printed no reason about the device: '$out'"
fi
tc filter del dev xfv0 ingress pref 3
log_test "refused, in software: another VXLAN destination port than the device's, a redirect to a veth"

exit $EXIT_STATUS
