#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nftables flowtables through xdp_flow. The root namespace routes between
# xfa and xfb (the standard scene) with an inet flowtable of flags offload
# on xfv0 and xfv1, and masquerades what leaves through xfv1. Once a
# connection is in the flowtable, the kernel offers both its directions to
# xdp_flow (TC_SETUP_FT), which forwards them at its hook: NAT, TTL - 1,
# Ethernet addresses, redirect. Checked, for UDP both ways and for TCP
# (whose GSO frames, the bulk of a stream from a veth with TSO, the hook
# leaves to the stack):
#   - the flows are in XDP (xdp-flow show, source flowtable, in_xdp) and
#     conntrack marks the connection HW_OFFLOAD;
#   - what arrives is what the software path sends (masqueraded source,
#     TTL 63 on the other side), and XDP counted every packet of it;
#   - deleting the table takes the flows out of XDP.
# Before xdp_flow is enabled on a device, the flowtable cannot be created
# there with flags offload (no driver takes it), as without xdp_flow.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=40
T=xfft

TMPD=$(mktemp -d /tmp/xf-ft.XXXXXX)

cleanup()
{
	nft delete table inet $T 2>/dev/null
	xf_test_cleanup
	conntrack -F >/dev/null 2>&1
	rm -rf "$TMPD"
}
trap cleanup EXIT

require_cmd nft
require_cmd conntrack
xf_test_setup || exit 1

# ft_rules <dev>: the flowtable rules xdp-flow show lists on <dev> in XDP.
ft_rules()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq '[.[] | select(.source == "flowtable" and (.software | not))] | length'
}

# ft_packets <dev> <ip_proto>: what XDP counted for those of that protocol.
ft_packets()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq "[.[] | select(.source == \"flowtable\" and .key.ip_proto == \"$2\") |
		     .stats.packets] | add // 0"
}

# ct_offloaded <proto>: conntrack entries of that protocol marked HW_OFFLOAD.
ct_offloaded()
{
	conntrack -L -p "$1" 2>/dev/null | grep -c "HW_OFFLOAD"
}

flowtable()
{
	nft -f - <<EOF
table inet $T {
	flowtable f {
		hook ingress priority 0; devices = { xfv0, xfv1 }; flags offload;
	}
	chain forwarding {
		type filter hook forward priority 0; policy accept;
		meta l4proto { tcp, udp } flow add @f
	}
	chain masq {
		type nat hook postrouting priority 100; policy accept;
		oifname "xfv1" masquerade
	}
}
EOF
}

RET=0
out=$(flowtable 2>&1)
check_fail $? "a flowtable with flags offload was created on devices where offload is not enabled"
echo "$out" | grep -q "Operation not supported"
check_err $? "nft failed otherwise than with EOPNOTSUPP: $out"
nft delete table inet $T 2>/dev/null
log_test "flowtable with flags offload refused where xdp_flow is not enabled"

RET=0
xf_enable_dev xfv0 && xf_enable_dev xfv1
check_err $? "xdp-flow enable dev xfv0, xfv1 failed"
flowtable
check_err $? "nft could not add the flowtable with flags offload on xfv0 and xfv1"
# what arrives: masqueraded on xfb's side, de-masqueraded on xfa's, TTL 63
xf_nsexec xfb tc filter add dev veth_b ingress pref 50 protocol ip flower \
	ip_proto udp src_ip 10.0.2.254 dst_port 5000 ip_ttl 63 action pass &&
xf_nsexec xfa tc filter add dev veth_a ingress pref 50 protocol ip flower \
	ip_proto udp src_ip 10.0.2.1 dst_ip 10.0.1.1 dst_port 4000 ip_ttl 63 \
	action pass
check_err $? "cannot add the counters on veth_a and veth_b"
log_test "flowtable with flags offload on xfv0 and xfv1, xdp_flow enabled on both"
[ $RET = 0 ] || exit 1

RET=0
# the connection, in software: conntrack confirms it, the forward chain
# puts it in the flowtable, the kernel offers both directions
send_udp xfa 10.0.2.1 3 5000 18 4000 &&
send_udp xfb 10.0.2.254 3 4000 18 5000
check_err $? "cannot send the first packets"
n0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0)
check_err $? "no flowtable rule in XDP on xfv0: $n0"
n1=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv1)
check_err $? "no flowtable rule in XDP on xfv1: $n1"
c=$(wait_value 1 $((10 * XF_PACE)) ct_offloaded udp)
check_err $? "conntrack has no UDP entry marked HW_OFFLOAD: $(conntrack -L -p udp 2>&1)"
log_test "UDP: both directions of the connection are in XDP, conntrack says HW_OFFLOAD"

RET=0
x0=$(ft_packets xfv0 udp) && b0=$(tc_stat xfb veth_b 50 packets)
check_err $? "cannot read the counters"
send_udp xfa 10.0.2.1 $N 5000 18 4000
check_err $? "cannot send"
x1=$(wait_value $((x0 + N)) $((10 * XF_PACE)) ft_packets xfv0 udp)
b1=$(wait_value $((b0 + N)) $((5 * XF_PACE)) tc_stat xfb veth_b 50 packets)
[ "$((b1 - b0))" = $N ]
check_err $? "xfb got $((b1 - b0)) of $N packets from 10.0.2.254 with TTL 63"
[ "$((x1 - x0))" = $N ]
check_err $? "XDP counted $((x1 - x0)) of $N packets on xfv0"
log_test "UDP out: $N packets masqueraded, TTL 63, all counted in XDP"

RET=0
x0=$(ft_packets xfv1 udp) && a0=$(tc_stat xfa veth_a 50 packets)
check_err $? "cannot read the counters"
send_udp xfb 10.0.2.254 $N 4000 18 5000
check_err $? "cannot send"
x1=$(wait_value $((x0 + N)) $((10 * XF_PACE)) ft_packets xfv1 udp)
a1=$(wait_value $((a0 + N)) $((5 * XF_PACE)) tc_stat xfa veth_a 50 packets)
[ "$((a1 - a0))" = $N ]
check_err $? "xfa got $((a1 - a0)) of $N replies to 10.0.1.1:4000 with TTL 63"
[ "$((x1 - x0))" = $N ]
check_err $? "XDP counted $((x1 - x0)) of $N replies on xfv1"
log_test "UDP back: $N replies de-masqueraded, TTL 63, all counted in XDP"

RET=0
ip netns exec xfb iperf3 -s -1 -D -p 5201 >/dev/null 2>&1
sleep 0.3
ip netns exec xfa timeout $((20 * XF_PACE)) iperf3 -J -c 10.0.2.1 -p 5201 \
	-t $((3 * XF_PACE)) >"$TMPD/iperf.json" 2>&1 &
pid=$!
# mid-stream: the FIN at the end takes the flow out of the flowtable, and
# its counters with it
sleep $((2 * XF_PACE))
t0=$(ft_packets xfv0 tcp) && t1=$(ft_packets xfv1 tcp)
check_err $? "cannot read the TCP counters"
c=$(ct_offloaded tcp)
wait $pid
check_err $? "iperf3 TCP through the router failed: $(tail -n 3 "$TMPD/iperf.json")"
bytes=$(jq -r '.end.sum_received.bytes // 0' "$TMPD/iperf.json")
[ "$bytes" -gt 100000 ] 2>/dev/null
check_err $? "TCP: $bytes bytes received"
# The data come as GSO frames where the peer keeps TSO (the TC hook):
# those the hook leaves to the stack. The ACKs back are single frames.
[ "$t1" -gt 100 ] 2>/dev/null
check_err $? "XDP forwarded $t1 TCP packets from xfb (the ACKs), $t0 from xfa"
[ "$c" -ge 1 ] 2>/dev/null
check_err $? "conntrack has no TCP entry marked HW_OFFLOAD"
log_test "TCP: $bytes bytes through the router; XDP forwarded $t0 packets from xfa, $t1 from xfb"

RET=0
nft delete table inet $T
check_err $? "cannot delete the table"
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv0)
m=$(ft_rules xfv1)
[ "$n" = 0 ] && [ "$m" = 0 ]
check_err $? "flowtable rules left in XDP: $n on xfv0, $m on xfv1"
log_test "deleting the table takes the flows out of XDP"

exit $EXIT_STATUS
