#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The TC hook's redirect into a veth whose peer is in another namespace
# (xfv1, peer veth_b in xfb: a container's veth) enters the peer directly
# with bpf_redirect_peer() where that is exactly what mirred would have done
# (net/xdp_flow/peer.c), and goes through xfv1's transmit path otherwise.
# veth counts tx_packets on xfv1 only when xfv1 transmits, so xfv1's counter
# tells the two paths apart; what reaches the UDP layer in xfb, the rule's
# hardware counter and the qdisc's drops tell the outcome. Frames to
# 10.0.2.2 carry veth_b's address (the peer path); frames to 10.0.2.1 carry
# xfv0's, which veth_b would classify as not its own, so they take xfv1's
# transmit path, as mirred does, and end where mirred ends them. A queue or
# an egress filter on xfv1, a frame over veth_b's MTU and the module
# parameter redirect_peer=0 each send frames through xfv1, with mirred's
# outcome.
#
# First, on every kernel: the state the module keeps for that decision, in
# the TC program's map xf_peers (an entry per veth a redirect may pass by,
# with its peer's address and MTU), follows qdiscs, egress filters, the
# peer's MTU and link state, and the module parameter. 6.1 has no tcx and
# so no TC hook: the traffic half runs on later kernels.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=40
PREF=1
PARAM=/sys/module/xdp_flow/parameters/redirect_peer

xf_test_begin

PEERS=/sys/fs/bpf/xdp_flow/xf_peers
# peer_entry <dev>: "<mac> <mtu>" of dev's xf_peers entry, "none" without one
peer_entry()
{
	local idx out
	local -a b

	idx=$(cat "/sys/class/net/$1/ifindex") || return 1
	if ! out=$(bpftool -j map lookup pinned $PEERS key \
		   $((idx & 255)) $((idx >> 8 & 255)) $((idx >> 16 & 255)) \
		   $((idx >> 24)) 2>/dev/null); then
		echo none
		return 0
	fi
	read -r -a b <<<"$(echo "$out" | jq -r '.value | map(ltrimstr("0x")) | join(" ")')"
	[ ${#b[@]} -eq 8 ] || { xf_err "xf_peers entry of $1: $out"; return 1; }
	echo "${b[0]}:${b[1]}:${b[2]}:${b[3]}:${b[4]}:${b[5]} $((16#${b[7]}${b[6]}))"
}
# wait_entry <dev> <want>: until peer_entry says <want> (5 s at most)
wait_entry()
{
	local i got

	for ((i = 0; i < 50; i++)); do
		got=$(peer_entry "$1")
		[ "$got" = "$2" ] && return 0
		sleep 0.1
	done
	xf_err "xf_peers entry of $1: '$got', expected '$2'"
	return 1
}

B="$XF_MAC_VETH_B 1500"

RET=0
wait_entry xfv1 "$B"
check_err $? "no entry for xfv1"
tc qdisc add dev xfv1 root pfifo limit 0 && wait_entry xfv1 none
check_err $? "a queue on xfv1 leaves its entry"
tc qdisc del dev xfv1 root && wait_entry xfv1 "$B"
check_err $? "the queue gone, no entry"
# (6.1 runs egress filters once there is one; 6.12 once there is clsact)
tc qdisc add dev xfv1 clsact &&
	tc filter add dev xfv1 egress pref 5 protocol ip flower \
		dst_ip 192.0.2.99 action drop && wait_entry xfv1 none
check_err $? "an egress filter on xfv1 leaves its entry"
tc qdisc del dev xfv1 clsact && wait_entry xfv1 "$B"
check_err $? "the filter gone, no entry"
log_test "xf_peers: xfv1 -> $B; gone with a queue and with an egress filter, back without"

RET=0
ip netns exec xfb ip link set dev veth_b mtu 500 && wait_entry xfv1 "$XF_MAC_VETH_B 500"
check_err $? "veth_b's MTU not followed"
ip netns exec xfb ip link set dev veth_b mtu 1500 &&
	ip netns exec xfb ip link set dev veth_b down && wait_entry xfv1 none
check_err $? "veth_b down leaves the entry"
ip netns exec xfb ip link set dev veth_b up && wait_entry xfv1 "$B"
check_err $? "veth_b up again, no entry"
ip link set dev xfv1 down && wait_entry xfv1 none
check_err $? "xfv1 down leaves the entry"
ip link set dev xfv1 up && wait_entry xfv1 "$B"
check_err $? "xfv1 up again, no entry"
echo 0 >$PARAM && wait_entry xfv1 none && wait_entry xfv2 none
check_err $? "redirect_peer=0 leaves entries"
echo 1 >$PARAM && wait_entry xfv1 "$B"
check_err $? "redirect_peer=1: no entry"
log_test "xf_peers follows veth_b's MTU, both ends' link state and redirect_peer"

kver=$(uname -r)
if [ "$(printf '%s\n' 6.6 "${kver%%-*}" | sort -V | head -n 1)" != 6.6 ]; then
	log_skip "frames through bpf_redirect_peer()" \
		"no tcx on $kver: no TC hook, the only user of xf_peers"
	exit "$EXIT_STATUS"
fi

# tx_packets of xfv1: moves only when xfv1 transmits
xfv1_tx() { ns_tx_packets "" xfv1; }
# datagrams that reached xfb's UDP layer (nobody listens: NoPorts)
xfb_udp_in()
{
	ip netns exec xfb awk '/^Udp:/ { if (h) { print $2 + $3; exit } h = 1 }' \
		/proc/net/snmp
}
# packets dropped by xfv1's root qdisc
xfv1_qdisc_drops()
{
	tc -s -j qdisc show dev xfv1 root | jq -r '.[0].drops // 0'
}

RET=0
ip netns exec xfb ip addr add 10.0.2.2/24 dev veth_b &&
	ip netns exec xfa ip -batch - <<EOF
neigh replace 10.0.1.99 lladdr $XF_MAC_VETH_B dev veth_a nud permanent
route add 10.0.2.2/32 via 10.0.1.99
EOF
check_err $? "cannot address 10.0.2.2 to veth_b's MAC"
"$XF_CLI" enable dev xfv0 hook tc
check_err $? "xdp-flow enable dev xfv0 hook tc failed"
tc qdisc add dev xfv0 clsact &&
	tc filter add dev xfv0 ingress pref $PREF protocol ip flower \
		dst_ip 10.0.2.0/24 action mirred egress redirect dev xfv1
check_err $? "tc filter add failed"
[ "$(tc_hw_state "" xfv0 $PREF)" = in_hw ]
check_err $? "the redirect rule is not in_hw"
[ "$(cat $PARAM 2>/dev/null)" = Y ]
check_err $? "module parameter redirect_peer is '$(cat $PARAM 2>/dev/null)', not Y"
log_test "tc hook on xfv0, redirect to xfv1 in_hw; redirect_peer on by default"

RET=0
send_expect xfa 10.0.2.2 $N -- hw:xfv0/$PREF+$N pk:xfv0/$PREF+$N \
	udp:xfb/veth_b+$N fn:xfb_udp_in+$N fn:xfv1_tx+0
log_test "to veth_b's address: $N in XDP's counters, $N reach xfb's UDP, xfv1 transmits none (peer path)"

RET=0
send_expect xfa 10.0.2.1 $N -- hw:xfv0/$PREF+$N udp:xfb/veth_b+$N \
	fn:xfb_udp_in+0 fn:xfv1_tx+$N
log_test "to another address: xfv1 transmits all $N, veth_b drops them before UDP as mirred's would be"

RET=0
tc qdisc add dev xfv1 root pfifo limit 0
check_err $? "cannot add the dropping qdisc to xfv1"
send_expect xfa 10.0.2.2 $N -- hw:xfv0/$PREF+$N udp:xfb/veth_b+0 \
	fn:xfb_udp_in+0 fn:xfv1_qdisc_drops+$N
log_test "a queue on xfv1 (pfifo limit 0): all $N meet it and are dropped"

RET=0
tc qdisc del dev xfv1 root
check_err $? "cannot delete xfv1's qdisc"
send_expect xfa 10.0.2.2 $N -- hw:xfv0/$PREF+$N fn:xfb_udp_in+$N fn:xfv1_tx+0
log_test "queue gone: the peer path again"

RET=0
tc qdisc add dev xfv1 clsact &&
	tc filter add dev xfv1 egress pref 5 protocol ip flower \
		dst_ip 10.0.2.2 action drop
check_err $? "cannot add the egress filter to xfv1"
send_expect xfa 10.0.2.2 $N -- hw:xfv0/$PREF+$N fn:xfb_udp_in+0 \
	udp:xfb/veth_b+0
n=$(tc -s -j filter show dev xfv1 egress pref 5 |
    jq '[.[] | select(.options != null)][0].options.actions[0].stats.packets')
[ "$n" = $N ]
check_err $? "xfv1's egress filter dropped $n, not $N"
tc qdisc del dev xfv1 clsact
log_test "an egress filter on xfv1: all $N meet it"

RET=0
ip netns exec xfb ip link set dev veth_b mtu 500
check_err $? "cannot lower veth_b's MTU"
send_expect xfa 10.0.2.2 $N 9 600 -- hw:xfv0/$PREF+$N udp:xfb/veth_b+0 \
	fn:xfb_udp_in+0
send_expect xfa 10.0.2.2 $N 9 400 -- hw:xfv0/$PREF+$N fn:xfb_udp_in+$N \
	fn:xfv1_tx+0
ip netns exec xfb ip link set dev veth_b mtu 1500
log_test "veth_b's MTU 500: 642-byte frames dropped as veth drops them, 442-byte ones take the peer path"

RET=0
echo 0 >$PARAM
check_err $? "cannot set redirect_peer=0"
send_expect xfa 10.0.2.2 $N -- hw:xfv0/$PREF+$N fn:xfb_udp_in+$N \
	fn:xfv1_tx+$N
echo 1 >$PARAM
send_expect xfa 10.0.2.2 $N -- hw:xfv0/$PREF+$N fn:xfb_udp_in+$N fn:xfv1_tx+0
log_test "redirect_peer=0: xfv1 transmits all $N; =1: the peer path again"

exit "$EXIT_STATUS"
