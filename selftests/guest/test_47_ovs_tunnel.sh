#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Open vSwitch with hw-offload=true over tunnels to a second hypervisor:
# a VM's frames out of a VXLAN port and a Geneve port. OVS writes each
# such flow as tunnel_key set and a redirect to vxlan_sys_4789 or
# genev_sys_6081 on the VM's port, and the other direction as enc_*
# matches, tunnel_key unset and a redirect to the VM's port on the tunnel
# device, where offload is enabled too; the tc hook runs both.
#
# The scene: two bridges, xfbr0 with the VM xfoa (xfp1, 10.10.0.1) and a
# VXLAN port (VNI 42), xfbr1 with the VM xfob (xfp2, 10.20.0.2) and a
# Geneve port (VNI 43), both to 10.0.9.2 over the underlay xfu0
# (10.0.9.1) - eth0 of xfor, the second hypervisor. There the kernel's
# own VXLAN and Geneve devices, vxr (10.10.0.9) and gnr (10.20.0.9), end
# the tunnels. ARP and the replies run for real.
#
# Over Geneve, both ends add OVN's option (class 0x0102, type 0x80, 4
# bytes: the logical ports) to every frame, and xfbr1 lets in from gn0
# only frames that carry it (tun_metadata0, as OVN's tables match it):
# OVS writes the decapsulating flows with a geneve_opts match and the
# encapsulating ones with geneve_opts in tunnel_key set.
#
# With hw-offload=false and with hw-offload=true the same traffic must
# arrive: pings both ways, then N datagrams from each VM to the far end
# and N back, counted where they arrive. With offload on the tc hook, the
# flows that encapsulate and those that decapsulate are offloaded
# (dpctl/dump-flows type=offloaded lists them) and XDP counts at least
# the N datagrams of each direction, on the VMs' ports and on the tunnel
# devices; on the XDP hook they stay in TC (not offloaded) and the
# datagrams arrive all the same.

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$XF_ROOT/selftests/guest/offload_lib.sh"
source "$XF_ROOT/selftests/guest/ovs_lib.sh"

N=50
# OVN's Geneve option, on every frame over the Geneve tunnel both ways
GENEVE_OPT=0102:80:00010002

cleanup()
{
	ovs_cleanup
	[ -e /run/netns/xfor ] && ip netns del xfor 2>/dev/null
	[ -e /sys/class/net/xfu0 ] && ip link del xfu0 2>/dev/null
}
trap cleanup EXIT

RET=0
why=$(ovs_available)
check_err $? "Open vSwitch cannot run in this guest: $why"
for m in vxlan geneve act_tunnel_key; do
	modprobe "$m" 2>/dev/null || check_err 1 "the kernel has no $m"
done
xf_start
log_setup "setup: openvswitch.ko, OVS binaries, tunnels, module, helper"
[ $RET = 0 ] || exit 1

# underlay: the underlay link and the second hypervisor's tunnel ends.
underlay()
{
	[ -e /run/netns/xfor ] && ip netns del xfor
	[ -e /sys/class/net/xfu0 ] && ip link del xfu0
	ns_register xfor
	ip netns add xfor &&
		ip link add xfu0 type veth peer name eth0 netns xfor &&
		ip addr add 10.0.9.1/24 dev xfu0 &&
		ip link set xfu0 up || return 1
	ip -n xfor link set lo up &&
		ip -n xfor addr add 10.0.9.2/24 dev eth0 &&
		ip -n xfor link set eth0 up &&
		ip -n xfor link add vxr type vxlan id 42 local 10.0.9.2 \
			remote 10.0.9.1 dstport 4789 dev eth0 &&
		ip -n xfor addr add 10.10.0.9/24 dev vxr &&
		ip -n xfor link set vxr up &&
		ip -n xfor link add gnr type geneve external &&
		ip -n xfor addr add 10.20.0.9/24 dev gnr &&
		ip -n xfor link set gnr up &&
		tc -n xfor qdisc add dev gnr clsact &&
		tc -n xfor filter add dev gnr egress matchall \
			action tunnel_key set src_ip 10.0.9.2 dst_ip 10.0.9.1 \
			id 43 dst_port 6081 geneve_opts "$GENEVE_OPT" &&
		udp_counter_add xfor vxr && udp_counter_add xfor gnr
}

# scene <hw-offload>: namespaces, xdp_flow on the VMs' ports, OVS, the
# bridges with their tunnel ports.
scene()
{
	local p br

	ovs_stop
	ovs_topology && underlay || return 1
	# xfob in its own subnet, behind the Geneve port
	ip -n xfob addr flush dev eth0 &&
		ip -n xfob addr add 10.20.0.2/24 dev eth0 || return 1
	for p in xfp1 xfp2; do
		xf_enable_dev "$p" && wait_dev_attached "$p" 10 || return 1
	done
	ovs_start "$1" other_config:max-idle=30000 || return 1
	ovs-vsctl -- add-br xfbr0 -- add-port xfbr0 xfp1 \
		-- add-port xfbr0 vx0 -- set interface vx0 type=vxlan \
			options:remote_ip=10.0.9.2 options:key=42 \
		-- add-br xfbr1 -- add-port xfbr1 xfp2 \
		-- add-port xfbr1 gn0 -- set interface gn0 type=geneve \
			options:remote_ip=10.0.9.2 options:key=43 || return 1
	ovs-vsctl --timeout=20 wait-until Interface gn0 ofport!=-1 >/dev/null || return 1
	ovs-ofctl add-tlv-map xfbr1 "{class=0x0102,type=0x80,len=4}->tun_metadata0" &&
		ovs-ofctl add-flow xfbr1 "priority=100,in_port=xfp2,actions=set_field:0x10002->tun_metadata0,NORMAL" &&
		ovs-ofctl add-flow xfbr1 "priority=100,in_port=gn0,tun_metadata0=0x10002,actions=NORMAL" &&
		ovs-ofctl add-flow xfbr1 "priority=90,in_port=gn0,actions=drop" ||
		return 1
	# the tunnel devices OVS made (kept from an earlier scene, still
	# enabled): offload with the hook users get
	for p in vxlan_sys_4789 genev_sys_6081; do
		[ -n "$(xf_dev_hook "$p")" ] || "$XF_CLI" enable dev "$p" ||
			return 1
	done
	udp_counter_add xfoa eth0 && udp_counter_add xfob eth0 || return 1
	# the bridges' own ports quiet, out of the floods' way
	for br in xfbr0 xfbr1; do
		sysctl -qw "net.ipv6.conf.$br.disable_ipv6=1" &&
			ovs-vsctl set port "$br" tag=99 || return 1
	done
}

# ping_ok <ns> <dst>: every echo answered (ARP included).
ping_ok()
{
	ip netns exec "$1" ping -q -c 5 -i 0.2 -W $((2 * XF_PACE)) "$2" 2>&1 |
		grep -q " 5 received"
}

# xf_tunnel_packets <dev> <kind>: what XDP counted for the rules on <dev>
# that have an action of <kind>: tunnel_set (they encapsulate) or
# tunnel_unset (they take decapsulated frames to a VM).
xf_tunnel_packets()
{
	timeout 20 "$XF_CLI" -j show dev "$1" |
		jq --arg k "$2" '[.[] | select((.software | not) and
			 ([.actions[].kind] | index($k) != null)) |
		     .stats.packets] | add // 0'
}

outcomes=()
for offload in false true; do
	RET=0
	scene "$offload"
	check_err $? "cannot set up the scene (hw-offload=$offload)"
	log_test "hw-offload=$offload: two bridges, a VXLAN and a Geneve port to xfor"
	[ $RET = 0 ] || exit 1

	# The first packets go up to ovs-vswitchd, which with hw-offload
	# waits while xdp_flow attaches to the port: on a slow kernel ARP's
	# retries may run out meanwhile. The checks start once flows are in.
	ip netns exec xfoa ping -q -c 2 -W "$XF_PACE" 10.10.0.9 >/dev/null 2>&1
	ip netns exec xfob ping -q -c 2 -W "$XF_PACE" 10.20.0.9 >/dev/null 2>&1

	RET=0
	r=""
	ping_ok xfoa 10.10.0.9 && r+="ping-vxlan " || r+="FAIL-ping-vxlan "
	ping_ok xfob 10.20.0.9 && r+="ping-geneve " || r+="FAIL-ping-geneve "
	[[ "$r" != *FAIL* ]]
	check_err $? "hw-offload=$offload: $r"
	log_test "hw-offload=$offload: pings over VXLAN and Geneve, ARP included ($r)"

	RET=0
	x1=$(xf_tunnel_packets xfp1 tunnel_set)
	x2=$(xf_tunnel_packets xfp2 tunnel_set)
	x3=$(xf_tunnel_packets vxlan_sys_4789 tunnel_unset)
	x4=$(xf_tunnel_packets genev_sys_6081 tunnel_unset)
	send_expect xfoa 10.10.0.9 $N -- udp:xfor/vxr+$N
	send_expect xfob 10.20.0.9 $N -- udp:xfor/gnr+$N
	send_expect xfor 10.10.0.1 $N -- udp:xfoa/eth0+$N
	send_expect xfor 10.20.0.2 $N -- udp:xfob/eth0+$N
	d1=$(($(xf_tunnel_packets xfp1 tunnel_set) - x1))
	d2=$(($(xf_tunnel_packets xfp2 tunnel_set) - x2))
	d3=$(($(xf_tunnel_packets vxlan_sys_4789 tunnel_unset) - x3))
	d4=$(($(xf_tunnel_packets genev_sys_6081 tunnel_unset) - x4))
	enc=$(ovs_flows offloaded | grep -c 'set(tunnel(')
	dec=$(ovs_flows offloaded | grep -c '^tunnel(')
	genc=$(ovs_flows offloaded | grep 'set(tunnel(' | grep -c 'geneve(')
	gdec=$(ovs_flows offloaded | grep '^tunnel(' | grep -c 'geneve(')
	hook=$(xf_dev_hook xfp1)
	if [ "$offload" = true ] && [ "$hook" = tc ]; then
		[ "$d1" -ge $N ] && [ "$d2" -ge $N ] &&
			[ "$d3" -ge $N ] && [ "$d4" -ge $N ]
		check_err $? "XDP counted $d1 and $d2 of the $N datagrams into VXLAN and Geneve, $d3 and $d4 out of them"
		[ "$enc" -ge 2 ] && [ "$dec" -ge 2 ] && [ "$genc" -ge 1 ] &&
			[ "$gdec" -ge 1 ]
		check_err $? "$enc offloaded flows set a tunnel ($genc with Geneve options), $dec match one ($gdec): $(ovs_flows offloaded | grep 'tunnel(' | tr '\n' ';')"
		log_test "hw-offload=true, tc hook: $N datagrams each way over each tunnel arrive, XDP counted $d1 and $d3 (VXLAN), $d2 and $d4 (Geneve, OVN's option); $enc encapsulating and $dec decapsulating flows offloaded, $genc and $gdec with Geneve options"
	else
		[ "$d1" = 0 ] && [ "$d2" = 0 ] && [ "$d3" = 0 ] &&
			[ "$d4" = 0 ] && [ "$enc" = 0 ] && [ "$dec" = 0 ]
		check_err $? "XDP counted $d1, $d2, $d3 and $d4, $enc encapsulating and $dec decapsulating flows offloaded (hw-offload=$offload, hook $hook)"
		log_test "hw-offload=$offload, hook $hook: $N datagrams each way over VXLAN and over Geneve arrive, nothing in XDP"
	fi
	outcomes+=("$r")
done

RET=0
[ "${outcomes[0]}" = "${outcomes[1]}" ]
check_err $? "the outcomes differ: hw-offload=false '${outcomes[0]}', true '${outcomes[1]}'"
log_test "hw-offload false and true: the same outcomes"

exit $EXIT_STATUS
