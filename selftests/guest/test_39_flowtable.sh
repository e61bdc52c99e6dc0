#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nftables flowtables through xdp_flow. The root namespace routes between
# xfa and xfb (the standard scene, with IPv6 on xfb's link too) with an
# inet flowtable of flags offload on xfv0 and xfv1, and masquerades what
# leaves through xfv1. Once a connection is in the flowtable, the kernel
# offers both its directions to xdp_flow (TC_SETUP_FT), which forwards them
# at its hook: NAT, TTL - 1, Ethernet addresses, redirect. Checked:
#   - UDP over IPv4, IPv6 and a VLAN (xfv1.10), both ways: the flows are
#     in XDP (xdp-flow show, source flowtable) and conntrack marks the
#     connection
#     HW_OFFLOAD; what arrives is what the software path sends
#     (masqueraded source, TTL 63, transport checksums the receiver
#     verifies: the senders compute them, no offload), and XDP counted
#     every packet of it;
#   - what the software path leaves to the stack goes there, and the stack
#     does what it does without xdp_flow: TTL 1 (time exceeded), a packet
#     over the route's MTU (fragmented by the router), fragments;
#   - TCP: both directions in XDP (at the TC hook the bulk of the stream
#     comes as GSO skbs from a veth with TSO: forwarded there whole,
#     counted as their segments); the FIN at the end goes to the stack,
#     which takes the connection out of the flowtable and out of XDP;
#   - a flow XDP carries outlives the flowtable's timeout (the counters'
#     last use goes back to the flowtable): every packet counted in XDP;
#   - deleting the table, or a device of the flowtable, takes the flows
#     out of XDP; unloading the module while a flowtable is bound works
#     and leaves the flowtable to the kernel; loading it again leaves the
#     entries a failed bind left in the kernel (freed device, freed
#     flowtable) alone.
# Before xdp_flow is enabled on a device, the flowtable cannot be created
# there with flags offload (no driver takes it), as without xdp_flow.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"

N=40
T=xfft
UDP_TIMEOUT=net.netfilter.nf_flowtable_udp_timeout

TMPD=$(mktemp -d /tmp/xf-ft.XXXXXX)
saved_timeout=

cleanup()
{
	nft delete table inet $T 2>/dev/null
	[ -n "$saved_timeout" ] && sysctl -qw "$UDP_TIMEOUT=$saved_timeout"
	xf_test_cleanup
	conntrack -F >/dev/null 2>&1
	rm -rf "$TMPD"
}
trap cleanup EXIT

require_cmd nft
require_cmd conntrack
require_cmd nstat
xf_test_setup || exit 1

# ft_rules <dev> [jq condition]: the flowtable rules xdp-flow show lists
# on <dev> in XDP (those that meet the condition).
ft_rules()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq "[.[] | select(.source == \"flowtable\" and (.software | not)) |
		     select(${2:-true})] | length"
}

# ft_packets <dev> <ip_proto> [packets|bytes] [jq condition]: what XDP
# counted for the flowtable's rules of that protocol on <dev> (those that
# meet the condition on the rule, such as '.key.src_port == 4000').
ft_packets()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq "[.[] | select(.source == \"flowtable\" and .key.ip_proto == \"$2\") |
		     select(${4:-true}) | .stats.${3:-packets}] | add // 0"
}

# ct_offloaded <proto>: conntrack entries of that protocol marked HW_OFFLOAD.
ct_offloaded()
{
	conntrack -L -p "$1" 2>/dev/null | grep -c "HW_OFFLOAD"
}

# snmp <ns> <counter>: a counter of nstat's in namespace <ns> ("" = root).
snmp()
{
	local -a pre=()

	[ -n "$1" ] && pre=(ip netns exec "$1")
	"${pre[@]}" nstat -asz "$2" |
		awk -v k="$2" '$1 == k { print $2; f = 1 } END { exit !f }'
}

# csum_offload <on|off>: the clients' transmit checksum offload. Off, the
# senders compute every transport checksum and the receivers verify it
# (a veth passes CHECKSUM_PARTIAL on, and nothing checks it).
csum_offload()
{
	ip netns exec xfa ethtool -K veth_a tx "$1" >/dev/null &&
	ip netns exec xfb ethtool -K veth_b tx "$1" >/dev/null
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

# udp_flow <sport> <dport> <dst> <back-dst>: a UDP connection from xfa's
# <sport> to <dst>:<dport> and an answer from xfb back to <back-dst>
# (where the router masquerades it), in software; the forward chain then
# puts it in the flowtable and the kernel offers both directions.
udp_flow()
{
	send_udp xfa "$3" 3 "$2" 18 "$1" &&
	send_udp xfb "$4" 3 "$1" 18 "$2"
}

# udp_way <from-ns> <to-ns> <dst> <dport> <sport> <dev> <jq> <v6>: send N
# datagrams of an offloaded flow; checks that XDP counted all of them on
# <dev> (the rules <jq> selects), and that <to-ns> took them all with good
# checksums (its UDP "no port" counter: no socket listens there).
udp_way()
{
	local from=$1 to=$2 dst=$3 dport=$4 sport=$5 dev=$6 sel=$7 v=${8:-}
	local x0 x1 p0 p1 e0 e1

	x0=$(ft_packets "$dev" udp packets "$sel") &&
	p0=$(snmp "$to" Udp${v}NoPorts) &&
	e0=$(snmp "$to" Udp${v}InCsumErrors) || {
		check_err 1 "cannot read the counters"
		return
	}
	send_udp "$from" "$dst" $N "$dport" 18 "$sport"
	check_err $? "cannot send"
	x1=$(wait_value $((x0 + N)) $((10 * XF_PACE)) \
		ft_packets "$dev" udp packets "$sel")
	p1=$(wait_value $((p0 + N)) $((5 * XF_PACE)) snmp "$to" Udp${v}NoPorts)
	e1=$(snmp "$to" Udp${v}InCsumErrors)
	[ "$((p1 - p0))" = $N ] && [ "$e1" = "$e0" ]
	check_err $? "$to took $((p1 - p0)) of $N datagrams to port $dport, $((e1 - e0)) with a bad checksum"
	[ "$((x1 - x0))" = $N ]
	check_err $? "XDP counted $((x1 - x0)) of $N on $dev"
}

RET=0
out=$(flowtable 2>&1)
check_fail $? "a flowtable with flags offload was created on devices where offload is not enabled"
echo "$out" | grep -q "Operation not supported"
check_err $? "nft failed otherwise than with EOPNOTSUPP: $out"
nft delete table inet $T 2>/dev/null
log_test "flowtable with flags offload refused where xdp_flow is not enabled"

RET=0
echo 0 >/proc/sys/net/ipv6/conf/xfv1/disable_ipv6 &&
ip -batch - <<EOF &&
addr add fd00:2::254/64 dev xfv1 nodad
neigh replace fd00:2::1 lladdr $XF_MAC_VETH_B dev xfv1 nud permanent
EOF
ip netns exec xfb sh -c "echo 0 >/proc/sys/net/ipv6/conf/veth_b/disable_ipv6" &&
ip -n xfb -batch - <<EOF
addr add fd00:2::1/64 dev veth_b nodad
route add default via fd00:2::254
neigh replace fd00:2::254 lladdr $XF_MAC_XFV1 dev veth_b nud permanent
EOF
check_err $? "cannot add IPv6 to xfb's link"
csum_offload off
check_err $? "cannot turn the clients' checksum offload off"
xf_enable_dev xfv0 && xf_enable_dev xfv1
check_err $? "xdp-flow enable dev xfv0, xfv1 failed"
flowtable
check_err $? "nft could not add the flowtable with flags offload on xfv0 and xfv1"
# what arrives: masqueraded on xfb's side, de-masqueraded on xfa's, TTL 63
xf_nsexec xfb tc filter add dev veth_b ingress pref 50 protocol ip flower \
	ip_proto udp src_ip 10.0.2.254 dst_port 5000 ip_ttl 63 action pass &&
xf_nsexec xfa tc filter add dev veth_a ingress pref 50 protocol ip flower \
	ip_proto udp src_ip 10.0.2.1 dst_ip 10.0.1.1 dst_port 4000 ip_ttl 63 \
	action pass &&
xf_nsexec xfb tc filter add dev veth_b ingress pref 51 protocol ipv6 flower \
	ip_proto udp src_ip fd00:2::254 dst_port 5002 ip_ttl 63 action pass &&
xf_nsexec xfa tc filter add dev veth_a ingress pref 51 protocol ipv6 flower \
	ip_proto udp src_ip fd00:2::1 dst_ip fd00:1::1 dst_port 4002 ip_ttl 63 \
	action pass
check_err $? "cannot add the counters on veth_a and veth_b"
log_test "flowtable with flags offload on xfv0 and xfv1, xdp_flow enabled on both"
[ $RET = 0 ] || exit 1

RET=0
# the connection, in software: conntrack confirms it, the forward chain
# puts it in the flowtable, the kernel offers both directions
udp_flow 4000 5000 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets"
n0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0)
check_err $? "no flowtable rule in XDP on xfv0: $n0"
n1=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv1)
check_err $? "no flowtable rule in XDP on xfv1: $n1"
c=$(wait_value 1 $((10 * XF_PACE)) ct_offloaded udp)
check_err $? "conntrack has no UDP entry marked HW_OFFLOAD: $(conntrack -L -p udp 2>&1)"
log_test "UDP: both directions of the connection are in XDP, conntrack says HW_OFFLOAD"

RET=0
b0=$(tc_stat xfb veth_b 50 packets)
udp_way xfa xfb 10.0.2.1 5000 4000 xfv0 '.key.src_port == 4000'
b1=$(wait_value $((b0 + N)) $((5 * XF_PACE)) tc_stat xfb veth_b 50 packets)
[ "$((b1 - b0))" = $N ]
check_err $? "xfb got $((b1 - b0)) of $N packets from 10.0.2.254 with TTL 63"
log_test "UDP out: $N packets masqueraded, TTL 63, checksums good, all counted in XDP"

RET=0
a0=$(tc_stat xfa veth_a 50 packets)
udp_way xfb xfa 10.0.2.254 4000 5000 xfv1 '.key.dst_port == 4000'
a1=$(wait_value $((a0 + N)) $((5 * XF_PACE)) tc_stat xfa veth_a 50 packets)
[ "$((a1 - a0))" = $N ]
check_err $? "xfa got $((a1 - a0)) of $N replies to 10.0.1.1:4000 with TTL 63"
log_test "UDP back: $N replies de-masqueraded, TTL 63, checksums good, all counted in XDP"

RET=0
udp_flow 4002 5002 fd00:2::1 fd00:2::254
check_err $? "cannot send the first IPv6 packets"
n0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 '.key.src_port == 4002')
check_err $? "the IPv6 connection is not in XDP on xfv0"
b0=$(tc_stat xfb veth_b 51 packets) && a0=$(tc_stat xfa veth_a 51 packets)
udp_way xfa xfb fd00:2::1 5002 4002 xfv0 '.key.src_port == 4002' 6
udp_way xfb xfa fd00:2::254 4002 5002 xfv1 '.key.dst_port == 4002' 6
b1=$(wait_value $((b0 + N)) $((5 * XF_PACE)) tc_stat xfb veth_b 51 packets)
a1=$(wait_value $((a0 + N)) $((5 * XF_PACE)) tc_stat xfa veth_a 51 packets)
[ "$((b1 - b0))" = $N ] && [ "$((a1 - a0))" = $N ]
check_err $? "with hop limit 63 from the masqueraded address: xfb got $((b1 - b0)), xfa $((a1 - a0)) of $N"
log_test "UDP over IPv6: $N packets each way, masqueraded, hop limit 63, checksums good, all counted in XDP"

RET=0
# A VLAN between the router and xfb: 10.0.4.0/24 on xfv1.10 and
# veth_b.10 (no masquerade: oifname is xfv1.10). The flowtable binds xfv1;
# the kernel offers the way out with a VLAN push and the way back with a
# match on the tag and a pop.
ip -batch - <<EOF &&
link add link xfv1 name xfv1.10 type vlan id 10
addr add 10.0.4.254/24 dev xfv1.10
link set dev xfv1.10 up
neigh replace 10.0.4.1 lladdr $XF_MAC_VETH_B dev xfv1.10 nud permanent
EOF
ip -n xfb -batch - <<EOF
link add link veth_b name veth_b.10 type vlan id 10
addr add 10.0.4.1/24 dev veth_b.10
link set dev veth_b.10 up
route add 10.0.1.0/24 via 10.0.4.254 dev veth_b.10
neigh replace 10.0.4.254 lladdr $XF_MAC_XFV1 dev veth_b.10 nud permanent
EOF
check_err $? "cannot add VLAN 10 between the router and xfb"
udp_flow 4005 5005 10.0.4.1 10.0.1.1
check_err $? "cannot send the first packets over the VLAN"
n0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 '.key.src_port == 4005')
n1=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv1 '.key.dst_port == 4005')
[ "$n0" = 1 ] && [ "$n1" = 1 ]
check_err $? "the VLAN connection is not in XDP: $n0 rules on xfv0, $n1 on xfv1"
udp_way xfa xfb 10.0.4.1 5005 4005 xfv0 '.key.src_port == 4005'
udp_way xfb xfa 10.0.1.1 4005 5005 xfv1 '.key.dst_port == 4005'
log_test "UDP over VLAN 10 on xfv1: $N packets each way (tag pushed, then matched and popped), checksums good, all counted in XDP"

RET=0
# What the software path leaves to the stack: TTL 1 (the stack answers
# time exceeded), a packet over the route's MTU (xfv1's, 1000 for a
# connection made after it changed: the stack fragments it) and fragments
# (the stack reassembles and forwards them).
sel='.key.src_port == 4000'
x0=$(ft_packets xfv0 udp packets "$sel") && b0=$(tc_stat xfb veth_b 50 packets) &&
	i0=$(snmp "" IcmpOutTimeExcds) && p0=$(snmp xfb UdpNoPorts)
check_err $? "cannot read the counters"
send_udp xfa 10.0.2.1 3 5000 18 4000 1
check_err $? "cannot send with TTL 1"
i1=$(wait_value $((i0 + 1)) $((5 * XF_PACE)) snmp "" IcmpOutTimeExcds)
settle
x1=$(ft_packets xfv0 udp packets "$sel") && b1=$(tc_stat xfb veth_b 50 packets) &&
	p1=$(snmp xfb UdpNoPorts)
[ "$x1" = "$x0" ] && [ "$p1" = "$p0" ] && [ "$b1" = "$b0" ] && [ "$i1" -gt "$i0" ]
check_err $? "TTL 1: XDP counted $((x1 - x0)), xfb got $((p1 - p0)), the router sent $((i1 - i0)) time exceeded"

ip link set dev xfv1 mtu 1000
check_err $? "cannot set xfv1's MTU"
udp_flow 4001 5001 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets of a second connection"
sel='.key.src_port == 4001'
x0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 "$sel")
check_err $? "the second connection is not in XDP on xfv0"
udp_way xfa xfb 10.0.2.1 5001 4001 xfv0 "$sel"
x0=$(ft_packets xfv0 udp packets "$sel") && p0=$(snmp xfb UdpNoPorts) &&
	f0=$(snmp "" IpFragCreates) && r0=$(snmp "" IpReasmOKs)
check_err $? "cannot read the counters"
send_udp xfa 10.0.2.1 5 5001 1100 4001 0 nodf &&
send_udp xfa 10.0.2.1 5 5001 2000 4001 0 nodf
check_err $? "cannot send the large datagrams"
p1=$(wait_value $((p0 + 10)) $((5 * XF_PACE)) snmp xfb UdpNoPorts)
x1=$(ft_packets xfv0 udp packets "$sel") && f1=$(snmp "" IpFragCreates) &&
	r1=$(snmp "" IpReasmOKs)
[ "$((p1 - p0))" = 10 ] && [ "$x1" = "$x0" ] && [ "$((f1 - f0))" -ge 20 ] &&
	[ "$((r1 - r0))" = 5 ]
check_err $? "MTU 1000 and fragments: xfb took $((p1 - p0)) of 10, XDP counted $((x1 - x0)), the router reassembled $((r1 - r0)) of 5 and made $((f1 - f0)) fragments"
ip link set dev xfv1 mtu 1500
log_test "to the stack, as in software: TTL 1 (time exceeded), over the MTU (fragmented), fragments (reassembled); XDP counted none"

csum_offload on
check_err $? "cannot turn the clients' checksum offload back on"
RET=0
ip netns exec xfb iperf3 -s -1 -D -p 5201 >/dev/null 2>&1
sleep 0.3
ip netns exec xfa timeout $((20 * XF_PACE)) iperf3 -J -c 10.0.2.1 -p 5201 \
	-t $((5 * XF_PACE)) >"$TMPD/iperf.json" 2>&1 &
pid=$!
# mid-stream: the FIN at the end takes the flow out of the flowtable, and
# its counters with it (one read of each: each takes a while here)
sleep $((2 * XF_PACE))
ct=$(conntrack -L -p tcp 2>&1)
read -r t0 tb t1 < <(timeout 20 "$XF_CLI" -j show |
	jq -r '[.[] | select(.source == "flowtable" and .key.ip_proto == "tcp")] |
	       [([.[] | select(.dev == "xfv0") | .stats.packets] | add // 0),
	        ([.[] | select(.dev == "xfv0") | .stats.bytes] | add // 0),
	        ([.[] | select(.dev == "xfv1") | .stats.packets] | add // 0)] | @tsv')
[ -n "$t1" ]
check_err $? "cannot read the TCP counters"
c=$(echo "$ct" | grep -c HW_OFFLOAD)
ct=$(echo "$ct" | tr '\n' ';')
wait $pid
check_err $? "iperf3 TCP through the router failed: $(tail -n 3 "$TMPD/iperf.json")"
bytes=$(jq -r '.end.sum_received.bytes // 0' "$TMPD/iperf.json")
[ "$bytes" -gt 100000 ] 2>/dev/null
check_err $? "TCP: $bytes bytes received"
# Both directions in XDP, the data (from xfa) and the ACKs (from xfb),
# counted mid-stream: at least a fifth of the data, whatever the hook.
[ "$t1" -gt 100 ] && [ "$t0" -gt 100 ] && [ $((tb * 5)) -gt "$bytes" ] 2>/dev/null
check_err $? "XDP forwarded $t0 TCP packets ($tb bytes) from xfa, $t1 from xfb (the ACKs)"
[ "$c" -ge 1 ] 2>/dev/null
check_err $? "conntrack has no TCP entry marked HW_OFFLOAD: $ct"
log_test "TCP: $bytes bytes through the router; XDP forwarded $t0 packets ($tb bytes) from xfa, $t1 from xfb"

RET=0
tcp='.key.ip_proto == "tcp"'
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv0 "$tcp")
m=$(ft_rules xfv1 "$tcp")
[ "$n" = 0 ] && [ "$m" = 0 ]
check_err $? "after the FIN: TCP rules left in XDP, $n on xfv0, $m on xfv1"
log_test "TCP's FIN goes to the stack, which takes the connection out of XDP"

RET=0
# A short flowtable timeout: a flow whose every packet XDP forwards lives
# on only if the counters' last use reaches the flowtable. If it did not,
# the flow would expire, its packets go to software, and the kernel offer
# it again: a new rule, counting from 0.
saved_timeout=$(sysctl -n $UDP_TIMEOUT)
check_err $? "no $UDP_TIMEOUT"
to=$((3 * XF_PACE))
sysctl -qw "$UDP_TIMEOUT=$to"
udp_flow 4003 5003 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets"
sel='.key.src_port == 4003'
x0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 "$sel")
check_err $? "the connection is not in XDP on xfv0"
p0=$(snmp xfb UdpNoPorts)
sent=0
end=$((SECONDS + 3 * to))
while [ $SECONDS -lt $end ]; do
	send_udp xfa 10.0.2.1 10 5003 18 4003 || break
	sent=$((sent + 10))
	sleep 0.5
done
x1=$(wait_value $sent $((5 * XF_PACE)) ft_packets xfv0 udp packets "$sel")
p1=$(wait_value $((p0 + sent)) $((5 * XF_PACE)) snmp xfb UdpNoPorts)
c=$(ct_offloaded udp)
[ "$x1" = $sent ] && [ "$((p1 - p0))" = $sent ] && [ "$c" -ge 1 ]
check_err $? "for $((3 * to)) s with a flowtable timeout of $to s: XDP counted $x1 of $sent, xfb took $((p1 - p0)); $c UDP entries HW_OFFLOAD"
sysctl -qw "$UDP_TIMEOUT=$saved_timeout"
saved_timeout=
log_test "a flow outlives the flowtable's timeout ($to s) three times over while XDP carries it: $sent packets, all counted in XDP"

RET=0
nft delete table inet $T
check_err $? "cannot delete the table"
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv0)
m=$(ft_rules xfv1)
[ "$n" = 0 ] && [ "$m" = 0 ]
check_err $? "flowtable rules left in XDP: $n on xfv0, $m on xfv1"
log_test "deleting the table takes the flows out of XDP"

RET=0
flowtable
check_err $? "cannot add the table again"
udp_flow 4004 5004 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets"
n=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0)
check_err $? "the connection is not in XDP: $n rules on xfv0"
ip link del dev xfv1
check_err $? "cannot delete xfv1"
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv0)
[ "$n" = 0 ]
check_err $? "$n flowtable rules left in XDP on xfv0 after xfv1 went"
# (newer kernels keep the name of a device that went in the flowtable's
# list, 6.1 and 6.12 drop it: either way the flowtable stays)
nft list flowtable inet $T f >/dev/null
check_err $? "the flowtable went with xfv1"
log_test "deleting a device of the flowtable takes its flows out of XDP"

RET=0
xf_unload
check_err $? "rmmod xdp_flow failed with a flowtable bound to xfv0"
[ ! -d /sys/module/xdp_flow ]
check_err $? "xdp_flow is still loaded"
nft delete table inet $T
check_err $? "cannot delete the table once xdp_flow is gone"
log_test "unloading xdp_flow with a flowtable bound leaves the flowtable to the kernel"

RET=0
# The flowtable nft could not bind at first (xfv1 not enabled) left its
# entry in the kernel's list of bound blocks, naming xfv1 and that
# flowtable, both long freed (net/core/flow_offload.c keeps it: nothing
# unbinds a failed bind). A driver that registers is offered it again:
# xdp_flow must not touch it.
mark=$(dmesg_mark "test_39 reload")
xf_load && xf_wait_helper
check_err $? "cannot load xdp_flow again"
dmesg_since "$mark" | grep -q "nftables flowtable not offloaded"
check_fail $? "xdp_flow looked at a stale flowtable entry: $(dmesg_since "$mark" | grep "not offloaded" | head -n 1)"
xf_unload
check_err $? "cannot unload xdp_flow"
log_test "loading xdp_flow again leaves the kernel's stale entries of failed binds alone"

exit $EXIT_STATUS
