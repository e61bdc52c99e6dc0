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
#     flowtable) alone;
#   - the order of the hooks: a flowtable is refused on a device where an
#     offloaded chain runs after it; a chain not offloaded before it keeps
#     the flows in software until it goes.
#   - a flow's change in flight holds back that flow alone: with the
#     helper stopped, an older flow on its way out and a newer one on its
#     way in, the flow between them stays in XDP;
# Before xdp_flow is enabled on a device, the flowtable cannot be created
# there with flags offload (no driver takes it), as without xdp_flow.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"
source "$XF_ROOT/selftests/guest/flowtable_lib.sh"

N=40
T=$FT_TABLE

TMPD=$FT_TMPD
HELPER=
TIMEOUT_MS=
cleanup()
{
	[ -n "$HELPER" ] && kill -CONT "$HELPER" 2>/dev/null
	[ -n "$TIMEOUT_MS" ] &&
		echo "$TIMEOUT_MS" >/sys/module/xdp_flow/parameters/helper_timeout_ms
	ft_cleanup
}
trap cleanup EXIT

ft_require
xf_test_setup || exit 1

# udp_way <from-ns> <to-ns> <dst> <dport> <sport> <dev> <jq> <v6>: send N
# datagrams of an offloaded flow; checks that XDP counted all of them on
# <dev> (the rules <jq> selects), and that <to-ns> took them all with good
# checksums (its UDP "no port" counter: no socket listens there).
udp_way()
{
	local from=$1 to=$2 dst=$3 dport=$4 sport=$5 dev=$6 sel=$7 v=${8:-}

	send_expect "$from" "$dst" $N "$dport" 18 "$sport" -- \
		"fn:ft_packets/$dev/udp/packets/$sel+$N" \
		"fn:snmp/$to/Udp${v}NoPorts+$N" \
		"fn:snmp/$to/Udp${v}InCsumErrors+0"
}

RET=0
out=$(ft_table offload 2>&1)
check_fail $? "a flowtable with flags offload was created on devices where offload is not enabled"
echo "$out" | grep -q "Operation not supported"
check_err $? "nft failed otherwise than with EOPNOTSUPP: $out"
nft delete table inet $T 2>/dev/null
log_test "flowtable with flags offload refused where xdp_flow is not enabled"

RET=0
ft_ipv6_setup
check_err $? "cannot add IPv6 to xfb's link"
csum_offload off
check_err $? "cannot turn the clients' checksum offload off"
xf_enable_dev xfv0 && xf_enable_dev xfv1
check_err $? "xdp-flow enable dev xfv0, xfv1 failed"
ft_table offload
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
# The order of the hooks at netfilter ingress. An offloaded chain that
# runs after the flowtable (priority 10 against 0) would take in XDP what
# the flowtable still holds in software: the flowtable is refused there.
nft delete table inet $T
check_err $? "cannot delete the table"
nft -f - <<EOF
table netdev xfho {
	chain c {
		type filter hook ingress device xfv0 priority 10; flags offload;
		ip daddr 10.0.9.9 drop
	}
}
EOF
check_err $? "cannot add an offloaded chain at priority 10 on xfv0"
mark=$(dmesg_mark "test_39 order")
out=$(ft_table offload 2>&1)
check_fail $? "a flowtable at priority 0 was bound where an offloaded chain runs after it"
dmesg_since "$mark" | grep -q "an offloaded chain would run after the flowtable"
check_err $? "no kernel log line says why: $(dmesg_since "$mark" | grep xdp_flow | head -n 2)"
nft delete table inet $T 2>/dev/null
nft delete table netdev xfho
check_err $? "cannot delete the chain"
log_test "a flowtable is refused on a device where an offloaded chain runs after it"

RET=0
# A chain not offloaded that runs before the flowtable (priority -10) sees
# every packet in software: the flows stay there (xfv0's direction; xfv1
# has no such chain). Once the chain goes, the next offer of the flow
# (about once a second while it takes the software path) comes into XDP.
nft -f - <<EOF &&
table netdev xfho {
	chain c {
		type filter hook ingress device xfv0 priority -10;
		ip daddr 10.0.9.9 drop
	}
}
EOF
ft_table offload
check_err $? "cannot add the chain at priority -10 and the flowtable"
mark=$(dmesg_mark "test_39 order 2")
u0=$(udp_count xfb veth_b)
udp_flow 4006 5006 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets"
n1=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv1 '.key.dst_port == 4006')
check_err $? "the way back is not in XDP on xfv1"
send_udp xfa 10.0.2.1 5 5006 18 4006
settle
n0=$(ft_rules xfv0 '.key.src_port == 4006')
u1=$(udp_count xfb veth_b)
[ "$n0" = 0 ] && [ $((u1 - u0)) -ge 8 ]
check_err $? "with a chain before the flowtable: $n0 rules in XDP on xfv0, xfb got $((u1 - u0)) of 8"
dmesg_since "$mark" | grep -q "an ingress hook not offloaded runs before the flowtable"
check_err $? "no kernel log line says why: $(dmesg_since "$mark" | grep xdp_flow | head -n 2)"
nft delete table netdev xfho
check_err $? "cannot delete the chain"
end=$((SECONDS + 10 * XF_PACE))
n0=0
while [ "$n0" = 0 ] && [ $SECONDS -lt $end ]; do
	send_udp xfa 10.0.2.1 3 5006 18 4006
	sleep 0.5
	n0=$(ft_rules xfv0 '.key.src_port == 4006')
done
[ "$n0" = 1 ]
check_err $? "the chain gone, the flow did not come into XDP on xfv0"
log_test "a chain not offloaded before the flowtable keeps its flows in software, until it goes"

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
ft_vlan_setup
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
# A flow that comes or goes holds back only itself. Each flow of a
# flowtable has an order of its own, later for a later flow, and a limit
# at a flow's order held back every flow after it: while an older flow
# went (its RULE_DEL until the helper's answer), the newer ones went to
# the stack (CI: 9 of 40 datagrams of the VLAN flow above). With the
# helper stopped, changes stay in flight: an older connection's flow
# deleted (its conntrack entry gone, the flowtable takes the flow out)
# and a new connection's offered, the flow between them goes on in XDP;
# the new one's frames take the stack until the helper has it.
udp_flow 4007 5007 10.0.2.1 10.0.2.254 &&
	udp_flow 4008 5008 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets from ports 4007 and 4008"
for p in 4007 4008; do
	n0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 ".key.src_port == $p")
	check_err $? "the connection from port $p is not in XDP on xfv0"
done
n1=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv1 '.key.dst_port == 4008')
check_err $? "the connection from port 4008 is not in XDP on xfv1"
TIMEOUT_MS=$(cat /sys/module/xdp_flow/parameters/helper_timeout_ms)
echo 60000 >/sys/module/xdp_flow/parameters/helper_timeout_ms
HELPER=$(xf_status_get .helper_pid)
kill -STOP "$HELPER"
check_err $? "cannot stop the helper (pid $HELPER)"
conntrack -D -p udp --orig-port-src 4007 >/dev/null 2>&1
check_err $? "cannot delete the conntrack entry of port 4007"
fl=$(wait_value 2 $((10 * XF_PACE)) xf_status_get .in_flight)
check_err $? "the flow of port 4007 is not on its way out (both ways): ${fl:-none} changes in flight"
# (xdp-flow wait, before each send, would wait for the helper)
XF_NO_SETTLE=1 udp_flow 4009 5009 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets from port 4009 (helper stopped)"
fl=$(wait_value 4 $((10 * XF_PACE)) xf_status_get .in_flight)
check_err $? "the new connection's two offers are not in flight too: ${fl:-none} changes in flight"
XF_NO_SETTLE=1 udp_way xfa xfb 10.0.2.1 5008 4008 xfv0 '.key.src_port == 4008'
XF_NO_SETTLE=1 udp_way xfb xfa 10.0.2.254 4008 5008 xfv1 '.key.dst_port == 4008'
XF_NO_SETTLE=1 send_expect xfa 10.0.2.1 $N 5009 18 4009 -- \
	"fn:ft_packets/xfv0/udp/packets/.key.src_port == 4009+0" \
	"fn:snmp/xfb/UdpNoPorts+$N"
kill -CONT "$HELPER"
HELPER=
echo "$TIMEOUT_MS" >/sys/module/xdp_flow/parameters/helper_timeout_ms
TIMEOUT_MS=
n0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 '.key.src_port == 4009')
check_err $? "the helper on again, the connection from port 4009 is not in XDP on xfv0"
udp_way xfa xfb 10.0.2.1 5009 4009 xfv0 '.key.src_port == 4009'
log_test "helper stopped, an older flow on its way out and a new one's offers in flight: the flow between them has its $N packets each way all counted in XDP, the new one's $N reach xfb through the stack, then through XDP"

RET=0
# What the software path leaves to the stack: TTL 1 (the stack answers
# time exceeded), a packet over the route's MTU (xfv1's, 1000 for a
# connection made after it changed: the stack fragments it) and fragments
# (the stack reassembles and forwards them).
# A connection of its own, in XDP just before: the first one's flow may
# be gone by now (the checks since its last datagrams can take longer
# than the flowtable's 30 s).
sel='.key.src_port == 4007'
udp_flow 4007 5000 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets of the TTL connection"
wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 "$sel" >/dev/null
check_err $? "the TTL connection is not in XDP on xfv0"
x0=$(ft_packets xfv0 udp packets "$sel") && b0=$(tc_stat xfb veth_b 50 packets) &&
	i0=$(snmp "" IcmpOutTimeExcds) && p0=$(snmp xfb UdpNoPorts)
check_err $? "cannot read the counters"
send_udp xfa 10.0.2.1 3 5000 18 4007 1
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
# 5 s: the software packets' refresh must last until XDP's first packet
# and its counters' way back (the rule's offer, a poll of it, the stats
# work); with 3 s, 6.12 once lost the flow before.
to=$((5 * XF_PACE))
ft_sysctl $FT_UDP_TIMEOUT $to
check_err $? "cannot set $FT_UDP_TIMEOUT"
udp_flow 4003 5003 10.0.2.1 10.0.2.254
check_err $? "cannot send the first packets"
sel='.key.src_port == 4003'
x0=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 "$sel")
check_err $? "the connection is not in XDP on xfv0"
p0=$(snmp xfb UdpNoPorts)
sent=0
end=$((SECONDS + 2 * to))
while [ $SECONDS -lt $end ]; do
	send_udp xfa 10.0.2.1 10 5003 18 4003 || break
	sent=$((sent + 10))
	sleep 0.5
done
x1=$(wait_value $sent $((5 * XF_PACE)) ft_packets xfv0 udp packets "$sel")
p1=$(wait_value $((p0 + sent)) $((5 * XF_PACE)) snmp xfb UdpNoPorts)
c=$(ct_offloaded udp)
[ "$x1" = $sent ] && [ "$((p1 - p0))" = $sent ] && [ "$c" -ge 1 ]
check_err $? "for $((2 * to)) s with a flowtable timeout of $to s: XDP counted $x1 of $sent, xfb took $((p1 - p0)); $c UDP entries HW_OFFLOAD"
ft_sysctl_restore
log_test "a flow outlives the flowtable's timeout ($to s) twice over while XDP carries it: $sent packets, all counted in XDP"

RET=0
nft delete table inet $T
check_err $? "cannot delete the table"
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv0)
m=$(ft_rules xfv1)
[ "$n" = 0 ] && [ "$m" = 0 ]
check_err $? "flowtable rules left in XDP: $n on xfv0, $m on xfv1"
log_test "deleting the table takes the flows out of XDP"

RET=0
ft_table offload
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
