#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Decapsulation: the rules of a tunnel device in external mode, as Open
# vSwitch writes a remote hypervisor's frames to a VM: on the ingress of
# its VXLAN or Geneve device, flower matches the tunnel metadata the
# device's receive path gave the frame (enc_src_ip, enc_dst_ip,
# enc_key_id, enc_dst_port) and the inner frame, then tunnel_key unset
# and a redirect to the VM's veth. With offload enabled on the tunnel
# device (hook auto: the tc hook, where the kernel has tcx), the tc hook
# reads the metadata with bpf_skb_get_tunnel_key() and runs the rule: it
# is in_hw, every packet counted in hardware, and the frames that reach
# the VM are those TC alone delivers, byte for byte but the IPv4 id and
# header checksum (the sender numbers each datagram). Rules whose
# metadata differs in key or in outer source miss, in XDP too. Where
# the hook is XDP (no tcx: generic XDP on the tunnel device, which sees
# no metadata) the rules are refused with a message naming the hook, and
# TC delivers the same frames.
#
# Geneve options (flower's geneve_opts, OVN's option 0102:80 with part of
# its data masked), matched as flower matches them: behind a rule of
# another value and one of another class, which miss; with two options
# (16 bytes) the rule of one misses, as in TC (flower masks the length
# with the rule's own), and the next rule takes the frames.
#
# An IPv6 underlay: the outer addresses matched whole (/128), the key
# holding their digests and the rule the addresses; a rule of a prefix
# stays in software with a message.
#
# tunnel_key unset: the tc hook cannot drop the metadata; veth drops it
# as it hands the frame to its peer, so the rule runs only while nothing
# is on the veth's transmit path: with a queueing qdisc on xfv0, TC runs
# it. Refused on both hooks: unset before a redirect to another kind of
# device, an enc_dst_port that is not the device's own, Geneve options
# on a VXLAN device or past their first 8 bytes.
#
# The scene is tunnel_lib.sh's: xfb, the remote hypervisor, sends from
# vxb (VXLAN) to 192.168.42.1 and from gnb (Geneve) to 192.168.43.1,
# both addresses of xfa (the VM) on veth_a; the host's xfx and xfg
# receive the outer packets on xfv1.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"
source "$XF_ROOT/selftests/guest/tunnel_lib.sh"

N=50
# the rule that decapsulates: pref 3, after the two that must miss
PREF=3
TMPD=$(mktemp -d)

cleanup()
{
	tunnel_cleanup
	rm -rf "$TMPD"
	xf_test_cleanup
}

# decap_rule <dev> <pref> <inner dst> [tc flags] [matches] [out dev]
# [port]: the rule on <dev> for <inner dst> from xfb's end of the tunnel;
# prints tc's output.
decap_rule()
{
	local dev=$1 pref=$2 dst=$3 flags=${4:-} match=${5:-} out=${6:-xfv0}
	local port=${7:-}

	# shellcheck disable=SC2086  # flags and matches: words
	tc filter add dev "$dev" ingress pref "$pref" protocol ip flower \
		verbose $flags enc_dst_ip "$ENC_DST" \
		${match:-enc_src_ip 10.0.2.1 enc_key_id $TUN_VNI} \
		enc_dst_port "$port" dst_ip "$dst" \
		action tunnel_key unset \
		action mirred egress redirect dev "$out" 2>&1
}

# capture <name> <inner dst> <check>...: N datagrams from xfb to <inner
# dst>, checked to arrive at veth_a and by the other checks; the frames
# captured at veth_a in $TMPD/<name>, their IPv4 id and header checksum
# zeroed (xfb's numbering goes on from one run to the next).
capture()
{
	local name=$1 dst=$2

	shift 2
	tunnel_capture "$TMPD/$name" xfa veth_a "udp and dst host $dst" \
		18-20,24-26 xfb "$dst" $N 9 18 4242 -- "udp:xfa/veth_a+$N" "$@"
}

# The metadata of the rule that decapsulates (the outer destination, the
# rest), of the two before it that must miss (another key, another
# source), and what xdp-flow show lists of the first (jq's query and its
# answer); decap_case's, set for each.
ENC_DST=10.0.2.254
MATCH="enc_src_ip 10.0.2.1 enc_key_id $TUN_VNI"
MISS1="enc_src_ip 10.0.2.1 enc_key_id $((TUN_VNI + 1))"
MISS2="enc_src_ip 10.0.2.99 enc_key_id $TUN_VNI"
SHOW_Q='[.key.enc_key_id, .key.enc_src_ip, [.actions[].kind]]'
SHOW_A="[$TUN_VNI,\"10.0.2.1/32\",[\"tunnel_unset\",\"redirect\"]]"
# 1: decap_case also checks that a qdisc on xfv0 takes the rule to TC
QUEUE=1

# decap_case <kind> <dev> <port> <inner dst>: the same traffic with TC
# alone (the rule skip_hw), then offered to xdp_flow, behind two rules
# whose metadata differs.
decap_case()
{
	local kind=$1 dev=$2 port=$3 dst=$4 out st kinds
	local pk=fn:tunnel_act_stat/$dev/$PREF/packets
	local hw=fn:tunnel_act_stat/$dev/$PREF/hw_packets

	RET=0
	out=$(decap_rule "$dev" $PREF "$dst" skip_hw "$MATCH" xfv0 "$port")
	check_err $? "tc filter add (skip_hw) failed: $out"
	capture "$kind-software" "$dst" $pk+$N $hw+0
	tc filter del dev "$dev" ingress pref $PREF
	check_err $? "tc filter del failed"
	log_test "$kind, TC alone: $N datagrams from xfb reach veth_a in xfa"

	RET=0
	# shellcheck disable=SC2086  # the matches: words
	out=$(tc filter add dev "$dev" ingress pref 1 protocol ip flower \
		enc_dst_ip "$ENC_DST" $MISS1 dst_ip "$dst" action drop 2>&1 &&
	      tc filter add dev "$dev" ingress pref 2 protocol ip flower \
		enc_dst_ip "$ENC_DST" $MISS2 dst_ip "$dst" action drop 2>&1)
	check_err $? "tc filter add (other metadata) failed: $out"
	out=$(decap_rule "$dev" $PREF "$dst" "" "$MATCH" xfv0 "$port")
	check_err $? "tc filter add failed: $out"
	st=$(tc_hw_state "" "$dev" $PREF)
	if [ "$hook" = tc ]; then
		[ "$st" = in_hw ] &&
			[ "$(tc_hw_state "" "$dev" 1)" = in_hw ] &&
			[ "$(tc_hw_state "" "$dev" 2)" = in_hw ]
		check_err $? "the rules are not all in_hw on the tc hook (decap: $st)"
		kinds=$(xf_rule_json "$dev" $PREF | jq -c "$SHOW_Q")
		[ "$kinds" = "$SHOW_A" ]
		check_err $? "xdp-flow show lists the rule as $kinds"
		capture "$kind-offload" "$dst" $pk+$N $hw+$N \
			"fn:tunnel_act_stat/$dev/1/packets+0" \
			"fn:tunnel_act_stat/$dev/2/packets+0"
	else
		[ "$st" = not_in_hw ]
		check_err $? "the rule is $st on the XDP hook"
		echo "$out" | grep -q "XDP hook does not offload tunnel (enc_\*) matches"
		check_err $? "tc printed no reason naming the hook: '$out'"
		capture "$kind-offload" "$dst" $pk+$N $hw+0 \
			"fn:tunnel_act_stat/$dev/1/packets+0" \
			"fn:tunnel_act_stat/$dev/2/packets+0"
	fi
	tunnel_compare "$TMPD/$kind-software" "$TMPD/$kind-offload" $N
	if [ "$hook" = tc ]; then
		log_test "$kind, tc hook: the enc_ rules in_hw; the other key and the other source miss, tunnel_key unset and the redirect counted $N in hardware; the frames are TC's, byte for byte"
	else
		log_test "$kind, XDP hook: the rules stay in software ($out); the frames are TC's"
	fi
	if [ "$hook" = tc ] && [ $QUEUE = 1 ]; then
		# A queue on xfv0: something on its transmit path could read
		# the metadata tunnel_key unset dropped: TC runs the rule.
		RET=0
		tunnel_queue_check xfv0 $pk $hw $N xfb "$dst" $N 9 18 4242 -- \
			"udp:xfa/veth_a+$N"
		log_test "$kind, tc hook: with a qdisc on xfv0 TC runs tunnel_key unset for the $N frames; without, XDP again"
	fi
	tc filter del dev "$dev" ingress
}

trap cleanup EXIT
require_cmd tcpdump
tunnel_require
xf_test_setup || exit 1

RET=0
tunnel_setup &&
	ip -n xfa addr add 192.168.42.1/32 dev veth_a &&
	ip -n xfa addr add 192.168.43.1/32 dev veth_a &&
	ip -n xfb neigh replace 192.168.42.1 lladdr "$XF_MAC_VETH_A" dev vxb nud permanent &&
	ip -n xfb neigh replace 192.168.43.1 lladdr "$XF_MAC_VETH_A" dev gnb nud permanent &&
	udp_counter_add xfa veth_a &&
	tc qdisc add dev xfx clsact && tc qdisc add dev xfg clsact
check_err $? "cannot set up the tunnel devices"
# The tunnel devices with the hook users get: auto.
"$XF_CLI" enable dev xfx && "$XF_CLI" enable dev xfg
check_err $? "xdp-flow enable dev xfx, xfg failed"
hook=$(xf_dev_hook xfx)
log_setup "setup: xfx (VXLAN, external) and xfg (Geneve, external) on the host, vxb and gnb (VNI $TUN_VNI) in xfb, offload on xfx and xfg (hook $hook)"

decap_case vxlan xfx 4789 192.168.42.1
decap_case geneve xfg 6081 192.168.43.1

# Geneve options, as OVN's receiving side matches them: gnb, now in
# external mode, sends OVN's option (class 0x0102, type 0x80, 4 bytes of
# data: the logical ports), set by tunnel_key on its egress; the rule
# matches part of the data, the rules before it another value and
# another class.
geneve_sender()
{
	tc -n xfb filter del dev gnb egress pref 1 2>/dev/null
	tc -n xfb filter add dev gnb egress pref 1 matchall \
		action tunnel_key set src_ip 10.0.2.1 dst_ip 10.0.2.254 \
		id $TUN_VNI dst_port 6081 geneve_opts "$1" 2>&1
}

RET=0
ip -n xfb link del gnb &&
	ip -n xfb link add gnb address "$XF_MAC_XFV0" type geneve external &&
	ip netns exec xfb sysctl -qw net.ipv6.conf.gnb.disable_ipv6=1 &&
	ip -n xfb addr add 192.168.43.2/24 dev gnb &&
	ip -n xfb link set gnb up &&
	ip -n xfb neigh replace 192.168.43.1 lladdr "$XF_MAC_VETH_A" dev gnb nud permanent &&
	tc -n xfb qdisc add dev gnb clsact &&
	geneve_sender 0102:80:00010002
check_err $? "cannot make gnb send Geneve options"
log_setup "setup: gnb in external mode, its frames with the option 0102:80:00010002"

OPTS="0102:80:00010000/ffff:ff:ffff0000"
MATCH="enc_src_ip 10.0.2.1 enc_key_id $TUN_VNI geneve_opts $OPTS"
MISS1="enc_src_ip 10.0.2.1 enc_key_id $TUN_VNI geneve_opts 0102:80:00010003"
MISS2="enc_src_ip 10.0.2.1 enc_key_id $TUN_VNI geneve_opts 0103:80:00010002"
SHOW_Q='[.key.enc_key_id, .key.geneve_opts, [.actions[].kind]]'
SHOW_A="[$TUN_VNI,\"$OPTS\",[\"tunnel_unset\",\"redirect\"]]"
QUEUE=0
decap_case geneve-options xfg 6081 192.168.43.1

# Two options, 16 bytes: flower masks the options' length with the
# rule's (8), which 16 has no bit of, so the rule misses, in TC as in the
# datapath, and the next one takes the frames.
RET=0
out=$(decap_rule xfg 3 192.168.43.1 "" "$MATCH" xfv0 6081 &&
      decap_rule xfg 4 192.168.43.1 "" "enc_src_ip 10.0.2.1 enc_key_id $TUN_VNI" xfv0 6081 &&
      geneve_sender 0102:80:00010002,0102:81:00000000)
check_err $? "tc filter add or gnb's options failed: $out"
if [ "$hook" = tc ]; then
	[ "$(tc_hw_state "" xfg 3)" = in_hw ] && [ "$(tc_hw_state "" xfg 4)" = in_hw ]
	check_err $? "the rules are not in_hw on the tc hook"
	hw4=$N
else
	hw4=0
fi
send_expect xfb 192.168.43.1 $N 9 18 4242 -- "udp:xfa/veth_a+$N" \
	"fn:tunnel_act_stat/xfg/3/packets+0" \
	"fn:tunnel_act_stat/xfg/4/packets+$N" \
	"fn:tunnel_act_stat/xfg/4/hw_packets+$hw4"
tc filter del dev xfg ingress
log_test "geneve-options, two options: the rule of one misses (its length's bits), the next takes the $N frames ($hw4 in hardware)"

# An IPv6 underlay: vx6 in xfb sends VNI 44 from fd00:2::1 to the host's
# fd00:2::fe on xfv1, where xfx (external: both families) takes it. The
# rule matches both outer addresses whole; the rules before it another
# source and another key.
VNI6=$((TUN_VNI + 2))
RET=0
ip netns exec xfb sysctl -qw net.ipv6.conf.veth_b.disable_ipv6=0 &&
	sysctl -qw net.ipv6.conf.xfv1.disable_ipv6=0 &&
	ip -n xfb addr add fd00:2::1/64 dev veth_b nodad &&
	ip addr add fd00:2::fe/64 dev xfv1 nodad &&
	ip -n xfb neigh replace fd00:2::fe lladdr "$XF_MAC_XFV1" dev veth_b nud permanent &&
	ip neigh replace fd00:2::1 lladdr "$XF_MAC_VETH_B" dev xfv1 nud permanent &&
	ip -n xfb link add vx6 address "$XF_MAC_XFV0" type vxlan id $VNI6 \
		local fd00:2::1 remote fd00:2::fe dstport 4789 dev veth_b &&
	ip netns exec xfb sysctl -qw net.ipv6.conf.vx6.disable_ipv6=1 &&
	ip -n xfb addr add 192.168.44.2/24 dev vx6 &&
	ip -n xfb link set vx6 up &&
	ip -n xfb neigh replace 192.168.44.1 lladdr "$XF_MAC_VETH_A" dev vx6 nud permanent &&
	ip -n xfa addr add 192.168.44.1/32 dev veth_a
check_err $? "cannot set up the IPv6 underlay"
log_setup "setup: vx6 in xfb, VNI $VNI6 from fd00:2::1 to fd00:2::fe over veth_b"

ENC_DST=fd00:2::fe
MATCH="enc_src_ip fd00:2::1 enc_key_id $VNI6"
MISS1="enc_src_ip fd00:2::1 enc_key_id $((VNI6 + 1))"
MISS2="enc_src_ip fd00:2::99 enc_key_id $VNI6"
SHOW_Q='[.key.enc_key_id, .key.enc_src_ip, .key.enc_dst_ip, [.actions[].kind]]'
SHOW_A="[$VNI6,\"fd00:2::1/128\",\"fd00:2::fe/128\",[\"tunnel_unset\",\"redirect\"]]"
decap_case vxlan-ipv6 xfx 4789 192.168.44.1

RET=0
out=$(decap_rule xfx 8 192.168.44.1 "" "enc_src_ip fd00:2::/64" xfv0 4789)
check_err $? "tc filter add (an outer IPv6 prefix) failed: $out"
tunnel_refused xfx 8 "a match on an outer IPv6 prefix" \
	"outer IPv6 addresses are offloaded whole (/128) only" "$out"
send_expect xfb 192.168.44.1 $N 9 18 4242 -- "udp:xfa/veth_a+$N" \
	"fn:tunnel_act_stat/xfx/8/packets+$N" \
	"fn:tunnel_act_stat/xfx/8/hw_packets+0"
tc filter del dev xfx ingress
log_test "vxlan-ipv6: a rule of an outer IPv6 prefix stays in software, TC runs it for the $N frames"
ENC_DST=10.0.2.254
MATCH="enc_src_ip 10.0.2.1 enc_key_id $TUN_VNI geneve_opts $OPTS"

RET=0
out=$(decap_rule xfx 4 192.168.42.1 "" "" xfg 4789)
check_err $? "tc filter add (redirect to xfg) failed: $out"
[ "$(tc_hw_state "" xfx 4)" = not_in_hw ]
check_err $? "a tunnel_key unset before a redirect to a Geneve device is in_hw"
out2=$(decap_rule xfx 5 192.168.42.1 "" "" xfv0 4790)
check_err $? "tc filter add (enc_dst_port 4790) failed: $out2"
[ "$(tc_hw_state "" xfx 5)" = not_in_hw ]
check_err $? "an enc_dst_port other than xfx's is in_hw"
out3=$(decap_rule xfx 6 192.168.42.1 "" "$MATCH" xfv0 4789)
check_err $? "tc filter add (enc_opts on xfx) failed: $out3"
[ "$(tc_hw_state "" xfx 6)" = not_in_hw ]
check_err $? "a Geneve option match on a VXLAN device is in_hw"
out4=$(decap_rule xfg 7 192.168.43.1 "" \
	"enc_key_id $TUN_VNI geneve_opts 0102:80:0001000200030004" xfv0 6081)
check_err $? "tc filter add (a 12-byte option) failed: $out4"
[ "$(tc_hw_state "" xfg 7)" = not_in_hw ]
check_err $? "a match on 12 bytes of options is in_hw"
if [ "$hook" = tc ]; then
	echo "$out" | grep -q "unset is offloaded only before outputs to veths"
	check_err $? "tc printed no reason about the device: '$out'"
	echo "$out2" | grep -q "enc_dst_port is not the tunnel device's port"
	check_err $? "tc printed no reason about the port: '$out2'"
	echo "$out3" | grep -q "enc_opts matches are offloaded on Geneve devices only"
	check_err $? "tc printed no reason about the device: '$out3'"
	echo "$out4" | grep -q "tunnel option matches past their first 8 bytes"
	check_err $? "tc printed no reason about the length: '$out4'"
fi
tc filter del dev xfx ingress
tc filter del dev xfg ingress
log_test "refused, in software: tunnel_key unset before a redirect to a Geneve device, an enc_dst_port other than the device's, Geneve options on a VXLAN device or past 8 bytes"

exit $EXIT_STATUS
