# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the tests that run inside a guest (selftests/guest/test_*.sh),
# and the one file a test sources first:
#     source "$(dirname "$(readlink -f "$0")")/lib.sh"
# It finds the repository through its own path (symbolic links resolved, so
# a kernel tree's tools/testing/selftests/xdp_flow made with `cp -rs` works)
# unless XF_ROOT says where, and sources selftests/lib.sh.
#
# What a test uses, with defaults for a run by hand or by kselftest:
#   XF_KO    the module to insmod when modprobe finds none for this kernel
#   XF_UMH   the helper binary (for builds other than the one the module
#            carries)
#   XF_CLI   the xdp-flow command: the one on PATH, else the repository's
#
# The standard scene (xf_veth_topology):
#
#   netns xfa                root netns                     netns xfb
#   veth_a 10.0.1.1/24  ---  xfv0 10.0.1.254/24
#          fd00:1::1/64           fd00:1::254/64
#                                 xfv1 10.0.2.254/24  ---  veth_b 10.0.2.1/24
#                                 xfv2 10.0.3.254/24  ---  veth_c 10.0.3.1/24
#                                                            netns xfc
#
# IPv6 only on the a link (disabled on xfv1/veth_b/xfv2/veth_c, so that no
# MLD or router solicitation ever moves their counters). Forwarding on in the
# root namespace, default routes in the namespaces via
# the root side, fixed MAC addresses and permanent neighbour entries on every
# link (no ARP/ND for test traffic), GRO on veth_a, veth_b and veth_c so that
# XDP_REDIRECT into xfv0/xfv1/xfv2 reaches them. The names in the root
# namespace start with "xf" so as not to meet the system's own devices.

if [ -z "${XF_ROOT:-}" ]; then
	XF_ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
fi
source "$XF_ROOT/selftests/lib.sh"

if [ -z "${XF_SERIES:-}" ]; then
	XF_SERIES=$(uname -r | cut -d. -f1,2)
fi
: "${XF_KO:=$XF_ROOT/.cache/build/$XF_SERIES/net/xdp_flow/xdp_flow.ko}"
: "${XF_UMH:=$XF_ROOT/umh/xdp_flow_umh}"
if [ -z "${XF_CLI:-}" ]; then
	XF_CLI=$(command -v xdp-flow 2>/dev/null) ||
		XF_CLI=$XF_ROOT/tools/xdp-flow/xdp-flow
fi
export XF_ROOT XF_SERIES XF_KO XF_UMH XF_CLI

# What every test needs of the system, here so that a test run alone or by
# the kselftest harness has it too: bpffs (the helper pins its maps), no
# limit on locked memory (BPF maps on kernels that still charge it).
if ! mountpoint -q /sys/fs/bpf; then
	mkdir -p /sys/fs/bpf 2>/dev/null
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null ||
		echo "# cannot mount bpffs at /sys/fs/bpf" >&2
fi
ulimit -l unlimited 2>/dev/null

# Debian's python: the same in every guest, whatever PATH says.
if [ -x /usr/bin/python3 ]; then
	XF_PYTHON=/usr/bin/python3
else
	XF_PYTHON=python3
fi

# MAC addresses of the scene: 02:xf:00:00:<subnet>:<host>
XF_MAC_XFV0=02:0f:00:00:01:fe
XF_MAC_VETH_A=02:0f:00:00:01:01
XF_MAC_XFV1=02:0f:00:00:02:fe
XF_MAC_VETH_B=02:0f:00:00:02:01
XF_MAC_XFV2=02:0f:00:00:03:fe
XF_MAC_VETH_C=02:0f:00:00:03:01

# A run of several kernels shares the robustness loops out between them
# (XF_SHARE="k/N" from selftests/run.sh: this is kernel k of N, from 0):
# every kernel runs every kind of test, and a run of any number of kernels
# does what one kernel alone does. Alone, a kernel runs everything.

# xf_share <count>: this kernel's part of a loop of <count> rounds: 1 / N
# of it, at least 1.
xf_share()
{
	local n=${XF_SHARE:-}

	n=${n#*/}
	if [[ ! "$n" =~ ^[0-9]+$ ]] || [ "$n" -le 1 ]; then
		echo "$1"
	else
		echo $((($1 + n - 1) / n))
	fi
}

# xf_share_pick <item>...: the items that are this kernel's, the k-th of
# every N (all of them when the run has one kernel).
xf_share_pick()
{
	local k=${XF_SHARE:-} n=${XF_SHARE:-} i=0 item out=

	k=${k%/*} n=${n#*/}
	if [[ ! "$k" =~ ^[0-9]+$ ]] || [[ ! "$n" =~ ^[0-9]+$ ]] || [ "$n" -le 1 ]; then
		echo "$*"
		return
	fi
	for item in "$@"; do
		[ $((i % n)) -eq "$k" ] && out+="$item "
		i=$((i + 1))
	done
	echo "${out% }"
}

# xf_modprobe_deps: the kernel modules the tests rely on.
xf_modprobe_deps()
{
	# one modprobe for all (every module load of every test comes here)
	modprobe -a cls_flower act_gact act_mirred sch_ingress veth ||
		{ echo "# modprobe -a cls_flower act_gact act_mirred sch_ingress veth failed" >&2; return 1; }
}

# xf_load [param=value...]: load the module with modprobe, as users do
# (selftests/vm/build.sh installs it into the guest kernel's module tree);
# insmod $XF_KO when this kernel has none installed. It starts the helper
# it carries (umh_path=<binary> runs another one, for test builds).
xf_load()
{
	xf_modprobe_deps || return 1
	if modinfo -F filename xdp_flow >/dev/null 2>&1; then
		modprobe xdp_flow "$@"
		return
	fi
	if [ ! -f "$XF_KO" ]; then
		echo "# no xdp_flow module for $(uname -r): not installed, none at $XF_KO (selftests/vm/build.sh $XF_SERIES)" >&2
		return 1
	fi
	insmod "$XF_KO" "$@"
}

# xf_unload: remove the module; fine if it is not loaded.
xf_unload()
{
	[ -d /sys/module/xdp_flow ] || return 0
	rmmod xdp_flow
}

# xf_helper_running: the CLI's status says the helper runs.
xf_helper_running()
{
	local js

	[ -x "$XF_CLI" ] || return 1
	# options before the command; older/newer spellings tolerated
	js=$("$XF_CLI" -j status 2>/dev/null) ||
		js=$("$XF_CLI" status -j 2>/dev/null) || return 1
	echo "$js" | grep -Eq '"helper_state"[[:space:]]*:[[:space:]]*"running"'
}

# How many times slower than on the stock kernels' guests tests run on
# this kernel. The patched kernel's debug options (KASAN, lockdep,
# kmemleak) made each test several times slower (test_25 711 s against
# 96 s on 6.12, test_23 823 s against 128 s): 10 there. What such a kernel
# stretches scales by it: the wait for a helper to come up, the module's
# helper_timeout_ms in the tests that count on no restart, and the guest
# harness's timeout per test.
# Guests that selftests/run.sh boots side by side (XF_SIDE_BY_SIDE=1) run
# each about 1.8 times as slowly as alone: twice the pace there.
if [ -z "${XF_PACE:-}" ]; then
	XF_PACE=1
	[ "${XF_SERIES:-}" = patched ] && XF_PACE=10
	[ "${XF_SIDE_BY_SIDE:-0}" = 1 ] && XF_PACE=$((XF_PACE * 2))
fi

# How long a helper may take to come up, in seconds. In an emulated guest
# a cold start (binary read over 9p, BPF verification) takes about 2 s on
# the stock kernels, the verifier most of it; on the patched kernel a
# restart after a kill took 72 s.
: "${XF_HELPER_WAIT:=$((20 * XF_PACE))}"

# xf_helper_timeout_param [ms]: the module parameter that gives the
# helper <ms> (default the module's own, 2000) to answer, at this kernel's
# pace, at most the 60000 the module takes (params.c); nothing where that
# is the module's default.
xf_helper_timeout_param()
{
	local ms=${1:-2000}

	[ "$ms" = 2000 ] && [ "$XF_PACE" = 1 ] && return 0
	ms=$((ms * XF_PACE))
	echo "helper_timeout_ms=$((ms < 60000 ? ms : 60000))"
}

# xf_helper_wait_min <s>: a wait for a helper of at least <s> seconds,
# longer where XF_HELPER_WAIT is.
xf_helper_wait_min()
{
	echo $((XF_HELPER_WAIT > $1 ? XF_HELPER_WAIT : $1))
}

# xf_wait_helper [timeout_s]: wait until the helper runs (default
# $XF_HELPER_WAIT).
xf_wait_helper()
{
	local w=${1:-$XF_HELPER_WAIT}
	local t=$((w * 10))

	if [ ! -x "$XF_CLI" ]; then
		echo "# no xdp-flow CLI at $XF_CLI" >&2
		return 1
	fi
	while [ $t -gt 0 ]; do
		xf_helper_running && return 0
		sleep 0.1
		t=$((t - 1))
	done
	echo "# the helper is not running after $w s:" \
	     "$("$XF_CLI" status 2>&1 | tr '\n' ' ')" >&2
	return 1
}

# xf_topology_cleanup: remove the standard scene (quietly, idempotent).
xf_topology_cleanup()
{
	local cmds= ns d

	# One ip (-force: on past what went meanwhile), for what is there:
	# a name that is not there costs two modprobes (ip looks it up with
	# an ioctl, and the kernel asks for netdev-<name> and <name>).
	# Deleting the namespaces deletes the peers, and so the pairs; be sure.
	for ns in xfa xfb xfc; do
		[ -e "/run/netns/$ns" ] && cmds+="netns del $ns"$'\n'
	done
	for d in xfv0 xfv1 xfv2; do
		[ -e "/sys/class/net/$d" ] && cmds+="link del dev $d"$'\n'
	done
	[ -n "$cmds" ] && ip -force -batch - <<<"$cmds" >/dev/null 2>&1
	return 0
}

# __xf_ns_side <ns> <dev> <addr/len> <gw> <gw-mac> [v6addr/len v6gw]:
# configure the namespace end of a link with one exec into the namespace.
__xf_ns_side()
{
	local ns=$1 dev=$2 addr=$3 gw=$4 gwmac=$5 addr6=${6:-} gw6=${7:-}

	# shellcheck disable=SC2016  # expanded by the inner shell
	ip netns exec "$ns" sh -c '
		dev=$1 addr=$2 gw=$3 gwmac=$4 addr6=$5 gw6=$6
		if [ -z "$addr6" ]; then
			echo 1 >/proc/sys/net/ipv6/conf/$dev/disable_ipv6 || exit 1
		fi
		ethtool -K "$dev" gro on >/dev/null || exit 1
		{
			echo "link set dev lo up"
			echo "addr add $addr dev $dev"
			[ -n "$addr6" ] && echo "addr add $addr6 dev $dev nodad"
			echo "link set dev $dev up"
			echo "route add default via $gw"
			echo "neigh replace $gw lladdr $gwmac dev $dev nud permanent"
			if [ -n "$gw6" ]; then
				echo "route add default via $gw6"
				echo "neigh replace $gw6 lladdr $gwmac dev $dev nud permanent"
			fi
		} | ip -batch -
	' sh "$dev" "$addr" "$gw" "$gwmac" "$addr6" "$gw6"
}

# xf_veth_topology: build the standard scene (see the top of this file).
# Batched (ip -batch, one exec per namespace): every process costs a lot
# in an emulated guest.
xf_veth_topology()
{
	xf_topology_cleanup
	modprobe veth 2>/dev/null
	ns_register xfa xfb xfc

	ip -batch - <<EOF || return 1
netns add xfa
netns add xfb
netns add xfc
link add xfv0 address $XF_MAC_XFV0 type veth peer name veth_a address $XF_MAC_VETH_A netns xfa
link add xfv1 address $XF_MAC_XFV1 type veth peer name veth_b address $XF_MAC_VETH_B netns xfb
link add xfv2 address $XF_MAC_XFV2 type veth peer name veth_c address $XF_MAC_VETH_C netns xfc
EOF
	echo 1 >/proc/sys/net/ipv6/conf/xfv1/disable_ipv6 &&
	echo 1 >/proc/sys/net/ipv6/conf/xfv2/disable_ipv6 &&
	echo 1 >/proc/sys/net/ipv4/ip_forward &&
	echo 1 >/proc/sys/net/ipv6/conf/all/forwarding || return 1

	ip -batch - <<EOF || return 1
addr add 10.0.1.254/24 dev xfv0
addr add fd00:1::254/64 dev xfv0 nodad
addr add 10.0.2.254/24 dev xfv1
addr add 10.0.3.254/24 dev xfv2
link set dev xfv0 up
link set dev xfv1 up
link set dev xfv2 up
neigh replace 10.0.1.1 lladdr $XF_MAC_VETH_A dev xfv0 nud permanent
neigh replace fd00:1::1 lladdr $XF_MAC_VETH_A dev xfv0 nud permanent
neigh replace 10.0.2.1 lladdr $XF_MAC_VETH_B dev xfv1 nud permanent
neigh replace 10.0.3.1 lladdr $XF_MAC_VETH_C dev xfv2 nud permanent
EOF
	__xf_ns_side xfa veth_a 10.0.1.1/24 10.0.1.254 $XF_MAC_XFV0 \
		fd00:1::1/64 fd00:1::254 &&
	__xf_ns_side xfb veth_b 10.0.2.1/24 10.0.2.254 $XF_MAC_XFV1 &&
	__xf_ns_side xfc veth_c 10.0.3.1/24 10.0.3.254 $XF_MAC_XFV2
}

# ns_rx_packets <ns> <dev>: rx_packets of dev in netns ns ("" = root).
ns_rx_packets()
{
	if [ -n "$1" ]; then
		ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_packets"
	else
		cat "/sys/class/net/$2/statistics/rx_packets"
	fi
}

# ns_tx_packets <ns> <dev>
ns_tx_packets()
{
	if [ -n "$1" ]; then
		ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"
	else
		cat "/sys/class/net/$2/statistics/tx_packets"
	fi
}

# xf_settle_rules: tc returns before the helper has put a new rule into
# XDP (frames the change may concern go to the stack until then): wait
# for that (xdp-flow wait) when the module is loaded, so that traffic meets
# every rule where it is going to run. XF_NO_SETTLE=1: send at once (a test
# of the changes in flight).
xf_settle_rules()
{
	[ -d /sys/module/xdp_flow ] && [ -z "${XF_NO_SETTLE:-}" ] || return 0
	"$XF_CLI" wait >/dev/null
}

# send_udp <ns> <dst> <count> [dport] [payload_bytes] [sport] [ttl] [nodf]:
# send exactly <count> UDP datagrams from namespace <ns> ("" = root) to
# <dst> (IPv4 or IPv6), from one socket (one 5-tuple), unconnected so that
# ICMP errors coming back never stop the sending. Defaults: dport 9, 18
# bytes of payload (a 64-byte frame with IPv4), an ephemeral source port,
# the system's TTL (or hop limit); "nodf": IPv4 without DF, fragmented by
# the sender or a router where the path's MTU is smaller.
# Fails if any datagram could not be sent.
send_udp()
{
	local ns=$1 dst=$2 count=$3 dport=${4:-9} size=${5:-18} sport=${6:-0}
	local ttl=${7:-0} nodf=${8:-}
	local -a pre=()

	[ -n "$ns" ] && pre=(ip netns exec "$ns")
	xf_settle_rules || return 1
	"${pre[@]}" "$XF_PYTHON" -c '
import socket, sys, time
dst, count, dport, size, sport, ttl = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
if sport:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", sport))
if ttl and fam == socket.AF_INET6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, ttl)
elif ttl:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
if sys.argv[7] == "nodf":
    s.setsockopt(socket.IPPROTO_IP, 10, 0)  # IP_MTU_DISCOVER: IP_PMTUDISC_DONT
data = b"x" * size
for i in range(count):
    if s.sendto(data, (dst, dport)) != size:
        sys.exit("short send")
    # let the receive side (backlog, NAPI) keep up: no drops from bursts
    if i % 64 == 63:
        time.sleep(0.001)
' "$dst" "$count" "$dport" "$size" "$sport" "$ttl" "$nodf"
}
