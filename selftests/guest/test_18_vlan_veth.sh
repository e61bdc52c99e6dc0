#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# VLAN tags on a veth. A VLAN device on the peer (veth_a.5 in xfa) sends
# with the tag in skb metadata while the peer offloads VLAN insertion
# (tx-vlan-offload on, veth's default); XDP on xfv0 would see those frames
# untagged, and act on them as if they were. Enabling offload on xfv0
# turns that offload off on its peer and fixes it there (ethtool cannot
# turn it on, not even for a moment), and gives it back on disable; then
# XDP sees every tag in the frame, and:
#   - a `protocol ip` rule leaves tagged frames alone, as TC does;
#   - a VLAN match on xfv0 is offloaded and handles the tagged frames;
# with the counts TC reports.
#
# The subject is the XDP hook (the TC hook sees the tag in metadata as TC
# does, and leaves the peer alone): it runs with hook xdp, whatever the
# default.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

XF_HOOK=xdp

N=20

xf_test_begin

# peer_txoff: veth_a's tx-vlan-offload and tx-checksum-ip-generic (the
# checksum offload veth has), "on on" by default; a feature ethtool cannot
# change reads "off[fixed]" (tx-checksumming, the group, never says fixed).
peer_txoff()
{
	ip netns exec xfa ethtool -k veth_a |
		awk '/^tx-vlan-offload:/ { v = $2 $3 }
		     /^\ttx-checksum-ip-generic:/ { c = $2 $3 }
		     END { print v, c }'
}

# Tagged traffic from xfa to 10.0.3.1 leaves by veth_a.5 (VLAN 5).
RET=0
[ "$(peer_txoff)" = "on on" ]
check_err $? "veth_a starts with tx-vlan-offload, tx-checksum-ip-generic '$(peer_txoff)', not 'on on'"
ip netns exec xfa ip -batch - <<EOF
link add link veth_a name veth_a.5 type vlan id 5
addr add 10.0.5.1/24 dev veth_a.5
link set dev veth_a.5 up
neigh replace 10.0.5.254 lladdr $XF_MAC_XFV0 dev veth_a.5 nud permanent
route add 10.0.3.1/32 via 10.0.5.254 dev veth_a.5
EOF
check_err $? "cannot set up veth_a.5 in xfa"
xf_check_enable_xfv0
[ "$(peer_txoff)" = "off[fixed] off[fixed]" ]
check_err $? "veth_a has tx-vlan-offload, tx-checksum-ip-generic '$(peer_txoff)' with offload enabled on xfv0, not fixed off"
log_test "enabling offload on xfv0 turns tx-vlan-offload and tx-checksumming off on its peer, fixed"

# A protocol ip rule: TC does not run it for tagged frames.
RET=0
tc filter add dev xfv0 ingress pref 1 protocol ip flower dst_ip 10.0.3.1 \
	action mirred egress redirect dev xfv1
check_err $? "tc filter add (pref 1) failed"
st=$(tc_hw_state "" xfv0 1)
[ "$st" = in_hw ]
check_err $? "the protocol ip rule shows $st, not in_hw"
# The first device of the hook the helper did not load at start (xdp,
# where the kernel has tcx) waits for that program, past TC's wait on a
# slow kernel: until then TC runs the rules.
wait_dev_attached xfv0 10
check_err $? "xfv0 not attached"
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+0 pk:xfv0/1=0
log_test "a protocol ip rule in XDP leaves frames tagged by the peer's VLAN device alone"

# A VLAN match, offloaded on veth now.
RET=0
tc filter add dev xfv0 ingress pref 2 protocol 802.1q flower vlan_id 5 \
	vlan_ethtype ip dst_ip 10.0.3.1 \
	action vlan pop pipe action mirred egress redirect dev xfv1
check_err $? "tc filter add (pref 2) failed"
st=$(tc_hw_state "" xfv0 2)
[ "$st" = in_hw ]
check_err $? "the vlan_id 5 rule shows $st, not in_hw"
send_expect xfa 10.0.3.1 $N -- udp:xfb/veth_b+$N hw:xfv0/2=$N pk:xfv0/1=0
log_test "vlan_id 5 vlan_ethtype ip: in_hw on xfv0, $N tagged frames popped and redirected in XDP"

# Root in xfa cannot turn the offload back on: the kernel refuses the
# change, so no tagged frame reaches XDP with its tag in metadata.
RET=0
ip netns exec xfa ethtool -K veth_a txvlan on tx on >/dev/null 2>&1
[ "$(peer_txoff)" = "off[fixed] off[fixed]" ]
check_err $? "veth_a has tx-vlan-offload, tx-checksum-ip-generic '$(peer_txoff)' after ethtool -K txvlan on tx on"
send_expect xfa 10.0.3.1 $N -- hw:xfv0/2=$((2 * N))
log_test "ethtool -K txvlan on tx on on the peer is refused while offload is enabled"

RET=0
"$XF_CLI" disable dev xfv0
check_err $? "xdp-flow disable dev xfv0 failed"
[ "$(peer_txoff)" = "on on" ]
check_err $? "veth_a has tx-vlan-offload, tx-checksum-ip-generic '$(peer_txoff)' after disable, not 'on on'"
log_test "disabling offload on xfv0 gives its peer tx-vlan-offload and tx-checksumming back"

exit $EXIT_STATUS
