#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flowtable over a PPPoE uplink, as a home router has it. xfb plays the
# access concentrator (pppoe-server on veth_b, 10.64.0.1 on its end); the
# root namespace dials it with pppd and the kernel's PPPoE (xfppp on xfv1,
# 10.64.0.2) and masquerades what leaves through xfppp. The flowtable has
# flags offload on xfv0 and xfv1: the way out pushes the session's header
# (the offer's PPPoE push), the way in arrives in the session (the flow's
# tuple says which; the offer does not). Checked:
#   - at the TC hook (auto, where the kernel has tcx) the flows stay in
#     software, a kernel log line says why, and the traffic arrives;
#   - at the XDP hook both directions are in XDP, the way in matched on
#     the session: UDP both ways, every datagram counted by XDP (without
#     the PPPoE header, as the flowtable counts), arriving with TTL 63 and
#     checksums the receivers verify;
#   - frames of another session, carrying the flow's packet, are not
#     XDP's (the stack drops them), and those of the session are;
#   - a TCP stream through the session, both ways in XDP until its close;
#   - deleting the table takes the flows out of XDP.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"
source "$XF_ROOT/selftests/guest/flowtable_lib.sh"

N=40
T=$FT_TABLE

cleanup()
{
	local pids

	# pppd, pppoe-server and its sessions' pppd and pppoe
	[ -s "$FT_TMPD/pppd.pid" ] && kill "$(cat "$FT_TMPD/pppd.pid")" 2>/dev/null
	pids=$(ip netns pids xfb 2>/dev/null)
	[ -n "$pids" ] && kill $pids 2>/dev/null
	ft_cleanup
}
trap cleanup EXIT

ft_require
require_cmd pppd
require_cmd pppoe-server
if ! modprobe pppoe 2>/dev/null; then
	log_skip "$(basename "$0")" "this kernel has no pppoe module"
	exit 0
fi
xf_test_setup || exit 1

# pppoe_up: the session, xfb serving it, the root namespace's pppd dialing.
pppoe_up()
{
	# Both ends try LCP and IPCP 10 times, 3 s apart, by default: on a
	# slow kernel they give up before the other answers.
	local opts="noauth lcp-echo-interval 0 noaccomp nopcomp novj nobsdcomp nodeflate noccp
		lcp-max-configure $((10 * XF_PACE)) ipcp-max-configure $((10 * XF_PACE))"

	# shellcheck disable=SC2086  # the options, one word each
	printf '%s\n' $opts "ifname xfisp" "logfile $FT_TMPD/server.log" \
		>"$FT_TMPD/server.options"
	ip netns exec xfb pppoe-server -I veth_b -L 10.64.0.1 -R 10.64.0.2 \
		-N 1 -O "$FT_TMPD/server.options" -X "$FT_TMPD/server.pid" ||
		return 1
	# shellcheck disable=SC2086  # the options, one word each
	pppd plugin pppoe.so xfv1 ifname xfppp noipdefault nodefaultroute \
		$opts user xf maxfail 1 nodetach >"$FT_TMPD/pppd.log" 2>&1 &
	echo $! >"$FT_TMPD/pppd.pid"
	wait_value 1 $((30 * XF_PACE)) sh -c \
		'ip -4 -o addr show dev xfppp 2>/dev/null | grep -c "10.64.0.2 peer 10.64.0.1"; true' \
		>/dev/null
}

# pppoe_sid: the session's id, as pppd logged it (/proc/net/pppoe prints
# it in network order).
pppoe_sid()
{
	sed -n 's/^PPP session is \([0-9]*\)$/\1/p' "$FT_TMPD/pppd.log"
}

# why_logged <mark>: how often the kernel logged, since <mark>, why a
# PPPoE flow stays in software at the TC hook.
why_logged()
{
	dmesg_since "$1" | grep -c "PPPoE flowtable flows need the XDP hook"
	true
}

# table: test_39's, masquerading out of xfppp.
table()
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
		oifname "xfppp" masquerade
	}
}
EOF
}

# udp_both <sport> <dport>: a UDP connection from xfa's <sport> to
# 10.64.0.1:<dport> and its answer, in software: the flowtable takes it.
udp_both()
{
	send_udp xfa 10.64.0.1 3 "$2" 18 "$1" &&
	send_udp xfb 10.64.0.2 3 "$1" 18 "$2"
}

# inject_start: a scapy process in xfb (imported once: that takes seconds
# here) that sends, for each line "<sid> <count> [pfc]" on its input,
# <count> PPPoE frames of session <sid> carrying the answer of the UDP
# connection 4001/5001 (TTL 64), with the PPP protocol in two bytes or in
# one ("pfc": compressed, which the flowtable's software path does not
# take either), and answers "sent".
inject_start()
{
	coproc INJ { ip netns exec xfb "$XF_PYTHON" -u -c '
import sys
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.layers.ppp import PPPoE
from scapy.packet import Raw
from scapy.sendrecv import sendp
dst, src = sys.argv[1], sys.argv[2]
print("ready")
for line in sys.stdin:
    sid, count, *pfc = line.split()
    f = (Ether(dst=dst, src=src) / PPPoE(sessionid=int(sid)) /
         Raw(b"\x21" if pfc else b"\x00\x21") /
         IP(src="10.64.0.1", dst="10.64.0.2", ttl=64) /
         UDP(sport=5001, dport=4001) / Raw(b"x" * 18))
    sendp(f, iface="veth_b", count=int(count), verbose=False)
    print("sent")
' "$XF_MAC_XFV1" "$XF_MAC_VETH_B" 2>"$FT_TMPD/inject.err"; }
	inject_wait
}

# inject_wait: the injector's next line is "ready" or "sent".
inject_wait()
{
	local line

	read -r -t $((30 * XF_PACE)) line <&"${INJ[0]}" &&
		{ [ "$line" = ready ] || [ "$line" = sent ]; }
}

# inject <sid> <count> [pfc]: frames as inject_start says.
inject()
{
	echo "$*" >&"${INJ[1]}" && inject_wait
}

# A flow carried in XDP outlives no flowtable timeout here: the checks
# below take their time in an emulated guest.
modprobe nf_flow_table &&
ft_sysctl $FT_UDP_TIMEOUT $((60 * XF_PACE)) &&
ft_sysctl $FT_TCP_TIMEOUT $((60 * XF_PACE)) || exit 1

RET=0
pppoe_up
check_err $? "no PPPoE session: $(tail -n 5 "$FT_TMPD/pppd.log" | tr '\n' ' ')
xfb's pppd: $(tail -n 8 "$FT_TMPD/server.log" 2>/dev/null | tr '\n' ' ')"
sid=$(pppoe_sid)
[ -n "$sid" ]
check_err $? "pppd logged no session id"
csum_offload off
check_err $? "cannot turn the clients' checksum offload off"
log_setup "PPPoE session $sid between xfv1 and xfb's veth_b" || exit 1

RET=0
xf_enable_dev xfv0 && xf_enable_dev xfv1
check_err $? "xdp-flow enable dev xfv0, xfv1 failed"
hook=$(xf_dev_hook xfv1)
table
check_err $? "nft could not add the flowtable"
log_setup "flowtable over the PPPoE session, xdp_flow enabled (hook $XF_HOOK: $hook)" ||
	exit 1

if [ "$hook" = tc ]; then
	RET=0
	mark=$(dmesg_mark "test_41 tc hook")
	udp_both 4000 5000
	check_err $? "cannot send the first packets"
	# the flowtable offers a flow again while it takes the software path
	wait_value 1 $((10 * XF_PACE)) why_logged "$mark" >/dev/null
	check_err $? "no kernel log line says why the flows stay in software"
	counters_snap "fn:snmp/xfb/UdpNoPorts+$N" "fn:snmp/xfa/UdpNoPorts+$N" \
		"fn:ft_packets/xfv0/udp+0" "fn:ft_packets/xfv1/udp+0"
	send_udp xfa 10.64.0.1 $N 5000 18 4000 &&
		send_udp xfb 10.64.0.2 $N 4000 18 5000
	check_err $? "cannot send"
	counters_expect
	[ "$(ft_rules xfv0)" = 0 ] && [ "$(ft_rules xfv1)" = 0 ]
	check_err $? "flowtable rules in XDP at the TC hook"
	log_test "TC hook: PPPoE flows stay in software, with a log line; the traffic arrives"

	RET=0
	nft delete table inet $T &&
	"$XF_CLI" disable dev xfv0 && "$XF_CLI" disable dev xfv1 &&
	"$XF_CLI" enable dev xfv0 hook xdp && "$XF_CLI" enable dev xfv1 hook xdp
	check_err $? "cannot enable xfv0 and xfv1 at the XDP hook"
	conntrack -F >/dev/null 2>&1
	table
	check_err $? "nft could not add the flowtable again"
	log_setup "the XDP hook on xfv0 and xfv1" || exit 1
fi

RET=0
# what arrives: TTL 63 on both sides, de-masqueraded on xfa's
xf_nsexec xfa tc filter add dev veth_a ingress pref 50 protocol ip flower \
	ip_proto udp src_ip 10.64.0.1 dst_ip 10.0.1.1 ip_ttl 63 action pass &&
xf_nsexec xfb tc qdisc add dev xfisp clsact &&
xf_nsexec xfb tc filter add dev xfisp ingress pref 50 protocol ip flower \
	ip_proto udp src_ip 10.64.0.2 dst_port 5001 ip_ttl 63 action pass
check_err $? "cannot add the TTL counters"
udp_both 4001 5001
check_err $? "cannot send the first packets"
out='.key.dst_port == 5001'
in='.key.src_port == 5001'
n=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv0 "$out")
check_err $? "the way out is not in XDP on xfv0 ($n rules)"
n=$(wait_value 1 $((10 * XF_PACE)) ft_rules xfv1 "$in")
check_err $? "the way in is not in XDP on xfv1 ($n rules)"
# At the hook the helper did not load at start (xdp where the kernel has
# tcx), the first device waits for that program.
wait_dev_attached xfv0 10 && wait_dev_attached xfv1 10
check_err $? "xfv0 or xfv1 not attached"
js=$(timeout 20 "$XF_CLI" -j show dev xfv1 |
	jq -c "[.[] | select(.source == \"flowtable\" and ($in)) | .key]")
[ "$(echo "$js" | jq -c '[.[] | .pppoe_sid] | unique')" = "[$sid]" ]
check_err $? "the way in's rule does not match session $sid: $js"
js=$(timeout 20 "$XF_CLI" -j show dev xfv0 |
	jq -c "[.[] | select(.source == \"flowtable\" and ($out)) | .actions[] | select(.kind == \"pppoe\")]")
[ "$(echo "$js" | jq -c '[.[] | .sid] | unique')" = "[$sid]" ]
check_err $? "the way out's rule does not push session $sid: $js"
send_expect xfa 10.64.0.1 $N 5001 18 4001 -- \
	"fn:ft_packets/xfv0/udp/packets/$out+$N" \
	"fn:snmp/xfb/UdpNoPorts+$N" "fn:snmp/xfb/UdpInCsumErrors+0" \
	"pk:xfb/xfisp/50+$N"
# the flowtable counts the way in without its PPPoE header: 46 bytes
send_expect xfb 10.64.0.2 $N 4001 18 5001 -- \
	"fn:ft_packets/xfv1/udp/packets/$in+$N" \
	"fn:ft_packets/xfv1/udp/bytes/$in+$((N * 46))" \
	"fn:snmp/xfa/UdpNoPorts+$N" "fn:snmp/xfa/UdpInCsumErrors+0" \
	"pk:xfa/veth_a/50+$N"
[ "$(ct_offloaded udp)" -ge 1 ]
check_err $? "conntrack marks no UDP connection HW_OFFLOAD"
log_test "UDP both ways through the PPPoE session in XDP: pushed, popped, NATed, TTL 63, every datagram counted"

RET=0
# the flow's answer in another session: not the rule's; the stack's
# PPPoE drops it. In the session: the rule's.
inject_start
check_err $? "cannot start scapy in xfb: $(tail -n 3 "$FT_TMPD/inject.err")"
counters_snap "fn:ft_packets/xfv1/udp/packets/$in+0" "fn:snmp/xfa/UdpNoPorts+0"
inject $((sid ^ 1)) 10
check_err $? "cannot send frames of session $((sid ^ 1))"
settle
counters_expect
# the PPP protocol compressed: the flowtable's software path finds no flow
counters_snap "fn:ft_packets/xfv1/udp/packets/$in+0"
inject "$sid" 10 pfc
check_err $? "cannot send frames with a compressed PPP protocol"
settle
counters_expect
counters_snap "fn:ft_packets/xfv1/udp/packets/$in+10" "fn:snmp/xfa/UdpNoPorts+10"
inject "$sid" 10
check_err $? "cannot send frames of session $sid"
counters_expect
eval "exec ${INJ[1]}>&-"	# the injector ends
log_test "the flow's packet in another session, or with a compressed PPP protocol, is not XDP's; in its own session it is"

RET=0
# TCP mid-stream, as test_39 reads it: the FIN at the end takes the flow
# out of the flowtable, and its counters with it.
ip netns exec xfb iperf3 -s -1 -D -B 10.64.0.1 -p 5201 >/dev/null 2>&1
sleep 0.3
ip netns exec xfa timeout $((20 * XF_PACE)) iperf3 -J -c 10.64.0.1 -p 5201 \
	-t $((4 * XF_PACE)) >"$FT_TMPD/iperf.json" 2>&1 &
pid=$!
sleep $((2 * XF_PACE))
read -r t0 t1 < <(timeout 20 "$XF_CLI" -j show |
	jq -r '[.[] | select(.source == "flowtable" and .key.ip_proto == "tcp")] |
	       [([.[] | select(.dev == "xfv0") | .stats.packets] | add // 0),
	        ([.[] | select(.dev == "xfv1") | .stats.packets] | add // 0)] | @tsv')
wait $pid
check_err $? "iperf3 TCP through the session failed: $(tail -n 3 "$FT_TMPD/iperf.json")"
bytes=$(jq -r '.end.sum_received.bytes // 0' "$FT_TMPD/iperf.json")
[ "$bytes" -gt 100000 ] 2>/dev/null
check_err $? "TCP: $bytes bytes received"
# XDP's counts 2 s in: more than a few each way say XDP carries the
# connection both ways. How many depends on the pace of xfb's user-space
# PPPoE server (172 and 96 in a CI run on 7.3, 60 and 29 in one here).
[ "${t0:-0}" -gt 10 ] && [ "${t1:-0}" -gt 10 ] 2>/dev/null
check_err $? "XDP forwarded $t0 TCP packets from xfa (pushed), $t1 from xfb (popped)"
tcp='.key.ip_proto == "tcp"'
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv1 "$tcp")
check_err $? "the closed connection's way in is still in XDP ($n rules)"
log_test "TCP through the PPPoE session: $bytes bytes; XDP forwarded $t0 packets from xfa, $t1 from xfb, until the close"

RET=0
nft delete table inet $T
check_err $? "cannot delete the table"
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv1)
check_err $? "$n flowtable rules left on xfv1"
n=$(wait_value_le 0 $((10 * XF_PACE)) ft_rules xfv0)
check_err $? "$n flowtable rules left on xfv0"
log_test "deleting the table takes the PPPoE flows out of XDP"

exit $EXIT_STATUS
