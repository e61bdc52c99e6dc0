# SPDX-License-Identifier: GPL-2.0
#
# Open vSwitch for the guest tests: Debian's ovsdb-server and ovs-vswitchd,
# started by the test with their database, sockets and logs in a directory
# of their own (nothing of a system installation is used or touched), and
# a bridge with ports into network namespaces. Sourced after
# selftests/lib.sh, selftests/guest/lib.sh and offload_lib.sh.
#
# The scene (ovs_topology):
#
#   netns xfoa  eth0 10.10.0.1/24 fd10::1  --- xfp1 (access, tag 10) \
#   netns xfob  eth0 10.10.0.2/24 fd10::2  --- xfp2 (access, tag 10)  xfbr0
#   netns xfoc  eth0.10 10.10.0.3/24 fd10::3 (eth0 trunk) --- xfp3  /
#
# xfp1..xfp3 are the root namespace's ends of veth pairs. ARP and IPv6
# neighbour discovery run for real (no static neighbours). GRO is on at
# the namespace ends, so that veth takes frames XDP redirects into
# xfp1..xfp3.

OVS_DIR=${OVS_DIR:-/tmp/xf-ovs}
OVS_SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
OVS_NS=(xfoa xfob xfoc)
OVS_PORTS=(xfp1 xfp2 xfp3)

export OVS_RUNDIR=$OVS_DIR OVS_LOGDIR=$OVS_DIR OVS_DBDIR=$OVS_DIR
export OVS_SYSCONFDIR=$OVS_DIR

# ovs_available: prints why OVS cannot run here, and fails, if so.
ovs_available()
{
	local b

	for b in ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl ovsdb-tool; do
		command -v "$b" >/dev/null || { echo "no $b (openvswitch-switch)"; return 1; }
	done
	[ -f "$OVS_SCHEMA" ] || { echo "no $OVS_SCHEMA"; return 1; }
	modprobe openvswitch 2>/dev/null || { echo "cannot load openvswitch.ko"; return 1; }
	return 0
}

# ovs_vswitchd_start: ovs-vswitchd on the database of ovs_start.
ovs_vswitchd_start()
{
	ovs-vswitchd "unix:$OVS_DIR/db.sock" --pidfile="$OVS_DIR/ovs-vswitchd.pid" \
		--log-file="$OVS_DIR/ovs-vswitchd.log" --detach --no-chdir \
		-vconsole:off -vfile:info 2>/dev/null
}

# ovs_vswitchd_stop: ovs-vswitchd exits (leaving the datapath and its
# flows in the kernel, as a restart does).
ovs_vswitchd_stop()
{
	local pid end=$((SECONDS + 10))

	pid=$(cat "$OVS_DIR/ovs-vswitchd.pid" 2>/dev/null) || return 0
	ovs-appctl -t ovs-vswitchd exit >/dev/null 2>&1 || kill "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null; do
		[ $SECONDS -ge $end ] && { kill -9 "$pid"; break; }
		sleep 0.1
	done
	return 0
}

# ovs_start <hw-offload true|false> [other_config...]: fresh database,
# ovsdb-server and ovs-vswitchd. hw-offload is read at start-up only.
ovs_start()
{
	local offload=$1

	shift
	ovs_stop
	rm -rf "$OVS_DIR"
	mkdir -p "$OVS_DIR" || return 1
	ovsdb-tool create "$OVS_DIR/conf.db" "$OVS_SCHEMA" || return 1
	ovsdb-server "$OVS_DIR/conf.db" --remote="punix:$OVS_DIR/db.sock" \
		--pidfile="$OVS_DIR/ovsdb-server.pid" \
		--log-file="$OVS_DIR/ovsdb-server.log" --detach --no-chdir \
		-vconsole:off 2>/dev/null || return 1
	ovs-vsctl --no-wait init || return 1
	ovs-vsctl --no-wait set Open_vSwitch . \
		other_config:hw-offload="$offload" "$@" || return 1
	ovs_vswitchd_start
}

# ovs_stop: both daemons gone, the kernel datapath deleted.
ovs_stop()
{
	local pid

	ovs_vswitchd_stop
	pid=$(cat "$OVS_DIR/ovsdb-server.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
	ovs-dpctl del-dp ovs-system >/dev/null 2>&1
	return 0
}

# ovs_topology: the namespaces and veth pairs of the scene (not yet in
# the bridge).
ovs_topology()
{
	local i ns

	ovs_topology_cleanup
	modprobe veth 2>/dev/null
	modprobe 8021q 2>/dev/null
	ns_register "${OVS_NS[@]}"
	for i in 0 1 2; do
		ns=${OVS_NS[$i]}
		ip netns add "$ns" &&
		ip link add "${OVS_PORTS[$i]}" type veth peer name eth0 netns "$ns" &&
		ip link set dev "${OVS_PORTS[$i]}" up || return 1
	done
	# shellcheck disable=SC2016  # expanded by the inner shell
	for i in 1 2 3; do
		ip netns exec "${OVS_NS[$((i - 1))]}" sh -c '
			i=$1
			ethtool -K eth0 gro on >/dev/null || exit 1
			ip link set dev lo up && ip link set dev eth0 up || exit 1
			dev=eth0
			if [ "$i" = 3 ]; then
				ip link add link eth0 name eth0.10 type vlan id 10 || exit 1
				ip link set dev eth0.10 up || exit 1
				dev=eth0.10
			fi
			ip addr add 10.10.0.$i/24 dev $dev &&
			ip addr add fd10::$i/64 dev $dev nodad
		' sh "$i" || return 1
	done
}

ovs_topology_cleanup()
{
	local ns p

	# only what is there (see xf_topology_cleanup)
	for ns in "${OVS_NS[@]}"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	for p in "${OVS_PORTS[@]}"; do
		[ -e "/sys/class/net/$p" ] && ip link del dev "$p" 2>/dev/null
	done
	return 0
}

# ovs_bridge: xfbr0 with xfp1, xfp2 (access, tag 10) and xfp3 (trunk).
ovs_bridge()
{
	ovs-vsctl -- add-br xfbr0 \
		-- add-port xfbr0 xfp1 tag=10 \
		-- add-port xfbr0 xfp2 tag=10 \
		-- add-port xfbr0 xfp3
}

# ovs_cleanup: for the EXIT trap of the OVS tests. OVS leaves the tunnel
# devices of its tunnel ports behind (a later test's own VXLAN or Geneve
# device in external mode on the same port could not be made).
ovs_cleanup()
{
	local d

	ovs_stop
	ovs_topology_cleanup
	for d in vxlan_sys_4789 genev_sys_6081; do
		[ -e "/sys/class/net/$d" ] && ip link del "$d" 2>/dev/null
	done
	xf_unload >/dev/null 2>&1
}

# ovs_flows [type [options...]]: `ovs-appctl dpctl/dump-flows` of that
# type (offloaded, ovs, tc, ...; "" for all), one flow per line.
ovs_flows()
{
	local t=${1:-}

	shift
	ovs-appctl dpctl/dump-flows "$@" ${t:+type=$t}
}
