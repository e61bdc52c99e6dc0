#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Open vSwitch with other_config:hw-offload=true on xdp_flow: real
# ovsdb-server and ovs-vswitchd, a bridge with two access ports (tag 10)
# and a trunk port into three namespaces (see ovs_lib.sh), xdp_flow
# enabled on the three ports.
#
# Every scenario runs with hw-offload=false (OVS's kernel datapath, with
# xdp_flow's program on the ports holding no rule) and with
# hw-offload=true, and both runs must give the same outcomes:
#   - ARP, ping between access ports and from an access port to the trunk
#     (VLAN push and pop), IPv6 with neighbour discovery, a TCP stream and
#     small UDP packets (iperf3);
#   - a flood: broadcast datagrams from xfp1 reach the other access port
#     and the trunk (VLAN push); with offload on the tc hook runs the
#     flood's flow (mirrors). (The bridge's own port is in another VLAN:
#     a flood into it is a mirred ingress after skbedit ptype host, which
#     only TC can give a broadcast, see docs/offload.md.)
#   - flows with conntrack, recirculation or a meter: they work, and with
#     offload on are not offloaded;
#   - ingress_policing_rate on a port (a matchall police at its first
#     prio): the rate holds, with offload on as without (XDP hands the
#     port's frames to the stack, and xdp-flow status says so); cleared,
#     the datagrams all arrive, with offload on in XDP;
#   - del-port, restarting ovs-vswitchd, the revalidator deleting idle
#     flows, disabling xdp_flow under traffic (no ping lost): connectivity
#     stays, and XDP holds exactly the rules TC holds.
# With offload on, dpctl/dump-flows type=offloaded lists the flows (push_vlan,
# pop_vlan, IPv6, ARP), and their packet counts and used times move with
# traffic that XDP handled (xdp-flow show counts the same packets).
#
# With hw-offload=false nothing reaches xdp_flow, whichever hook it has: a
# run with another hook than the first pass's (selftests/guest/run.sh's
# second pass) takes the first pass's hw-offload=false outcomes of this
# boot as its control instead of running them again.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"
source "$XF_ROOT/selftests/guest/ovs_lib.sh"

N=20

trap ovs_cleanup EXIT

RET=0
why=$(ovs_available)
check_err $? "Open vSwitch cannot run in this guest: $why"
xf_start
log_setup "setup: openvswitch.ko, OVS binaries, module, helper"
[ $RET = 0 ] || exit 1

# ping_ok <ns> <dst> [count]: every echo answered (ARP/ND included),
# each within 2 s (longer on a slow kernel: XF_PACE; an echo that starts
# a flow goes up to ovs-vswitchd, twice for conntrack's recirculation).
ping_ok()
{
	local n=${3:-5} out

	out=$(ip netns exec "$1" ping -q -c "$n" -i 0.1 -W $((2 * XF_PACE)) "$2" 2>&1)
	echo "$out" | grep -q " $n received" && return 0
	# to the log, not to the caller's result
	echo "# ping $2 from $1: $(echo "$out" | grep received)" >&2
	return 1
}

# iperf_tcp <from> <to-addr> <to-ns>: a 1 s TCP stream; prints the bytes
# the receiver got.
iperf_tcp()
{
	local js

	ip netns exec "$3" iperf3 -s -1 -D -p 5201 >/dev/null 2>&1 || return 1
	sleep 0.3
	js=$(ip netns exec "$1" timeout 20 iperf3 -J -c "$2" -p 5201 -t 1) || return 1
	echo "$js" | jq -r '.end.sum_received.bytes'
}

# iperf_udp <from> <to-addr> <to-ns>: 64-byte UDP at about 2000 packets/s
# for 1 s (a slow kernel's iperf3 sends fewer: at XF_PACE 10, about 400);
# prints "<sent> <lost>".
iperf_udp()
{
	local js

	ip netns exec "$3" iperf3 -s -1 -D -p 5202 >/dev/null 2>&1 || return 1
	sleep 0.3
	js=$(ip netns exec "$1" timeout 20 iperf3 -J -u -l 64 -b 1M -c "$2" -p 5202 -t 1) || return 1
	echo "$js" | jq -r '"\(.end.sum.packets) \(.end.sum.lost_packets)"'
}

# connectivity: one word per check, "ok" or what failed.
connectivity()
{
	local r=() b u

	ping_ok xfoa 10.10.0.2 && r+=(ping-access) || r+=(FAIL-ping-access)
	ping_ok xfoa 10.10.0.3 && r+=(ping-trunk) || r+=(FAIL-ping-trunk)
	ping_ok xfob fd10::3 && r+=(ping6-trunk) || r+=(FAIL-ping6-trunk)
	ip netns exec xfoa ip neigh show 10.10.0.3 | grep -q lladdr &&
		r+=(arp) || r+=(FAIL-arp)
	b=$(iperf_tcp xfoa 10.10.0.3 xfoc)
	[[ "$b" =~ ^[0-9]+$ ]] && [ "$b" -gt 1000000 ] &&
		r+=(tcp) || r+=("FAIL-tcp($b)")
	u=$(iperf_udp xfob 10.10.0.3 xfoc)
	# a few losses are the emulated guest's; a broken path loses them all
	[[ "$u" =~ ^([0-9]+)\ ([0-9]+)$ ]] &&
		[ "${BASH_REMATCH[1]}" -gt $((1000 / XF_PACE)) ] &&
		[ $((BASH_REMATCH[2] * 20)) -le "${BASH_REMATCH[1]}" ] &&
		r+=(udp) || r+=("FAIL-udp($u)")
	echo "${r[*]}"
}

# scene <hw-offload>: namespaces, xdp_flow on xfp1..xfp3, OVS, the bridge,
# the first packets (MAC learning).
scene()
{
	local p

	ovs_stop
	ovs_topology || return 1
	for p in "${OVS_PORTS[@]}"; do
		xf_enable_dev "$p" && wait_dev_attached "$p" 10 || return 1
	done
	# flows idle for 30 s go (default 10 s): none goes between the
	# steps of a check in a slow guest; the revalidator check sets 1 s
	ovs_start "$1" other_config:max-idle=30000 || return 1
	ovs_bridge || return 1
	ovs-vsctl --timeout=20 wait-until Interface xfp3 ofport!=-1 >/dev/null || return 1
	# The bridge's own port up, as on a host that uses it, but quiet,
	# and out of the ports' VLAN.
	sysctl -qw net.ipv6.conf.xfbr0.disable_ipv6=1 &&
		ip link set dev xfbr0 up &&
		ovs-vsctl set port xfbr0 tag=99 || return 1
	# A flow's first packet goes up to ovs-vswitchd, whose handler, with
	# hw-offload=true, waits while xdp_flow attaches the datapath to the
	# port (up to 2 s each). On a slow kernel the ARP retries run out
	# meanwhile (patched, 5 s of a blocked handler): there the checks
	# start once the first flows are in. Elsewhere they include them.
	if [ "$XF_PACE" -gt 1 ]; then
		warm_up xfoa 10.10.0.2
		warm_up xfoa 10.10.0.3
		warm_up xfob fd10::3
	fi
}

# flow_packets <regex>: packets of the offloaded flows whose dump line
# matches.
flow_packets()
{
	ovs_flows offloaded --names | grep -E -- "$1" |
		sed -n 's/.*packets:\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }'
}

# xf_packets <dev> <eth_type>: packets of the rules in XDP on <dev> whose
# eth_type is this.
xf_packets()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq "[.[] | select((.software | not) and .key.eth_type == \"$2\") |
		     .stats.packets] | add // 0"
}

# stale_rules: for every port, xdp-flow show must list exactly the flower
# rules TC holds; prints what differs. OVS may add or delete a flow between
# the two reads (IPv6 multicast of the namespaces, say): only a difference
# that lasts counts.
stale_rules()
{
	local p xf tcn out try

	for try in 1 2 3 4 5 6; do
		out=
		for p in "${OVS_PORTS[@]}"; do
			ip link show dev "$p" >/dev/null 2>&1 || continue
			xf=$(timeout 20 "$XF_CLI" -j show dev "$p" | jq length)
			tcn=$(tc -j filter show dev "$p" ingress 2>/dev/null |
			      jq '[.[] | select(.options != null)] | length')
			[ "$xf" = "${tcn:-0}" ] ||
				out+="$p: $xf rules in xdp-flow show, ${tcn:-0} in tc: $(tc filter show dev "$p" ingress | tr '\n\t' '  ') "
		done
		[ -z "$out" ] && return 0
		sleep 0.5
	done
	echo "$out"
}

# xf_rule_count <dev>: rules of xdp-flow show on <dev>.
xf_rule_count()
{
	timeout 20 "$XF_CLI" -j show dev "$1" | jq length
}

# xf_xdp_rule_count: rules in XDP (not software) on every device.
xf_xdp_rule_count()
{
	timeout 20 "$XF_CLI" -j show | jq '[.[] | select(.software | not)] | length'
}

# udp_from_b <count>: UDP datagrams from xfob to xfoa (in through xfp2);
# prints how many reached xfoa's eth0.
udp_from_b()
{
	local c0 c1

	c0=$(udp_count xfoa eth0) || return 1
	send_udp xfob 10.10.0.1 "$1" 4000 >/dev/null || return 1
	settle
	c1=$(udp_count xfoa eth0) || return 1
	echo $((c1 - c0))
}

# xfp2_all_to_stack: what xdp-flow status says sends all of xfp2's frames
# to the stack: "<kind> <prio> <offloaded rules before it>", or nothing.
xfp2_all_to_stack()
{
	timeout 20 "$XF_CLI" -j status |
		jq -r '.devices[] | select(.dev == "xfp2") |
		       select(.all_to_stack_kind) |
		       "\(.all_to_stack_kind) \(.all_to_stack_prio) \(.all_to_stack_after)"'
}

# police_check: ingress_policing_rate on xfp2 (OpenStack's QoS): OVS puts
# a matchall police at the port's first prio. It holds as it does without
# offload: XDP hands the port's frames to the stack, and status says so.
# Without it, the same datagrams all arrive, in XDP with offload on.
police_check()
{
	local got x0 all held

	RET=0
	udp_counter_add xfoa eth0
	check_err $? "cannot count UDP on xfoa's eth0"
	# the flow in place first (its first packets go up to ovs-vswitchd)
	udp_from_b 5 >/dev/null
	ovs-vsctl set interface xfp2 ingress_policing_rate=8 \
		ingress_policing_burst=8
	check_err $? "cannot set ingress_policing_rate on xfp2"
	x0=$(xf_packets xfp2 ipv4)
	got=$(udp_from_b 300)
	[[ "$got" =~ ^[0-9]+$ ]] && [ "$got" -lt 100 ]
	check_err $? "$got of 300 datagrams passed a policer of 8 kbit/s with a 1 kB burst"
	held=$got
	record "police:$([ $RET = 0 ] && echo held || echo "let-$got")"
	tc filter show dev xfp2 ingress | grep -q "matchall"
	check_err $? "OVS put no matchall on xfp2: $(tc filter show dev xfp2 ingress | tr '\n\t' '  ')"
	if [ $mode = true ]; then
		[ "$(xf_packets xfp2 ipv4)" = "$x0" ]
		check_err $? "XDP counted $(($(xf_packets xfp2 ipv4) - x0)) packets on xfp2 past the policer"
		all=$(xfp2_all_to_stack)
		[[ "$all" =~ ^matchall\ [0-9]+\ 0$ ]]
		check_err $? "xdp-flow status does not say that the matchall sends every frame of xfp2 to the stack: '$all'"
	fi
	ovs-vsctl set interface xfp2 ingress_policing_rate=0 \
		ingress_policing_burst=0
	check_err $? "cannot clear ingress_policing_rate on xfp2"
	if [ $mode = true ]; then
		all=$(xfp2_all_to_stack)
		[ -z "$all" ]
		check_err $? "xdp-flow status still says '$all' sends xfp2's frames to the stack"
	fi
	x0=$(xf_packets xfp2 ipv4)
	got=$(udp_from_b 300)
	record "unpoliced:$got"
	[ "$got" = 300 ]
	check_err $? "$got of 300 datagrams arrived without the policer"
	if [ $mode = true ]; then
		[ $(($(xf_packets xfp2 ipv4) - x0)) -ge 300 ]
		check_err $? "XDP counted $(($(xf_packets xfp2 ipv4) - x0)) of the 300 on xfp2"
	fi
	log_test "hw-offload=$mode: ingress_policing_rate on xfp2 holds ($held of 300 passed), without it all 300 arrive$([ $mode = true ] && echo ' in XDP')"
}

# record <word>: one outcome of the current mode's run, compared with
# the other mode's at the end.
record()
{
	OUT[$mode]+="$1 "
}

# pings <ns> <dst>: "reach-<dst>" or "noreach-<dst>".
pings()
{
	if ping_ok "$1" "$2"; then
		echo "reach-$2"
	else
		echo "noreach-$2"
	fi
}

# warm_up <ns> <dst>: a few echoes whose answers do not count, then a
# pause for OVS to finish the flow changes they started.
warm_up()
{
	ip netns exec "$1" ping -q -c 3 -i 0.2 -W "$XF_PACE" "$2" >/dev/null 2>&1
	sleep "$XF_PACE"
}

# offloaded_flows_check: the flows of the traffic so far, and counters.
offloaded_flows_check()
{
	local f0 f1 x0 x1 used off try
	local flow="in_port\\(xfp1\\).*eth_type\\(0x0800\\)"

	RET=0
	off=$(ovs_flows offloaded --names)
	echo "$off" | grep -q "in_port(xfp1).*eth_type(0x0800).*actions:push_vlan(vid=10,pcp=0),xfp3"
	check_err $? "no offloaded flow xfp1 -> push_vlan -> xfp3: $off"
	echo "$off" | grep -q "in_port(xfp3).*vlan(vid=10.*actions:pop_vlan,xfp1"
	check_err $? "no offloaded flow xfp3 -> pop_vlan -> xfp1"
	echo "$off" | grep -q "eth_type(0x86dd)"
	check_err $? "no offloaded IPv6 flow"
	echo "$off" | grep -q "eth_type(0x0806)"
	check_err $? "no offloaded ARP flow"
	log_test "dpctl/dump-flows type=offloaded: IPv4, IPv6 and ARP flows, VLAN push and pop"

	RET=0
	# the flow in place first: packets before it go up to ovs-vswitchd.
	# OVS may replace the flow between the two reads (a revalidator that
	# found it idle on a slow kernel, a MAC table change): its count then
	# starts again and goes below the first read. Measure again then.
	for try in 1 2 3; do
		ping_ok xfoa 10.10.0.3 2
		check_err $? "ping xfoa -> 10.10.0.3 failed"
		f0=$(wait_value 1 $((10 * XF_PACE)) flow_packets "$flow")
		check_err $? "no offloaded xfp1 IPv4 flow counted a packet"
		f0=$(flow_packets "$flow")
		x0=$(xf_packets xfp1 ipv4)
		ping_ok xfoa 10.10.0.3 $N
		check_err $? "ping xfoa -> 10.10.0.3 failed"
		# OVS reads the counters from TC, TC from xdp_flow: wait for a read
		f1=$(wait_value $((f0 + N)) $((10 * XF_PACE)) flow_packets "$flow")
		x1=$(xf_packets xfp1 ipv4)
		[ "$f1" -ge "$f0" ] && [ "$x1" -ge "$x0" ] && break
		echo "# try $try: the offloaded xfp1 IPv4 flows' count went from $f0 to $f1: OVS replaced the flow; again" >&2
	done
	[ "$f1" = $((f0 + N)) ]
	check_err $? "the offloaded xfp1 IPv4 flows counted $((f1 - f0)) packets, not $N"
	[ $((x1 - x0)) = $N ]
	check_err $? "xdp-flow show counted $((x1 - x0)) IPv4 packets on xfp1, not $N"
	used=$(ovs_flows offloaded --names | grep "in_port(xfp1).*eth_type(0x0800)" |
	       sed -n 's/.*used:\([0-9.]*\)s.*/\1/p' | sort -n | head -1)
	[ -n "$used" ] && awk -v u="$used" -v max=$((5 * XF_PACE)) 'BEGIN { exit !(u < max) }'
	check_err $? "the flow's used time is '$used', not within $((5 * XF_PACE)) s"
	log_test "$N pings: the offloaded flow and xdp-flow show count $N packets, used ${used}s ago"
}

# bcast <count>: UDP broadcasts from xfoa (in through xfp1).
bcast()
{
	ip netns exec xfoa "$XF_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
for i in range(int(sys.argv[1])):
    s.sendto(b"x" * 18, ("10.10.0.255", 9))
' "$1"
}

# flood_check: broadcasts from xfoa flood to xfob (access) and xfoc
# (trunk, tagged); with offload on the tc hook, the
# flood's flow is offloaded and XDP counts the datagrams.
flood_check()
{
	local b0 c0 x0 b c x hook off

	RET=0
	# xfoc's datagrams arrive tagged: TC's "protocol ip" filters of eth0
	# see the tag's protocol, eth0.10's the datagram
	udp_counter_add xfob eth0 && udp_counter_add xfoc eth0.10
	check_err $? "cannot count UDP on xfob's eth0 and xfoc's eth0.10"
	# the flood's flow in place first: its first datagram goes up to
	# ovs-vswitchd
	bcast 3
	sleep "$XF_PACE"
	settle
	b0=$(udp_count xfob eth0) && c0=$(udp_count xfoc eth0.10)
	check_err $? "cannot read the UDP counters"
	x0=$(xf_packets xfp1 ipv4)
	bcast $N
	check_err $? "cannot send the broadcasts"
	settle
	b=$(($(wait_value $((b0 + N)) 5 udp_count xfob eth0) - b0))
	c=$(($(wait_value $((c0 + N)) 5 udp_count xfoc eth0.10) - c0))
	record "flood:$b,$c"
	[ "$b" = $N ] && [ "$c" = $N ]
	check_err $? "of $N broadcasts, $b reached xfob and $c xfoc"
	hook=$(xf_dev_hook xfp1)
	if [ $mode = true ] && [ "$hook" = tc ]; then
		off=$(ovs_flows offloaded --names)
		if ! echo "$off" | grep -Eq "in_port\(xfp1\).*actions:.*(xfp2.*xfp3|xfp3.*xfp2)"; then
			check_err 1 "no offloaded flood flow from xfp1 to xfp2 and xfp3"
			ovs_flows "" --names | grep -F 'ff:ff:ff:ff:ff:ff' |
				sed 's/^/# flow: /' >&2
			timeout 20 "$XF_CLI" show dev xfp1 | sed 's/^/# xdp-flow: /' >&2
		fi
		x=$(($(xf_packets xfp1 ipv4) - x0))
		[ "$x" -ge $N ]
		check_err $? "XDP counted $x IPv4 packets on xfp1, not the $N broadcasts"
	fi
	log_test "hw-offload=$mode: a flood of $N broadcasts reaches the access port and the trunk$([ $mode = true ] && [ "$hook" = tc ] && echo ", in XDP (tc hook)")"
}

# no_stale_check <what>: XDP holds exactly TC's rules.
no_stale_check()
{
	local st

	RET=0
	st=$(stale_rules)
	[ -z "$st" ]
	check_err $? "$st"
	log_test "hw-offload=$mode: after $1, XDP holds exactly the rules TC holds"
}

# Where the first pass leaves its hw-offload=false outcomes (the guest's
# /tmp lasts one boot).
OVS_CONTROL=/tmp/xdp_flow_ovs_control

declare -A OUT
modes="false true"
if [ "$XF_HOOK" != auto ] && [ -s "$OVS_CONTROL" ]; then
	OUT[false]=$(cat "$OVS_CONTROL")
	modes=true
	log_info "control: hw-offload=false outcomes of the first pass (hook auto) of this boot: ${OUT[false]}"
fi
for mode in $modes; do
	RET=0
	scene $mode
	check_err $? "cannot set up OVS with hw-offload=$mode"
	log_test "hw-offload=$mode: OVS with a bridge over xfp1, xfp2 (tag 10) and xfp3 (trunk), xdp_flow on each"
	[ $RET = 0 ] || continue

	RET=0
	c=$(connectivity)
	record "$c"
	[[ "$c" != *FAIL* ]]
	check_err $? "$c"
	[ $RET = 0 ] || grep -E '\|(WARN|ERR|EMER)\|' "$OVS_DIR/ovs-vswitchd.log" |
		tail -n 20 | sed 's/^/# ovs-vswitchd: /'
	log_test "hw-offload=$mode: ARP, ping, ping6 with ND, TCP and UDP through OVS: $c"

	flood_check
	if [ $mode = true ]; then
		offloaded_flows_check
	else
		RET=0
		n=$(ovs_flows offloaded | grep -c .)
		r=$(timeout 20 "$XF_CLI" -j show | jq length)
		[ "$n" = 0 ] && [ "$r" = 0 ]
		check_err $? "$n offloaded flows, $r rules in xdp-flow show"
		log_test "hw-offload=false: the kernel datapath forwards, nothing is offloaded"
	fi

	# conntrack, recirculation and a meter: OVS's datapath flows carry
	# ct() and meter() actions, which XDP cannot run
	RET=0
	ovs-ofctl add-flow xfbr0 "priority=100,ip,nw_dst=10.10.0.2,actions=ct(commit),NORMAL" &&
	ovs-ofctl add-flow xfbr0 "priority=100,ip,nw_src=10.10.0.2,actions=ct(table=1)" &&
	ovs-ofctl add-flow xfbr0 "table=1,priority=100,ip,actions=NORMAL"
	check_err $? "cannot add the conntrack OpenFlow rules"
	ovs-ofctl -O OpenFlow13 add-meter xfbr0 "meter=1,pktps,band=type=drop,rate=10000" &&
	ovs-ofctl -O OpenFlow13 add-flow xfbr0 "priority=100,ipv6,ipv6_dst=fd10::2,actions=meter:1,NORMAL" &&
	ovs-ofctl -O OpenFlow13 add-flow xfbr0 "priority=100,ipv6,ipv6_src=fd10::2,actions=meter:1,NORMAL"
	check_err $? "cannot add the meter and its OpenFlow rules"
	# The new OpenFlow rules change the flows already in place: while
	# the revalidator replaces them (and, with hw-offload=true, TC sets
	# up act_ct and its chain), an echo can be lost in OVS. Let that
	# settle first; the checks below still want every echo answered.
	warm_up xfoa 10.10.0.2
	warm_up xfoa fd10::2
	r4=$(pings xfoa 10.10.0.2) && r6=$(pings xfoa fd10::2)
	record "ct:$r4 meter:$r6"
	[ "$r4 $r6" = "reach-10.10.0.2 reach-fd10::2" ]
	check_err $? "$r4 (conntrack), $r6 (meter)"
	all=$(ovs_flows "" --names)
	echo "$all" | grep -q "ct(commit)" && echo "$all" | grep -q "recirc(" &&
		echo "$all" | grep -q "meter("
	check_err $? "no datapath flows with ct(commit), recirc() and meter(): $all"
	if [ $mode = true ]; then
		off=$(ovs_flows offloaded --names)
		echo "$off" | grep -q "ct(\|meter(\|recirc("
		check_fail $? "a conntrack, recirculation or meter flow shows as offloaded: $off"
	fi
	log_test "hw-offload=$mode: conntrack, recirculation and meter flows work, and are not offloaded"
	ovs-ofctl del-flows xfbr0 "ip,nw_dst=10.10.0.2" &&
	ovs-ofctl del-flows xfbr0 "ip,nw_src=10.10.0.2" &&
	ovs-ofctl del-flows xfbr0 "table=1" &&
	ovs-ofctl -O OpenFlow13 del-flows xfbr0 "ipv6"

	police_check

	RET=0
	ovs-vsctl del-port xfbr0 xfp2
	check_err $? "ovs-vsctl del-port xfbr0 xfp2 failed"
	r3=$(pings xfoa 10.10.0.3) && r2=$(pings xfoa 10.10.0.2)
	record "del-port:$r3,$r2"
	[ "$r3 $r2" = "reach-10.10.0.3 noreach-10.10.0.2" ]
	check_err $? "after del-port xfp2: $r3, $r2"
	# OVS purges the port's flows after ovs-vsctl returned
	n=$(wait_value_le 0 10 xf_rule_count xfp2)
	[ "$n" = 0 ]
	check_err $? "$n rules left in XDP on xfp2 10 s after del-port: $(tc filter show dev xfp2 ingress | tr '\n\t' '  ')"
	log_test "hw-offload=$mode: del-port xfp2: xfp2 unreachable, no rule left on it, the others forward"
	no_stale_check "del-port"
	ovs-vsctl add-port xfbr0 xfp2 tag=10

	RET=0
	ovs_vswitchd_stop
	ovs_vswitchd_start
	check_err $? "ovs-vswitchd did not start again"
	ovs-vsctl --timeout=20 wait-until Interface xfp2 ofport!=-1 >/dev/null
	r3=$(pings xfoa 10.10.0.3) && r2=$(pings xfoa 10.10.0.2)
	record "restart:$r3,$r2"
	[ "$r3 $r2" = "reach-10.10.0.3 reach-10.10.0.2" ]
	check_err $? "after restarting ovs-vswitchd: $r3, $r2"
	if [ $mode = true ]; then
		n=$(ovs_flows offloaded | grep -c .)
		[ "$n" -gt 0 ]
		check_err $? "no offloaded flows after the restart"
	fi
	log_test "hw-offload=$mode: restarting ovs-vswitchd: connectivity back"
	no_stale_check "restarting ovs-vswitchd"

	RET=0
	ovs-vsctl set Open_vSwitch . other_config:max-idle=1000
	check_err $? "cannot set max-idle"
	if [ $mode = true ]; then
		n=$(wait_value_le 0 20 xf_xdp_rule_count)
		[ "$n" = 0 ]
		check_err $? "$n rules still in XDP 20 s after the traffic stopped (max-idle 1 s)"
	else
		sleep 3
	fi
	r3=$(pings xfoa 10.10.0.3)
	record "idle:$r3"
	[ "$r3" = reach-10.10.0.3 ]
	check_err $? "after the revalidator deleted idle flows: $r3"
	log_test "hw-offload=$mode: the revalidator deletes idle flows (out of XDP too), traffic flows again"
	no_stale_check "the revalidator deleted idle flows"
	ovs-vsctl set Open_vSwitch . other_config:max-idle=30000

	RET=0
	ping_ok xfoa 10.10.0.3
	ip netns exec xfoa ping -q -c 60 -i 0.05 -W 2 10.10.0.3 > "$OVS_DIR/ping.out" 2>&1 &
	pid=$!
	sleep 1
	for p in "${OVS_PORTS[@]}"; do
		"$XF_CLI" disable dev "$p"
		check_err $? "xdp-flow disable dev $p failed"
	done
	wait $pid
	got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$OVS_DIR/ping.out")
	record "disable:$got/60"
	[ "$got" = 60 ]
	check_err $? "pings lost while disabling: $(grep received "$OVS_DIR/ping.out")"
	n=$(xdp_progs_anywhere | grep -c .)
	[ "$n" = 0 ]
	check_err $? "XDP programs left after disabling: $(xdp_progs_anywhere)"
	n=$(timeout 20 "$XF_CLI" -j show | jq length)
	[ "$n" = 0 ]
	check_err $? "$n rules left in xdp-flow show after disabling"
	c=$(connectivity)
	record "$c"
	[[ "$c" != *FAIL* ]]
	check_err $? "after disabling: $c"
	log_test "hw-offload=$mode: disabling xdp_flow under traffic: $got of 60 pings, then: $c"
done

if [ "$XF_HOOK" = auto ] && [ -n "${OUT[false]:-}" ]; then
	echo "${OUT[false]}" >"$OVS_CONTROL"
fi

RET=0
[ -n "${OUT[false]:-}" ] && [ "${OUT[false]:-}" = "${OUT[true]:-}" ]
check_err $? "offload off: '${OUT[false]:-}'; offload on: '${OUT[true]:-}'"
log_test "the same outcomes with offload off and on, in every scenario"

exit $EXIT_STATUS
